#!/usr/bin/env python3
"""paes inspect through the binary: what a file is, without its key.

  P. paes files, all version 3 and committing: a raw-key file (its header the
     MAC line alone), a passphrase file (a scrypt stanza, its log2 N), a file
     sealed to two recipients (two X25519 stanzas), each with its segment size,
     key size, header, overhead and plaintext size adding up to the file's
     size; the same read from a pipe; a version-1 passphrase file (paes reads
     it only with --allow-uncommitted) said not to commit.
  F. foreign files named, exit 0: a bare Tink stream as likely, a real age
     file (age -r: its stanza and plaintext size), an armored age file,
     openssl enc -pbkdf2's Salted__, OpenPGP binary and armored.
  D. damage: a length no sealing makes is reported as truncated with exit 1,
     and so are an empty file and bytes of no known format, never a crash.
  J. --json: one object with age-inspect's fields and paes' own.
Python 3.11 standard library only; age and gpg cases skip without the tools.
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import describe, random_raw_key, read_file, run_paes, run_test_script, write_file  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402
from harness.sealed_format import v1_passphrase_key, v1_preamble  # noqa: E402

PAES = "paes"
OPENSSL = "openssl"
SEGMENT = 4096
TAG = 16


def facts(text):
    """The 'name: value' lines of inspect's text output, stanza lines gathered in a list."""
    out = {"stanza": []}
    for line in text.splitlines():
        name, _, value = line.partition(": ")
        if name == "stanza":
            out["stanza"].append(value)
        else:
            out[name] = value
    return out


