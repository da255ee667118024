#!/usr/bin/env python3
"""Files that commit to their key and --aad (issue 39) through the real binary.

Run as:  python3 tests/cli/test_commitment.py --paes build/release/paes --openssl /usr/bin/openssl [TestClass ...]

paes seals only format version 3 (docs/FORMAT.md): a raw key's file is the preamble, a MAC line
under a key derived from the raw key, and the Tink body; a passphrase's is age's scrypt stanza
wrapping a file key; every header MAC covers the --aad. Covers:
  RawKeyTest      16- and 32-byte keys: the layout byte by byte (preamble and its random salt,
                  the MAC recomputed here, sizes), the body read back as a bare Tink stream whose
                  associated data is the preamble and the aad, round trips.
  PassphraseTest  --passphrase-file with --scrypt-log-n 10 and the default 18: the preamble, the
                  scrypt stanza's line and body, round trips, a wrong passphrase; --key-bits 128,
                  work factors out of range and a stanza asking for 2^23 refused.
  AadTest         a raw key, a passphrase, recipients: a wrong or missing --aad fails with exit 1
                  at the header MAC, to a file (nothing left under its name), to stdout (nothing
                  printed) and with --range; a recipients file sealed without --aad and opened
                  with one is refused naming --allow-uncommitted (and with it, warned, its body
                  still fails).
  LegacyTest      version-1 files written here (FORMAT.md section 4's worked example as it was
                  before issue 39, verbatim; raw-key, --aad and passphrase files whose bodies are
                  bare Tink streams with the preamble as associated data): refused by default
                  naming --allow-uncommitted, opened with it and a "paes: warning: " line at every
                  opening; a wrong key still fails; a version-3 file opens with
                  --allow-uncommitted and no warning.
  RekeyTest       rekey refuses a raw-key file and a passphrase file (exit 2, nothing written).

Python 3.11 standard library only (the age and Tink interop of the scrypt stanza, which needs
`cryptography` and `tink`, is tests/tink/scrypt_interop.py). Exits non-zero when a test fails.
"""

import base64
import hashlib
import hmac
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import describe, error_lines, read_file, run_paes, run_test_script, write_file  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402
from harness.sealed_format import (DEFAULT_SEGMENT, PREAMBLE_LEN, first_segment_capacity, header_len,  # noqa: E402
                                   hkdf_sha256, tink_ciphertext_len)

PAES = "paes"
OPENSSL = "openssl"
ALLOW = "--allow-uncommitted"
SEGMENT = 4096
MAC_LINE_LEN = 48                     # "--- " + 43 base64 characters + LF
B64 = rb"[A-Za-z0-9+/]"

# The worked example of docs/FORMAT.md section 4 as it was before issue 39 (git show
# ccbdbb1:docs/FORMAT.md), verbatim: version 1, raw key 00 01 .. 1f, no aad.
WORKED_EXAMPLE_KEY = bytes(range(32))
WORKED_EXAMPLE_PLAIN = b"hello, paes\n"
WORKED_EXAMPLE = bytes.fromhex(
    "5041 4553 0101 2000 0000 0000 0010 0000"
    "0000 0000 0000 0000 0000 0000 0000 0000"
    "28"
    "4e f073 6c59 8621 d5b1 1660 b388 53c2"
    "ae8b 5898 5d05 2ef3 dafd cbb3 feb0 a05c"
    "0f"
    "d7 a405 a02c 8cbe"
    "aa6b 93e7 4e6e d4ad ceca e79c"
    "19f4 8010 a59e c5a3 e4b3 539f 2455 f43b")


def b64(text):
    """age's base64: the standard alphabet without padding."""
    return base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)


def v3_preamble(key_source, key_len, segment=SEGMENT):
    """The version-3 preamble of the spec: no scrypt fields, a zero salt (a raw key's is random)."""
    return b"PAES" + bytes([3, key_source, key_len, 0, 0, 0, 0, 0]) + segment.to_bytes(4, "big") + bytes(16)


