#!/usr/bin/env python3
"""age's scrypt stanza in paes' passphrase files (issue 39), checked against age itself, both ways.

  .venv/bin/python tests/tink/scrypt_interop.py --paes build/release/paes [TestClass ...]

A paes passphrase file is format version 3 with one `scrypt` stanza, exactly age's (C2SP age.md,
"The scrypt recipient type"), wrapping a 16-byte file key; the header MAC is age's (under
HKDF(file key, "", "header")) over the preamble, the stanza, "---" and the --aad; the body is a
Tink stream keyed by HKDF(file key, "", "paes v3 body") with the preamble and the aad as its
associated data. So the stanza moves between the two formats unchanged:

  PaesToAgeTest   paes encrypt --passphrase-file (work factors 10 and the default 18): its file
                  key unwrapped here from the stanza (scrypt and ChaCha20-Poly1305, as age.md
                  says), paes' header MAC and body checked against it (the body with Tink), and
                  the stanza moved into an age v1 file of the same file key (age's header and
                  MAC, then its STREAM payload: ChaCha20-Poly1305 in 64 KiB chunks) which
                  `age -d` opens with the passphrase typed on a terminal.
  AgeToPaesTest   `age -p` seals with a passphrase typed on a terminal (age's own work factor);
                  its stanza, moved into a paes file of the same file key (preamble, stanza, MAC,
                  a Tink body written here), opens with paes decrypt --passphrase-file, with and
                  without --aad (the MAC then covers it; a missing or wrong one fails, exit 1).
  StanzaAloneTest a scrypt stanza beside an X25519 stanza of the same file key, the MAC valid:
                  refused (exit 1, nothing written) with the passphrase and with the identity,
                  as age.md requires.

age reads a passphrase from the terminal only (/dev/tty), so it runs here with a pseudo-terminal
as its controlling terminal, the passphrase typed at each prompt.

Needs the Python packages `tink` and `cryptography` (exit 77 without them) and age (the classes
that run it skip, saying why, without it). Exits non-zero when a test fails.
"""

import hashlib
import os
import re
import shutil
import sys

