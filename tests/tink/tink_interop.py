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
  C. the default format (--format paes, version 3): its preamble fields and MAC line, Tink
     decrypting a raw-key paes file with the recipe in decrypt_paes_file_with_tink() (the body
     after the 80 bytes of preamble and MAC line), and a passphrase file once its scrypt stanza
     is unwrapped (hashlib's scrypt, cryptography's ChaCha20-Poly1305); paes decrypting a file built
     with Tink and a MAC line made here, and a version-1 file only with --allow-uncommitted.
  D. failures: wrong or missing --aad, wrong key, wrong --segment-size, truncation (at a
     segment boundary too), flipped bits, appended bytes, swapped segments; each must exit 1
     with one "paes: ..." stderr line and leave nothing in the output directory. Segment
     sizes outside Tink's minimum (key size + 25)..64M and key files of other sizes than
     16/32 are refused; the extreme segment sizes interoperate.
  E. every engine and thread count, and stdin/stdout, read and write the same Tink stream.

Exit status: 0 all passed, 1 a test failed, 77 `tink` is not importable (nothing could run).
Tests that need paes' sealed-format flags are skipped, saying why, when the binary lacks them.
"""

import base64
import hashlib
import hmac
import importlib.util
import json
import os
import random
import re
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
from harness.sealed_format import (DEFAULT_SEGMENT, MAX_SEGMENT, PREAMBLE_LEN, b64_unpadded,  # noqa: E402
                                   boundary_sizes, first_segment_capacity, header_len, hkdf_sha256,
                                   min_segment, tink_ciphertext_len)

PAES = "paes"
VECTORS = None            # the parsed vectors file
SEALED_SUPPORT = None     # None: supported; else the reason it is not (a string)
AAD_TEXT = "paes interop aad \u00e9\u2713"   # non-ASCII on purpose: --aad is UTF-8 text
RNG = random.Random(0x7A11C)


# --------------------------------------------------------------------------- the recipe

MAC_LINE_LEN = 48         # "--- ", the header MAC in 43 base64 characters, LF (FORMAT.md 8.1)
RAW_KEY_HEADER = PREAMBLE_LEN + MAC_LINE_LEN   # a raw-key version-3 file's body starts here


def decrypt_paes_file_with_tink(data, key, aad=b""):
    """Decrypts a raw-key paes sealed file (`--format paes`, the default) with Google Tink.

    data: the whole file; key: the 16 or 32 key-file bytes; aad: the --aad text as UTF-8 bytes.
    Version 3: a 32-byte preamble, the header's MAC line (48 bytes; Tink does not check it), then
    a Tink AES-GCM-HKDF streaming ciphertext (HKDF-SHA256, derived key size = key size) whose
    associated data is the preamble followed by the aad. Version 1 has no MAC line. The
    ciphertext segment size is the big-endian uint32 at preamble bytes 12..16.
    """
    preamble = data[:PREAMBLE_LEN]
    stream = data[RAW_KEY_HEADER:] if preamble[4] == 3 else data[PREAMBLE_LEN:]
    segment_size = int.from_bytes(preamble[12:16], "big")
    saead = tink_streaming_aead(key, segment_size)
    return tink_decrypt(saead, stream, associated_data=preamble + aad)


def chacha20_poly1305_open(key, sealed):
    """age's wrapping: ChaCha20-Poly1305 with 12 zero bytes of nonce, no associated data. From
    `cryptography`: Python's Tink registers no ChaCha20-Poly1305 key type (only XChaCha20's).
    Raises cryptography.exceptions.InvalidTag when the tag does not verify."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    return ChaCha20Poly1305(key).decrypt(bytes(12), sealed, None)


def decrypt_passphrase_file_with_tink(data, passphrase, aad=b""):
    """Decrypts a paes passphrase file (version 3, one scrypt stanza) with hashlib, cryptography
    and Tink: the file key unwrapped from the stanza as age does, the header MAC checked, and the
    body opened with Tink keyed by body_ikm (FORMAT.md sections 5 and 8)."""
    m = re.compile(rb"-> scrypt ([A-Za-z0-9+/]{22}) ([1-9][0-9]?)\n([A-Za-z0-9+/]{43})\n"
                   rb"--- ([A-Za-z0-9+/]{43})\n").match(data, PREAMBLE_LEN)
    if m is None:
        raise ValueError("not a passphrase file of one scrypt stanza")

    def b64(text):
        return base64.b64decode(text + b"=" * (-len(text) % 4))

    salt, log2n, wrapped, mac = b64(m[1]), int(m[2]), b64(m[3]), b64(m[4])
    # hashlib's maxmem stays below 2 GiB: work factors up to 20 (paes seals up to 22)
    wrap_key = hashlib.scrypt(passphrase, salt=b"age-encryption.org/v1/scrypt" + salt, n=2 ** log2n, r=8, p=1,
                              dklen=32, maxmem=2**31 - 1)
    file_key = chacha20_poly1305_open(wrap_key, wrapped)
    header = data[:m.start(4) - 1]   # through "---"
    if not hmac.compare_digest(hmac.new(hkdf_sha256(file_key, b"", b"header"), header + aad,
                                        hashlib.sha256).digest(), mac):
        raise ValueError("header MAC mismatch")
    preamble = data[:PREAMBLE_LEN]
    saead = tink_streaming_aead(hkdf_sha256(file_key, b"", b"paes v3 body"), int.from_bytes(preamble[12:16], "big"))
    return tink_decrypt(saead, data[m.end():], associated_data=preamble + aad)