def raw_key_mac(key, preamble, aad=b""):
    """The MAC line's MAC of a raw-key file: HMAC-SHA-256 under HKDF(raw key, "", "paes v3 raw
    key header") over the preamble, "---" and the aad."""
    mac_key = hkdf_sha256(key, b"", b"paes v3 raw key header")
    return hmac.new(mac_key, preamble + b"---" + aad, hashlib.sha256).digest()


class CommitmentTestCase(SealedTestCase):
    prefix = "paes-commitment-"

    def setUp(self):
        super().setUp()
        self.out_dir = self.new_dir("out")

    def file_of(self, name, data):
        return write_file(self.path(name), data)

    def passphrase_file(self, text="a passphrase for issue 39"):
        return write_file(self.path(self.unique_name("pass-")), text.encode() + b"\n", 0o600)

    def identity(self):
        """(identity file, recipient) from paes keygen --x25519."""
        path = self.path(self.unique_name("id-"))
        proc = run_paes(["keygen", "--x25519", "-o", path])
        self.assertEqual(proc.returncode, 0, f"paes keygen --x25519: {describe(proc)}")
        return path, proc.stdout.decode().strip()

    def opens(self, args, path, plain, warned=False, what=""):
        """paes decrypt `args` opens `path` to `plain` to a file, to stdout and with --range
        (0:4 and -3); stderr empty, or (`warned`) only "paes: warning: " lines, at least one."""
        out = os.path.join(self.out_dir, "plain")
        for how, extra, part in (("-o FILE", ["-o", out], slice(None)), ("stdout", [], slice(None)),
                                 ("--range 0:4 -o FILE", ["--range", "0:4", "-o", out], slice(0, 4)),
                                 ("--range -3 to stdout", ["--range", "-3"], slice(-3, None))):
            cmd = ["decrypt", *args, *extra, path]
            proc = run_paes(cmd)
            label = f"{what} paes {' '.join(cmd)} ({how})"
            self.assertEqual(proc.returncode, 0, f"{label}: {describe(proc)}")
            got = read_file(out) if "-o" in extra else proc.stdout
            if "-o" in extra:
                os.remove(out)
            self.assertEqual(got, plain[part], f"{label}: wrong plaintext")
            lines = error_lines(proc.stderr)
            if warned:
                self.assertTrue(lines and all(line.startswith("paes: warning: ") for line in lines),
                                f"{label}: expected 'paes: warning: ' lines on stderr, got {proc.stderr!r}")
            else:
                self.assertEqual(lines, [], f"{label}: unexpected stderr")

    def refused(self, args, path, code, words=None, what=""):
        """paes decrypt `args` refuses `path` with `code` (an int or a tuple) and one 'paes: '
        error line naming one of `words` (a string or a tuple; None: any), "paes: warning: "
        lines aside: to a file (nothing left in the output directory), to stdout (nothing
        printed) and with --range, both ways."""
        codes = code if isinstance(code, tuple) else (code,)
        words = (words,) if isinstance(words, str) else words
        out = os.path.join(self.out_dir, "plain")
        before = sorted(os.listdir(self.out_dir))
        for extra in (["-o", out], [], ["--range", "0:4", "-o", out], ["--range", "0:4"]):
            cmd = ["decrypt", *args, *extra, path]
            proc = run_paes(cmd)
            label = f"{what} paes {' '.join(cmd)}"
            self.assertIn(proc.returncode, codes, f"{label}: expected exit {code}, got {describe(proc)}")
            errors = [line for line in error_lines(proc.stderr) if not line.startswith("paes: warning: ")]
            self.assertTrue(len(errors) == 1 and errors[0].startswith("paes: "),
                            f"{label}: expected one 'paes: ' error line, got {proc.stderr!r}")
            self.assertTrue(words is None or any(w.lower() in errors[0].lower() for w in words),
                            f"{label}: {errors[0]!r} names none of {words}")
            self.assertEqual(proc.stdout, b"", f"{label}: printed on stdout")
            self.assertEqual(sorted(os.listdir(self.out_dir)), before, f"{label}: left output behind")


