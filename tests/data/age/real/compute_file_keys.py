#!/usr/bin/env python3
"""Independent reference check of age v1 files (X25519 recipients only).

Usage:
    compute_file_keys.py -i identity.txt [-i identity2.txt ...] FILE.age [...]

For every identity file it prints the identity, the recipient derived from it
(X25519(identity, basepoint), Bech32 HRP "age") and the raw key bytes in hex.
For every age file (binary or ASCII-armored) it parses the header strictly per
C2SP age.md, tries every X25519 stanza against every identity, and prints the
unwrapped 16-byte file key, which identity unwrapped it, the header MAC check,
and the decrypted payload (STREAM, to prove the file key is right).

Primitives (C2SP age.md, "The X25519 recipient type" / "Header MAC"):
    shared   = X25519(identity, ephemeral share)        (must not be all zero)
    wrap key = HKDF-SHA-256(ikm=shared, salt=share||recipient,
                            info="age-encryption.org/v1/X25519")
    file key = ChaCha20-Poly1305-Open(wrap key, nonce=12*0x00, body)
    mac key  = HKDF-SHA-256(ikm=file key, salt=empty, info="header")
    MAC      = HMAC-SHA-256(mac key, header bytes up to and including "---")

Needs the `cryptography` package (python3 -m venv /tmp/agevenv &&
/tmp/agevenv/bin/pip install cryptography). Output is deterministic for given
inputs, so re-running it over the committed files reproduces expected.txt.
"""
import argparse
import base64
import binascii
import hashlib
import hmac
import os
import re
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey, X25519PublicKey)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# ---------------------------------------------------------------- Bech32 (BIP-173, no length limit, as age.md says)
CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = ((chk & 0x1ffffff) << 5) ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def _hrp_expand(hrp):
    return [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]


def _convertbits(data, frombits, tobits, pad):
    acc = bits = 0
    ret = []
    maxv = (1 << tobits) - 1
    for v in data:
        acc = (acc << frombits) | v
        bits += frombits
        while bits >= tobits:
            bits -= tobits
            ret.append((acc >> bits) & maxv)
    if pad:
        if bits:
            ret.append((acc << (tobits - bits)) & maxv)
    elif bits >= frombits or ((acc << (tobits - bits)) & maxv):
        raise ValueError("invalid padding")
    return ret


def bech32_encode(hrp, data):
    """hrp case decides output case (like age's Go implementation)."""
    upper = hrp.upper() == hrp and hrp.lower() != hrp
    h = hrp.lower()
    values = _convertbits(data, 8, 5, True)
    pm = _polymod(_hrp_expand(h) + values + [0] * 6) ^ 1  # Bech32 constant 1, not bech32m
    checksum = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    s = h + "1" + "".join(CHARSET[d] for d in values + checksum)
    return s.upper() if upper else s


def bech32_decode(s):
    if s.lower() != s and s.upper() != s:
        raise ValueError("mixed case")
    if any(ord(c) < 33 or ord(c) > 126 for c in s):
        raise ValueError("invalid character")
    pos = s.rfind("1")
    if pos < 1 or pos + 7 > len(s):
        raise ValueError("bad separator position")
    hrp, dpart = s[:pos], s[pos + 1:].lower()
    try:
        data = [CHARSET.index(c) for c in dpart]
    except ValueError:
        raise ValueError("invalid data character")
    if _polymod(_hrp_expand(hrp.lower()) + data) != 1:
        raise ValueError("bad checksum")
    return hrp, bytes(_convertbits(data[:-6], 5, 8, False))


# ---------------------------------------------------------------- helpers
def b64_raw_decode(s):
    """Strict unpadded canonical base64 (RFC 4648 s4, no '=', canonical per s3.5)."""
    if isinstance(s, bytes):
        s = s.decode("ascii")
    if "=" in s or not re.fullmatch(r"[A-Za-z0-9+/]*", s) or len(s) % 4 == 1:
        raise ValueError("bad base64")
    raw = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    if base64.b64encode(raw).decode().rstrip("=") != s:
        raise ValueError("non-canonical base64")
    return raw


def b64_raw_encode(b):
    return base64.b64encode(b).decode().rstrip("=")


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info).derive(ikm)


def x25519_pub(secret):
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def read_identities(path):
    ids = []
    with open(path, "r", encoding="ascii") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            hrp, secret = bech32_decode(line)
            if hrp != "AGE-SECRET-KEY-" or len(secret) != 32:
                raise ValueError("%s: not an X25519 identity: %r" % (path, line))
            ids.append((path, line, secret))
    return ids


def dearmor(data):
    text = data.decode("ascii").strip(" \t\r\n")
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[0] != "-----BEGIN AGE ENCRYPTED FILE-----" or \
            lines[-1] != "-----END AGE ENCRYPTED FILE-----":
        raise ValueError("bad armor")
    body = "".join(lines[1:-1])
    return base64.b64decode(body, validate=True)


