"""The smoke tests of the benchmark scripts (tests/bench): each runs its script once in
setUpClass and checks what came out, never a speed."""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SKIPPED = 77


def paes_argument_or_skip():
    """(the command line with .paes made absolute, the arguments left for unittest); exits
    77 (ctest's skipped), saying why, when there is no paes binary there."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--paes", required=True)
    args, rest = parser.parse_known_args()
    args.paes = os.path.abspath(args.paes)
    if not Path(args.paes).is_file():
        print(f"SKIPPED: no paes binary at {args.paes}")
        sys.exit(SKIPPED)
    return args, rest


def run_bench_script(script, *args, cwd=None, env=None, timeout=300):
    """`bash script args`: the CompletedProcess, stderr merged into stdout, as text."""
    return subprocess.run(["bash", str(script), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout, cwd=cwd, env=env)


class BenchScriptChecks:
    """What every benchmark script's one run must show: exit 0, and nothing left in its
    scratch directory. A mixin, not a TestCase, so that only the scripts' own classes are
    tests: class X(BenchScriptChecks, unittest.TestCase), with a classmethod
    run_script_once(scratch_dir) returning the run, and a scratch_prefix. (A class may
    make its run in a setUpClass of its own instead, setting `proc` and `leftovers`.)"""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix=cls.scratch_prefix)
        cls.dir = Path(cls.tmp.name)
        cls.proc = cls.run_script_once(cls.dir)
        print(cls.proc.stdout, flush=True)
        cls.leftovers = [p.name for p in cls.dir.iterdir()]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout[-3000:])

    def assert_each_refused_before_writing(self, argument_lists_for, run):
        """Each argument list that argument_lists_for(directory) gives must make run(*args)
        exit 2 and leave that directory (one the script may write in) empty."""
        with tempfile.TemporaryDirectory() as d:
            for args in argument_lists_for(d):
                with self.subTest(args=args):
                    proc = run(*args)
                    self.assertEqual(proc.returncode, 2, proc.stdout)
                    self.assertEqual(list(Path(d).iterdir()), [], "wrote before refusing")

    def test_scratch_removed(self):
        self.assertEqual(self.leftovers, [], "the script left its scratch files behind")