# --------------------------------------------------------------------------- raw keys

class RawKeyTest(CommitmentTestCase):
    """A raw key's version-3 file: layout, MAC, the body as Tink reads it, round trips."""

    def check_layout(self, sealed, key, plain, aad=b"", segment=SEGMENT):
        """The spec's raw-key file, byte by byte; returns its preamble's random salt."""
        preamble = sealed[:PREAMBLE_LEN]
        self.assertEqual(preamble[:16].hex(), v3_preamble(1, len(key), segment)[:16].hex(), "preamble")
        line = sealed[PREAMBLE_LEN:PREAMBLE_LEN + MAC_LINE_LEN]
        self.assertRegex(line, rb"^--- " + B64 + rb"{43}\n$", "the MAC line")
        self.assertEqual(b64(line[4:-1]).hex(), raw_key_mac(key, preamble, aad).hex(),
                         "the MAC is not HMAC(HKDF(raw key, '', 'paes v3 raw key header'), preamble || '---' || aad)")
        body = sealed[PREAMBLE_LEN + MAC_LINE_LEN:]
        self.assertEqual(body[0], header_len(len(key)), "Tink's header length byte")
        self.assertEqual(len(body), tink_ciphertext_len(len(plain), segment, len(key)), "the body's length")
        # The body is a bare Tink stream: key = the raw key, associated data = preamble || aad.
        ad = self.file_of(self.unique_name("ad-"), preamble + aad)
        stream = self.file_of(self.unique_name("stream-"), body)
        proc = run_paes(["decrypt", "--format", "tink", "--key-file", self.key_file(key), "--aad-file", ad,
                         "--segment-size", segment, stream])
        self.assertEqual(proc.returncode, 0, f"the body as a Tink stream: {describe(proc)}")
        self.assertEqual(proc.stdout, plain, "the body as a Tink stream: wrong plaintext")
        return preamble[16:]

    def test_layout_and_round_trips(self):
        first = first_segment_capacity(SEGMENT, 32)
        salts = set()
        for key_len in (16, 32):
            key = os.urandom(key_len)
            key_file = self.key_file(key)
            for size in (0, 1, 100, first, first + 1, 3 * SEGMENT):
                plain = os.urandom(size)
                for aad in (None, "r\u00e9sum\u00e9 2026"):
                    aad_args = [] if aad is None else ["--aad", aad]
                    sealed = self.seal(plain, ["--key-file", key_file], ["--segment-size", "4K", *aad_args])
                    salts.add(self.check_layout(sealed, key, plain, b"" if aad is None else aad.encode()))
                    proc, got = self.open_sealed(sealed, ["--key-file", key_file], aad_args)
                    self.assertEqual(proc.returncode, 0, f"{key_len}-byte key, {size} bytes: {describe(proc)}")
                    self.assertEqual(got, plain, f"{key_len}-byte key, {size} bytes, aad {aad!r}")
        # A random salt in every preamble (the amendment): files under one key have unlinkable MAC lines.
        self.assertEqual(len(salts), 24, "a preamble salt repeated")
        self.assertNotIn(bytes(16), salts, "a zero preamble salt")

    def test_default_segment_size(self):
        key = os.urandom(32)
        plain = b"the default segment"
        sealed = self.seal(plain, ["--key-file", self.key_file(key)])
        self.check_layout(sealed, key, plain, segment=DEFAULT_SEGMENT)

    def test_wrong_key(self):
        key_file = self.key_file(os.urandom(32))
        path = self.file_of("f.paes", self.seal(b"secret", ["--key-file", key_file]))
        self.refused(["--key-file", self.key_file(os.urandom(32))], path, 1, "header MAC")
        self.refused(["--key-file", self.key_file(os.urandom(16))], path, 1, ("header MAC", "key"))


