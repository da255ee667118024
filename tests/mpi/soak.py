#!/usr/bin/env python3
"""Soak of the mpi engine over TCP: many short jobs, each bounded by a timeout, so that
a job that never ends (issue 31: MPI_Finalize hung after a complete job) shows up as a
count, not as a stuck test run.

Run as:  python3 tests/mpi/soak.py --paes build/release/paes --mpiexec /usr/bin/mpiexec.mpich \
             [--runs 200] [--timeout 60] [--ranks 2,3] [--legs ctr,sealed,cbc] [--backtraces DIR]

Legs, each at every rank count, every rank's messages over TCP on loopback only
(tests/mpi/launchers.py, tcp_only):
  ctr     raw CTR encryption: byte-identical to the threads engine's output;
  sealed  sealed encryption (random nonces: opened with the threads engine, the
          plaintext must come back);
  cbc     raw CBC encryption, sequential: rank 0 works alone while the others wait
          (the case that hung): byte-identical to the threads engine's output.
A run that outlives --timeout is a hang: with --backtraces, every rank's threads are
dumped there (gdb) before the job is killed. Prints one row per leg and rank count;
exits 1 when any run hung, failed or gave other bytes.

Python 3.9+ standard library; gdb only for --backtraces.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launchers import Launcher, Ranks  # noqa: E402

IV = "000102030405060708090a0b0c0d0e0f"
LEGS = ("ctr", "sealed", "cbc")
# kFinalizeGrace in src/engine/mpi/mpi_session.cpp: how long a rank's MPI_Finalize may
# take before the rank shuts its MPI connections down (MPICH 4.0's hang over TCP).
FINALIZE_GRACE = 0.25


def run_ok(argv, what):
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def descendants(pid):
    """Every process below `pid` (the launcher's proxies and the ranks)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def dump_backtraces(pid, path):
    with open(path, "w") as out:
        for p in descendants(pid):
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            out.write(f"==== pid {p}: {cmdline}\n")
            out.flush()
            if "paes" in cmdline.split(" ")[0]:
                subprocess.run(["gdb", "-p", str(p), "-batch", "-ex", "thread apply all bt"], stdout=out,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=120)


class Soak:
    def __init__(self, args):
        self.args = args
        self.launcher = Launcher(args.mpiexec)
        self.dir = tempfile.mkdtemp(prefix="paes-soak-")
        self.plain = os.path.join(self.dir, "plain")
        # Several 64 KiB chunks per rank and an odd tail.
        with open(self.plain, "wb") as f:
            f.write(os.urandom(args.size))
        self.key = os.path.join(self.dir, "key.hex")
        with open(self.key, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        self.sealed_key = os.path.join(self.dir, "sealed.key")
        run_ok([args.paes, "keygen", "--key-bits", "256", "-o", self.sealed_key], "paes keygen")
        self.expected = {}
        for mode in ("ctr", "cbc"):
            out = os.path.join(self.dir, f"threads-{mode}")
            run_ok([args.paes] + self.job_args(mode, out, "threads"), f"threads {mode}")
            self.expected[mode] = read(out)

    def job_args(self, leg, out, engine):
        if leg == "sealed":
            return ["encrypt", "--engine", engine, "--key-file", self.sealed_key, "--segment-size", "64K",
                    self.plain, "-o", out]
        return ["encrypt", "--engine", engine, "--mode", leg, "--key-file", self.key, "--iv", IV,
                "--chunk-size", "64K", self.plain, "-o", out]

    def output_is_right(self, leg, out):
        if leg != "sealed":
            return read(out) == self.expected[leg]
        opened = out + ".opened"
        proc = subprocess.run([self.args.paes, "decrypt", "--engine", "threads", "--key-file", self.sealed_key,
                               out, "-o", opened], stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        same = proc.returncode == 0 and read(opened) == read(self.plain)
        if os.path.exists(opened):
            os.remove(opened)
        return same

    def one_job(self, leg, ranks, n):
        """'ok', 'hang', 'failed' or 'differs'."""
        out = os.path.join(self.dir, f"out-{leg}-{ranks}")
        if os.path.exists(out):
            os.remove(out)
        argv, env = self.launcher.command([Ranks(ranks, [self.args.paes] + self.job_args(leg, out, "mpi"))],
                                          tcp_only=True)
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            if self.args.backtraces:
                os.makedirs(self.args.backtraces, exist_ok=True)
                where = os.path.join(self.args.backtraces, f"{self.launcher.flavor}-{leg}-{ranks}-{n}.txt")
                dump_backtraces(proc.pid, where)
                print(f"  hang: {leg} x{ranks} run {n}, backtraces in {where}", flush=True)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return "hang"
        if proc.returncode != 0:
            print(f"  failed: {leg} x{ranks} run {n}: {err.decode(errors='replace').strip()}", flush=True)
            return "failed"
        return "ok" if self.output_is_right(leg, out) else "differs"

    def run_every_leg(self):
        rows = []
        for ranks in self.args.ranks:
            for leg in self.args.legs:
                counts = {"ok": 0, "hang": 0, "failed": 0, "differs": 0}
                seconds = []
                for n in range(self.args.runs):
                    start = time.monotonic()
                    counts[self.one_job(leg, ranks, n)] += 1
                    seconds.append(time.monotonic() - start)
                rows.append((leg, ranks, counts, sorted(seconds)))
                self.print_row(*rows[-1])
        return rows

    def print_row(self, leg, ranks, counts, seconds):
        """seconds: each run's, sorted (a hung run's is the timeout). "late": runs that took
        FINALIZE_GRACE longer than the fastest, about those paes' finalize deadline freed."""
        median = seconds[len(seconds) // 2] if seconds else 0
        late = sum(s >= seconds[0] + FINALIZE_GRACE for s in seconds)
        print(f"{self.launcher.flavor:8} {leg:7} ranks={ranks} runs={sum(counts.values()):4} ok={counts['ok']:4} "
              f"hangs={counts['hang']:3} failed={counts['failed']:3} differs={counts['differs']:3} "
              f"seconds: min {seconds[0] if seconds else 0:.2f} median {median:.2f} max {max(seconds, default=0):.2f}, "
              f"late {late}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paes", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--runs", type=int, default=200, help="runs per leg and rank count")
    parser.add_argument("--timeout", type=float, default=60, help="seconds before a run counts as hung")
    parser.add_argument("--ranks", default="2,3", help="rank counts, comma-separated")
    parser.add_argument("--legs", default=",".join(LEGS), help="comma-separated, of " + ", ".join(LEGS))
    parser.add_argument("--size", type=int, default=3 * 1024 * 1024 + 77, help="input bytes")
    parser.add_argument("--backtraces", help="directory for gdb backtraces of hung runs")
    args = parser.parse_args()
    args.ranks = [int(r) for r in args.ranks.split(",")]
    args.legs = args.legs.split(",")
    if set(args.legs) - set(LEGS):
        parser.error(f"unknown legs: {sorted(set(args.legs) - set(LEGS))}")
    soak = Soak(args)
    try:
        rows = soak.run_every_leg()
    finally:
        shutil.rmtree(soak.dir, ignore_errors=True)
    bad = sum(c["hang"] + c["failed"] + c["differs"] for _, _, c, _ in rows)
    print(f"{'FAILED' if bad else 'OK'}: {bad} of {sum(sum(c.values()) for _, _, c, _ in rows)} runs hung, "
          f"failed or differed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
