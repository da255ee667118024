#!/usr/bin/env python3
"""paes sealed format <-> Google Tink (AES-GCM-HKDF streaming AEAD) interoperability tests.

Run with a Python that has the `tink` package (e.g. a venv with `pip install tink`):
  python3 tests/tink/tink_interop.py --paes build/release/paes \
      --vectors tests/data/tink/aes_gcm_hkdf_streaming_vectors.json

Covers:
  A. the stored vectors: Tink decrypts every one (this checks the raw-key construction
     against Tink's official vectors); `paes decrypt --format tink` gives the plaintext of
     every paes-compatible one; `paes encrypt --format tink` of the plaintext is decrypted by
     Tink and is as long as Tink's own ciphertext (same segmentation).
  B. random round trips Tink -> paes and paes -> Tink around segment boundaries, AES-128 and
     AES-256, with and without --aad, a 4 KiB and the default (1 MiB) segment size, and
     ~3 MiB inputs; an associated data of 40,000 bytes (--aad-file and --aad), both ways and
     in the paes format, and one byte of it changed.
  C. the default format (--format paes): its preamble fields, Tink decrypting a paes file with
     the recipe in decrypt_paes_file_with_tink(), and paes decrypting a file built with Tink.
  D. failures: wrong or missing --aad, wrong key, wrong --segment-size, truncation (at a
     segment boundary too), flipped bits, appended bytes, swapped segments; each must exit 1
     with one "paes: ..." stderr line and leave nothing in the output directory. Segment
     sizes outside Tink's minimum (key size + 25)..64M and key files of other sizes than
     16/32 are refused; the extreme segment sizes interoperate.
  E. every engine and thread count, and stdin/stdout, read and write the same Tink stream.

Exit status: 0 all passed, 1 a test failed, 77 `tink` is not importable (nothing could run).
Tests that need paes' sealed-format flags are skipped, saying why, when the binary lacks them.
"""

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from importlib import metadata

try:
    import tink
