#!/usr/bin/env python3
"""Many small MPI jobs at once on one machine, as ctest -j, the mpi tests'
thread pool and users who pack small jobs per node start them, and the launch
errors they meet: Open MPI 4.1's launchers share one session-directory tree
under the temporary directory, and a job that ends removes directories
another is still creating (open-mpi/ompi#8510), so a job fails before its
program runs:

    ORTE_ERROR_LOG: Error in file ../../../orte/util/session_dir.c at line 107

launchers.py gives each Open MPI launch a session directory of its own; this
script is the loop that showed the failure (issue 37) and shows it gone.

    tests/mpi/concurrent_launches.py --mpiexec /usr/bin/mpiexec.openmpi \\
        --launches 200 --parallel 4 [--ranks 2] [-- PROGRAM ARGS...]

Each launch runs PROGRAM (default: this Python, doing nothing) on --ranks
ranks. It prints the count of launches that failed and of those whose output
names a session directory, and exits 1 if any launch failed.
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launchers import Launcher, Ranks  # noqa: E402

SESSION_DIR_ERROR = "session_dir"


def launch(launcher, ranks, program):
    argv, env = launcher.command([Ranks(ranks, program)])
    try:
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return False, "timed out after 120 s"
    return proc.returncode == 0, proc.stdout + proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--launches", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=4, help="launches running at once")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("program", nargs="*", help="what the ranks run (after --)")
    opts = parser.parse_args()
    program = opts.program or [sys.executable, "-c", "pass"]
    launcher = Launcher(opts.mpiexec)
    failed = session_dir_errors = 0
    first_failure = None
    with concurrent.futures.ThreadPoolExecutor(opts.parallel) as pool:
        for ok, output in pool.map(lambda _: launch(launcher, opts.ranks, program), range(opts.launches)):
            if not ok:
                failed += 1
                session_dir_errors += SESSION_DIR_ERROR in output
                first_failure = first_failure or output
    print(f"{launcher}: {opts.launches} launches of {opts.ranks} ranks, {opts.parallel} at a time: "
          f"{failed} failed, {session_dir_errors} of them on a session directory")
    if first_failure:
        print("the first failure's output:\n" + first_failure.strip()[-3000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
