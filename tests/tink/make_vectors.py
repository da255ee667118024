#!/usr/bin/env python3
"""Writes tests/data/tink/aes_gcm_hkdf_streaming_vectors.json.

Two kinds of vectors:
  * "official": copied by hand from Tink's own test vectors,
    tink-crypto/tink-java src/main/java/com/google/crypto/tink/streamingaead/internal/testing/
    AesGcmHkdfStreamingTestUtil.java (createTestVector0..7; vector 0 is also
    tink-crypto/tink-cross-lang-tests cross_language/cross_language/streaming_aead/
    aes_gcm_hkdf_streaming_key_test.py test_manually_created_test_vector). Most use HKDF-SHA1
    or a derived key size other than the key size, which paes does not offer: they are kept
    (paes_compatible false) to check the Tink side, and only the compatible ones go to paes.
  * "generated": made here with tink-python (the reference implementation) with fixed keys,
    plaintexts and associated data; Tink picks the salt and nonce prefix at random, so running
    this again gives different (equally valid) ciphertexts.

Every vector is decrypted with Tink before the file is written.
Run with a Python that has `tink`:  /tmp/tinkvenv/bin/python tests/tink/make_vectors.py
"""

import hashlib
import json
import os
import sys
from importlib import metadata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tink_raw_key import tink_decrypt, tink_encrypt, tink_streaming_aead  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "tink", "aes_gcm_hkdf_streaming_vectors.json")

JAVA_SRC = ("tink-crypto/tink-java src/main/java/com/google/crypto/tink/streamingaead/internal/"
            "testing/AesGcmHkdfStreamingTestUtil.java")
K16 = "6eb56cdc726dfbe5d57f2fcdc6e9345b"
K32 = "00112233445566778899aabbccddeeff6eb56cdc726dfbe5d57f2fcdc6e9345b"
MSG0 = b"This is a fairly long plaintext. It is of the exact length to create three output blocks. "

# (name, key, hkdf hash, derived key size, segment size, plaintext, aad, ciphertext hex)
OFFICIAL = [
    ("createTestVector0 (cross-language test_manually_created_test_vector)", K16, "SHA1", 16, 64,
     MSG0, b"aad",
     "18" "93b3af5e14ab378d065addfc8484da64" "2c0862877baea8"
     "db92d9c77406a406168478821c4298eab3e6d531277f4c1a051714faebcaefcbca7b7be05e9445ea"
     "a0bb2904153398a25084dd80ae0edcd1c3079fcea2cd3770630ee36f7539207b8ec9d754956d486b71cdf989f0"
     "ed6fba"
     "6779b63558be0a66e668df14e1603cd2"
     "af8944844078345286d0b292e772e7190775c51a0f83e40c0b75821027e7e538e111"),
    ("createTestVector1 (empty plaintext, empty aad)", K16, "SHA1", 16, 64, b"", b"",
     "18ec99b2c3884194023bd41bb9bff309205354c750fa0cb3c0d02609abf71f88eaeaa48d7deca27f"),
    ("createTestVector2 (SHA256)", K16, "SHA256", 16, 64, b"", b"",
     "18be78bce0cab6fd38a9041eea8ab0ffc4cf17e3c00b661d3927f5f79069f41a210fedc40b25648c"),
    ("createTestVector3 (SHA512)", K16, "SHA512", 16, 64, b"", b"",
     "18fec8139ccb406e0f140d7e2bcc41e1b899bc1b121574cc31d1c78ed2ca1cdf324665b8dce21095"),
    ("createTestVector4 (32 byte key)", K32, "SHA1", 16, 64, b"", b"",
     "180880e85a24207a7b72cefde26306ed09d7d76e58104b751d005a3ffd72dd6151f0d9c8ccf163f7"),
    ("createTestVector5 (derived key size 32)", K32, "SHA1", 32, 64, b"", b"",
     "28fae780c70a82d1256c8303a1261ac6a98cf557b4e173967a62f3c149517ba5b2431da93b3c6e90f508b34dc1"
     "4bfda59bab05681c6ad3fa"),
    ("createTestVector6 (segment size 128)", K32, "SHA1", 32, 128, b"", b"",
     "28fae780c70a82d1256c8303a1261ac6a98cf557b4e173967a62f3c149517ba5b2431da93b3c6e90f508b34dc1"
     "4bfda59bab05681c6ad3fa"),
    ("createTestVector7 (segment size 120, 64-byte plaintext, aad 00010203)", K32, "SHA1", 32, 120,
     b"BLOCK 1.BLOCK 2.BLOCK 3.BLOCK 4.BLOCK 5.BLOCK 6.BLOCK 7.BLOCK 8.", bytes([0, 1, 2, 3]),
     "28782994617714a80fa085e15051a16854522330d6d0f26c049b2192f09cdd98b2eb90c753bfff277a29e54f"
     "a4afb15d648c28477eb07f012535c767f5fdce24ffffae318480c1d37357d6d3c511159318afa09ef38aa3f5"
     "456fd7817c5c02dd6e1a7fef174c8bd24e38b5982ac105497c0101ac5581fe5b"),
]


