#!/usr/bin/env python3
"""Key-commitment attacks (issues 29 and 39): files that open to two plaintexts, and what paes does.

  python3 tests/tink/recipients_commit.py --paes build/release/paes

AES-GCM does not commit to its key. Each file here has a body of one segment (the last) that
is a valid AES-GCM ciphertext and tag under TWO segment keys (section 3 of docs/FORMAT.md: the
segment key is HKDF(input key material, Tink salt, preamble || aad)): every ciphertext block but
one is chosen (the first face's block 0 reads, say, "the deal is ON", the second face's block 1
"the deal is OFF"), and the remaining block is solved for in GF(2^128) so that both GCM tags
agree. Every file is checked to open under both keys at the GCM level (cryptography's AESGCM)
before paes sees it. The two faces:

  v3 recipients   two X25519 stanzas wrapping file keys K1 (alice) and K2 (bob), the header MAC
                  under K1 or K2 (section 8): paes opens it only for the recipient whose key the
                  MAC was computed under (exit 1, naming the header MAC, for the other), also with
                  --allow-uncommitted.
  v1 passphrase   the legacy layout (sections 1 to 3, key source 02, scrypt log2 N = 10 in the
                  preamble): passphrase A and passphrase B.
  v1 raw key      key A and key B (AES-128).
  v3 old aad      one X25519 stanza, its header MAC in the rule before issue 39 (not covering the
                  aad): one identity, --aad A and --aad B.
  v2              the unreleased version 2's layout (a binary recipients block, AES-GCM-wrapped
                  32-byte file keys, the block in the body's associated data, no header MAC).

By default paes opens none of the last four to two plaintexts: the v1 files and the old-aad v3
one (with an --aad) are refused (exit 1 or 2) with a message naming --allow-uncommitted, and the
v2 one is refused as version 2; nothing on stdout, nothing under an output's name. With
--allow-uncommitted the v1 and old-aad files open, each face to its plaintext, with a
"paes: warning: ..." line on stderr at every opening; the v2 one is still refused. Each check
runs to a file (-o), to stdout, and with --range 0:4 both ways.

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
from harness import Tools, bech32_decode, run_paes, write_file  # noqa: E402
from harness.sealed_format import b64_unpadded, hkdf_sha256  # noqa: E402

SEGMENT = 4096
ALICE_TEXT = b"ALICE: pay 100\n\n"     # block 0 of alice's plaintext
BOB_TEXT = b"BOB: pay 999999\n"        # block 1 of bob's plaintext
ON_TEXT = b"the deal is ON\n\n"        # block 0 of the first face of the other files
OFF_TEXT = b"the deal is OFF\n"        # block 1 of the second face
BLOCKS = 3                             # the segment's ciphertext: 3 blocks; block 2 is solved for
SCRYPT_LOG_N = 10                      # the v1 passphrase file's work factor: fast
ALLOW = "--allow-uncommitted"


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


# ---------------------------------------------------------------- one body, two keys

def aes_block(key, data):
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def colliding_segment(key1, key2, nonce, text1, text2):
    """A ciphertext || tag that AES-GCM opens under key1 and key2 (no GCM AAD), whose plaintext
    under key1 has block 0 `text1` and under key2 block 1 `text2` (16 bytes each). GCM:
    tag = GHASH_H(C_1..C_n, L) + E, where H = AES_k(0), E = AES_k(nonce || 00000001),
    L = 0^64 || bitlen(C), and GHASH_H(X_1..X_m) = sum X_i H^(m+1-i). With m = n + 1, C_i has
    the power n + 2 - i."""
    j0 = nonce + b"\x00\x00\x00\x01"
    keystream = []
    for key in (key1, key2):
        keystream.append(AESGCM(key).encrypt(nonce, bytes(16 * BLOCKS), None)[:16 * BLOCKS])
    c = [block(text1) ^ block(keystream[0][:16]),            # the first face's block 0
         block(text2) ^ block(keystream[1][16:32]),          # the second face's block 1
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
    require(plains[0].startswith(text1) and plains[1][16:32] == text2, f"unexpected plaintexts {plains}")
    return segment, plains


def two_faced_body(faces, key_len, texts):
    """A Tink body (section 3: header, one last segment) that opens under both faces, each an
    (input key material, associated data) pair, to plaintexts holding `texts`; (body, plains)."""
    salt, nonce_prefix = os.urandom(key_len), os.urandom(7)
    tink_header = bytes([1 + key_len + 7]) + salt + nonce_prefix
    segment_keys = [hkdf_sha256(ikm, salt, ad, key_len) for ikm, ad in faces]
    nonce = nonce_prefix + (0).to_bytes(4, "big") + b"\x01"             # segment 0, the last
    segment, plains = colliding_segment(*segment_keys, nonce, *texts)
    return tink_header + segment, plains


# ---------------------------------------------------------------- the files

def preamble(version, key_source, key_len, scrypt=(0, 0, 0), salt=bytes(16)):
    """Section 1's 32 bytes."""
    return (b"PAES" + bytes([version, key_source, key_len, *scrypt, 0, 0])
            + SEGMENT.to_bytes(4, "big") + salt)


