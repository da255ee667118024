#!/usr/bin/env python3
"""An independent reader of paes format version 3, written from docs/FORMAT.md alone.

decrypt_paes_v3() follows FORMAT.md section 8 (preamble, age stanzas, header MAC, body) and
section 5 (the body is a Tink AES-GCM-HKDF stream); it is the code of FORMAT.md section 8.7,
and tink_streaming_aead() and decrypt_paes_file_with_tink() are section 5's recipe, both
verbatim (checked below).

  python3 tests/tink/v3_reader.py --paes build/release/paes

Round trips: seals with paes to identities from `paes keygen --x25519` and from `age-keygen` (-r
and -R, one and several recipients, empty and 1-byte inputs, sizes around 4K segments'
boundaries), with a passphrase (a scrypt stanza) and with 16- and 32-byte raw keys, each with
and without --aad, and opens every file with decrypt_paes_v3 (a raw-key file with section 5's
Tink recipe too). Checks that the recipient paes prints is the identity's X25519 public key,
that a wrong --aad fails this reader's header MAC check, that a flipped byte in a stanza or in
the MAC fails it (and paes' too), and that an identity that is not a recipient matches no stanza.

Crafted headers: files paes sealed, taken apart and put together again with a header MAC made
under their real key (so only the change is wrong), which this reader and `paes decrypt` must
both refuse (paes: exit 1 or 2, no output): non-canonical or padded base64, stanza body lines of
the wrong length, control characters, spaces and CR in the header, more than 4,096 stanzas, a
header past 1 MiB, malformed or low-order X25519 stanzas met before the stanza that opens, a
scrypt stanza that is not alone or has wrong arguments, stanzas in a raw-key file, preamble
fields out of range. Controls built the same way (4,096 stanzas, a 1-MiB header, unknown stanza
types, the smallest and largest segment sizes, a raw key's random salt field, scrypt's work
factor 1, a malformed X25519 stanza after the one that opens: FORMAT.md 8.2, 8.5) must open in
both.

Exit status: 0 all passed, 1 a check failed, 77 `tink` or `cryptography` is not importable.
"""

import importlib.util
import sys

for _module in ("tink", "cryptography"):
    if importlib.util.find_spec(_module) is None:
        print(f"v3_reader.py: SKIP: the Python package `{_module}` is not importable; run with a "
              f"Python that has tink and cryptography (scripts/setup.sh's .venv)", file=sys.stderr)
        sys.exit(77)

import argparse  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

# ---------------------------------------------------------------- FORMAT.md section 5, verbatim
import io
import tink
from tink import secret_key_access, streaming_aead
from tink.proto import aes_gcm_hkdf_streaming_pb2, common_pb2, tink_pb2

def tink_streaming_aead(key: bytes, segment_size: int) -> streaming_aead.StreamingAead:
    """Tink's AES-GCM-HKDF streaming AEAD, raw key (HKDF-SHA256, derived key size = key size)."""
    streaming_aead.register()
    proto_key = aes_gcm_hkdf_streaming_pb2.AesGcmHkdfStreamingKey(
        version=0, key_value=key,
        params=aes_gcm_hkdf_streaming_pb2.AesGcmHkdfStreamingParams(
            ciphertext_segment_size=segment_size, derived_key_size=len(key),
            hkdf_hash_type=common_pb2.SHA256))
    keyset = tink_pb2.Keyset(primary_key_id=1, key=[tink_pb2.Keyset.Key(
        key_data=tink_pb2.KeyData(
            type_url="type.googleapis.com/google.crypto.tink.AesGcmHkdfStreamingKey",
            value=proto_key.SerializeToString(), key_material_type=tink_pb2.KeyData.SYMMETRIC),
        status=tink_pb2.ENABLED, key_id=1, output_prefix_type=tink_pb2.RAW)])
    handle = tink.proto_keyset_format.parse(keyset.SerializeToString(), secret_key_access.TOKEN)
    return handle.primitive(streaming_aead.StreamingAead)

def decrypt_paes_file_with_tink(data: bytes, key: bytes, aad: bytes = b"") -> bytes:
    """A paes file sealed with a raw key. In version 3 the header's MAC line (48 bytes) follows
    the preamble: skipped here, not checked (Tink knows nothing of it). Version 1 has none."""
    preamble = data[:32]
    body = data[32 + 48:] if preamble[4] == 3 else data[32:]
    saead = tink_streaming_aead(key, int.from_bytes(preamble[12:16], "big"))
    with saead.new_decrypting_stream(io.BytesIO(body), preamble + aad) as stream:
        return stream.read()
# ---------------------------------------------------------------- FORMAT.md section 8.7, verbatim
import base64, hashlib, hmac, re
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

def bech32_decode(text: str) -> tuple[str, bytes]:
    """Bech32 as age uses it (BIP 173 without its length limit): (hrp, data)."""
    if text != text.lower() and text != text.upper():
        raise ValueError("Bech32 in mixed case")
    hrp, _, rest = text.lower().rpartition("1")
    values = ["qpzry9x8gf2tvdw0s3jn54khce6mua7l".index(c) for c in rest]
    check = 1
    for v in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + values:
        top, check = check >> 25, (check & 0x1FFFFFF) << 5 ^ v
        for i, g in enumerate((0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)):
            check ^= g if top >> i & 1 else 0
    bits = "".join(f"{v:05b}" for v in values[:-6])
    n = len(bits) // 8
    if check != 1 or len(bits) % 8 >= 5 or "1" in bits[8 * n:]:
        raise ValueError("bad Bech32 checksum or padding")
    return hrp, int(bits[:8 * n] or "0", 2).to_bytes(n, "big")

def b64(text: str) -> bytes:
    """age's base64: the standard alphabet, no padding, canonical (the unused low bits zero)."""
    data = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    if base64.b64encode(data).decode().rstrip("=") != text:
        raise ValueError("malformed header: padded or non-canonical base64")
    return data

