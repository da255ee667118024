#!/usr/bin/env python3
"""The key-commitment attack of issue 29 in format version 3: the header MAC must stop it.

  python3 tests/tink/recipients_commit.py --paes build/release/paes

AES-GCM does not commit to its key. This builds, from docs/FORMAT.md section 8, a version-3
file with two X25519 stanzas: alice's wraps file key K1, bob's a different K2. Its body is one
segment (the last) that is a valid AES-GCM ciphertext and tag under BOTH segment keys (derived
from K1 and K2 with the same Tink salt and nonce prefix, section 3 / 8.4): every ciphertext
block but one is chosen (alice's first block reads "ALICE: pay 100", bob's second
"BOB: pay 999999"), and the remaining block is solved for in GF(2^128) so that both GCM tags
agree. The test asserts that this works at the GCM level (cryptography's AESGCM opens the
segment under both keys, to different plaintexts).

The header MAC is computed under K1, so paes must open the file for alice (exit 0, her
plaintext) and refuse it for bob (exit 1, naming the header MAC, no output file, nothing on
stdout), writing to a file with -o, to stdout, and with --range 0:4. A second file with the MAC
under K2 must open for bob only. Without the MAC both would open, to different plaintexts.

Exit status: 0 passed, 1 a check failed, 77 `cryptography` is not importable.
"""

import argparse
import hashlib
import hmac
import os
import shutil
import sys
import tempfile

