#!/usr/bin/env python3
"""Damaged, foreign and wrong input to the sealed format: tampering, other tools' files, bad
arguments.

Run as:  python3 tests/cli/test_sealed_damage.py --paes build/release/paes --openssl /usr/bin/openssl [TestClass ...]

One of the test_sealed_*.py files (the ctests cli_sealed.<class>); their shared helpers are
in tests/harness (sealed_cases, sealed_format, pipes). Covers:
  3. Tamper detection (the damaged files through a file decrypted in one run, as a data set:
     each must fail alone, with its one line; those through stdin one process each):
     one bit flipped at every byte of a small multi-segment file;
     sampled flips of a 2 MiB file; truncation at every segment boundary and +-1, inside
     the preamble and header; appended bytes; swapped, duplicated and dropped segments;
     the messages (bad magic, unsupported version, header MAC mismatch, truncated,
     authentication failed);
     other tools' files named (openssl's Salted__, OpenPGP, a bare Tink stream) with the
     options that read them, a Tink stream's wrong segment size, and openssl's legacy key
     derivation under --pbkdf2.
  4. Bad input: wrong key, wrong passphrase, empty passphrase, 24-byte key, bad segment
     size, --aad mismatch, --aad-file (bytes, stdin, bounds), passphrase/key given for the other kind of file, --format tink
     with a passphrase, raw-only options on sealed, --json with stdout output, ciphertext
     from a terminal, encrypted output to a terminal.

Python 3.11 standard library only. Exits non-zero when any test fails; every skip says why.
"""

import json
import os
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import describe, error_lines, read_file, run_paes, run_test_script, write_file  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402
from harness.sealed_format import (PREAMBLE_LEN, RAW_KEY_HEADER_LEN, TAG_LEN, header_len,  # noqa: E402
                                   segment_spans, v1_passphrase_key, v1_preamble)

PAES = "paes"
OPENSSL = "openssl"
POOL = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))
# What a damaged sealed file may be reported as (anywhere past the magic and version).
DAMAGE_WORDS = ("authentication failed", "truncated", "corrupt")
# What damage to a raw-key file's header (the preamble past its fixed fields, and the MAC line)
# is reported as: the header's MAC refuses it before any segment is read.
HEADER_MAC_WORDS = ("header MAC mismatch",)


def changed(data, pos, new):
    """A copy of `data` with the bytes at `pos` replaced by `new` (bytes, or an int: one byte)."""
    copy = bytearray(data)
    new = bytes([new]) if isinstance(new, int) else new
    copy[pos:pos + len(new)] = new
    return copy


def flipped(data, pos, bit):
    """A copy of `data` with bit `bit` of byte `pos` flipped."""
    copy = bytearray(data)
    copy[pos] ^= 1 << bit
    return copy


# --------------------------------------------------------------------------- 3. tampering

