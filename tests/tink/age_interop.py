"""age's payload and paes' version-3 files built around stanzas, for the interop scripts that move
a stanza between an age file and a paes file (scrypt_interop, ssh_interop, plugin_interop), and a
pseudo-terminal for the tools that read secrets from /dev/tty only.

Needs the Python packages `tink` and `cryptography`: a script imports this after checking them.
"""

import base64
import fcntl
import os
import select
import subprocess
import tempfile
import termios
import time

from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from recipients_commit import body_ikm, mac_line
from tink_raw_key import tink_encrypt, tink_streaming_aead
from harness.sealed_format import hkdf_sha256

AGE_VERSION_LINE = b"age-encryption.org/v1\n"
AGE_CHUNK = 64 << 10
SEGMENT = 4096


def b64(text):
    """age's base64: the standard alphabet without padding."""
    return base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)


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


def run_on_terminal(cmd, passphrase, timeout=120):
    """Runs `cmd` with a new pseudo-terminal as its controlling terminal (age opens /dev/tty),
    typing `passphrase` at every prompt that asks for one; stdin /dev/null, stdout and stderr
    to files (a pipe would fill while the terminal is served). Returns (a CompletedProcess with
    stdout and stderr, what the terminal showed)."""
    master, slave = os.openpty()

    def take_terminal():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                preexec_fn=take_terminal, pass_fds=(slave,))
        os.close(slave)
        screen, typed = b"", 0
        deadline = time.monotonic() + timeout
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if not select.select([master], [], [], 0.05)[0]:
                    continue
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the terminal's last user is gone
                    break
                screen += chunk
                while screen.lower().count(b"passphrase") > typed:
                    os.write(master, passphrase.encode() + b"\n")
                    typed += 1
            proc.wait(timeout=max(1, deadline - time.monotonic()))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(master)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read()), screen


