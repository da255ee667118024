#!/usr/bin/env python3
"""paes -a/--armor through the binary: text that passes a text-only check.

  1. Sealed armor (key file, passphrase, recipients, Tink): the BEGIN and END lines, every
     line printable ASCII of at most 64 columns, round trips from a file and from stdin,
     CRLF line ends and whitespace after the END line taken.
  2. Raw modes and --pbkdf2: exactly openssl enc -a's bytes (sizes around a 48-byte line,
     and many chunks smaller than the lines they meet), read back with -a, openssl's read
     by paes and paes' by openssl; never decoded without -a.
  3. Damaged armor (a bad character, no END line, a cut line, a non-canonical line, a line
     after the last, text after END) fails with exit 1 and leaves no output.
  4. --range of an armored file is refused with its reason; -a with --engine mpi too.
  5. Armored output may go to a terminal; paes inspect names an armored paes file.
"""

import base64
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (ScratchTestCase, describe, random_raw_key, read_file, run_paes, run_test_script,  # noqa: E402
                     write_file)

PAES = "paes"
OPENSSL = "openssl"

BEGIN = b"-----BEGIN PAES ENCRYPTED FILE-----"
END = b"-----END PAES ENCRYPTED FILE-----"
SIZES = [0, 1, 47, 48, 49, 100_003]
PASS_ENV = {"PAES_TEST_PASS": "correct horse"}


def text_problems(text, markers):
    """What keeps `text` from being armor that a text-only channel carries (empty: none)."""
    problems = []
    if text and not text.endswith(b"\n"):
        problems.append("no final newline")
    lines = text.split(b"\n")[:-1]
    for number, line in enumerate(lines, 1):
        if len(line) > 64:
            problems.append(f"line {number} has {len(line)} columns")
        if not all(0x20 <= c < 0x7f for c in line):
            problems.append(f"line {number} is not printable ASCII: {line[:80]!r}")
    if markers:
        if not lines or lines[0] != BEGIN or lines[-1] != END:
            problems.append("not between the BEGIN and END lines")
        body = lines[1:-1]
        if any(len(line) != 64 for line in body[:-1]) or (body and not 0 < len(body[-1]) <= 64):
            problems.append("base64 lines are not 64 columns, the last 1 to 64")
    return problems