try:
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
except ImportError as exc:
    print(f"recipients_commit.py: SKIP: the Python package `cryptography` is not importable ({exc}); "
          f"run with a Python that has it (scripts/setup.sh's .venv)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import Tools, bech32_decode, run_paes  # noqa: E402
from harness.sealed_format import b64_unpadded, hkdf_sha256  # noqa: E402

SEGMENT = 4096
ALICE_TEXT = b"ALICE: pay 100\n\n"     # block 0 of alice's plaintext
BOB_TEXT = b"BOB: pay 999999\n"        # block 1 of bob's plaintext
BLOCKS = 3                             # the segment's ciphertext: 3 blocks; block 2 is solved for


class Failure(Exception):
    pass


def require(condition, message):
    if not condition:
        raise Failure(message)


# ---------------------------------------------------------------- GF(2^128), GCM's bit order
# An element is a 16-byte block read as a big-endian integer: the block's first bit (the MSB of
# byte 0) is the coefficient of x^0, the last bit that of x^127 (NIST SP 800-38D, 6.3).

R = 0xE1 << 120          # x^128 = x^7 + x^2 + x + 1, reflected
ONE = 1 << 127           # the polynomial 1


def gf_mul(x, y):
    z, v = 0, y
    for i in range(127, -1, -1):     # x's coefficients from x^0 up
        if x >> i & 1:
            z ^= v
        v = v >> 1 ^ R if v & 1 else v >> 1   # v *= x
    return z


def gf_pow(x, e):
    result = ONE
    while e:
        if e & 1:
            result = gf_mul(result, x)
        x, e = gf_mul(x, x), e >> 1
    return result


def gf_inv(x):
    require(x != 0, "GF(2^128): 0 has no inverse")
    return gf_pow(x, (1 << 128) - 2)   # x^(2^128 - 2) = x^-1 in the field of 2^128 elements


def block(b):
    return int.from_bytes(b, "big")


def unblock(n):
    return n.to_bytes(16, "big")


# ---------------------------------------------------------------- building the file

def aes_block(key, data):
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def x25519_stanza(recipient_public, file_key):
    """FORMAT.md 8.2 (age's X25519 stanza)."""
    e = X25519PrivateKey.generate()
    E = e.public_key().public_bytes_raw()
    shared = e.exchange(X25519PublicKey.from_public_bytes(recipient_public))
    wrap_key = hkdf_sha256(shared, E + recipient_public, b"age-encryption.org/v1/X25519")
    wrapped = ChaCha20Poly1305(wrap_key).encrypt(bytes(12), file_key, None)
    return b"-> X25519 " + b64_unpadded(E) + b"\n" + b64_unpadded(wrapped) + b"\n"


def colliding_segment(key1, key2, nonce):
    """A ciphertext || tag that AES-GCM opens under key1 and key2 (no GCM AAD), with alice's
    plaintext block 0 and bob's block 1 chosen. GCM: tag = GHASH_H(C_1..C_n, L) + E, where
    H = AES_k(0), E = AES_k(nonce || 00000001), L = 0^64 || bitlen(C), and
    GHASH_H(X_1..X_m) = sum X_i H^(m+1-i). With m = n + 1, C_i has the power n + 2 - i."""
    j0 = nonce + b"\x00\x00\x00\x01"
    keystream = []
    for key in (key1, key2):
        keystream.append(AESGCM(key).encrypt(nonce, bytes(16 * BLOCKS), None)[:16 * BLOCKS])
    c = [block(ALICE_TEXT) ^ block(keystream[0][:16]),      # alice's block 0
         block(BOB_TEXT) ^ block(keystream[1][16:32]),       # bob's block 1
         None]                                               # solved for
    hs = [block(aes_block(k, bytes(16))) for k in (key1, key2)]
    es = [block(aes_block(k, j0)) for k in (key1, key2)]
    length = 16 * BLOCKS * 8                                 # L = 0^64 || 384
    power = [BLOCKS + 1 - i for i in range(BLOCKS)]          # C_i (0-based) multiplies H^(n+1-i)
    # tag1 = tag2  <=>  sum_i C_i (H1^p_i + H2^p_i) + L (H1 + H2) + E1 + E2 = 0
    coeff = [gf_pow(hs[0], p) ^ gf_pow(hs[1], p) for p in power]
    rest = gf_mul(length, hs[0] ^ hs[1]) ^ es[0] ^ es[1]
    for i in range(BLOCKS - 1):
        rest ^= gf_mul(c[i], coeff[i])
    c[-1] = gf_mul(rest, gf_inv(coeff[-1]))
    ciphertext = b"".join(map(unblock, c))
    # Each key's tag, from the definition; they agree by construction.
    tags = []
    for h, e in zip(hs, es):
        y = 0
        for x in c + [length]:
            y = gf_mul(y ^ x, h)
        tags.append(unblock(y ^ e))
    require(tags[0] == tags[1], "the solved block does not make the two GHASH tags agree")
    segment = ciphertext + tags[0]
    plains = [AESGCM(k).decrypt(nonce, segment, None) for k in (key1, key2)]   # raises if not
    require(plains[0] != plains[1], "the two plaintexts are equal")
    require(plains[0].startswith(ALICE_TEXT) and plains[1][16:32] == BOB_TEXT,
          f"unexpected plaintexts {plains}")
    return segment, plains


def build_file(alice_public, bob_public, mac_under):
    """A version-3 file whose stanzas wrap K1 for alice and K2 for bob, its header MAC under
    K1 (mac_under 0) or K2 (1), and one body segment that opens under both keys."""
    k1, k2 = os.urandom(16), os.urandom(16)
    preamble = b"PAES\x03\x03\x20\x00\x00\x00\x00\x00" + SEGMENT.to_bytes(4, "big") + bytes(16)
    header = preamble + x25519_stanza(alice_public, k1) + x25519_stanza(bob_public, k2) + b"---"
    mac = hmac.new(hkdf_sha256((k1, k2)[mac_under], b"", b"header"), header, hashlib.sha256).digest()
    salt, nonce_prefix = os.urandom(32), os.urandom(7)
    tink_header = bytes([1 + 32 + 7]) + salt + nonce_prefix
    segment_keys = [hkdf_sha256(hkdf_sha256(k, b"", b"paes v3 body"), salt, preamble) for k in (k1, k2)]
    nonce = nonce_prefix + (0).to_bytes(4, "big") + b"\x01"             # segment 0, the last
    segment, plains = colliding_segment(segment_keys[0], segment_keys[1], nonce)
    data = header + b" " + b64_unpadded(mac) + b"\n" + tink_header + segment
    return data, plains


# ---------------------------------------------------------------- running paes

def recipient_public(identity_path):
    """The X25519 public key in `paes keygen -y`'s age1... recipient (Bech32 data, checksum
    not checked here: paes wrote it, and alice opening the file shows the key is right)."""
    proc = run_paes(["keygen", "-y", identity_path])
    require(proc.returncode == 0, f"paes keygen -y: exit {proc.returncode}, {proc.stderr!r}")
    recipient = proc.stdout.decode().strip()
    hrp, public = bech32_decode(recipient)
    require(hrp == "age" and len(public) == 32, f"unexpected recipient {recipient}")
    return public


def expect_open(identity, name, path, plain, work):
    out = os.path.join(work, "out.bin")
    for what, args, want in (("-o FILE", ["-o", out], plain), ("stdout", [], plain),
                             ("--range 0:4 -o FILE", ["--range", "0:4", "-o", out], plain[:4]),
                             ("--range 0:4 to stdout", ["--range", "0:4"], plain[:4])):
        proc = run_paes(["decrypt", "-i", identity, *args, path])
        require(proc.returncode == 0, f"{name} ({what}): exit {proc.returncode}, "
                                    f"{proc.stderr.decode(errors='replace').strip()!r}; expected success")
        got = proc.stdout if "-o" not in args else open(out, "rb").read()
        require(got == want, f"{name} ({what}): read {got[:40]!r}, expected {want[:40]!r}")
        if os.path.exists(out):
            os.remove(out)


def expect_refused(identity, name, path, work):
    outdir = os.path.join(work, "refused")
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "out.bin")
    for what, args in (("-o FILE", ["-o", out]), ("stdout", []),
                       ("--range 0:4 -o FILE", ["--range", "0:4", "-o", out]),
                       ("--range 0:4 to stdout", ["--range", "0:4"])):
        proc = run_paes(["decrypt", "-i", identity, *args, path])
        err = proc.stderr.decode(errors="replace").strip()
        require(proc.returncode == 1, f"{name} ({what}): exit {proc.returncode} (stderr {err!r}, "
                                    f"{len(proc.stdout)} bytes on stdout); expected exit 1: the header "
                                    f"MAC must refuse a file whose stanzas wrap different keys")
        require("header mac" in err.lower(), f"{name} ({what}): stderr {err!r} does not name the header MAC")
        require(proc.stdout == b"", f"{name} ({what}): {len(proc.stdout)} bytes on stdout: {proc.stdout[:40]!r}")
        require(os.listdir(outdir) == [], f"{name} ({what}): left {os.listdir(outdir)} in the output directory")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paes", default="paes", help="the paes binary")
    Tools.paes = parser.parse_args().paes
    work = tempfile.mkdtemp(prefix="paes-recipients-commit-")
    try:
        ids = {}
        for name in ("alice", "bob"):
            path = os.path.join(work, f"{name}.txt")
            proc = run_paes(["keygen", "--x25519", "-o", path])
            require(proc.returncode == 0, f"paes keygen --x25519: exit {proc.returncode}, {proc.stderr!r}")
            ids[name] = (path, recipient_public(path))
        for mac_under, opener, refused in ((0, "alice", "bob"), (1, "bob", "alice")):
            data, plains = build_file(ids["alice"][1], ids["bob"][1], mac_under)
            path = os.path.join(work, f"commit-{mac_under}.paes")
            with open(path, "wb") as f:
                f.write(data)
            label = f"file with the MAC under {opener}'s key"
            expect_open(ids[opener][0], f"{label}, {opener}", path, plains[mac_under], work)
            expect_refused(ids[refused][0], f"{label}, {refused}", path, work)
    except Failure as exc:
        print(f"recipients_commit.py: FAIL: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("recipients_commit.py: OK: one body opens under two file keys at the GCM level; paes "
          "opens it only for the recipient whose key the header MAC was computed under")
    return 0


if __name__ == "__main__":
    sys.exit(main())
