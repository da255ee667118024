#!/usr/bin/env python3
"""Smoke test of bench/armor_file.sh: one round of 1 MiB on this paes.

Checks that the script runs through (its outputs checked with cmp), prints every case's
figures and the two ratio lines with their targets, removes its scratch directory, and
refuses bad arguments with exit 2 before writing anything. Never checks speed. Exits 77
(skipped) without age-keygen.

    python3 tests/bench/test_armor_file.py --paes build/release/paes
"""

import os
import re
import shutil
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import run_unittest  # noqa: E402
from harness.bench_scripts import BenchScriptChecks, paes_argument_or_skip, run_bench_script  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "armor_file.sh"
CASES = ("paes encrypt (binary)", "paes encrypt -a", "paes decrypt (binary)", "paes decrypt (armored)")
RATIOS = (("armored encrypt / binary encrypt", "<= 1.15"), ("armored decrypt / binary decrypt", "<= 1.25"))
ARGS = None


def run_armor_file(*args):
    return run_bench_script(SCRIPT, *args, env=dict(os.environ, PAES=ARGS.paes))


class ArmorFile(BenchScriptChecks, unittest.TestCase):
    scratch_prefix = "paes-armor-file-test."

    @classmethod
    def run_script_once(cls, scratch):
        return run_armor_file("1", "1", str(scratch))

    def test_each_case_has_figures(self):
        for case in CASES:
            lines = re.findall(rf"(?m)^{re.escape(case)} +median +([0-9.]+)s +min +[0-9.]+s +max +[0-9.]+s$",
                               self.proc.stdout)
            self.assertEqual(len(lines), 1, f"not one line of figures for {case}")
            self.assertGreater(float(lines[0]), 0, case)

    def test_ratio_lines_with_targets(self):
        for what, target in RATIOS:
            self.assertRegex(self.proc.stdout,
                             rf"(?m)^  {re.escape(what)} *: [0-9]+\.[0-9]{{2}} +\(target {re.escape(target)}\)")

    def test_names_the_base64_code(self):
        self.assertRegex(self.proc.stdout, r"base64 on (scalar|avx2|avx512vbmi) code")

    def test_bad_arguments_exit_2(self):
        self.assert_each_refused_before_writing(
            lambda d: (["0", "1", d], ["-1", "1", d], ["x", "1", d], ["1", "0", d], ["1", "-3", d], ["1", "y", d]),
            run_armor_file)


if __name__ == "__main__":
    ARGS, rest = paes_argument_or_skip()
    if not shutil.which("age-keygen"):
        print("SKIPPED: age-keygen is not installed (scripts/setup.sh installs age)")
        sys.exit(77)
    sys.exit(run_unittest(rest))
