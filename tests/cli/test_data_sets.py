#!/usr/bin/env python3
"""Data sets through the real binary: many files in one call, each written beside
itself (as gzip and zstd take them), each one's failure its own.

Run as:  python3 tests/cli/test_data_sets.py --paes build/release/paes

  N. naming: one FILE without -o is still written to stdout; two or more, or any of
     --recursive, --files-from, --files0-from, --output-dir, --suffix, --rm, make a
     set: INPUT.paes beside each input (.age with --format age, .tink with --format
     tink, .enc for --pbkdf2, or --suffix), decrypt removing .paes or .age (or the
     --suffix); under --output-dir at DIR/<input path as named>, a leading '/'
     dropped, a path climbing with '..' failing; a file named twice done once.
  U. usage, exit 2 and nothing written: -o (also -o -), '-' among the inputs, a raw
     mode with a key (--mode ctr --key-hex K --iv IV a b), --pbkdf2 with --nosalt or
     --salt, --range, --engine mpi, a named directory without --recursive, rekey of
     several files without -f or with -o.
  T. trees (--recursive): symbolic links, FIFOs, sockets and devices skipped with one
     "paes: note: skipped PATH" line each; a named symbolic link (to a file or a
     directory) followed; encrypt skips files already ending in the suffix (a named
     one with a note), and decrypt those not ending in it (a named one fails); other
     paes runs' temporaries are no data.
  F. failures: a missing file, a named FIFO, an existing output (unless -f), a
     decrypt input without the suffix: one stderr line naming each, the rest done,
     exit 1; --json: one object a file with "input", "output", and its summary or
     "error".
  A. attributes: outputs get their input's mtime (and atime); decrypted outputs are
     0600 or the input's mode where stricter, encrypted ones 0666 less the umask.
  R. --rm: each input removed once its output is complete (a failed file's input
     kept); an input with other hard links fails without -f, nothing written for it;
     inputs kept without --rm.
  K. keys: each sealed file gets its own file key and ephemeral X25519 share (two sets
     of the same plaintexts differ byte for byte; two files of one run have different
     stanzas), each --pbkdf2 file its own salt; passphrase sets round trip.
  I. inspect and rekey of several files: "file: NAME" blocks, --json one object a
     line with "file", exit 1 for an unknown or missing one; rekey -f re-keys each in
     place, a failing one reported by name and the rest done.
  S. SIGINT during a set: the file in flight leaves no temporary (.NAME.paes-XXXXXX),
     finished outputs are kept whole, paes dies of SIGINT (a shell's 130), and --rm
     removed only the finished files' inputs.
  X. the issue's acceptance cases at small scale: one tampered file among 50 in
     decrypt --recursive; a FIFO and a missing path in --files-from; -o and a raw key
     refused with nothing written; a tree's round trip under --output-dir mirroring it.

Files are small (the interrupted set's four 2 MiB files in cfb1, ~5 MB/s on one
thread, are what keeps the signal inside the run); no test times anything.
Python 3.9+ standard library only; Linux only.
"""

import filecmp
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness.terminal import run_on_terminal  # noqa: E402
from harness import (ScratchTestCase, describe, error_lines, killed_unless_finished, read_file, run_paes,  # noqa: E402
                     run_unittest, tool_paths, wait_for, write_file)

PAES = "paes"
KEY = bytes(range(32))
IV = "00112233445566778899aabbccddeeff"
PASSPHRASE = "correct horse battery"
FAST_SCRYPT = ["--scrypt-log-n", "10"]
PW_ENV = {"PW": PASSPHRASE}
MTIME = 981173106 * 10**9 + 123456789  # an input's mtime (and atime) that its outputs must carry
TEMPORARY = re.compile(r"^\..+\.paes-[A-Za-z0-9]{6}$")


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def snapshot(root):
    """{relative path: bytes for a regular file, 'link -> target', or the file's type}
    of everything under `root`: what "nothing written" compares."""
    seen = {}
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = "link -> " + os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                seen[rel] = read_file(path)
            else:
                seen[rel] = stat.S_IFMT(st.st_mode)
    return seen


def temporaries(root):
    """Paes' temporaries (.NAME.paes-XXXXXX) anywhere under `root`."""
    return [os.path.join(base, name) for base, _, files in os.walk(root) for name in files
            if TEMPORARY.match(name)]


def x25519_stanzas(data):
    """The ephemeral shares of a sealed file's X25519 stanzas ('-> X25519 SHARE')."""
    return re.findall(rb"-> X25519 (\S+)", data)