def parse_header(data):
    """Returns (stanzas, header_bytes_up_to_and_including_'---', mac, header_len)."""
    pos = 0

    def line():
        nonlocal pos
        nl = data.find(b"\n", pos)
        if nl < 0:
            raise ValueError("unexpected EOF in header")
        l = data[pos:nl]
        pos = nl + 1
        return l

    if line() != b"age-encryption.org/v1":
        raise ValueError("bad version line")
    stanzas = []
    while True:
        start = pos
        l = line()
        if l.startswith(b"--- "):
            mac_b64 = l[4:]
            mac = b64_raw_decode(mac_b64)
            if len(mac) != 32:
                raise ValueError("bad MAC length")
            mac_input = data[:start + 3]  # up to and including "---"
            if not stanzas:
                raise ValueError("no stanzas")
            return stanzas, mac_input, mac, pos
        if not l.startswith(b"-> "):
            raise ValueError("bad stanza line %r" % l)
        args = l[3:].split(b" ")
        if any(not a or any(c < 33 or c > 126 for c in a) for a in args):
            raise ValueError("bad stanza argument")
        body = b""
        while True:
            bl = line()
            if len(bl) > 64:
                raise ValueError("body line too long")
            body += bl
            if len(bl) < 64:
                break
        stanzas.append(([a.decode("ascii") for a in args], b64_raw_decode(body)))


def unwrap_x25519(args, body, identity_secret):
    if args[0] != "X25519":
        return None
    if len(args) != 2:
        raise ValueError("X25519 stanza must have exactly 2 arguments")
    share = b64_raw_decode(args[1])
    if len(share) != 32:
        raise ValueError("X25519 share must be 32 bytes")
    if len(body) != 32:
        raise ValueError("X25519 body must be 32 bytes")
    try:
        shared = X25519PrivateKey.from_private_bytes(identity_secret).exchange(
            X25519PublicKey.from_public_bytes(share))
    except ValueError:
        # pyca/cryptography itself raises on an all-zero result (low-order share)
        raise ValueError("all-zero shared secret")
    if shared == bytes(32):
        raise ValueError("all-zero shared secret")
    recipient = x25519_pub(identity_secret)
    wrap_key = hkdf(shared, share + recipient, b"age-encryption.org/v1/X25519")
    try:
        return ChaCha20Poly1305(wrap_key).decrypt(bytes(12), body, None)
    except Exception:
        return None


def stream_decrypt(file_key, payload):
    if len(payload) < 16:
        raise ValueError("short payload nonce")
    nonce, ct = payload[:16], payload[16:]
    key = hkdf(file_key, nonce, b"payload")
    aead = ChaCha20Poly1305(key)
    out = b""
    chunk = 64 * 1024 + 16
    i = 0
    while True:
        c = ct[i * chunk:(i + 1) * chunk]
        last = (i + 1) * chunk >= len(ct)
        n = i.to_bytes(11, "big") + (b"\x01" if last else b"\x00")
        out += aead.decrypt(n, c, None)
        if last:
            return nonce, out
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-i", "--identity", action="append", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()

    ids = []
    print("# Generated by compute_file_keys.py (independent Python reference using")
    print("# the 'cryptography' package). Hex is lowercase. Regenerate with make.sh.")
    print()
    for p in a.identity:
        for path, s, secret in read_identities(p):
            pub = x25519_pub(secret)
            rec = bech32_encode("age", pub)
            ids.append((os.path.basename(path), s, secret, rec))
            print("[%s]" % os.path.basename(path))
            print("identity = %s" % s)
            print("recipient = %s" % rec)
            print("identity_hex = %s" % secret.hex())
            print("recipient_hex = %s" % pub.hex())
            print()

    ok_all = True
    for f in a.files:
        raw = open(f, "rb").read()
        armored = raw.lstrip().startswith(b"-----BEGIN")
        data = dearmor(raw) if armored else raw
        stanzas, mac_input, mac, hlen = parse_header(data)
        print("[%s]" % os.path.basename(f))
        print("armored = %s" % ("yes" if armored else "no"))
        print("file_size = %d" % len(raw))
        print("header_len = %d   # bytes of the (de-armored) binary file up to and including the MAC line's LF" % hlen)
        print("stanza_count = %d" % len(stanzas))
        file_key = None
        for n, (args, body) in enumerate(stanzas):
            who = "-"
            for name, s, secret, rec in ids:
                k = unwrap_x25519(args, body, secret)
                if k is not None:
                    who = "%s %s" % (name, rec)
                    if file_key is not None and file_key != k:
                        raise SystemExit("stanzas disagree on file key")
                    file_key = k
            print("stanza.%d = %s  body_len=%d  unwrapped_by=%s" % (n, " ".join(args), len(body), who))
        if file_key is None:
            print("file_key = NONE (no match)")
            ok_all = False
            print()
            continue
        if len(file_key) != 16:
            raise SystemExit("file key not 16 bytes")
        mac_key = hkdf(file_key, b"", b"header")
        want = hmac.new(mac_key, mac_input, hashlib.sha256).digest()
        print("file_key = %s" % file_key.hex())
        print("hmac_key = %s" % mac_key.hex())
        print("mac = %s" % b64_raw_encode(mac))
        mac_ok = hmac.compare_digest(want, mac)
        print("mac_ok = %s" % ("yes" if mac_ok else "NO"))
        nonce, pt = stream_decrypt(file_key, data[hlen:])
        print("payload_nonce = %s" % nonce.hex())
        print("plaintext_hex = %s   # %r" % (pt.hex(), pt))
        print()
        ok_all = ok_all and mac_ok
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
