#!/usr/bin/env python3
"""How paes answers a wrong invocation: messages that name the mistake, and exit statuses
that follow README's rule (2: the invocation was wrong; 1: the data or the system failed).

Run as:  python3 tests/cli/test_usage.py --paes build/release/paes --openssl /usr/bin/openssl

Covers (issue 32, item 1; issue 44, items 2, 5, 7, 8, 11, 16 and 17): option values named for
what is wrong with them, an option of
another command named as such, --engine serial with --threads, --format tink refused before
any passphrase prompt, the exit-status rule (files in the wrong role, binary output to a
terminal by any route), --progress into a log as plain lines, and README's Usage block and
decrypt --help's pbkdf2 example run as written (with bash, tar and openssl on PATH), so does
docs/CLUSTER.md's single-host block (mpiexec.mpich), and messages written in whole lines
(strace shows the writes).

Python 3.11 standard library only. Exits non-zero when any test fails; every skip
says why.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (ScratchTestCase, describe, random_raw_key, read_file, run_paes, run_test_script,  # noqa: E402
                     write_file)

PAES = "paes"


class UsageTestCase(ScratchTestCase):
    def setUp(self):
        super().setUp()
        write_file(self.path("d.txt"), b"hello\n")
        write_file(self.path("key.bin"), random_raw_key(32), 0o600)

    def check_usage_error(self, args, *wanted, status=2, env=None):
        """Runs paes; checks the exit status, that stderr is one line holding each of `wanted`,
        and that nothing new was written. Returns stderr."""
        before = set(os.listdir(self.tmp))
        proc = run_paes(args, input_bytes=b"", cwd=self.tmp, env=env)
        err = proc.stderr.decode(errors="replace")
        self.check(proc.returncode == status, f"{args}: wanted exit {status}, got {describe(proc)}")
        self.check(err.count("\n") == 1 and err.startswith("paes: "), f"{args}: not one 'paes: ' line: {err!r}")
        for text in wanted:
            self.check(text in err, f"{args}: {text!r} not in {err!r}")
        self.check(set(os.listdir(self.tmp)) == before, f"{args}: left {set(os.listdir(self.tmp)) - before}")
        return err


class OptionValueMessageTest(UsageTestCase):
    """A wrong option value is named for what it is (issue 32, item 1)."""

    def test_numbers_and_sizes(self):
        enc = ["encrypt", "--key-file", "key.bin", "d.txt", "-o", "out"]
        self.check_usage_error(enc + ["--segment-size", "4G"], "--segment-size", "at most 64M", "got 4G")
        err = self.check_usage_error(enc + ["--segment-size", "4G"])
        self.check("4294967295" not in err, f"the clamped value shown: {err!r}")
        self.check_usage_error(enc + ["--iter", "10K"], "--iter", "'10K' is not a whole number")
        self.check_usage_error(enc + ["--threads", "2.0"], "--threads", "'2.0' is not a whole number")
        self.check_usage_error(enc + ["--threads", "5000"], "--threads", "5000 is out of range: 1 to 4096")
        self.check_usage_error(enc + ["--key-bits", "abc"], "--key-bits", "'abc' is not an AES key size: 128, 192 or 256")
        self.check_usage_error(["keygen", "--key-bits", "abc", "-o", "k"], "'abc' is not an AES key size")
        self.check_usage_error(["bench", "--thread-counts", "1,2.0"], "'2.0' is not a whole number")
        self.finish()

    def test_option_of_another_command(self):
        for args, wanted in [
                (["encrypt", "d.txt", "--range", "0:1"], "--range is an option of decrypt"),
                (["encrypt", "d.txt", "--allow-uncommitted"], "--allow-uncommitted is an option of decrypt"),
                (["decrypt", "d.txt", "-r", "age1x"], "-r (--recipient) is an option of encrypt")]:
            err = self.check_usage_error(args, wanted, "not of " + args[0])
            self.check("not expected" not in err, f"{args}: CLI11's words: {err!r}")
            self.check("bench" not in err, f"{args}: bench's -r is --repeat: {err!r}")
        self.finish()


class SerialEngineThreadsTest(UsageTestCase):
    """--engine serial runs one worker: more threads are refused, not dropped unsaid (issue 32, item 1)."""

    def test_serial_with_threads(self):
        for direction in ["encrypt", "decrypt"]:
            self.check_usage_error([direction, "--engine", "serial", "--threads", "2", "--key-file", "key.bin", "d.txt",
                          "-o", "out"], "--threads 2", "--engine serial", "one worker")
        proc = run_paes(["encrypt", "--engine", "serial", "--threads", "1", "--key-file", "key.bin", "d.txt",
                         "-o", "out"], input_bytes=b"", cwd=self.tmp)
        self.check(proc.returncode == 0, f"--threads 1 with serial: {describe(proc)}")
        help_text = run_paes(["encrypt", "--help"], input_bytes=b"", cwd=self.tmp).stdout.decode()
        self.check("refused with --engine serial" in " ".join(help_text.split()), "--help doesn't say it")
        self.finish()


class TinkKeyBeforePromptTest(UsageTestCase):
    """--format tink without a raw key is refused before any passphrase is read or asked for,
    naming the options Tink takes (issue 32, item 1)."""

    def test_refused_before_passphrase(self):
        write_file(self.path("pw.txt"), b"secret words\n", 0o644)  # its mode warning would be a second line
        for direction in ["encrypt", "decrypt"]:
            tink = [direction, "--format", "tink", "d.txt", "-o", "out"]
            for extra, wanted in [([], "takes a raw key: give --key-file or --key-env"),
                                  (["--passphrase-file", "pw.txt"], "not a passphrase: give --key-file or --key-env")]:
                err = self.check_usage_error(tink + extra, wanted)
                self.check("terminal" not in err, f"{direction} {extra}: {err!r}")
        self.finish()


class PaperCutsTest(UsageTestCase):
    """Issue 44, items 1, 6, 7, 8, 12 and 17: openssl enc's -md, -nosalt and -S; PAES_BACKEND only
    where a backend is taken; a stale temporary removed by the next run; a raw decrypt of a container says what the input looks like;
    openssl enc -a's text without -a is named; -V, 'paes help [COMMAND]', a mistyped option and
    encrypt -i (age's -e -i); --json's "parallel" beside "threads"; tiny chunks warned (item 16)."""

    def test_version_and_help_command(self):
        version = run_paes(["--version"])
        for args in (["-V"],):
            proc = run_paes(args)
            self.check((proc.returncode, proc.stdout) == (0, version.stdout) and version.stdout.startswith(b"paes "),
                       f"{args}: {describe(proc)}")
        for args, same_as in ((["help"], ["--help"]), (["help", "encrypt"], ["encrypt", "--help"]),
                              (["help", "inspect"], ["inspect", "--help"])):
            proc, want = run_paes(args), run_paes(same_as)
            self.check((proc.returncode, proc.stdout, proc.stderr) == (0, want.stdout, b"") and want.stdout,
                       f"{args}: {describe(proc)}")
        self.check_usage_error(["help", "bogus"], "unknown command 'bogus'", "the commands are encrypt")
        self.finish()

    def test_json_parallel_is_what_ran(self):
        """--json's "parallel" says the job ran on more than one worker, not that its mode could:
        a small CTR file runs on one thread, a 4 MiB one on two with --threads 2."""
        key = self.key_file(random_raw_key(32))
        for size, threads, parallel in ((1000, 1, False), (4 << 20, 2, True)):
            inp = write_file(self.path(f"in-{size}"), os.urandom(size))
            proc = run_paes(["encrypt", "--mode", "ctr", "--key-file", key, "--iv", "00" * 16, "--threads", "2",
                             "--json", inp, "-o", self.path(f"out-{size}")])
            summary = json.loads(proc.stdout) if proc.returncode == 0 else {}
            self.check((summary.get("threads"), summary.get("parallel")) == (threads, parallel),
                       f"{size} bytes: {describe(proc)}")
        self.finish()

    def test_tiny_chunks_warned(self):
        """A chunk size far below a page over an input of many chunks is slow, and says so once;
        a few tiny chunks (a small input) are not worth a word."""
        key = self.key_file(random_raw_key(32))
        for size, warned in ((1100 * 1024, True), (1000, False)):
            data = os.urandom(size)
            inp = write_file(self.path(f"in-{size}"), data)
            out = self.path(f"out-{size}")
            proc = run_paes(["encrypt", "--mode", "ctr", "--key-file", key, "--iv", "00" * 16, "--chunk-size", "16",
                             inp, "-o", out])
            lines = proc.stderr.decode().splitlines()
            expected = (["paes: warning: chunks of 16 bytes, 70400 of them: each costs more to hand to a worker than "
                         "to transform, so this run is slow; chunks of 64 KiB or more run at the cipher's speed"]
                        if warned else [])
            self.check(proc.returncode == 0 and lines == expected, f"{size} bytes: {describe(proc)}")
        self.finish()

    def test_mistyped_option(self):
        self.check_usage_error(["encrypt", "--mdoe", "ctr", "d.txt"], "--mdoe is not an option of encrypt",
                               "did you mean --mode?")
        self.check_usage_error(["decrypt", "--allow-uncommited", "d.txt"], "did you mean --allow-uncommitted?")
        err = self.check_usage_error(["encrypt", "--zzzzzzzz", "d.txt"], "--zzzzzzzz is not an option of encrypt")
        self.check("did you mean" not in err, f"a far-fetched guess: {err!r}")
        self.finish()

    def test_raw_decrypt_of_a_container_is_noted(self):
        iv = ["--iv", "000102030405060708090a0b0c0d0e0f"]
        sealed = self.path("d.paes")
        proc = run_paes(["encrypt", "--key-file", "key.bin", "d.txt", "-o", sealed], cwd=self.tmp)
        self.check(proc.returncode == 0, describe(proc))
        salted = write_file(self.path("d.enc"), b"Salted__" + os.urandom(8) + os.urandom(32))
        for path, words in ((sealed, "starts as a paes sealed file does"), (salted, "starts with openssl's Salted__")):
            proc = run_paes(["decrypt", "--mode", "ctr", "--key-file", "key.bin", *iv, path, "-o", "-"], cwd=self.tmp)
            self.check(proc.returncode == 0 and proc.stderr.decode().startswith("paes: note: ") and
                       words in proc.stderr.decode(), f"{path}: {describe(proc)}")
        plain = write_file(self.path("plain.bin"), os.urandom(64))
        proc = run_paes(["decrypt", "--mode", "ctr", "--key-file", "key.bin", *iv, plain, "-o", "-"], cwd=self.tmp)
        self.check((proc.returncode, proc.stderr) == (0, b""), f"raw ciphertext: {describe(proc)}")
        self.finish()

    def test_backend_variable(self):
        """Item 1: PAES_BACKEND matters only to encrypt and decrypt, which take --backend; a bad
        value is named as the variable's; a GPU for the sealed format (AES-GCM runs on the CPU) is a
        note, even where no such GPU is, as an exported variable on a cluster's every node."""
        bogus = dict(os.environ, PAES_BACKEND="bogus")
        for args in (["--help"], ["info"], ["keygen", "-o", "k.new"], ["completion", "bash"], ["encrypt", "--help"]):
            proc = run_paes(args, cwd=self.tmp, env=bogus)
            self.check((proc.returncode, proc.stderr) == (0, b""), f"PAES_BACKEND=bogus paes {args}: {describe(proc)}")
        self.check_usage_error(["encrypt", "--key-file", "key.bin", "d.txt", "-o", "x.paes"],
                               "PAES_BACKEND=bogus is not a backend: choose auto", env=bogus)
        proc = run_paes(["encrypt", "--backend", "openssl", "--key-file", "key.bin", "d.txt", "-o", "x.paes"],
                        cwd=self.tmp, env=bogus)
        self.check(proc.returncode == 0, f"--backend given, the variable unused: {describe(proc)}")
        for gpu in ("cuda", "opencl"):
            proc = run_paes(["decrypt", "--key-file", "key.bin", "x.paes", "-o", "-"], cwd=self.tmp,
                            env=dict(os.environ, PAES_BACKEND=gpu))
            self.check((proc.returncode, proc.stdout) == (0, b"hello\n") and
                       proc.stderr.decode().startswith(f"paes: note: the {gpu} backend doesn't run the sealed format"),
                       f"PAES_BACKEND={gpu}, sealed: {describe(proc)}")
        self.finish()

    def test_stale_temporary_is_removed(self):
        """Item 12: the temporaries SIGKILLed paes left are removed by the next run writing into
        their directory, with a note; never one a live paes holds (locked), nor one only moments old."""
        import fcntl
        stale, held, young = (self.path(f".d.paes.paes-{name}") for name in ("AbC123", "Held12", "Young1"))
        other = self.path(".other.tar.paes-Zz9Yy8")
        for path in (stale, held, young, other):
            write_file(path, os.urandom(5000))
        hour_ago = time.time() - 3600
        for path in (stale, held, other):
            os.utime(path, (hour_ago, hour_ago))
        fd = os.open(held, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            proc = run_paes(["encrypt", "--key-file", "key.bin", "d.txt", "-o", "d.paes"], cwd=self.tmp)
        finally:
            os.close(fd)
        self.check(proc.returncode == 0, describe(proc))
        notes = sorted(proc.stderr.decode().splitlines())
        self.check(notes == [f"paes: note: removed {name}, the temporary of a paes that ended before it could (5000 "
                             "bytes)" for name in (".d.paes.paes-AbC123", ".other.tar.paes-Zz9Yy8")],
                   f"the notes: {describe(proc)}")
        left = sorted(n for n in os.listdir(self.tmp) if n.startswith("."))
        self.check(left == [".d.paes.paes-Held12", ".d.paes.paes-Young1"], f"left: {left}")
        self.finish()

    def test_encrypt_to_an_identity(self):
        """age -e -i: encrypting, -i stands for the identity's own recipient, beside -r."""
        ids = []
        for name in ("a.id", "b.id"):
            proc = run_paes(["keygen", "--x25519", "-o", name], cwd=self.tmp)
            self.check(proc.returncode == 0, describe(proc))
            ids.append((name, proc.stdout.decode().strip()))
        (a, _), (b, rb) = ids
        proc = run_paes(["encrypt", "-i", a, "-r", rb, "d.txt", "-o", "d.paes"], cwd=self.tmp)
        self.check(proc.returncode == 0, describe(proc))
        for identity in (a, b):
            proc = run_paes(["decrypt", "-i", identity, "d.paes", "-o", "-"], cwd=self.tmp)
            self.check((proc.returncode, proc.stdout) == (0, b"hello\n"), f"{identity}: {describe(proc)}")
        self.check_usage_error(["encrypt", "-i", a, "--key-file", "key.bin", "d.txt", "-o", "x.paes"],
                               "recipients (-r, -R, -i) can't be combined with --key-file")
        self.finish()

    def test_openssl_pbkdf2_options(self):
        """Item 6: openssl enc's -md, -nosalt and -S as --md, --nosalt and --salt, both ways and
        byte for byte; -p refused; the hints name the parameters a file may differ in."""
        openssl = shutil.which("openssl")
        if openssl is None:
            self.skipTest("openssl is not on PATH")
        env = dict(os.environ, PASS="pw")
        plain = self.path("d.txt")

        def ossl(*args, inp):
            return subprocess.run([openssl, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "env:PASS", *args],
                                  input=read_file(inp), capture_output=True, check=True, env=env).stdout

        def paes(*args, inp, out):
            return run_paes([*args, "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PASS", inp, "-o", out, "-f"],
                            cwd=self.tmp, env=env)

        for ours, theirs in ((["--md", "sha512"], ["-md", "sha512"]), (["--md", "sha1"], ["-md", "sha1"]),
                             (["--md", "md5"], ["-md", "md5"]), (["--nosalt"], ["-nosalt"])):
            proc = paes("encrypt", *ours, inp=plain, out=self.path("p.enc"))
            self.check(proc.returncode == 0, f"{ours}: {describe(proc)}")
            self.check(ossl("-d", *theirs, inp=self.path("p.enc")) == b"hello\n", f"openssl -d {theirs}")
            write_file(self.path("o.enc"), ossl(*theirs, inp=plain))
            proc = paes("decrypt", *ours, inp=self.path("o.enc"), out=self.path("o.txt"))
            self.check(proc.returncode == 0 and read_file(self.path("o.txt")) == b"hello\n",
                       f"{ours}: {describe(proc)}")
        # -S: the same salt gives openssl's bytes exactly (without the header, as openssl 3 writes it), and
        # reads them back.
        salt = ["--salt", "0102030405060708", "--md", "sha512"]
        proc = paes("encrypt", *salt, inp=plain, out=self.path("s.enc"))
        self.check(proc.returncode == 0 and read_file(self.path("s.enc")) ==
                   ossl("-S", "0102030405060708", "-md", "sha512", inp=plain), f"--salt: {describe(proc)}")
        proc = paes("decrypt", *salt, inp=self.path("s.enc"), out=self.path("s.txt"))
        self.check(proc.returncode == 0 and read_file(self.path("s.txt")) == b"hello\n", f"--salt: {describe(proc)}")
        # A sha512 file read as sha256 (fixed salt: a fixed outcome, not 1 in 256) and a -nosalt file
        # read without --nosalt: the hints name what may differ.
        write_file(self.path("wrong-md.enc"), b"Salted__" + bytes(range(1, 9)) +
                   ossl("-S", "0102030405060708", "-md", "sha512", inp=plain))
        self.check_usage_error(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PASS", "wrong-md.enc",
                                "-o", "x"], "bad decrypt", "-md", "--md, --iter and --key-bits", status=1, env=env)
        write_file(self.path("nosalt.enc"), ossl("-nosalt", inp=plain))
        self.check_usage_error(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PASS", "nosalt.enc",
                                "-o", "x"], "no \"Salted__\" header", "add --nosalt", status=1, env=env)
        for args, words in ((["encrypt", "-p"], "paes never prints a key"),
                            (["encrypt", "--nosalt", "--salt", "0102030405060708"], "one of them"),
                            (["encrypt", "--salt", "0102"], "16 hex digits"),
                            (["encrypt", "--md", "sha3-256"], "--md")):
            self.check_usage_error([*args, "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PASS", "d.txt", "-o",
                                    "x"], words, env=env)
        self.check_usage_error(["encrypt", "--mode", "cbc", "--md", "sha512", "--key-file", "key.bin", "--iv", "00" * 16,
                                "d.txt", "-o", "x"], "--md goes with --pbkdf2")
        self.finish()

    def test_armored_salted_without_a(self):
        openssl = shutil.which("openssl")
        if openssl is None:
            self.skipTest("openssl is not on PATH")
        env = dict(os.environ, PASS="pw")
        armored = self.path("d.b64")
        subprocess.run([openssl, "enc", "-a", "-aes-256-cbc", "-pbkdf2", "-pass", "env:PASS", "-in", self.path("d.txt"),
                        "-out", armored], check=True, env=env)
        self.check_usage_error(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PASS", "d.b64", "-o",
                                "out"], "base64 text", "add -a", status=1, env=env)
        proc = run_paes(["decrypt", "-a", "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PASS", "d.b64", "-o", "-"],
                        cwd=self.tmp, env=env)
        self.check((proc.returncode, proc.stdout) == (0, b"hello\n"), describe(proc))
        self.finish()


