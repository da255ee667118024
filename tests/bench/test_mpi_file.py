#!/usr/bin/env python3
"""Smoke test of bench/mpi_file.sh: one run of 8 MiB on this paes and its paes-mpi.

Checks that the script runs through (exit 0: a launcher that gives no command for N ranks now
ends it, where it had timed one singleton rank as N), prints each line's figures and the four
ratios, and removes its scratch directory. Never checks speed. Exits 77 (skipped), saying why,
without paes-mpi beside paes.

    python3 tests/bench/test_mpi_file.py --paes build/release/paes
"""

import os
import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import run_unittest  # noqa: E402
from harness.bench_scripts import BenchScriptChecks, paes_argument_or_skip, run_bench_script  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "mpi_file.sh"
LINES = ("threads engine, 2 threads", "mpi 1 rank x 2 threads", "mpi 2 ranks x 1 thread", "mpi 1 rank x 1 thread",
         "mpi 4 ranks x 1 thread (oversubscribed)")
ARGS = None


class MpiFile(BenchScriptChecks, unittest.TestCase):
    scratch_prefix = "paes-mpi-file-test."

    @classmethod
    def run_script_once(cls, scratch):
        return run_bench_script(SCRIPT, "8", "1", str(scratch), env=dict(os.environ, PAES=ARGS.paes))

    def test_each_line_has_figures(self):
        for line in LINES:
            self.assertRegex(self.proc.stdout, rf"(?m)^{re.escape(line)} +median +[0-9.]+s +min")

    def test_ratios(self):
        self.assertEqual(len(re.findall(r"(?m)^  .+ : [0-9]+\.[0-9]{2} ", self.proc.stdout)), 4, self.proc.stdout)
        self.assertNotIn("usage:", self.proc.stdout, "the launcher helper refused its arguments")

    def test_scratch_removed(self):
        self.assertEqual(self.leftovers, [], "the script left its scratch files behind")


if __name__ == "__main__":
    ARGS, rest = paes_argument_or_skip()
    if not (Path(ARGS.paes).parent / "paes-mpi").is_file():
        print("SKIPPED: no paes-mpi beside this paes (a build without the mpi engine)")
        sys.exit(77)
    sys.exit(run_unittest(rest))
