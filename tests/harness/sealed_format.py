"""The sealed format's arithmetic (docs/FORMAT.md), written from the document for the tests
that check paes' files against it: sizes, segment spans, boundary sizes, and the HKDF and
unpadded base64 of format version 3's header.

paes writes format version 3 only: a raw-key file is the preamble, the header's MAC line (no
stanzas) and the Tink stream, so its Tink stream starts at RAW_KEY_HEADER_LEN; a file whose key
is in stanzas (passphrase, recipients) has a header of its own length before it."""

import base64
import hashlib
import hmac

PREAMBLE_LEN = 32           # paes' preamble, the first bytes of every paes file
MAC_LINE_LEN = 48           # the header's last line: "--- ", the MAC in 43 base64 characters, LF
RAW_KEY_HEADER_LEN = PREAMBLE_LEN + MAC_LINE_LEN   # a raw-key file's Tink stream starts here
TAG_LEN = 16                # AES-GCM's tag at the end of every segment
DEFAULT_SEGMENT = 1 << 20   # --segment-size's default
MAX_SEGMENT = 64 << 20      # paes' largest --segment-size


def header_len(key_len):
    """Tink's header: its length byte, the salt (key length) and a 7-byte nonce prefix."""
    return 1 + key_len + 7


def min_segment(key_len):
    """The smallest segment size, Tink's: one plaintext byte fits in segment 0."""
    return key_len + 25


def first_segment_capacity(seg, key_len):
    """Plaintext bytes in segment 0."""
    return seg - header_len(key_len) - TAG_LEN


def segment_count(n, seg, key_len):
    """The segments of a stream holding n plaintext bytes (segment 0 also holds the header)."""
    first, per = first_segment_capacity(seg, key_len), seg - TAG_LEN
    return 1 if n <= first else 1 + -(-(n - first) // per)


def tink_ciphertext_len(n, seg, key_len):
    """The length of Tink's stream (no paes preamble) holding n plaintext bytes."""
    return header_len(key_len) + n + TAG_LEN * segment_count(n, seg, key_len)


def sealed_len(n, seg, key_len, paes_header=RAW_KEY_HEADER_LEN):
    """The size of a sealed paes file holding n plaintext bytes, whose Tink stream starts at
    `paes_header` (a raw-key file's unless told)."""
    return paes_header + tink_ciphertext_len(n, seg, key_len)


def segment_spans(total, seg, key_len, paes_header=RAW_KEY_HEADER_LEN):
    """[(start, end)] of each segment in a sealed file of `total` bytes whose Tink stream
    starts at `paes_header` (a raw-key file's unless told)."""
    spans, start, end = [], paes_header + header_len(key_len), paes_header + seg
    while True:
        end = min(end, total)
        spans.append((start, end))
        if end >= total:
            return spans
        start, end = end, end + seg


def boundary_sizes(seg, key_len):
    """Plaintext sizes on and around the first three segment boundaries, a few tiny ones,
    and one inside the fourth segment."""
    first, per = first_segment_capacity(seg, key_len), seg - TAG_LEN
    sizes = {0, 1, 2, 15, 16, 17, first + 3 * per + 7}
    for edge in (first, first + per, first + 2 * per):
        sizes.update({edge - 1, edge, edge + 1})
    return sorted(sizes)


def v1_preamble(key_source, key_len, segment=DEFAULT_SEGMENT, log2_n=10, salt=bytes(16)):
    """A version-1 preamble (FORMAT.md sections 1 and 8.6), which paes reads only with
    --allow-uncommitted: key source 1 (raw key: no scrypt, a zero salt) or 2 (a passphrase:
    scrypt's log2 N, r = 8, p = 1 and salt)."""
    scrypt = bytes([log2_n, 8, 1]) if key_source == 2 else bytes(3)
    salt = salt if key_source == 2 else bytes(16)
    return b"PAES" + bytes([1, key_source, key_len]) + scrypt + bytes(2) + segment.to_bytes(4, "big") + salt


def v1_passphrase_key(passphrase, preamble):
    """A version-1 passphrase file's key: scrypt with the preamble's parameters and salt, L bytes."""
    n = 1 << preamble[7]
    return hashlib.scrypt(passphrase, salt=bytes(preamble[16:32]), n=n, r=preamble[8], p=preamble[9],
                          dklen=preamble[6], maxmem=256 * n * preamble[8] + (1 << 20))


def hkdf_sha256(ikm, salt, info, length=32):
    """HKDF-SHA256 (RFC 5869), extract then expand."""
    prk = hmac.new(salt or bytes(32), ikm, hashlib.sha256).digest()
    out, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
    return out[:length]


def b64_unpadded(data):
    """Base64 without '=' padding, as age and the version 3 header write it."""
    return base64.b64encode(data).rstrip(b"=")
