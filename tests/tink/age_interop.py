"""age's payload and paes' version-3 files built around stanzas, for the interop scripts that move
a stanza between an age file and a paes file (scrypt_interop, ssh_interop, plugin_interop), and
(from harness.terminal) a pseudo-terminal for the tools that read secrets from /dev/tty only.

Needs the Python packages `tink` and `cryptography`: a script imports this after checking them.
"""

import base64
import collections
import os

from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from recipients_commit import body_ikm, mac_line
from tink_raw_key import tink_encrypt, tink_streaming_aead
from harness.sealed_format import hkdf_sha256
from harness.terminal import run_on_terminal  # noqa: F401 (age_files and plugin_interop take it from here)

AGE_VERSION_LINE = b"age-encryption.org/v1\n"
AGE_CHUNK = 64 << 10
SEGMENT = 4096


def b64(text):
    """age's base64: the standard alphabet without padding."""
    return base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)


class Stanza(collections.namedtuple("Stanza", "type args body text")):
    """One stanza of an age (or paes version-3) header: its type and arguments (str), its body
    (bytes, decoded) and its text as it stood in the header, "-> " to the body's last LF."""


def stanza_text(type_, args, body):
    """age's stanza text: "-> " type and arguments, then the body's base64 (unpadded) in 64-column
    lines, the last one shorter (empty when the base64 fills its lines exactly)."""
    encoded = base64.b64encode(body).rstrip(b"=")
    lines = [encoded[i:i + 64] for i in range(0, len(encoded) + 1, 64)]
    return b" ".join([b"->", type_.encode(), *(a.encode() for a in args)]) + b"\n" + b"".join(x + b"\n" for x in lines)


def parse_stanzas(data, start):
    """([Stanza], offset of the "---" that ends them) of the stanzas at `start`, read as age.md
    writes them (a body line of 64 characters is followed by another); AssertionError when the
    bytes there are not stanzas and a "---"."""
    stanzas, pos = [], start
    try:
        while not data.startswith(b"---", pos):
            end = data.index(b"\n", pos)
            if not data.startswith(b"-> ", pos):
                raise ValueError("a stanza does not start with '-> '")
            type_, *args = data[pos + 3:end].decode("ascii").split(" ")
            body, line_start = b"", end + 1
            while True:
                line_end = data.index(b"\n", line_start)
                line = data[line_start:line_end]
                if len(line) > 64:
                    raise ValueError("a body line is longer than 64 columns")
                body, line_start = body + line, line_end + 1
                if len(line) < 64:
                    break
            stanzas.append(Stanza(type_, args, b64(body), data[pos:line_start]))
            pos = line_start
    except ValueError as exc:  # str.index, decode, b64 and the checks above
        raise AssertionError(f"no age stanzas at offset {start} ({exc}): {data[start:start + 200]!r}") from None
    return stanzas, pos


def age_payload(file_key, plain):
    """age's payload: a 16-byte nonce, then STREAM under HKDF(file key, nonce, "payload"):
    ChaCha20-Poly1305 of 64 KiB chunks, nonce = 11-byte big-endian counter || last flag."""
    nonce = os.urandom(16)
    aead = ChaCha20Poly1305(hkdf_sha256(file_key, nonce, b"payload"))
    chunks = [plain[i:i + AGE_CHUNK] for i in range(0, len(plain), AGE_CHUNK)] or [b""]
    return nonce + b"".join(aead.encrypt(i.to_bytes(11, "big") + bytes([i == len(chunks) - 1]), chunk, None)
                            for i, chunk in enumerate(chunks))


def paes_preamble(segment=SEGMENT):
    """The spec's version-3 preamble for a file key in stanzas: key source 03, AES-256."""
    return b"PAES" + bytes([3, 3, 32, 0, 0, 0, 0, 0]) + segment.to_bytes(4, "big") + bytes(16)


def paes_file(stanzas, file_key, plain, aad=b""):
    """A paes version-3 file: preamble, `stanzas`, the MAC line (over the aad too), Tink body."""
    preamble = paes_preamble()
    header = preamble + stanzas + b"---"
    body = tink_encrypt(tink_streaming_aead(body_ikm(file_key), SEGMENT), plain, preamble + aad)
    return header + mac_line(header + aad, file_key) + body