class ExitStatusRuleTest(UsageTestCase):
    """README's rule: 2 for a wrong invocation (a file in the wrong role, binary output to a
    terminal by any route), 1 for the data or the system (issue 32, item 1)."""

    def setUp(self):
        super().setUp()
        proc = run_paes(["keygen", "--x25519", "-o", "id.txt"], input_bytes=b"", cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))
        proc = run_paes(["encrypt", "--key-file", "key.bin", "d.txt", "-o", "s.paes"], input_bytes=b"",
                        cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, describe(proc))

    def test_files_in_the_wrong_role(self):
        self.check_usage_error(["encrypt", "--key-file", "id.txt", "d.txt", "-o", "out"], "is an age identity")
        write_file(self.path("hex.key"), os.urandom(32).hex().encode() + b"\n", 0o600)
        for key in ["key.bin", "hex.key"]:
            self.check_usage_error(["decrypt", "-i", key, "s.paes", "-o", "out"], "holds a raw AES key", "--key-file")
            self.check_usage_error(["keygen", "-y", key], "holds a raw AES key")
        write_file(self.path("id.pub"), b"age1" + b"q" * 58 + b"\n", 0o600)
        self.check_usage_error(["decrypt", "-i", "id.pub", "s.paes", "-o", "out"], "is a recipient")
        # A file that holds no identity is the wrong file for -i, as one that holds no recipient is for -R
        # and one that holds no key for --key-file (issue 44, item 11): exit 2 for each.
        write_file(self.path("bad.id"), b"AGE-SECRET-KEY-1QQQ\n", 0o600)
        self.check_usage_error(["decrypt", "-i", "bad.id", "s.paes", "-o", "out"], "not an age identity")
        write_file(self.path("notes.txt"), b"meeting at noon\n", 0o600)
        for args in (["decrypt", "-i", "notes.txt", "s.paes", "-o", "out"], ["encrypt", "-R", "notes.txt", "d.txt"],
                     ["keygen", "-y", "notes.txt"], ["encrypt", "--key-file", "notes.txt", "d.txt", "-o", "out"]):
            self.check_usage_error(args, "notes.txt")
        self.check_usage_error(["encrypt", "--key-file", "/dev/zero", "d.txt", "-o", "out"], "/dev/zero is larger")
        self.finish()

    def test_binary_output_to_a_terminal(self):
        if shutil.which("script") is None:
            self.skipTest("util-linux script not found: no terminal to write to")
        for output in [[], ["-o", "/dev/tty"], ["-o", "/dev/stdout"]]:
            cmd = shlex.join([PAES, "encrypt", "--key-file", "key.bin", "d.txt", *output])
            # script -e: its status is the command's; the command's stdout and /dev/tty are its terminal.
            proc = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=self.tmp, capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=60)
            said = proc.stdout.decode(errors="replace")
            self.check(proc.returncode == 2 and "refusing to write binary output to a terminal" in said,
                       f"{output}: exit {proc.returncode}, {said!r}")
        # Decrypting, by every route too: a text plaintext is shown, a binary one (a tar) refused before
        # any of it reaches the terminal, as age does (issue 44, item 2).
        text = b"a line of text\tand a tab\n" * 3
        write_file(self.path("note.txt"), text)
        tar = subprocess.run(["tar", "cf", "-", "-C", self.tmp, "note.txt"], capture_output=True, check=True).stdout
        write_file(self.path("note.tar"), tar)
        for name in ("note.txt", "note.tar"):
            self.assertEqual(run_paes(["encrypt", "--key-file", "key.bin", name, "-o", name + ".paes"],
                                      cwd=self.tmp).returncode, 0)
        for output in [[], ["-o", "/dev/tty"], ["-o", "/dev/stdout"]]:
            for name, shown in (("note.txt", True), ("note.tar", False)):
                cmd = shlex.join([PAES, "decrypt", "--key-file", "key.bin", name + ".paes", *output])
                proc = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=self.tmp, capture_output=True,
                                      stdin=subprocess.DEVNULL, timeout=60)
                screen = proc.stdout.replace(b"\r\n", b"\n")
                if shown:
                    self.check(proc.returncode == 0 and screen == text, f"{name} {output}: {describe(proc)}")
                else:
                    self.check(proc.returncode == 2 and b"refusing to write binary output to a terminal" in screen
                               and b"a line of text" not in screen, f"{name} {output}: {describe(proc)}")
        self.finish()


