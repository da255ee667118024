#!/usr/bin/env python3
"""age v1 files (C2SP age.md) written and read by paes, checked against age 1.1.1 and rage, both ways.

  .venv/bin/python tests/tink/age_files.py --paes build/release/paes [TestClass ...]

`paes encrypt --format age` writes age's own files (X25519, ssh-ed25519 and ssh-rsa recipients,
or a scrypt passphrase stanza alone; -a: age's armor), and `paes decrypt` opens age files by
themselves, binary or armored, from a file or a pipe. Every plaintext is compared byte for byte:

  AgeToPaesTest          files `age` wrote open in paes: X25519 to 1, 2 and 5 recipients (with
                         each identity), ssh-ed25519 and ssh-rsa keys from ssh-keygen; binary and
                         armored (age -a); sizes 0, 1, 65535, 65536, 65537 and 3 MiB; the file
                         given by name (to -o) and on stdin (to stdout). Another identity: exit 1.
  PaesToAgeTest          files paes wrote open in `age -d -i`: the same recipients (-r, -R and
                         -i), binary and armored, the same sizes, paes reading a file and a pipe;
                         each file as long as age's format makes it (64 KiB chunks, the last
                         one full when the plaintext fills it).
  PassphraseTest         `age -p` (age's own work factor, the passphrase typed on a pseudo-
                         terminal) opens in paes (--passphrase-file, a pipe, paes' terminal
                         prompt); paes --passphrase-file --scrypt-log-n 10 opens in `age -d` (typed
                         on a terminal), binary and armored, from a file and a pipe.
  TamperTest             a 3 MiB file of age and one of paes (48 full chunks, two recipients),
                         each changed: a byte flipped in the header (either stanza, "---"), a MAC
                         character (also one only in the padding bits of its base64), the payload
                         nonce, a chunk, the last tag; cut in the header, nonce, inside a chunk,
                         exactly at a chunk boundary (a full non-final chunk left last);
                         chunks swapped; bytes, an empty 16-byte "chunk", a copied chunk appended;
                         armored ones too. paes: exit 1, one "paes: " line, nothing left in the
                         output directory (a file and a pipe in); `age -d` refuses each too.
  CraftedPayloadTest     payloads built here under a known file key (age.md's STREAM with
                         cryptography's ChaCha20-Poly1305): an empty final chunk after a full one,
                         a short non-final chunk, no final chunk, data after the final chunk:
                         refused by paes and age; the well-formed controls open in both.
  ArmorTest              paes' -a text is age's armor to the byte (64 columns, padded base64,
                         BEGIN/END lines), as age's own is; variants of age's armor (CRLF line
                         ends, no final newline, trailing white space, 76 columns, no padding,
                         text after END, ...) are accepted by paes exactly where age 1.1.1
                         accepts them, but for white space before BEGIN (up to 1024 bytes), which
                         age's command line refuses and paes takes, as age's armor reader and
                         CCTV's armor_whitespace_outside do.
  PyrageTest             rage (the PyPI package pyrage) opens paes' X25519 files and paes opens
                         rage's, binary and armored, sizes 0 to 3 MiB.
  PyragePassphraseTest   the same with passphrases (pyrage.passphrase).
  OptionsTest            encrypt --format age refuses --aad, --aad-file, --segment-size, -k,
                         --key-env, --key-bits and --mode (exit 2, one line, nothing written);
                         --backend openssl is noted and does not stop it; decrypt refuses
                         --aad for an age file (exit 2), and --format age for a paes file
                         (exit 1); -f replaces an output, none without it.

Needs the Python packages `tink` and `cryptography` (exit 77 without them); each class that runs
age, ssh-keygen or pyrage skips, saying why, without it. Exits non-zero when a test fails.
"""

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import tink  # noqa: F401
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
except ImportError as exc:  # the whole file needs both
    print(f"age_files.py: SKIP: the Python packages `tink` and `cryptography` are needed ({exc}); "
          f"run with scripts/setup.sh's .venv", file=sys.stderr)
    sys.exit(77)

try:
    import pyrage
    NO_PYRAGE = None
except ImportError as exc:
    pyrage = None
    NO_PYRAGE = f"the Python package `pyrage` is not importable ({exc}); scripts/setup.sh installs it into .venv"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from age_interop import AGE_CHUNK, AGE_VERSION_LINE, run_on_terminal  # noqa: E402
from recipients_commit import mac_line, x25519_stanza  # noqa: E402
from ssh_interop import SshTestCase, parse_header, run_tool  # noqa: E402
from harness import (bech32_decode, describe, error_lines, read_file, run_paes, run_test_script,  # noqa: E402
                     write_file)
from harness.sealed_format import hkdf_sha256  # noqa: E402

PAES = "paes"
AGE = shutil.which("age")
AGE_KEYGEN = shutil.which("age-keygen")
NO_AGE = "age and age-keygen are not installed (age 1.1.1 is the peer these tests check paes against)"
PASSPHRASE = "age files: one secret, three tools"   # without the word run_on_terminal counts prompts by
SEALED_CHUNK = AGE_CHUNK + 16                       # a full chunk and its Poly1305 tag
NONCE_LEN = 16
MiB = 1 << 20
SIZES = (0, 1, AGE_CHUNK - 1, AGE_CHUNK, AGE_CHUNK + 1, 3 * MiB)
ARMOR_BEGIN = b"-----BEGIN AGE ENCRYPTED FILE-----"
ARMOR_END = b"-----END AGE ENCRYPTED FILE-----"
SSH_KEYS = (("id_ed25519", "ed25519", None, False), ("id_rsa", "rsa", 3072, False))   # SshTestCase.KEYS
B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


# ---------------------------------------------------------------- age's format, written from age.md

def armor(binary):
    """age's armor of `binary`: the BEGIN line, padded standard base64 in 64-column lines, the END
    line, each line ended by LF."""
    text = base64.b64encode(binary)
    return b"".join(line + b"\n" for line in [ARMOR_BEGIN, *(text[i:i + 64] for i in range(0, len(text), 64)),
                                              ARMOR_END])


def dearmor(text):
    """The bytes inside age armor as armor() writes it; AssertionError when it is not that."""
    lines = text.split(b"\n")
    if lines[0] != ARMOR_BEGIN or lines[-2:] != [ARMOR_END, b""]:
        raise AssertionError(f"not age's armor: {text[:40]!r} ... {text[-40:]!r}")
    return base64.b64decode(b"".join(lines[1:-2]), validate=True)