class ArmorTest(ScratchTestCase):
    ctest_labels = ("threads",)
    prefix = "paes-armor-"

    def setUp(self):
        super().setUp()
        self.key = write_file(self.path("key"), random_raw_key(32), 0o600)
        self.key16 = write_file(self.path("key16"), random_raw_key(16), 0o600)

    def plain(self, n):
        return write_file(self.path(f"plain{n}"), os.urandom(n))

    def armored(self, src):
        """`src` sealed under the key file with -a, in a.txt; its path."""
        armored = self.path("a.txt")
        self.assert_exit(["encrypt", "-a", "--key-file", self.key, src, "-o", armored])
        return armored

    # -- 1. sealed
    def sealed_ways(self):
        identity = self.path("identity")
        recipient = self.assert_exit(["keygen", "--x25519", "-o", identity]).stdout.decode().strip()
        return [
            ("key file", ["--key-file", self.key], ["--key-file", self.key]),
            ("passphrase", ["--passphrase-env", "PAES_TEST_PASS", "--scrypt-log-n", "10"],
             ["--passphrase-env", "PAES_TEST_PASS"]),
            ("recipients", ["-r", recipient], ["-i", identity]),
            ("tink", ["--format", "tink", "--key-file", self.key16, "--segment-size", "4096"],
             ["--format", "tink", "--key-file", self.key16, "--segment-size", "4096"]),
            ("small segments", ["--key-file", self.key, "--segment-size", "4096"], ["--key-file", self.key]),
        ]

    def test_sealed_round_trips(self):
        for name, enc, dec in self.sealed_ways():
            for n in SIZES:
                src = self.plain(n)
                armored = self.path(f"{name}-{n}.txt")
                proc = run_paes(["encrypt", "-a", *enc, src, "-o", armored], env=PASS_ENV)
                self.check(proc.returncode == 0, f"{name} {n}: encrypt -a: {describe(proc)}")
                if proc.returncode != 0:
                    continue
                text = read_file(armored)
                problems = text_problems(text, markers=True)
                self.check(not problems, f"{name} {n}: {problems}")
                out = self.path(f"{name}-{n}.out")
                proc = run_paes(["decrypt", *dec, armored, "-o", out], env=PASS_ENV)
                self.check(proc.returncode == 0 and read_file(out) == read_file(src),
                           f"{name} {n}: decrypt of the file: {describe(proc)}")
                proc = run_paes(["decrypt", *dec], input_bytes=text, env=PASS_ENV)
                self.check(proc.returncode == 0 and proc.stdout == read_file(src),
                           f"{name} {n}: decrypt from stdin: {describe(proc)}")
                # Text channels may turn '\n' into "\r\n" and add whitespace at the end.
                crlf = write_file(self.path(f"{name}-{n}.crlf"), text.replace(b"\n", b"\r\n") + b"\n \t\n")
                proc = run_paes(["decrypt", *dec, crlf, "-f", "-o", out], env=PASS_ENV)
                self.check(proc.returncode == 0 and read_file(out) == read_file(src),
                           f"{name} {n}: decrypt of CRLF armor: {describe(proc)}")
        self.finish()

    def test_armor_holds_the_binary_file(self):
        """The base64 is of the very file encrypt writes without -a: decoded, it opens so."""
        src = self.plain(5000)
        armored = self.armored(src)
        lines = read_file(armored).split(b"\n")
        binary = write_file(self.path("a.paes"), base64.b64decode(b"".join(lines[1:-2])))
        self.assertEqual(read_file(binary)[:4], b"PAES")
        out = self.path("out")
        self.assert_exit(["decrypt", "--key-file", self.key, binary, "-o", out])
        self.assertEqual(read_file(out), read_file(src))
        # A binary sealed file from stdin is still read as it is.
        proc = self.assert_exit(["decrypt", "--key-file", self.key], input_bytes=read_file(binary))
        self.assertEqual(proc.stdout, read_file(src))

    # -- 2. raw modes
    def test_raw_armor_is_openssls(self):
        iv = os.urandom(16)
        for bits in (128, 256):
            key = os.urandom(bits // 8)
            for mode in ("ctr", "cbc", "ecb", "cfb", "cfb8", "ofb"):
                for n in SIZES:
                    for chunk in ([], ["--chunk-size", "1000"]):
                        src = self.plain(n)
                        iv_args = [] if mode == "ecb" else ["--iv", iv.hex()]
                        ossl = [OPENSSL, "enc", f"-aes-{bits}-{mode}", "-K", key.hex()] + (
                            [] if mode == "ecb" else ["-iv", iv.hex()])
                        want = subprocess.run(ossl + ["-a", "-in", src], capture_output=True, check=True).stdout
                        what = f"{mode}-{bits} {n} {chunk}"
                        proc = run_paes(["encrypt", "--mode", mode, "--key-env", "K", *iv_args, *chunk, "-a", src],
                                   env={"K": key.hex()})
                        self.check(proc.returncode == 0 and proc.stdout == want,
                                   f"{what}: differs from openssl enc -a: {describe(proc)}")
                        self.check(not text_problems(want, markers=False), f"{what}: {text_problems(want, False)}")
                        proc = run_paes(["decrypt", "--mode", mode, "--key-env", "K", *iv_args, *chunk, "-a"],
                                   input_bytes=want, env={"K": key.hex()})
                        self.check(proc.returncode == 0 and proc.stdout == read_file(src),
                                   f"{what}: decrypt -a of openssl's text: {describe(proc)}")
                        armored = write_file(self.path("o.txt"), want)
                        out = self.path("o.out")
                        proc = run_paes(["decrypt", "--mode", mode, "--key-env", "K", *iv_args, *chunk, "-a", armored,
                                    "-f", "-o", out], env={"K": key.hex()})
                        self.check(proc.returncode == 0 and read_file(out) == read_file(src),
                                   f"{what}: decrypt -a of a file: {describe(proc)}")
        self.finish()

    def test_raw_armor_is_never_guessed(self):
        src = self.plain(4096)
        key, iv = os.urandom(32).hex(), os.urandom(16).hex()
        text = self.assert_exit(["encrypt", "--mode", "ctr", "--key-env", "K", "--iv", iv, "-a", src],
                       env={"K": key}).stdout
        proc = self.assert_exit(["decrypt", "--mode", "ctr", "--key-env", "K", "--iv", iv], input_bytes=text,
                       env={"K": key})
        self.assertEqual(len(proc.stdout), len(text), "without -a, the text is decrypted as ciphertext")

    def test_salted_armor_with_openssl(self):
        src = self.plain(100_003)
        for mode in ("cbc", "ctr"):
            mine = self.assert_exit(["encrypt", "--mode", mode, "--pbkdf2", "--passphrase-env", "PAES_TEST_PASS", "-a", src],
                           env=PASS_ENV).stdout
            self.assertEqual(text_problems(mine, markers=False), [])
            self.assertTrue(base64.b64decode(mine).startswith(b"Salted__"))
            proc = subprocess.run([OPENSSL, "enc", "-d", "-a", f"-aes-256-{mode}", "-pbkdf2", "-pass",
                                   "env:PAES_TEST_PASS"], input=mine, capture_output=True,
                                  env={**os.environ, **PASS_ENV})
            self.assertEqual((proc.returncode, proc.stdout), (0, read_file(src)), describe(proc))
            theirs = subprocess.run([OPENSSL, "enc", "-a", f"-aes-256-{mode}", "-pbkdf2", "-pass",
                                     "env:PAES_TEST_PASS", "-in", src], capture_output=True, check=True,
                                    env={**os.environ, **PASS_ENV}).stdout
            proc = self.assert_exit(["decrypt", "--mode", mode, "--pbkdf2", "--passphrase-env", "PAES_TEST_PASS", "-a"],
                           input_bytes=theirs, env=PASS_ENV)
            self.assertEqual(proc.stdout, read_file(src))

    # -- 3. damage
    def test_damaged_armor_fails_and_leaves_nothing(self):
        src = self.plain(10_000)
        armored = self.path("good.txt")
        self.assert_exit(["encrypt", "-a", "--key-file", self.key, "--segment-size", "4096", src, "-o", armored])
        text = read_file(armored)
        lines = text.split(b"\n")
        middle = len(lines) // 2
        last = len(lines) - 3  # the last base64 line (then END, then "")

        def replaced(index, line):
            return b"\n".join(lines[:index] + [line] + lines[index + 1:])

        last_line = lines[last]
        # A last line "....xy==" with unused bits set: decodes to the same bytes, not canonical.
        flip = {ord("A"): b"B", ord("Q"): b"R", ord("g"): b"h", ord("w"): b"x"}
        pad_at = len(last_line.rstrip(b"=")) - 1
        noncanonical = (last_line[:pad_at] + flip.get(last_line[pad_at], b"") + last_line[pad_at + 1:]
                        if last_line.endswith(b"=") and last_line[pad_at] in flip else None)
        cases = {
            "a bad character": replaced(middle, b"!" + lines[middle][1:]),
            "a space in a line": replaced(middle, lines[middle][:10] + b" " + lines[middle][11:]),
            "no END line": b"\n".join(lines[:-2]) + b"\n",
            "cut inside a line": text[:len(text) // 2],
            "cut after a whole line": b"\n".join(lines[:middle]) + b"\n",
            "a short line inside": replaced(middle, lines[middle][:60]),
            "a longer line": replaced(middle, lines[middle] + b"AAAA"),
            "text after END": text + b"more\n",
            "a changed byte": replaced(middle, lines[middle][:5] + (b"A" if lines[middle][5:6] != b"A" else b"B")
                                       + lines[middle][6:]),
        }
        if noncanonical:
            cases["non-canonical padding bits"] = replaced(last, noncanonical)
        for name, bad in cases.items():
            damaged = write_file(self.path("bad.txt"), bad)
            out = self.path("out")
            proc = run_paes(["decrypt", "--key-file", self.key, damaged, "-o", out])
            self.check(proc.returncode == 1, f"{name}: expected exit 1: {describe(proc)}")
            self.check(not os.path.exists(out), f"{name}: an output was left")
            self.check([n for n in os.listdir(self.tmp) if n.startswith(".")] == [], f"{name}: a temporary was left")
        # Raw -a: what is not base64 fails too.
        proc = run_paes(["decrypt", "--mode", "ctr", "--key-hex", "00" * 32, "--iv", "00" * 16, "-a", "-o",
                    self.path("raw.out")], input_bytes=b"QUJD\n!!!!\n")
        self.check(proc.returncode == 1 and not os.path.exists(self.path("raw.out")), f"raw: {describe(proc)}")
        proc = run_paes(["decrypt", "--mode", "ctr", "--key-hex", "00" * 32, "--iv", "00" * 16, "-a", "-o",
                    self.path("raw.out")], input_bytes=b"QUJDRA\n")
        self.check(proc.returncode == 1 and not os.path.exists(self.path("raw.out")),
                   f"raw cut inside a group: {describe(proc)}")
        self.finish()

    # -- 4. refusals
    def test_range_of_armor_is_refused(self):
        armored = self.armored(self.plain(10_000))
        proc = run_paes(["decrypt", "--key-file", self.key, "--range", "0:100", armored, "-o", self.path("part")])
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("armored", proc.stderr.decode())
        self.assertFalse(os.path.exists(self.path("part")))

    def test_rekey_reads_and_writes_armor(self):
        alice, bob = self.path("alice"), self.path("bob")
        to_alice = self.assert_exit(["keygen", "--x25519", "-o", alice]).stdout.decode().split()[-1]
        to_bob = self.assert_exit(["keygen", "--x25519", "-o", bob]).stdout.decode().split()[-1]
        src = self.plain(100003)
        armored = self.path("a.txt")
        self.assert_exit(["encrypt", "-a", "-r", to_alice, src, "-o", armored])
        for source, out_armor in ((armored, []), ("-", []), (armored, ["-a"]), ("-", ["-a"])):
            with self.subTest(source=source, armor=out_armor):
                out = self.path("re")
                proc = run_paes(["rekey", source, "-i", alice, "--add", "-r", to_bob, "-o", out, "-f", *out_armor],
                           input_bytes=read_file(armored) if source == "-" else None)
                self.assertEqual(proc.returncode, 0, describe(proc))
                self.assertEqual(read_file(out).startswith(b"-----BEGIN PAES ENCRYPTED FILE-----\n"), bool(out_armor))
                for ident in (alice, bob):
                    back = self.path("back")
                    self.assert_exit(["decrypt", "-i", ident, out, "-o", back, "-f"])
                    self.assertEqual(read_file(back), read_file(src))

    def test_armor_with_mpi_is_refused(self):
        info = run_paes(["info"]).stdout.decode()
        if "mpi" not in info:
            self.skipTest("this paes has no mpi engine")
        proc = run_paes(["encrypt", "-a", "--engine", "mpi", "--key-file", self.key, self.plain(10), "-o",
                    self.path("x")])
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("-a", proc.stderr.decode())
        # Armor found in the input (no -a) is refused so too, for what it is, not as a stream.
        armored = self.armored(self.plain(10))
        proc = run_paes(["decrypt", "--engine", "mpi", "--key-file", self.key, armored, "-o", self.path("y")])
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn("armored", proc.stderr.decode())
        self.assertFalse(os.path.exists(self.path("y")))

    # -- 5. terminals and inspect
    def test_armor_may_go_to_a_terminal(self):
        with self.terminal() as (master, slave):
            src = self.plain(100)
            for args in (["encrypt", "-a", "--key-file", self.key, src],
                         ["encrypt", "-a", "--mode", "ctr", "--key-hex", "11" * 16, "--iv", "00" * 16, src]):
                proc = run_paes(args, stdout=slave)
                self.assertEqual(proc.returncode, 0, f"{args}: {describe(proc)}")
                got = os.read(master, 65536)
                self.assertTrue(got and all(0x20 <= c < 0x7f or c in b"\r\n" for c in got), got)
                proc = run_paes(args[:1] + args[2:], stdout=slave)
                self.assertEqual(proc.returncode, 2, f"binary to a terminal: {describe(proc)}")

    def test_inspect_names_armor(self):
        armored = self.armored(self.plain(1000))
        info = json.loads(self.assert_exit(["inspect", "--json", armored]).stdout)
        self.assertEqual((info["format"], info["armor"], info["key_source"]), ("paes", True, "raw-key"))
        self.assertIn("armor: yes", self.assert_exit(["inspect", armored]).stdout.decode())
        damaged = write_file(self.path("cut.txt"), read_file(armored)[:200])
        proc = run_paes(["inspect", "--json", damaged])
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn("bad armor", json.loads(proc.stdout)["problem"])

    def test_help_describes_armor(self):
        for command in ("encrypt", "decrypt"):
            text = " ".join(self.assert_exit([command, "--help"]).stdout.decode().split())
            self.assertIn("-a,--armor", text)
        self.assertIn("openssl enc -a", text)


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
