"""ScratchTestCase: the base of the end-to-end test classes. A fresh temporary directory
per test, failures collected over long case lists, and the checks every script makes of a
paes run (it succeeded; it failed with one 'paes: ' line and left nothing behind)."""

import contextlib
import itertools
import os
import shutil
import tempfile
import unittest

from .files import read_file, write_file
from .processes import describe, error_lines, run_paes

MAX_REPORTED_FAILURES = 15
_names = itertools.count()


class ScratchTestCase(unittest.TestCase):
    """check() records a case, finish() fails the test once with the first failures (and
    tearDown does, for a test that never called it: a recorded failure is never lost);
    `out_dir`, when a subclass's setUp sets it, is where fails() expects no leftovers."""

    prefix = "paes-test-"
    out_dir = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix=self.prefix)
        self.failures = []
        self.cases = 0
        self.reported = 0

    def tearDown(self):
        unreported = self.failures[self.reported:]
        self.reported = len(self.failures)
        for root, dirs, _ in os.walk(self.tmp):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.tmp, ignore_errors=True)
        if unreported:
            shown = "\n  ".join(unreported[:MAX_REPORTED_FAILURES])
            self.fail(f"{len(unreported)} checks failed and the test never called finish(); first ones:\n  {shown}")

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def new_dir(self, name, mode=None):
        d = self.path(name)
        os.makedirs(d, exist_ok=True)
        if mode is not None:
            os.chmod(d, mode)
        return d

    def unique_name(self, prefix):
        """A name no other call gives (cases run side by side in threads)."""
        return f"{prefix}{next(_names)}"

    def key_file(self, key, as_hex=True, name=None):
        """A 0600 key file holding `key` as hex and a newline, or raw; returns its path."""
        data = key.hex().encode() + b"\n" if as_hex else key
        return write_file(self.path(name or self.unique_name("key-")), data, 0o600)

    def keygen(self, bits=256, name=None):
        """A key file made by `paes keygen --key-bits bits`; returns its path."""
        path = self.path(name or self.unique_name(f"key{bits}-"))
        proc = run_paes(["keygen", "--key-bits", bits, "-o", path])
        self.assertEqual(proc.returncode, 0, f"paes keygen: {describe(proc)}")
        return path

    def new_pseudo_terminal(self):
        """(master, slave) descriptors of a new pseudo-terminal, for the caller to close;
        skips the test where none can be made."""
        try:
            return os.openpty()
        except OSError as e:
            self.skipTest(f"no pseudo-terminal can be made here: {e}")

    @contextlib.contextmanager
    def terminal(self):
        """with self.terminal() as (master, slave): a pseudo-terminal for the block, both
        ends closed after it; skips the test where none can be made."""
        master, slave = self.new_pseudo_terminal()
        try:
            yield master, slave
        finally:
            os.close(master)
            os.close(slave)

    # -- collected failures

    def check(self, ok, message):
        self.cases += 1
        if not ok:
            self.failures.append(message)

    def finish(self):
        self.reported = len(self.failures)
        if self.failures:
            shown = "\n  ".join(self.failures[:MAX_REPORTED_FAILURES])
            self.fail(f"{len(self.failures)} of {self.cases} cases failed; first ones:\n  {shown}")

    def run_cases(self, case, cases, pool=None):
        """Runs case(*c) for each c in `cases` (side by side on `pool`, an executor, when
        given); each returns its problems (a list, a string, or None when it passed); then
        finish()."""
        results = pool.map(lambda c: case(*c), cases) if pool else (case(*c) for c in cases)
        for problems in results:
            if isinstance(problems, list):
                self.check(not problems, "; ".join(problems))
            else:
                self.check(problems is None, problems)
        self.finish()

    # -- paes runs

    def assert_exit(self, args, code=0, words=None, stdin=None, **run_options):
        """paes `args` must exit with `code` and, when `words` is given, hold them on stderr;
        `stdin` is bytes to feed, or a file object or descriptor to read; other keywords go
        to run_paes. Returns the process."""
        if isinstance(stdin, bytes):
            run_options["input_bytes"] = stdin
        elif stdin is not None:
            run_options["stdin"] = stdin
        proc = run_paes(args, **run_options)
        cmd = "paes " + " ".join(map(str, args))
        self.assertEqual(proc.returncode, code, f"{cmd}: {describe(proc)}")
        if words is not None:
            self.assertIn(words, proc.stderr.decode(errors="replace"), f"{cmd}: {describe(proc)}")
        return proc

    def output_of(self, args, out):
        """Runs paes `args` -o `out`; returns (process, output bytes or None) and removes
        `out`."""
        if os.path.exists(out):
            os.remove(out)
        proc = run_paes(list(args) + ["-o", out])
        data = None
        if os.path.exists(out):
            data = read_file(out)
            os.remove(out)
        return proc, data

    def check_error(self, proc, code, words, what, args=()):
        """`proc` failed with `code` and one 'paes: ' stderr line containing one of `words`
        (a string or a tuple of strings, any case); a warning about a key given with
        --key-hex in `args`, and --allow-uncommitted's warning about a file that does not
        commit, aside. Returns a problem description or None."""
        if isinstance(words, str):
            words = (words,)
        lines = error_lines(proc.stderr)
        if "--key-hex" in args:
            lines = [line for line in lines if "warning" not in line.lower()]
        if "--allow-uncommitted" in args:
            lines = [line for line in lines if not (line.startswith("paes: warning: ") and "does not commit" in line)]
        if proc.returncode != code:
            return f"{what}: expected exit {code}, got {describe(proc)}"
        if len(lines) != 1 or not lines[0].startswith("paes: "):
            return f"{what}: expected one 'paes: ' line on stderr, got {proc.stderr!r}"
        if not any(w.lower() in lines[0].lower() for w in words):
            return f"{what}: stderr {lines[0]!r} mentions none of {words}"
        return None

    def assert_fails(self, args, code, words, out_dir=None, before=None, **run_options):
        """paes `args` must exit with `code` (an int or a tuple of allowed codes), print one
        'paes: ' line containing one of `words`, print nothing on stdout, and leave
        `out_dir` as it was (`before`: its listing, when taken earlier)."""
        if out_dir is not None and before is None:
            before = sorted(os.listdir(out_dir))
        proc = run_paes(args, **run_options)
        cmd = "paes " + " ".join(map(str, args))
        codes = code if isinstance(code, tuple) else (code,)
        self.assertIn(proc.returncode, codes, f"{cmd}: expected exit {code}, got {describe(proc)}")
        problem = self.check_error(proc, proc.returncode, words, cmd, args)
        self.assertIsNone(problem, problem)
        self.assertEqual(proc.stdout, b"", f"{cmd}: unexpected stdout {proc.stdout[:200]!r}")
        if out_dir is not None:
            self.assertEqual(sorted(os.listdir(out_dir)), before, f"{cmd}: output directory changed (leftovers)")
        return proc

    def fails(self, args, code, words, **kw):
        """assert_fails() with this test's output directory (self.out_dir) by default."""
        kw.setdefault("out_dir", self.out_dir)
        return self.assert_fails(args, code, words, **kw)
