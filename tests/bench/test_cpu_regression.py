#!/usr/bin/env python3
"""Smoke test of bench/cpu_regression.sh: one paes as both baseline and candidate, one run, 8 MiB.

Checks that the script runs through, prints each side's figures and a ratio line per case, removes its
scratch directory, and refuses bad arguments with exit 2 before writing anything. Never checks speed.

    python3 tests/bench/test_cpu_regression.py --paes build/release/paes
"""

import argparse
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "cpu_regression.sh"
CASES = ("memory ctr 64 MiB", "memory sealed 64 MiB", "file ctr 8 MiB", "file sealed 8 MiB")
ARGS = None


def run(*args, cwd=None):
    return subprocess.run(["bash", str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300, cwd=cwd)


class CpuRegression(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="paes-cpu-regression-test.")
        cls.dir = Path(cls.tmp.name)
        cls.proc = run("--baseline", ARGS.paes, "--candidate", ARGS.paes, "--runs", "1", "--size-mib", "8",
                       "--dir", str(cls.dir))
        print(cls.proc.stdout, flush=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout[-3000:])

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

    def test_scratch_removed(self):
        self.assertEqual([p.name for p in self.dir.iterdir()], [], "the script left its scratch files behind")

    def test_bad_arguments_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            for args in ([], ["--baseline", ARGS.paes],
                         ["--baseline", ARGS.paes, "--candidate", ARGS.paes, "--runs", "0", "--dir", d],
                         ["--baseline", ARGS.paes, "--candidate", ARGS.paes, "--size-mib", "-1", "--dir", d],
                         ["--baseline", ARGS.paes, "--candidate", ARGS.paes, "--dir", str(Path(d) / "none")],
                         ["--frobnicate"]):
                with self.subTest(args=args):
                    proc = run(*args)
                    self.assertEqual(proc.returncode, 2, proc.stdout)
                    self.assertEqual(list(Path(d).iterdir()), [], "wrote before refusing")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--paes", required=True)
    ARGS, rest = ap.parse_known_args()
    if not Path(ARGS.paes).is_file():
        print(f"SKIPPED: no paes binary at {ARGS.paes}")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