def age_file_len(header_len, size):
    """An age file's length: its header, the 16-byte nonce, the plaintext, a 16-byte tag per
    64 KiB chunk (one chunk for an empty plaintext; a plaintext that fills its last chunk ends
    with that full chunk)."""
    return header_len + NONCE_LEN + size + 16 * max(1, -(-size // AGE_CHUNK))


def payload_start(data):
    """The offset of a binary age file's payload (its nonce), after the stanzas and MAC line."""
    if not data.startswith(AGE_VERSION_LINE):
        raise AssertionError(f"not an age v1 file: {data[:40]!r}")
    return parse_header(data, len(AGE_VERSION_LINE))[2]


def stream_payload(file_key, chunks, flags=None):
    """age.md's payload of `chunks` (plaintexts) under `file_key`, exactly as given (no rule of
    chunk sizes is applied): a random nonce, then ChaCha20-Poly1305 under HKDF(file key, nonce,
    "payload") of each chunk, nonce = 11-byte big-endian counter || last flag; `flags`, the
    last flags (default: only the last chunk's set)."""
    nonce = os.urandom(NONCE_LEN)
    aead = ChaCha20Poly1305(hkdf_sha256(file_key, nonce, b"payload"))
    flags = flags or [i == len(chunks) - 1 for i in range(len(chunks))]
    return nonce + b"".join(aead.encrypt(i.to_bytes(11, "big") + bytes([flag]), chunk, None)
                            for i, (chunk, flag) in enumerate(zip(chunks, flags)))


def x25519_age_file(public, file_key, payload):
    """An age file of one X25519 stanza to `public` wrapping `file_key`, its MAC, and `payload`."""
    header = AGE_VERSION_LINE + x25519_stanza(public, file_key) + b"---"
    return header + mac_line(header, file_key) + payload


def flipped(data, offset, mask=0x01):
    return data[:offset] + bytes([data[offset] ^ mask]) + data[offset + 1:]


def other_b64_char(data, offset, low_bits_only=False):
    """`data` with the base64 character at `offset` replaced by another base64 character (with
    low_bits_only, one that differs in its lowest bit alone: in the last of the 43 characters of 32
    bytes, a bit of padding, which canonical base64 keeps zero)."""
    value = B64_ALPHABET.index(data[offset])
    value = value ^ 0x01 if low_bits_only else (value + 17) % 64
    return data[:offset] + B64_ALPHABET[value:value + 1] + data[offset + 1:]


def swapped(data, first, second, length):
    a, b = data[first:first + length], data[second:second + length]
    return data[:first] + b + data[first + length:second] + a + data[second + length:]


# ---------------------------------------------------------------- keys

class X25519Key:
    """An X25519 identity file (age-keygen's where installed, else paes keygen --x25519): `path`,
    its recipient `line` (age1...) and its `public` key bytes."""

    def __init__(self, directory, name):
        self.name = name
        self.path = os.path.join(directory, name)
        if AGE_KEYGEN:
            run_tool([AGE_KEYGEN, "-o", self.path])
        else:
            proc = run_paes(["keygen", "--x25519", "-o", self.path])
            if proc.returncode != 0:
                raise AssertionError(f"paes keygen --x25519: {describe(proc)}")
        lines = [line for line in read_file(self.path).decode().splitlines() if line.startswith("# public key: ")]
        if len(lines) != 1:
            raise AssertionError(f"no '# public key:' line in the identity file {self.path}")
        self.line = lines[0].split(": ")[1]
        self.public = bech32_decode(self.line)[1]


class AgeFilesTestCase(SshTestCase):
    """Makes the class's keys once (setUpClass): X25519 identities self.x25519[0..X25519_KEYS-1],
    and the ssh keys of KEYS (SshTestCase's, in self.keys; the class skips, saying why, without
    ssh-keygen); skips the class where age is missing and NEEDS_AGE. Per test: self.out_dir,
    self.out (SshTestCase's) and self.pass_file."""

    prefix = "paes-age-files-"
    NEEDS_AGE = True
    X25519_KEYS = 2

    @classmethod
    def setUpClass(cls):
        if cls.NEEDS_AGE and (AGE is None or AGE_KEYGEN is None):
            raise unittest.SkipTest(NO_AGE)
        if cls.KEYS:
            super().setUpClass()
        else:
            cls.keys, cls.key_dir = {}, tempfile.mkdtemp(prefix="paes-age-files-keys-")
        try:
            cls.x25519 = [X25519Key(cls.key_dir, f"x25519-{i}") for i in range(cls.X25519_KEYS)]
        except BaseException:
            cls.tearDownClass()
            raise

    def setUp(self):
        super().setUp()
        self.pass_file = write_file(self.path("pass.txt"), PASSPHRASE.encode() + b"\n", 0o600)

    # -- age

    def age_encrypt(self, plain, args, armored=False):
        """`age [-a] ARGS -o OUT IN`'s file for `plain`."""
        inp = write_file(self.path(self.unique_name("plain-")), plain)
        out = self.path(self.unique_name("aged-"))
        run_tool([AGE, *(["-a"] if armored else []), *args, "-o", out, inp])
        return read_file(out)

    def age_decrypt(self, data, args):
        """`age -d ARGS FILE` of `data` (stdin /dev/null): the CompletedProcess."""
        path = write_file(self.path(self.unique_name("to-age-")), data)
        return subprocess.run([AGE, "-d", *args, path], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)

    def assert_age_opens(self, data, args, plain, what):
        proc = self.age_decrypt(data, args)
        self.assertEqual(proc.returncode, 0, f"age -d {' '.join(args)} of {what}: {describe(proc)}")
        self.assertTrue(proc.stdout == plain, f"age -d {' '.join(args)} of {what}: {len(proc.stdout)} bytes, "
                                              f"not the {len(plain)} bytes paes sealed")

    # -- paes

    def paes_encrypt(self, plain, args, armored=False, piped=False):
        """paes encrypt --format age [-a] ARGS of `plain`, from a file to -o (or, piped, from a
        pipe to stdout); its bytes, checked to be a binary age file or age's armor of one."""
        armor_args = ["-a"] if armored else []
        if piped:
            proc = run_paes(["encrypt", "--format", "age", *armor_args, *args], input_bytes=plain)
            data = proc.stdout
        else:
            inp = write_file(self.path(self.unique_name("plain-")), plain)
            out = self.path(self.unique_name("sealed-"))
            proc = run_paes(["encrypt", "--format", "age", *armor_args, *args, "-o", out, inp])
            data = read_file(out) if proc.returncode == 0 else None
        what = (f"paes encrypt --format age {' '.join(armor_args + args)} "
                f"({len(plain)} bytes{', piped' if piped else ''})")
        self.assertEqual(proc.returncode, 0, f"{what}: {describe(proc)}")
        self.assertEqual(proc.stderr, b"", f"{what} printed something")
        binary = data
        if armored:
            self.assertEqual(armor(dearmor(data)), data, f"{what}: not age's armor to the byte")
            binary = dearmor(data)
        self.assertEqual(len(binary), age_file_len(payload_start(binary), len(plain)), f"{what}: its length")
        return data

    def x25519_cases(self):
        """(the first 1, 2 and 5 identities, a random plaintext of each of SIZES, -r of each)."""
        for count in (1, 2, 5):
            keys = self.x25519[:count]
            for size in SIZES:
                yield keys, os.urandom(size), [a for k in keys for a in ("-r", k.line)]

    def assert_paes_opens(self, data, args, plain, what, via_stdin=True):
        """paes decrypt ARGS opens `data` to `plain`, saying nothing: from a file to -o, and (unless
        not via_stdin) from stdin to stdout."""
        path = write_file(self.path(self.unique_name("in-")), data)
        proc = run_paes(["decrypt", *args, "-o", self.out, path])
        self.assertEqual(proc.returncode, 0, f"paes decrypt {' '.join(args)} FILE ({what}): {describe(proc)}")
        self.assertTrue(read_file(self.out) == plain, f"paes decrypt {' '.join(args)} FILE ({what}): "
                                                      f"not the plaintext")
        self.assertEqual(proc.stderr, b"", f"paes decrypt {' '.join(args)} FILE ({what}) printed something")
        os.remove(self.out)
        if not via_stdin:
            return
        proc = run_paes(["decrypt", *args], input_bytes=data)
        self.assertEqual(proc.returncode, 0, f"paes decrypt {' '.join(args)} < FILE ({what}): {describe(proc)}")
        self.assertTrue(proc.stdout == plain, f"paes decrypt {' '.join(args)} < FILE ({what}): not the plaintext")
        self.assertEqual(proc.stderr, b"", f"paes decrypt {' '.join(args)} < FILE ({what}) printed something")

    def paes_refusal(self, data, args, what, piped=False):
        """The problems (a list, empty when none) with paes decrypt ARGS -o OUT of `data` (a file,
        or piped in), which must refuse it: exit 1, one 'paes: ' line, nothing on stdout, the
        output directory left empty (what it left is removed)."""
        if piped:
            proc = run_paes(["decrypt", *args, "-o", self.out], input_bytes=data)
        else:
            path = write_file(self.path(self.unique_name("bad-")), data)
            proc = run_paes(["decrypt", *args, "-o", self.out, path])
        what = f"{what}{' (piped)' if piped else ''}"
        lines = error_lines(proc.stderr)
        problems = []
        if proc.returncode != 1:
            problems.append(f"{what}: expected exit 1, got {describe(proc)}")
        elif len(lines) != 1 or not lines[0].startswith("paes: "):
            problems.append(f"{what}: expected one 'paes: ' line on stderr, got {proc.stderr!r}")
        if proc.stdout:
            problems.append(f"{what}: printed {len(proc.stdout)} bytes on stdout")
        left = os.listdir(self.out_dir)
        if left:
            problems.append(f"{what}: left {left} in the output directory")
            for name in left:
                os.remove(os.path.join(self.out_dir, name))
        return problems


class AgeToPaesTest(AgeFilesTestCase):
    """Files age 1.1.1 wrote open in paes, byte for byte."""

    X25519_KEYS = 6
    KEYS = SSH_KEYS

    def test_x25519_recipients(self):
        for keys, plain, args in self.x25519_cases():
            for armored in (False, True):
                data = self.age_encrypt(plain, args, armored)
                self.assertEqual(data.startswith(ARMOR_BEGIN), armored, data[:40])
                for key in keys:   # each identity opens it from a file; the last one from stdin too
                    self.assert_paes_opens(data, ["-i", key.path], plain, f"age to {len(keys)} recipients, "
                                           f"{len(plain)} bytes, armored {armored}, -i {key.name}",
                                           via_stdin=key is keys[-1])

    def test_recipients_file_and_several_identities(self):
        keys = self.x25519
        recipients = write_file(self.path("recipients.txt"), ("# age-keygen's\n\n" + "\n".join(
            k.line for k in keys[:3]) + "\n").encode())
        plain = os.urandom(AGE_CHUNK + 1)
        data = self.age_encrypt(plain, ["-R", recipients])
        self.assert_paes_opens(data, ["-i", keys[5].path, "-i", keys[2].path], plain, "age -R, the second -i")
        both = write_file(self.path("both.txt"), read_file(keys[4].path) + read_file(keys[1].path), 0o600)
        self.assert_paes_opens(data, ["-i", both], plain, "an identity file of two, the second one matching")

    def test_ssh_keys(self):
        for key in self.keys.values():
            for size in SIZES:
                plain = os.urandom(size)
                for armored, args in ((False, ["-R", key.pub]), (True, ["-r", key.line.decode()])):
                    data = self.age_encrypt(plain, args, armored)
                    self.assert_paes_opens(data, ["-i", key.path], plain,
                                           f"age {args[0]} {key.name}, {size} bytes, armored {armored}")

    def test_every_engine_opens_them(self):
        """The serial engine, one thread and many (more than the chunks of 1 MiB groups): the same bytes
        from a file and from a pipe (the mpi engine: tests/mpi/test_mpi.py)."""
        plain = os.urandom(5 * 1048576 + 3)
        data = self.age_encrypt(plain, ["-r", self.x25519[0].line])
        for engine in (["--engine", "serial"], ["--threads", "1"], ["--threads", "7"]):
            self.assert_paes_opens(data, [*engine, "-i", self.x25519[0].path], plain, " ".join(engine))

    def test_another_identity_fails(self):
        keys = self.x25519
        plain = b"for the first two only"
        data = self.age_encrypt(plain, ["-r", keys[0].line, "-r", keys[1].line])
        for args in (["-i", keys[5].path], ["-i", self.keys["id_ed25519"].path], ["-i", self.keys["id_rsa"].path]):
            for piped in (False, True):
                problems = self.paes_refusal(data, args, f"paes decrypt {' '.join(args)} of another's file", piped)
                self.assertEqual(problems, [])


class PaesToAgeTest(AgeFilesTestCase):
    """Files paes wrote open in age 1.1.1, byte for byte."""

    X25519_KEYS = 5
    KEYS = SSH_KEYS

    def test_x25519_recipients(self):
        for keys, plain, args in self.x25519_cases():
            for armored in (False, True):
                for piped in (False, True):
                    data = self.paes_encrypt(plain, args, armored, piped)
                    for key in keys:
                        self.assert_age_opens(data, ["-i", key.path], plain, f"paes' file to {len(keys)} recipients, "
                                              f"{len(plain)} bytes, armored {armored}, piped {piped}")

    def test_recipients_file_and_identity(self):
        """-R (a file of age1 and ssh lines, comments) and -i (encrypt to an identity's recipient)."""
        keys = self.x25519
        recipients = write_file(self.path("recipients.txt"), b"# mixed\n" + keys[0].line.encode() + b"\n\n"
                                + self.keys["id_ed25519"].line + b"\n" + self.keys["id_rsa"].line + b"\n")
        plain = os.urandom(2 * AGE_CHUNK + 5)
        data = self.paes_encrypt(plain, ["-R", recipients, "-i", keys[1].path])
        self.assertEqual([s.type for s in parse_header(data, len(AGE_VERSION_LINE))[0]],
                         ["X25519", "ssh-ed25519", "ssh-rsa", "X25519"], "paes' stanzas, in the recipients' order")
        for path in (keys[0].path, keys[1].path, self.keys["id_ed25519"].path, self.keys["id_rsa"].path):
            self.assert_age_opens(data, ["-i", path], plain, f"paes -R -i, opened with {os.path.basename(path)}")
        proc = self.age_decrypt(data, ["-i", keys[2].path])
        self.assertNotEqual(proc.returncode, 0, f"age -d with another identity: {describe(proc)}")

    def test_ssh_keys(self):
        for key in self.keys.values():
            for size in SIZES:
                plain = os.urandom(size)
                for armored, piped, args in ((False, False, ["-R", key.pub]), (True, True, ["-r", key.line.decode()]),
                                             (False, True, ["-r", key.line.decode()])):
                    data = self.paes_encrypt(plain, args, armored, piped)
                    self.assert_age_opens(data, ["-i", key.path], plain,
                                          f"paes' file to {key.name}, {size} bytes, armored {armored}, piped {piped}")


class PassphraseTest(AgeFilesTestCase):
    """age's scrypt stanza alone, both ways; age reads a passphrase from its terminal only."""

    X25519_KEYS = 0

    def age_on_terminal(self, args):
        proc, screen = run_on_terminal([AGE, *args], PASSPHRASE, timeout=120)
        self.assertEqual(proc.returncode, 0, f"age {' '.join(args)}: {describe(proc)}, terminal {screen!r}")
        return proc

    def test_age_p_opens_in_paes(self):
        for size, armored in ((AGE_CHUNK + 1, False), (1, True)):
            plain = os.urandom(size)
            inp = write_file(self.path(self.unique_name("plain-")), plain)
            aged = self.path(self.unique_name("aged-"))
            self.age_on_terminal(["-p", *(["-a"] if armored else []), "-o", aged, inp])
            data = read_file(aged)
            binary = dearmor(data) if armored else data
            stanzas = parse_header(binary, len(AGE_VERSION_LINE))[0]
            self.assertEqual([s.type for s in stanzas], ["scrypt"], "age -p's stanzas")
            self.assert_paes_opens(data, ["--passphrase-file", self.pass_file], plain,
                                   f"age -p, {size} bytes, armored {armored}")
        # paes' own prompt, on its terminal, for the last one.
        proc, screen = run_on_terminal([PAES, "decrypt", "-o", self.out, aged], PASSPHRASE, timeout=120)
        self.assertEqual(proc.returncode, 0, f"paes decrypt on a terminal: {describe(proc)}, terminal {screen!r}")
        self.assertIn(b"passphrase", screen.lower(), "paes' prompt")
        self.assertNotIn(PASSPHRASE.encode(), proc.stdout + proc.stderr + screen, "paes printed the passphrase")
        self.assertEqual(read_file(self.out), plain)

    def test_paes_passphrase_opens_in_age(self):
        for size in (0, AGE_CHUNK, AGE_CHUNK + 1):
            plain = os.urandom(size)
            for armored, piped in ((False, False), (True, True)):
                data = self.paes_encrypt(plain, ["--passphrase-file", self.pass_file, "--scrypt-log-n", "10"],
                                         armored, piped)
                binary = dearmor(data) if armored else data
                stanzas = parse_header(binary, len(AGE_VERSION_LINE))[0]
                self.assertEqual([(s.type, s.args[1:]) for s in stanzas], [("scrypt", ["10"])], "paes' stanzas")
                aged = write_file(self.path(self.unique_name("to-age-")), data)
                proc = self.age_on_terminal(["-d", aged])
                self.assertTrue(proc.stdout == plain, f"age -d of paes' passphrase file ({size} bytes, armored "
                                                      f"{armored}): not the plaintext")

    def test_wrong_passphrase_fails(self):
        data = self.paes_encrypt(b"secret", ["--passphrase-file", self.pass_file, "--scrypt-log-n", "10"])
        wrong = write_file(self.path("wrong.txt"), b"not it\n", 0o600)
        self.assertEqual(self.paes_refusal(data, ["--passphrase-file", wrong], "a wrong passphrase"), [])


class EncryptedIdentityTest(AgeFilesTestCase):
    """An identity file encrypted with `age -p` (binary and armored, the passphrase typed on a
    pty) is an identity for paes -i: its passphrase asked on the terminal, no warning that the
    file is readable by others (it is ciphertext), and it opens what age sealed to its recipient.
    A wrong passphrase or no terminal: exit 1, one line, nothing written; `encrypt -i` takes its
    recipient, as age -e -i does."""

    X25519_KEYS = 1

    def encrypted_identity(self, armored):
        path = self.path(self.unique_name("identity-age-"))
        proc, screen = run_on_terminal([AGE, "-p", *(["-a"] if armored else []), "-o", path, self.x25519[0].path],
                                       PASSPHRASE, timeout=120)
        self.assertEqual(proc.returncode, 0, f"age -p of an identity file: {describe(proc)}, terminal {screen!r}")
        os.chmod(path, 0o644)  # ciphertext: others may read it
        return path

    def test_opens_with_its_passphrase_on_the_terminal(self):
        plain = os.urandom(AGE_CHUNK + 3)
        sealed = write_file(self.path("sealed.age"), self.age_encrypt(plain, ["-r", self.x25519[0].line]))
        for armored in (False, True):
            identity = self.encrypted_identity(armored)
            proc, screen = run_on_terminal([PAES, "decrypt", "-i", identity, "-o", self.out, "-f", sealed],
                                           PASSPHRASE, timeout=120)
            what = f"paes decrypt -i of an age -p identity file (armored {armored})"
            self.assertEqual(proc.returncode, 0, f"{what}: {describe(proc)}, terminal {screen!r}")
            self.assertEqual(read_file(self.out), plain, what)
            self.assertIn(b"passphrase", screen.lower(), f"{what}: no prompt")
            self.assertEqual(proc.stderr, b"", f"{what}: a warning or more on stderr")
            self.assertNotIn(PASSPHRASE.encode(), proc.stdout + proc.stderr + screen, f"{what}: the passphrase shown")
        # encrypt -i: the identity's recipient, as age -e -i.
        proc, screen = run_on_terminal([PAES, "encrypt", "--format", "age", "-i", identity, "-o",
                                        self.path("to-self.age"), sealed], PASSPHRASE, timeout=120)
        self.assertEqual(proc.returncode, 0, f"encrypt -i of an age -p identity file: {describe(proc)}")
        self.assert_age_opens(read_file(self.path("to-self.age")), ["-i", self.x25519[0].path],
                              read_file(sealed), "a file paes sealed to an age -p identity's recipient")

    def test_wrong_passphrase_and_no_terminal_fail(self):
        sealed = write_file(self.path("sealed.age"), self.age_encrypt(b"secret", ["-r", self.x25519[0].line]))
        identity = self.encrypted_identity(False)
        proc, screen = run_on_terminal([PAES, "decrypt", "-i", identity, "-o", self.out, sealed], "not it",
                                       timeout=120)
        self.assertEqual((proc.returncode, len(error_lines(proc.stderr))), (1, 1), f"a wrong passphrase: {describe(proc)}")
        self.assertIn(b"wrong passphrase", proc.stderr)
        self.assertEqual(os.listdir(self.out_dir), [], "a wrong passphrase left output")
        proc = subprocess.run([PAES, "decrypt", "-i", identity, "-o", self.out, sealed], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120, start_new_session=True)
        self.assertEqual((proc.returncode, len(error_lines(proc.stderr))), (1, 1), f"no terminal: {describe(proc)}")
        self.assertIn(b"no terminal", proc.stderr)
        self.assertEqual(os.listdir(self.out_dir), [], "no terminal, yet output")


class RekeyTest(AgeFilesTestCase):
    """paes rekey on age's own files: the header rewritten under the same file key, the payload
    (nonce and chunks) byte for byte; age opens the result with the new identity, and with the
    old one only where --add kept it. From a file and from stdin, binary and armored (-a: age's
    armor); a damaged chunk is refused with nothing written."""

    X25519_KEYS = 3

    def rekey(self, args, data, piped=False):
        if piped:
            proc = run_paes(["rekey", *args], input_bytes=data)
            self.assertEqual(proc.returncode, 0, f"paes rekey {' '.join(args)} < FILE: {describe(proc)}")
            return proc.stdout
        path = write_file(self.path(self.unique_name("to-rekey-")), data)
        out = self.path(self.unique_name("rekeyed-"))
        proc = run_paes(["rekey", *args, path, "-o", out])
        self.assertEqual(proc.returncode, 0, f"paes rekey {' '.join(args)} FILE: {describe(proc)}")
        return read_file(out)

    def test_add_and_replace_keep_the_payload(self):
        a, b, c = self.x25519
        plain = os.urandom(3 * AGE_CHUNK + 5)
        data = self.age_encrypt(plain, ["-r", a.line])
        payload = data[payload_start(data):]
        for piped in (False, True):
            added = self.rekey(["-i", a.path, "--add", "-r", b.line], data, piped)
            self.assertEqual(added[payload_start(added):], payload, "--add changed the payload")
            for key in (a, b):
                self.assert_age_opens(added, ["-i", key.path], plain, f"--add, -i {key.name}")
            replaced = self.rekey(["-i", a.path, "-r", c.line], data, piped)
            self.assertEqual(replaced[payload_start(replaced):], payload, "a new list changed the payload")
            self.assert_age_opens(replaced, ["-i", c.path], plain, "a new list, the new identity")
            self.assertNotEqual(self.age_decrypt(replaced, ["-i", a.path]).returncode, 0,
                                "a recipient left out of the new list still opens the file")
        armored = self.rekey(["-a", "-i", a.path, "-r", b.line], self.age_encrypt(plain, ["-r", a.line], True))
        self.assertTrue(armored.startswith(ARMOR_BEGIN), armored[:40])
        self.assert_age_opens(armored, ["-i", b.path], plain, "rekey -a of age's armored file")

    def test_a_damaged_chunk_is_refused(self):
        a, b, _ = self.x25519
        data = self.age_encrypt(os.urandom(2 * AGE_CHUNK), ["-r", a.line])
        bad = write_file(self.path("bad.age"), flipped(data, len(data) - AGE_CHUNK - 40))
        proc = run_paes(["rekey", "-i", a.path, "-r", b.line, bad, "-o", self.out])
        self.assertEqual((proc.returncode, len(error_lines(proc.stderr))), (1, 1), describe(proc))
        self.assertEqual(os.listdir(self.out_dir), [], "a refused rekey left output")


class TamperTest(AgeFilesTestCase):
    """Changed, cut, reordered and extended 3 MiB files: paes refuses each as age does."""

    def base_files(self):
        """(name, binary age file to both identities, its plaintext): one of age, one of paes."""
        plain = os.urandom(3 * MiB)
        args = ["-r", self.x25519[0].line, "-r", self.x25519[1].line]
        return [("age's", self.age_encrypt(plain, args), plain), ("paes'", self.paes_encrypt(plain, args), plain)]

    def mutations(self, data):
        """(what, changed file) for one binary age file whose plaintext fills 48 chunks."""
        stanzas, _, start = parse_header(data, len(AGE_VERSION_LINE))
        chunks = (len(data) - start - NONCE_LEN) // SEALED_CHUNK
        self.assertEqual((len(data) - start - NONCE_LEN) % SEALED_CHUNK, 0, "the base file's chunks are full")
        self.assertEqual(chunks, 48)

        def chunk(k):
            return start + NONCE_LEN + k * SEALED_CHUNK

        first = data.index(stanzas[0].text)
        second = data.index(stanzas[1].text)
        mac = start - 44          # the MAC's 43 base64 characters, then LF
        yield "header: the version line", flipped(data, 3)
        yield "header: age-encryption.org/v0", flipped(data, len(AGE_VERSION_LINE) - 2)
        yield "header: the stanza type", flipped(data, first + 4)
        yield "header: the first stanza's share", other_b64_char(data, first + 12)
        yield "header: the first stanza's body", other_b64_char(data, first + len(stanzas[0].text) - 10)
        yield "header: the second stanza's body (not the identity's)", other_b64_char(
            data, second + len(stanzas[1].text) - 10)
        yield "header: a LF removed", data[:first - 1] + data[first:]
        yield "header: the '---'", flipped(data, mac - 3)
        yield "MAC line: a character", other_b64_char(data, mac + 10)
        yield "MAC line: the last character, in its padding bits only", other_b64_char(data, mac + 42, True)
        yield "MAC line: one character more", data[:mac + 43] + b"A" + data[mac + 43:]
        yield "payload nonce: its first byte", flipped(data, start)
        yield "payload nonce: its last byte", flipped(data, start + NONCE_LEN - 1, 0x80)
        yield "chunk 0: a byte", flipped(data, chunk(0) + 7)
        yield "chunk 20: a byte", flipped(data, chunk(20) + 40000, 0x10)
        yield "chunk 20: its tag", flipped(data, chunk(21) - 1)
        yield "the last tag", flipped(data, len(data) - 1)
        yield "truncated: inside the header", data[:first + 20]
        yield "truncated: after the header", data[:start]
        yield "truncated: inside the nonce", data[:start + 8]
        yield "truncated: after the nonce", data[:chunk(0)]
        yield "truncated: inside chunk 3", data[:chunk(3) + 1000]
        yield "truncated: inside the last tag", data[:-1]
        yield "truncated: at a chunk boundary (after chunk 1)", data[:chunk(2)]
        yield "truncated: at a chunk boundary (the last chunk removed)", data[:chunk(chunks - 1)]
        yield "reordered: chunks 1 and 2 swapped", swapped(data, chunk(1), chunk(2), SEALED_CHUNK)
        yield "reordered: the last two chunks swapped", swapped(data, chunk(chunks - 2), chunk(chunks - 1),
                                                                 SEALED_CHUNK)
        yield "reordered: chunk 5 twice", data[:chunk(6)] + data[chunk(5):chunk(6)] + data[chunk(6):]
        yield "extended: a byte", data + b"\0"
        yield "extended: an empty 16-byte chunk", data + os.urandom(16)
        yield "extended: chunk 1 copied to the end", data + data[chunk(1):chunk(2)]
        yield "extended: the last chunk again", data + data[chunk(chunks - 1):]

    def test_binary_files(self):
        problems = []
        for base, data, plain in self.base_files():
            self.assert_paes_opens(data, ["-i", self.x25519[1].path], plain, f"{base} unchanged file")
            for what, bad in self.mutations(data):
                what = f"{base} file, {what}"
                for piped in (False, True):
                    problems += self.paes_refusal(bad, ["-i", self.x25519[0].path], what, piped)
                proc = self.age_decrypt(bad, ["-i", self.x25519[0].path])
                if proc.returncode == 0:
                    problems.append(f"{what}: age -d opened it")
        self.assertEqual(problems, [], "\n".join(problems))

    def test_armored_files(self):
        plain = os.urandom(AGE_CHUNK + 10)
        data = self.age_encrypt(plain, ["-r", self.x25519[0].line], armored=True)
        lines = data.split(b"\n")
        middle = len(lines) // 2
        cases = [("a payload character", b"\n".join(lines[:middle] + [other_b64_char(lines[middle], 5)]
                                                     + lines[middle + 1:])),
                 ("a line removed", b"\n".join(lines[:middle] + lines[middle + 1:])),
                 ("cut before the END line", b"\n".join(lines[:-2]) + b"\n"),
                 ("cut inside the payload", b"\n".join(lines[:middle]) + b"\n")]
        problems = []
        for what, bad in cases:
            what = f"age's armored file, {what}"
            for piped in (False, True):
                problems += self.paes_refusal(bad, ["-i", self.x25519[0].path], what, piped)
            if self.age_decrypt(bad, ["-i", self.x25519[0].path]).returncode == 0:
                problems.append(f"{what}: age -d opened it")
        self.assertEqual(problems, [], "\n".join(problems))


class CraftedPayloadTest(AgeFilesTestCase):
    """Payloads built here under a known file key: what age.md's STREAM forbids is refused."""

    X25519_KEYS = 1

    def crafted(self, chunks, flags=None):
        file_key = os.urandom(16)
        return x25519_age_file(self.x25519[0].public, file_key, stream_payload(file_key, chunks, flags))

    def test_well_formed_controls_open(self):
        full = os.urandom(AGE_CHUNK)
        for what, chunks in (("an empty payload", [b""]), ("one full final chunk", [full]),
                             ("a full chunk, then 1 byte", [full, b"x"]), ("two full chunks", [full, full])):
            data = self.crafted(chunks)
            plain = b"".join(chunks)
            self.assert_paes_opens(data, ["-i", self.x25519[0].path], plain, what)
            self.assert_age_opens(data, ["-i", self.x25519[0].path], plain, what)

    def test_refused(self):
        full = os.urandom(AGE_CHUNK)
        cases = (("an empty final chunk after a full one", [full, b""], None),
                 ("an empty final chunk after two full ones", [full, full, b""], None),
                 ("a short non-final chunk", [b"short", b"final"], None),
                 ("a short non-final chunk, then a full final one", [b"short", full], None),
                 ("no final chunk: one full chunk, its flag clear", [full], [False]),
                 ("no final chunk: an empty one, its flag clear", [b""], [False]),
                 ("a chunk after the final one", [full, b"more"], [True, True]),
                 ("two final flags, both full", [full, full], [True, True]))
        problems = []
        for what, chunks, flags in cases:
            data = self.crafted(chunks, flags)
            for piped in (False, True):
                problems += self.paes_refusal(data, ["-i", self.x25519[0].path], what, piped)
            proc = self.age_decrypt(data, ["-i", self.x25519[0].path])
            if proc.returncode == 0:
                problems.append(f"{what}: age -d opened it")
        self.assertEqual(problems, [], "\n".join(problems))


class ArmorTest(AgeFilesTestCase):
    """paes' armor is age's; age's armor, changed, opens in paes exactly where it opens in age."""

    X25519_KEYS = 1

    def test_armor_is_ages(self):
        key = self.x25519[0]
        for size in (0, 1, 30, 31, 32, 77, AGE_CHUNK):
            plain = os.urandom(size)
            theirs = self.age_encrypt(plain, ["-r", key.line], armored=True)
            self.assertEqual(armor(dearmor(theirs)), theirs, f"age -a's armor ({size} bytes) is not armor()'s")
            ours = self.paes_encrypt(plain, ["-r", key.line], armored=True)   # checked against armor() there
            self.assertEqual(len(ours), len(theirs), f"paes' armored file ({size} bytes) is not as long as age's")
            self.assert_age_opens(ours, ["-i", key.path], plain, f"paes' armor, {size} bytes")

    def variants(self, text):
        """(what, age's armor `text` changed)."""
        lines = text.split(b"\n")[:-1]
        begin, body, end = lines[0], lines[1:-1], lines[-1]
        joined = b"".join(body)
        yield "CRLF line ends", text.replace(b"\n", b"\r\n")
        yield "CRLF line ends, no final one", text.replace(b"\n", b"\r\n")[:-2]
        yield "CRLF on the BEGIN line only", text.replace(b"\n", b"\r\n", 1)
        yield "CRLF on the first three lines", text.replace(b"\n", b"\r\n", 3)
        yield "no final LF", text[:-1]
        yield "white space and blank lines after END", text + b"  \n\n\t\n"
        yield "CR line ends only", text.replace(b"\n", b"\r")
        yield "a blank line before BEGIN", b"\n" + text
        yield "spaces before BEGIN", b"  " + text
        yield "1024 bytes of white space before BEGIN", b" \t\r\n" * 256 + text
        yield "1025 bytes of white space before BEGIN", b" " * 1025 + text
        yield "a UTF-8 BOM before BEGIN", b"\xef\xbb\xbf" + text
        yield "text before BEGIN", b"junk\n" + text
        yield "text after END", text + b"junk\n"
        yield "a byte after END", text + b"x"
        yield "a tab after END", text[:-1] + b"\t\n"
        yield "lower-case BEGIN", text.replace(ARMOR_BEGIN, ARMOR_BEGIN.lower())
        yield "a space at each line's end", b"\n".join([begin, *(line + b" " for line in body), end]) + b"\n"
        yield "76 columns", b"\n".join([begin, *(joined[i:i + 76] for i in range(0, len(joined), 76)), end]) + b"\n"
        yield "a short line in the middle", b"\n".join([begin, body[0][:-4], body[0][-4:], *body[1:], end]) + b"\n"
        yield "a blank line in the body", b"\n".join([begin, body[0], b"", *body[1:], end]) + b"\n"
        yield "no padding", text.replace(b"=", b"")
        yield "no END line", b"\n".join([begin, *body]) + b"\n"

    # age 1.1.1's command line looks for BEGIN at the file's first byte and so refuses these; age's armor
    # reader (armor.NewReader) skips up to 1024 bytes of white space first, as C2SP CCTV's vector
    # armor_whitespace_outside ("whitespace is allowed before and after armored files") requires, and so
    # does paes: paes must open them, whatever age's command line says.
    OPENED_AS_THE_KIT_SAYS = ("a blank line before BEGIN", "spaces before BEGIN",
                              "1024 bytes of white space before BEGIN")

    def test_variants_as_age(self):
        key = self.x25519[0]
        plain = os.urandom(AGE_CHUNK + 100)   # 88,283 base64 characters: the last line is short and padded
        text = self.age_encrypt(plain, ["-r", key.line], armored=True)
        self.assertTrue(text.endswith(b"=\n" + ARMOR_END + b"\n"), text[-60:])
        problems, accepted = [], []
        for what, changed in self.variants(text):
            proc = self.age_decrypt(changed, ["-i", key.path])
            if proc.returncode == 0 and proc.stdout != plain:
                problems.append(f"{what}: age -d gave other bytes")
            if proc.returncode == 0 or what in self.OPENED_AS_THE_KIT_SAYS:
                accepted.append(what)
                try:
                    self.assert_paes_opens(changed, ["-i", key.path], plain, f"age's armor, {what}")
                except AssertionError as e:
                    problems.append(f"{what}: paes does not open it (age 1.1.1 exit {proc.returncode}): {e}")
            else:
                for piped in (False, True):
                    problems += [f"{p} (age 1.1.1 refuses it too)"
                                 for p in self.paes_refusal(changed, ["-i", key.path], f"age's armor, {what}", piped)]
        self.assertEqual(problems, [], "\n".join(problems))
        # age 1.1.1's facts (armor.go): CR before LF is taken, white space after END too.
        for what in ("CRLF line ends", "CRLF line ends, no final one", "no final LF",
                     "white space and blank lines after END"):
            self.assertIn(what, accepted, f"age 1.1.1 refused {what}")


class PyrageTest(AgeFilesTestCase):
    """rage (the Rust age, PyPI's pyrage) and paes, X25519 both ways."""

    NEEDS_AGE = False
    X25519_KEYS = 0

    @classmethod
    def setUpClass(cls):
        if pyrage is None:
            raise unittest.SkipTest(NO_PYRAGE)
        super().setUpClass()

    def setUp(self):
        super().setUp()
        self.identity = pyrage.x25519.Identity.generate()
        self.recipient = str(self.identity.to_public())
        self.identity_file = write_file(self.path("rage.key"), str(self.identity).encode() + b"\n", 0o600)

    def test_pyrage_opens_paes_files(self):
        for size in SIZES:
            plain = os.urandom(size)
            for armored, piped in ((False, False), (True, True)):
                data = self.paes_encrypt(plain, ["-r", self.recipient], armored, piped)
                self.assertTrue(pyrage.decrypt(data, [self.identity]) == plain,
                                f"pyrage.decrypt of paes' file ({size} bytes, armored {armored}): not the plaintext")

    def test_paes_opens_pyrage_files(self):
        for size in SIZES:
            plain = os.urandom(size)
            for armored in (False, True):
                data = pyrage.encrypt(plain, [self.identity.to_public()], armored=armored)
                self.assert_paes_opens(data, ["-i", self.identity_file], plain,
                                       f"pyrage's file, {size} bytes, armored {armored}")


class PyragePassphraseTest(PyrageTest):
    """rage's and paes' scrypt stanzas both ways (rage picks its own work factor: about a second)."""

    def test_pyrage_opens_paes_files(self):
        for size, armored, piped in ((0, False, False), (AGE_CHUNK, True, True), (AGE_CHUNK + 1, False, True)):
            plain = os.urandom(size)
            data = self.paes_encrypt(plain, ["--passphrase-file", self.pass_file, "--scrypt-log-n", "10"], armored,
                                     piped)
            self.assertTrue(pyrage.passphrase.decrypt(data, PASSPHRASE) == plain,
                            f"pyrage.passphrase.decrypt of paes' file ({size} bytes): not the plaintext")

    def test_paes_opens_pyrage_files(self):
        plain = os.urandom(AGE_CHUNK)
        data = pyrage.passphrase.encrypt(plain, PASSPHRASE)
        self.assertEqual([s.type for s in parse_header(data, len(AGE_VERSION_LINE))[0]], ["scrypt"])
        # From a file only: each opening is rage's scrypt work (about 2.4 s here); stdin is the same code.
        self.assert_paes_opens(data, ["--passphrase-file", self.pass_file], plain, "pyrage's passphrase file",
                               via_stdin=False)


class OptionsTest(AgeFilesTestCase):
    """What encrypt --format age refuses, notes and takes; decrypt --format age and -f."""

    NEEDS_AGE = False
    X25519_KEYS = 1

    def test_refused_options(self):
        key = self.x25519[0]
        inp = write_file(self.path("plain"), b"not sealed")
        key_file = write_file(self.path("aes.key"), os.urandom(32).hex().encode() + b"\n", 0o600)
        env = {"AGE_FILES_KEY": os.urandom(32).hex()}
        recipient = ["-r", key.line]
        for args, words in (([*recipient, "--aad", "ctx"], "--aad"),
                            ([*recipient, "--aad-file", self.pass_file], "--aad-file"),
                            ([*recipient, "--segment-size", "4K"], "--segment-size"),
                            ([*recipient, "--key-bits", "128"], "--key-bits"),
                            (["--passphrase-file", self.pass_file, "--key-bits", "128"], "--key-bits"),
                            (["-k", key_file], "key file"),
                            ([*recipient, "-k", key_file], ("key file", "--key-file")),
                            (["--key-env", "AGE_FILES_KEY"], ("key file", "--key-env")),
                            ([*recipient, "--mode", "ctr"], ("--mode", "raw")),
                            (["-k", key_file, "--mode", "ctr", "--iv", "00" * 16], ("--mode", "raw", "key file"))):
            for out in (["-o", self.out], []):
                self.assert_fails(["encrypt", "--format", "age", *args, *out, inp], 2, words, out_dir=self.out_dir,
                                  env=env)

    def test_backend_openssl_noted(self):
        key = self.x25519[0]
        plain = os.urandom(AGE_CHUNK + 3)
        inp = write_file(self.path("plain"), plain)
        out = self.path("sealed.age")
        proc = run_paes(["encrypt", "--format", "age", "--backend", "openssl", "-r", key.line, "-o", out, inp])
        self.assertEqual(proc.returncode, 0, describe(proc))
        lines = error_lines(proc.stderr)
        self.assertEqual(len(lines), 1, f"one note, got {proc.stderr!r}")
        self.assertTrue(lines[0].startswith("paes: note: "), lines[0])
        self.assertIn("openssl", lines[0])
        self.assertIn("age", lines[0])
        self.assert_paes_opens(read_file(out), ["-i", key.path], plain, "--backend openssl's file")
        if AGE is not None:
            self.assert_age_opens(read_file(out), ["-i", key.path], plain, "--backend openssl's file")

    def test_decrypt_format_age(self):
        key = self.x25519[0]
        plain = os.urandom(1000)
        data = self.paes_encrypt(plain, ["-r", key.line])
        self.assert_paes_opens(data, ["--format", "age", "-i", key.path], plain, "--format age")
        inp = write_file(self.path("plain"), plain)
        sealed = self.path("sealed.paes")
        proc = run_paes(["encrypt", "-r", key.line, "-o", sealed, inp])
        self.assertEqual(proc.returncode, 0, describe(proc))
        for piped in (False, True):
            self.assertEqual(self.paes_refusal(read_file(sealed), ["--format", "age", "-i", key.path],
                                               "decrypt --format age of a paes file", piped), [])

    def test_decrypt_refuses_aad(self):
        """An age file has no associated data: decrypt --aad (or --aad-file) of one is a usage error."""
        key = self.x25519[0]
        for armored in (False, True):
            data = self.paes_encrypt(b"no aad here", ["-r", key.line], armored)
            path = write_file(self.path(self.unique_name("in-")), data)
            for aad in (["--aad", "ctx"], ["--aad-file", self.pass_file]):
                self.assert_fails(["decrypt", "-i", key.path, *aad, "-o", self.out, path], 2, "associated data",
                                  out_dir=self.out_dir)
                self.assert_fails(["decrypt", "-i", key.path, *aad, "-o", self.out], 2, "associated data",
                                  out_dir=self.out_dir, input_bytes=data)

    def test_force_replaces(self):
        key = self.x25519[0]
        plain = os.urandom(5000)
        path = write_file(self.path("in.age"), self.paes_encrypt(plain, ["-r", key.line]))
        write_file(self.out, b"already here")
        self.assert_fails(["decrypt", "-i", key.path, "-o", self.out, path], 1, "already exists", out_dir=self.out_dir)
        self.assertEqual(read_file(self.out), b"already here")
        proc = run_paes(["decrypt", "-i", key.path, "-f", "-o", self.out, path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.out), plain)


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals(), need_openssl=False))