# --------------------------------------------------------------------------- helpers

def make_preamble(key, segment_size, version=3):
    """A raw-key paes preamble, built by hand from the documented layout: the salt field random
    in version 3, zero in version 1."""
    return (b"PAES" + bytes([version, 1, len(key), 0, 0, 0, 0, 0])
            + segment_size.to_bytes(4, "big") + (os.urandom(16) if version == 3 else bytes(16)))


def raw_key_mac_line(key, preamble, aad=b""):
    """A raw-key version-3 file's MAC line: "--- ", the unpadded base64 of HMAC-SHA-256 under
    HKDF(key, "paes v3 raw key header") of the preamble, "---" and the aad, then LF."""
    mac_key = hkdf_sha256(key, b"", b"paes v3 raw key header")
    return b"--- " + b64_unpadded(hmac.new(mac_key, preamble + b"---" + aad, hashlib.sha256).digest()) + b"\n"


def make_paes_file(key, segment_size, plaintext, aad=b"", version=3):
    """A raw-key paes file built here: the preamble, in version 3 its MAC line, then Tink's stream."""
    preamble = make_preamble(key, segment_size, version)
    header = preamble + (raw_key_mac_line(key, preamble, aad) if version == 3 else b"")
    return header + tink_encrypt(tink_streaming_aead(key, segment_size), plaintext, preamble + aad)


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
    """The recipe decrypts a paes-format file built by hand with Tink, version 3 and version 1
    (needs no paes)."""
    needs_paes = False

    def test_recipe(self):
        for key_len in (16, 32):
            for seg in (64, 4096, DEFAULT_SEGMENT):
                for aad in (b"", AAD_TEXT.encode()):
                    for version in (3, 1):
                        key = os.urandom(key_len)
                        plaintext = RNG.randbytes(3 * seg + 5)
                        data = make_paes_file(key, seg, plaintext, aad, version)
                        self.check(decrypt_paes_file_with_tink(data, key, aad) == plaintext,
                                   f"AES-{key_len * 8} S={seg} version {version}: recipe plaintext differs")
                        with self.assertRaises(tink.TinkError):
                            decrypt_paes_file_with_tink(data, key, aad + b"x")
        self.finish()


