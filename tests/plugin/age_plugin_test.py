#!/usr/bin/env python3
"""age-plugin-test: an age plugin named `test`, written from C2SP age-plugin.md, for paes' tests.

  age-plugin-test --age-plugin=recipient-v1 | --age-plugin=identity-v1   (run by an age client)
  age-plugin-test --generate [--pin]      prints "# recipient: age1test1..." and AGE-PLUGIN-TEST-1...

Keys. An identity is Bech32 (BIP-173, not Bech32m, no 90-character limit) under the HRP
"AGE-PLUGIN-TEST-" (written in upper case) of 1 flags byte (bit 0: a PIN is needed, the other
bits zero) and a 32-byte X25519 private key; its recipient is Bech32 under "age1test" of the same
flags byte and the X25519 public key. A file key is wrapped as age wraps it for X25519, with its
own stanza type and HKDF info:

  -> test Base64(ephemeral share)
  Base64(ChaCha20-Poly1305(key = HKDF-SHA-256(ikm = X25519(e, public), salt = share || public,
                                              info = "paes-test-plugin/v1"), nonce = 0, file key))

recipient-v1 wraps every file key to every recipient and identity (add-identity: to the
identity's public key); identity-v1 trial-unwraps every `test` stanza with every identity and
answers `file-key N` for each file it opens, `error stanza N I` (I: the stanza's place among
those of file N, from 0) for a malformed `test` stanza, `error identity N` for an identity that
is not this plugin's or whose PIN was not given. Phase 1 ignores unknown commands (grease) and
`extension-labels` (no `labels` is sent: an empty label set). In phase 2 the plugin sends a
grease command of its own (`paes-grease-...`, random arguments and body) first and last, and
requires the answer `unsupported`. A PIN identity costs one `request-secret` ("Enter PIN for
test key") per session, and only when a `test` stanza is there to try; the PIN is 1234.

Environment (age and paes pass theirs to a plugin):
  PAES_TEST_PLUGIN_MSG=TEXT      phase 2 begins with `msg` TEXT (any bytes but NUL)
  PAES_TEST_PLUGIN_CONFIRM=1     then `confirm` (Yes / No); anything but `ok yes` is an error internal
  PAES_TEST_PLUGIN_LOG=PATH      appends "[STATE-MACHINE]" at the start, then each command received,
                                 phase 2's answers included: its words, one line each, bodies left out
  PAES_TEST_PLUGIN_FAULT=        a misbehaviour in phase 2, after the first grease:
    garbage       non-protocol bytes (NUL, 0xff, an escape sequence, no "-> ")
    early-exit    exits 1 without `done`, after one recipient-stanza / file-key was answered
    long-line     a `msg` whose body is one line of 1 MiB (age's body lines hold 64 columns)
    many-stanzas  100,000 copies of its recipient-stanza (recipient-v1); 100,000 `file-key 0`
                  (identity-v1: a file index may have one file key)
    huge-body     a recipient-stanza (file-key) whose body is 64 MiB of base64
    error         `error internal` whose message holds ESC[31m, BEL, BS, CR, DEL, a newline, 0xff
    bad-file-key  identity-v1: `file-key 0` of 15 bytes (recipient-v1 ignores it)
    bad-index     a recipient-stanza for file index 1 of one file key; identity-v1: `file-key 0`,
                  then `file-key 1` of a session of one file
    no-reply      never writes: waits for the end of its input, then exits 1
    hang          never writes nor exits, its input's end and SIGINT ignored (a plugin stuck on
                  its device): only a signal to its process that ends it, SIGTERM or SIGKILL, does
  After a fault that breaks the protocol the plugin reads to the end of its input and exits 1; where
  the client answers as if nothing were wrong (long-line, huge-body, bad-*), it carries on.

A client's malformed command (bad Base64, a body line over 64 columns, a known command with the
wrong arguments) ends the plugin: a message on stderr, exit 1, or `error internal` in phase 2.
Needs Python 3.11 and the package `cryptography`.
"""

