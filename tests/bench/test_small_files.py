#!/usr/bin/env python3
"""Smoke test of bench/small_files.sh: one round on this paes.

Checks that the script runs through, prints both sides' figures and a ratio line per case,
removes its scratch directory, and refuses bad arguments with exit 2 before writing anything.
Never checks speed. Exits 77 (skipped) without age and age-keygen.

    python3 tests/bench/test_small_files.py --paes build/release/paes
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "small_files.sh"
CASES = ("2 KiB encrypt -o file", "2 KiB encrypt to stdout", "2 KiB decrypt -o file", "2 KiB decrypt to stdout",
         "1 MiB sealed decrypt -o file")
ARGS = None


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300, env=dict(os.environ, PAES=ARGS.paes))


class SmallFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="paes-small-files-test.")
        cls.dir = Path(cls.tmp.name)
        cls.proc = run("1", str(cls.dir))
        print(cls.proc.stdout, flush=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout[-3000:])

    def test_each_side_has_figures(self):
        for case in CASES:
            lines = re.findall(rf"^{re.escape(case)} +.+ median +([0-9.]+) ms +min\.\.max [0-9.]+\.\.[0-9.]+ ms$",
                               self.proc.stdout, re.M)
            self.assertEqual(len(lines), 2, f"not two sides' figures for {case}")
            self.assertTrue(all(float(v) > 0 for v in lines), case)

    def test_ratio_line_per_case(self):
        for case in CASES:
            self.assertRegex(self.proc.stdout, rf"(?m)^  {re.escape(case)} +.+ / .+ [0-9]+\.[0-9]{{2}}")

    def test_scratch_removed(self):
        self.assertEqual([p.name for p in self.dir.iterdir()], [], "the script left its scratch files behind")

    def test_bad_arguments_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            for args in (["0", d], ["-1", d], ["x", d]):
                with self.subTest(args=args):
                    proc = run(*args)
                    self.assertEqual(proc.returncode, 2, proc.stdout)
                    self.assertEqual(list(Path(d).iterdir()), [], "wrote before refusing")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--paes", required=True)
    ARGS, rest = ap.parse_known_args()
    ARGS.paes = os.path.abspath(ARGS.paes)
    if not Path(ARGS.paes).is_file():
        print(f"SKIPPED: no paes binary at {ARGS.paes}")
        sys.exit(77)
    if not (shutil.which("age") and shutil.which("age-keygen")):
        print("SKIPPED: age and age-keygen are not installed (scripts/setup.sh installs them)")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