class SetTestCase(ScratchTestCase):
    """Paes runs in `self.work` (its cwd), so that inputs are named as a user names them;
    keys and identities live beside it, out of its listings."""

    prefix = "paes-sets-"

    def setUp(self):
        super().setUp()
        # tearDown removes it, but not after a setUp that failed (a keygen that didn't run).
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.work = self.new_dir("work")
        self.key = write_file(self.path("key"), KEY.hex().encode() + b"\n", 0o600)

    def w(self, *parts):
        return os.path.join(self.work, *parts)

    def files(self, contents):
        """Writes {relative name: bytes} under self.work (directories made); returns the names."""
        for name, data in contents.items():
            os.makedirs(os.path.dirname(self.w(name)), exist_ok=True)
            write_file(self.w(name), data)
        return list(contents)

    def identity(self, name="id"):
        """(identity file, its age1... recipient) from paes keygen --x25519."""
        path = self.path(name)
        proc = run_paes(["keygen", "--x25519", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        return path, proc.stdout.decode().strip()

    def paes(self, args, code=0, **options):
        """paes `args` in self.work; it must exit `code`. Returns the process."""
        options.setdefault("cwd", self.work)
        proc = run_paes(args, **options)
        self.assertEqual(proc.returncode, code, f"paes {' '.join(map(str, args))}: {describe(proc)}")
        return proc

    def refused(self, args, words=None, **options):
        """paes `args` is a usage error: exit 2, one 'paes: ' line (holding `words` when
        given), nothing on stdout, nothing under self.work changed."""
        before = snapshot(self.work)
        proc = self.paes(args, 2, **options)
        lines = error_lines(proc.stderr)
        cmd = "paes " + " ".join(map(str, args))
        self.assertEqual(len(lines), 1, f"{cmd}: expected one line on stderr, got {proc.stderr!r}")
        self.assertTrue(lines[0].startswith("paes: "), f"{cmd}: {lines[0]!r}")
        if words is not None:
            self.assertIn(words, lines[0], cmd)
        self.assertEqual(proc.stdout, b"", f"{cmd}: stdout {proc.stdout[:200]!r}")
        self.assertEqual(snapshot(self.work), before, f"{cmd}: wrote or removed something")
        return proc

    def failed_lines(self, proc, names):
        """`proc` exited 1 with exactly one stderr line for each of `names` (and no other),
        each naming it."""
        lines = error_lines(proc.stderr)
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertEqual(len(lines), len(names), f"expected one line for each of {names}, got {lines}")
        for name in names:
            naming = [line for line in lines if name in line]
            self.assertEqual(len(naming), 1, f"lines naming {name!r}: {naming} (all: {lines})")
            self.assertTrue(naming[0].startswith("paes: "), naming[0])

    def decrypted(self, sealed_name, *key_args):
        """The plaintext of self.work/`sealed_name`, decrypted alone to stdout."""
        proc = self.paes(["decrypt", *(key_args or ("--key-file", self.key)), sealed_name, "-o", "-"])
        return proc.stdout


# --------------------------------------------------------------------------- N. naming
class Naming(SetTestCase):
    """N: what makes a set, and where each output goes."""

    def test_one_file_without_output_still_goes_to_stdout(self):
        self.files({"a": b"alone"})
        proc = self.paes(["encrypt", "--key-file", self.key, "a"])
        self.assertEqual(sorted(os.listdir(self.work)), ["a"], "one FILE without -o wrote a file")
        self.assertEqual(self.paes(["decrypt", "--key-file", self.key], input_bytes=proc.stdout).stdout, b"alone")
        # And decrypting one file without -o: stdout too.
        write_file(self.w("a.paes"), proc.stdout)
        self.assertEqual(self.paes(["decrypt", "--key-file", self.key, "a.paes"]).stdout, b"alone")
        self.assertEqual(sorted(os.listdir(self.work)), ["a", "a.paes"])

    def test_two_files_are_written_beside_themselves_and_decrypted_back(self):
        plain = {"a": os.urandom(3000), "sub/b": os.urandom(10), "empty": b""}
        names = self.files(plain)
        proc = self.paes(["encrypt", "--key-file", self.key, *names])
        self.assertEqual(proc.stdout, b"", "a set printed on stdout")
        for name in names:
            self.assertTrue(os.path.isfile(self.w(name + ".paes")), name)
            os.remove(self.w(name))
        self.paes(["decrypt", "--key-file", self.key, *(n + ".paes" for n in names)])
        for name, data in plain.items():
            self.assertEqual(read_file(self.w(name)), data, name)

    def test_each_set_option_makes_a_set_of_one_file(self):
        for option, expected in ((["--recursive"], "a.paes"), (["--suffix", ".s"], "a.s"),
                                 (["--output-dir", "out"], "out/a.paes"), (["--rm"], "a.paes"),
                                 (["--files-from", "list"], "a.paes"), (["--files0-from", "list0"], "a.paes")):
            with self.subTest(option=option):
                d = self.unique_name("case")
                self.files({f"{d}/a": b"one file", f"{d}/list": b"a\n", f"{d}/list0": b"a\0"})
                inputs = [] if "--files-from" in option or "--files0-from" in option else ["a"]
                proc = self.paes(["encrypt", "--key-file", self.key, *option, *inputs], cwd=self.w(d))
                self.assertEqual(proc.stdout, b"", f"{option}: wrote to stdout")
                self.assertEqual(self.decrypted(f"{d}/{expected}"), b"one file", option)
                self.assertEqual(os.path.exists(self.w(d, "a")), option != ["--rm"], f"{option}: the input")

    def test_suffix_follows_the_format(self):
        ident, recipient = self.identity()
        plain = {"a": os.urandom(700), "b": os.urandom(70000)}
        cases = [
            ("paes", ["--key-file", self.key], ["--key-file", self.key], ".paes"),
            ("age", ["--format", "age", "-r", recipient], ["-i", ident], ".age"),
            ("age-pass", ["--format", "age", "--passphrase-env", "PW", *FAST_SCRYPT], ["--passphrase-env", "PW"],
             ".age"),
            ("tink", ["--format", "tink", "--key-file", self.key], ["--format", "tink", "--key-file", self.key],
             ".tink"),
            ("pbkdf2", ["--mode", "cbc", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"],
             ["--mode", "cbc", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"], ".enc"),
            ("pbkdf2-ctr", ["--mode", "ctr", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"],
             ["--mode", "ctr", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"], ".enc"),
            ("given", ["--key-file", self.key, "--suffix", ".locked"], ["--key-file", self.key, "--suffix", ".locked"],
             ".locked"),
        ]
        for what, enc, dec, suffix in cases:
            with self.subTest(format=what):
                d = self.unique_name(what)
                names = self.files({f"{d}/{n}": data for n, data in plain.items()})
                for name in names:
                    os.utime(self.w(name), ns=(MTIME, MTIME))
                self.paes(["encrypt", *enc, *names], env=PW_ENV)
                self.assertEqual(sorted(os.listdir(self.w(d))), sorted(["a", "b", "a" + suffix, "b" + suffix]))
                for name in names:
                    self.assertEqual(os.stat(self.w(name + suffix)).st_mtime_ns, MTIME, f"{what}: {name}'s mtime")
                    os.remove(self.w(name))
                self.paes(["decrypt", *dec, *(n + suffix for n in names)], env=PW_ENV)
                for name in names:
                    self.assertEqual(read_file(self.w(name)), plain[os.path.basename(name)], f"{what}: {name}")
                    self.assertEqual((os.stat(self.w(name)).st_mtime_ns, mode_of(self.w(name))), (MTIME, 0o600),
                                     f"{what}: {name}'s mtime and mode")

    def test_decrypt_takes_paes_and_age_files_in_one_set(self):
        ident, recipient = self.identity()
        self.files({"a": b"for paes", "b": b"for age"})
        self.paes(["encrypt", "-r", recipient, "a", "-o", "a.paes"])
        self.paes(["encrypt", "--format", "age", "-r", recipient, "b", "-o", "b.age"])
        os.remove(self.w("a"))
        os.remove(self.w("b"))
        self.paes(["decrypt", "-i", ident, "a.paes", "b.age"])
        self.assertEqual((read_file(self.w("a")), read_file(self.w("b"))), (b"for paes", b"for age"))

    def test_output_dir_takes_each_input_path_as_named(self):
        self.files({"a": b"A", "x/y/b": b"B", "c": b"C"})
        absolute = self.w("c")
        self.paes(["encrypt", "--key-file", self.key, "--output-dir", "out", "a", "x/y/b", absolute])
        self.assertEqual(self.decrypted("out/a.paes"), b"A")
        self.assertEqual(self.decrypted("out/x/y/b.paes"), b"B")
        # An absolute path: its leading '/' dropped, under the directory.
        self.assertEqual(self.decrypted("out" + absolute + ".paes"), b"C")
        self.assertFalse(os.path.exists(self.w("a.paes")), "an output beside its input despite --output-dir")
        # Decrypting under --output-dir: DIR/<the input's path without its suffix>.
        self.paes(["decrypt", "--key-file", self.key, "--output-dir", "plain", "out/a.paes", "out/x/y/b.paes"])
        self.assertEqual(read_file(self.w("plain/out/a")), b"A")
        self.assertEqual(read_file(self.w("plain/out/x/y/b")), b"B")

    def test_a_path_climbing_out_of_output_dir_fails_alone(self):
        self.files({"in/a": b"A", "b": b"B"})
        proc = self.paes(["encrypt", "--key-file", self.key, "--output-dir", "out", "../work/in/a", "b"], 1)
        self.failed_lines(proc, ["../work/in/a"])
        self.assertEqual(self.decrypted("out/b.paes"), b"B")
        self.assertEqual(sorted(os.listdir(self.w("out"))), ["b.paes"])

    def test_a_file_named_twice_is_done_once(self):
        self.files({"a": b"twice"})
        proc = self.paes(["encrypt", "--key-file", self.key, "--json", "a", "a", "./a"])
        self.assertEqual(len(proc.stdout.splitlines()), 1, proc.stdout)
        self.assertEqual(sorted(os.listdir(self.work)), ["a", "a.paes"])


# --------------------------------------------------------------------------- U. usage
class Usage(SetTestCase):
    """U: what a set refuses before it reads a key or writes a byte: exit 2."""

    def setUp(self):
        super().setUp()
        self.files({"a": b"alpha", "b": b"beta", "d/c": b"gamma"})
        self.ident, self.recipient = self.identity()

    def test_output_with_a_set(self):
        self.refused(["encrypt", "-r", self.recipient, "a", "b", "-o", "y"], "-o")
        for option in (["--recursive", "d"], ["--output-dir", "out", "a"], ["--suffix", ".x", "a"], ["--rm", "a"],
                       ["a", "b"]):
            self.refused(["encrypt", "--key-file", self.key, *option, "-o", "y"])
            self.refused(["encrypt", "--key-file", self.key, *option, "-o", "-"])

    def test_standard_input_among_the_inputs(self):
        self.refused(["encrypt", "--key-file", self.key, "a", "-"], "'-'", input_bytes=b"data")
        self.refused(["encrypt", "--key-file", self.key, "--output-dir", "out", "-"], "'-'", input_bytes=b"data")

    def test_a_raw_mode_with_a_key(self):
        key_hex = KEY.hex()
        self.refused(["encrypt", "--mode", "ctr", "--key-hex", key_hex, "--iv", IV, "a", "b"], "same key")
        self.refused(["encrypt", "--mode", "ecb", "--key-file", self.key, "a", "b"])
        self.refused(["encrypt", "--mode", "cbc", "--key-file", self.key, "--iv", IV, "--recursive", "d"])
        write_file(self.w("a.enc"), os.urandom(32))
        write_file(self.w("b.enc"), os.urandom(32))
        self.refused(["decrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV, "a.enc", "b.enc"])

    def test_pbkdf2_takes_a_salt_per_file(self):
        raw = ["encrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-env", "PW", "--iter", "1"]
        self.refused(raw + ["--nosalt", "a", "b"], "--nosalt", env=PW_ENV)
        self.refused(raw + ["--salt", "0011223344556677", "a", "b"], "--salt", env=PW_ENV)
        # Without them a set is fine (a salt per file: test_each_pbkdf2_file_has_its_own_salt).
        self.paes(raw + ["a", "b"], env=PW_ENV)
        self.assertTrue(os.path.isfile(self.w("a.enc")) and os.path.isfile(self.w("b.enc")))

    def test_range_and_mpi(self):
        self.paes(["encrypt", "--key-file", self.key, "a", "-o", "a.paes"])
        self.paes(["encrypt", "--key-file", self.key, "b", "-o", "b.paes"])
        self.refused(["decrypt", "--key-file", self.key, "--range", "0:2", "a.paes", "b.paes"], "--range")
        self.refused(["decrypt", "--key-file", self.key, "--range", "1", "--output-dir", "out", "a.paes"], "--range")
        self.refused(["encrypt", "--key-file", self.key, "--engine", "mpi", "a", "b"])
        self.refused(["decrypt", "--key-file", self.key, "--engine", "mpi", "a.paes", "b.paes"])

    def test_a_named_directory_needs_recursive(self):
        self.refused(["encrypt", "--key-file", self.key, "a", "d"], "--recursive")
        self.refused(["encrypt", "--key-file", self.key, "--output-dir", "out", "d"], "--recursive")
        write_file(self.w("list"), b"a\nd\n")
        self.refused(["encrypt", "--key-file", self.key, "--files-from", "list"], "--recursive")

    def test_rekey_of_several_files(self):
        for name in ("a", "b"):
            self.paes(["encrypt", "-r", self.recipient, name, "-o", name + ".paes"])
        _, other = self.identity("other")
        self.refused(["rekey", "-i", self.ident, "-r", other, "--add", "a.paes", "b.paes"], "-f")
        self.refused(["rekey", "-i", self.ident, "-r", other, "--add", "-f", "a.paes", "b.paes", "-o", "y"], "-o")


# --------------------------------------------------------------------------- T. trees
class Trees(SetTestCase):
    """T: --recursive's walk, and the suffix rules of each direction."""

    def notes(self, proc):
        return [line for line in error_lines(proc.stderr) if line.startswith("paes: note: skipped ")]

    def test_links_fifos_sockets_and_devices_are_skipped_with_a_note(self):
        self.files({"t/a": b"A", "t/sub/b": b"B", "outside": b"not in the tree"})
        os.symlink("../outside", self.w("t/link"))
        os.symlink("sub", self.w("t/dirlink"))
        os.mkfifo(self.w("t/fifo"))
        skipped = ["t/link", "t/dirlink", "t/fifo"]
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        sock.bind(self.w("t/sub/sock"))
        skipped.append("t/sub/sock")
        try:
            os.mknod(self.w("t/null"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
            skipped.append("t/null")
        except OSError:
            pass  # not root, or a container that forbids it: the other kinds still count
        proc = self.paes(["encrypt", "--key-file", self.key, "--recursive", "t"])
        notes = self.notes(proc)
        for path in skipped:
            self.assertEqual(len([n for n in notes if f"skipped {path}:" in n]), 1, f"{path}: notes {notes}")
        self.assertEqual(len(error_lines(proc.stderr)), len(skipped), proc.stderr)
        self.assertEqual(sorted(n for n in os.listdir(self.w("t")) if n.endswith(".paes")), ["a.paes"])
        self.assertEqual(sorted(os.listdir(self.w("t/sub"))), ["b", "b.paes", "sock"])
        self.assertEqual(self.decrypted("t/sub/b.paes"), b"B")
        self.assertFalse(os.path.exists(self.w("outside.paes")), "followed a link in the tree")

    def test_a_named_symbolic_link_is_followed(self):
        self.files({"a": b"A", "d/c": b"C"})
        os.symlink("a", self.w("lnk"))
        os.symlink("d", self.w("dl"))
        self.paes(["encrypt", "--key-file", self.key, "--recursive", "lnk", "dl"])
        self.assertEqual(self.decrypted("lnk.paes"), b"A")
        # The directory's file, walked through the named link (and so named dl/c).
        self.assertEqual(self.decrypted("dl/c.paes"), b"C")

    def test_encrypt_skips_what_already_ends_in_the_suffix(self):
        self.files({"t/a": b"A", "t/old.paes": b"not touched", "b.paes": b"named", "c": b"C"})
        proc = self.paes(["encrypt", "--key-file", self.key, "--recursive", "t", "b.paes", "c"])
        lines = error_lines(proc.stderr)
        self.assertEqual(len(lines), 1, f"expected one note (the named b.paes), got {lines}")
        self.assertTrue(lines[0].startswith("paes: note: skipped b.paes"), lines[0])
        self.assertEqual(sorted(os.listdir(self.w("t"))), ["a", "a.paes", "old.paes"])
        self.assertEqual(read_file(self.w("t/old.paes")), b"not touched")
        self.assertFalse(os.path.exists(self.w("b.paes.paes")))
        self.assertEqual(self.decrypted("c.paes"), b"C")
        # --suffix changes what is skipped: .paes files are now data.
        proc = self.paes(["encrypt", "--key-file", self.key, "--recursive", "--suffix", ".x", "t"])
        self.assertEqual(sorted(os.listdir(self.w("t"))), ["a", "a.paes", "a.paes.x", "a.x", "old.paes", "old.paes.x"])

    def test_decrypt_skips_a_trees_files_without_the_suffix_and_fails_a_named_one(self):
        self.files({"t/a": b"A", "t/notes.txt": b"plain", "n/b": b"B", "c": b"C"})
        self.paes(["encrypt", "--key-file", self.key, "--recursive", "--rm", "t/a", "n/b"])
        proc = self.paes(["decrypt", "--key-file", self.key, "--recursive", "t"])
        self.assertEqual(error_lines(proc.stderr), [], "a file without the suffix in a tree is skipped quietly")
        self.assertEqual(read_file(self.w("t/a")), b"A")
        self.assertEqual(read_file(self.w("t/notes.txt")), b"plain")
        # Named: it fails, alone.
        proc = self.paes(["decrypt", "--key-file", self.key, "c", "n/b.paes"], 1)
        self.failed_lines(proc, ["c"])
        self.assertIn(".paes", error_lines(proc.stderr)[0])
        self.assertEqual(read_file(self.w("n/b")), b"B")

    def test_other_runs_temporaries_are_not_data(self):
        self.files({"t/a": b"A", "t/.b.paes-Ab12Cd": b"half written"})
        proc = self.paes(["encrypt", "--key-file", self.key, "--recursive", "t"])
        self.assertEqual(error_lines(proc.stderr), [])
        self.assertEqual(sorted(os.listdir(self.w("t"))), [".b.paes-Ab12Cd", "a", "a.paes"])


# --------------------------------------------------------------------------- F. failures
class Failures(SetTestCase):
    """F: each failed file is one line naming it; the others complete; exit 1."""

    def test_missing_files_and_a_named_fifo_fail_alone(self):
        self.files({"a": b"A", "b": b"B"})
        os.mkfifo(self.w("fifo"))
        proc = self.paes(["encrypt", "--key-file", self.key, "a", "missing", "fifo", "b"], 1)
        self.failed_lines(proc, ["missing", "fifo"])
        self.assertEqual((self.decrypted("a.paes"), self.decrypted("b.paes")), (b"A", b"B"))
        self.assertEqual(sorted(os.listdir(self.work)), ["a", "a.paes", "b", "b.paes", "fifo"])
        self.assertEqual(temporaries(self.work), [])

    def test_an_existing_output_fails_its_file_unless_forced(self):
        self.files({"a": b"A", "b": b"B", "a.paes": b"keep me"})
        proc = self.paes(["encrypt", "--key-file", self.key, "a", "b"], 1)
        self.failed_lines(proc, ["a.paes"])
        self.assertIn("exists", error_lines(proc.stderr)[0])
        self.assertEqual(read_file(self.w("a.paes")), b"keep me")
        self.assertEqual(self.decrypted("b.paes"), b"B")
        self.paes(["encrypt", "--key-file", self.key, "-f", "a", "b"])
        self.assertEqual((self.decrypted("a.paes"), self.decrypted("b.paes")), (b"A", b"B"))
        # Decrypting over an existing plaintext: the same rule.
        os.remove(self.w("b"))
        proc = self.paes(["decrypt", "--key-file", self.key, "a.paes", "b.paes"], 1)
        self.failed_lines(proc, ["a"])
        self.assertEqual(read_file(self.w("b")), b"B")

    def test_another_tools_file_is_named_with_the_options_that_read_it(self):
        """As the one-file path says it: an openssl enc file given as a paes file."""
        self.files({"a.paes": b"Salted__" + os.urandom(40), "b": b"B"})
        self.paes(["encrypt", "--key-file", self.key, "b", "-o", "b.paes"])
        proc = self.paes(["decrypt", "--key-file", self.key, "--output-dir", "out", "a.paes", "b.paes"], 1)
        self.failed_lines(proc, ["a.paes"])
        self.assertIn("--mode <mode> --pbkdf2", error_lines(proc.stderr)[0])
        self.assertEqual(read_file(self.w("out", "b")), b"B")

    def test_two_inputs_of_one_output_never_both_run(self):
        """x.paes and x.age both decrypt to x: the second fails, even under -f --rm, so that
        neither replaces the other's plaintext and no input is lost."""
        ident, recipient = self.identity()
        self.files({"x": b"paes's x"})
        self.paes(["encrypt", "-r", recipient, "x", "-o", "x.paes"])
        write_file(self.w("x"), b"age's x")
        self.paes(["encrypt", "--format", "age", "-r", recipient, "x", "-o", "x.age"])
        os.remove(self.w("x"))
        proc = self.paes(["decrypt", "-i", ident, "-f", "--rm", "--recursive", "."], 1)
        self.failed_lines(proc, ["x.paes"])
        self.assertIn("x.age", error_lines(proc.stderr)[0])
        self.assertEqual(read_file(self.w("x")), b"age's x")
        self.assertFalse(os.path.exists(self.w("x.age")))
        self.assertTrue(os.path.exists(self.w("x.paes")))

    def test_json_prints_one_object_a_file(self):
        self.files({"a": b"A" * 100, "b": b"B" * 7})
        proc = self.paes(["encrypt", "--key-file", self.key, "--json", "a", "missing", "b"], 1)
        records = [json.loads(line) for line in proc.stdout.decode().splitlines()]
        self.assertEqual(sorted(r["input"] for r in records), ["a", "b", "missing"], records)
        for record in records:
            if record["input"] == "missing":
                # Listed as failed before its output was named: no "output".
                self.assertNotIn("output", record)
                self.assertIn("error", record)
                self.assertNotIn("bytes_in", record)
            else:
                self.assertEqual(record["output"], record["input"] + ".paes", record)
                self.assertNotIn("error", record)
                self.assertEqual(record["bytes_in"], os.path.getsize(self.w(record["input"])), record)
                self.assertEqual(record["bytes_out"], os.path.getsize(self.w(record["output"])), record)
                self.assertEqual(record["direction"], "encrypt")
        self.failed_lines(proc, ["missing"])
        proc = self.paes(["decrypt", "--key-file", self.key, "--json", "--output-dir", "out", "a.paes", "b.paes"])
        records = {r["input"]: r for r in map(json.loads, proc.stdout.decode().splitlines())}
        self.assertEqual(sorted(records), ["a.paes", "b.paes"])
        self.assertEqual(records["b.paes"]["output"], "out/b")
        self.assertEqual(records["a.paes"]["bytes_out"], 100)

    def test_names_from_files_from_and_files0_from(self):
        self.files({"a": b"A", "b b": b"with a space", "c\nd": b"with a newline"})
        write_file(self.w("list"), b"a\nb b\n")
        self.paes(["encrypt", "--key-file", self.key, "--files-from", "list"])
        self.assertEqual((self.decrypted("a.paes"), self.decrypted("b b.paes")), (b"A", b"with a space"))
        write_file(self.w("list0"), b"c\nd\0")
        self.paes(["encrypt", "--key-file", self.key, "--files0-from", "list0"])
        self.assertEqual(self.decrypted("c\nd.paes"), b"with a newline")
        # '-': the names on standard input.
        self.paes(["decrypt", "--key-file", self.key, "--files-from", "-", "--output-dir", "out"],
                  input_bytes=b"a.paes\nb b.paes\n")
        self.assertEqual((read_file(self.w("out/a")), read_file(self.w("out/b b"))), (b"A", b"with a space"))


# --------------------------------------------------------------------------- A. attributes
class Attributes(SetTestCase):
    """A: times and permissions of a set's outputs."""

    def test_outputs_get_their_inputs_times(self):
        self.files({"a": b"A", "b": b"B" * 5000})
        now = time.time_ns()
        times = {"a": (now - 3600 * 10**9 + 123, 981173106 * 10**9 + 456789),
                 "b": (now - 7200 * 10**9 + 999, 1234567890 * 10**9)}
        for name, (atime, mtime) in times.items():
            os.utime(self.w(name), ns=(atime, mtime))
        for direction, suffix_in, suffix_out in (("encrypt", "", ".paes"), ("decrypt", ".paes", "")):
            if direction == "decrypt":
                for name, (atime, mtime) in times.items():
                    os.remove(self.w(name))
                    os.utime(self.w(name + ".paes"), ns=(atime + 1000, mtime + 1000))
                times = {name: (atime + 1000, mtime + 1000) for name, (atime, mtime) in times.items()}
            self.paes([direction, "--key-file", self.key, *(n + suffix_in for n in times)])
            for name, (atime, mtime) in times.items():
                out = os.stat(self.w(name + suffix_out))
                read = os.stat(self.w(name + suffix_in))
                self.assertEqual(out.st_mtime_ns, mtime, f"{direction} {name}: mtime")
                # The atime as read: the input's before the run (relatime leaves a recent one), or after.
                self.assertIn(out.st_atime_ns, (atime, read.st_atime_ns), f"{direction} {name}: atime")

    def test_modes(self):
        self.files({"a": b"A", "b": b"B", "c": b"C"})
        os.chmod(self.w("a"), 0o600)
        os.chmod(self.w("b"), 0o444)
        self.paes(["encrypt", "--key-file", self.key, "a", "b", "c"], umask=0o027)
        for name in ("a", "b", "c"):
            self.assertEqual(f"{mode_of(self.w(name + '.paes')):o}", "640", f"{name}.paes: 0666 less umask 027")
            os.remove(self.w(name))
        os.chmod(self.w("a.paes"), 0o644)
        os.chmod(self.w("b.paes"), 0o400)
        os.chmod(self.w("c.paes"), 0o640)
        self.paes(["decrypt", "--key-file", self.key, "a.paes", "b.paes", "c.paes"], umask=0o022)
        got = {name: f"{mode_of(self.w(name)):o}" for name in ("a", "b", "c")}
        self.assertEqual(got, {"a": "600", "b": "400", "c": "600"})


# --------------------------------------------------------------------------- R. --rm
class Removal(SetTestCase):
    """R: --rm removes an input only once its output is complete; hard links need -f."""

    def test_inputs_are_kept_by_default_and_removed_with_rm(self):
        plain = {"a": os.urandom(100), "b": os.urandom(5000)}
        self.files(plain)
        self.paes(["encrypt", "--key-file", self.key, "a", "b"])
        self.assertEqual(sorted(os.listdir(self.work)), ["a", "a.paes", "b", "b.paes"])
        for name in plain:
            os.remove(self.w(name + ".paes"))
        proc = self.paes(["encrypt", "--key-file", self.key, "--rm", "--json", "a", "b"])
        self.assertEqual(sorted(os.listdir(self.work)), ["a.paes", "b.paes"])
        self.assertTrue(all(json.loads(line)["input_removed"] for line in proc.stdout.decode().splitlines()))
        self.paes(["decrypt", "--key-file", self.key, "--rm", "a.paes", "b.paes"])
        self.assertEqual(snapshot(self.work), plain)

    def test_a_failed_file_keeps_its_input(self):
        self.files({"a": b"A" * 1000, "b": b"B" * 1000})
        self.paes(["encrypt", "--key-file", self.key, "--rm", "a", "b"])
        damaged = bytearray(read_file(self.w("b.paes")))
        damaged[-20] ^= 1
        write_file(self.w("b.paes"), bytes(damaged))
        proc = self.paes(["decrypt", "--key-file", self.key, "--rm", "a.paes", "b.paes"], 1)
        self.failed_lines(proc, ["b.paes"])
        self.assertEqual(sorted(os.listdir(self.work)), ["a", "b.paes"])
        self.assertEqual(read_file(self.w("b.paes")), bytes(damaged))

    def test_an_input_with_other_hard_links_needs_force(self):
        self.files({"a": b"A", "b": b"B"})
        os.link(self.w("a"), self.w("a-link"))
        proc = self.paes(["encrypt", "--key-file", self.key, "--rm", "a", "b"], 1)
        self.failed_lines(proc, ["a"])
        self.assertIn("hard link", error_lines(proc.stderr)[0])
        self.assertEqual(sorted(os.listdir(self.work)), ["a", "a-link", "b.paes"], "written for a linked input")
        self.assertEqual(read_file(self.w("a")), b"A")
        self.paes(["encrypt", "--key-file", self.key, "--rm", "-f", "a"])
        self.assertEqual(sorted(os.listdir(self.work)), ["a-link", "a.paes", "b.paes"])
        self.assertEqual(self.decrypted("a.paes"), b"A")


# --------------------------------------------------------------------------- K. keys
class FreshKeys(SetTestCase):
    """K: a set is many single runs: each file its own file key, share, salt."""

    def test_two_sets_of_the_same_plaintexts_differ(self):
        ident, recipient = self.identity()
        same = os.urandom(2000)
        self.files({"a": same, "b": same})
        for key_args, what in ((["--key-file", self.key], "key"), (["-r", recipient], "recipient")):
            runs = []
            for run in ("one", "two"):
                out = self.unique_name(f"{what}-{run}-")
                self.paes(["encrypt", *key_args, "--output-dir", out, "a", "b"])
                runs.append([read_file(self.w(out, n + ".paes")) for n in ("a", "b")])
            outputs = runs[0] + runs[1]
            self.assertEqual(len(set(outputs)), 4, f"{what}: equal ciphertexts among two sets of one plaintext")
            # Nor does any body (past the header) repeat: a fresh file key, not just a fresh header.
            tails = {o[-1000:] for o in outputs}
            self.assertEqual(len(tails), 4, f"{what}: equal bodies")
            if what == "recipient":
                shares = [x25519_stanzas(o) for o in outputs]
                self.assertTrue(all(len(s) == 1 for s in shares), shares)
                self.assertEqual(len({s[0] for s in shares}), 4, f"X25519 shares repeat: {shares}")
                self.paes(["decrypt", "-i", ident, "--output-dir", "plain", f"{out}/a.paes", f"{out}/b.paes"])
                self.assertEqual(read_file(self.w("plain", out, "a")), same)

    def test_each_pbkdf2_file_has_its_own_salt(self):
        same = os.urandom(100)
        self.files({"a": same, "b": same})
        pbkdf2 = ["--mode", "ctr", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"]
        self.paes(["encrypt", *pbkdf2, "a", "b"], env=PW_ENV)
        a, b = read_file(self.w("a.enc")), read_file(self.w("b.enc"))
        self.assertEqual((a[:8], b[:8]), (b"Salted__", b"Salted__"))
        self.assertNotEqual(a[8:16], b[8:16], "two files of a set share a salt")
        self.assertNotEqual(a[16:], b[16:])
        self.paes(["decrypt", *pbkdf2, "--output-dir", "out", "a.enc", "b.enc"], env=PW_ENV)
        self.assertEqual((read_file(self.w("out/a")), read_file(self.w("out/b"))), (same, same))

    def test_a_passphrase_set_round_trips(self):
        plain = {"a": os.urandom(3000), "b": b"", "c": os.urandom(70000)}
        names = self.files(plain)
        self.paes(["encrypt", "--passphrase-env", "PW", *FAST_SCRYPT, *names], env=PW_ENV)
        stanzas = [re.findall(rb"-> scrypt (\S+)", read_file(self.w(n + ".paes"))) for n in names]
        self.assertEqual(len({s[0] for s in stanzas if s}), len(names), f"scrypt salts repeat: {stanzas}")
        self.paes(["decrypt", "--passphrase-env", "PW", "--output-dir", "out", *(n + ".paes" for n in names)],
                  env=PW_ENV)
        for name, data in plain.items():
            self.assertEqual(read_file(self.w("out", name)), data, name)
        proc = self.paes(["decrypt", "--passphrase-env", "PW", "--output-dir", "wrong", "a.paes", "b.paes"], 1,
                         env={"PW": "wrong"})
        self.failed_lines(proc, ["a.paes", "b.paes"])
        self.assertEqual(temporaries(self.work), [])
        self.assertFalse(os.path.exists(self.w("wrong/a")) or os.path.exists(self.w("wrong/b")))

    def test_the_passphrase_is_asked_once_whatever_the_first_file_is(self):
        """No key given: the set asks for the passphrase on the terminal once, decided by the first
        file that says what opens it; a damaged file listed first fails alone, after."""
        plain = {"b": os.urandom(100), "c": os.urandom(200)}
        names = self.files(plain)
        self.paes(["encrypt", "--passphrase-env", "PW", *FAST_SCRYPT, *names], env=PW_ENV)
        write_file(self.w("a.paes"), b"not a paes file at all")
        proc, screen = run_on_terminal([PAES, "decrypt", "--recursive", self.work, "--output-dir", self.w("out")],
                                       PASSPHRASE)
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertEqual(screen.lower().count(b"passphrase"), 1, screen)
        self.failed_lines(proc, [self.w("a.paes")])
        for name, data in plain.items():
            self.assertEqual(read_file(self.w("out", self.work.lstrip("/"), name)), data, name)


# --------------------------------------------------------------------------- I. inspect and rekey
class InspectAndRekey(SetTestCase):
    """I: inspect and rekey given several files."""

    def setUp(self):
        super().setUp()
        self.ident, self.recipient = self.identity()
        self.files({"a": b"A" * 10, "b": b"B" * 20, "c": b"C" * 30, "junk": b"no format at all"})
        self.paes(["encrypt", "-r", self.recipient, "a", "b", "c"])
        self.paes(["encrypt", "--key-file", self.key, "a", "-o", "k.paes"])

    def test_inspect_text(self):
        proc = self.paes(["inspect", "a.paes", "k.paes", "c.paes"])
        text = proc.stdout.decode()
        heads = [line for line in text.splitlines() if line.startswith("file: ")]
        self.assertEqual(heads, ["file: a.paes", "file: k.paes", "file: c.paes"], text)
        blocks = text.split("file: ")[1:]
        self.assertIn("key source: recipients", blocks[0])
        self.assertIn("key source: raw key", blocks[1])
        self.assertIn("plaintext size: 30", blocks[2])
        proc = self.paes(["inspect", "a.paes", "junk"], 1)
        self.assertIn("file: junk", proc.stdout.decode())
        proc = self.paes(["inspect", "a.paes", "missing", "b.paes"], 1)
        heads = [line for line in proc.stdout.decode().splitlines() if line.startswith("file: ")]
        self.assertEqual(heads[0], "file: a.paes")
        self.assertEqual(heads[-1], "file: b.paes")
        self.failed_lines(proc, ["missing"])

    def test_inspect_json(self):
        proc = self.paes(["inspect", "--json", "a.paes", "k.paes", "junk", "missing"], 1)
        lines = proc.stdout.decode().splitlines()
        records = [json.loads(line) for line in lines]
        self.assertEqual([r["file"] for r in records], ["a.paes", "k.paes", "junk", "missing"], lines)
        self.assertEqual((records[0]["key_source"], records[0]["recipients"]), ("recipients", 1))
        self.assertEqual(records[1]["format"], "paes")
        self.assertEqual(records[2]["format"], "unknown")
        self.assertIn("error", records[3])
        proc = self.paes(["inspect", "--json", "a.paes", "b.paes"])
        self.assertEqual(len(proc.stdout.decode().splitlines()), 2)

    def test_rekey_several_in_place(self):
        other_ident, other = self.identity("other")
        before = read_file(self.w("b.paes"))
        self.paes(["rekey", "-i", self.ident, "-r", other, "--add", "-f", "a.paes", "b.paes", "c.paes"])
        for name, letter, n in (("a", b"A", 10), ("b", b"B", 20), ("c", b"C", 30)):
            data = read_file(self.w(name + ".paes"))
            self.assertEqual(len(x25519_stanzas(data)), 2, f"{name}.paes: stanzas")
            self.assertEqual(self.decrypted(name + ".paes", "-i", other_ident), letter * n)
            self.assertEqual(self.decrypted(name + ".paes", "-i", self.ident), letter * n)
        # The body is untouched: the same last bytes.
        self.assertEqual(read_file(self.w("b.paes"))[-32:], before[-32:])
        self.assertEqual(temporaries(self.work), [])
        # One that fails (not a paes file, or missing) is named; the others are done.
        _, third = self.identity("third")
        proc = self.paes(["rekey", "-i", self.ident, "-r", third, "--add", "-f", "a.paes", "junk", "missing"], 1)
        self.failed_lines(proc, ["junk", "missing"])
        self.assertEqual(len(x25519_stanzas(read_file(self.w("a.paes")))), 3)
        self.assertEqual(read_file(self.w("junk")), b"no format at all")


# --------------------------------------------------------------------------- S. SIGINT
class Interrupt(SetTestCase):
    """S: Ctrl-C in the middle of a set."""

    def check_removed_only_when_finished(self, names, finished, plain):
        """An input is removed only if its file finished; any kept is whole."""
        for name in names:
            if os.path.exists(self.w(name)):
                self.assertEqual(read_file(self.w(name)), plain[name], f"{name}: its input changed")
            else:
                self.assertIn(name, finished, f"{name}: removed but unfinished")

    def interrupt(self, args, ready, what):
        """Runs paes encrypt `args`, sends SIGINT once `ready()` holds, and checks it died of it."""
        proc = subprocess.Popen([PAES, "encrypt", *args], cwd=self.work, env={**os.environ, **PW_ENV},
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with killed_unless_finished(proc):
            wait_for(ready, what,
                     lambda: f"paes ended first, exit {proc.returncode} (files too small to be interrupted?)"
                     if proc.poll() is not None else None, timeout=120)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, -signal.SIGINT,
                         f"expected death by SIGINT (a shell's 130), got exit {proc.returncode}: {err!r}")

    def test_sigint_removes_the_temporary_in_flight_and_keeps_finished_outputs(self):
        # cfb1 runs one AES a bit (~5 MB/s on one thread): 2 MiB keeps each file in flight
        # for about 0.4 s, long enough to see the next one's temporary and signal.
        plain = {f"f{i}": os.urandom(2 << 20) for i in range(4)}
        names = self.files(plain)
        cfb1 = ["--mode", "cfb1", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"]
        self.interrupt([*cfb1, "--threads", "1", "--rm", *names],
                       lambda: os.path.exists(self.w("f0.enc")) and glob.glob(self.w(".f1.enc.paes-*")),
                       "f0.enc written and f1's temporary in flight")
        self.assertEqual(temporaries(self.work), [], "a temporary survived SIGINT")
        finished = sorted(n for n in names if os.path.exists(self.w(n + ".enc")))
        self.assertIn("f0", finished)
        self.assertLess(len(finished), len(names), "every file finished: the signal came too late")
        # --rm: only finished files' inputs are gone (f0's long before the signal; one that
        # finished as it came may keep its input, whole); the rest are untouched.
        self.assertFalse(os.path.exists(self.w("f0")), "f0: finished but its input kept")
        self.check_removed_only_when_finished(names, finished, plain)
        self.check_finished(finished, plain, cfb1)

    def test_sigint_removes_every_temporary_of_files_side_by_side(self):
        plain = {f"g{i}": os.urandom(1 << 20) for i in range(5)}
        names = self.files(plain)
        cfb1 = ["--mode", "cfb1", "--pbkdf2", "--iter", "1", "--passphrase-env", "PW"]
        self.interrupt([*cfb1, "--threads", "3", "--rm", *names], lambda: len(temporaries(self.work)) >= 3,
                       "three files in flight at once")
        self.assertEqual(temporaries(self.work), [], "a temporary of a file in flight survived SIGINT")
        finished = sorted(n for n in names if os.path.exists(self.w(n + ".enc")))
        self.check_removed_only_when_finished(names, finished, plain)
        self.check_finished(finished, plain, cfb1)

    def check_finished(self, finished, plain, cfb1):
        for name in finished:
            # One at a time, each on every thread (a set runs a file this small on one).
            self.paes(["decrypt", *cfb1, name + ".enc", "-o", name + ".check"], env=PW_ENV)
            self.assertEqual(read_file(self.w(name + ".check")), plain[name], f"{name}: finished output incomplete")


# --------------------------------------------------------------------------- X. the acceptance cases
class Acceptance(SetTestCase):
    """X: the issue's acceptance cases, small."""

    ctest_labels = ("threads",)  # files run side by side, on the set's worker threads

    def tree(self, root, count, seed):
        """`count` files of assorted small sizes (one empty, one past a 1 MiB segment) in
        nested directories under `root`; returns {relative path: bytes}."""
        rng = random.Random(seed)
        plain = {}
        for i in range(count):
            size = 0 if i == 3 else (1 << 20) + 77 if i == 7 else rng.randrange(1, 20000)
            plain[f"{root}/d{i % 5}/{'e/' if i % 3 == 0 else ''}f{i:02}"] = rng.randbytes(size)
        self.files(plain)
        return plain

    def test_one_tampered_file_among_fifty(self):
        plain = self.tree("src", 50, 1)
        self.paes(["encrypt", "--key-file", self.key, "--recursive", "src", "--output-dir", "enc"])
        tampered = "src/d2/f17.paes"
        self.assertIn(tampered[:-5], plain)
        data = bytearray(read_file(self.w("enc", tampered)))
        data[len(data) // 2] ^= 0x40
        write_file(self.w("enc", tampered), bytes(data))
        proc = self.paes(["decrypt", "--key-file", self.key, "--recursive", "src"], 1, cwd=self.w("enc"))
        self.failed_lines(proc, [tampered])
        for name, data in plain.items():
            out = self.w("enc", name)
            if name + ".paes" == tampered:
                self.assertFalse(os.path.exists(out), "the tampered file's output exists")
            else:
                self.assertEqual(read_file(out), data, f"{name}: incomplete")
        self.assertEqual(temporaries(self.work), [])

    def test_a_fifo_and_a_missing_path_in_files_from(self):
        plain = self.tree("src", 6, 2)
        os.mkfifo(self.w("src/fifo"))
        listed = list(plain)
        listed[2:2] = ["src/fifo"]
        listed[5:5] = ["src/gone"]  # listed, then removed before the run: a path that doesn't exist
        write_file(self.w("list"), "".join(n + "\n" for n in listed).encode())
        proc = self.paes(["encrypt", "--key-file", self.key, "--files-from", "list"], 1)
        self.failed_lines(proc, ["src/fifo", "src/gone"])
        self.assertFalse(os.path.exists(self.w("src/fifo.paes")) or os.path.exists(self.w("src/gone.paes")))
        self.paes(["decrypt", "--key-file", self.key, "--output-dir", "out", *(n + ".paes" for n in plain)])
        for name, data in plain.items():
            self.assertEqual(read_file(self.w("out", name)), data, name)
        self.assertEqual(temporaries(self.work), [])

    def test_output_and_raw_key_refused_with_nothing_written(self):
        _, recipient = self.identity()
        self.files({"a": b"A", "b": b"B"})
        self.refused(["encrypt", "-r", recipient, "a", "b", "-o", "y"])
        self.refused(["encrypt", "--mode", "ctr", "--key-hex", KEY.hex(), "--iv", IV, "a", "b"])

    def test_a_trees_round_trip_under_output_dir_mirrors_it(self):
        self.tree("src", 30, 3)
        before = snapshot(self.w("src"))
        self.paes(["encrypt", "--key-file", self.key, "--recursive", "src", "--output-dir", "enc"])
        self.paes(["decrypt", "--key-file", self.key, "--recursive", "src", "--output-dir", "../dec"],
                  cwd=self.w("enc"))
        self.assertEqual(snapshot(self.w("src")), before, "originals changed")

        def differences(cmp, where=""):
            problems = [f"{where}{n}" for n in cmp.left_only + cmp.right_only + cmp.diff_files + cmp.funny_files]
            for name, sub in cmp.subdirs.items():
                problems += differences(sub, f"{where}{name}/")
            return problems

        cmp = filecmp.dircmp(self.w("src"), self.w("dec/src"), ignore=[])
        filecmp.clear_cache()
        # dircmp compares by stat signature first: check the bytes too.
        self.assertEqual(differences(cmp), [])
        self.assertEqual(snapshot(self.w("dec/src")), before)
        # And the encrypted tree is the same tree, each file with .paes added.
        self.assertEqual(sorted(snapshot(self.w("enc/src"))),
                         sorted(k + ".paes" if isinstance(v, bytes) else k for k, v in before.items()))


def main():
    global PAES
    PAES, _, rest = tool_paths(__doc__, need_openssl=False)
    os.umask(0o022)  # the modes these tests expect, unless a test gives paes another umask
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
