#!/usr/bin/env python3
"""An independent reader of paes format version 3, written from docs/FORMAT.md alone.

decrypt_paes_v3() follows FORMAT.md section 8 (preamble, age stanzas, header MAC, body) and
section 5 (the body is a Tink AES-GCM-HKDF stream); it is the code of FORMAT.md section 8.7,
and decrypt_paes_file_with_tink() is section 5's recipe, both verbatim (checked below).

  python3 tests/tink/v3_reader.py --paes build/release/paes

Seals with paes to identities from `paes keygen --x25519` and from `age-keygen` (-r and -R, one
and several recipients, --aad, empty and 1-byte inputs, sizes around 4K segments' boundaries)
and opens every file with decrypt_paes_v3 under each recipient's identity file. Checks that the
recipient paes prints is the identity's X25519 public key, that a flipped byte in a stanza or
in the MAC fails this reader's header MAC check (and paes' too), and that an identity that is
not a recipient matches no stanza.

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

def decrypt_paes_file_with_tink(data: bytes, key: bytes, aad: bytes = b"") -> bytes:
    preamble, body = data[:32], data[32:]
    segment_size = int.from_bytes(preamble[12:16], "big")
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
    saead = handle.primitive(streaming_aead.StreamingAead)
    with saead.new_decrypting_stream(io.BytesIO(body), preamble + aad) as stream:
        return stream.read()
# ---------------------------------------------------------------- FORMAT.md section 8.7, verbatim
import base64, hashlib, hmac, re
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

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

def b64(text: str) -> bytes:  # age's base64: standard alphabet, no padding
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)

def hkdf(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    return HKDF(SHA256(), 32, salt, info).derive(ikm)

def unwrap_file_key(stanzas: list, identities: list) -> bytes:
    """8.2: the file key from the first X25519 stanza that an identity opens."""
    for secret in identities:
        i = X25519PrivateKey.from_private_bytes(secret)
        public = i.public_key().public_bytes_raw()
        for args, body in stanzas:
            if args[0] != "X25519" or len(args) != 2 or len(body) != 32:
                continue
            try:
                E = b64(args[1])
                shared = i.exchange(X25519PublicKey.from_public_bytes(E))  # refuses all zero
                wrap_key = hkdf(shared, E + public, b"age-encryption.org/v1/X25519")
                return ChaCha20Poly1305(wrap_key).decrypt(bytes(12), body, None)
            except (ValueError, InvalidTag):
                continue
    raise ValueError("no identity matches")

STANZA = re.compile(rb"-> ([^\n]*)\n((?:[A-Za-z0-9+/]{64}\n)*[A-Za-z0-9+/]{0,63}\n)")

def decrypt_paes_v3(data: bytes, identity_file_text: str, aad: bytes = b"") -> bytes:
    preamble, stanzas, pos = data[:32], [], 32
    if preamble[:6] != b"PAES\x03\x03":
        raise ValueError("not a paes version-3 file")
    while m := STANZA.match(data, pos):  # 8.1: the stanzas, then "--- " base64(MAC) LF
        stanzas.append((m[1].decode().split(" "), b64(m[2].replace(b"\n", b"").decode())))
        pos = m.end()
    end = data.find(b"\n", pos)
    if not data.startswith(b"--- ", pos) or end < 0:
        raise ValueError("malformed header")
    header, mac, body = data[:pos + 3], b64(data[pos + 4:end].decode()), data[end + 1:]
    identities = [bech32_decode(line.strip())[1] for line in identity_file_text.splitlines()
                  if line.strip().startswith("AGE-SECRET-KEY-1")]
    file_key = unwrap_file_key(stanzas, identities)
    # 8.3: the header MAC, before any plaintext; 8.4: the body is section 5's, keyed by body_ikm
    mac_key = hkdf(file_key, b"", b"header")
    if not hmac.compare_digest(hmac.new(mac_key, header, hashlib.sha256).digest(), mac):
        raise ValueError("header MAC mismatch")
    body_ikm = hkdf(file_key, b"", b"paes v3 body")
    return decrypt_paes_file_with_tink(preamble + body, body_ikm, aad)
# ---------------------------------------------------------------- end of FORMAT.md's code

PAES = "paes"
AAD_TEXT = "v3 reader aad \u00e9\u2713"   # --aad is UTF-8 text
SEGMENT = 4096                            # --segment-size 4K
FIRST = SEGMENT - (8 + 32) - 16           # plaintext bytes in segment 0 (section 3)
LATER = SEGMENT - 16                      # plaintext bytes in every later segment


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


def identity_secrets(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
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


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def header_end(data):
    """The offset of the MAC line ("--- ...") in a version-3 file."""
    return data.index(b"\n--- ", 32) + 1


def stanza_offsets(data):
    """The offset of each stanza's first body line."""
    end = header_end(data)
    return [m.end() for m in re.finditer(rb"(?m)^-> [^\n]*\n", data[:end])]