import base64
import binascii
import os
import random
import signal
import string
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

NAME = "test"
RECIPIENT_HRP = "age1" + NAME
IDENTITY_HRP = "AGE-PLUGIN-" + NAME.upper() + "-"
STANZA_TYPE = b"test"
HKDF_INFO = b"paes-test-plugin/v1"
FLAG_PIN = 1
PIN = b"1234"
PIN_PROMPT = b"Enter PIN for test key"
FILE_KEY_LEN = 16
COLUMNS = 64

# ---------------------------------------------------------------- Bech32 (BIP-173)

# BIP-173's checksum and alphabet are the tests' (tests/harness/bech32.py); the strict
# decoding age-plugin.md's keys need is here.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness.bech32 import BECH32_CHARSET as CHARSET  # noqa: E402
from harness.bech32 import bech32_hrp_expand as _hrp_expand  # noqa: E402
from harness.bech32 import bech32_polymod as _polymod  # noqa: E402


def bech32_encode(hrp, data):
    """Bech32 of `data` under `hrp`, in the case of `hrp` (all upper or all lower)."""
    lower = hrp.lower()
    acc, bits, words = 0, 0, []
    for byte in data:
        acc, bits = acc << 8 | byte, bits + 8
        while bits >= 5:
            bits -= 5
            words.append(acc >> bits & 31)
    if bits:
        words.append(acc << 5 - bits & 31)
    check = _polymod(_hrp_expand(lower) + words + [0] * 6) ^ 1
    words += [check >> 5 * (5 - i) & 31 for i in range(6)]
    text = lower + "1" + "".join(CHARSET[w] for w in words)
    return text.upper() if hrp.isupper() else text


def bech32_decode(text):
    """(hrp as written, bytes); ValueError for anything but strict Bech32 (one case, a valid
    checksum, zero padding of under 5 bits). No length limit."""
    if text != text.lower() and text != text.upper():
        raise ValueError("mixed case")
    if any(not 33 <= ord(c) <= 126 for c in text):
        raise ValueError("a character outside Bech32's range")
    pos = text.rfind("1")
    if pos < 1 or len(text) - pos - 1 < 6:
        raise ValueError("no separator, an empty HRP or a short checksum")
    hrp, rest = text[:pos], text[pos + 1:].lower()
    if any(c not in CHARSET for c in rest):
        raise ValueError("a character outside Bech32's alphabet")
    words = [CHARSET.index(c) for c in rest]
    if _polymod(_hrp_expand(hrp.lower()) + words) != 1:
        raise ValueError("bad checksum")
    acc, bits, out = 0, 0, bytearray()
    for w in words[:-6]:
        acc, bits = acc << 5 | w, bits + 5
        if bits >= 8:
            bits -= 8
            out.append(acc >> bits & 0xff)
    if bits >= 5 or acc & ((1 << bits) - 1):
        raise ValueError("bad padding")
    return hrp, bytes(out)


# ---------------------------------------------------------------- keys and the stanza


def _hkdf(ikm, salt, info, length=32):
    return HKDF(hashes.SHA256(), length, salt, info).derive(ikm)


def make_identity(pin=False, private=None):
    """(identity string, recipient string) of a new key (or of the 32-byte `private`)."""
    key = X25519PrivateKey.from_private_bytes(private) if private else X25519PrivateKey.generate()
    flags = bytes([FLAG_PIN if pin else 0])
    return (bech32_encode(IDENTITY_HRP, flags + key.private_bytes_raw()),
            bech32_encode(RECIPIENT_HRP, flags + key.public_key().public_bytes_raw()))


def _parse(text, hrp):
    got, data = bech32_decode(text)
    if got.lower() != hrp.lower():
        raise ValueError(f"not a {hrp}1... string")
    if len(data) != 33:
        raise ValueError(f"{len(data)} bytes, not 33")
    if data[0] & ~FLAG_PIN:
        raise ValueError(f"unknown flags {data[0]:#04x}")
    return data[0], data[1:]