class InspectTestCase(SealedTestCase):
    prefix = "paes-inspect-"

    def setUp(self):
        super().setUp()
        self.plain_len = 3 * SEGMENT + 100
        self.plain = write_file(self.path("plain"), os.urandom(self.plain_len))
        self.key = write_file(self.path("key"), random_raw_key(32), 0o600)

    def sealed_with(self, *args):
        out = self.path("sealed.paes")
        proc = run_paes(["encrypt", "--segment-size", SEGMENT, *args, self.plain, "-o", out, "-f"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        return out

    def inspect(self, path, status=0, json_output=False):
        proc = run_paes(["inspect", *(["--json"] if json_output else []), path])
        self.assertEqual(proc.returncode, status, describe(proc))
        self.assertNotIn(b"terminate", proc.stderr)
        return json.loads(proc.stdout) if json_output else facts(proc.stdout.decode())

    def assert_adds_up(self, got, path):
        self.assertEqual(int(got["plaintext size"]), self.plain_len, got)
        self.assertEqual(int(got["header"]) + int(got["overhead"]) + int(got["plaintext size"]),
                         os.path.getsize(path), got)


class PaesFileTest(InspectTestCase):
    """P."""

    def test_raw_key_file(self):
        key128 = write_file(self.path("key128"), random_raw_key(16), 0o600)
        got = self.inspect(self.sealed_with("--key-file", key128))
        self.assertEqual((got["format"], got["version"], got["key source"]), ("paes", "3", "raw key"), got)
        self.assertEqual((got["key size"], got["segment size"]), ("AES-128", str(SEGMENT)), got)
        self.assertTrue(got["committing"].startswith("yes"), got)
        # The preamble and the MAC line ("--- ", 43 base64 characters, LF).
        self.assertEqual(got["header"], str(32 + 48), got)
        # 4 segments: the Tink header (1 + 16 + 7 bytes) and 4 tags.
        self.assertEqual(got["overhead"], str(24 + 4 * TAG), got)
        self.assert_adds_up(got, self.path("sealed.paes"))
        self.assertNotIn("truncated", got)

    def test_passphrase_file(self):
        write_file(self.path("pass"), b"correct horse\n", 0o600)
        got = self.inspect(self.sealed_with("--passphrase-file", self.path("pass"), "--scrypt-log-n", "11"))
        self.assertEqual(got["key source"], "passphrase (scrypt log2 N 11)", got)
        self.assertEqual((got["version"], got["key size"]), ("3", "AES-256"), got)
        self.assertTrue(got["committing"].startswith("yes"), got)
        # The preamble, the scrypt stanza (36 + 44 bytes with a two-digit log2 N) and the MAC line.
        self.assertEqual(got["header"], str(32 + 80 + 48), got)
        self.assert_adds_up(got, self.path("sealed.paes"))

    def test_version_1_passphrase_file(self):
        preamble = v1_preamble(2, 32, SEGMENT, 10, os.urandom(16))
        data = self.v1_file(preamble, read_file(self.plain), v1_passphrase_key(b"legacy", preamble))
        sealed = write_file(self.path("v1.paes"), data)
        got = self.inspect(sealed)
        self.assertEqual((got["format"], got["version"], got["key source"]),
                         ("paes", "1", "passphrase (scrypt log2 N 10)"), got)
        self.assertTrue(got["committing"].startswith("no"), got)
        self.assertEqual((got["key size"], got["header"]), ("AES-256", "32"), got)
        self.assert_adds_up(got, sealed)
        doc = self.inspect(sealed, json_output=True)
        self.assertEqual((doc["version"], doc["committing"], doc["scrypt_log2_n"]), ("paes/v1", False, 10), doc)

    def test_two_recipients(self):
        recipients = []
        for name in ("alice", "bob"):
            proc = run_paes(["keygen", "--x25519", "-o", self.path(name)])
            self.assertEqual(proc.returncode, 0, describe(proc))
            proc = run_paes(["keygen", "-y", self.path(name)])
            recipients += ["-r", proc.stdout.decode().strip()]
        sealed = self.sealed_with(*recipients)
        got = self.inspect(sealed)
        self.assertEqual((got["version"], got["key source"], got["recipients"]), ("3", "recipients", "2"), got)
        self.assertEqual(got["stanza"], ["X25519", "X25519"], got)
        self.assertGreater(int(got["header"]), 32 + 2 * 100, got)
        self.assert_adds_up(got, sealed)

    def test_a_pipe_is_read_to_its_end(self):
        sealed = self.sealed_with("--key-file", self.key)
        with open(sealed, "rb") as f:
            proc = run_paes(["inspect", "-"], input_bytes=f.read())
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(facts(proc.stdout.decode()), self.inspect(sealed))


class ForeignFileTest(InspectTestCase):
    """F."""

    def test_bare_tink_stream_is_likely(self):
        tink = self.path("bare.tink")
        proc = run_paes(["encrypt", "--format", "tink", "--key-file", self.key, self.plain, "-o", tink])
        self.assertEqual(proc.returncode, 0, describe(proc))
        got = self.inspect(tink)
        self.assertEqual((got["format"], got["key size"]), ("tink (likely)", "AES-256"), got)

    def test_age_file(self):
        if shutil.which("age") is None or shutil.which("age-keygen") is None:
            self.skipTest("age not installed")
        subprocess.run(["age-keygen", "-o", self.path("id")], check=True, capture_output=True)
        recipient = subprocess.run(["age-keygen", "-y", self.path("id")], check=True,
                                   capture_output=True).stdout.decode().strip()
        for armor in (False, True):
            out = self.path("f.age")
            subprocess.run(["age", *(["-a"] if armor else []), "-r", recipient, "-o", out, self.plain],
                           check=True, capture_output=True)
            got = self.inspect(out)
            self.assertEqual((got["format"], got["version"]), ("age", "1"), got)
            if armor:
                self.assertEqual(got["armor"], "yes", got)
                continue
            self.assertEqual(got["stanza"], ["X25519"], got)
            self.assert_adds_up(got, out)
            os.remove(out)

    def test_openssl_salted(self):
        out = self.path("f.enc")
        proc = subprocess.run([OPENSSL, "enc", "-aes-256-ctr", "-pbkdf2", "-pass", "pass:x", "-in", self.plain,
                               "-out", out], capture_output=True)
        self.assertEqual(proc.returncode, 0, describe(proc))
        got = self.inspect(out)
        self.assertEqual((got["format"], got["header"]), ("openssl-salted", "16"), got)

    def test_openpgp(self):
        armored = write_file(self.path("m.asc"), b"-----BEGIN PGP MESSAGE-----\n\njA0ECQMC\n")
        self.assertEqual(self.inspect(armored)["format"], "openpgp")
        self.assertEqual(self.inspect(armored)["armor"], "yes")
        # An old-format symmetric-key encrypted session key packet, version 4, as gpg -c writes it.
        binary = write_file(self.path("m.gpg"), bytes([0x8C, 0x0D, 0x04, 0x09, 0x03, 0x02]) + os.urandom(60))
        self.assertEqual(self.inspect(binary)["format"], "openpgp")
        if shutil.which("gpg"):
            out = self.path("g.gpg")
            proc = subprocess.run(["gpg", "--batch", "--homedir", self.new_dir("gnupg", 0o700), "--passphrase", "x",
                                   "--pinentry-mode", "loopback", "-c", "-o", out, self.plain], capture_output=True)
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assertEqual(self.inspect(out)["format"], "openpgp")


class DamageTest(InspectTestCase):
    """D."""

    def test_truncated_file(self):
        sealed = self.sealed_with("--key-file", self.key)
        data = read_file(sealed)
        # Cut 5 bytes into segment 1: shorter than a tag, a length no sealing makes; inside
        # the Tink header (after the preamble and the 48-byte MAC line); inside the MAC line;
        # inside the preamble.
        for length in (32 + 48 + SEGMENT + 5, 32 + 48 + 18, 32 + 20, 20):
            write_file(sealed, data[:length])
            got = self.inspect(sealed, status=1)
            self.assertEqual(got["format"], "paes", got)
            self.assertIn("truncated", got, got)
            self.assertNotIn("plaintext size", got, got)

    def test_empty_and_unknown(self):
        got = self.inspect(write_file(self.path("empty"), b""), status=1)
        self.assertEqual((got["format"], got["file size"]), ("unknown", "0"), got)
        self.assertIn("empty", got["problem"])
        got = self.inspect(write_file(self.path("text"), b"just some text\n"), status=1)
        self.assertEqual(got["format"], "unknown", got)


class JsonTest(InspectTestCase):
    """J."""

    def test_fields(self):
        doc = self.inspect(self.sealed_with("--key-file", self.key), json_output=True)
        age_fields = {"version", "postquantum", "armor", "stanza_types", "sizes"}
        self.assertLessEqual(age_fields, set(doc), doc)
        self.assertEqual(set(doc["sizes"]), {"header", "armor", "overhead", "min_payload", "max_payload",
                                             "min_padding", "max_padding"})
        self.assertEqual((doc["format"], doc["version"], doc["key_source"]), ("paes", "paes/v3", "raw-key"), doc)
        self.assertEqual((doc["format_version"], doc["committing"], doc["sizes"]["header"]), (3, True, 32 + 48), doc)
        self.assertEqual((doc["sizes"]["min_payload"], doc["sizes"]["max_payload"]), (self.plain_len,) * 2, doc)
        self.assertEqual((doc["segment_size"], doc["key_bits"], doc["truncated"]), (SEGMENT, 256, False), doc)
        self.assertEqual(doc["sizes"]["header"] + doc["sizes"]["overhead"] + self.plain_len, doc["file_size"], doc)
        self.assertEqual((doc["postquantum"], doc["stanza_types"], doc["problem"]), ("yes", [], None), doc)
        proc = run_paes(["inspect", "--json", write_file(self.path("empty"), b"")])
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertEqual(json.loads(proc.stdout)["format"], "unknown")


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