def flip_b64_char(data, offset):
    """data with the base64 character at offset replaced by another (the first character of a
    line, so the encoding stays canonical)."""
    c = data[offset:offset + 1]
    return data[:offset] + (b"B" if c != b"B" else b"C") + data[offset + 1:]


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
            with open(__file__, encoding="utf-8") as f:
                me = f.read()
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
        cases.append((rng.randbytes(FIRST + 1), [a for _, r in ids for a in ("-r", r)], ids, AAD_TEXT,
                      ["--segment-size", "4K"]))
        cases.append((b"x", ["-r", ids[0][1], "-R", recipients_file], ids, AAD_TEXT, []))
        for index, (plain, rargs, openers, aad, seg) in enumerate(cases):
            src = os.path.join(work, f"in{index}")
            with open(src, "wb") as f:
                f.write(plain)
            out = os.path.join(work, f"in{index}.paes")
            aad_args = [] if aad is None else ["--aad", aad]
            must(paes("encrypt", *rargs, *aad_args, *seg, src, "-o", out), f"case {index}: paes encrypt")
            with open(out, "rb") as f:
                data = f.read()
            check(data[:16] == b"PAES\x03\x03\x20\x00\x00\x00\x00\x00"
                  + (SEGMENT if seg else 1 << 20).to_bytes(4, "big") and data[16:32] == bytes(16),
                  f"case {index}: preamble {data[:32].hex()} is not section 8.1's")
            for path, recipient in openers + ([(both, None)] if openers is ids else []):
                try:
                    got = decrypt_paes_v3(data, read_text(path), b"" if aad is None else aad.encode())
                except Exception as exc:  # noqa: BLE001
                    raise Failure(f"case {index} ({len(plain)} bytes, {' '.join(rargs + aad_args + seg)}): "
                                  f"decrypt_paes_v3 with {os.path.basename(path)} failed: {exc!r}")
                check(got == plain, f"case {index}: decrypt_paes_v3 with {os.path.basename(path)} gave "
                                    f"{len(got)} bytes that differ from the {len(plain)}-byte input")
                passed += 1

        # Tampering: a flipped byte in any stanza fails the MAC for the identity whose stanza is
        # intact (the other finds no stanza); a flipped MAC fails it for everyone. paes agrees.
        data = open(os.path.join(work, f"in{sizes.index(1)}.paes"), "rb").read()
        tampered = [(f"stanza {k}", flip_b64_char(data, off)) for k, off in enumerate(stanza_offsets(data))]
        tampered.append(("the MAC", flip_b64_char(data, header_end(data) + 4)))
        for what, bad in tampered:
            errors = []
            for path, _ in ids:
                try:
                    decrypt_paes_v3(bad, read_text(path))
                    raise Failure(f"a flipped byte in {what}: decrypt_paes_v3 with {path} succeeded")
                except ValueError as exc:
                    errors.append(str(exc))
            check(errors.count("header MAC mismatch") >= len(ids) - (what != "the MAC"),
                  f"a flipped byte in {what}: this reader's errors were {errors}, expected the header MAC")
            bad_path = os.path.join(work, "tampered.paes")
            with open(bad_path, "wb") as f:
                f.write(bad)
            for path, _ in ids:
                proc = paes("decrypt", "-i", path, bad_path)
                check(proc.returncode == 1 and proc.stdout == b"",
                      f"a flipped byte in {what}: paes decrypt -i {path}: exit {proc.returncode}, "
                      f"{len(proc.stdout)} bytes out")
            passed += 1

        # An identity that is no recipient matches no stanza.
        stranger, _ = new_identity(work, "stranger.txt", "paes")
        try:
            decrypt_paes_v3(data, read_text(stranger))
            raise Failure("decrypt_paes_v3 with a non-recipient's identity succeeded")
        except ValueError as exc:
            check(str(exc) == "no identity matches", f"non-recipient: unexpected error {exc!r}")
        passed += 1
    except Failure as exc:
        print(f"v3_reader.py: FAIL: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"v3_reader.py: OK: {passed} checks passed (paes {PAES})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
