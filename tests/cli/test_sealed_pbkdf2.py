#!/usr/bin/env python3
"""openssl enc -pbkdf2 interop through the real binary, both ways.

Run as:  python3 tests/cli/test_sealed_pbkdf2.py --paes build/release/paes --openssl /usr/bin/openssl [TestClass ...]

One of the test_sealed_*.py files (the ctests cli_sealed.<class>); their shared helpers are
in tests/harness (sealed_cases, sealed_format, pipes). Covers:
  5. openssl enc -pbkdf2 interop, both ways, every raw mode and key size, --iter; wrong
     passphrase ("bad decrypt") and input without "Salted__"; passphrase files (CRLF,
     over 1023 bytes, a NUL) read as openssl -pass file: reads them.

Python 3.11 standard library only. Exits non-zero when any test fails; every skip says why.
"""

import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import describe, read_file, run_paes, run_test_script, write_file  # noqa: E402
from harness.oracles import RAW_MODES  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402

PAES = "paes"
OPENSSL = "openssl"
POOL = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))


# --------------------------------------------------------------------------- 5. pbkdf2

class Pbkdf2Test(SealedTestCase):
    """5: openssl enc -pbkdf2 interop, both ways."""
    ctest_labels = ("threads",)

    def test_every_mode_and_key_size(self):
        env = {"PAES_TEST_PASS": "pbkdf2 passphrase"}
        full_env = dict(os.environ, **env)
        jobs = [(m, b) for m in RAW_MODES for b in (128, 192, 256)]

        def one_mode_and_key(index, job):
            mode, bits = job
            size = 1000 if mode == "cfb1" else 70001
            data = os.urandom(size)
            inp = write_file(os.path.join(self.tmp, f"p-in-{index}"), data)
            enc = os.path.join(self.tmp, f"p-enc-{index}")
            problems = []
            what = f"{mode}-{bits}"
            proc = run_paes(["encrypt", "--mode", mode, "--pbkdf2", "--passphrase-env",
                        "PAES_TEST_PASS", "--key-bits", bits, inp, "-o", enc], env=env)
            if proc.returncode != 0:
                problems.append(f"{what} paes encrypt: {describe(proc)}")
            else:
                blob = read_file(enc)
                if not blob.startswith(b"Salted__"):
                    problems.append(f"{what}: paes output lacks Salted__")
                o = subprocess.run([OPENSSL, "enc", "-d", f"-aes-{bits}-{mode}", "-pbkdf2",
                                    "-pass", "env:PAES_TEST_PASS", "-in", enc],
                                   capture_output=True, env=full_env, timeout=60)
                if o.returncode != 0 or o.stdout != data:
                    problems.append(f"{what}: openssl cannot read paes' output "
                                    f"(rc {o.returncode}, {o.stderr[-200:]!r})")
            o = subprocess.run([OPENSSL, "enc", f"-aes-{bits}-{mode}", "-pbkdf2", "-pass",
                                "env:PAES_TEST_PASS", "-in", inp, "-out", enc],
                               capture_output=True, env=full_env, timeout=60)
            if o.returncode != 0:
                problems.append(f"{what}: openssl encrypt failed: {o.stderr!r}")
            else:
                dec = os.path.join(self.tmp, f"p-dec-{index}")
                proc = run_paes(["decrypt", "--mode", mode, "--pbkdf2", "--passphrase-env",
                            "PAES_TEST_PASS", "--key-bits", bits, enc, "-o", dec], env=env)
                if proc.returncode != 0:
                    problems.append(f"{what} paes decrypt of openssl output: {describe(proc)}")
                elif read_file(dec) != data:
                    problems.append(f"{what}: paes decrypt of openssl output differs")
                if os.path.exists(dec):
                    os.remove(dec)
            for p in (inp, enc):
                if os.path.exists(p):
                    os.remove(p)
            return problems

        for problems in POOL.map(lambda ij: one_mode_and_key(*ij), enumerate(jobs)):
            self.check(not problems, "; ".join(problems))
        self.finish()

    def test_passphrase_files_read_as_openssl_reads_them(self):
        """--pbkdf2 takes a --passphrase-file's passphrase as 'openssl enc -pass file:'
        does (a '\\r' before the newline stays, at most 1023 bytes, up to a NUL), so each
        reads the other's files; paes warns where that is not the plain first line."""
        data = os.urandom(5000)
        inp = write_file(self.path("in"), data)
        cases = {
            "CRLF": (b"pbkdf2 passphrase\r\nsecond line\r\n", "'\\r' is part of the passphrase"),
            "first line of 1100 bytes": (bytes(random.choice(b"abcdefgh") for _ in range(1100)) + b"\n",
                                         "longer than 1023 bytes"),
            "1023 bytes and CRLF": (b"q" * 1023 + b"\r\n", None),  # the cut drops the '\r': no difference
            "1023 bytes exactly": (b"w" * 1023 + b"\n", None),
            "NUL inside": (b"before\x00after\n", "NUL byte"),
            "no newline": (b"just this", None),
        }
        for what, (content, warning) in cases.items():
            pw = write_file(self.path("pw"), content, 0o600)
            for mode in ("cbc", "ctr"):
                # openssl -> paes
                enc = self.path(f"enc-{mode}")
                o = subprocess.run([OPENSSL, "enc", f"-aes-256-{mode}", "-pbkdf2", "-pass", f"file:{pw}",
                                    "-in", inp, "-out", enc], capture_output=True)
                self.assertEqual(o.returncode, 0, o.stderr)
                proc = run_paes(["decrypt", "--mode", mode, "--pbkdf2", "--passphrase-file", pw, enc, "-o",
                            self.path("dec"), "-f"])
                self.check(proc.returncode == 0 and read_file(self.path("dec")) == data,
                           f"{what}, {mode}: paes can't read openssl's file ({describe(proc)})")
                # paes -> openssl
                proc = run_paes(["encrypt", "--mode", mode, "--pbkdf2", "--passphrase-file", pw, inp, "-o", enc, "-f"])
                self.assertEqual(proc.returncode, 0, describe(proc))
                o = subprocess.run([OPENSSL, "enc", "-d", f"-aes-256-{mode}", "-pbkdf2", "-pass", f"file:{pw}",
                                    "-in", enc], capture_output=True)
                self.check(o.returncode == 0 and o.stdout == data,
                           f"{what}, {mode}: openssl can't read paes' file (rc {o.returncode}, {o.stderr[-200:]!r})")
                err = proc.stderr.decode(errors="replace")
                if warning is None:
                    self.check(err == "", f"{what}: unexpected stderr {err!r}")
                else:
                    self.check(err.startswith("paes: warning: ") and warning in err and
                               len(err.splitlines()) == 1, f"{what}: expected one warning ({warning!r}), got {err!r}")
                self.check(content[:12].strip(b"\r\n\x00") not in proc.stderr, f"{what}: the passphrase on stderr")
        self.finish()

    def test_sealed_format_keeps_its_own_passphrase_file_rule(self):
        """The sealed format (not openssl's) drops a "\\r\\n" ending: the file's CRLF
        passphrase opens with the passphrase typed without '\\r'."""
        data = os.urandom(3000)
        pw = write_file(self.path("pw"), b"sealed passphrase\r\n", 0o600)
        sealed = self.seal(data, ["--passphrase-file", pw], ["--scrypt-log-n", 10])
        proc, got = self.open_sealed(sealed, ["--passphrase-env", "PAES_TEST_PASS"],
                                     env={"PAES_TEST_PASS": "sealed passphrase"})
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)

    def test_iter(self):
        env = {"PAES_TEST_PASS": "iter passphrase"}
        full_env = dict(os.environ, **env)
        data = os.urandom(5000)
        inp = write_file(self.path("in"), data)
        enc = self.path("enc")
        o = subprocess.run([OPENSSL, "enc", "-aes-256-ctr", "-pbkdf2", "-iter", "1000", "-pass",
                            "env:PAES_TEST_PASS", "-in", inp, "-out", enc],
                           capture_output=True, env=full_env)
        self.assertEqual(o.returncode, 0, o.stderr)
        proc = run_paes(["decrypt", "--mode", "ctr", "--pbkdf2", "--iter", 1000, "--passphrase-env",
                    "PAES_TEST_PASS", enc, "-o", self.path("dec")], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.path("dec")), data)
        # The default count (10000) gives a different key: CTR decrypts to garbage.
        proc = run_paes(["decrypt", "--mode", "ctr", "--pbkdf2", "--passphrase-env",
                    "PAES_TEST_PASS", enc, "-o", self.path("dec2")], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertNotEqual(read_file(self.path("dec2")), data, "--iter was ignored")
        proc = run_paes(["encrypt", "--mode", "cbc", "--pbkdf2", "--iter", 1000, "--passphrase-env",
                    "PAES_TEST_PASS", inp, "-o", self.path("enc2")], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        o = subprocess.run([OPENSSL, "enc", "-d", "-aes-256-cbc", "-pbkdf2", "-iter", "1000",
                            "-pass", "env:PAES_TEST_PASS", "-in", self.path("enc2")],
                           capture_output=True, env=full_env)
        self.assertEqual(o.returncode, 0, o.stderr)
        self.assertEqual(o.stdout, data)

    def test_wrong_passphrase_and_no_salt_header(self):
        data = os.urandom(4000)
        inp = write_file(self.path("in"), data)
        out_dir = self.new_dir("out")
        good = dict(os.environ, PAES_TEST_PASS="right")
        # A wrong passphrase leaves valid padding about once in 256 tries: use a salt for
        # which openssl itself says "bad decrypt", so the expectation is certain.
        for attempt in range(20):
            enc = self.path("enc")
            subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pbkdf2", "-pass",
                            "env:PAES_TEST_PASS", "-in", inp, "-out", enc], env=good, check=True)
            wrong = dict(os.environ, PAES_TEST_PASS="wrong")
            o = subprocess.run([OPENSSL, "enc", "-d", "-aes-256-cbc", "-pbkdf2", "-pass",
                                "env:PAES_TEST_PASS", "-in", enc], env=wrong, capture_output=True)
            if o.returncode != 0:
                break
        else:
            self.skipTest("openssl accepted a wrong passphrase 20 times")
        out = os.path.join(out_dir, "dec")
        self.assert_fails(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-env",
                           "PAES_TEST_PASS", enc, "-o", out], 1, "bad decrypt", out_dir=out_dir,
                          env={"PAES_TEST_PASS": "wrong"})
        self.assert_fails(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-env",
                           "PAES_TEST_PASS", inp, "-o", out], 1, "Salted__", out_dir=out_dir,
                          env={"PAES_TEST_PASS": "right"})
        self.assert_fails(["decrypt", "--mode", "ctr", "--pbkdf2", "--passphrase-env",
                           "PAES_TEST_PASS", "-o", out], 1, "Salted__", out_dir=out_dir,
                          env={"PAES_TEST_PASS": "right"}, input_bytes=b"Salted_")


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
