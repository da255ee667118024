#!/usr/bin/env python3
"""Recipients (format version 3, age's keys) and rekey through the real binary.

Run as:  python3 tests/cli/test_sealed_recipients.py --paes build/release/paes --openssl /usr/bin/openssl [TestClass ...]

One of the test_sealed_*.py files (the ctests cli_sealed.<class>); their shared helpers are
in tests/harness (sealed_cases, sealed_format, pipes). Covers:
  9. Recipients (format version 3, age's keys): keygen --x25519 and -y, encrypt -r/-R (files with
     comments, -R -), decrypt -i (several identities, --range), wrong identity, mixing recipients
     with keys, an identity given as a recipient and the reverse, 4096 recipients and one more;
     refused recipients (bit 255 set, non-canonical, low-order points, malformed ssh keys, a plugin
     not installed, the unreleased paes-x25519 strings, -R /dev/zero and files over 1 MiB) and
     identity files (age-encrypted, a malformed ssh key, a plugin's not installed); interop with age-keygen's identity files and with age (multi-identity files too);
     age files and version-2 files named. No secret in any output.
  9b. rekey: --add keeps the file's stanzas, a new list replaces them; the preamble and body are
     copied byte for byte, to a file, in place (-f) and to a pipe; a key-sealed file, a wrong
     identity, a damaged header and an output over the identity file are refused; --help says
     removal is not revocation.

Python 3.11 standard library only. Exits non-zero when any test fails; every skip says why.
"""

import base64
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (bech32_decode, bech32_encode, describe, read_file, run_paes, run_test_script,  # noqa: E402
                     write_file)
from harness.bech32 import BECH32_CHARSET  # noqa: E402
from harness.pipes import pipe  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402
from harness.sealed_format import PREAMBLE_LEN, sealed_len  # noqa: E402

PAES = "paes"
OPENSSL = "openssl"


# --------------------------------------------------------------------------- 9. recipients

RECIPIENT_RE = rf"\Aage1[{BECH32_CHARSET}]{{58}}\n\Z"
IDENTITY_FILE_RE = (rf"\A# created: \S+\n# public key: (age1[{BECH32_CHARSET}]{{58}})\n"
                    rf"(AGE-SECRET-KEY-1[{BECH32_CHARSET.upper()}]{{58}})\n\Z")
AGE, AGE_KEYGEN = shutil.which("age"), shutil.which("age-keygen")
NO_AGE = "age and age-keygen are not installed (the other implementation of age's keys)"
MAX_RECIPIENTS = 4096
P25519 = 2 ** 255 - 19
# u-coordinates of points of order 1, 2, 4 and 8 on Curve25519 and its twist (libsodium's list):
# with a clamped scalar the shared secret is zero, so anybody could open a file sealed to one.
LOW_ORDER_U = (0, 1, P25519 - 1,
               int.from_bytes(bytes.fromhex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
                              "little"),
               int.from_bytes(bytes.fromhex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
                              "little"))


def recipient_of_u(u):
    """The age1 recipient holding the 32-byte little-endian `u` (any value below 2^256)."""
    return bech32_encode("age", u.to_bytes(32, "little"))


def random_recipient():
    """A recipient that is a canonical X25519 key of no known identity."""
    return recipient_of_u(int.from_bytes(os.urandom(32), "little") % P25519 or 9)


def header_end(sealed):
    """Where a version-3 file's body starts: past the first header line starting with "---"
    and its LF (stanza lines start with "-> ", their bodies are base64)."""
    pos = PREAMBLE_LEN
    while not sealed.startswith(b"---", pos):
        pos = sealed.index(b"\n", pos) + 1
    return sealed.index(b"\n", pos) + 1


def age_b64(data):
    """age's base64: the standard alphabet, no padding."""
    return base64.b64encode(data).rstrip(b"=")


def stanza_text(args, body):
    """One stanza as age.md writes it: its line, then its body in 64-column lines, the last one shorter
    (empty where the body fills whole lines)."""
    text = age_b64(body)
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    if not lines or len(lines[-1]) == 64:
        lines.append(b"")
    return b"-> " + " ".join(args).encode() + b"\n" + b"".join(line + b"\n" for line in lines)


def with_stanzas_added(sealed, secret_line, added):
    """`sealed` (a version-3 file to the identity `secret_line`) with the stanza texts `added` after its
    own, its header MAC made again under its file key, as a header paes never writes but whose MAC
    verifies: what a rekey must check before keeping it."""
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    from cryptography.hazmat.primitives.hashes import SHA256
    from cryptography.hazmat.primitives.hmac import HMAC
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    def hkdf(ikm, salt, info):
        return HKDF(SHA256(), 32, salt, info).derive(ikm)

    identity = X25519PrivateKey.from_private_bytes(bech32_decode(secret_line.lower())[1])
    public = identity.public_key().public_bytes_raw()
    first = re.compile(rb"-> X25519 ([A-Za-z0-9+/]{43})\n([A-Za-z0-9+/]{43})\n").match(sealed, PREAMBLE_LEN)
    share = base64.b64decode(first[1] + b"=")
    wrap_key = hkdf(identity.exchange(X25519PublicKey.from_public_bytes(share)), share + public,
                    b"age-encryption.org/v1/X25519")
    file_key = ChaCha20Poly1305(wrap_key).decrypt(bytes(12), base64.b64decode(first[2] + b"="), None)
    end = header_end(sealed)
    mac_line = sealed.rindex(b"--- ", 0, end)
    header = sealed[:mac_line] + b"".join(added) + b"---"
    mac = HMAC(hkdf(file_key, b"", b"header"), SHA256())
    mac.update(header)
    return header + b" " + age_b64(mac.finalize()) + b"\n" + sealed[end:]


