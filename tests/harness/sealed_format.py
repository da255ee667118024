"""The sealed format's arithmetic (docs/FORMAT.md), written from the document for the tests
that check paes' files against it: sizes, segment spans, boundary sizes, and the HKDF and
unpadded base64 of format version 3's header."""

import base64
import hashlib
import hmac

PREAMBLE_LEN = 32           # paes' preamble before the Tink stream
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


def sealed_len(n, seg, key_len):
    """The size of a sealed paes file holding n plaintext bytes."""
    return PREAMBLE_LEN + tink_ciphertext_len(n, seg, key_len)


def segment_spans(total, seg, key_len):
    """[(start, end)] of each segment in a sealed file of `total` bytes."""
    spans, start, end = [], PREAMBLE_LEN + header_len(key_len), PREAMBLE_LEN + seg
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