def x25519_stanza(recipient_public, file_key):
    """FORMAT.md 8.2 (age's X25519 stanza)."""
    e = X25519PrivateKey.generate()
    E = e.public_key().public_bytes_raw()
    shared = e.exchange(X25519PublicKey.from_public_bytes(recipient_public))
    wrap_key = hkdf_sha256(shared, E + recipient_public, b"age-encryption.org/v1/X25519")
    wrapped = ChaCha20Poly1305(wrap_key).encrypt(bytes(12), file_key, None)
    return b"-> X25519 " + b64_unpadded(E) + b"\n" + b64_unpadded(wrapped) + b"\n"


def mac_line(header, file_key):
    """The MAC line that follows `header` (section 8.3, age's MAC): " " base64(HMAC-SHA-256(
    HKDF(file key, "", "header"), header)) LF. Since issue 39 paes' header MAC covers the aad
    after the "---" (a caller appends it to `header`); the files here leave it out, as before."""
    mac = hmac.new(hkdf_sha256(file_key, b"", b"header"), header, hashlib.sha256).digest()
    return b" " + b64_unpadded(mac) + b"\n"


def body_ikm(file_key):
    return hkdf_sha256(file_key, b"", b"paes v3 body")


def v3_two_recipients(alice_public, bob_public, mac_under):
    """Version 3 whose stanzas wrap K1 for alice and K2 for bob, its header MAC under K1
    (mac_under 0) or K2 (1); (file, plaintexts)."""
    k1, k2 = os.urandom(16), os.urandom(16)
    pre = preamble(3, 3, 32)
    header = pre + x25519_stanza(alice_public, k1) + x25519_stanza(bob_public, k2) + b"---"
    body, plains = two_faced_body([(body_ikm(k1), pre), (body_ikm(k2), pre)], 32, (ALICE_TEXT, BOB_TEXT))
    return header + mac_line(header, (k1, k2)[mac_under]) + body, plains


def v3_old_aad(public, aads):
    """Version 3 with one X25519 stanza and the header MAC of before issue 39 (no aad), whose
    body opens under --aad aads[0] and aads[1]; (file, plaintexts)."""
    k = os.urandom(16)
    pre = preamble(3, 3, 32)
    header = pre + x25519_stanza(public, k) + b"---"
    body, plains = two_faced_body([(body_ikm(k), pre + aad.encode()) for aad in aads], 32, (ON_TEXT, OFF_TEXT))
    return header + mac_line(header, k) + body, plains


def v1_raw_key(keys):
    """Version 1, raw keys (AES-128): sections 1 to 3; (file, plaintexts)."""
    pre = preamble(1, 1, len(keys[0]))
    body, plains = two_faced_body([(k, pre) for k in keys], len(keys[0]), (ON_TEXT, OFF_TEXT))
    return pre + body, plains