def parse_identity(text):
    """(flags, X25519 private key) of an AGE-PLUGIN-TEST-1... identity; ValueError if it is not one."""
    if text != text.upper():
        raise ValueError("an identity is upper case")
    return _parse(text, IDENTITY_HRP)


def parse_recipient(text):
    """(flags, X25519 public key) of an age1test1... recipient; ValueError if it is not one."""
    if text != text.lower():
        raise ValueError("a recipient is lower case")
    return _parse(text, RECIPIENT_HRP)


def public_of(private):
    return X25519PrivateKey.from_private_bytes(private).public_key().public_bytes_raw()


def wrap(public, file_key):
    """(ephemeral share, wrapped file key): the `test` stanza's argument and body."""
    e = X25519PrivateKey.generate()
    share = e.public_key().public_bytes_raw()
    shared = e.exchange(X25519PublicKey.from_public_bytes(public))
    return share, ChaCha20Poly1305(_hkdf(shared, share + public, HKDF_INFO)).encrypt(bytes(12), file_key, None)


def unwrap(private, share, body):
    """The file key in a `test` stanza (share, body) for `private`, or None when it is not for it."""
    try:
        shared = X25519PrivateKey.from_private_bytes(private).exchange(X25519PublicKey.from_public_bytes(share))
    except ValueError:  # a low-order share: the shared secret would be all zeros
        return None
    try:
        return ChaCha20Poly1305(_hkdf(shared, share + public_of(private), HKDF_INFO)).decrypt(bytes(12), body, None)
    except InvalidTag:
        return None


def b64encode(data):
    return base64.b64encode(data).rstrip(b"=")


def b64decode(text):
    """Canonical unpadded standard Base64 (RFC 4648 3.5); ValueError otherwise."""
    if b"=" in text or len(text) % 4 == 1:
        raise ValueError("not unpadded Base64")
    try:
        data = base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError(str(exc)) from None
    if b64encode(data) != text:
        raise ValueError("non-canonical Base64")
    return data


def encode_stanza(args, body=b""):
    """age's stanza text: "-> " args, then the body's Base64 in 64-column lines and a shorter last."""
    b = b64encode(body)
    lines = [b[i:i + COLUMNS] for i in range(0, len(b), COLUMNS)]
    if not lines or len(lines[-1]) == COLUMNS:
        lines.append(b"")
    return b"-> " + b" ".join(args) + b"\n" + b"".join(line + b"\n" for line in lines)


def stanza_text(share, body):
    """The whole `test` stanza as it stands in a header."""
    return encode_stanza([STANZA_TYPE, b64encode(share)], body)


def parse_stanza(args, body):
    """(share, wrapped key) of a `test` stanza's arguments (type excluded) and body; ValueError
    when it is malformed."""
    if len(args) != 1:
        raise ValueError(f"{len(args)} arguments, not 1")
    share = b64decode(args[0])
    if len(share) != 32:
        raise ValueError(f"a share of {len(share)} bytes")
    if len(body) != FILE_KEY_LEN + 16:
        raise ValueError(f"a body of {len(body)} bytes")
    return share, body


# ---------------------------------------------------------------- the IPC


class ProtocolError(Exception):
    pass


