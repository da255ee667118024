#!/usr/bin/env python3
"""What waiting costs under the mpi engine (issue 31): CBC encryption is sequential, so
rank 0 runs all of it while the other ranks wait for it. Each rank runs under
/usr/bin/time; the table gives each rank's wall time and its CPU time (user + system)
as a share of one core over that wall time. A waiting rank should use at most 5%.

  bench/mpi_idle.py --paes build/release/paes --mpiexec /usr/bin/mpiexec.mpich \
      [--size-mib 2048] [--ranks 2,3] [--tcp-only]
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "mpi"))
from launchers import Launcher, Ranks  # noqa: E402

# Each rank writes its times to PREFIX.RANK (MPICH's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK).
TIMED = ['sh', '-c', 'exec /usr/bin/time -f "%e %U %S" -o "$0.${PMI_RANK:-$OMPI_COMM_WORLD_RANK}" "$@"']


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paes", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--size-mib", type=int, default=2048)
    parser.add_argument("--ranks", default="2,3")
    parser.add_argument("--tcp-only", action="store_true", help="every message over TCP (launchers.py)")
    args = parser.parse_args()
    launcher = Launcher(args.mpiexec)
    work = tempfile.mkdtemp(prefix="paes-idle-bench-")
    try:
        plain, key = os.path.join(work, "plain"), os.path.join(work, "key.hex")
        with open(plain, "wb") as f:
            for _ in range(args.size_mib):
                f.write(os.urandom(1 << 20))
        with open(key, "w") as f:
            f.write(os.urandom(16).hex() + "\n")
        print(f"{launcher}, CBC encryption of {args.size_mib} MiB (rank 0 alone), "
              f"{'TCP only' if args.tcp_only else 'the transports MPI picks'}, {os.cpu_count()} CPUs")
        print(f"{'ranks':>5} {'rank':>4} {'wall s':>7} {'user s':>7} {'sys s':>6} {'core %':>7}")
        for ranks in (int(r) for r in args.ranks.split(",")):
            prefix = os.path.join(work, f"time{ranks}")
            job = [args.paes, "encrypt", "--engine", "mpi", "--mode", "cbc", "--iv", "00" * 16, "--key-file", key,
                   plain, "-o", os.path.join(work, "out")]
            argv, env = launcher.command([Ranks(ranks, TIMED + [prefix] + job)], tcp_only=args.tcp_only)
            proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
            if proc.returncode != 0:
                sys.exit(f"the job failed: {proc.stderr.decode(errors='replace')}")
            for path in sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1])):
                with open(path) as f:
                    wall, user, system = (float(x) for x in f.read().split()[-3:])
                share = 100 * (user + system) / wall if wall else 0
                print(f"{ranks:>5} {path.rsplit('.', 1)[1]:>4} {wall:>7.2f} {user:>7.2f} {system:>6.2f} {share:>6.1f}%")
            os.remove(os.path.join(work, "out"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