except ImportError as exc:  # the whole file needs tink
    print(f"tink_interop.py: SKIP: the Python package `tink` is not importable ({exc}); "
          f"run with a Python that has it (pip install tink)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tink_raw_key import tink_decrypt, tink_encrypt, tink_streaming_aead  # noqa: E402
from harness import ScratchTestCase, describe, path_option, run_paes, run_unittest, tool_paths, write_file  # noqa: E402
from harness.sealed_format import (DEFAULT_SEGMENT, MAX_SEGMENT, PREAMBLE_LEN, boundary_sizes,  # noqa: E402
                                   first_segment_capacity, header_len, min_segment, tink_ciphertext_len)

PAES = "paes"
VECTORS = None            # the parsed vectors file
SEALED_SUPPORT = None     # None: supported; else the reason it is not (a string)
AAD_TEXT = "paes interop aad \u00e9\u2713"   # non-ASCII on purpose: --aad is UTF-8 text
RNG = random.Random(0x7A11C)


# --------------------------------------------------------------------------- the recipe

def decrypt_paes_file_with_tink(data, key, aad=b""):
    """Decrypts a raw-key paes sealed file (`--format paes`, the default) with Google Tink.

    data: the whole file; key: the 16 or 32 key-file bytes; aad: the --aad text as UTF-8 bytes.
    The file is a 32-byte preamble, then a Tink AES-GCM-HKDF streaming ciphertext (HKDF-SHA256,
    derived key size = key size) whose associated data is the preamble followed by the aad.
    The ciphertext segment size is the big-endian uint32 at preamble bytes 12..16.
    """
    preamble, stream = data[:32], data[32:]
    segment_size = int.from_bytes(preamble[12:16], "big")
    saead = tink_streaming_aead(key, segment_size)
    return tink_decrypt(saead, stream, associated_data=preamble + aad)


# --------------------------------------------------------------------------- helpers

def make_preamble(key, segment_size):
    """A raw-key paes preamble, built by hand from the documented layout."""
    return (b"PAES" + bytes([1, 1, len(key), 0, 0, 0, 0, 0])
            + segment_size.to_bytes(4, "big") + bytes(16))


def aad_args(aad_text):
    return [] if aad_text is None else ["--aad", aad_text]


def aad_bytes(aad_text):
    return b"" if aad_text is None else aad_text.encode("utf-8")


def sealed_support():
    """None when `paes encrypt --help` offers --format tink, --aad and --segment-size;
    else why not."""
    try:
        proc = run_paes(["encrypt", "--help"], timeout=30)
    except OSError as exc:
        return f"cannot run {PAES}: {exc}"
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    missing = [flag for flag in ("--format", "tink", "--aad", "--segment-size") if flag not in text]
    if missing:
        return (f"{PAES} encrypt --help does not mention {', '.join(missing)}: "
                "sealed format not built in")
    return None


class Base(ScratchTestCase):
    prefix = "paes-tink-"
    needs_paes = True

    def setUp(self):
        if self.needs_paes and SEALED_SUPPORT is not None:
            self.skipTest(SEALED_SUPPORT)
        super().setUp()

    def scratch_file(self, name, data):
        """Writes `data` to `name` in the test's directory; returns its path."""
        return write_file(self.path(name), data)

    def sealed_args(self, direction, key, fmt, aad_text=None, segment_size=None, aad_file=None):
        """The options of a sealed `direction` ("encrypt" or "decrypt") with the raw `key`
        in a key file: --aad, --aad-file, --format and --segment-size when given."""
        args = [direction, "--key-file", self.key_file(key, as_hex=False)] + aad_args(aad_text)
        if aad_file is not None:
            args += ["--aad-file", aad_file]
        if fmt is not None:
            args += ["--format", fmt]
        if segment_size is not None:
            args += ["--segment-size", segment_size]
        return args

    def paes_encrypt(self, key, plaintext, fmt, aad_text=None, segment_size=None, aad_file=None):
        """(process, ciphertext or None) of paes sealing `plaintext`; options as sealed_args."""
        out = self.path("ct.out")
        return self.output_of(self.sealed_args("encrypt", key, fmt, aad_text, segment_size, aad_file)
                              + [self.scratch_file("pt.bin", plaintext)], out)

    def paes_decrypt(self, key, ciphertext, fmt, aad_text=None, segment_size=None, aad_file=None):
        """(process, plaintext or None) of paes opening `ciphertext`; options as sealed_args."""
        out = self.path("pt.out")
        return self.output_of(self.sealed_args("decrypt", key, fmt, aad_text, segment_size, aad_file)
                              + [self.scratch_file("ct.bin", ciphertext)], out)

    def check_paes_opens(self, what, proc, got, plaintext):
        """paes decrypting (`proc`, its output `got`) must give `plaintext`; a failure names `what`."""
        self.check(proc.returncode == 0 and got == plaintext,
                   f"{what}: " + (describe(proc) if proc.returncode else "plaintext differs"))

    def check_tink_opens(self, what, opens, plaintext, rejecter="Tink"):
        """`opens()`, Tink decrypting, must give `plaintext`; a failure names `what`."""
        try:
            self.check(opens() == plaintext, f"{what}: Tink's plaintext differs")
        except tink.TinkError as exc:
            self.check(False, f"{what}: {rejecter} rejects it: {exc}")

    def assert_paes_fails(self, args, what):
        """paes `args` (no -o) must exit 1, print one 'paes: ' stderr line, write nothing."""
        out_dir = os.path.join(self.tmp, "out")
        os.makedirs(out_dir, exist_ok=True)
        out = os.path.join(out_dir, "result")
        proc = run_paes(args + ["-o", out])
        err = proc.stderr.decode(errors="replace")
        lines = [line for line in err.splitlines() if line.strip()]
        cmd = "paes " + " ".join(map(str, args))
        self.check(proc.returncode == 1, f"{what}: expected exit 1, got {describe(proc)} ({cmd})")
        self.check(len(lines) == 1 and lines[0].startswith("paes: "),
                   f"{what}: expected one 'paes: ...' stderr line, got {err!r}")
        left = os.listdir(out_dir)
        self.check(not left, f"{what}: left in the output directory: {left}")
        for name in left:
            os.remove(os.path.join(out_dir, name))


# --------------------------------------------------------------------------- A. vectors

def vectors(compatible_only):
    return [v for v in VECTORS["vectors"] if v["paes_compatible"] or not compatible_only]


def vector_aad_text(v):
    aad = bytes.fromhex(v["aad"])
    return aad.decode("utf-8") if aad else None


def paes_segment_size(v):
    """(the --segment-size to give paes for vector v, None) or (None, why it cannot run)."""
    seg = v["segment_size"]
    low = min_segment(len(v["key"]) // 2)
    if low <= seg <= MAX_SEGMENT:
        return seg, None
    return None, f"segment size {seg} outside paes' {low}..{MAX_SEGMENT}"


def runnable_vectors():
    """The paes-compatible vectors paes can take, with their --segment-size; prints skips."""
    out = []
    for v in vectors(compatible_only=True):
        seg, why = paes_segment_size(v)
        if seg is None:
            print(f"\n  SKIP vector {v['name']!r}: {why}", file=sys.stderr)
        else:
            out.append((v, seg))
    return out


class A1_VectorsTink(Base):
    """Tink itself decrypts every stored vector (checks the raw-key keyset construction)."""
    needs_paes = False

    def test_tink_decrypts_every_vector(self):
        for v in vectors(compatible_only=False):
            saead = tink_streaming_aead(bytes.fromhex(v["key"]), v["segment_size"],
                                        v["hkdf_hash"], v["derived_key_size"])
            try:
                got = tink_decrypt(saead, bytes.fromhex(v["ciphertext"]), bytes.fromhex(v["aad"]))
            except tink.TinkError as exc:
                self.check(False, f"{v['name']}: Tink failed: {exc}")
                continue
            self.check(got.hex() == v["plaintext"], f"{v['name']}: wrong plaintext")
        self.finish()

    def test_vector_lengths_match_segmentation(self):
        for v in vectors(compatible_only=True):
            key = bytes.fromhex(v["key"])
            expected = tink_ciphertext_len(len(v["plaintext"]) // 2, v["segment_size"], len(key))
            self.check(len(v["ciphertext"]) // 2 == expected,
                       f"{v['name']}: ciphertext {len(v['ciphertext']) // 2} bytes, "
                       f"expected {expected}")
        self.finish()


class A2_VectorsPaes(Base):
    def test_paes_decrypts_vectors(self):
        for v, seg in runnable_vectors():
            key = bytes.fromhex(v["key"])
            proc, got = self.paes_decrypt(key, bytes.fromhex(v["ciphertext"]), "tink",
                                          vector_aad_text(v), seg)
            if proc.returncode != 0 or got is None:
                self.check(False, f"{v['name']}: paes decrypt failed: {describe(proc)}")
                continue
            self.check(got.hex() == v["plaintext"],
                       f"{v['name']}: paes decrypt gave {len(got)} bytes that differ from the "
                       f"{len(v['plaintext']) // 2}-byte plaintext")
        self.finish()

    def test_paes_encrypts_vector_plaintexts(self):
        for v, seg in runnable_vectors():
            key, aad = bytes.fromhex(v["key"]), bytes.fromhex(v["aad"])
            plaintext = bytes.fromhex(v["plaintext"])
            proc, ct = self.paes_encrypt(key, plaintext, "tink", vector_aad_text(v), seg)
            if proc.returncode != 0 or ct is None:
                self.check(False, f"{v['name']}: paes encrypt failed: {describe(proc)}")
                continue
            self.check(len(ct) == len(v["ciphertext"]) // 2,
                       f"{v['name']}: paes ciphertext is {len(ct)} bytes, Tink's is "
                       f"{len(v['ciphertext']) // 2}")
            self.check(ct[0] == header_len(len(key)),
                       f"{v['name']}: header length byte {ct[0]}, expected {header_len(len(key))}")
            try:
                got = tink_decrypt(tink_streaming_aead(key, seg), ct, aad)
                self.check(got == plaintext, f"{v['name']}: Tink decrypts paes' output wrongly")
            except tink.TinkError as exc:
                self.check(False, f"{v['name']}: Tink rejects paes' ciphertext: {exc}")
        self.finish()


# --------------------------------------------------------------------------- B. round trips

def tink_boundary_sizes(key, segment_size):
    return boundary_sizes(segment_size, len(key))


class B_RoundTrips(Base):
    ctest_labels = ("threads",)
    def round_trips(self, segment_sizes, sizes_for, aad_choices):
        for key_len in (16, 32):
            key = os.urandom(key_len)
            for seg in segment_sizes:
                saead = tink_streaming_aead(key, seg or DEFAULT_SEGMENT)
                for n in sizes_for(key, seg or DEFAULT_SEGMENT):
                    plaintext = RNG.randbytes(n)
                    for aad_text in aad_choices:
                        what = (f"AES-{key_len * 8} S={seg or 'default'} n={n} "
                                f"aad={'none' if aad_text is None else 'yes'}")
                        aad = aad_bytes(aad_text)
                        # Tink -> paes (a bare Tink stream always needs --segment-size)
                        ct = tink_encrypt(saead, plaintext, aad)
                        proc, got = self.paes_decrypt(key, ct, "tink", aad_text,
                                                      seg or DEFAULT_SEGMENT)
                        self.check_paes_opens(f"Tink->paes {what}", proc, got, plaintext)
                        # paes -> Tink (default segment size: --segment-size left out)
                        proc, ct = self.paes_encrypt(key, plaintext, "tink", aad_text, seg)
                        if proc.returncode != 0 or ct is None:
                            self.check(False, f"paes->Tink {what}: encrypt {describe(proc)}")
                            continue
                        self.check(len(ct) == tink_ciphertext_len(n, seg or DEFAULT_SEGMENT, len(key)),
                                   f"paes->Tink {what}: ciphertext {len(ct)} bytes, Tink makes "
                                   f"{tink_ciphertext_len(n, seg or DEFAULT_SEGMENT, len(key))}")
                        self.check_tink_opens(f"paes->Tink {what}", lambda: tink_decrypt(saead, ct, aad), plaintext)
        self.finish()

    def test_boundaries_small_segments(self):
        self.round_trips([4096], tink_boundary_sizes, [None, AAD_TEXT])

    def test_boundaries_default_segment(self):
        self.round_trips([None], tink_boundary_sizes, [None, AAD_TEXT])

    def test_three_mebibytes_default_segment(self):
        self.round_trips([None], lambda key, s: [3 * (1 << 20) + 12345], [None, AAD_TEXT])


class B2_LongAssociatedData(Base):
    """An associated data of 40,000 bytes: past the 32,768 bytes of HKDF info that OpenSSL
    3.0's own HKDF takes, and Tink has no such limit (paes failed with "HKDF failed")."""

    AAD_LEN = 40000

    def test_forty_thousand_bytes_from_a_file(self):
        # Random bytes, not UTF-8: --aad-file passes a file's bytes as they are.
        aad = RNG.randbytes(self.AAD_LEN)
        aad_file = self.scratch_file("aad.bin", aad)
        other_aad_file = self.scratch_file("other-aad.bin", aad[:-1] + bytes([aad[-1] ^ 1]))
        seg = 4096
        for key_len in (16, 32):
            key = os.urandom(key_len)
            saead = tink_streaming_aead(key, seg)
            plaintext = RNG.randbytes(3 * seg + 17)
            what = f"AES-{key_len * 8} aad {self.AAD_LEN} bytes"
            ct = tink_encrypt(saead, plaintext, aad)
            proc, got = self.paes_decrypt(key, ct, "tink", segment_size=seg, aad_file=aad_file)
            self.check_paes_opens(f"Tink->paes {what}", proc, got, plaintext)
            self.assert_paes_fails(["decrypt", "--format", "tink", "--segment-size", seg, "--key-file",
                                    self.key_file(key, as_hex=False), "--aad-file", other_aad_file, self.scratch_file("ct.bin", ct)],
                                   f"Tink->paes {what}, its last byte changed")

            proc, ct = self.paes_encrypt(key, plaintext, "tink", segment_size=seg, aad_file=aad_file)
            if proc.returncode != 0 or ct is None:
                self.check(False, f"paes->Tink {what}: encrypt {describe(proc)}")
            else:
                self.check_tink_opens(f"paes->Tink {what}", lambda: tink_decrypt(saead, ct, aad), plaintext)

            # The paes format: its HKDF info is 32 bytes longer still.
            proc, data = self.paes_encrypt(key, plaintext, None, segment_size=seg, aad_file=aad_file)
            if proc.returncode != 0 or data is None:
                self.check(False, f"paes format {what}: encrypt {describe(proc)}")
                continue
            try:
                self.check(decrypt_paes_file_with_tink(data, key, aad) == plaintext,
                           f"paes format {what}: the recipe's plaintext differs")
            except tink.TinkError as exc:
                self.check(False, f"paes format {what}: Tink (recipe) rejects it: {exc}")
        self.finish()

    def test_forty_thousand_bytes_of_text_on_the_command_line(self):
        aad_text = "".join(RNG.choice("abcdefghij") for _ in range(self.AAD_LEN))
        key = os.urandom(32)
        saead = tink_streaming_aead(key, DEFAULT_SEGMENT)
        plaintext = RNG.randbytes(5000)
        proc, got = self.paes_decrypt(key, tink_encrypt(saead, plaintext, aad_text.encode()), "tink", aad_text,
                                      DEFAULT_SEGMENT)
        self.check_paes_opens("Tink->paes --aad", proc, got, plaintext)
        proc, ct = self.paes_encrypt(key, plaintext, "tink", aad_text)
        if proc.returncode != 0 or ct is None:
            self.check(False, f"paes->Tink --aad: encrypt {describe(proc)}")
        else:
            self.check_tink_opens("paes->Tink --aad", lambda: tink_decrypt(saead, ct, aad_text.encode()), plaintext)
        self.finish()


# --------------------------------------------------------------------------- C. paes format

class C1_RecipeOnTinkData(Base):
    """The recipe decrypts a paes-format file built by hand with Tink (needs no paes)."""
    needs_paes = False

    def test_recipe(self):
        for key_len in (16, 32):
            for seg in (64, 4096, DEFAULT_SEGMENT):
                for aad in (b"", AAD_TEXT.encode()):
                    key = os.urandom(key_len)
                    plaintext = RNG.randbytes(3 * seg + 5)
                    preamble = make_preamble(key, seg)
                    data = preamble + tink_encrypt(tink_streaming_aead(key, seg), plaintext,
                                                   preamble + aad)
                    self.check(decrypt_paes_file_with_tink(data, key, aad) == plaintext,
                               f"AES-{key_len * 8} S={seg}: recipe plaintext differs")
                    with self.assertRaises(tink.TinkError):
                        decrypt_paes_file_with_tink(data, key, aad + b"x")
        self.finish()


class C2_PaesFormat(Base):
    def check_preamble(self, what, preamble, key, seg):
        self.check(preamble[0:4] == b"PAES", f"{what}: magic {preamble[0:4]!r}")
        self.check(preamble[4] == 1, f"{what}: version {preamble[4]}")
        self.check(preamble[5] == 1, f"{what}: key source {preamble[5]} (expected 1, raw key)")
        self.check(preamble[6] == len(key), f"{what}: key length {preamble[6]}")
        self.check(preamble[7] == 0, f"{what}: scrypt log2 N {preamble[7]} for a raw key")
        self.check(preamble[10:12] == b"\0\0", f"{what}: reserved bytes {preamble[10:12].hex()}")
        self.check(int.from_bytes(preamble[12:16], "big") == seg,
                   f"{what}: segment size {int.from_bytes(preamble[12:16], 'big')}, expected {seg}")
        self.check(preamble[16:32] == bytes(16), f"{what}: scrypt salt {preamble[16:32].hex()}")

    def test_paes_file_decrypted_by_tink(self):
        for key_len in (16, 32):
            key = os.urandom(key_len)
            for seg in (None, 4096):
                for aad_text in (None, AAD_TEXT):
                    for n in (0, 1, 100000, 3 * (1 << 20) + 7):
                        what = (f"AES-{key_len * 8} S={seg or 'default'} n={n} "
                                f"aad={'none' if aad_text is None else 'yes'}")
                        plaintext = RNG.randbytes(n)
                        proc, data = self.paes_encrypt(key, plaintext, None, aad_text, seg)
                        if proc.returncode != 0 or data is None:
                            self.check(False, f"{what}: paes encrypt {describe(proc)}")
                            continue
                        if len(data) < PREAMBLE_LEN:
                            self.check(False, f"{what}: output only {len(data)} bytes")
                            continue
                        self.check_preamble(what, data[:PREAMBLE_LEN], key, seg or DEFAULT_SEGMENT)
                        self.check(len(data) == PREAMBLE_LEN + tink_ciphertext_len(
                            n, seg or DEFAULT_SEGMENT, len(key)), f"{what}: file is {len(data)} bytes")
                        self.check_tink_opens(what, lambda: decrypt_paes_file_with_tink(data, key, aad_bytes(aad_text)),
                                              plaintext, rejecter="Tink (recipe)")
                        # paes' own round trip, no --segment-size: it comes from the preamble
                        proc, got = self.paes_decrypt(key, data, None, aad_text)
                        self.check_paes_opens(f"{what}: paes decrypt of its own file", proc, got, plaintext)
        self.finish()

    def test_tink_built_paes_file_decrypted_by_paes(self):
        for key_len in (16, 32):
            key = os.urandom(key_len)
            for seg in (4096, DEFAULT_SEGMENT):
                for aad_text in (None, AAD_TEXT):
                    what = f"AES-{key_len * 8} S={seg} aad={'none' if aad_text is None else 'yes'}"
                    plaintext = RNG.randbytes(2 * seg + 99)
                    preamble = make_preamble(key, seg)
                    data = preamble + tink_encrypt(tink_streaming_aead(key, seg), plaintext,
                                                   preamble + aad_bytes(aad_text))
                    for fmt in (None, "paes"):
                        proc, got = self.paes_decrypt(key, data, fmt, aad_text)
                        self.check_paes_opens(f"{what} --format {fmt or '(default)'}", proc, got, plaintext)
        self.finish()

    def test_passphrase_file_decrypted_by_tink(self):
        """docs/FORMAT.md's passphrase recipe, as written there: scrypt from the preamble
        (hashlib), then the raw-key recipe."""
        passphrase = "tink reads this passphrase"
        for n in (0, 5000):
            plaintext = RNG.randbytes(n)
            out = self.path("pass.paes")
            proc = subprocess.run([PAES, "encrypt", "--passphrase-env", "PAES_TINK_PASS", "--scrypt-log-n", "12",
                                   "--segment-size", "4096", self.scratch_file("pt.bin", plaintext), "-o", out],
                                  capture_output=True, timeout=300, env=dict(os.environ, PAES_TINK_PASS=passphrase))
            if proc.returncode != 0:
                self.check(False, f"n={n}: paes encrypt {describe(proc)}")
                continue
            with open(out, "rb") as f:
                data = f.read()
            os.remove(out)
            preamble = data[:PREAMBLE_LEN]
            self.check(preamble[5] == 2 and preamble[7] == 12, f"n={n}: preamble {preamble[:16].hex()}")
            key = hashlib.scrypt(passphrase.encode(), salt=preamble[16:32], n=2**preamble[7],
                                 r=preamble[8], p=preamble[9], dklen=preamble[6], maxmem=2**31 - 1)
            try:
                self.check(decrypt_paes_file_with_tink(data, key) == plaintext, f"n={n}: Tink's plaintext differs")
            except tink.TinkError as exc:
                self.check(False, f"n={n}: Tink (recipe) rejects it: {exc}")
        self.finish()

    def test_explicit_empty_aad_is_no_aad(self):
        key = os.urandom(32)
        plaintext = b"empty aad"
        for fmt in (None, "tink"):
            proc, ct = self.paes_encrypt(key, plaintext, fmt, "", 4096)
            self.check(proc.returncode == 0, f"--aad '' format {fmt}: {describe(proc)}")
            if ct is None:
                continue
            proc, got = self.paes_decrypt(key, ct, fmt, None, 4096 if fmt == "tink" else None)
            self.check(proc.returncode == 0 and got == plaintext,
                       f"--aad '' then no --aad, format {fmt}: {describe(proc)}")
        self.finish()


# --------------------------------------------------------------------------- D. failures

class D_Failures(Base):
    def decrypt_args(self, key, ciphertext, fmt, aad_text=None, segment_size=None):
        return (self.sealed_args("decrypt", key, fmt, aad_text, segment_size)
                + [self.scratch_file(f"bad-{RNG.getrandbits(32):08x}.bin", ciphertext)])

    def test_wrong_aad_paes_format(self):
        key = os.urandom(16)
        plaintext = RNG.randbytes(3 * 4096)
        proc, data = self.paes_encrypt(key, plaintext, None, "right", 4096)
        self.assertEqual(proc.returncode, 0, describe(proc))
        proc, data_noaad = self.paes_encrypt(key, plaintext, None, None, 4096)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assert_paes_fails(self.decrypt_args(key, data, None, "wrong"), "aad right/wrong")
        self.assert_paes_fails(self.decrypt_args(key, data, None, "right "), "aad trailing space")
        self.assert_paes_fails(self.decrypt_args(key, data, None, None), "aad given, then none")
        self.assert_paes_fails(self.decrypt_args(key, data_noaad, None, "right"),
                               "no aad, then one")
        self.assert_paes_fails(self.decrypt_args(os.urandom(16), data, None, "right"), "wrong key")
        self.finish()

    def test_wrong_aad_tink_format(self):
        key = os.urandom(32)
        saead = tink_streaming_aead(key, 4096)
        plaintext = RNG.randbytes(10000)
        ct = tink_encrypt(saead, plaintext, b"X")
        self.assert_paes_fails(self.decrypt_args(key, ct, "tink", "Y", 4096), "Tink aad X, paes Y")
        self.assert_paes_fails(self.decrypt_args(key, ct, "tink", None, 4096), "Tink aad X, none")
        self.assert_paes_fails(self.decrypt_args(os.urandom(32), ct, "tink", "X", 4096),
                               "wrong key")
        self.assert_paes_fails(self.decrypt_args(key, ct, "tink", "X", 8192),
                               "wrong --segment-size")
        proc, got = self.paes_decrypt(key, ct, "tink", "X", 4096)  # the control
        self.check(proc.returncode == 0 and got == plaintext,
                   f"control (aad X both sides): {describe(proc)}")
        self.finish()

    def test_tampered_tink_stream(self):
        """Truncations, flipped bits and appended bytes; a big stream so that paes has already
        produced plaintext when it meets the damage (the output must still not appear)."""
        seg = 4096
        for key_len in (16, 32):
            key = os.urandom(key_len)
            saead = tink_streaming_aead(key, seg)
            h = header_len(len(key))
            first = first_segment_capacity(seg, len(key))
            # exactly 4 full segments, then a short last one
            plaintext = RNG.randbytes(first + 3 * (seg - 16) + 100)
            ct = tink_encrypt(saead, plaintext)
            full = seg * 4  # offset of the last segment (segment 0 includes the header)
            self.assertEqual(len(ct), full + 100 + 16)
            cases = {
                "drop the last segment (cut at a segment boundary)": ct[:full],
                "drop the last two segments": ct[:full - seg],
                "cut inside the last segment": ct[:-1],
                "cut to the header": ct[:h],
                "cut inside the header": ct[:h - 3],
                "empty file": b"",
                "append a byte": ct + b"\0",
                "append a whole empty last segment": ct + bytes(16),
                "flip a bit in the header length byte": bytes([ct[0] ^ 1]) + ct[1:],
                "flip a bit in the salt": ct[:2] + bytes([ct[2] ^ 1]) + ct[3:],
                "flip a bit in the nonce prefix": ct[:h - 1] + bytes([ct[h - 1] ^ 1]) + ct[h:],
                "flip a bit in segment 1":
                    ct[:seg + 10] + bytes([ct[seg + 10] ^ 1]) + ct[seg + 11:],
                "flip a bit in the last tag": ct[:-1] + bytes([ct[-1] ^ 0x80]),
                "swap segments 1 and 2": ct[:seg] + ct[2 * seg:3 * seg] + ct[seg:2 * seg]
                + ct[3 * seg:],
            }
            for what, bad in cases.items():
                self.assert_paes_fails(self.decrypt_args(key, bad, "tink", None, seg),
                                       f"AES-{key_len * 8}: {what}")
        self.finish()

    def test_tampered_paes_file(self):
        key = os.urandom(16)
        plaintext = RNG.randbytes(5 * 4096)
        proc, data = self.paes_encrypt(key, plaintext, None, None, 4096)
        self.assertEqual(proc.returncode, 0, describe(proc))
        cases = {
            "preamble segment size changed": data[:12] + (8192).to_bytes(4, "big") + data[16:],
            "preamble reserved byte set": data[:10] + b"\1" + data[11:],
            "preamble salt byte set (raw key)": data[:20] + b"\1" + data[21:],
            "bad magic": b"PAEZ" + data[4:],
            "cut after the preamble": data[:PREAMBLE_LEN],
            "cut inside the preamble": data[:20],
            "drop the last segment": data[:PREAMBLE_LEN + 4096 * 5],
        }
        for what, bad in cases.items():
            self.assert_paes_fails(self.decrypt_args(key, bad, None), what)
        self.finish()

    def test_segment_size_range(self):
        """Segment sizes below Tink's minimum (key size + 25) or above 64M are usage errors
        (exit 2) in both directions; the extremes themselves work."""
        for key_len in (16, 32):
            key = os.urandom(key_len)
            kf = self.key_file(key, as_hex=False)
            inp = self.scratch_file("pt.bin", b"x")
            for seg in (0, min_segment(key_len) - 1, MAX_SEGMENT + 1):
                for cmd in ("encrypt", "decrypt"):
                    out_dir = os.path.join(self.tmp, "out")
                    os.makedirs(out_dir, exist_ok=True)
                    proc = run_paes([cmd, "--format", "tink", "--key-file", kf, "--segment-size", seg,
                                inp, "-o", os.path.join(out_dir, "r")])
                    left = os.listdir(out_dir)
                    for name in left:
                        os.remove(os.path.join(out_dir, name))
                    self.check(proc.returncode == 2 and not left,
                               f"AES-{key_len * 8} {cmd} --segment-size {seg}: expected exit 2 "
                               f"and no output, got {describe(proc)}, left {left}")
        self.finish()

    def test_extreme_segment_sizes(self):
        """The smallest segment size (segment 0 holds one byte) and the largest (64M)."""
        for key_len in (16, 32):
            key = os.urandom(key_len)
            for seg, sizes in ((min_segment(key_len), range(0, 40)),
                               (MAX_SEGMENT, [first_segment_capacity(MAX_SEGMENT, len(key)) + 1])):
                saead = tink_streaming_aead(key, seg)
                for n in sizes:
                    plaintext = RNG.randbytes(n)
                    what = f"AES-{key_len * 8} S={seg} n={n}"
                    proc, ct = self.paes_encrypt(key, plaintext, "tink", AAD_TEXT, seg)
                    try:
                        self.check(proc.returncode == 0 and len(ct) == tink_ciphertext_len(
                            n, seg, len(key)) and tink_decrypt(saead, ct, AAD_TEXT.encode())
                            == plaintext, f"{what} paes->Tink: {describe(proc)}")
                    except tink.TinkError as exc:
                        self.check(False, f"{what} paes->Tink: Tink rejects it: {exc}")
                    ct = tink_encrypt(saead, plaintext, AAD_TEXT.encode())
                    proc, got = self.paes_decrypt(key, ct, "tink", AAD_TEXT, seg)
                    self.check_paes_opens(f"{what} Tink->paes", proc, got, plaintext)
        self.finish()

    def test_bad_key_sizes(self):
        for n in (0, 15, 24, 33):
            out_dir = os.path.join(self.tmp, "out")
            os.makedirs(out_dir, exist_ok=True)
            kf = self.scratch_file(f"key-{n}.bin", RNG.randbytes(n) if n else b"")
            proc = run_paes(["encrypt", "--format", "tink", "--key-file", kf,
                        self.scratch_file("pt.bin", b"x"), "-o", os.path.join(out_dir, "r")])
            self.check(proc.returncode in (1, 2) and not os.listdir(out_dir),
                       f"{n}-byte key: expected a failure and no output, got {describe(proc)}")
        self.finish()


# --------------------------------------------------------------------------- E. engines, pipes

class E_EnginesAndPipes(Base):
    """Every engine and thread count, and stdin/stdout, speak the same Tink stream."""
    ctest_labels = ("threads",)

    ENGINES = [["--engine", "serial"], ["-t", "1"], ["-t", "2"], ["-t", "3"], ["-t", "8"], []]

    def test_engines_and_threads(self):
        seg = 4096
        for key_len in (16, 32):
            key = os.urandom(key_len)
            saead = tink_streaming_aead(key, seg)
            plaintext = RNG.randbytes(600 * (seg - 16) + 123)
            tink_ct = tink_encrypt(saead, plaintext, AAD_TEXT.encode())
            kf = self.key_file(key, as_hex=False)
            inp_pt = self.scratch_file("pt.bin", plaintext)
            inp_ct = self.scratch_file("tink.bin", tink_ct)
            for extra in self.ENGINES:
                what = f"AES-{key_len * 8} {' '.join(extra) or '(defaults)'}"
                proc, ct = self.output_of(["encrypt", "--format", "tink", "--key-file", kf,
                                            "--aad", AAD_TEXT, "--segment-size", seg]
                                           + extra + [inp_pt], self.path("ct.out"))
                try:
                    ok = proc.returncode == 0 and tink_decrypt(saead, ct, AAD_TEXT.encode()) \
                        == plaintext
                    self.check(ok, f"{what} paes->Tink: {describe(proc)}")
                except tink.TinkError as exc:
                    self.check(False, f"{what} paes->Tink: Tink rejects it: {exc}")
                proc, got = self.output_of(["decrypt", "--format", "tink", "--key-file", kf,
                                             "--aad", AAD_TEXT, "--segment-size", seg]
                                            + extra + [inp_ct], self.path("pt.out"))
                self.check_paes_opens(f"{what} Tink->paes", proc, got, plaintext)
        self.finish()

    def test_stdin_stdout(self):
        seg = 4096
        key = os.urandom(32)
        saead = tink_streaming_aead(key, seg)
        kf = self.key_file(key, as_hex=False)
        plaintext = RNG.randbytes(100 * seg + 7)
        base = ["--format", "tink", "--key-file", kf, "--aad", AAD_TEXT, "--segment-size", seg]
        proc = subprocess.run([PAES, "encrypt"] + [str(a) for a in base], input=plaintext,
                              capture_output=True, timeout=120)
        try:
            self.check(proc.returncode == 0
                       and tink_decrypt(saead, proc.stdout, AAD_TEXT.encode()) == plaintext,
                       f"stdin->stdout encrypt: {describe(proc)}")
        except tink.TinkError as exc:
            self.check(False, f"stdin->stdout encrypt: Tink rejects it: {exc}")
        ct = tink_encrypt(saead, plaintext, AAD_TEXT.encode())
        proc = subprocess.run([PAES, "decrypt", "-"] + [str(a) for a in base] + ["-o", "-"],
                              input=ct, capture_output=True, timeout=120)
        self.check(proc.returncode == 0 and proc.stdout == plaintext,
                   f"stdin->stdout decrypt: {describe(proc)}")
        # a damaged stream to stdout: exit 1 and one error line (verified segments may be out)
        bad = ct[:50 * seg] + bytes([ct[50 * seg] ^ 1]) + ct[50 * seg + 1:]
        proc = subprocess.run([PAES, "decrypt"] + [str(a) for a in base], input=bad,
                              capture_output=True, timeout=120)
        lines = [line for line in proc.stderr.decode(errors="replace").splitlines() if line]
        self.check(proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("paes: "),
                   f"damaged stream to stdout: {describe(proc)}")
        self.check(len(proc.stdout) <= 50 * seg and plaintext.startswith(proc.stdout),
                   f"damaged stream to stdout: {len(proc.stdout)} bytes out, not a verified prefix")
        self.finish()


# --------------------------------------------------------------------------- main

def backend_that_seals():
    """The cipher backend paes names in its -v line for a small sealed encryption."""
    with tempfile.TemporaryDirectory(prefix="paes-tink-backend-") as tmp:
        key = os.path.join(tmp, "k")
        with open(key, "w") as f:
            f.write("00" * 32 + "\n")
        os.chmod(key, 0o600)
        result = subprocess.run([PAES, "encrypt", "--key-file", key, "-v", "-o", os.path.join(tmp, "out")],
                                input=b"x" * 1000, capture_output=True, timeout=60)
        line = result.stderr.decode(errors="replace").strip()
        if result.returncode != 0 or not line:
            return f"nothing (exit {result.returncode}: {line})"
        return line.rsplit(", ", 1)[-1]


def main():
    global PAES, VECTORS, SEALED_SUPPORT
    PAES, _, rest = tool_paths(__doc__, need_openssl=False)
    vectors_path, rest = path_option(rest, "--vectors", "tests/data/tink/aes_gcm_hkdf_streaming_vectors.json")
    with open(vectors_path) as f:
        VECTORS = json.load(f)
    SEALED_SUPPORT = sealed_support()
    try:
        tink_version = metadata.version("tink")
    except metadata.PackageNotFoundError:
        tink_version = "?"
    print(f"tink_interop.py: tink-python {tink_version}, paes {PAES}, "
          f"{len(VECTORS['vectors'])} vectors", file=sys.stderr)
    backend = os.environ.get("PAES_BACKEND")
    if backend and SEALED_SUPPORT is None:
        ran = backend_that_seals()
        print(f"tink_interop.py: PAES_BACKEND={backend}: paes seals with {ran}", file=sys.stderr)
        if ran != backend:
            print(f"tink_interop.py: FAIL: PAES_BACKEND={backend} but paes ran {ran}", file=sys.stderr)
            return 1
    if SEALED_SUPPORT is not None:
        print(f"tink_interop.py: SKIP paes tests: {SEALED_SUPPORT}", file=sys.stderr)
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