def stanzas(sealed):
    """The stanzas' first lines ("-> ..."), in the order of a version-3 file's header."""
    return [l for l in sealed[PREAMBLE_LEN:header_end(sealed)].split(b"\n") if l.startswith(b"-> ")]


class RecipientsCase(SealedTestCase):
    """Identities, recipients and the secret check of sections 9 and 9b."""

    def identity(self, name):
        """Makes an identity with paes; returns (path, recipient, secret line), checking keygen."""
        path = self.path(name)
        proc = run_paes(["keygen", "--x25519", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(proc.stdout.decode(), RECIPIENT_RE, "keygen --x25519 stdout")
        self.assertEqual(proc.stderr, b"")
        recipient = proc.stdout.decode().strip()
        text = read_file(path).decode()
        m = re.fullmatch(IDENTITY_FILE_RE, text)
        self.assertIsNotNone(m, f"identity file {text!r}")
        self.assertEqual(m.group(1), recipient)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        return path, recipient, m.group(2)

    def age_identity(self, name):
        """Makes an identity with age-keygen; returns (path, recipient as age-keygen -y prints it,
        secret line)."""
        path = self.path(name)
        proc = subprocess.run([AGE_KEYGEN, "-o", path], capture_output=True, timeout=60)
        self.assertEqual(proc.returncode, 0, describe(proc))
        proc = subprocess.run([AGE_KEYGEN, "-y", path], capture_output=True, timeout=60)
        self.assertEqual(proc.returncode, 0, describe(proc))
        m = re.search(r"^AGE-SECRET-KEY-1\S+$", read_file(path).decode(), re.M)
        return path, proc.stdout.decode().strip(), m.group(0)

    def no_secret_in(self, proc, secrets, what):
        """Neither a secret line nor the key it holds (as hex) is in proc's output."""
        for secret in secrets:
            key_hex = bech32_decode(secret)[1].hex()
            for stream in (proc.stdout, proc.stderr):
                for form in (secret.lower(), key_hex):
                    self.assertNotIn(form.encode(), stream.lower(), f"{what}: a secret key in the output")

    def opens(self, sealed, identity, data, what):
        proc, got = self.open_sealed(sealed, ["-i", identity])
        self.check(proc.returncode == 0 and got == data,
                   f"{what}, -i {os.path.basename(identity)}: {describe(proc)}")

    def does_not_open(self, sealed, identity, what):
        proc, got = self.open_sealed(sealed, ["-i", identity])
        self.check(proc.returncode == 1 and got is None and b"no identity matches" in proc.stderr,
                   f"{what}, -i {os.path.basename(identity)} should not open it: {describe(proc)}")


class RecipientsTest(RecipientsCase):
    """9: recipients (format version 3, age's keys): keygen --x25519 and -y, -r, -R, -i, what is
    refused, and age-keygen's and age's view of the same keys."""

    def test_keygen(self):
        path, recipient, secret = self.identity("id.key")
        _, other, _ = self.identity("id2.key")
        self.assertNotEqual(recipient, other)
        hrp, key = bech32_decode(recipient)
        self.assertEqual((hrp, len(key)), ("age", 32))
        self.assertEqual(bech32_encode("age", key), recipient, "this test's Bech32 encoder disagrees with paes")
        for args, stdin in ((["-y", path], None), (["-y", "-"], read_file(path))):
            proc = run_paes(["keygen", *args], input_bytes=stdin)
            self.assertEqual((proc.returncode, proc.stdout.decode(), proc.stderr), (0, recipient + "\n", b""),
                             f"keygen {args}")
        self.assert_fails(["keygen", "--x25519", "-o", path], 1, "exists")
        proc = run_paes(["keygen", "--x25519", "-f", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertNotIn(secret.encode(), read_file(path), "-f kept the old identity")
        self.assert_fails(["keygen", "--x25519", "--key-bits", "128", "-o", self.path("k")], 2, "key-bits")
        proc = self.assert_fails(["keygen", "-y", self.keygen(256)], 2, "holds a raw AES key, not an age identity")
        pub = write_file(self.path("id.pub"), f"{recipient}\n".encode(), 0o600)
        self.assert_fails(["keygen", "-y", pub], 2, "id.pub, line 1 is a recipient")

    def test_round_trip_to_two_recipients(self):
        (a, ra, sa), (b, rb, sb) = self.identity("a.key"), self.identity("b.key")
        data = os.urandom(300_000)
        sealed = self.seal(data, ["-r", ra, "-r", rb], ["--segment-size", "64K"])
        # Version 3, recipients, AES-256, no scrypt fields, the segment size, no salt.
        self.assertEqual(sealed[:PREAMBLE_LEN], b"PAES\x03\x03\x20" + bytes(5) + (64 << 10).to_bytes(4, "big") + bytes(16))
        b64 = "[A-Za-z0-9+/]{43}"
        self.assertRegex(sealed[PREAMBLE_LEN:header_end(sealed)].decode(),
                         rf"\A(-> X25519 {b64}\n{b64}\n){{2}}--- {b64}\n\Z")
        self.assertEqual(len(sealed), sealed_len(len(data), 64 << 10, 32, paes_header=header_end(sealed)))
        for ident in (a, b):
            proc, got = self.open_sealed(sealed, ["-i", ident])
            self.check(proc.returncode == 0 and got == data, f"-i {ident}: {describe(proc)}")
            self.no_secret_in(proc, (sa, sb), "decrypt")
        proc, got = self.open_sealed(sealed, ["-i", self.identity("c.key")[0], "-i", b])
        self.check(proc.returncode == 0 and got == data, f"two -i: {describe(proc)}")
        self.finish()

    def test_range_with_an_identity(self):
        (a, ra, _), (c, _, _) = self.identity("a.key"), self.identity("c.key")
        data = os.urandom(300_000)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["-r", ra], ["--segment-size", "64K"]))
        for spec, start, length in (("0:10", 0, 10), ("100000:10", 100000, 10), ("65000:2000", 65000, 2000),
                                    ("299990", 299990, None), ("0:300000", 0, 300000), ("128K:64K", 1 << 17, 1 << 16)):
            want = data[start:] if length is None else data[start:start + length]
            proc = run_paes(["decrypt", "-i", a, "--range", spec, sealed, "-o", "-"])
            self.check(proc.returncode == 0 and proc.stdout == want, f"--range {spec}: {describe(proc)}")
        self.finish()
        out_dir = self.new_dir("out")
        self.assert_fails(["decrypt", "-i", c, "--range", "0:10", sealed, "-o", os.path.join(out_dir, "x")], 1,
                          "no identity matches", out_dir=out_dir)

    def test_recipients_file(self):
        (a, ra, sa), (b, rb, _) = self.identity("a.key"), self.identity("b.key")
        rfile = write_file(self.path("recipients.txt"),
                           f"# the backup readers\n\n{ra}\n   \n# bob\n  {rb}  \r\n".encode())
        data = b"to several readers\n"
        sealed = self.seal(data, ["-R", rfile])
        self.assertEqual(len(stanzas(sealed)), 2)
        for ident in (a, b):
            self.opens(sealed, ident, data, "-R")
        self.finish()
        bad = write_file(self.path("bad.txt"), f"{ra}\nnot-a-recipient\n".encode())
        self.assert_fails(["encrypt", "-R", bad, rfile, "-o", self.path("x")], 2,
                          "bad.txt, line 2, is not an age recipient", out_dir=self.tmp)
        # An identity where a recipient belongs (-R for -i, its secret line pasted into -r, in either
        # case): said so, and its secret never echoed.
        proc = self.assert_fails(["encrypt", "-R", a, rfile, "-o", self.path("x")], 2,
                                 "a.key, line 3, is an identity", out_dir=self.tmp)
        self.no_secret_in(proc, (sa,), "-R identity")
        for pasted in (sa, sa.lower(), f"  {sa}\n"):
            proc = self.assert_fails(["encrypt", "-r", rb, "-r", pasted, rfile, "-o", self.path("x")], 2,
                                     "recipient 2 (-r) is an identity", out_dir=self.tmp)
            self.no_secret_in(proc, (sa,), "-r identity")
        # The reverse: a recipients file given to decrypt as an identity.
        pub = write_file(self.path("b.pub"), f"{rb}\n".encode(), 0o600)
        self.assert_fails(["decrypt", "-i", pub, write_file(self.path("s.paes"), sealed), "-o", self.path("y")], 2,
                          "b.pub, line 1 is a recipient", out_dir=self.tmp)
        proc = self.assert_fails(["encrypt", "-r", bech32_decode(sa)[1].hex(), rfile, "-o", self.path("x")], 2,
                                 "recipient 1 (-r) is not an age recipient", out_dir=self.tmp)
        self.no_secret_in(proc, (sa,), "-r hex")

    def test_recipients_from_stdin(self):
        # -R - reads the recipients from standard input, as age does, when the input is a file.
        (a, ra, _), (b, rb, _) = self.identity("a.key"), self.identity("b.key")
        data = b"to readers listed on stdin\n"
        inp = write_file(self.path("in"), data)
        out = self.path("sealed")
        proc = run_paes(["encrypt", "-R", "-", "-r", rb, inp, "-o", out], input_bytes=f"# a\n{ra}\n".encode())
        self.assertEqual(proc.returncode, 0, describe(proc))
        sealed = read_file(out)
        self.assertEqual(len(stanzas(sealed)), 2)
        for ident in (a, b):
            self.opens(sealed, ident, data, "-R -")
        self.finish()
        out_dir = self.new_dir("out")
        target = os.path.join(out_dir, "x")
        self.assert_fails(["encrypt", "-R", "-", "-o", target], 2, "also the input to encrypt",
                          out_dir=out_dir, input_bytes=f"{ra}\n".encode())
        self.assert_fails(["encrypt", "-R", "-", "-", "-o", target], 2, "also the input to encrypt",
                          out_dir=out_dir, input_bytes=f"{ra}\n".encode())
        self.assert_fails(["encrypt", "-R", "-", "-R", "-", inp, "-o", target], 2, "both read standard input",
                          out_dir=out_dir, input_bytes=f"{ra}\n".encode())
        self.assert_fails(["encrypt", "-R", "-", inp, "-o", target], 2, "standard input (-R -) holds no recipient",
                          out_dir=out_dir, input_bytes=b"# nobody\n")

    def test_no_identity_given(self):
        # A file sealed to recipients, opened with no option: said so, rather than a passphrase asked for.
        (_, ra, _) = self.identity("a.key")
        sealed = write_file(self.path("s.paes"), self.seal(b"for a", ["-r", ra]))
        out_dir = self.new_dir("out")
        self.assert_fails(["decrypt", sealed, "-o", os.path.join(out_dir, "x")], 2,
                          "sealed to X25519 recipients: give -i", out_dir=out_dir)

    def test_wrong_identity(self):
        (_, ra, sa), (c, _, sc) = self.identity("a.key"), self.identity("c.key")
        sealed = write_file(self.path("s.paes"), self.seal(b"secret data", ["-r", ra]))
        out_dir = self.new_dir("out")
        proc = self.assert_fails(["decrypt", "-i", c, sealed, "-o", os.path.join(out_dir, "x")], 1,
                                 "no identity matches any of the 1 recipient", out_dir=out_dir)
        self.no_secret_in(proc, (sa, sc), "wrong identity")

    def test_usage_errors(self):
        (a, ra, sa) = self.identity("a.key")
        key = self.keygen(256)
        inp = write_file(self.path("in"), b"data")
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        self.assert_fails(["encrypt", "-r", ra, "--key-file", key, inp, "-o", out], 2, "can't be combined",
                          out_dir=out_dir)
        self.assert_fails(["encrypt", "-r", ra, "--passphrase-env", "P", inp, "-o", out], 2, "can't be combined",
                          out_dir=out_dir, env={"P": "pass"})
        self.assert_fails(["encrypt", "-r", ra, "--format", "tink", inp, "-o", out], 2, "paes format",
                          out_dir=out_dir)
        self.assert_fails(["encrypt", "--mode", "ctr", "--iv", "00" * 16, "--key-file", key, "-r", ra, inp,
                           "-o", out], 2, "sealed format", out_dir=out_dir)
        key_sealed = write_file(self.path("k.paes"), self.seal(b"data", ["--key-file", key]))
        self.assert_fails(["decrypt", "-i", a, key_sealed, "-o", out], 2, "not to recipients", out_dir=out_dir)
        rec_sealed = write_file(self.path("r.paes"), self.seal(b"data", ["-r", ra]))
        for key_args in (["--key-file", key], ["--passphrase-env", "P"]):
            proc = self.assert_fails(["decrypt", *key_args, rec_sealed, "-o", out], 2, "-i", out_dir=out_dir,
                                     env={"P": "pass"})
            self.no_secret_in(proc, (sa,), "key on a recipients file")
            self.assertNotIn(read_file(key).strip(), proc.stderr.lower(), "the key in the output")
        proc = self.assert_fails(["decrypt", "--key-file", a, rec_sealed, "-o", out], 2, "-i", out_dir=out_dir)
        self.no_secret_in(proc, (sa,), "identity as --key-file")
        self.assert_fails(["decrypt", "-i", key, rec_sealed, "-o", out], 2, "identity file", out_dir=out_dir)

    def test_too_many_recipients(self):
        (a, ra, _) = self.identity("a.key")
        others = [random_recipient() for _ in range(MAX_RECIPIENTS)]
        full = write_file(self.path("full.txt"), "".join(f"{r}\n" for r in others[:MAX_RECIPIENTS - 1]).encode())
        data = b"to the last of 4096\n"
        sealed = self.seal(data, ["-R", full, "-r", ra])
        self.assertEqual(len(stanzas(sealed)), MAX_RECIPIENTS)
        self.opens(sealed, a, data, "the last of 4096 recipients")
        self.finish()
        out_dir = self.new_dir("out")
        inp = write_file(self.path("in"), data)
        self.assert_fails(["encrypt", "-R", full, "-r", ra, "-r", others[-1], inp, "-o", os.path.join(out_dir, "x")],
                          2, f"at most {MAX_RECIPIENTS} recipients", out_dir=out_dir)
        self.assert_fails(["rekey", "-i", a, "--add", "-r", others[-1], write_file(self.path("s.paes"), sealed),
                           "-o", os.path.join(out_dir, "x")], 2, f"at most {MAX_RECIPIENTS} recipients",
                          out_dir=out_dir)

    def test_recipients_refused(self):
        (_, ra, _) = self.identity("a.key")
        inp = write_file(self.path("in"), b"data")
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")

        def refused(recipient, words, code=2):
            for where, args in (("-r", ["-r", recipient]),
                                ("-R", ["-R", write_file(self.path("r.txt"), f"{ra}\n{recipient}\n".encode())])):
                proc = run_paes(["encrypt", *args, inp, "-o", out])
                problem = self.check_error(proc, code, words, f"{where} {recipient!r}")
                self.check(problem is None and proc.stdout == b"" and not os.listdir(out_dir),
                           problem or f"{where} {recipient!r}: output left")

        # Bit 255 set on a real recipient: X25519 would ignore it, and age's keys never have it.
        key = bytearray(bech32_decode(ra)[1])
        key[31] |= 0x80
        refused(bech32_encode("age", key), "not a canonical X25519")
        refused(recipient_of_u(P25519), "not a canonical X25519")
        refused(recipient_of_u(P25519 + 1), "not a canonical X25519")
        for u in LOW_ORDER_U:
            refused(recipient_of_u(u), "low-order")
        refused(ra[:-1] + ("q" if ra[-1] != "q" else "p"), "is not an age recipient")
        refused(bech32_encode("age", os.urandom(31)), "holds 31 bytes")
        refused(bech32_encode("agex", os.urandom(32)), "not an age recipient")
        # ssh keys that are no keys (real ones: tests/tink/ssh_interop.py): 32 random bytes are an
        # Ed25519 point of the prime-order group only by chance, an RSA key cut short.
        ssh_blob = base64.b64encode(b"\0\0\0\x0bssh-ed25519\0\0\0\x20" + bytes(31) + b"\x80").decode()
        refused(f"ssh-ed25519 {ssh_blob} user@host", "ssh-ed25519")
        refused("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ user@host", "malformed ssh-rsa")
        # A plugin's recipient runs its plugin, which isn't installed here: a failure, not a usage error.
        refused(bech32_encode("age1yubikey", os.urandom(33)), "age-plugin-yubikey is not on PATH", code=1)
        refused("paes-x25519:" + os.urandom(32).hex(), "unreleased version-2")
        self.finish()

    def test_recipients_file_bounds(self):
        (a, ra, _) = self.identity("a.key")
        data = b"data"
        inp = write_file(self.path("in"), data)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        # /dev/zero is read to the bound and one byte, then refused: not read forever.
        started = time.monotonic()
        self.assert_fails(["encrypt", "-R", "/dev/zero", inp, "-o", out], 2, "/dev/zero is larger than 1 MiB",
                          out_dir=out_dir, timeout=60)
        self.assertLess(time.monotonic() - started, 10, "-R /dev/zero took long")
        # A file of exactly 1 MiB (one recipient, then comment lines) is read; one byte more is refused.
        head = f"{ra}\n".encode()
        pad = (1 << 20) - len(head)
        text = head + (b"#" * 1023 + b"\n") * (pad // 1024) + b"#" * (pad % 1024 - 1) + b"\n"
        self.assertEqual(len(text), 1 << 20)
        self.opens(self.seal(data, ["-R", write_file(self.path("1mib.txt"), text)]), a, data, "a 1 MiB -R file")
        self.finish()
        self.assert_fails(["encrypt", "-R", write_file(self.path("over.txt"), text + b"\n"), inp, "-o", out], 2,
                          "over.txt is larger than 1 MiB", out_dir=out_dir)
        self.assert_fails(["encrypt", "-R", "-", inp, "-o", out], 2, "standard input (-R -) is larger than 1 MiB",
                          out_dir=out_dir, input_bytes=text + b"\n")

    def test_identity_files_refused(self):
        # What an identity file can be besides age-keygen's, named; a secret in it never echoed.
        (_, ra, _) = self.identity("a.key")
        sealed = write_file(self.path("s.paes"), self.seal(b"data", ["-r", ra]))
        out_dir = self.new_dir("out")
        good = self.identity("good.key")[2]
        plugin = bech32_encode("age-plugin-yubikey-", os.urandom(20)).upper()
        garbled = good[:-1] + ("Q" if good[-1] != "Q" else "P")
        cases = [
            (b"age-encryption.org/v1\n-> scrypt " + base64.b64encode(os.urandom(16)).rstrip(b"=") +
             b" 18\n" + os.urandom(64), "age-encrypted", ()),
            (b"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCg==\n"
             b"-----END AGE ENCRYPTED FILE-----\n", "age-encrypted", ()),
            (b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
             "not an ssh private key", ()),
            # Decrypting runs the plugin (not installed here); keygen -y can't say its recipient.
            (f"# a yubikey\n{plugin}\n".encode(), "age-plugin-yubikey", (plugin,)),
            (f"paes-x25519-secret:{bech32_decode(good)[1].hex()}\n".encode(), "unreleased version-2", (good,)),
            (f"# created: now\n\n{garbled}\n".encode(), "line 3: not an age identity", (garbled,)),
        ]
        for i, (text, words, secrets) in enumerate(cases):
            ident = write_file(self.path(f"id-{i}"), text, 0o600)
            for args in (["decrypt", "-i", ident, sealed, "-o", os.path.join(out_dir, "x")], ["keygen", "-y", ident]):
                proc = run_paes(args)
                # A file that is no identity file is the wrong file for -i or -y (exit 2); a plugin's
                # identity decrypts only with its plugin, missing here (exit 1); an identity file under
                # age -p opens as -i with its passphrase, asked on a terminal there is none of (exit 1).
                age_encrypted = words == "age-encrypted" and args[0] == "decrypt"
                code = 1 if (text.startswith(b"# a yubikey") and args[0] == "decrypt") or age_encrypted else 2
                expected = "encrypted with a passphrase (age -p), and there is no terminal" if age_encrypted else words
                problem = self.check_error(proc, code, expected, f"{args[0]} of {text[:40]!r}")
                self.check(problem is None and proc.stdout == b"" and not os.listdir(out_dir),
                           problem or f"{args[0]} of {text[:40]!r}: output left")
                for secret in secrets:
                    self.check(secret.lower().encode() not in proc.stderr.lower(), f"{args[0]}: {secret} echoed")
                    if secret is good:
                        self.check(bech32_decode(good)[1].hex().encode() not in proc.stderr, f"{args[0]}: hex echoed")
        self.finish()

    @unittest.skipUnless(AGE and AGE_KEYGEN, NO_AGE)
    def test_age_keys_interoperate(self):
        a, ra, _ = self.age_identity("age.key")
        p, rp, _ = self.identity("paes.key")
        # Both tools print both identities' recipients alike.
        for path, recipient in ((a, ra), (p, rp)):
            for cmd in ([AGE_KEYGEN, "-y", path], [PAES, "keygen", "-y", path]):
                proc = subprocess.run(cmd, capture_output=True, timeout=60)
                self.check(proc.returncode == 0 and proc.stdout.decode() == f"{recipient}\n",
                           f"{' '.join(cmd)}: {proc.stdout!r}, {describe(proc)}")
        data = os.urandom(100_000)
        # paes seals to age-keygen's recipient; age-keygen's identity file opens it.
        self.opens(self.seal(data, ["-r", ra]), a, data, "sealed to age-keygen's recipient")
        # age seals to paes' recipient and opens that with paes' identity file.
        plain = write_file(self.path("plain"), data)
        proc = subprocess.run([AGE, "-r", rp, "-o", self.path("f.age"), plain], capture_output=True, timeout=60)
        self.assertEqual(proc.returncode, 0, describe(proc))
        proc = subprocess.run([AGE, "-d", "-i", p, self.path("f.age")], capture_output=True, timeout=60)
        self.check(proc.returncode == 0 and proc.stdout == data, f"age -d -i paes' identity: {describe(proc)}")
        # One identity file holding both (as age-keygen appends to one): each recipient printed, in order,
        # and a file sealed to either one opens with it.
        multi = write_file(self.path("multi.key"), read_file(a) + b"\n# and paes' one\n" + read_file(p), 0o600)
        for cmd in ([AGE_KEYGEN, "-y", multi], [PAES, "keygen", "-y", multi]):
            proc = subprocess.run(cmd, capture_output=True, timeout=60)
            self.check(proc.returncode == 0 and proc.stdout.decode() == f"{ra}\n{rp}\n",
                       f"{' '.join(cmd)}: {proc.stdout!r}, {describe(proc)}")
        for recipient in (ra, rp):
            self.opens(self.seal(data, ["-r", random_recipient(), "-r", recipient]), multi, data,
                       f"sealed to {recipient}")
        self.does_not_open(self.seal(data, ["-r", random_recipient()]), multi, "sealed to neither")
        self.finish()

    @unittest.skipUnless(AGE, NO_AGE)
    def test_age_files_open_and_version_2_is_named(self):
        p, rp, _ = self.identity("p.key")
        _, rq, _ = self.identity("q.key")
        data = b"an age file\n"
        plain = write_file(self.path("plain"), data)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        for armor in ([], ["-a"]):
            aged = self.path(f"f{len(armor)}.age")
            proc = subprocess.run([AGE, "-r", rp, *armor, "-o", aged, plain], capture_output=True, timeout=60)
            self.assertEqual(proc.returncode, 0, describe(proc))
            # paes reads age's files (issue 41): from a file, from stdin, and re-keyed to another recipient.
            self.opens(read_file(aged), p, data, f"age{' -a' if armor else ''}")
            proc = run_paes(["decrypt", "-i", p], read_file(aged))
            self.check(proc.returncode == 0 and proc.stdout == data, f"age file on stdin: {describe(proc)}")
            rekeyed = self.path(f"f{len(armor)}.rekeyed.age")
            proc = run_paes(["rekey", "-i", p, "-r", rq, *armor, aged, "-o", rekeyed])
            self.check(proc.returncode == 0 and read_file(rekeyed).startswith(read_file(aged)[:20]),
                       f"rekey of an age file keeps it an age file: {describe(proc)}")
        # Version 2 (never released): a version-1 file with its version byte set to 2 is refused as that.
        key = self.keygen(256)
        v2 = bytearray(self.seal(b"data", ["--key-file", key]))
        v2[4] = 2
        v2 = write_file(self.path("v2.paes"), bytes(v2))
        for key_args in (["--key-file", key], ["-i", p]):
            self.assert_fails(["decrypt", *key_args, v2, "-o", out], 1, "paes format version 2", out_dir=out_dir)


# --------------------------------------------------------------------------- 9b. rekey

class RekeyTest(RecipientsCase):
    """9b: paes rekey: --add, a new list, standard output, in place; the preamble and body copied
    byte for byte; what it refuses."""

    def rekey(self, args, what):
        proc = run_paes(["rekey", *args])
        self.assertEqual((proc.returncode, proc.stdout), (0, b""), f"rekey {what}: {describe(proc)}")
        return proc

    def assert_same_body(self, before, after, what):
        self.assertEqual(after[:PREAMBLE_LEN], before[:PREAMBLE_LEN], f"{what}: the preamble changed")
        self.assertEqual(after[header_end(after):], before[header_end(before):], f"{what}: the body changed")

    def test_add_then_replace(self):
        (a, ra, sa), (b, rb, _), (c, rc, _) = self.identity("a.key"), self.identity("b.key"), self.identity("c.key")
        data = os.urandom(300_000)
        sealed = self.seal(data, ["-r", ra], ["--segment-size", "64K"])
        src = write_file(self.path("s.paes"), sealed)
        added = self.path("added.paes")
        proc = self.rekey(["-i", a, "--add", "-r", rb, "-v", src, "-o", added], "--add")
        body_len = len(sealed) - header_end(sealed)
        self.assertRegex(proc.stderr.decode(),
                         rf"\Apaes: rekey: 1 recipient -> 2, {body_len} body bytes authenticated and copied "
                         rf"unchanged[^\n]*\n\Z")
        self.no_secret_in(proc, (sa,), "rekey -v")
        out = read_file(added)
        self.assertEqual(stanzas(out)[0], stanzas(sealed)[0], "--add did not keep the file's stanza")
        self.assertEqual(len(stanzas(out)), 2)
        self.assert_same_body(sealed, out, "--add")
        for ident in (a, b):
            self.opens(out, ident, data, "after --add")
        self.does_not_open(out, c, "after --add")
        # Without --add the recipients given are the new list: b re-keys it to c alone.
        replaced = self.path("replaced.paes")
        self.rekey(["-i", b, "-R", write_file(self.path("c.txt"), f"# carol\n{rc}\n".encode()), added,
                    "-o", replaced], "a new list")
        out = read_file(replaced)
        self.assertEqual(len(stanzas(out)), 1)
        self.assert_same_body(sealed, out, "a new list")
        self.opens(out, c, data, "after a new list")
        for ident in (a, b):
            self.does_not_open(out, ident, "after a new list")
        self.finish()

    def test_standard_input_and_output(self):
        (a, ra, _), (b, rb, _) = self.identity("a.key"), self.identity("b.key")
        data = os.urandom(200_000)
        sealed = self.seal(data, ["-r", ra], ["--segment-size", "64K"])
        src = write_file(self.path("s.paes"), sealed)
        to_file = self.path("to-file.paes")
        self.rekey(["-i", a, "-r", rb, src, "-o", to_file], "to a file")
        to_file = read_file(to_file)
        for what, cmds, feed in (("to a pipe", [[PAES, "rekey", "-i", a, "-r", rb, src, "-o", "-"], ["cat"]], None),
                                 ("a pipe to a pipe", [[PAES, "rekey", "-i", a, "-r", rb, "-", "-o", "-"], ["cat"]],
                                  sealed),
                                 ("a pipe, no names", [[PAES, "rekey", "-i", a, "-r", rb]], sealed)):
            out, codes, errs, _ = pipe(cmds, data=feed)
            self.assertEqual(codes[0], 0, f"{what}: {errs[0]!r}")
            self.assertEqual(errs[0], b"")
            # The same structure as re-keyed to a file: the preamble, one stanza of the same size, the MAC line,
            # the body unchanged.
            self.assertEqual(len(out), len(to_file), what)
            self.assertEqual(header_end(out), header_end(to_file), what)
            self.assert_same_body(sealed, out, what)
            self.assertNotEqual(out, to_file, f"{what}: the same ephemeral key twice")
            self.opens(out, b, data, what)
            self.does_not_open(out, a, what)
        self.finish()

    def test_refuses_a_header_readers_would_refuse(self):
        # Issue 39: a kept X25519 stanza that opening never reached, and a header grown past the 1 MiB
        # every reader accepts, each fail (exit 1) with nothing under the output's name.
        (a, ra, sa), (_, rb, _) = self.identity("a.key"), self.identity("b.key")
        data = b"kept stanzas\n" * 100
        sealed = self.seal(data, ["-r", ra])
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        low_order = stanza_text(["X25519", age_b64(bytes(32)).decode()], os.urandom(32))
        one_argument_too_many = stanza_text(["X25519", age_b64(os.urandom(32)).decode(), "x"], os.urandom(32))
        for what, stanza in (("a low-order share", low_order), ("two arguments", one_argument_too_many)):
            src = write_file(self.path("kept.paes"), with_stanzas_added(sealed, sa, [stanza]))
            self.assert_fails(["rekey", "-i", a, "--add", "-r", rb, src, "-o", out], 1, "malformed X25519 stanza",
                              out_dir=out_dir)
        # A header 40 bytes short of 1 MiB opens; one more X25519 stanza (98 bytes) would pass the bound.
        limit = 1 << 20
        own = header_end(sealed) - PREAMBLE_LEN
        low, high = 0, limit  # the longest padding stanza body that keeps the header within limit - 40
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if own + len(stanza_text(["padding"], bytes(mid))) <= limit - 40 else (low, mid - 1)
        pad = low
        big = with_stanzas_added(sealed, sa, [stanza_text(["padding"], os.urandom(pad))])
        self.assertTrue(limit - 98 < header_end(big) - PREAMBLE_LEN <= limit, header_end(big))
        src = write_file(self.path("big.paes"), big)
        self.opens(big, a, data, "a header just under 1 MiB")
        self.assert_fails(["rekey", "-i", a, "--add", "-r", rb, src, "-o", out], 1, "past the 1 MiB",
                          out_dir=out_dir)
        self.finish()

    def test_checks_the_aad_and_every_body_segment(self):
        # Issue 39: rekey takes the file's --aad (the header MAC covers it) and authenticates every
        # segment of the body it copies. A wrong or missing --aad, a damaged body and a truncated one
        # each fail with exit 1: to a file with nothing under the output's name, to a pipe as decrypt.
        (a, ra, sa), (b, rb, _) = self.identity("a.key"), self.identity("b.key")
        data = os.urandom(100_000)
        aad = ["--aad", "backup 2026-11"]
        sealed = self.seal(data, ["-r", ra], [*aad, "--segment-size", "4K"])
        src = write_file(self.path("aad.paes"), sealed)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        for what, given in (("no --aad", []), ("another --aad", ["--aad", "backup 2026-12"])):
            self.assert_fails(["rekey", "-i", a, "-r", rb, *given, src, "-o", out], 1, "header MAC mismatch",
                              out_dir=out_dir)
        rekeyed = self.path("rekeyed.paes")
        self.rekey(["-i", a, "-r", rb, *aad, src, "-o", rekeyed], "with its --aad")
        proc = run_paes(["decrypt", "-i", b, *aad, rekeyed, "-o", "-"])
        self.assertEqual((proc.returncode, proc.stdout), (0, data), describe(proc))
        damaged = bytearray(sealed)
        damaged[len(sealed) // 2] ^= 0x01
        self.assert_fails(["rekey", "-i", a, "-r", rb, *aad, write_file(self.path("d.paes"), bytes(damaged)),
                           "-o", out], 1, "authentication failed", out_dir=out_dir)
        # Cut after 3 whole segments: a length sealing makes, whose last segment was not sealed as last.
        cut = sealed[:header_end(sealed) + 3 * 4096]
        self.assert_fails(["rekey", "-i", a, "-r", rb, *aad, write_file(self.path("cut.paes"), cut), "-o", out], 1,
                          "authentication failed", out_dir=out_dir)
        piped, codes, errs, _ = pipe([[PAES, "rekey", "-i", a, "-r", rb, *aad, "-", "-o", "-"], ["cat"]], data=cut)
        self.assertEqual(codes[0], 1, f"a truncated body through a pipe: {errs[0]!r}")
        self.assertIn(b"authentication failed", errs[0])
        self.assertTrue(len(piped) < len(cut), "the unverified last segment reached the pipe")
        # A header whose MAC doesn't cover the aad (as paes sealed before issue 39): decrypt refuses it
        # without --allow-uncommitted; rekey warns, and writes a header that covers the aad.
        old_mac = write_file(self.path("old-mac.paes"), with_stanzas_added(sealed, sa, []))
        self.assert_fails(["decrypt", "-i", a, *aad, old_mac, "-o", out], 1, "--allow-uncommitted", out_dir=out_dir)
        proc = run_paes(["rekey", "-i", a, "-r", rb, *aad, old_mac, "-o", rekeyed, "-f"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn(b"paes: warning: ", proc.stderr)
        proc = run_paes(["decrypt", "-i", b, *aad, rekeyed, "-o", "-"])
        self.assertEqual((proc.returncode, proc.stdout, proc.stderr), (0, data, b""), describe(proc))
        self.finish()

    def test_refused(self):
        (a, ra, sa), (b, rb, sb) = self.identity("a.key"), self.identity("b.key")
        data = b"rekey refusals\n" * 100
        sealed = self.seal(data, ["-r", ra])
        src = write_file(self.path("s.paes"), sealed)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        key = self.keygen(256)
        for what, key_args, env in (("a key", ["--key-file", key], None),
                                    ("a passphrase", ["--passphrase-env", "P", "--scrypt-log-n", "10"], {"P": "pw"})):
            # A raw-key file has no stanzas, and a passphrase's scrypt stanza stands alone (age.md).
            other = write_file(self.path("other.paes"), self.seal(data, key_args, env=env))
            self.assert_fails(["rekey", "-i", a, "-r", rb, other, "-o", out], 2, "not to recipients",
                              out_dir=out_dir)
        proc = self.assert_fails(["rekey", "-i", b, "-r", rb, src, "-o", out], 1, "no identity matches",
                                 out_dir=out_dir)
        self.no_secret_in(proc, (sa, sb), "rekey with a wrong identity")
        damaged = bytearray(sealed)
        # Another base64 letter in the middle of the MAC: still canonical base64
        # (a flipped bit could make '+' or 'z' a character outside the alphabet).
        at = header_end(sealed) - 10
        damaged[at] = ord("B") if damaged[at] == ord("A") else ord("A")
        self.assert_fails(["rekey", "-i", a, "-r", rb, write_file(self.path("d.paes"), bytes(damaged)), "-o", out],
                          1, "header MAC mismatch", out_dir=out_dir)
        self.assert_fails(["rekey", "-i", a, src, "-o", out], 2, "needs the recipients", out_dir=out_dir)
        self.assert_fails(["rekey", "-r", rb, src, "-o", out], 2, "--identity is required", out_dir=out_dir)
        self.assert_fails(["rekey", "-i", a, "-R", "-", "-o", out], 2, "also the input to re-key", out_dir=out_dir,
                          input_bytes=sealed)
        key31 = bytearray(bech32_decode(rb)[1])
        key31[31] |= 0x80
        self.assert_fails(["rekey", "-i", a, "-r", bech32_encode("age", key31), src, "-o", out], 2,
                          "not a canonical X25519", out_dir=out_dir)
        self.assert_fails(["rekey", "-i", a, "-r", sb, src, "-o", out], 2, "is an identity", out_dir=out_dir)
        # The output over the identity file: refused, -f or not, and the identity kept.
        identity = read_file(a)
        for force in ([], ["-f"]):
            self.assert_fails(["rekey", "-i", a, "-r", rb, src, "-o", a, *force], 2, "is the file given to -i")
            self.assertEqual(read_file(a), identity)
        # In place only with -f; then b opens it and a no longer does.
        self.assert_fails(["rekey", "-i", a, "-r", rb, src, "-o", src], 1, "already exists")
        self.assertEqual(read_file(src), sealed)
        self.rekey(["-i", a, "-r", rb, src, "-o", src, "-f"], "in place")
        self.assert_same_body(sealed, read_file(src), "in place")
        self.opens(read_file(src), b, data, "in place")
        self.does_not_open(read_file(src), a, "in place")
        self.finish()
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith(".")], [], "a temporary was left")

    def test_help_says_removal_is_not_revocation(self):
        proc = run_paes(["rekey", "--help"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("removing a recipient is not revocation", " ".join(proc.stdout.decode().lower().split()))


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
