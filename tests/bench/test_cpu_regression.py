#!/usr/bin/env python3
"""Smoke test of bench/cpu_regression.sh: one paes as both baseline and candidate, one run, 8 MiB.

Checks that the script runs through, prints each side's figures and a ratio line per case, removes its
scratch directory, and refuses bad arguments with exit 2 before writing anything. Never checks speed.

    python3 tests/bench/test_cpu_regression.py --paes build/release/paes
"""

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import run_unittest  # noqa: E402
from harness.bench_scripts import BenchScriptChecks, paes_argument_or_skip, run_bench_script  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "cpu_regression.sh"
CASES = ("memory ctr 64 MiB", "memory sealed 64 MiB", "file ctr 8 MiB", "file sealed 8 MiB")
ARGS = None


class CpuRegression(BenchScriptChecks, unittest.TestCase):
    scratch_prefix = "paes-cpu-regression-test."

    @classmethod
    def run_script_once(cls, scratch):
        return run_bench_script(SCRIPT, "--baseline", ARGS.paes, "--candidate", ARGS.paes, "--runs", "1",
                                "--size-mib", "8", "--dir", str(scratch))

    def test_each_side_has_figures(self):
        for case in CASES:
            for side in ("baseline", "candidate"):
                line = re.search(rf"^{case} +{side} +median +([0-9.]+) ms +IQR [0-9.]+\.\.[0-9.]+ ms +min\.\.max [0-9.]+\.\.[0-9.]+ ms$",
                                 self.proc.stdout, re.M)
                self.assertIsNotNone(line, f"no figures for {case}, {side}")
                self.assertGreater(float(line.group(1)), 0)

    def test_ratio_line_per_case(self):
        for case in CASES:
            self.assertRegex(self.proc.stdout, rf"(?m)^  {case} +ratio [0-9]+\.[0-9]{{2}} \(goal <= 1\.03\)$")

    def test_bad_arguments_exit_2(self):
        self.assert_each_refused_before_writing(lambda d: (
            [], ["--baseline", ARGS.paes],
            ["--baseline", ARGS.paes, "--candidate", ARGS.paes, "--runs", "0", "--dir", d],
            ["--baseline", ARGS.paes, "--candidate", ARGS.paes, "--size-mib", "-1", "--dir", d],
            ["--baseline", ARGS.paes, "--candidate", ARGS.paes, "--dir", str(Path(d) / "none")],
            ["--frobnicate"]), lambda *args: run_bench_script(SCRIPT, *args))


if __name__ == "__main__":
    ARGS, rest = paes_argument_or_skip()
    sys.exit(run_unittest(rest))