class TamperTest(SealedTestCase):
    """3: any change, truncation, extension or reordering fails cleanly."""
    ctest_labels = ("threads",)

    def expect_damage(self, index, sealed, key, what, words, out_dir):
        """Decrypts damaged `sealed` from stdin; returns a problem description or None."""
        out = os.path.join(out_dir, f"plain-{index}")
        proc = run_paes(["decrypt", "--key-file", key, "-", "-o", out], input_bytes=bytes(sealed))
        if os.path.exists(out):
            os.remove(out)
            return f"{what} (stdin): output file left behind ({describe(proc)})"
        if proc.stdout:
            return f"{what} (stdin): wrote on stdout"
        return self.check_error(proc, 1, words, f"{what} (stdin)")

    def expect_damage_as_a_set(self, cases, key, out_dir):
        """Decrypts every damaged file of `cases` ([(what, bytes, words)]) in one run, as a data set
        (issue 42): each must fail with exactly one line naming it and holding one of its words,
        and leave no output; exit 1. Returns the problems found."""
        files_dir = self.new_dir("damaged")
        for index, (_, damaged, _) in enumerate(cases):
            write_file(os.path.join(files_dir, f"damaged-{index}.paes"), damaged)
        proc = run_paes(["decrypt", "--key-file", key, "--recursive", files_dir, "--output-dir", out_dir])
        problems = [] if proc.returncode == 1 else [f"the set: expected exit 1, got {describe(proc)}"]
        if proc.stdout:
            problems.append(f"the set wrote on stdout: {proc.stdout[:200]!r}")
        lines = {}
        for line in error_lines(proc.stderr):
            named = re.search(r"damaged-(\d+)\.paes", line)
            if not named or not line.startswith("paes: ") or int(named.group(1)) in lines:
                problems.append(f"the set: a line naming no damaged file, or one named twice: {line!r}")
                continue
            lines[int(named.group(1))] = line
        for index, (what, _, words) in enumerate(cases):
            line = lines.get(index)
            if line is None:
                problems.append(f"{what} (file): no line for it on stderr")
            elif not any(w.lower() in line.lower() for w in words):
                problems.append(f"{what} (file): stderr {line!r} mentions none of {words}")
        return problems

    def words_for(self, pos, bit):
        """What bit `bit` of byte `pos` of a raw-key (version 3) file flipped is refused as."""
        if pos < 4:
            return ("not a paes file",)
        if pos == 4:
            if bit == 0:  # 3 flipped to 2: the unreleased recipients format, refused outright
                return ("paes format version 2",)
            if bit == 1:  # 3 flipped to 1: a version-1 raw-key preamble with a salt (random in
                # version 3), which version 1 has not; without one, it would not commit
                return ("corrupt preamble", "does not commit")
            return ("unsupported",)
        if pos < 12:  # key source, key length, scrypt fields, reserved bytes: none may change
            return ("corrupt preamble",)
        if pos < 16:  # the segment size: out of range, or another size the MAC doesn't cover
            return HEADER_MAC_WORDS + ("corrupt preamble",)
        if pos < PREAMBLE_LEN:  # the salt: random in a raw-key file, under the MAC
            return HEADER_MAC_WORDS
        if pos < RAW_KEY_HEADER_LEN:  # the MAC line: "--- ", the MAC in base64, LF
            return HEADER_MAC_WORDS + ("malformed header",)
        return DAMAGE_WORDS

    def check_damage_cases(self, cases, key):
        """cases: [(what, damaged bytes, words, via_stdin)]: those through a file decrypted in one
        run, as a data set; those through stdin one process each, side by side."""
        out_dir = self.new_dir("out")
        on_stdin = [case for case in cases if case[3]]
        problems = self.expect_damage_as_a_set([case[:3] for case in cases if not case[3]], key, out_dir)
        problems += POOL.map(lambda ic: self.expect_damage(ic[0], ic[1][1], key, ic[1][0], ic[1][2], out_dir),
                             enumerate(on_stdin))
        for problem in problems:
            self.check(problem is None, problem)
        leftovers = [os.path.join(root, name) for root, _, names in os.walk(out_dir) for name in names]
        self.check(not leftovers, f"leftovers: {leftovers}")

    def test_flip_every_byte_small(self):
        """One bit flipped at every byte of a 4-segment file; every one must fail."""
        key = self.keygen(256)
        seg = 1024
        data = os.urandom(3000)
        sealed = self.seal(data, ["--key-file", key], ["--segment-size", seg])
        self.assertEqual(len(segment_spans(len(sealed), seg, 32)), 4)
        rng = random.Random(1234)
        cases = []
        for pos in range(len(sealed)):
            bit = rng.randrange(8)
            damaged = flipped(sealed, pos, bit)
            # Every position through a file; the preamble, header and every 5th byte
            # through stdin as well.
            cases.append((f"bit {bit} of byte {pos} flipped", damaged, self.words_for(pos, bit), False))
            if pos < RAW_KEY_HEADER_LEN + header_len(32) or pos % 5 == 0:
                cases.append((f"bit {bit} of byte {pos} flipped", damaged,
                              self.words_for(pos, bit), True))
        self.check_damage_cases(cases, key)
        self.finish()

    def test_flip_every_bit_preamble_header(self):
        """Every one of the 8 bits of the preamble, the MAC line and the Tink header (AES-128 key)."""
        key = self.keygen(128)
        sealed = self.seal(os.urandom(2500), ["--key-file", key], ["--segment-size", 1024])
        cases = []
        for pos in range(RAW_KEY_HEADER_LEN + header_len(16)):
            for bit in range(8):
                damaged = flipped(sealed, pos, bit)
                cases.append((f"AES-128 bit {bit} of byte {pos}", damaged,
                              self.words_for(pos, bit), pos % 2 == 1))
        self.check_damage_cases(cases, key)
        self.finish()

    def big_sealed(self):
        key = self.keygen(256)
        seg = 64 * 1024
        data = os.urandom(2 * 1024 * 1024 + 4321)
        sealed = self.seal(data, ["--key-file", key], ["--segment-size", "64K"])
        spans = segment_spans(len(sealed), seg, 32)
        self.assertEqual(spans[-1][1], len(sealed))
        self.assertGreater(len(spans), 30)
        return key, seg, data, sealed, spans

    def test_flip_sampled_multi_segment(self):
        key, seg, data, sealed, spans = self.big_sealed()
        positions = set(range(RAW_KEY_HEADER_LEN + header_len(32)))
        for start, end in spans:
            positions.update({start, start + 1, end - TAG_LEN - 1, end - TAG_LEN, end - TAG_LEN // 2,
                              end - 1, (start + end) // 2})
        rng = random.Random(99)
        positions.update(rng.randrange(len(sealed)) for _ in range(200))
        cases = []
        for i, pos in enumerate(sorted(positions)):
            bit = rng.randrange(8)
            damaged = flipped(sealed, pos, bit)
            cases.append((f"2 MiB file, byte {pos} flipped", damaged, self.words_for(pos, bit),
                          i % 3 == 0))
        self.check_damage_cases(cases, key)
        self.finish()

    def test_truncation_extension_reordering(self):
        key, seg, data, sealed, spans = self.big_sealed()
        cases = []
        cuts = {0, 1, 2, 3, 4, 31, PREAMBLE_LEN, PREAMBLE_LEN + 1, RAW_KEY_HEADER_LEN - 1, RAW_KEY_HEADER_LEN,
                RAW_KEY_HEADER_LEN + 1, RAW_KEY_HEADER_LEN + header_len(32) - 1,
                len(sealed) - 1, len(sealed) - TAG_LEN, len(sealed) - TAG_LEN - 1}
        for start, end in spans:
            cuts.update({start - 1, start, start + 1, end - 1})
            if end < len(sealed):
                cuts.update({end, end + 1})
        for cut in sorted(c for c in cuts if 0 <= c < len(sealed)):
            if cut < 4:
                words = ("truncated", "not a paes file")
            elif cut < PREAMBLE_LEN:
                words = ("truncated",)
            else:
                words = DAMAGE_WORDS
            cases.append((f"truncated to {cut} bytes", sealed[:cut], words, cut % 2 == 0))
        for extra in (b"\0", os.urandom(17), os.urandom(TAG_LEN), os.urandom(seg)):
            cases.append((f"{len(extra)} bytes appended", sealed + extra, DAMAGE_WORDS, False))
            cases.append((f"{len(extra)} bytes appended", sealed + extra, DAMAGE_WORDS, True))
        seg_bytes = [sealed[s:e] for s, e in spans]
        head = sealed[:spans[0][0]]

        def assemble(order):
            return head + b"".join(seg_bytes[i] for i in order)

        n = len(spans)
        edits = {
            "segments 1 and 2 swapped": [0, 2, 1] + list(range(3, n)),
            "segments 5 and 9 swapped": [i if i not in (5, 9) else 14 - i for i in range(n)],
            "segment 1 duplicated": [0, 1] + list(range(1, n)),
            "segment 3 dropped": [i for i in range(n) if i != 3],
            "last segment dropped": list(range(n - 1)),
            "last full segment duplicated": list(range(n - 1)) + [n - 2, n - 1],
            "last two segments swapped": list(range(n - 2)) + [n - 1, n - 2],
        }
        for what, order in edits.items():
            cases.append((what, assemble(order), DAMAGE_WORDS, False))
            cases.append((what, assemble(order), DAMAGE_WORDS, True))
        # A whole segment of another file sealed with the same key, at the same index.
        other = self.seal(os.urandom(len(data)), ["--key-file", key], ["--segment-size", "64K"])
        s, e = spans[4]
        cases.append(("segment 4 from another file", sealed[:s] + other[s:e] + sealed[e:],
                      DAMAGE_WORDS, False))
        # The other file's header with this file's segments.
        cases.append(("another file's header", other[:spans[0][0]] + sealed[spans[0][0]:],
                      DAMAGE_WORDS, False))
        self.check_damage_cases(cases, key)
        # Sanity: the untouched file still opens.
        proc, got = self.open_sealed(sealed, ["--key-file", key])
        self.check(proc.returncode == 0 and got == data, f"the intact file: {describe(proc)}")
        self.finish()

    def test_specific_messages(self):
        key = self.keygen(256)
        sealed = bytearray(self.seal(os.urandom(3000), ["--key-file", key],
                                     ["--segment-size", 1024]))
        cases = []
        cases.append(("bad magic", changed(sealed, 0, b"PAEX"), "not a paes file"))
        cases.append(("openssl-looking input", b"Salted__" + bytes(sealed[8:]), "not a paes file"))
        # Version 2, the unreleased recipients format: named as such, whatever the rest says.
        cases.append(("version 2", changed(sealed, 4, 2), "paes format version 2"))
        # Version 1 (with the zero salt of its raw-key files) doesn't commit to its key: refused
        # without --allow-uncommitted, whatever the rest says.
        cases.append(("version 1", changed(changed(sealed, 4, 1), 16, bytes(16)), "does not commit"))
        cases.append(("version 1", changed(changed(sealed, 4, 1), 16, bytes(16)), "--allow-uncommitted"))
        # Key source 2 (scrypt in the preamble) is version 1's only: a version-3 preamble can't say it.
        cases.append(("key source 2", changed(sealed, 5, 2), "key source 2 in a version 3 file"))
        cases.append(("version 4", changed(sealed, 4, 4), "unsupported"))
        cases.append(("version 0", changed(sealed, 4, 0), "unsupported"))
        cases.append(("preamble cut to 20 bytes", sealed[:20], "truncated"))
        cases.append(("MAC line cut", sealed[:PREAMBLE_LEN + 10], "truncated"))
        cases.append(("Tink header cut", sealed[:RAW_KEY_HEADER_LEN + 10], "truncated"))
        cases.append(("only preamble and header", sealed[:RAW_KEY_HEADER_LEN + header_len(32)],
                      "truncated"))
        cases.append(("MAC line changed", changed(sealed, PREAMBLE_LEN + 4, b"A" if sealed[36] != 65 else b"B"),
                      "header MAC mismatch"))
        cases.append(("salt changed", changed(sealed, 16, sealed[16] ^ 1), "header MAC mismatch"))
        cases.append(("reserved byte set", changed(sealed, 11, 1), "corrupt"))
        cases.append(("unknown key source", changed(sealed, 5, 9), "corrupt"))
        self.check_damage_cases([(what, damaged, (word,), via_stdin) for what, damaged, word in cases
                                 for via_stdin in (False, True)], key)
        self.finish()


class ForeignFileTest(SealedTestCase):
    """3: another tool's file given to decrypt is named, with the options that read it where
    paes can (the library's words name no option: rekey's message shows them); a bare Tink
    stream opened with a wrong segment size, and openssl's legacy key derivation under
    --pbkdf2, are said as such."""

    def setUp(self):
        super().setUp()
        self.key = self.keygen(256, "k256")
        self.data = os.urandom(20000)
        self.plain = write_file(self.path("plain"), self.data)
        self.out_dir = self.new_dir("out")
        self.pw = write_file(self.path("pw"), b"x\n", 0o600)

    def fails_with_all(self, args, words, path=None, absent=()):
        """paes `args` (reading `path` as a file, then from stdin) exits 1 with one 'paes: '
        line holding every one of `words` and none of `absent`, and leaves no output."""
        for via_stdin in ((False, True) if path else (False,)):
            full = list(args) + ([] if via_stdin or not path else [path])
            full += ["-o", os.path.join(self.out_dir, "o")]
            proc = run_paes(full, input_bytes=read_file(path) if via_stdin else None)
            lines = error_lines(proc.stderr)
            what = f"paes {' '.join(map(str, full))}{' < ' + path if via_stdin else ''}"
            self.check(proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("paes: ")
                       and all(w in lines[0] for w in words) and not any(w in lines[0] for w in absent),
                       f"{what}: {describe(proc)}")
            self.check(not os.listdir(self.out_dir), f"{what}: left {os.listdir(self.out_dir)}")

    def test_openssl_salted_file(self):
        enc = self.path("openssl.enc")
        subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:x", "-in", self.plain,
                        "-out", enc], check=True, capture_output=True, timeout=60)
        self.fails_with_all(["decrypt", "--key-file", self.key],
                            ["an openssl enc file (Salted__)", "--mode <mode> --pbkdf2"], enc)
        self.finish()

    def test_openpgp_files(self):
        packets = {
            "old-format passphrase packet (gpg -c)": b"\x8c\x0d\x04\x09\x03\x02",
            "new-format passphrase packet": b"\xc3\x0d\x04\x09\x03\x02",
            "old-format public-key packet (gpg -e)": b"\x85\x01\x0c\x03",
            "new-format public-key packet": b"\xc1\xc0\x4c\x03",
            "armored": b"-----BEGIN PGP MESSAGE-----\n\njA0ECQMC",
        }
        for index, start in enumerate(packets.values()):
            path = write_file(self.path(f"pgp-{index}"), start + os.urandom(200))
            self.fails_with_all(["decrypt", "--key-file", self.key], ["an OpenPGP (gpg) file"], path)
        self.finish()

    def test_bare_tink_stream_given_as_a_paes_file(self):
        for bits in (128, 256):
            key = self.keygen(bits)
            tink = self.path(f"tink{bits}")
            self.assertEqual(run_paes(["encrypt", "--format", "tink", "--key-file", key, self.plain, "-o", tink])
                             .returncode, 0)
            self.fails_with_all(["decrypt", "--key-file", key],
                                ["bare Tink stream", "--format tink --segment-size"], tink)
        self.finish()

    def test_bare_tink_stream_with_a_wrong_segment_size(self):
        tink = self.path("tink")
        self.assertEqual(run_paes(["encrypt", "--format", "tink", "--key-file", self.key, "--segment-size", "4096",
                              self.plain, "-o", tink]).returncode, 0)
        for segment in ("1024", "8192", None):  # None: the default, 1 MiB
            extra = ["--segment-size", segment] if segment else []
            self.fails_with_all(["decrypt", "--format", "tink", "--key-file", self.key] + extra,
                                ["segment size it was written with"], tink)
        proc = run_paes(["decrypt", "--format", "tink", "--key-file", self.key, "--segment-size", "4096", tink, "-o",
                    os.path.join(self.out_dir, "o")])
        self.assertEqual((proc.returncode, read_file(os.path.join(self.out_dir, "o"))), (0, self.data))
        self.finish()

    def test_openssl_legacy_key_derivation(self):
        enc = self.path("legacy.enc")
        subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pass", "pass:x", "-in", self.plain, "-out", enc],
                       check=True, capture_output=True, timeout=60)
        self.fails_with_all(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", self.pw],
                            ["bad decrypt", "without -pbkdf2 (openssl's legacy key derivation)"], enc)
        self.finish()

    def test_library_words_name_no_option(self):
        """rekey gets the library's message as it is: the format named, no option."""
        identity = self.path("id")
        proc = run_paes(["keygen", "--x25519", "-o", identity])
        self.assertEqual(proc.returncode, 0, describe(proc))
        recipient = proc.stdout.decode().strip()
        salted = self.path("openssl.enc")
        subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:x", "-in", self.plain,
                        "-out", salted], check=True, capture_output=True, timeout=60)
        tink = self.path("tink")
        self.assertEqual(run_paes(["encrypt", "--format", "tink", "--key-file", self.key, self.plain, "-o", tink])
                         .returncode, 0)
        for path, words in ((salted, ["an openssl enc file (Salted__)"]), (tink, ["bare Tink stream"])):
            self.fails_with_all(["rekey", "-i", identity, "-r", recipient, path], words, absent=["--"])
        self.finish()