class C2_PaesFormat(Base):
    def check_preamble(self, what, preamble, key, seg):
        self.check(preamble[0:4] == b"PAES", f"{what}: magic {preamble[0:4]!r}")
        self.check(preamble[4] == 3, f"{what}: version {preamble[4]}")
        self.check(preamble[5] == 1, f"{what}: key source {preamble[5]} (expected 1, raw key)")
        self.check(preamble[6] == len(key), f"{what}: key length {preamble[6]}")
        self.check(preamble[7:10] == bytes(3), f"{what}: scrypt fields {preamble[7:10].hex()} for a raw key")
        self.check(preamble[10:12] == b"\0\0", f"{what}: reserved bytes {preamble[10:12].hex()}")
        self.check(int.from_bytes(preamble[12:16], "big") == seg,
                   f"{what}: segment size {int.from_bytes(preamble[12:16], 'big')}, expected {seg}")
        self.check(preamble[16:32] != bytes(16), f"{what}: a zero salt field (random for a raw key)")

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
                        mac_line = raw_key_mac_line(key, data[:PREAMBLE_LEN], aad_bytes(aad_text))
                        self.check(data[PREAMBLE_LEN:RAW_KEY_HEADER] == mac_line,
                                   f"{what}: the MAC line is not \"--- \" and the MAC made here, then LF")
                        self.check(len(data) == RAW_KEY_HEADER + tink_ciphertext_len(
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
                    data = make_paes_file(key, seg, plaintext, aad_bytes(aad_text))
                    for fmt in (None, "paes"):
                        proc, got = self.paes_decrypt(key, data, fmt, aad_text)
                        self.check_paes_opens(f"{what} --format {fmt or '(default)'}", proc, got, plaintext)
        self.finish()

    def test_tink_built_version_1_file_needs_allow_uncommitted(self):
        """A version-1 raw-key file (no header MAC: it commits to neither key nor aad) is refused,
        naming --allow-uncommitted, and opens with it, with a warning."""
        for key_len in (16, 32):
            key = os.urandom(key_len)
            for aad_text in (None, AAD_TEXT):
                what = f"version 1, AES-{key_len * 8}, aad={'none' if aad_text is None else 'yes'}"
                plaintext = RNG.randbytes(5000)
                data = make_paes_file(key, 4096, plaintext, aad_bytes(aad_text), version=1)
                proc, got = self.paes_decrypt(key, data, None, aad_text)
                self.check(proc.returncode == 1 and got is None and b"--allow-uncommitted" in proc.stderr,
                           f"{what}, no --allow-uncommitted: expected exit 1 naming it, got {describe(proc)}")
                proc, got = self.output_of(self.sealed_args("decrypt", key, None, aad_text)
                                           + ["--allow-uncommitted", self.scratch_file("ct.bin", data)],
                                           self.path("pt.out"))
                self.check_paes_opens(f"{what}, --allow-uncommitted", proc, got, plaintext)
                self.check(b"paes: warning: " in proc.stderr,
                           f"{what}, --allow-uncommitted: no 'paes: warning: ' line, stderr {proc.stderr!r}")
        self.finish()

    def test_passphrase_file_decrypted_by_tink(self):
        """docs/FORMAT.md's passphrase recipe: the file key unwrapped from the scrypt stanza
        (hashlib's scrypt, cryptography's ChaCha20-Poly1305), the header MAC checked, then Tink
        keyed by body_ikm on the body after the MAC line."""
        if importlib.util.find_spec("cryptography") is None:
            self.skipTest("the Python package `cryptography` is not importable (scripts/setup.sh's .venv has it)")
        from cryptography.exceptions import InvalidTag
        passphrase = "tink reads this passphrase"
        for n in (0, 5000):
            for aad_text in (None, AAD_TEXT):
                what = f"n={n} aad={'none' if aad_text is None else 'yes'}"
                plaintext = RNG.randbytes(n)
                out = self.path("pass.paes")
                proc = subprocess.run([PAES, "encrypt", "--passphrase-env", "PAES_TINK_PASS", "--scrypt-log-n", "12",
                                       "--segment-size", "4096", *aad_args(aad_text),
                                       self.scratch_file("pt.bin", plaintext), "-o", out],
                                      capture_output=True, timeout=300,
                                      env=dict(os.environ, PAES_TINK_PASS=passphrase))
                if proc.returncode != 0:
                    self.check(False, f"{what}: paes encrypt {describe(proc)}")
                    continue
                with open(out, "rb") as f:
                    data = f.read()
                os.remove(out)
                preamble = data[:PREAMBLE_LEN]
                self.check(preamble[:7] == b"PAES\3\3\x20" and preamble[7:12] == bytes(5)
                           and preamble[16:] == bytes(16), f"{what}: preamble {preamble.hex()}")
                self.check(data[PREAMBLE_LEN:].startswith(b"-> scrypt ") and b" 12\n" in data[:100],
                           f"{what}: no scrypt stanza of work factor 12 after the preamble: {data[:100]!r}")
                try:
                    self.check(decrypt_passphrase_file_with_tink(data, passphrase.encode(), aad_bytes(aad_text))
                               == plaintext, f"{what}: Tink's plaintext differs")
                except (tink.TinkError, ValueError, InvalidTag) as exc:
                    self.check(False, f"{what}: the recipe rejects it: {exc!r}")
                with self.assertRaisesRegex(ValueError, "header MAC mismatch"):
                    decrypt_passphrase_file_with_tink(data, passphrase.encode(), aad_bytes(aad_text) + b"x")
                with self.assertRaises(InvalidTag):
                    decrypt_passphrase_file_with_tink(data, b"not the passphrase", aad_bytes(aad_text))
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
            "preamble salt byte changed (raw key)": data[:20] + bytes([data[20] ^ 1]) + data[21:],
            "bad magic": b"PAEZ" + data[4:],
            "cut after the preamble": data[:PREAMBLE_LEN],
            "cut inside the preamble": data[:20],
            "drop the last segment": data[:RAW_KEY_HEADER + 4096 * 5],
            "cut inside the MAC line": data[:RAW_KEY_HEADER - 1],
            "MAC changed": data[:PREAMBLE_LEN + 4] + (b"B" if data[36:37] != b"B" else b"C") + data[37:],
            "scrypt field set (raw key)": data[:7] + b"\1" + data[8:],
            "version byte 1 (a version-1 file, refused without --allow-uncommitted)": data[:4] + b"\1" + data[5:],
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