def v1_passphrase(passphrases):
    """Version 1, key source 02 (scrypt in the preamble, section 2), AES-256; (file, plaintexts)."""
    salt = os.urandom(16)
    pre = preamble(1, 2, 32, (SCRYPT_LOG_N, 8, 1), salt)
    keys = [hashlib.scrypt(p.encode(), salt=salt, n=1 << SCRYPT_LOG_N, r=8, p=1, dklen=32) for p in passphrases]
    body, plains = two_faced_body([(k, pre) for k in keys], 32, (ON_TEXT, OFF_TEXT))
    return pre + body, plains


def v2_two_recipients(alice_public, bob_public):
    """Version 2 as it was written (never released): preamble (version 02, key source 03), a
    recipients block (count, then per recipient E || AES-256-GCM(wrap key, zero nonce, 32-byte
    file key) || tag, wrap key = HKDF(X25519(e, R), E || R, "paes x25519 file key v2")), then
    the body, its associated data the preamble and the block; (file, plaintexts)."""
    pre = preamble(2, 3, 32)
    file_keys, stanzas = [os.urandom(32), os.urandom(32)], b""
    for public, file_key in zip((alice_public, bob_public), file_keys):
        e = X25519PrivateKey.generate()
        E = e.public_key().public_bytes_raw()
        wrap_key = hkdf_sha256(e.exchange(X25519PublicKey.from_public_bytes(public)), E + public,
                               b"paes x25519 file key v2")
        stanzas += E + AESGCM(wrap_key).encrypt(bytes(12), file_key, None)
    recipients = bytes([2]) + stanzas
    body, plains = two_faced_body([(k, pre + recipients) for k in file_keys], 32, (ALICE_TEXT, BOB_TEXT))
    return pre + recipients + body, plains


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


def decrypt_runs(out):
    """The four ways each check opens a file: (what, arguments, slice of the plaintext)."""
    return (("-o FILE", ["-o", out], slice(None)), ("stdout", [], slice(None)),
            ("--range 0:4 -o FILE", ["--range", "0:4", "-o", out], slice(0, 4)),
            ("--range 0:4 to stdout", ["--range", "0:4"], slice(0, 4)))


def expect_open(key_args, name, path, plain, work, warned=False):
    """paes decrypt `key_args` opens `path` to `plain`, every way; with `warned`, each run also
    prints a "paes: warning: " line on stderr."""
    out = os.path.join(work, "out.bin")
    for what, args, part in decrypt_runs(out):
        proc = run_paes(["decrypt", *key_args, *args, path])
        err = proc.stderr.decode(errors="replace")
        require(proc.returncode == 0, f"{name} ({what}): exit {proc.returncode}, {err.strip()!r}; expected success")
        got = proc.stdout if "-o" not in args else open(out, "rb").read()
        require(got == plain[part], f"{name} ({what}): read {got[:40]!r}, expected {plain[part][:40]!r}")
        if warned:
            require(any(line.startswith("paes: warning: ") for line in err.splitlines()),
                    f"{name} ({what}): opened without a 'paes: warning: ' line on stderr ({err.strip()!r})")
        if os.path.exists(out):
            os.remove(out)


def expect_refused(key_args, name, path, work, words, codes=(1,)):
    """paes decrypt `key_args` refuses `path` every way: an exit status in `codes`, `words` (when
    given) on stderr, nothing on stdout, nothing in the output's directory."""
    outdir = os.path.join(work, "refused")
    os.makedirs(outdir, exist_ok=True)
    for what, args, _ in decrypt_runs(os.path.join(outdir, "out.bin")):
        proc = run_paes(["decrypt", *key_args, *args, path])
        err = proc.stderr.decode(errors="replace").strip()
        expected = " or ".join(map(str, codes))
        require(proc.returncode in codes, f"{name} ({what}): exit {proc.returncode} (stderr {err!r}, "
                                          f"{len(proc.stdout)} bytes on stdout); expected exit {expected}")
        require(words is None or words.lower() in err.lower(), f"{name} ({what}): stderr {err!r} does not name {words}")
        require(proc.stdout == b"", f"{name} ({what}): {len(proc.stdout)} bytes on stdout: {proc.stdout[:40]!r}")
        require(os.listdir(outdir) == [], f"{name} ({what}): left {os.listdir(outdir)} in the output directory")