class Channel:
    """Stanzas over stdin and stdout; every one received is logged (PAES_TEST_PLUGIN_LOG)."""

    def __init__(self, machine):
        self.inp, self.out = sys.stdin.buffer, sys.stdout.buffer
        log = os.environ.get("PAES_TEST_PLUGIN_LOG")
        self.log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if log else None
        self.log(f"[{machine}]".encode())

    def log(self, line):
        if self.log_fd is not None:
            os.write(self.log_fd, line + b"\n")

    def read(self):
        """(words, body) of the next stanza; None at the end of the input."""
        line = self.inp.readline()
        if not line:
            return None
        if not line.startswith(b"-> ") or not line.endswith(b"\n"):
            raise ProtocolError(f"not a stanza line: {line[:80]!r}")
        words = line[3:-1].split(b" ")
        if any(not w or any(not 0x21 <= c <= 0x7e for c in w) for w in words):
            raise ProtocolError(f"a malformed stanza line: {line[:80]!r}")
        self.log(b" ".join(words))
        text = b""
        while True:
            body_line = self.inp.readline()
            if not body_line.endswith(b"\n"):
                raise ProtocolError("the input ended inside a stanza body")
            if len(body_line) > COLUMNS + 1:
                raise ProtocolError(f"a body line of {len(body_line) - 1} columns")
            text += body_line[:-1]
            if len(body_line) < COLUMNS + 1:
                break
        try:
            return words, b64decode(text)
        except ValueError as exc:
            raise ProtocolError(f"the body of {words[0]!r}: {exc}") from None

    def write_raw(self, data):
        self.out.write(data)
        self.out.flush()

    def send(self, args, body=b""):
        self.write_raw(encode_stanza(args, body))

    def ask(self, args, body=b""):
        """Sends a phase-2 command; returns the answer's (words, body)."""
        self.send(args, body)
        answer = self.read()
        if answer is None:
            raise ProtocolError(f"the client closed the connection after {args[0].decode()}")
        return answer

    def ask_ok(self, args, body=b""):
        words, _ = self.ask(args, body)
        if words != [b"ok"]:
            raise ProtocolError(f"{args[0].decode()} answered {b' '.join(words)!r}, not ok")

    def read_phase1(self):
        """The client's phase 1, up to `done`: a list of (words, body)."""
        commands = []
        while True:
            stanza = self.read()
            if stanza is None:
                raise ProtocolError("the input ended in phase 1")
            if stanza[0] == [b"done"]:
                return commands
            commands.append(stanza)

    def drain_and_exit(self, code=1):
        """Reads to the end of the input (the client closes it, or ends us), then exits."""
        try:
            while self.inp.read(1 << 16):
                pass
        finally:
            os._exit(code)


def grease(channel):
    """A command no phase defines, random arguments and body; the answer must be `unsupported`."""
    alphabet = string.ascii_letters + string.digits + string.punctuation
    name = "paes-grease-" + "".join(random.choice(string.ascii_lowercase) for _ in range(random.randint(1, 8)))
    args = ["".join(random.choice(alphabet) for _ in range(random.randint(1, 20))) for _ in range(random.randint(0, 3))]
    body = os.urandom(random.choice((0, 1, 47, 48, 49, 96, random.randint(0, 300))))
    words, _ = channel.ask([name.encode(), *(a.encode() for a in args)], body)
    if words != [b"unsupported"]:
        return f"the client answered the grease command {name} with {b' '.join(words)!r}, not unsupported"
    return None


def interact(channel):
    """msg and confirm, as the environment asks; an error message for `error internal`, or None."""
    message = os.environb.get(b"PAES_TEST_PLUGIN_MSG")
    if message is not None:
        words, _ = channel.ask([b"msg"], message)
        if words not in ([b"ok"], [b"fail"]):
            return f"msg answered {b' '.join(words)!r}"
    if os.environ.get("PAES_TEST_PLUGIN_CONFIRM") == "1":
        words, _ = channel.ask([b"confirm", b64encode(b"Yes"), b64encode(b"No")], b"Use the test plugin?")
        if words != [b"ok", b"yes"]:
            return f"not confirmed (confirm answered {b' '.join(words).decode(errors='replace')})"
    return grease(channel)


def fault():
    return os.environ.get("PAES_TEST_PLUGIN_FAULT", "")


ERROR_MESSAGE = (b"test plugin failure \x1b[31mRED\x1b[0m bell\x07 back\x08 del\x7f cr\rover "
                 b"\x1b]0;title\x07 line one\nline two \xff\xfe end")