def hkdf(ikm: bytes, info: bytes, salt: bytes = b"") -> bytes:
    return HKDF(SHA256(), 32, salt, info).derive(ikm)

def unwrap(key: bytes, body: bytes) -> bytes | None:
    try:
        return ChaCha20Poly1305(key).decrypt(bytes(12), body, None)
    except InvalidTag:
        return None

def x25519_file_key(stanzas: list, identity_file_text: str) -> bytes:
    """8.2: each identity tried on each X25519 stanza in turn; the first that opens gives the
    file key, and a malformed X25519 stanza met before then refuses the file (as paes)."""
    for line in identity_file_text.splitlines():
        if not line.strip().startswith("AGE-SECRET-KEY-1"):
            continue
        i = X25519PrivateKey.from_private_bytes(bech32_decode(line.strip())[1])
        for kind, args, body in stanzas:
            if kind != "X25519":
                continue  # a type this reader doesn't know
            if len(args) != 1 or len(E := b64(args[0])) != 32 or len(body) != 32:
                raise ValueError("malformed X25519 stanza")
            shared = i.exchange(X25519PublicKey.from_public_bytes(E))  # refuses all zero
            salt = E + i.public_key().public_bytes_raw()
            if file_key := unwrap(hkdf(shared, b"age-encryption.org/v1/X25519", salt), body):
                return file_key
    raise ValueError("no identity matches")

def scrypt_file_key(stanzas: list, passphrase: bytes) -> bytes:
    """age's scrypt stanza, the header's only one: a 16-byte salt and a work factor (log2 N)
    of 1 to 22, in decimal without leading zeros. cryptography's scrypt, since hashlib's takes
    less memory (maxmem < 2 GiB) than a work factor of 22 needs (4 GiB)."""
    if len(stanzas) != 1 or stanzas[0][0] != "scrypt":
        raise ValueError("no scrypt stanza: not a passphrase file")
    _, args, body = stanzas[0]
    if (len(args) != 2 or len(b64(args[0])) != 16 or not re.fullmatch("[1-9][0-9]?", args[1])
            or int(args[1]) > 22 or len(body) != 32):
        raise ValueError("malformed scrypt stanza")
    salt = b"age-encryption.org/v1/scrypt" + b64(args[0])
    file_key = unwrap(Scrypt(salt, 32, 2 ** int(args[1]), 8, 1).derive(passphrase), body)
    if file_key is None:
        raise ValueError("wrong passphrase")
    return file_key

PREAMBLE = re.compile(rb"PAES\x03(\x01[\x10\x20]\0{5}.{4}.{16}|\x03\x20\0{5}.{4}\0{16})", re.S)
STANZA = re.compile(rb"-> ([!-~]+(?: [!-~]+)*)\n((?:[A-Za-z0-9+/]{64}\n)*[A-Za-z0-9+/]{0,63})\n")
MAC_LINE = re.compile(rb"--- ([A-Za-z0-9+/]{43})\n")

def decrypt_paes_v3(data: bytes, aad: bytes = b"", *, key: bytes | None = None,
                    identity_file_text: str = "", passphrase: bytes | None = None) -> bytes:
    """A version-3 file. Key source 01 opens with its raw key; 03 with the text of an identity
    file (X25519 stanzas) or a passphrase (a scrypt stanza). aad: the --aad bytes."""
    preamble, stanzas, pos = data[:32], [], 32
    segment_size = int.from_bytes(preamble[12:16], "big")
    # 8.1: key source and L; scrypt fields and reserved bytes zero; salt random (raw key) or zero
    if not PREAMBLE.fullmatch(preamble) or not preamble[6] + 25 <= segment_size <= 64 << 20:
        raise ValueError("not a paes version-3 file, or a corrupt preamble")
    while data.startswith(b"-> ", pos):  # 8.1: at most 4,096 stanzas, then "--- " base64(MAC) LF
        if len(stanzas) == 4096 or not (m := STANZA.match(data, pos)):
            raise ValueError("malformed header")
        kind, *args = m[1].decode().split(" ")
        stanzas.append((kind, args, b64(m[2].replace(b"\n", b"").decode())))
        pos = m.end()
    m = MAC_LINE.match(data, pos)
    if (not m or m.end() > 32 + (1 << 20) or preamble[5] == 1 and stanzas
            or len(stanzas) > 1 and "scrypt" in [kind for kind, _, _ in stanzas]):
        raise ValueError("malformed header")
    if preamble[5] == 1:  # a raw key: no stanzas, and it is the body's key itself
        if key is None or len(key) != preamble[6]:
            raise ValueError(f"this file opens with a raw key of {preamble[6]} bytes")
        mac_key, ikm = hkdf(key, b"paes v3 raw key header"), key
    else:
        file_key = (scrypt_file_key(stanzas, passphrase) if passphrase is not None
                    else x25519_file_key(stanzas, identity_file_text))
        mac_key, ikm = hkdf(file_key, b"header"), hkdf(file_key, b"paes v3 body")
    # 8.3: the MAC of the header through "---" and the aad, checked before any plaintext
    if not hmac.compare_digest(hmac.new(mac_key, data[:pos + 3] + aad, hashlib.sha256).digest(),
                               b64(m[1].decode())):
        raise ValueError("header MAC mismatch")
    saead = tink_streaming_aead(ikm, segment_size)  # section 5; 8.4
    with saead.new_decrypting_stream(io.BytesIO(data[m.end():]), preamble + aad) as stream:
        return stream.read()
# ---------------------------------------------------------------- end of FORMAT.md's code