# --------------------------------------------------------------------------- passphrases

# One scrypt stanza (salt, work factor, wrapped file key), then the MAC line.
SCRYPT_HEADER = re.compile(rb"-> scrypt (" + B64 + rb"{22}) ([1-9][0-9]*)\n(" + B64 + rb"{43})\n"
                           rb"--- (" + B64 + rb"{43})\n")


class PassphraseTest(CommitmentTestCase):
    """A passphrase's version-3 file: age's scrypt stanza, alone in the header."""

    def check_layout(self, sealed, log_n, plain, segment=SEGMENT):
        self.assertEqual(sealed[:PREAMBLE_LEN].hex(), v3_preamble(3, 32, segment).hex(), "preamble")
        m = SCRYPT_HEADER.match(sealed, PREAMBLE_LEN)
        self.assertIsNotNone(m, f"no single scrypt stanza and MAC line after the preamble: {sealed[32:160]!r}")
        self.assertEqual(len(b64(m[1])), 16, "salt")
        self.assertEqual(m[2], str(log_n).encode(), "work factor")
        self.assertEqual(len(b64(m[3])), 32, "the wrapped file key")
        body = sealed[m.end():]
        self.assertEqual(body[0], header_len(32), "Tink's header length byte")
        self.assertEqual(len(body), tink_ciphertext_len(len(plain), segment, 32), "the body's length")

    def test_layout_and_round_trips(self):
        pass_file = self.passphrase_file()
        for size in (0, 1, 5000):
            plain = os.urandom(size)
            for aad_args in ([], ["--aad", "passphrase aad"]):
                sealed = self.seal(plain, ["--passphrase-file", pass_file],
                                   ["--scrypt-log-n", "10", "--segment-size", "4K", *aad_args])
                self.check_layout(sealed, 10, plain)
                proc, got = self.open_sealed(sealed, ["--passphrase-file", pass_file], aad_args)
                self.assertEqual(proc.returncode, 0, f"{size} bytes {aad_args}: {describe(proc)}")
                self.assertEqual(got, plain, f"{size} bytes {aad_args}")
        # Every file has its own salt and file key.
        a = self.seal(b"x", ["--passphrase-file", pass_file], ["--scrypt-log-n", "10"])
        b = self.seal(b"x", ["--passphrase-file", pass_file], ["--scrypt-log-n", "10"])
        self.assertNotEqual(SCRYPT_HEADER.match(a, 32)[1], SCRYPT_HEADER.match(b, 32)[1], "the same salt twice")

    def test_default_work_factor_is_18(self):
        pass_file = self.passphrase_file()
        plain = b"age's default work factor"
        sealed = self.seal(plain, ["--passphrase-file", pass_file])
        self.check_layout(sealed, 18, plain, segment=DEFAULT_SEGMENT)
        proc, got = self.open_sealed(sealed, ["--passphrase-file", pass_file])
        self.assertEqual((proc.returncode, got), (0, plain), describe(proc))

    def test_wrong_passphrase(self):
        path = self.file_of("f.paes", self.seal(b"secret", ["--passphrase-file", self.passphrase_file()],
                                                ["--scrypt-log-n", "10"]))
        self.refused(["--passphrase-file", self.passphrase_file("not it")], path, 1)

    def test_refused_when_sealing(self):
        inp = self.file_of("in", b"data")
        out = os.path.join(self.out_dir, "f.paes")
        pass_file = self.passphrase_file()
        self.assert_fails(["encrypt", "--passphrase-file", pass_file, "--key-bits", "128", inp, "-o", out], 2,
                          ("--key-bits", "AES-256", "256"), out_dir=self.out_dir)
        self.assert_fails(["encrypt", "--passphrase-file", pass_file, "--key-bits", "128", inp], 2,
                          ("--key-bits", "AES-256", "256"), out_dir=self.out_dir)
        for log_n in ("9", "23"):
            self.assert_fails(["encrypt", "--passphrase-file", pass_file, "--scrypt-log-n", log_n, inp, "-o", out],
                              2, ("--scrypt-log-n", "10 to 22"), out_dir=self.out_dir)

    def test_work_factor_past_22_refused(self):
        """A stanza asking for 2^23 (8 GiB) is refused before scrypt runs; one with a leading
        zero is not age's grammar."""
        pass_file = self.passphrase_file()
        sealed = self.seal(b"data", ["--passphrase-file", pass_file], ["--scrypt-log-n", "10"])
        m = SCRYPT_HEADER.match(sealed, PREAMBLE_LEN)
        self.assertIsNotNone(m, f"no scrypt stanza: {sealed[:160]!r}")
        for bad in (b"23", b"010", b"99"):
            changed = sealed[:m.start(2)] + bad + sealed[m.end(2):]
            path = self.file_of(f"wf{bad.decode()}.paes", changed)
            self.refused(["--passphrase-file", pass_file], path, 1, ("work factor", "scrypt", "malformed", "header"))


