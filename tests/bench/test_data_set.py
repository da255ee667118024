#!/usr/bin/env python3
"""Smoke test of bench/data_set.sh: one round of small data sets on this paes.

Runs it with 200 files of 4 KiB in 10 directories and 20 files of 1 MiB against one file
of 20 MiB, one run each (RUNS 1, BIG_RUNS=1). Checks that the script runs through (its data
sets checked with cmp), prints every case's figures and every ratio line with its target,
removes its scratch directory, and refuses bad arguments and settings with exit 2 before
writing anything. Never checks speed. Exits 77 (skipped) without age and age-keygen.

    python3 tests/bench/test_data_set.py --paes build/release/paes
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

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "data_set.sh"
SMALL = {"FILES": "200", "DIRS": "10", "BIG_FILES": "20", "BIG_FILE_MIB": "1", "BIG_RUNS": "1"}
XARGS = r"xargs -P [0-9]+"
TIMES = ("encrypt: paes --recursive", "encrypt: age, sh loop", f"encrypt: age, {XARGS}",
         "decrypt: paes --recursive", "decrypt: age, sh loop", f"decrypt: age, {XARGS}",
         "encrypt: paes --recursive, the set", "encrypt: paes -o, one file",
         "decrypt: paes --recursive, the set", "decrypt: paes -o, one file")
MEMORY = (r"RSS: paes --recursive, 200 x 4 KiB", r"RSS: paes --recursive, 20 x 1 MiB",
          r"RSS: paes -o, one file of 20 MiB")
RATIOS = (("encrypt: age sh loop / paes --recursive", ">= 10"), (f"encrypt: age {XARGS} / paes --recursive", ">= 4"),
          ("decrypt: age sh loop / paes --recursive", ">= 10"), (f"decrypt: age {XARGS} / paes --recursive", ">= 4"),
          ("encrypt: paes set / one file", "<= 1.15"), ("decrypt: paes set / one file", "<= 1.15"),
          ("peak RSS: small-file set / one file", "<= 2.0"), ("peak RSS: large-file set / one file", None))
ARGS = None


def run_data_set(*args, **settings):
    return run_bench_script(SCRIPT, *args, env={**os.environ, "PAES": ARGS.paes, **SMALL, **settings})


class DataSet(BenchScriptChecks, unittest.TestCase):
    scratch_prefix = "paes-data-set-test."

    @classmethod
    def run_script_once(cls, scratch):
        return run_data_set("1", str(scratch))

    def test_each_case_has_figures(self):
        for case in TIMES:
            lines = re.findall(rf"(?m)^{case} +median +([0-9.]+)s +min +[0-9.]+s +max +[0-9.]+s$", self.proc.stdout)
            self.assertEqual(len(lines), 1, f"not one line of figures for {case}")
            self.assertGreater(float(lines[0]), 0, case)
        for case in MEMORY:
            lines = re.findall(rf"(?m)^{case} +median +([0-9.]+) MiB +min +[0-9.]+ MiB +max +[0-9.]+ MiB$",
                               self.proc.stdout)
            self.assertEqual(len(lines), 1, f"not one line of figures for {case}")
            self.assertGreater(float(lines[0]), 0, case)

    def test_ratio_lines_with_targets(self):
        for what, target in RATIOS:
            line = rf"(?m)^  {what} *: +[0-9]+\.[0-9]{{2}}"
            self.assertRegex(self.proc.stdout, line + (rf" +\(target {re.escape(target)}\)$" if target else "$"))

    def test_bad_arguments_exit_2(self):
        self.assert_each_refused_before_writing(
            lambda d: (["0", d], ["-1", d], ["x", d]), run_data_set)
        for name in SMALL:
            for value in ("0", "-2", "y"):
                with self.subTest(setting=name, value=value):
                    self.assert_each_refused_before_writing(
                        lambda d: (["1", d],), lambda *args, bad={name: value}: run_data_set(*args, **bad))
        self.assert_each_refused_before_writing(lambda d: (["1", d],),
                                                lambda *args: run_data_set(*args, FILES="5", DIRS="6"))


if __name__ == "__main__":
    ARGS, rest = paes_argument_or_skip()
    if not (shutil.which("age") and shutil.which("age-keygen")):
        print("SKIPPED: age and age-keygen are not installed (scripts/setup.sh installs them)")
        sys.exit(77)
    sys.exit(run_unittest(rest))