try:
    import tink  # noqa: F401
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
except ImportError as exc:  # the whole file needs both
    print(f"scrypt_interop.py: SKIP: the Python packages `tink` and `cryptography` are needed ({exc}); "
          f"run with scripts/setup.sh's .venv", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from age_interop import (AGE_CHUNK, AGE_VERSION_LINE, SEGMENT, age_payload, b64, paes_file, paes_preamble,  # noqa: E402
                         run_on_terminal)
from recipients_commit import body_ikm, mac_line, x25519_stanza  # noqa: E402
from tink_raw_key import tink_decrypt, tink_streaming_aead  # noqa: E402
from harness import (ScratchTestCase, bech32_decode, describe, read_file, run_paes, run_test_script,  # noqa: E402
                     write_file)

PAES = "paes"
AGE = shutil.which("age")
NO_AGE = "age is not installed"
PASSPHRASE = "issue 39: one stanza, two formats"   # without the word run_on_terminal counts prompts by
B64 = rb"[A-Za-z0-9+/]"
# One scrypt stanza, then the MAC line: what follows a paes preamble or age's version line.
SCRYPT_HEADER = re.compile(rb"(-> scrypt (" + B64 + rb"{22}) ([1-9][0-9]*)\n(" + B64 + rb"{43})\n)---"
                           rb" (" + B64 + rb"{43})\n")


def unwrap_scrypt_stanza(salt, log_n, body, passphrase):
    """age.md: the file key in a scrypt stanza."""
    key = hashlib.scrypt(passphrase.encode(), salt=b"age-encryption.org/v1/scrypt" + salt, n=1 << log_n, r=8, p=1,
                         dklen=32, maxmem=(1 << 30) + (1 << 20))
    return ChaCha20Poly1305(key).decrypt(bytes(12), body, None)


def parse_scrypt_header(data, start):
    """(stanza text, salt, log2 N, wrapped file key, MAC, offset of the payload) of the one
    scrypt stanza and the MAC line at `start`; AssertionError when they are not there."""
    m = SCRYPT_HEADER.match(data, start)
    if m is None:
        raise AssertionError(f"no single scrypt stanza and MAC line at offset {start}: {data[start:start + 160]!r}")
    return m[1], b64(m[2]), int(m[3]), b64(m[4]), b64(m[5]), m.end()


class ScryptTestCase(ScratchTestCase):
    prefix = "paes-scrypt-interop-"

    def setUp(self):
        super().setUp()
        self.pass_file = write_file(self.path("pass.txt"), PASSPHRASE.encode() + b"\n", 0o600)

    def need_age(self):
        if AGE is None:
            self.skipTest(NO_AGE)

    def age_decrypt(self, path):
        """What `age -d` prints (on a pipe) for `path`, the passphrase typed on its terminal."""
        proc, screen = run_on_terminal([AGE, "-d", path], PASSPHRASE)
        self.assertEqual(proc.returncode, 0, f"age -d {path}: {describe(proc)}, terminal {screen!r}")
        return proc.stdout

    def paes_seal(self, plain, extra=()):
        inp = write_file(self.path("plain"), plain)
        out = self.path(self.unique_name("sealed-"))
        proc = run_paes(["encrypt", "--passphrase-file", self.pass_file, "--segment-size", "4K", *extra, inp,
                         "-o", out])
        self.assertEqual(proc.returncode, 0, f"paes encrypt --passphrase-file {' '.join(extra)}: {describe(proc)}")
        return read_file(out)

    def open_paes_file(self, data, plain, aad=b""):
        """Checks a paes passphrase file against the spec here; returns (stanza text, file key)."""
        self.assertEqual(data[:32].hex(), paes_preamble().hex(), "the preamble")
        stanza, salt, log_n, wrapped, mac, end = parse_scrypt_header(data, 32)
        self.assertEqual(len(salt), 16, "the stanza's salt")
        file_key = unwrap_scrypt_stanza(salt, log_n, wrapped, PASSPHRASE)
        self.assertEqual(len(file_key), 16, "the file key")
        self.assertEqual(mac_line(data[:32] + stanza + b"---" + aad, file_key), data[end - 45:end],
                         "paes' header MAC is not age's MAC over preamble || stanza || '---' || aad")
        body = tink_decrypt(tink_streaming_aead(body_ikm(file_key), SEGMENT), data[end:], data[:32] + aad)
        self.assertEqual(body, plain, "the body, opened with Tink under HKDF(file key, '', 'paes v3 body')")
        return stanza, file_key, log_n


class PaesToAgeTest(ScryptTestCase):
    """paes' scrypt stanza in an age file opens with age -d."""

    def check_stanza_moved_to_age(self, plain, extra, log_n, aad=b""):
        data = self.paes_seal(plain, extra)
        stanza, file_key, got_log_n = self.open_paes_file(data, plain, aad)
        self.assertEqual(got_log_n, log_n, "the stanza's work factor")
        header = AGE_VERSION_LINE + stanza + b"---"
        aged = write_file(self.path("moved.age"), header + mac_line(header, file_key) + age_payload(file_key, plain))
        self.assertEqual(self.age_decrypt(aged), plain, f"age -d of paes' stanza ({len(plain)} bytes, {extra})")

    def test_work_factor_10(self):
        self.need_age()
        for size in (0, 1, AGE_CHUNK, 2 * AGE_CHUNK + 4321):
            self.check_stanza_moved_to_age(os.urandom(size), ["--scrypt-log-n", "10"], 10)
        self.check_stanza_moved_to_age(b"with an aad", ["--scrypt-log-n", "10", "--aad", "ctx"], 10, b"ctx")

    def test_default_work_factor(self):
        self.need_age()
        self.check_stanza_moved_to_age(os.urandom(5000), [], 18)


class AgeToPaesTest(ScryptTestCase):
    """age -p's scrypt stanza in a paes file opens with paes decrypt --passphrase-file."""

    def test_age_stanza_in_a_paes_file(self):
        self.need_age()
        plain = os.urandom(3 * SEGMENT + 99)
        src = write_file(self.path("plain"), plain)
        aged = self.path("f.age")
        proc, screen = run_on_terminal([AGE, "-p", "-o", aged, src], PASSPHRASE)
        self.assertEqual(proc.returncode, 0, f"age -p: {describe(proc)}, terminal {screen!r}")
        data = read_file(aged)
        self.assertTrue(data.startswith(AGE_VERSION_LINE), data[:40])
        stanza, salt, log_n, wrapped, mac, end = parse_scrypt_header(data, len(AGE_VERSION_LINE))
        file_key = unwrap_scrypt_stanza(salt, log_n, wrapped, PASSPHRASE)
        self.assertEqual(mac_line(data[:end - 45], file_key), data[end - 45:end], "age's MAC, recomputed here")
        self.assertEqual(self.age_decrypt(aged), plain, "age -d of age's own file")
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "plain")
        for aad in (b"", b"age meets paes"):
            path = write_file(self.path("moved.paes"), paes_file(stanza, file_key, plain, aad))
            aad_args = ["--aad", aad.decode()] if aad else []
            proc = run_paes(["decrypt", "--passphrase-file", self.pass_file, *aad_args, path, "-o", out])
            self.assertEqual(proc.returncode, 0, f"paes decrypt of age's stanza (aad {aad!r}): {describe(proc)}")
            self.assertEqual(read_file(out), plain)
            self.assertEqual(proc.stderr, b"", "paes warned about a committing file")
            os.remove(out)
            for wrong in (["--aad", "another"], [] if aad else ["--aad", "age meets paes"]):
                self.assert_fails(["decrypt", "--passphrase-file", self.pass_file, *wrong, path, "-o", out], 1,
                                  "header MAC", out_dir=out_dir)


class StanzaAloneTest(ScryptTestCase):
    """age.md: a header with a scrypt stanza and any other stanza is refused."""

    def test_scrypt_beside_x25519_refused(self):
        plain = b"a scrypt stanza must stand alone"
        data = self.paes_seal(plain, ["--scrypt-log-n", "10"])
        stanza, file_key, _ = self.open_paes_file(data, plain)
        identity = self.path("id.txt")
        proc = run_paes(["keygen", "--x25519", "-o", identity])
        self.assertEqual(proc.returncode, 0, describe(proc))
        _, public = bech32_decode(proc.stdout.decode().strip())
        other = x25519_stanza(public, file_key)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "plain")
        for name, stanzas in (("scrypt, X25519", stanza + other), ("X25519, scrypt", other + stanza)):
            path = write_file(self.path("both.paes"), paes_file(stanzas, file_key, plain))
            for key_args in (["--passphrase-file", self.pass_file], ["-i", identity]):
                for extra in (["-o", out], []):
                    self.assert_fails(["decrypt", *key_args, path, *extra], 1, ("scrypt", "malformed", "alone"),
                                      out_dir=out_dir)
        # The same file key under the X25519 stanza alone opens: the refusal is the rule's.
        path = write_file(self.path("x25519.paes"), paes_file(other, file_key, plain))
        proc = run_paes(["decrypt", "-i", identity, path])
        self.assertEqual((proc.returncode, proc.stdout), (0, plain), describe(proc))


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals(), need_openssl=False))