# --------------------------------------------------------------------------- --aad

class AadTest(CommitmentTestCase):
    """The header MAC covers --aad: a wrong or missing one fails at the header."""

    def sealed_files(self):
        """(name, sealing key args, opening key args) for a raw key, a passphrase, recipients."""
        key_file = self.key_file(os.urandom(32))
        pass_file = self.passphrase_file()
        identity, recipient = self.identity()
        return [("raw key", ["--key-file", key_file], ["--key-file", key_file]),
                ("passphrase", ["--passphrase-file", pass_file, "--scrypt-log-n", "10"],
                 ["--passphrase-file", pass_file]),
                ("recipients", ["-r", recipient], ["-i", identity])]

    def test_wrong_or_missing_aad(self):
        plain = os.urandom(6000)
        for name, seal_args, open_args in self.sealed_files():
            for aad_args in (["--aad", "contract 7"], ["--aad-file", self.file_of("aad.bin", b"contract 7")]):
                path = self.file_of(f"{name}.paes", self.seal(plain, seal_args, ["--segment-size", "4K", *aad_args]))
                self.opens([*open_args, "--aad", "contract 7"], path, plain, what=name)
                for wrong in (["--aad", "contract 8"], ["--aad", "contract 7 "], []):
                    self.refused([*open_args, *wrong], path, 1, "header MAC", what=name)

    def test_aad_given_to_a_file_sealed_without(self):
        plain = b"sealed without an aad"
        for name, seal_args, open_args in self.sealed_files():
            path = self.file_of(f"{name}.paes", self.seal(plain, seal_args))
            self.opens(open_args, path, plain, what=name)
            if name == "recipients":
                # The MAC verifies without the aad: the rule of files sealed before issue 39.
                self.refused([*open_args, "--aad", "x"], path, (1, 2), ALLOW)
                # Let through, warned, the body is checked under the aad and fails.
                proc = self.assert_exit(["decrypt", *open_args, "--aad", "x", ALLOW, path], 1)
                self.assertEqual(proc.stdout, b"")
                self.assertTrue(any(line.startswith("paes: warning: ") for line in error_lines(proc.stderr)),
                                f"no warning: {proc.stderr!r}")
            else:
                self.refused([*open_args, "--aad", "x"], path, 1, "header MAC")


# --------------------------------------------------------------------------- version 1