def pattern(n, seed):
    """n deterministic bytes (SHA-256 in counter mode over `seed`)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(seed + i.to_bytes(4, "big")).digest()
        i += 1
    return bytes(out[:n])


KEY128 = pattern(16, b"paes tink key 128")
KEY256 = pattern(32, b"paes tink key 256")
AAD = "paes: associated data, UTF-8 \u00e9\u2713".encode()


def first(key, s):
    """Plaintext bytes that fit in segment 0: S - header_len - 16, header_len = 1 + len(key) + 7."""
    return s - (1 + len(key) + 7) - 16


# (name, key, segment size, plaintext length, aad)
GENERATED = [
    ("AES-128 S=64 empty plaintext, aad", KEY128, 64, 0, AAD),
    ("AES-256 S=4096 empty plaintext", KEY256, 4096, 0, b""),
    ("AES-128 S=64 1 byte", KEY128, 64, 1, b""),
    ("AES-256 S=128 1 byte, aad", KEY256, 128, 1, AAD),
    ("AES-128 S=64 exactly fills segment 0 (24 bytes)", KEY128, 64, first(KEY128, 64), b""),
    ("AES-128 S=64 segment 0 + 1 byte (25), aad", KEY128, 64, first(KEY128, 64) + 1, AAD),
    ("AES-128 S=64 exactly two full segments (24 + 48)", KEY128, 64, first(KEY128, 64) + 48, b""),
    ("AES-128 S=64 four full segments + 5 bytes (24 + 3 * 48 + 5), aad", KEY128, 64,
     first(KEY128, 64) + 3 * 48 + 5, AAD),
    ("AES-256 S=128 exactly fills segment 0 (72 bytes), aad", KEY256, 128, first(KEY256, 128),
     AAD),
    ("AES-256 S=128 segment 0 + 1 byte (73)", KEY256, 128, first(KEY256, 128) + 1, b""),
    ("AES-256 S=128 three segments, short last (72 + 112 + 30), aad", KEY256, 128,
     first(KEY256, 128) + 112 + 30, AAD),
    ("AES-256 S=100 (not a power of two) exactly three full segments (44 + 2 * 84)", KEY256, 100,
     first(KEY256, 100) + 2 * 84, b""),
    ("AES-128 S=41 (Tink's minimum: segment 0 holds 1 byte) 30 bytes, aad", KEY128, 41, 30, AAD),
    ("AES-256 S=57 (Tink's minimum: segment 0 holds 1 byte) 20 bytes", KEY256, 57, 20, b""),
    ("AES-128 S=4096 (Tink's 4KB templates) 300 bytes, aad", KEY128, 4096, 300, AAD),
    ("AES-256 S=1048576 (paes default, Tink's 1MB templates) 1000 bytes, aad", KEY256, 1 << 20,
     1000, AAD),
]


def main():
    version = metadata.version("tink")
    vectors = []
    for name, key_hex, hkdf_hash, dks, seg, pt, aad, ct_hex in OFFICIAL:
        key = bytes.fromhex(key_hex)
        vectors.append({
            "name": name, "source": f"{JAVA_SRC} {name.split()[0]}",
            "key": key_hex, "hkdf_hash": hkdf_hash, "derived_key_size": dks,
            "segment_size": seg, "aad": aad.hex(), "plaintext": pt.hex(), "ciphertext": ct_hex})
    for name, key, seg, n, aad in GENERATED:
        pt = pattern(n, name.encode())
        ct = tink_encrypt(tink_streaming_aead(key, seg), pt, aad)
        vectors.append({
            "name": name, "source": f"generated with tink-python {version}",
            "key": key.hex(), "hkdf_hash": "SHA256", "derived_key_size": len(key),
            "segment_size": seg, "aad": aad.hex(), "plaintext": pt.hex(), "ciphertext": ct.hex()})
    for v in vectors:
        key, aad = bytes.fromhex(v["key"]), bytes.fromhex(v["aad"])
        v["paes_compatible"] = (v["hkdf_hash"] == "SHA256" and v["derived_key_size"] == len(key)
                                and b"\0" not in aad and _utf8(aad))
        saead = tink_streaming_aead(key, v["segment_size"], v["hkdf_hash"], v["derived_key_size"])
        got = tink_decrypt(saead, bytes.fromhex(v["ciphertext"]), aad)
        if got.hex() != v["plaintext"]:
            sys.exit(f"vector {v['name']!r} does not decrypt to its plaintext")
    doc = {
        "description": "Tink AES-GCM-HKDF streaming AEAD vectors (raw key; ciphertext = Tink "
                       "header || segments). Fields are hex except segment_size and "
                       "derived_key_size. paes_compatible: HKDF-SHA256, derived key size = key "
                       "size, aad passable as --aad text.",
        "sources": [
            f"official: {JAVA_SRC} (createTestVector0..7); vector 0 also in "
            "tink-crypto/tink-cross-lang-tests cross_language/cross_language/streaming_aead/"
            "aes_gcm_hkdf_streaming_key_test.py (test_manually_created_test_vector)",
            f"generated: tests/tink/make_vectors.py with tink-python {version} (salt and nonce "
            "prefix random, chosen by Tink)",
        ],
        "verified_with": f"every ciphertext decrypted to its plaintext by tink-python {version}",
        "vectors": vectors,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {len(vectors)} vectors "
          f"({sum(v['paes_compatible'] for v in vectors)} paes-compatible) to {OUT}")


def _utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


if __name__ == "__main__":
    main()
