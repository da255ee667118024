#!/usr/bin/env python3
"""Smoke test of bench/start_up_and_armor.sh: one round on this paes, armor on 1 MiB.

Checks that the script runs through, prints both sides' figures and a ratio line per case,
removes its scratch directory, and refuses bad arguments with exit 2 before writing anything.
Never checks speed. Exits 77 (skipped) without age and age-keygen.

    python3 tests/bench/test_start_up_and_armor.py --paes build/release/paes
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

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "start_up_and_armor.sh"
# Each case and its sides: paes and what it is compared with, and the floors
# beside them (bench/start_up_floor.c's seal and open; dd writing each format's bytes).
CASES = {"2 KiB encrypt -o file": 3, "2 KiB encrypt to stdout": 2, "2 KiB decrypt -o file": 3,
         "2 KiB decrypt to stdout": 2, "1 MiB decrypt, threads": 2, "1 MiB sealed encrypt -o file": 4,
         "1 MiB sealed decrypt -o file": 2}
ARGS = None


def run_start_up_and_armor(*args):
    return run_bench_script(SCRIPT, *args, env=dict(os.environ, PAES=ARGS.paes))


class StartUpAndArmor(BenchScriptChecks, unittest.TestCase):
    scratch_prefix = "paes-start-up-test."

    @classmethod
    def run_script_once(cls, scratch):
        return run_start_up_and_armor("1", str(scratch), "1")

    def test_each_side_has_figures(self):
        for case, sides in CASES.items():
            lines = re.findall(rf"^{re.escape(case)} +.+ median +([0-9.]+) ms +min\.\.max [0-9.]+\.\.[0-9.]+ ms$",
                               self.proc.stdout, re.M)
            self.assertEqual(len(lines), sides, f"not {sides} sides' figures for {case}")
            self.assertTrue(all(float(v) > 0 for v in lines), case)

    def test_ratio_line_per_case(self):
        for case in CASES:
            self.assertRegex(self.proc.stdout, rf"(?m)^  {re.escape(case)} +.+ / .+ [0-9]+\.[0-9]{{2}}")

    def test_floors_have_their_ratios(self):
        for what in ("OpenSSL floor seal / age -r", "paes encrypt -r / OpenSSL floor seal",
                     "OpenSSL floor open / age -d -i", "paes decrypt -i / OpenSSL floor open",
                     "dd, the armored bytes / dd, the binary bytes"):
            self.assertRegex(self.proc.stdout, rf"(?m)^  .+ {re.escape(what)} +[0-9]+\.[0-9]{{2}}$")

    def test_scratch_removed(self):
        self.assertEqual([p.name for p in self.dir.iterdir()], [], "the script left its scratch files behind")

    def test_bad_arguments_exit_2(self):
        self.assert_each_refused_before_writing(lambda d: (["0", d], ["-1", d], ["x", d], ["1", d, "0"]), run_start_up_and_armor)


if __name__ == "__main__":
    ARGS, rest = paes_argument_or_skip()
    if not (shutil.which("age") and shutil.which("age-keygen")):
        print("SKIPPED: age and age-keygen are not installed (scripts/setup.sh installs them)")
        sys.exit(77)
    sys.exit(run_unittest(rest))