class ProgressIntoALogTest(UsageTestCase):
    """--progress with stderr not a terminal writes plain lines, no "\\r" or escape sequences
    (issue 32, item 1)."""

    def test_plain_lines(self):
        size = 64 << 20
        with open(self.path("zeros.bin"), "wb") as f:
            f.truncate(size)
        # Its output read at about 24 MiB/s: a known total, and over a second of work whatever the CPU.
        with subprocess.Popen([PAES, "encrypt", "--progress", "--key-file", "key.bin", "zeros.bin"], cwd=self.tmp,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            got = 0
            while chunk := proc.stdout.read(1 << 20):
                got += len(chunk)
                time.sleep(1 / 24)
            err = proc.stderr.read()
        self.assertEqual(proc.returncode, 0, err)
        self.assertGreater(got, size)
        self.assertNotIn(b"\r", err)
        self.assertNotIn(b"\x1b", err)
        lines = err.decode().splitlines()
        self.assertTrue(err.endswith(b"\n") and lines, err)
        self.assertTrue(all(line.startswith("encrypting ") and "%" in line for line in lines), err)
        self.assertIn("100%", lines[-1], "the last line is not the end")
        self.assertLessEqual(len(lines), 12, "more than a line each tenth")

    def test_armored_input_reaches_its_size(self):
        """Decrypting armor, the job counts the bytes it decoded, 3 for each 4 of text: the
        progress stopped at 73% of the file's size, its total. Counted back as text, it reaches
        the file's size and says 100% at the end."""
        size = 64 << 20
        with open(self.path("zeros.bin"), "wb") as f:
            f.truncate(size)
        iv = "00" * 16
        for name, enc, dec in (("sealed", [], []), ("ctr -a", ["--mode", "ctr", "--iv", iv], ["--mode", "ctr", "--iv", iv])):
            text = self.path("zeros.asc")
            proc = run_paes(["encrypt", "-a", "-f", "--key-file", "key.bin"] + enc + ["zeros.bin", "-o", text],
                            input_bytes=b"", cwd=self.tmp)
            self.assertEqual(proc.returncode, 0, describe(proc))
            total = os.path.getsize(text)
            with subprocess.Popen([PAES, "decrypt", "--progress", "--key-file", "key.bin"] + dec +
                                  (["-a"] if dec else []) + ["zeros.asc"], cwd=self.tmp, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
                got = 0
                while chunk := proc.stdout.read(1 << 20):
                    got += len(chunk)
                    time.sleep(1 / 24)
                err = proc.stderr.read()
            self.assertEqual((proc.returncode, got), (0, size), f"{name}: {err!r}")
            lines = err.decode().splitlines()
            self.assertTrue(lines and all(line.startswith("decrypting ") for line in lines), f"{name}: {err!r}")
            shown = [int(m.group(1)) for m in (re.search(r"(\d+)%", line) for line in lines) if m]
            self.assertEqual(len(shown), len(lines), f"{name}: {lines}")
            self.assertEqual(shown, sorted(shown), f"{name}: {lines}")
            self.assertEqual(shown[-1], 100, f"{name}: the last line is not the end: {lines}")
            self.assertGreaterEqual(len([p for p in shown if 0 < p < 100]), 2, f"{name}: {lines}")
            size_shown = lines[-1].split("decrypting ")[1].split("/")
            self.assertEqual(size_shown[0].strip(), size_shown[1].split("100%")[0].strip(), f"{name}: {lines[-1]}")
            self.assertIn(f"{total / 2**20:.1f} MiB", size_shown[1], f"{name}: not the file's size {total}: {lines}")


README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
CLUSTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "CLUSTER.md")

# Lines of README's Usage block this test can't run, by a word in them, and why.
README_SKIPS = [("-f hosts", "needs a cluster (a hosts file)"), ("cuda", "needs a GPU"), ("big.ctr", "needs a GPU"),
                ("asks for the passphrase", "needs a terminal to type on"),
                ("man paes", "needs paes installed (cmake --install); test_docs checks the page"),
                ("paes bench", "minutes of timing (the bench tests run it)"),
                ("encrypt ...", "a placeholder, not a command"),
                ("age1yubikey", "needs a YubiKey and its plugin, age-plugin-yubikey")]

# The stand-in files the block expects, made first (the key it makes itself).
README_SETUP = """
set -e
head -c 3145728 /dev/urandom > payload.bin && tar cf data.tar payload.bin
paes keygen --x25519 -o bob.key 2>/dev/null
paes keygen --x25519 -o carol.key 2>/dev/null
paes keygen -y carol.key > more-recipients.txt
mkdir photos && echo photo > photos/a.jpg
printf 'correct horse\\n' > pass.txt && chmod 600 pass.txt
pg_dump() { echo "-- a stand-in for pg_dump $*"; }
echo 'select 1;' > dump.sql
paes keygen -o tink.key
head -c 100000 /dev/urandom > in.bin && echo context > context.bin
head -c 100000 /dev/urandom > data.bin
echo notes > notes.txt
head -c 4096 /dev/urandom > blocks.bin
export HOME=$PWD && mkdir -m 700 .ssh && ssh-keygen -q -t ed25519 -N '' -f .ssh/id_ed25519
cp .ssh/id_ed25519.pub .ssh/authorized_keys
"""

# Stand-ins that need what an earlier line of the block made, before the first line holding the word.
README_BEFORE = {"backup.tar.cbc": 'paes encrypt --mode cbc --key-file aes.key --iv "$IV" data.tar -o backup.tar.cbc'}


class WholeLinesTest(UsageTestCase):
    """Each message paes writes on stderr goes out in whole lines, one write(2) never
    ending inside a line (src/cli/say.hpp). Written piece by piece (std::cerr <<), a
    line was cut by another rank's under mpiexec: Open MPI showed "paes: paes: the
    launcher started 2 ranks, …" and the other rank's line without its "paes: ".
    strace shows the writes; without it, the test is skipped and says so."""

    WRITE = re.compile(r'^\d+\s+write\(2, "(.*)", \d+\) = \d+$')

    def writes_to_stderr(self, args, status):
        """Runs paes under strace; checks the exit status; returns its writes to fd 2."""
        log = self.path("strace.log")
        cmd = [self.strace, "-f", "-qq", "-e", "trace=write,writev,pwrite64", "-e", "signal=none", "-s", "100000",
               "-o", log, PAES] + [str(a) for a in args]
        # LeakSanitizer can't run under ptrace; the suite's other runs check leaks.
        env = dict(os.environ)
        if "ASAN_OPTIONS" in env:
            env["ASAN_OPTIONS"] += ":detect_leaks=0"
        proc = subprocess.run(cmd, cwd=self.tmp, input=b"", capture_output=True, timeout=120, env=env)
        self.check(proc.returncode == status, f"{args}: wanted exit {status}, got {describe(proc)}")
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        os.unlink(log)
        self.check(not any(re.match(r"^\d+\s+(writev|pwrite64)\(2,", l) for l in lines),
                   f"{args}: a writev or pwrite64 to stderr: {lines}")
        writes = [m.group(1) for m in map(self.WRITE.match, lines) if m]
        self.check(bool(writes) and proc.stderr.decode(errors="replace").strip() != "",
                   f"{args}: nothing written on stderr: {lines} {describe(proc)}")
        for w in writes:
            self.check(w.endswith("\\n"), f"{args}: a write to stderr ends inside a line: {w!r} (all: {writes})")
        return writes

    def test_every_kind_of_message(self):
        self.strace = shutil.which("strace")
        if self.strace is None or subprocess.run([self.strace, "-o", os.devnull, "true"],
                                                 capture_output=True).returncode != 0:
            print("test_usage.py: skipping WholeLinesTest: strace is missing or cannot trace here", file=sys.stderr)
            self.skipTest("SKIPPED: no working strace")
        hexkey = random_raw_key(32).hex()
        write_file(self.path("pass.txt"), b"pass\n", 0o644)
        # An error, through main's one exit path.
        self.writes_to_stderr(["encrypt", "--threads", "2.0", "--key-file", "key.bin", "d.txt", "-o", "e1"], 2)
        # A warning of the key's source, and -v's summary.
        self.writes_to_stderr(["encrypt", "--mode", "ctr", "--key-hex", hexkey, "--iv", "00" * 16, "-v", "d.txt", "-o",
                               "e2"], 0)
        # A passphrase file others can read, under --pbkdf2 (a warning of the file, one of its first line).
        self.writes_to_stderr(["encrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", "pass.txt", "--iter",
                               "1000", "d.txt", "-o", "e3"], 0)
        # A sequential mode asked for threads: a note.
        self.writes_to_stderr(["encrypt", "--mode", "cbc", "--key-file", "key.bin", "--iv", "00" * 16, "--threads",
                               "2", "d.txt", "-o", "e4"], 0)
        # keygen's recipient with the identity on stdout, as age-keygen's.
        self.writes_to_stderr(["keygen", "--x25519", "-o", "-"], 0)
        self.finish()


class ReadmeUsageTest(UsageTestCase):
    """README's Usage block runs as written, in a scratch directory with paes on PATH and
    stand-ins for its files; the lines it can't run are skipped, each saying why (issue 32,
    items 1 and 9)."""

    def test_usage_block_runs(self):
        with open(README, encoding="utf-8") as f:
            readme = f.read()
        block = re.search(r"^## Usage\n+```sh\n(.*?)^```", readme, re.M | re.S)
        self.assertIsNotNone(block, "no ```sh block under '## Usage' in README")
        script = [README_SETUP, "trap 'echo \"failed: $BASH_COMMAND\" >&2' ERR"]
        before = dict(README_BEFORE)
        for line in block.group(1).splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            skip = next((why for word, why in README_SKIPS if word in line), None)
            if not skip and line.startswith("mpiexec.mpich"):
                if shutil.which("mpiexec.mpich") is None:
                    skip = "MPICH's mpiexec.mpich is not installed (scripts/setup.sh installs it)"
                elif not os.path.exists(os.path.join(os.path.dirname(PAES), "paes-mpi")):
                    skip = "no paes-mpi beside paes: this build has no mpi engine"
            if skip:
                print(f"README Usage: skipped ({skip}): {line}", file=sys.stderr)
                continue
            for word in [w for w in before if w in line]:
                script.append(before.pop(word))
            # age1...: the recipients of the identities the block and the set-up made.
            line = line.replace("age1...bob", "$(paes keygen -y bob.key)").replace(
                "age1...", "$(paes keygen -y alice.key)")
            script.append(line)
        env = dict(os.environ, PATH=os.path.dirname(PAES) + os.pathsep + os.environ.get("PATH", ""))
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", "\n".join(script)], cwd=self.tmp, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        self.assertEqual(proc.returncode, 0, describe(proc))

    def test_decrypt_help_pbkdf2_example_runs(self):
        """decrypt --help's openssl-then-paes pair, as written, gives back the plaintext."""
        lines = run_paes(["decrypt", "--help"], input_bytes=b"", cwd=self.tmp).stdout.decode().splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip().startswith("openssl enc -aes-256-ctr -pbkdf2"))
        pair = [lines[first].strip(), lines[first + 1].strip()]
        self.assertTrue(pair[1].startswith("paes decrypt"), pair)
        write_file(self.path("a"), os.urandom(5000))
        env = dict(os.environ, PASS="secret", PATH=os.path.dirname(PAES) + os.pathsep + os.environ.get("PATH", ""))
        proc = subprocess.run(["bash", "-e", "-c", "\n".join(pair)], cwd=self.tmp, env=env, capture_output=True,
                              timeout=60)
        self.assertEqual(proc.returncode, 0, f"{pair}: {describe(proc)}")
        out = pair[1].split("-o ")[-1].split()[0]
        with open(self.path("a"), "rb") as f, open(self.path(out), "rb") as g:
            self.assertEqual(f.read(), g.read(), pair)