class LegacyTest(CommitmentTestCase):
    """Version-1 files (no key commitment) written here: refused by default, opened with
    --allow-uncommitted and a warning at every opening."""

    def v1_file(self, name, plain, key, preamble, aad=b""):
        """A version-1 file: `preamble` || a bare Tink stream of `plain` under `key` whose associated
        data is the preamble and `aad` (FORMAT.md section 3), written with paes --format tink."""
        inp = self.file_of(self.unique_name("v1-in-"), plain)
        ad = self.file_of(self.unique_name("v1-ad-"), preamble + aad)
        out = self.path(self.unique_name("v1-body-"))
        segment = int.from_bytes(preamble[12:16], "big")
        proc = run_paes(["encrypt", "--format", "tink", "--key-file", self.key_file(key), "--aad-file", ad,
                         "--segment-size", segment, inp, "-o", out])
        self.assertEqual(proc.returncode, 0, f"paes encrypt --format tink: {describe(proc)}")
        return self.file_of(name, preamble + read_file(out))

    def check_v1(self, args, path, plain, what):
        self.refused(args, path, (1, 2), ALLOW, what=what)
        for _ in range(2):  # a warning at every opening, not once
            self.opens([*args, ALLOW], path, plain, warned=True, what=what)

    def test_worked_example(self):
        path = self.file_of("ex.paes", WORKED_EXAMPLE)
        self.check_v1(["--key-file", self.key_file(WORKED_EXAMPLE_KEY)], path, WORKED_EXAMPLE_PLAIN,
                      "FORMAT.md section 4's example")
        self.refused(["--key-file", self.key_file(os.urandom(32)), ALLOW], path, 1)

    def test_raw_keys_and_aad(self):
        for key_len in (16, 32):
            key = os.urandom(key_len)
            preamble = b"PAES" + bytes([1, 1, key_len, 0, 0, 0, 0, 0]) + SEGMENT.to_bytes(4, "big") + bytes(16)
            plain = os.urandom(3 * SEGMENT + 5)
            key_file = self.key_file(key)
            path = self.v1_file(f"v1-{key_len}.paes", plain, key, preamble)
            self.check_v1(["--key-file", key_file], path, plain, f"v1, {key_len}-byte key")
            path = self.v1_file(f"v1-{key_len}-aad.paes", plain, key, preamble, b"v1 aad")
            self.check_v1(["--key-file", key_file, "--aad", "v1 aad"], path, plain, f"v1, {key_len}-byte key, aad")
            self.refused(["--key-file", key_file, "--aad", "v1 aae", ALLOW], path, 1)
            self.refused(["--key-file", self.key_file(os.urandom(key_len)), ALLOW], path, 1)

    def test_passphrase(self):
        salt = os.urandom(16)
        preamble = b"PAES" + bytes([1, 2, 32, 10, 8, 1, 0, 0]) + SEGMENT.to_bytes(4, "big") + salt
        key = hashlib.scrypt(b"legacy passphrase", salt=salt, n=1 << 10, r=8, p=1, dklen=32)
        plain = os.urandom(5000)
        path = self.v1_file("v1-pass.paes", plain, key, preamble)
        self.check_v1(["--passphrase-file", self.passphrase_file("legacy passphrase")], path, plain,
                      "v1 passphrase")
        self.refused(["--passphrase-file", self.passphrase_file("another"), ALLOW], path, 1)

    def test_committed_files_are_not_warned_about(self):
        key_file = self.key_file(os.urandom(32))
        plain = b"version 3"
        path = self.file_of("v3.paes", self.seal(plain, ["--key-file", key_file]))
        self.opens(["--key-file", key_file, ALLOW], path, plain, what="a version-3 file")


# --------------------------------------------------------------------------- rekey

class RekeyTest(CommitmentTestCase):
    """rekey re-keys files sealed to recipients only: a raw key's or a passphrase's file is
    refused as a usage error, nothing written."""

    def test_raw_key_and_passphrase_files_refused(self):
        identity, recipient = self.identity()
        for name, args in (("raw key", ["--key-file", self.key_file(os.urandom(32))]),
                           ("passphrase", ["--passphrase-file", self.passphrase_file(), "--scrypt-log-n", "10"])):
            path = self.file_of(f"{name}.paes", self.seal(b"data", args))
            self.assert_fails(["rekey", "-i", identity, "-r", recipient, path, "-o",
                               os.path.join(self.out_dir, "rekeyed")], 2, "", out_dir=self.out_dir)


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