PAES = "paes"
AAD_TEXT = "v3 reader aad \u00e9\u2713"   # --aad is UTF-8 text
PASSPHRASE = "v3 reader's passphrase \u00e9"  # a passphrase file's first line, its UTF-8 bytes
SEGMENT = 4096                            # --segment-size 4K
FIRST = SEGMENT - (8 + 32) - 16           # plaintext bytes in segment 0 (section 3)
LATER = SEGMENT - 16                      # plaintext bytes in every later segment
LOW_ORDER = [bytes(32), bytes([1]) + bytes(31),   # X25519 points of low order: the shared secret is 0
             bytes.fromhex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800")]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def paes(*args, stdin=None):
    return subprocess.run([PAES, *map(str, args)], input=stdin, capture_output=True, timeout=300)


def must(proc, what):
    check(proc.returncode == 0,
          f"{what}: exit {proc.returncode}, stderr {proc.stderr.decode(errors='replace').strip()!r}")
    return proc.stdout


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def identity_secrets(path):
    text = read_text(path)
    return text, [bech32_decode(line.strip()) for line in text.splitlines()
                  if line.strip().startswith("AGE-SECRET-KEY-1")]


def new_identity(directory, name, tool):
    """An identity file written by `paes keygen --x25519` or `age-keygen`; returns (path, recipient)."""
    path = os.path.join(directory, name)
    if tool == "paes":
        printed = must(paes("keygen", "--x25519", "-o", path), "paes keygen --x25519").decode().strip()
    else:
        must(subprocess.run(["age-keygen", "-o", path], capture_output=True, timeout=60), "age-keygen")
        printed = None
    recipient = must(paes("keygen", "-y", path), f"paes keygen -y {name}").decode().strip()
    check(printed is None or printed == recipient,
          f"{name}: paes keygen --x25519 printed {printed}, paes keygen -y printed {recipient}")
    # The recipient is the identity's X25519 public key, in Bech32 with hrp "age" (age.md).
    _, secrets = identity_secrets(path)
    check(len(secrets) == 1 and secrets[0][0] == "age-secret-key-",
          f"{name}: expected one AGE-SECRET-KEY-1 line, decoded {secrets}")
    public = X25519PrivateKey.from_private_bytes(secrets[0][1]).public_key().public_bytes_raw()
    check(bech32_decode(recipient) == ("age", public),
          f"{name}: recipient {recipient} is not the identity's public key {public.hex()}")
    return path, recipient


def header_end(data):
    """The offset of the MAC line ("--- ...") in a version-3 file."""
    return data.index(b"--- ", 32)


def stanza_offsets(data):
    """The offset of each stanza's first body line."""
    end = header_end(data)
    return [m.end() for m in re.finditer(rb"(?m)^-> [^\n]*\n", data[:end])]


def flip_b64_char(data, offset):
    """data with the base64 character at offset replaced by another (the first character of a
    line, so the encoding stays canonical)."""
    c = data[offset:offset + 1]
    return data[:offset] + (b"B" if c != b"B" else b"C") + data[offset + 1:]


# ---------------------------------------------------------------- crafting headers

def age_b64(data):
    """age's base64 (canonical, unpadded) as bytes."""
    return base64.b64encode(data).rstrip(b"=")


def non_canonical(text):
    """Canonical unpadded base64 whose last character has unused low bits, with one of them set:
    it decodes to the same bytes in a lenient decoder."""
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    check(len(text) % 4 in (2, 3), f"{text!r} has no unused bits")
    return text[:-1] + alphabet[alphabet.index(text[-1:]) ^ 1:][:1]


def body_lines(text):
    """age.md's stanza body lines of base64 text: 64 columns, the last shorter (maybe empty)."""
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    if not lines or len(lines[-1]) == 64:
        lines.append(b"")
    return b"".join(line + b"\n" for line in lines)


def stanza(line, body):
    """A stanza as age.md writes it: "-> " line, then the body (bytes) in body_lines."""
    return b"-> " + (line.encode() if isinstance(line, str) else line) + b"\n" + body_lines(age_b64(body))


def x25519_stanza(file_key, recipient_public):
    """An X25519 stanza wrapping file_key to recipient_public (FORMAT.md 8.2)."""
    e = X25519PrivateKey.generate()
    share = e.public_key().public_bytes_raw()
    wrap_key = hkdf(e.exchange(X25519PublicKey.from_public_bytes(recipient_public)),
                    b"age-encryption.org/v1/X25519", share + recipient_public)
    return stanza(b"X25519 " + age_b64(share), ChaCha20Poly1305(wrap_key).encrypt(bytes(12), file_key, None))


def scrypt_stanza(file_key, passphrase, log2n, salt=None):
    """age's scrypt stanza wrapping file_key."""
    salt = os.urandom(16) if salt is None else salt
    key = Scrypt(b"age-encryption.org/v1/scrypt" + salt, 32, 2 ** log2n, 8, 1).derive(passphrase)
    return stanza(b"scrypt " + age_b64(salt) + b" %d" % log2n,
                  ChaCha20Poly1305(key).encrypt(bytes(12), file_key, None))


def split_file(data):
    """(preamble, [(kind, args, body)], [stanza texts], body) of a version-3 file paes wrote."""
    pos, stanzas, texts = 32, [], []
    while m := STANZA.match(data, pos):
        kind, *args = m[1].decode().split(" ")
        stanzas.append((kind, args, b64(m[2].replace(b"\n", b"").decode())))
        texts.append(m[0])
        pos = m.end()
    m = MAC_LINE.match(data, pos)
    check(m is not None, f"no MAC line at {pos} in a file paes wrote")
    return data[:32], stanzas, texts, data[m.end():]


def assemble(preamble, texts, mac_key, body, aad=b""):
    """preamble || stanza texts || "--- " MAC LF || body, the MAC made under mac_key."""
    header = preamble + b"".join(texts) + b"---"
    return header + b" " + age_b64(hmac.new(mac_key, header + aad, hashlib.sha256).digest()) + b"\n" + body


class _KeptBytesIO(io.BytesIO):
    def close(self):  # Tink's encrypting stream closes its destination
        pass


def tink_encrypt(key, preamble, plaintext, aad=b"", body=None):
    """A body (section 3) for `preamble`: Tink's stream with its segment size and associated data;
    `body` where Tink makes none (a segment size outside L + 25 to 64 MiB)."""
    if body is not None and not len(key) + 25 <= int.from_bytes(preamble[12:16], "big") <= 64 << 20:
        return body
    out = _KeptBytesIO()
    with tink_streaming_aead(key, int.from_bytes(preamble[12:16], "big")).new_encrypting_stream(
            out, preamble + aad) as stream:
        stream.write(plaintext)
    return out.getvalue()


def with_bytes(data, at, new):
    return data[:at] + new + data[at + len(new):]


class Opener:
    """One way to open a file: the reader's keyword arguments and paes decrypt's options."""

    def __init__(self, name, reader, paes_args):
        self.name, self.reader, self.paes_args = name, reader, paes_args


class Checker:
    """Runs crafted cases; collects their failures (a Failure names all of them at the end)."""

    def __init__(self, work):
        self.work, self.count, self.passed, self.failures = work, 0, 0, []

    def paes_decrypt(self, data, opener, aad=None):
        self.count += 1
        path = write_bytes(os.path.join(self.work, f"crafted{self.count}.paes"), data)
        out = path + ".out"
        aad_args = [] if aad is None else ["--aad", aad]
        proc = paes("decrypt", *opener.paes_args, *aad_args, path, "-o", out)
        got = read_bytes(out) if os.path.exists(out) else None
        for name in (path, out):
            if os.path.exists(name):
                os.remove(name)
        return proc, got

    def refused(self, what, data, opener, aad=None):
        """Both this reader and paes decrypt refuse data."""
        try:
            self._refused(what, data, opener, aad)
            self.passed += 1
        except Failure as exc:
            self.failures.append(str(exc))

    def opened(self, what, data, plain, opener, aad=None):
        """Both this reader and paes decrypt open data to plain (a control)."""
        try:
            self._opened(what, data, plain, opener, aad)
            self.passed += 1
        except Failure as exc:
            self.failures.append(str(exc))

    def _refused(self, what, data, opener, aad):
        try:
            decrypt_paes_v3(data, b"" if aad is None else aad.encode(), **opener.reader)
        except ValueError:
            pass
        except Exception as exc:  # noqa: BLE001 (a TinkError: the header was accepted)
            raise Failure(f"{what}: decrypt_paes_v3 ({opener.name}) accepted the header, then {exc!r}")
        else:
            raise Failure(f"{what}: decrypt_paes_v3 ({opener.name}) opened it")
        proc, got = self.paes_decrypt(data, opener, aad)
        check(proc.returncode in (1, 2) and got is None and proc.stdout == b"",
              f"{what}: paes decrypt {' '.join(opener.paes_args)}: exit {proc.returncode}, "
              f"{'an output file' if got is not None else 'no output file'}, "
              f"stderr {proc.stderr.decode(errors='replace').strip()!r}")

    def _opened(self, what, data, plain, opener, aad):
        try:
            got = decrypt_paes_v3(data, b"" if aad is None else aad.encode(), **opener.reader)
        except Exception as exc:  # noqa: BLE001
            raise Failure(f"{what} (a control): decrypt_paes_v3 ({opener.name}) refused it: {exc!r}")
        check(got == plain, f"{what} (a control): decrypt_paes_v3 ({opener.name}) gave other bytes")
        proc, got = self.paes_decrypt(data, opener, aad)
        check(proc.returncode == 0 and got == plain,
              f"{what} (a control): paes decrypt {' '.join(opener.paes_args)}: exit {proc.returncode}, "
              f"stderr {proc.stderr.decode(errors='replace').strip()!r}")


def crafted_x25519(c, sealed, plain, alice, alice_public, bob_then_alice):
    """Crafted headers of a file sealed to alice (X25519), MAC'd again under its file key."""
    preamble, stanzas, (good,), body = split_file(sealed)
    file_key = x25519_file_key(stanzas, alice.reader["identity_file_text"])
    mac_key = hkdf(file_key, b"header")

    def file(*texts):
        return assemble(preamble, texts, mac_key, body)

    share, wrapped = stanzas[0][1][0].encode(), stanzas[0][2]
    grease48 = stanza("grease.x a+b !~ {}", os.urandom(48))   # 64 columns, then an empty line
    c.opened("the header rebuilt", file(good), plain, alice)
    c.opened("an unknown stanza type with arguments and a 48-byte body", file(grease48, good), plain, alice)
    c.opened("4,096 stanzas", file(*[b"-> g\n\n"] * 4095, good), plain, alice)
    fill = (1 << 20) - len(good) - len(b"-> pad \n\n") - len(b"--- \n") - 43
    c.opened("a header of exactly 1 MiB", file(good, b"-> pad " + b"a" * fill + b"\n\n"), plain, alice)
    c.opened("a low-order share in an unknown type", file(stanza(b"Y25519 " + age_b64(bytes(32)), wrapped), good),
             plain, alice)

    c.refused("4,097 stanzas", file(*[b"-> g\n\n"] * 4096, good), alice)
    c.refused("a header of 1 MiB and 1 byte", file(good, b"-> pad " + b"a" * (fill + 1) + b"\n\n"), alice)

    # Malformed X25519 stanzas: before alice's stanza they refuse the file; after it both readers
    # have stopped at the stanza that opened (FORMAT.md 8.2, 8.5: as age's own implementation),
    # unless an identity tried first (bob's) went through every stanza.
    valid_share = age_b64(X25519PrivateKey.generate().public_key().public_bytes_raw())
    malformed = {
        "an X25519 stanza without an argument": stanza("X25519", wrapped),
        "an X25519 stanza with 2 arguments": stanza(b"X25519 " + share + b" " + share, wrapped),
        "an X25519 share in padded base64": stanza(b"X25519 " + share + b"=", wrapped),
        "an X25519 share in non-canonical base64": stanza(b"X25519 " + non_canonical(share), wrapped),
        "an X25519 share of 31 bytes": stanza(b"X25519 " + age_b64(os.urandom(31)), wrapped),
        "an X25519 share of 33 bytes": stanza(b"X25519 " + age_b64(os.urandom(33)), wrapped),
        "an X25519 body of 31 bytes": stanza(b"X25519 " + valid_share, wrapped[:31]),
        "an X25519 body of 33 bytes": stanza(b"X25519 " + valid_share, wrapped + b"\0"),
        "an X25519 body of 48 bytes": stanza(b"X25519 " + valid_share, os.urandom(48)),
        "an X25519 body of 0 bytes": stanza(b"X25519 " + valid_share, b""),
    }
    for point in LOW_ORDER:
        malformed[f"an X25519 share of low order ({point.hex()[:8]}...)"] = \
            stanza(b"X25519 " + age_b64(point), wrapped)
    for what, text in malformed.items():
        c.refused(what + ", before the stanza that opens", file(text, good), alice)
        c.opened(what + ", after the stanza that opens", file(good, text), plain, alice)
        c.refused(what + ", after the stanza that opens, bob's identity tried first", file(good, text),
                  bob_then_alice)

    # The grammar of section 8.1 (age.md), anywhere in the header.
    rebuilt = file(good)
    at = len(rebuilt) - len(body) - 48          # the MAC line: "--- ", 43 characters, LF
    head, mac_text = rebuilt[:at], rebuilt[at + 4:at + 47]
    non_canonical_body = b"-> X25519 " + valid_share + b"\n" + non_canonical(age_b64(wrapped)) + b"\n"
    grammar = {
        "an X25519 body in non-canonical base64, before the stanza that opens": file(non_canonical_body, good),
        "an X25519 body in non-canonical base64, after the stanza that opens": file(good, non_canonical_body),
        "a padded stanza body": file(b"-> g\nAA==\n", good),
        "a stanza body in non-canonical base64": file(b"-> g\nAB\n", good),
        "a stanza body of 1 base64 character": file(b"-> g\nA\n", good),
        "a full last body line not followed by an empty line": file(grease48[:-1], good),
        "a full last body line, then the MAC line": file(good, grease48[:-1]),
        "a body line shorter than 64 columns before another": file(b"-> g\n" + b"A" * 60 + b"\nAAAA\n", good),
        "a body line of 65 columns": file(b"-> g\n" + b"A" * 65 + b"\n\n", good),
        "a stanza without a type": file(b"-> \n\n", good),
        "a stanza line without its space": file(b"->g\n\n", good),
        "a stanza type with a control character": file(b"-> g\x01g\n\n", good),
        "a stanza argument with a tab": file(b"-> g a\tb\n\n", good),
        "a stanza argument with DEL": file(b"-> g a\x7f\n\n", good),
        "a stanza argument not ASCII": file("-> g \u00e9\n\n".encode(), good),
        "an empty stanza argument (two spaces)": file(b"-> g  a\n\n", good),
        "a stanza line ending in a space": file(b"-> g a \n\n", good),
        "a CR at the end of a stanza line": file(b"-> g a\r\n\n", good),
        "a CR ending a stanza's empty body line": file(b"-> g a\n\r\n", good),
        "a CR in the X25519 stanza's lines": file(good.replace(b"\n", b"\r\n")),
        "a CR at the end of the MAC line": head + b"--- " + mac_text + b"\r\n" + body,
        "an empty line between stanzas": file(good, b"\n"),
        "a comment line in the header": file(b"# comment\n", good),
        "a MAC in padded base64": head + b"--- " + mac_text + b"=\n" + body,
        "a MAC in non-canonical base64": head + b"--- " + non_canonical(mac_text) + b"\n" + body,
        "a MAC line with two spaces": head + b"---  " + mac_text + b"\n" + body,
        "a MAC line with a space after the MAC": head + b"--- " + mac_text + b" \n" + body,
        "a MAC line '---' alone": head + b"---\n" + body,
        "no MAC line (cut in the header)": head,
    }
    for what, data in grammar.items():
        c.refused(what, data, alice)

    # The preamble (section 1, 8.1): version 3, key source 03, L = 0x20, the rest zero. The
    # body is sealed again with body_ikm under each new preamble, so only the field is wrong.
    body_ikm = hkdf(file_key, b"paes v3 body")

    def resealed(pre):
        return assemble(pre, [good], mac_key, tink_encrypt(body_ikm, pre, plain, body=body))

    c.opened("the body sealed again", resealed(preamble), plain, alice)
    c.opened("the smallest segment size (57)", resealed(with_bytes(preamble, 12, (57).to_bytes(4, "big"))),
             plain, alice)
    for at in (7, 8, 9, 10, 11, 16, 23, 31):
        c.refused(f"preamble byte {at} not zero", resealed(with_bytes(preamble, at, b"\x01")), alice)
    for what, at, value in (("key length 0x10", 6, b"\x10"), ("key length 0x18", 6, b"\x18"),
                            ("key source 02", 5, b"\x02"), ("key source 00", 5, b"\x00"),
                            ("key source 04", 5, b"\x04"), ("version 2", 4, b"\x02"),
                            ("version 1", 4, b"\x01"), ("version 4", 4, b"\x04"),
                            ("segment size 56 (below L + 25)", 12, (56).to_bytes(4, "big")),
                            ("segment size 0", 12, bytes(4)),
                            ("segment size 64 MiB + 1", 12, ((64 << 20) + 1).to_bytes(4, "big"))):
        c.refused(f"a preamble with {what}", resealed(with_bytes(preamble, at, value)), alice)


def crafted_scrypt(c, sealed, plain, passphrase, alice, alice_public):
    """Crafted headers of a passphrase file (a scrypt stanza), MAC'd again under its file key."""
    preamble, stanzas, (good,), body = split_file(sealed)
    file_key = scrypt_file_key(stanzas, PASSPHRASE.encode())
    mac_key = hkdf(file_key, b"header")

    def file(*texts):
        return assemble(preamble, texts, mac_key, body)

    salt, log2n = stanzas[0][1]
    wrapped = stanzas[0][2]
    c.opened("the scrypt header rebuilt", file(good), plain, passphrase)
    c.opened("a scrypt stanza with work factor 1", file(scrypt_stanza(file_key, PASSPHRASE.encode(), 1)),
             plain, passphrase)
    to_alice = x25519_stanza(file_key, alice_public)
    for what, texts in (("a scrypt stanza, then an X25519 stanza", [good, to_alice]),
                        ("an X25519 stanza, then a scrypt stanza", [to_alice, good]),
                        ("a scrypt stanza and an unknown stanza", [good, b"-> g\n\n"]),
                        ("two scrypt stanzas", [good, good])):
        c.refused(what + " (a passphrase)", file(*texts), passphrase)
        c.refused(what + " (alice's identity)", file(*texts), alice)
    s, w = salt.encode(), age_b64(wrapped)
    for what, line, body_text in (
            ("without a work factor", b"scrypt " + s, w),
            ("with 3 arguments", b"scrypt " + s + b" 10 10", w),
            ("with a salt of 15 bytes", b"scrypt " + age_b64(os.urandom(15)) + b" 10", w),
            ("with a salt of 17 bytes", b"scrypt " + age_b64(os.urandom(17)) + b" 10", w),
            ("with a padded salt", b"scrypt " + s + b"== 10", w),
            ("with a salt in non-canonical base64", b"scrypt " + non_canonical(s) + b" 10", w),
            ("with work factor 010", b"scrypt " + s + b" 010", w),
            ("with work factor 0", b"scrypt " + s + b" 0", w),
            ("with work factor 23", b"scrypt " + s + b" 23", w),
            ("with work factor +10", b"scrypt " + s + b" +10", w),
            ("with work factor 1e1", b"scrypt " + s + b" 1e1", w),
            ("with a body of 31 bytes", b"scrypt " + s + b" " + log2n.encode(), age_b64(wrapped[:31])),
            ("with a body of 33 bytes", b"scrypt " + s + b" " + log2n.encode(), age_b64(wrapped + b"\0"))):
        c.refused(f"a scrypt stanza {what}", file(b"-> " + line + b"\n" + body_lines(body_text)), passphrase)
    c.refused("a wrong passphrase", sealed, Opener("a wrong passphrase", {"passphrase": b"wrong"},
                                                   ["--passphrase-file", write_bytes(
                                                       os.path.join(c.work, "wrong-pass"), b"wrong\n")]))


def crafted_raw_key(c, sealed, plain, key, raw, alice_public):
    """Crafted headers of a raw-key file (key source 01), MAC'd again under the raw key."""
    preamble, stanzas, texts, body = split_file(sealed)
    check(not stanzas, f"a raw-key file with stanzas: {stanzas}")
    mac_key = hkdf(key, b"paes v3 raw key header")
    c.opened("the raw-key header rebuilt", assemble(preamble, [], mac_key, body), plain, raw)
    c.refused("a raw-key file with an unknown stanza", assemble(preamble, [b"-> g\n\n"], mac_key, body), raw)
    c.refused("a raw-key file with an X25519 stanza",
              assemble(preamble, [x25519_stanza(os.urandom(16), alice_public)], mac_key, body), raw)
    mac = sealed[36:79]
    c.refused("a raw-key file's MAC in non-canonical base64", with_bytes(sealed, 36, non_canonical(mac)), raw)
    c.refused("a raw-key file's MAC padded", sealed[:79] + b"=" + sealed[79:], raw)

    def resealed(pre):
        return assemble(pre, [], mac_key, tink_encrypt(key, pre, plain, body=body))

    c.opened("a raw-key body sealed again", resealed(preamble), plain, raw)
    for seg in (len(key) + 25, 64 << 20):
        c.opened(f"a raw-key file with segment size {seg}",
                 resealed(with_bytes(preamble, 12, seg.to_bytes(4, "big"))), plain, raw)
    for at in (16, 31):   # the salt field: random
        c.opened(f"a raw-key preamble with byte {at} changed",
                 resealed(with_bytes(preamble, at, bytes([preamble[at] ^ 1]))), plain, raw)
    for at in (7, 8, 9, 10, 11):
        c.refused(f"a raw-key preamble with byte {at} not zero", resealed(with_bytes(preamble, at, b"\x01")), raw)
    for what, at, value in (("key length 0x18", 6, b"\x18"), ("key length 0x10", 6, b"\x10"),
                            ("key source 02", 5, b"\x02"), ("key source 03", 5, b"\x03"),
                            (f"segment size {len(key) + 24}", 12, (len(key) + 24).to_bytes(4, "big")),
                            ("segment size 64 MiB + 1", 12, ((64 << 20) + 1).to_bytes(4, "big"))):
        c.refused(f"a raw-key preamble with {what}", resealed(with_bytes(preamble, at, value)), raw)
    c.refused("a wrong raw key", sealed, Opener("a wrong key", {"key": bytes(len(key))},
                                                ["--key-file", write_bytes(os.path.join(c.work, "zero.key"),
                                                                           bytes(len(key)).hex().encode() + b"\n")]))


def main():
    global PAES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paes", default="paes", help="the paes binary")
    args = parser.parse_args()
    PAES = args.paes
    rng = random.Random(0x5EA13)
    passed = 0
    work = tempfile.mkdtemp(prefix="paes-v3-reader-")
    try:
        # The doc and this file must hold the same code.
        doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "FORMAT.md")
        if os.path.exists(doc):
            me = read_text(__file__)
            blocks = re.findall(r"```python\n(.*?)```", read_text(doc), re.S)
            for name in ("def decrypt_paes_file_with_tink", "def decrypt_paes_v3"):
                block = [b for b in blocks if name in b]
                check(len(block) == 1, f"FORMAT.md: no single ```python block with {name}")
                check(block[0] in me, f"FORMAT.md's block with {name} differs from {__file__}'s copy")
            passed += 1
        else:
            print(f"v3_reader.py: note: {doc} not found, doc/test code identity not checked")

        ids = [new_identity(work, "alice.txt", "paes"), new_identity(work, "bob.txt", "paes")]
        if shutil.which("age-keygen"):
            ids.append(new_identity(work, "carol-age-keygen.txt", "age-keygen"))
        else:
            print("v3_reader.py: note: age-keygen not found, age-keygen identities not tested")
        recipients_file = os.path.join(work, "recipients.txt")
        with open(recipients_file, "w", encoding="utf-8") as f:
            f.write("# everyone\n" + "".join(f"{r}\n\n" for _, r in ids))
        both = os.path.join(work, "alice-and-bob.txt")   # an identity file with two keys
        with open(both, "w", encoding="utf-8") as f:
            f.write(read_text(ids[1][0]) + read_text(ids[0][0]))
        passed += len(ids)

        sizes = [0, 1, FIRST - 1, FIRST, FIRST + 1, FIRST + LATER, FIRST + LATER + 1, 3 * SEGMENT + 17]
        cases = []   # (plaintext, recipient args, identities that must open it, aad or None, segment args)
        for n in sizes:
            cases.append((rng.randbytes(n), ["-R", recipients_file], ids, None, ["--segment-size", "4K"]))
        for who in ids:
            cases.append((rng.randbytes(100), ["-r", who[1]], [who], None, []))
            cases.append((rng.randbytes(100), ["-r", who[1]], [who], AAD_TEXT, []))
        cases.append((rng.randbytes(FIRST + 1), [a for _, r in ids for a in ("-r", r)], ids, AAD_TEXT,
                      ["--segment-size", "4K"]))
        cases.append((b"x", ["-r", ids[0][1], "-R", recipients_file], ids, AAD_TEXT, []))
        for index, (plain, rargs, openers, aad, seg) in enumerate(cases):
            src = write_bytes(os.path.join(work, f"in{index}"), plain)
            out = os.path.join(work, f"in{index}.paes")
            aad_args = [] if aad is None else ["--aad", aad]
            must(paes("encrypt", *rargs, *aad_args, *seg, src, "-o", out), f"case {index}: paes encrypt")
            data = read_bytes(out)
            check(data[:16] == b"PAES\x03\x03\x20\x00\x00\x00\x00\x00"
                  + (SEGMENT if seg else 1 << 20).to_bytes(4, "big") and data[16:32] == bytes(16),
                  f"case {index}: preamble {data[:32].hex()} is not section 8.1's")
            for path, recipient in openers + ([(both, None)] if openers is ids else []):
                try:
                    got = decrypt_paes_v3(data, b"" if aad is None else aad.encode(),
                                          identity_file_text=read_text(path))
                except Exception as exc:  # noqa: BLE001
                    raise Failure(f"case {index} ({len(plain)} bytes, {' '.join(rargs + aad_args + seg)}): "
                                  f"decrypt_paes_v3 with {os.path.basename(path)} failed: {exc!r}")
                check(got == plain, f"case {index}: decrypt_paes_v3 with {os.path.basename(path)} gave "
                                    f"{len(got)} bytes that differ from the {len(plain)}-byte input")
                passed += 1
            wrong = b"" if aad is not None else b"an aad it was not sealed with"
            try:
                decrypt_paes_v3(data, wrong, identity_file_text=read_text(openers[0][0]))
                raise Failure(f"case {index}: decrypt_paes_v3 opened it with a wrong aad {wrong!r}")
            except ValueError as exc:
                check(str(exc) == "header MAC mismatch", f"case {index}, a wrong aad: {exc!r}")
            passed += 1

        # A passphrase (a scrypt stanza) and raw keys of 16 and 32 bytes, with and without --aad.
        pass_file = write_bytes(os.path.join(work, "pass.txt"), PASSPHRASE.encode() + b"\n")
        passphrase = Opener("a passphrase", {"passphrase": PASSPHRASE.encode()}, ["--passphrase-file", pass_file])
        raws = {}
        for bits in (128, 256):
            key_file = os.path.join(work, f"key{bits}")
            must(paes("keygen", "--key-bits", bits, "-o", key_file), f"paes keygen --key-bits {bits}")
            key = bytes.fromhex(read_text(key_file).strip())
            check(len(key) == bits // 8, f"paes keygen --key-bits {bits} wrote {len(key)} bytes")
            raws[bits] = (key, Opener(f"a {bits}-bit key", {"key": key}, ["--key-file", key_file]))
        sealed = {}   # (what, aad) -> (file, plaintext)
        for n in (0, 1, FIRST + 1):
            plain = rng.randbytes(n)
            src = write_bytes(os.path.join(work, "plain"), plain)
            for aad in (None, AAD_TEXT):
                aad_args, aad_b = ([] if aad is None else ["--aad", aad]), (b"" if aad is None else aad.encode())
                kinds = [("passphrase", ["--passphrase-file", pass_file, "--scrypt-log-n", "10"], passphrase, 32)]
                kinds += [(f"raw{bits}", opener.paes_args, opener, bits // 8) for bits, (_, opener) in raws.items()]
                for kind, key_args, opener, key_len in kinds:
                    what = f"{kind}, {n} bytes, {'--aad' if aad else 'no aad'}"
                    out = os.path.join(work, f"{kind}.paes")
                    must(paes("encrypt", *key_args, *aad_args, "--segment-size", "4K", src, "-o", out, "-f"),
                         f"{what}: paes encrypt")
                    data = read_bytes(out)
                    source = 3 if kind == "passphrase" else 1
                    check(data[:16] == b"PAES\x03" + bytes([source, key_len]) + bytes(5) + SEGMENT.to_bytes(4, "big")
                          and (data[16:32] == bytes(16)) == (kind == "passphrase"),
                          f"{what}: preamble {data[:32].hex()} is not section 8.1's (salt: random for a raw key)")
                    _, stanzas, _, body = split_file(data)
                    if kind == "passphrase":
                        check(len(stanzas) == 1 and stanzas[0][0] == "scrypt" and stanzas[0][1][1] == "10",
                              f"{what}: stanzas {stanzas}, expected one scrypt stanza of work factor 10")
                    else:
                        check(not stanzas and data[32:36] == b"--- " and len(data) == 80 + len(body),
                              f"{what}: the header is not just a MAC line")
                    try:
                        got = decrypt_paes_v3(data, aad_b, **opener.reader)
                    except Exception as exc:  # noqa: BLE001
                        raise Failure(f"{what}: decrypt_paes_v3 failed: {exc!r}")
                    check(got == plain, f"{what}: decrypt_paes_v3 gave other bytes")
                    if kind != "passphrase":
                        check(decrypt_paes_file_with_tink(data, opener.reader["key"], aad_b) == plain,
                              f"{what}: section 5's recipe gave other bytes")
                    for wrong in (aad_b + b"x", b"" if aad else b"x"):
                        try:
                            decrypt_paes_v3(data, wrong, **opener.reader)
                            raise Failure(f"{what}: decrypt_paes_v3 opened it with a wrong aad {wrong!r}")
                        except ValueError as exc:
                            check(str(exc) == "header MAC mismatch", f"{what}, a wrong aad: {exc!r}")
                    if (kind, aad) in sealed and kind != "passphrase":
                        # The salt field is random: one key's files have unlike preambles and MAC lines.
                        before = sealed[kind, aad][0]
                        check(before[16:32] != data[16:32] and before[32:80] != data[32:80],
                              f"{what}: the same salt or MAC line as the file sealed before under this key")
                    sealed[kind, aad] = (data, plain)
                    passed += 1

        # Tampering: a flipped byte in any stanza fails the MAC for the identity whose stanza is
        # intact (the other finds no stanza); a flipped MAC fails it for everyone. paes agrees.
        data = read_bytes(os.path.join(work, f"in{sizes.index(1)}.paes"))
        tampered = [(f"stanza {k}", flip_b64_char(data, off)) for k, off in enumerate(stanza_offsets(data))]
        tampered.append(("the MAC", flip_b64_char(data, header_end(data) + 4)))
        for what, bad in tampered:
            errors = []
            for path, _ in ids:
                try:
                    decrypt_paes_v3(bad, identity_file_text=read_text(path))
                    raise Failure(f"a flipped byte in {what}: decrypt_paes_v3 with {path} succeeded")
                except ValueError as exc:
                    errors.append(str(exc))
            check(errors.count("header MAC mismatch") >= len(ids) - (what != "the MAC"),
                  f"a flipped byte in {what}: this reader's errors were {errors}, expected the header MAC")
            bad_path = write_bytes(os.path.join(work, "tampered.paes"), bad)
            for path, _ in ids:
                proc = paes("decrypt", "-i", path, bad_path)
                check(proc.returncode == 1 and proc.stdout == b"",
                      f"a flipped byte in {what}: paes decrypt -i {path}: exit {proc.returncode}, "
                      f"{len(proc.stdout)} bytes out")
            passed += 1

        # An identity that is no recipient matches no stanza.
        stranger, _ = new_identity(work, "stranger.txt", "paes")
        try:
            decrypt_paes_v3(data, identity_file_text=read_text(stranger))
            raise Failure("decrypt_paes_v3 with a non-recipient's identity succeeded")
        except ValueError as exc:
            check(str(exc) == "no identity matches", f"non-recipient: unexpected error {exc!r}")
        passed += 1

        # Crafted headers: refused by both this reader and paes, and their controls opened by both.
        alice = Opener("alice's identity", {"identity_file_text": read_text(ids[0][0])}, ["-i", ids[0][0]])
        alice_public = bech32_decode(ids[0][1])[1]
        plain = rng.randbytes(FIRST + 100)
        src = write_bytes(os.path.join(work, "crafted-plain"), plain)
        out = os.path.join(work, "to-alice.paes")
        must(paes("encrypt", "-r", ids[0][1], "--segment-size", "4K", src, "-o", out), "paes encrypt -r alice")
        c = Checker(work)
        bob_then_alice = Opener("bob's and alice's identities", {"identity_file_text": read_text(both)},
                                ["-i", both])
        crafted_x25519(c, read_bytes(out), plain, alice, alice_public, bob_then_alice)
        crafted_scrypt(c, *sealed["passphrase", None], passphrase, alice, alice_public)
        key, raw = raws[256]
        crafted_raw_key(c, *sealed["raw256", None], key, raw, alice_public)
        passed += c.passed
        check(not c.failures, f"{len(c.failures)} of {c.passed + len(c.failures)} crafted cases failed:\n  "
              + "\n  ".join(c.failures))
    except Failure as exc:
        print(f"v3_reader.py: FAIL: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"v3_reader.py: OK: {passed} checks passed (paes {PAES})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