def check_recipients(ids, work):
    """Issue 29: the header MAC opens a v3 two-recipient file for one recipient only, also with
    --allow-uncommitted (which must not weaken the MAC)."""
    for mac_under, opener, refused in ((0, "alice", "bob"), (1, "bob", "alice")):
        data, plains = v3_two_recipients(ids["alice"][1], ids["bob"][1], mac_under)
        path = write_file(os.path.join(work, f"commit-{mac_under}.paes"), data)
        label = f"v3 file with the MAC under {opener}'s key"
        for allow in ([], [ALLOW]):
            expect_open(["-i", ids[opener][0], *allow], f"{label}, {opener} {allow}", path, plains[mac_under], work)
            expect_refused(["-i", ids[refused][0], *allow], f"{label}, {refused} {allow}", path, work, "header mac")


def check_uncommitted(name, path, faces, plains, work):
    """A file that opens under two keys or aads (`faces`: key arguments): refused by default,
    naming --allow-uncommitted; with it, each face opens to its plaintext, warned every time."""
    for args in faces:
        expect_refused(args, f"{name}, {' '.join(args)}", path, work, ALLOW, codes=(1, 2))
    for args, plain in zip(faces, plains):
        expect_open([*args, ALLOW], f"{name}, {' '.join(args)} {ALLOW}", path, plain, work, warned=True)


def check_legacy(ids, work):
    """Issue 39: version-1 files and a version-3 header MAC that leaves the aad out."""
    passphrases = ("correct horse", "battery staple")
    pass_files = [write_file(os.path.join(work, f"pass{i}.txt"), f"{p}\n".encode(), 0o600)
                  for i, p in enumerate(passphrases)]
    data, plains = v1_passphrase(passphrases)
    check_uncommitted("v1 passphrase file", write_file(os.path.join(work, "v1-pass.paes"), data),
                      [["--passphrase-file", f] for f in pass_files], plains, work)

    keys = [os.urandom(16), os.urandom(16)]
    key_files = [write_file(os.path.join(work, f"key{i}.hex"), k.hex().encode() + b"\n", 0o600)
                 for i, k in enumerate(keys)]
    data, plains = v1_raw_key(keys)
    check_uncommitted("v1 raw-key file", write_file(os.path.join(work, "v1-key.paes"), data),
                      [["--key-file", f] for f in key_files], plains, work)

    aads = ("deal A", "deal B")
    data, plains = v3_old_aad(ids["alice"][1], aads)
    path = write_file(os.path.join(work, "v3-old-aad.paes"), data)
    identity = ids["alice"][0]
    check_uncommitted("v3 file with the MAC of before issue 39", path,
                      [["-i", identity, "--aad", aad] for aad in aads], plains, work)
    # Without an aad its MAC verifies, and its body (sealed under neither aad) does not.
    expect_refused(["-i", identity], "v3 file with the MAC of before issue 39, no --aad", path, work, None)

    data, _ = v2_two_recipients(ids["alice"][1], ids["bob"][1])
    path = write_file(os.path.join(work, "v2.paes"), data)
    for who in ("alice", "bob"):
        for allow in ([], [ALLOW]):
            expect_refused(["-i", ids[who][0], *allow], f"v2 file, {who} {allow}", path, work, "version 2")


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
        check_recipients(ids, work)
        check_legacy(ids, work)
    except Failure as exc:
        print(f"recipients_commit.py: FAIL: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("recipients_commit.py: OK: each body opens under two keys at the GCM level; paes opens a "
          "recipients file only for the key its header MAC was computed under, refuses version-1 "
          "files, an old header MAC with --aad and version 2 by default, and warns at every "
          "--allow-uncommitted opening")
    return 0


if __name__ == "__main__":
    sys.exit(main())