def early_faults(channel):
    """The faults that strike at the start of phase 2 (after interact); True when one ran and the
    session carries on."""
    kind = fault()
    if kind == "garbage":
        channel.write_raw(b"\x00\xff\xfeGARBAGE \x1b[2J\x1b[31m not a stanza\x00\n")
        channel.drain_and_exit()
    if kind == "no-reply":
        channel.drain_and_exit()
    if kind == "hang":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            signal.pause()
    if kind == "long-line":
        channel.write_raw(b"-> msg\n" + b"A" * (1 << 20) + b"\n")
        channel.read()
        return True
    if kind == "error":
        channel.ask_ok([b"error", b"internal"], ERROR_MESSAGE)
        channel.send([b"done"])
        channel.drain_and_exit(0)
    return False


def send_huge(channel, args):
    """A command whose body is 64 MiB of Base64 (zeros), written a MiB at a time."""
    channel.out.write(b"-> " + b" ".join(args) + b"\n")
    block = (b"A" * COLUMNS + b"\n") * (1 << 14)
    for _ in range(64):
        channel.out.write(block)
    channel.out.write(b"\n")
    channel.out.flush()
    channel.read()


def finish(channel, errors, last_grease=True):
    """Sends `errors` ((words, message) each), a last grease, then done."""
    for words, message in errors:
        channel.ask_ok(words, message.encode() if isinstance(message, str) else message)
    problem = grease(channel) if last_grease else None
    if problem:
        channel.ask_ok([b"error", b"internal"], problem.encode())
    channel.send([b"done"])


# ---------------------------------------------------------------- recipient-v1


def recipient_v1(channel):
    recipients, identities, file_keys, errors = [], [], [], []
    for words, body in channel.read_phase1():
        cmd, args = words[0], words[1:]
        if cmd == b"add-recipient" and len(args) == 1:
            recipients.append(args[0].decode())
        elif cmd == b"add-identity" and len(args) == 1:
            identities.append(args[0].decode())
        elif cmd == b"wrap-file-key" and not args:
            if len(body) != FILE_KEY_LEN:
                errors.append(([b"error", b"internal"], f"wrap-file-key {len(file_keys)}: {len(body)} bytes"))
            file_keys.append(body)
        elif cmd in (b"add-recipient", b"add-identity", b"wrap-file-key"):
            errors.append(([b"error", b"internal"], f"malformed {cmd.decode()}: {len(args)} arguments"))
        # extension-labels and grease: ignored (no labels: an empty label set)

    problem = interact(channel)
    if problem:
        return finish(channel, [([b"error", b"internal"], problem)], last_grease=False)
    early_faults(channel)
    publics = []
    for i, text in enumerate(recipients):
        try:
            publics.append(parse_recipient(text)[1])
        except ValueError as exc:
            errors.append(([b"error", b"recipient", str(i).encode()], f"{text[:40]}: {exc}"))
    for i, text in enumerate(identities):
        try:
            publics.append(public_of(parse_identity(text)[1]))
        except ValueError as exc:
            errors.append(([b"error", b"identity", str(i).encode()], f"identity {i}: {exc}"))
    if errors:
        return finish(channel, errors)

    kind = fault()
    stanzas = [(j, wrap(public, key)) for j, key in enumerate(file_keys) for public in publics]
    if kind == "bad-index" and stanzas:
        stanzas[0] = (len(file_keys), stanzas[0][1])
    for n, (j, (share, body)) in enumerate(stanzas):
        args = [b"recipient-stanza", str(j).encode(), STANZA_TYPE, b64encode(share)]
        if kind == "huge-body" and n == 0:
            send_huge(channel, args)
            continue
        if kind == "many-stanzas" and n == 0:
            for _ in range(100_000):
                channel.ask(args, body)
            continue
        channel.ask_ok(args, body)
        if kind == "early-exit":
            sys.stderr.write("age-plugin-test: exiting early (PAES_TEST_PLUGIN_FAULT=early-exit)\n")
            os._exit(1)
    finish(channel, [])


# ---------------------------------------------------------------- identity-v1