# --------------------------------------------------------------------------- 4. bad input

class BadInputTest(SealedTestCase):
    """4: bad keys, passphrases and options fail cleanly."""

    def setUp(self):
        super().setUp()
        self.key = self.keygen(256, "k1")
        self.data = os.urandom(3000)
        self.inp = write_file(self.path("plain.bin"), self.data)
        self.pw = write_file(self.path("pw"), b"the passphrase\n", 0o600)
        self.out_dir = self.new_dir("out")
        self.out = os.path.join(self.out_dir, "result")
        self.sealed = write_file(self.path("k.paes"), self.seal(self.data, ["--key-file", self.key]))
        self.pw_sealed = write_file(self.path("p.paes"), self.seal(
            self.data, ["--passphrase-file", self.pw], ["--scrypt-log-n", 10]))

    def test_wrong_key(self):
        other = self.keygen(256, "k2")
        # The header's MAC, keyed by the raw key, refuses another key before any segment.
        self.fails(["decrypt", "--key-file", other, self.sealed, "-o", self.out], 1,
                   "header MAC mismatch")
        small = self.keygen(128, "k3")
        self.fails(["decrypt", "--key-file", small, self.sealed, "-o", self.out], 1,
                   ("wrong key", "key"))

    def test_wrong_passphrase(self):
        wrong = write_file(self.path("wrong"), b"the passphrasf\n", 0o600)
        # The scrypt stanza doesn't open: said as such, before any segment.
        self.fails(["decrypt", "--passphrase-file", wrong, self.pw_sealed, "-o", self.out], 1,
                   "wrong passphrase")
        self.fails(["decrypt", "--passphrase-env", "PAES_TEST_PW", self.pw_sealed, "-o",
                    self.out], 1, "wrong passphrase", env={"PAES_TEST_PW": "nope"})
        # The first line only is the passphrase: a trailing newline is not part of it,
        # but other text on later lines does not matter.
        two_lines = write_file(self.path("two"), b"the passphrase\nsecond line\n", 0o600)
        proc, got = self.open_sealed(read_file(self.pw_sealed), ["--passphrase-file", two_lines])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)

    def test_empty_passphrase(self):
        empty = write_file(self.path("empty"), b"", 0o600)
        newline = write_file(self.path("newline"), b"\n", 0o600)
        for pw in (empty, newline):
            self.fails(["encrypt", "--passphrase-file", pw, "--scrypt-log-n", 10, self.inp,
                        "-o", self.out], (1, 2), "empty passphrase")
            self.fails(["decrypt", "--passphrase-file", pw, self.pw_sealed, "-o", self.out],
                       (1, 2), "empty passphrase")
        self.fails(["encrypt", "--passphrase-env", "PAES_TEST_PW", self.inp, "-o", self.out],
                   (1, 2), "empty passphrase", env={"PAES_TEST_PW": ""})

    def test_a_passphrase_files_key_size_is_reported_from_the_file(self):
        """decrypt takes no --key-bits: the size --json reports is the file's. paes seals a
        passphrase's file AES-256 only (--key-bits 128 is refused); version 1, read with
        --allow-uncommitted, has AES-128 passphrase files too."""
        pw_env = {"PAES_TEST_PW": "size me"}
        self.fails(["encrypt", "--passphrase-env", "PAES_TEST_PW", "--scrypt-log-n", 10, "--key-bits", 128,
                    self.inp, "-o", self.out], 2, "AES-256", env=pw_env)
        sealed = write_file(self.path("p256"), self.seal(
            self.data, ["--passphrase-env", "PAES_TEST_PW"], ["--scrypt-log-n", 10, "--key-bits", 256],
            env=pw_env))
        files = [(sealed, 256, [])]
        for bits in (128, 256):
            preamble = v1_preamble(2, bits // 8, 4096, 10, os.urandom(16))
            v1 = self.v1_file(preamble, self.data, v1_passphrase_key(b"size me", preamble))
            files.append((write_file(self.path(f"v1-p{bits}"), v1), bits, ["--allow-uncommitted"]))
        for path, bits, extra in files:
            proc = run_paes(["decrypt", "--passphrase-env", "PAES_TEST_PW", "--json"] + extra + [path, "-o", self.out],
                            env=pw_env)
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assertEqual(json.loads(proc.stdout)["key_bits"], bits, path)
            self.assertEqual(read_file(self.out), self.data, path)
            os.remove(self.out)

    def test_scrypt_cost_on_decrypt_is_refused_whatever_its_value(self):
        # Hidden from decrypt's help, and refused with the reason, not a range error.
        for cost in (10, 99):
            self.fails(["decrypt", "--passphrase-file", self.pw, "--scrypt-log-n", cost, self.pw_sealed,
                        "-o", self.out], 2, "read from the sealed file")

    def test_key_24_bytes_for_sealed(self):
        k24 = write_file(self.path("k24"), os.urandom(24), 0o600)
        self.fails(["encrypt", "--key-file", k24, self.inp, "-o", self.out], 1, "24")
        self.fails(["decrypt", "--key-file", k24, self.sealed, "-o", self.out], 1, "24")
        k192 = self.keygen(192, "k192")
        self.fails(["encrypt", "--key-file", k192, self.inp, "-o", self.out], 1, "24")

    def test_passphrase_key_bits_192(self):
        self.fails(["encrypt", "--passphrase-file", self.pw, "--key-bits", 192, self.inp,
                    "-o", self.out], 2, "a passphrase seals an AES-256 file")

    def test_passphrase_options_with_a_key(self):
        """--key-bits and --scrypt-log-n describe a passphrase's key; with a key file they
        would be silently ignored (a 256-bit key does not become AES-128), so, as raw modes
        do, the sealed format refuses them."""
        for extra in (["--key-bits", "128"], ["--scrypt-log-n", "12"]):
            self.fails(["encrypt", "--key-file", self.key] + extra + [self.inp, "-o", self.out],
                       2, extra[0])

    def test_scrypt_cost_range(self):
        """--scrypt-log-n accepts what paes can open again: the highest cost (22, 4 GiB, age's
        limit) seals and opens; 23 would need more than the 4 GiB cap that bounds what a
        hostile file can make paes allocate, so it is a usage error, as is 9."""
        sealed = self.seal(self.data, ["--passphrase-file", self.pw], ["--scrypt-log-n", 22])
        self.assertEqual(sealed[7], 0, "a version-3 preamble has no scrypt parameters")
        self.assertRegex(sealed[PREAMBLE_LEN:PREAMBLE_LEN + 64], rb"^-> scrypt [A-Za-z0-9+/]{22} 22\n",
                         "the scrypt stanza's work factor")
        proc, got = self.open_sealed(sealed, ["--passphrase-file", self.pw])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)
        for cost in (23, 9):
            self.fails(["encrypt", "--passphrase-file", self.pw, "--scrypt-log-n", cost, self.inp,
                        "-o", self.out], 2, "must be 10 to 22")

    def test_hostile_scrypt_cost_is_refused_before_scrypt_runs(self):
        """A scrypt stanza, or a version-1 preamble (opened with --allow-uncommitted), asking
        for a cost past the cap fails at once: paes never tries to allocate what it asks for
        (8 GiB and more; 2^255 for byte 255)."""
        sealed = read_file(self.pw_sealed)
        stanza = re.compile(rb"-> scrypt [A-Za-z0-9+/]{22} (10)\n").match(sealed, PREAMBLE_LEN)
        self.assertIsNotNone(stanza, f"no scrypt stanza after the preamble: {sealed[:100]!r}")
        preamble = v1_preamble(2, 32, 4096, 10, os.urandom(16))
        v1 = self.v1_file(preamble, self.data, v1_passphrase_key(b"the passphrase", preamble))
        for cost, stanza_words, preamble_words in (
                (23, "above the 2^22 (4 GiB of memory)", "GiB paes allows"),
                (30, "above the 2^22 (4 GiB of memory)", "GiB paes allows"),
                (255, "above the 2^22 (4 GiB of memory)", "unsupported scrypt parameters")):
            in_stanza = sealed[:stanza.start(1)] + str(cost).encode() + sealed[stanza.end(1):]
            in_preamble = bytearray(v1)
            in_preamble[7] = cost
            for where, hostile, words, extra in (("stanza", in_stanza, stanza_words, []),
                                                 ("preamble", in_preamble, preamble_words, ["--allow-uncommitted"])):
                path = write_file(self.path(f"hostile-{where}-{cost}.paes"), bytes(hostile))
                started = time.monotonic()
                self.fails(["decrypt", "--passphrase-file", self.pw] + extra + [path, "-o", self.out], 1, words)
                self.assertLess(time.monotonic() - started, 10,
                                f"log2 N {cost} in the {where}: scrypt seems to have run")

    def test_bad_segment_size(self):
        for size in ("10", "0", "56", "65M"):
            self.fails(["encrypt", "--key-file", self.key, "--segment-size", size, self.inp,
                        "-o", self.out], 2, "segment size")

    def test_aad_mismatch(self):
        sealed = write_file(self.path("aad.paes"), self.seal(self.data, ["--key-file", self.key],
                                                             ["--aad", "a"]))
        # The header's MAC covers the aad: a wrong, missing or extra one fails there.
        self.fails(["decrypt", "--key-file", self.key, "--aad", "b", sealed, "-o", self.out], 1,
                   "header MAC mismatch")
        self.fails(["decrypt", "--key-file", self.key, sealed, "-o", self.out], 1,
                   "header MAC mismatch")
        self.fails(["decrypt", "--key-file", self.key, "--aad", "a", self.sealed, "-o",
                    self.out], 1, "header MAC mismatch")
        proc, got = self.open_sealed(read_file(sealed), ["--key-file", self.key], ["--aad", "a"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)

    def test_aad_file(self):
        # Bytes no command line carries: a NUL, a newline, invalid UTF-8; and longer than the
        # 32,768 bytes of HKDF info OpenSSL 3.0's HKDF takes.
        aad = b"\0\n\xff" + os.urandom(40000)
        aad_file = write_file(self.path("aad.bin"), aad)
        sealed = write_file(self.path("aadf.paes"), self.seal(self.data, ["--key-file", self.key],
                                                              ["--aad-file", aad_file]))
        proc, got = self.open_sealed(read_file(sealed), ["--key-file", self.key], ["--aad-file", aad_file])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)
        other = write_file(self.path("other.bin"), aad[:-1] + bytes([aad[-1] ^ 1]))
        self.fails(["decrypt", "--key-file", self.key, "--aad-file", other, sealed, "-o", self.out], 1,
                   "header MAC mismatch")
        # '-': standard input, when the data comes from a file.
        proc = run_paes(["decrypt", "--key-file", self.key, "--aad-file", "-", sealed, "-o", self.out],
                   input_bytes=aad)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.out), self.data)
        os.remove(self.out)
        # A text file and --aad with the same text are the same associated data.
        text_file = write_file(self.path("aad.txt"), b"host=db1")
        sealed = write_file(self.path("aadt.paes"), self.seal(self.data, ["--key-file", self.key],
                                                              ["--aad-file", text_file]))
        proc, got = self.open_sealed(read_file(sealed), ["--key-file", self.key], ["--aad", "host=db1"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)

        self.fails(["encrypt", "--key-file", self.key, "--aad", "a", "--aad-file", aad_file, self.inp,
                    "-o", self.out], 2, "--aad")
        self.fails(["encrypt", "--key-file", self.key, "--aad-file", "-", "-o", self.out], 2,
                   "standard input", input_bytes=self.data)
        self.fails(["encrypt", "--key-file", self.key, "--aad-file", self.path("absent"), self.inp,
                    "-o", self.out], 1, "associated data file")
        big = write_file(self.path("big.bin"), bytes((16 << 20) + 1))
        for name in (big, "/dev/zero"):
            self.fails(["encrypt", "--key-file", self.key, "--aad-file", name, self.inp, "-o", self.out], 1,
                       "larger than 16 MiB")
        self.fails(["encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", "00" * 16, "--aad-file",
                    aad_file, self.inp, "-o", self.out], 2, "--aad-file")

    def test_key_kind_mismatch(self):
        self.fails(["decrypt", "--passphrase-file", self.pw, self.sealed, "-o", self.out],
                   (1, 2), "sealed with a key")
        self.fails(["decrypt", "--passphrase-env", "PAES_TEST_PW", self.sealed, "-o", self.out],
                   (1, 2), "sealed with a key", env={"PAES_TEST_PW": "x"})
        self.fails(["decrypt", "--key-file", self.key, self.pw_sealed, "-o", self.out],
                   (1, 2), "sealed with a passphrase")
        self.fails(["decrypt", "--key-env", "PAES_TEST_KEY", self.pw_sealed, "-o", self.out],
                   (1, 2), "sealed with a passphrase",
                   env={"PAES_TEST_KEY": read_file(self.key).decode().strip()})
        # From stdin too, where the file's kind is only known from the stream.
        self.fails(["decrypt", "--key-file", self.key, "-o", self.out], (1, 2),
                   "sealed with a passphrase", input_bytes=read_file(self.pw_sealed))
        # No key option: a file sealed with a key is named so, rather than a passphrase asked for.
        self.fails(["decrypt", self.sealed, "-o", self.out], 2, "sealed with a raw key: give --key-file")

    def test_library_errors_worded_in_flags(self):
        """The library's errors name no flag (paes::Remedy says what would cure one); the CLI
        words each cure in its own flags, with the exit status the library's kind gives."""
        identity = self.path("id")
        proc = run_paes(["keygen", "--x25519", "-o", identity])
        self.assertEqual(proc.returncode, 0, describe(proc))
        to_recipient = write_file(self.path("r.paes"), self.seal(self.data, ["-r", proc.stdout.decode().strip()]))
        self.fails(["decrypt", "--key-file", self.key, to_recipient, "-o", self.out], 2,
                   ("open it with an identity, not a key or passphrase (give -i IDENTITY-FILE)",))
        self.fails(["decrypt", "-i", identity, self.sealed, "-o", self.out], 2,
                   ("open it with its key, not identities (give --key-file or --key-env)",))
        self.fails(["decrypt", "--passphrase-file", self.pw, self.sealed, "-o", self.out], 2,
                   ("open it with its key (give --key-file or --key-env)",))
        self.fails(["decrypt", "--key-file", self.key, self.pw_sealed, "-o", self.out], 2,
                   ("(give --passphrase-file or --passphrase-env, or type it at the prompt)",))
        # A passphrase's file: its header MAC fails under another aad (the passphrase being
        # right, as the stanza opened); a damaged segment: the aad is one cause of several.
        self.fails(["decrypt", "--passphrase-file", self.pw, "--aad", "other", self.pw_sealed, "-o", self.out], 1,
                   ("header MAC mismatch: wrong associated data, or the header was changed after sealing "
                    "(refused before any plaintext) (--aad or --aad-file gives the associated data)",))
        damaged = bytearray(read_file(self.sealed))
        damaged[-20] ^= 1
        damaged = write_file(self.path("damaged.paes"), bytes(damaged))
        self.fails(["decrypt", "--key-file", self.key, damaged, "-o", self.out], 1,
                   ("wrong associated data, or the data was corrupted, truncated or reordered "
                    "(--aad or --aad-file gives the associated data)",))
        existing = write_file(os.path.join(self.out_dir, "existing"), b"kept")
        self.fails(["decrypt", "--key-file", self.key, self.sealed, "-o", existing], 1,
                   (": already exists (use -f to overwrite)",))
        self.assertEqual(read_file(existing), b"kept")

    def test_tink_with_passphrase(self):
        self.fails(["encrypt", "--format", "tink", "--passphrase-file", self.pw, self.inp,
                    "-o", self.out], 2, "passphrase")

    def test_raw_only_options_on_sealed(self):
        iv = os.urandom(16).hex()
        for direction, inp in (("encrypt", self.inp), ("decrypt", self.sealed)):
            self.fails([direction, "--key-file", self.key, "--iv", iv, inp, "-o", self.out], 2,
                       "--iv")
            self.fails([direction, "--key-file", self.key, "--no-pad", inp, "-o", self.out], 2,
                       "--no-pad")
            self.fails([direction, "--key-file", self.key, "--pbkdf2", inp, "-o", self.out], 2,
                       "--pbkdf2")

    def test_json_with_stdout_output(self):
        for args in (["encrypt", "--key-file", self.key, "--json", self.inp],
                     ["encrypt", "--key-file", self.key, "--json", self.inp, "-o", "-"],
                     ["decrypt", "--key-file", self.key, "--json", self.sealed]):
            self.fails(args, 2, "json")
        # With -o FILE it is fine and counts the bytes.
        proc = run_paes(["encrypt", "--key-file", self.key, "--json", self.inp, "-o", self.out])
        self.assertEqual(proc.returncode, 0, describe(proc))
        summary = json.loads(proc.stdout)
        self.assertEqual(summary["bytes_in"], len(self.data))
        self.assertEqual(summary["bytes_out"], os.path.getsize(self.out))

    def test_ciphertext_from_terminal(self):
        with self.terminal() as (master, slave):
            self.fails(["decrypt", "--key-file", self.key, "-o", self.out], 2, "terminal",
                       stdin=slave)
            self.fails(["decrypt", "--key-file", self.key, "-", "-o", self.out], 2, "terminal",
                       stdin=slave)

    def test_binary_output_to_terminal(self):
        with self.terminal() as (master, slave):
            # Encrypting only: a decrypted plaintext may well be text meant for the screen.
            for args in (["encrypt", "--key-file", self.key, self.inp],
                         ["encrypt", "--key-file", self.key, self.inp, "-o", "-"],
                         ["encrypt", "--mode", "ctr", "--iv", "00" * 16, "--key-file",
                          self.key, self.inp]):
                proc = subprocess.run([PAES] + args, stdout=slave, stderr=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, timeout=60)
                problem = self.check_error(proc, 2, "terminal", "paes " + " ".join(args)
                                           + " > pty")
                self.assertIsNone(problem, problem)
        self.assertEqual(os.listdir(self.out_dir), [])

    def test_output_exists(self):
        write_file(self.out, b"precious")
        self.fails(["encrypt", "--key-file", self.key, self.inp, "-o", self.out], 1, "exists")
        self.assertEqual(read_file(self.out), b"precious")
        self.fails(["decrypt", "--key-file", self.key, self.sealed, "-o", self.out], 1, "exists")
        self.assertEqual(read_file(self.out), b"precious")


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
