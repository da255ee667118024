"""SealedTestCase: the sealed-format tests' base (tests/cli/test_sealed_*.py), sealing and
opening through files, and version-1 files (which paes no longer writes) built for them."""

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

    def v1_file(self, preamble, plain, key, aad=b""):
        """A version-1 file's bytes (FORMAT.md 8.6): `preamble` (sealed_format.v1_preamble)
        followed by a bare Tink stream of `plain` under `key` (the raw key, or
        sealed_format.v1_passphrase_key's) whose associated data is the preamble and `aad`,
        written with paes encrypt --format tink."""
        tag = threading.get_ident()
        inp = write_file(self.path(f"v1-in-{tag}"), plain)
        key_file = self.key_file(key, name=f"v1-key-{tag}")
        ad = write_file(self.path(f"v1-ad-{tag}"), bytes(preamble) + aad)
        out = self.path(f"v1-body-{tag}")
        segment = int.from_bytes(preamble[12:16], "big")
        proc = run_paes(["encrypt", "--format", "tink", "--key-file", key_file, "--aad-file", ad,
                         "--segment-size", segment, inp, "-o", out])
        self.assertEqual(proc.returncode, 0, f"encrypt --format tink: {describe(proc)}")
        body = read_file(out)
        for path in (inp, key_file, ad, out):
            os.remove(path)
        return bytes(preamble) + body