def identity_v1(channel):
    identities, files, errors = [], {}, []   # files: index -> [(type, args, body)] in order received
    last = -1
    for words, body in channel.read_phase1():
        cmd, args = words[0], words[1:]
        if cmd == b"add-identity" and len(args) == 1:
            identities.append(args[0].decode())
        elif cmd == b"recipient-stanza" and len(args) >= 2 and args[0].isdigit():
            index = int(args[0])
            if index < last:
                errors.append(([b"error", b"internal"], f"file index {index} after {last}"))
            last = max(last, index)
            files.setdefault(index, []).append((args[1], args[2:], body))
        elif cmd in (b"add-identity", b"recipient-stanza"):
            errors.append(([b"error", b"internal"], f"malformed {cmd.decode()}"))

    problem = interact(channel)
    if problem:
        return finish(channel, [([b"error", b"internal"], problem)], last_grease=False)
    early_faults(channel)
    keys = []
    for i, text in enumerate(identities):
        try:
            keys.append((i, *parse_identity(text)))
        except ValueError as exc:
            errors.append(([b"error", b"identity", str(i).encode()], f"identity {i}: {exc}"))
    if errors:  # unknown or invalid identities: no unwrapping at all
        return finish(channel, errors)

    todo = {}   # file index -> [(share, body)]
    for index, stanzas in sorted(files.items()):
        ours = []
        for n, (kind, args, body) in enumerate(stanzas):
            if kind != STANZA_TYPE:
                continue
            try:
                ours.append(parse_stanza(args, body))
            except ValueError as exc:
                errors.append(([b"error", b"stanza", str(index).encode(), str(n).encode()], f"test stanza: {exc}"))
                ours = None
                break
        if ours:
            todo[index] = ours
    for words, message in errors:
        channel.ask_ok(words, message.encode())
    errors = []

    usable = []
    for i, flags, private in keys:
        if flags & FLAG_PIN and todo:
            words, secret = channel.ask([b"request-secret"], PIN_PROMPT)
            if words != [b"ok"] or secret != PIN:
                why = "no PIN given" if words != [b"ok"] else "wrong PIN"
                errors.append(([b"error", b"identity", str(i).encode()], f"test key {i}: {why}"))
                continue
        usable.append(private)

    kind = fault()
    for index, stanzas in todo.items():
        file_key = next((k for s, b in stanzas for p in usable if (k := unwrap(p, s, b)) is not None), None)
        if file_key is None:
            continue
        if kind == "bad-file-key":
            file_key = file_key[:15]
        if kind == "huge-body":
            send_huge(channel, [b"file-key", str(index).encode()])
            continue
        if kind == "many-stanzas":
            for _ in range(100_000):
                channel.ask([b"file-key", str(index).encode()], file_key)
            continue
        if kind == "bad-file-key":
            channel.ask([b"file-key", str(index).encode()], file_key)
            continue
        channel.ask_ok([b"file-key", str(index).encode()], file_key)
        if kind == "early-exit":
            sys.stderr.write("age-plugin-test: exiting early (PAES_TEST_PLUGIN_FAULT=early-exit)\n")
            os._exit(1)
        if kind == "bad-index":
            channel.ask([b"file-key", str(max(files) + 1).encode()], file_key)
    finish(channel, errors)


# ---------------------------------------------------------------- main


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # a client that hangs up ends us quietly
    if argv[:1] == ["--generate"] and set(argv[1:]) <= {"--pin"}:
        identity, recipient = make_identity(pin="--pin" in argv)
        print(f"# recipient: {recipient}\n{identity}")
        return 0
    if len(argv) == 1 and argv[0].startswith("--age-plugin="):
        machine = argv[0].partition("=")[2]
        run = {"recipient-v1": recipient_v1, "identity-v1": identity_v1}.get(machine)
        if run is None:
            print(f"age-plugin-test: unknown state machine {machine!r}: refusing to start", file=sys.stderr)
            return 1
        channel = Channel(machine)
        try:
            run(channel)
        except ProtocolError as exc:
            print(f"age-plugin-test: {exc}", file=sys.stderr)
            return 1
        return 0
    print("usage: age-plugin-test --age-plugin=recipient-v1|identity-v1 | --generate [--pin]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
