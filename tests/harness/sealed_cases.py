"""SealedTestCase: the sealed-format tests' base (tests/cli/test_sealed_*.py), sealing and
opening through files."""

import os
import threading

from .files import read_file, write_file
from .processes import describe, run_paes
from .scratch import ScratchTestCase


class SealedTestCase(ScratchTestCase):
    prefix = "paes-sealed-"

    def seal(self, data, key_args, extra=(), env=None):
        """Seals `data` (from a file) and returns the sealed bytes."""
        inp = write_file(self.path(f"seal-in-{threading.get_ident()}"), data)
        out = self.path(f"seal-out-{threading.get_ident()}")
        proc = run_paes(["encrypt"] + list(key_args) + list(extra) + [inp, "-o", out], env=env)
        os.remove(inp)
        self.assertEqual(proc.returncode, 0, f"encrypt {key_args} {extra}: {describe(proc)}")
        self.assertEqual(proc.stderr, b"", f"encrypt printed on stderr: {proc.stderr!r}")
        sealed = read_file(out)
        os.remove(out)
        return sealed

    def open_sealed(self, sealed, key_args, extra=(), env=None, out_dir=None, tag="o"):
        """Decrypts `sealed` from a file to a file; returns (proc, plaintext or None)."""
        out_dir = out_dir or self.new_dir("open")
        inp = write_file(os.path.join(self.tmp, f"open-in-{tag}"), sealed)
        out = os.path.join(out_dir, f"open-out-{tag}")
        proc = run_paes(["decrypt"] + list(key_args) + list(extra) + [inp, "-o", out], env=env)
        os.remove(inp)
        data = None
        if os.path.exists(out):
            data = read_file(out)
            os.remove(out)
        return proc, data