class ClusterDocTest(UsageTestCase):
    """docs/CLUSTER.md's single-host block (the one whose lines launch mpiexec.mpich -n 2) runs as
    written, with paes and paes-mpi on PATH and a tar to seal (issue 44, item 5)."""

    def test_single_host_block_runs(self):
        if shutil.which("mpiexec.mpich") is None:
            self.skipTest("MPICH's mpiexec.mpich is not installed (scripts/setup.sh installs it)")
        if not os.path.exists(os.path.join(os.path.dirname(PAES), "paes-mpi")):
            self.skipTest("no paes-mpi beside paes: this build has no mpi engine")
        with open(CLUSTER, encoding="utf-8") as f:
            blocks = re.findall(r"^```sh\n(.*?)^```", f.read(), re.M | re.S)
        single = [b for b in blocks if "mpiexec.mpich -n 2" in b]
        self.assertEqual(len(single), 1, "one single-host block in docs/CLUSTER.md")
        subprocess.run(["tar", "cf", "data.tar", "d.txt"], cwd=self.tmp, check=True)
        env = dict(os.environ, PATH=os.path.dirname(PAES) + os.pathsep + os.environ.get("PATH", ""))
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", single[0]], cwd=self.tmp, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        self.assertEqual(proc.returncode, 0, describe(proc))


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
