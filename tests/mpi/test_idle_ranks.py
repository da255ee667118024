#!/usr/bin/env python3
"""Ranks that wait must not spin (issue 31): while rank 0 runs a sequential job alone
(CBC encryption), the other ranks wait in a collective for it; a blocking MPI wait polls
there at full speed, a whole core per waiting rank taken from rank 0's threads on the
same node.

Run as:  python3 tests/mpi/test_idle_ranks.py --paes build/release/paes \
             --mpiexec /usr/bin/mpiexec.mpich --shim build/release/tests/libpaes_fault_inject.so

Covers: with 2 and with 3 ranks, rank 0 is paused mid-job by the fault shim
(PAES_FAULT_PAUSE_AT); each waiting rank uses under 0.3 s of CPU in 1 s of that wait
(utime + stime from /proc; a spinning rank uses about 1 s). Then rank 0 goes on, every
rank exits 0 and the output is the threads engine's.

Python 3.9+ standard library only.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from launchers import Launcher, Ranks  # noqa: E402
from harness import (ScratchTestCase, killed_unless_finished, path_option, run_unittest, tool_paths,  # noqa: E402
                     wait_for_pause, write_file)

PAES = MPIEXEC = SHIM = None
MIB = 1024 * 1024
LIMIT = 0.3  # CPU seconds per second of waiting


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class IdleRanksTest(ScratchTestCase):
    prefix = "paes-idle-"

    def setUp(self):
        super().setUp()
        self.inp = write_file(self.path("plain"), os.urandom(4 * MIB + 5))
        self.key = self.key_file(os.urandom(16), name="key.hex")

    def cbc_encrypt_args(self, out, engine):
        return ["encrypt", "--engine", engine, "--mode", "cbc", "--iv", "00" * 16, "--key-file", self.key,
                self.inp, "-o", out]

    def check_waiting_ranks(self, ranks):
        pause, pid_file = os.path.join(self.tmp, "paused"), os.path.join(self.tmp, "waiting.pids")
        out, expected = os.path.join(self.tmp, "mpi"), os.path.join(self.tmp, "threads")
        rank0 = Ranks(1, [PAES] + self.cbc_encrypt_args(out, "mpi"),
                      {"LD_PRELOAD": SHIM, "PAES_FAULT_READ_PATH": self.inp, "PAES_FAULT_PAUSE_AT": MIB,
                       "PAES_FAULT_PAUSE_FILE": pause})
        # Each waiting rank records its pid, then becomes paes.
        others = Ranks(ranks - 1, ["sh", "-c", 'echo $$ >> "$0"; shift; exec "$@"', pid_file, "-", PAES]
                       + self.cbc_encrypt_args(out, "mpi"))
        argv, env = Launcher(MPIEXEC).command([rank0, others])
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        with killed_unless_finished(proc):
            wait_for_pause(proc, pause, "rank 0 to reach the pause")
            with open(pid_file) as f:
                pids = [int(line) for line in f if line.strip()]
            self.assertEqual(len(pids), ranks - 1)
            time.sleep(0.3)  # every waiting rank is in its wait by now
            before = {pid: cpu_seconds(pid) for pid in pids}
            start = time.monotonic()
            time.sleep(1.0)
            used = {pid: (cpu_seconds(pid) - before[pid]) / (time.monotonic() - start) for pid in pids}
            os.remove(pause)
            _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err.decode(errors="replace"))
        for pid, rate in used.items():
            self.assertLess(rate, LIMIT, f"a waiting rank (pid {pid}) used {rate:.2f} s of CPU per second "
                                         f"while rank 0 worked alone ({ranks} ranks)")
        done = subprocess.run([PAES] + self.cbc_encrypt_args(expected, "threads"), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(out, "rb") as a, open(expected, "rb") as b:
            self.assertTrue(a.read() == b.read(), "the MPI output differs from the threads engine's")

    def test_two_ranks(self):
        self.check_waiting_ranks(2)

    def test_three_ranks(self):
        self.check_waiting_ranks(3)


def main():
    global PAES, MPIEXEC, SHIM
    PAES, _, rest = tool_paths(__doc__, need_openssl=False)
    MPIEXEC, rest = path_option(rest, "--mpiexec", "the mpiexec of the MPI paes-mpi was built with")
    SHIM, rest = path_option(rest, "--shim", "the fault injection library (tests/fault/fault_inject.c)")
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
