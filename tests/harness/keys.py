"""Keys for key files: random raw bytes that paes cannot take for text."""

import os


def looks_like_text(data):
    """Whether paes takes `data` for text, which a key file may hold only as hex: printable
    ASCII and whitespace, or UTF-8 of those and characters from U+00A0 up, either after a
    UTF-8 byte-order mark or not."""
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(0x20 <= ord(c) < 0x7f or c in "\t\n\r\v\f" or ord(c) >= 0xa0 for c in text)


def random_raw_key(length):
    """Random key bytes a key file can hold raw: never text, which paes refuses (for 16
    bytes, about 1 draw in 200,000 would be)."""
    while True:
        key = os.urandom(length)
        if not looks_like_text(key):
            return key
