#!/usr/bin/env python3
"""What the real `paes` binary does to the file system around its output: the
permissions, owner and group of what it writes, and what it does when the output
name is a symbolic link or a device.

Run as:  python3 tests/cli/test_output_safety.py --paes build/release/paes

  M. permissions: decrypted output is 0600 (or the input's mode where stricter),
     less the umask, also with -f over another user's file (plaintext is never
     handed to its owner nor given its mode); encrypted output 0666 less the umask;
     encrypting with -f keeps the replaced file's mode, owner and group (root: chown
     to 1234:1234 first; as nobody the owner can't be kept and the group bits are
     dropped).
  L. a symbolic link under the output name is an existing output: refused without
     -f (nothing written through it, even to /dev/null); with -f the link itself is
     replaced by a regular file and what it pointed to is untouched.
  D. devices: `-o /dev/null` works; any other character or block device needs -f,
     and is then written in place, but never when it is also the input.
  P. pipes and stdio: a named pipe or a process substitution's /dev/fd/N as the
     output (no -f, openssl's bytes); a symbolic link to a pipe elsewhere is still
     an existing output; stdout that is the input file is refused; a closed stdin
     is an error, not a hang; SIGPIPE (a --progress whose stderr closed) leaves no
     temporary behind.
  N. names: empty option values, keygen -o - (stdout; /dev/stdout refused), 255-byte output names, and an
     existing output refused before any passphrase is asked for.

Tests run as root in CI, and root bypasses permission checks: modes and owners are
checked by stat'ing the results. Python 3.11 standard library only; Linux only.
"""

import os
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (NOBODY, ScratchTestCase, describe, nobody_can_run, read_file, run_paes,  # noqa: E402
                     run_unittest, tool_paths, write_file)

PAES = "paes"
OTHER_ID = 1234  # uid and gid of the "someone else" who owns a replaced file
KEY = bytes(range(32))
IV = bytes(range(16))
RAW = ["--mode", "cbc", "--iv", IV.hex()]


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def attributes(path):
    """(mode in octal, uid, gid) of `path` itself, as text a failure message can show."""
    st = os.lstat(path)
    return f"{stat.S_IMODE(st.st_mode):o} {st.st_uid}:{st.st_gid}"


class OutputTestCase(ScratchTestCase):
    prefix = "paes-output-"

    def setUp(self):
        super().setUp()
        self.key = write_file(self.path("key"), KEY, 0o600)
        self.plain = os.urandom(5000)
        self.inp = write_file(self.path("plain.bin"), self.plain, 0o644)
        self.out_dir = self.new_dir("out")
        # Ciphertext of self.plain in both formats, readable by anyone (0644).
        self.sealed = self.encrypted([], "sealed.paes")
        self.raw = self.encrypted(RAW, "raw.cbc")

    def encrypted(self, fmt, name):
        out = self.path(name)
        self.assert_exit(["encrypt", "--key-file", self.key] + fmt + [self.inp, "-o", out])
        os.chmod(out, 0o644)
        return out

    def decrypt(self, fmt):
        """The decrypt command line for `fmt` ("sealed" or "raw"), without -o."""
        return ["decrypt", "--key-file", self.key] + (RAW + [self.raw] if fmt == "raw" else [self.sealed])

    def encrypt(self, fmt):
        return ["encrypt", "--key-file", self.key] + (RAW if fmt == "raw" else []) + [self.inp]


class PermissionTest(OutputTestCase):
    """M: the permissions, owner and group of the output."""

    def test_decrypted_output_is_private(self):
        # (input mode, umask) -> the decrypted file's mode
        cases = {(0o644, 0o022): 0o600, (0o644, 0o000): 0o600, (0o640, 0o027): 0o600,
                 (0o400, 0o022): 0o400, (0o444, 0o022): 0o400, (0o600, 0o277): 0o400}
        for fmt in ("sealed", "raw"):
            for (input_mode, umask), want in cases.items():
                source = self.sealed if fmt == "sealed" else self.raw
                os.chmod(source, input_mode)
                out = os.path.join(self.out_dir, f"{fmt}-{input_mode:o}-{umask:o}")
                self.assert_exit(self.decrypt(fmt) + ["-o", out], umask=umask)
                self.assertEqual(read_file(out), self.plain)
                self.assertEqual(f"{mode_of(out):o}", f"{want:o}", f"{fmt}: input {input_mode:o}, umask {umask:03o}")
            # From a pipe, there is no input file's mode to follow.
            out = os.path.join(self.out_dir, f"{fmt}-stdin")
            self.assert_exit(self.decrypt(fmt)[:-1] + ["-", "-o", out], umask=0,
                    input_bytes=read_file(self.sealed if fmt == "sealed" else self.raw))
            self.assertEqual((read_file(out) == self.plain, f"{mode_of(out):o}"), (True, "600"), f"{fmt} from stdin")

    def test_pbkdf2_decrypted_output_is_private(self):
        enc = self.path("pbkdf2.enc")
        passphrase = write_file(self.path("passphrase"), b"correct horse\n", 0o600)
        env_args = ["--mode", "cbc", "--pbkdf2", "--passphrase-file", passphrase]
        self.assert_exit(["encrypt"] + env_args + [self.inp, "-o", enc])
        os.chmod(enc, 0o644)
        out = os.path.join(self.out_dir, "plain")
        self.assert_exit(["decrypt"] + env_args + [enc, "-o", out])
        self.assertEqual(read_file(out), self.plain)
        self.assertEqual(f"{mode_of(out):o}", "600")

    def test_encrypted_output_follows_umask(self):
        for fmt in ("sealed", "raw"):
            for umask, want in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
                out = os.path.join(self.out_dir, f"{fmt}-{umask:o}")
                self.assert_exit(self.encrypt(fmt) + ["-o", out], umask=umask)
                self.assertEqual(mode_of(out), want, f"{fmt} umask {umask:03o}")

    def test_force_keeps_the_replaced_files_mode_owner_and_group(self):
        # (format, the replaced file's mode) -> the ciphertext's mode after -f
        cases = [("sealed", 0o600, 0o600), ("raw", 0o660, 0o660), ("sealed", 0o644, 0o644),
                 # set-id bits are not carried over to new content
                 ("raw", 0o4755, 0o755), ("sealed", 0o2750, 0o750)]
        for fmt, old_mode, want in cases:
            what = f"encrypt {fmt} -f over a {old_mode:o} file owned by {OTHER_ID}:{OTHER_ID}"
            out = write_file(os.path.join(self.out_dir, "target"), b"old content")
            os.chown(out, OTHER_ID, OTHER_ID)
            os.chmod(out, old_mode)
            self.assert_exit(self.encrypt(fmt) + ["-f", "-o", out], umask=0o077)
            self.assertNotEqual(read_file(out), b"old content", what)
            self.assertEqual(attributes(out), f"{want:o} {OTHER_ID}:{OTHER_ID}", what)
            self.assertEqual(os.listdir(self.out_dir), ["target"], f"{what}: leftovers")
            os.remove(out)

    def test_force_never_hands_plaintext_to_another_user(self):
        """A file another user planted under the output's name (0666, owned by nobody) lends
        the plaintext neither its mode nor its owner: -f gives a new file of ours, 0600 or
        the input's mode where stricter, less the umask, whatever the planted file's mode."""
        # (the input's mode, the planted file's mode) -> the plaintext's mode
        cases = [(0o644, 0o666, 0o600), (0o640, 0o666, 0o600), (0o440, 0o666, 0o400),
                 (0o644, 0o4755, 0o600), (0o600, 0o400, 0o600)]
        ours = f"{os.geteuid()}:{os.getegid()}"
        for fmt in ("sealed", "raw"):
            source = self.sealed if fmt == "sealed" else self.raw
            for input_mode, planted_mode, want in cases:
                what = f"decrypt {fmt} of a {input_mode:o} input -f over a {planted_mode:o} file of nobody's"
                os.chmod(source, input_mode)
                out = write_file(os.path.join(self.out_dir, "target"), b"planted")
                os.chown(out, NOBODY, NOBODY)
                os.chmod(out, planted_mode)
                self.assert_exit(self.decrypt(fmt) + ["-f", "-o", out], umask=0o022)
                self.assertEqual(read_file(out), self.plain, what)
                self.assertEqual(attributes(out), f"{want:o} {ours}", what)
                self.assertEqual(os.listdir(self.out_dir), ["target"], f"{what}: leftovers")
                os.remove(out)

    def test_force_by_another_user_keeps_no_group_bits_for_a_foreign_group(self):
        paes, why = nobody_can_run(PAES, self.tmp)
        if paes is None:
            self.skipTest(f"needs root to run paes as nobody: {why}")
        os.chmod(self.tmp, 0o755)
        os.chmod(self.out_dir, 0o777)  # not sticky: nobody may replace root's file here
        os.chown(self.key, NOBODY, NOBODY)
        out = write_file(os.path.join(self.out_dir, "target"), b"old content")
        os.chown(out, OTHER_ID, OTHER_ID)
        os.chmod(out, 0o640)
        self.assert_exit(self.decrypt("sealed") + ["-f", "-o", out], paes=paes, as_nobody=True)
        # nobody may neither give the file to 1234 nor put it in group 1234; the group bits
        # were meant for group 1234, so they are not given to nobody's group.
        self.assertEqual(read_file(out), self.plain)
        self.assertEqual(attributes(out), f"600 {NOBODY}:{NOBODY}")
        self.assertEqual(os.listdir(self.out_dir), ["target"])


class SymlinkTest(OutputTestCase):
    """L: a symbolic link under the output's name."""

    def test_link_is_an_existing_output(self):
        victim = write_file(self.path("victim"), b"not yours", 0o644)
        for target in ("/dev/null", victim, self.path("dangling")):
            for args in (self.encrypt("sealed"), self.decrypt("raw")):
                link = os.path.join(self.out_dir, "link")
                os.symlink(target, link)
                self.fails(args + ["-o", link], 1, "exists")
                self.assertEqual(os.readlink(link), target, "the link was changed")
                self.assertEqual(read_file(victim), b"not yours")
                os.remove(link)
        self.assertFalse(os.path.exists(self.path("dangling")), "wrote through a dangling link")

    def test_force_replaces_the_link_itself(self):
        victim = write_file(self.path("victim"), b"not yours", 0o644)
        for target in ("/dev/null", victim, self.path("dangling")):
            for direction, args, want, want_mode in (("encrypt", self.encrypt("raw"), read_file(self.raw), 0o644),
                                                     ("decrypt", self.decrypt("sealed"), self.plain, 0o600)):
                what = f"{direction} -f -o a link to {target}"
                link = os.path.join(self.out_dir, "link")
                os.symlink(target, link)
                self.assert_exit(args + ["-f", "-o", link])
                self.assertTrue(stat.S_ISREG(os.lstat(link).st_mode), f"{what}: still a link")
                self.assertEqual(read_file(link), want, what)
                # A link's own mode (0777) is not a file's mode to keep.
                self.assertEqual(f"{mode_of(link):o}", f"{want_mode:o}", what)
                self.assertEqual(read_file(victim), b"not yours", what)
                self.assertEqual(os.listdir(self.out_dir), ["link"], f"{what}: leftovers")
                os.remove(link)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))
        self.assertFalse(os.path.exists(self.path("dangling")))


class DeviceTest(OutputTestCase):
    """D: devices under the output's name."""

    def test_dev_null_needs_no_force(self):
        for args in (self.encrypt("sealed"), self.decrypt("sealed"), self.encrypt("raw"), self.decrypt("raw")):
            for extra in ([], ["-f"]):
                self.assert_exit(args + extra + ["-o", "/dev/null"])
        self.assertTrue(stat.S_ISCHR(os.lstat("/dev/null").st_mode))

    def test_other_character_devices_need_force(self):
        devices = ["/dev/zero"]
        # A null device under another name: writing it with -f is harmless.
        node = os.path.join(self.out_dir, "null-node")
        try:
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            devices.append(node)
        except OSError as e:
            print(f"note: no device node made here ({e}); checking /dev/zero only", file=sys.stderr)
        for device in devices:
            for args in (self.encrypt("sealed"), self.decrypt("raw")):
                self.fails(args + ["-o", device], 1, "device")
                self.assert_exit(args + ["-f", "-o", device])
                self.assertTrue(stat.S_ISCHR(os.lstat(device).st_mode), f"{device} was replaced")

    def test_block_device_needs_force(self):
        node = os.path.join(self.out_dir, "block-node")
        try:
            # A loop device minor that need not exist: refused before it is ever opened.
            os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 250))
        except OSError as e:
            self.skipTest(f"cannot make a block device node here: {e}")
        self.fails(self.encrypt("sealed") + ["-o", node], 1, "device")
        self.assertTrue(stat.S_ISBLK(os.lstat(node).st_mode))


    def test_a_device_is_never_written_over_its_own_input(self):
        # Decrypting a block device in place with -f: CBC's chunks each read the block before them,
        # which the one before had already overwritten. Refused, the device untouched.
        image = self.path("disk.img")
        with open(image, "wb") as f:
            f.truncate(1 << 20)
        made = subprocess.run(["losetup", "-f", "--show", image], capture_output=True, text=True)
        if made.returncode != 0:
            self.skipTest(f"SKIPPED: no loop device to test with here (losetup: {made.stderr.strip()})")
        device = made.stdout.strip()
        self.addCleanup(subprocess.run, ["losetup", "-d", device])
        with open(device, "wb") as f:
            f.write(os.urandom(1 << 20))
        before = read_file(device)
        proc = run_paes(["decrypt", "--key-file", self.key, "--mode", "cbc", "--iv", IV.hex(), "--no-pad", "-f",
                    device, "-o", device])
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn(b"is also the input", proc.stderr)
        self.assertEqual(read_file(device), before, "the device was written")


class StreamOutputTest(OutputTestCase):
    """P: outputs that are pipes, and the standard descriptors."""
    ctest_labels = ("threads",)

    def expected_raw(self):
        proc = run_paes(["encrypt", "--key-file", self.key] + RAW + [self.inp])
        self.assertEqual(proc.returncode, 0, describe(proc))
        return proc.stdout

    def test_named_pipe_and_process_substitution_outputs(self):
        want = self.expected_raw()
        fifo = os.path.join(self.out_dir, "fifo")
        os.mkfifo(fifo)
        with subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE) as reader:
            proc = run_paes(["encrypt", "--key-file", self.key] + RAW + [self.inp, "-o", fifo])
            got = reader.stdout.read()
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, want, "through a named pipe")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        # >(...): the shell hands paes /dev/fd/N, a link to its pipe.
        read_end, write_end = os.pipe()
        cmd = [PAES, "encrypt", "--key-file", self.key] + RAW + [self.inp, "-o", f"/dev/fd/{write_end}"]
        with subprocess.Popen(cmd, pass_fds=(write_end,), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE) as p:
            os.close(write_end)
            with os.fdopen(read_end, "rb") as f:
                got = f.read()
            err = p.stderr.read()
        self.assertEqual((p.returncode, err), (0, b""))
        self.assertEqual(got, want, "through /dev/fd/N")
        # <(...) by mistake: paes holds the read end, and writing there would lose the output.
        read_end, write_end = os.pipe()
        cmd = [PAES, "encrypt", "--key-file", self.key] + RAW + [self.inp, "-o", f"/dev/fd/{read_end}"]
        proc = subprocess.run(cmd, pass_fds=(read_end,), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        os.close(read_end)
        os.close(write_end)
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn(b"is not open for writing", proc.stderr)
        # A named pipe that is also the input: refused, not a run that never ends.
        with subprocess.Popen(["sh", "-c", f"sleep 30 > {fifo}"]) as writer:
            proc = run_paes(["encrypt", "--key-file", self.key] + RAW + [fifo, "-o", fifo])
            writer.kill()
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn(b"is also the input", proc.stderr)
        # --json goes to stdout: /dev/fd/1 as the output is stdout too.
        proc = run_paes(["encrypt", "--key-file", self.key, "--json"] + RAW + [self.inp, "-o", "/dev/fd/1"])
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn(b"--json prints on stdout", proc.stderr)
        # A link to a pipe anywhere else is an existing output, never followed.
        link = os.path.join(self.out_dir, "link-to-fifo")
        os.symlink(fifo, link)
        self.fails(self.encrypt("raw") + ["-o", link], 1, "symbolic link")

    def test_standard_descriptors_named_as_outputs(self):
        """/dev/stdout and /proc/self/fd/1 are stdout, whatever it is: never a link to
        refuse, or (with -f) to replace with a regular file that took the output."""
        want = self.expected_raw()
        proc = run_paes(self.encrypt("raw") + ["-o", "/dev/stdout"])
        self.assertEqual((proc.returncode, proc.stderr), (0, b""), describe(proc))
        self.assertEqual(proc.stdout, want, "-o /dev/stdout into a pipe")
        for name, force in (("/dev/stdout", []), ("/proc/self/fd/1", ["-f"])):
            redirected = self.path("redirected.bin")
            with open(redirected, "wb") as stdout:
                proc = subprocess.run([PAES] + self.encrypt("raw") + ["-o", name] + force, stdout=stdout,
                                      stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=60)
            self.assertEqual((proc.returncode, proc.stderr), (0, b""), f"-o {name} {force}")
            self.assertEqual(read_file(redirected), want, f"-o {name} {force}, stdout a file")
        self.assertTrue(stat.S_ISLNK(os.lstat("/dev/stdout").st_mode))
        # A descriptor paes wasn't given is refused, not a file to make; nor is one paes opened
        # itself (its input file takes descriptor 3 here).
        for fd in (3, 9):
            self.fails(self.encrypt("raw") + ["-o", f"/dev/fd/{fd}", "-f"], 2,
                         f"descriptor {fd} was not open when paes started")
        # stderr as the output, with -v or --progress writing into it: refused.
        for flag in ("-v", "--progress"):
            self.fails(self.encrypt("raw") + ["-o", "/dev/stderr", flag], 2, "which carries the output")
        # One it was given but closed meanwhile is no file to make either.
        proc = subprocess.run([PAES] + self.encrypt("raw") + ["-o", "/dev/stdout"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              preexec_fn=lambda: os.close(1), timeout=60)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(b"descriptor 1 is not open for writing", proc.stderr)

    def test_stdout_that_is_the_input_is_refused(self):
        data = self.path("appended.bin")
        write_file(data, self.plain)
        with open(data, "rb") as stdin, open(data, "ab") as stdout:
            proc = subprocess.run([PAES, "encrypt", "--key-file", self.key], stdin=stdin, stdout=stdout,
                                  stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(b"stdout is also the input", proc.stderr)
        self.assertEqual(read_file(data), self.plain)

    def test_a_file_named_as_its_own_output_with_force(self):
        """Safe, and quiet: replaced by rename once the new content is complete (the path
        then names a larger file, which is no input that grew)."""
        for fmt, args in (("sealed", []), ("raw", RAW)):
            data = write_file(self.path(f"in-place-{fmt}.bin"), self.plain)
            proc = run_paes(["encrypt", "--key-file", self.key] + args + [data, "-o", data, "-f"])
            self.assertEqual((proc.returncode, proc.stderr), (0, b""), f"{fmt}: {describe(proc)}")
            proc = run_paes(["decrypt", "--key-file", self.key] + args + [data, "-o", data, "-f"])
            self.assertEqual((proc.returncode, proc.stderr), (0, b""), f"{fmt}: {describe(proc)}")
            self.assertEqual(read_file(data), self.plain, fmt)

    def test_a_closed_stdin_is_an_error_not_a_wait(self):
        for command in (["encrypt", "--key-file", self.key, "-o", os.path.join(self.out_dir, "x")],
                        ["decrypt", "--key-file", self.key, "-o", os.path.join(self.out_dir, "y")]):
            proc = subprocess.run([PAES] + command, preexec_fn=lambda: os.close(0), capture_output=True, timeout=60)
            self.assertEqual(proc.returncode, 1, describe(proc))
            self.assertIn(b"stdin: Bad file descriptor", proc.stderr)
        self.assertEqual(os.listdir(self.out_dir), [])

    def test_sigpipe_on_progress_leaves_no_temporary(self):
        out = os.path.join(self.out_dir, "out.paes")
        cmd = [PAES, "encrypt", "--key-file", self.key, "--progress", "-o", out]
        with subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            proc.stderr.close()  # whoever read the progress has gone
            # Progress draws once data has flowed for a second: feed until paes has gone (at most a minute).
            try:
                for _ in range(120):
                    proc.stdin.write(os.urandom(1 << 20))
                    proc.stdin.flush()
                    if proc.poll() is not None:
                        break
                    time.sleep(0.5)
                proc.stdin.close()
            except BrokenPipeError:
                pass
            proc.wait(timeout=60)
        self.assertEqual(proc.returncode, -signal.SIGPIPE)
        self.assertEqual(os.listdir(self.out_dir), [], "a temporary output was left")


class NameTest(OutputTestCase):
    """N: what names and values paes takes."""

    def test_empty_values_are_refused(self):
        for args in (["encrypt", "--key-file", "", self.inp, "-o", os.path.join(self.out_dir, "x")],
                     ["encrypt", "--key-file", self.key, self.inp, "-o", ""],
                     ["decrypt", "--key-file", self.key, ""],
                     ["encrypt", "--passphrase-env", "", self.inp]):
            self.fails(args, 2, "is empty")

    def test_errors_stay_one_line_whatever_the_names(self):
        # A newline or an escape sequence in a name is written as \xNN: one line, nothing for a terminal to act on.
        missing = os.path.join(self.out_dir, "no\nsuch\x1b[2J")
        self.fails(["encrypt", "--key-file", self.key, missing, "-o", os.path.join(self.out_dir, "x")], 1,
                     "no\\x0asuch\\x1b[2j")

    def test_keygen_takes_dash_for_stdout_and_refuses_other_streams(self):
        # '-' is standard output (a pipe here), never a file of that name.
        proc = subprocess.run([PAES, "keygen", "-o", "-"], capture_output=True, cwd=self.out_dir,
                              stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout.decode(), r"\A[0-9a-f]{64}\n\Z")
        self.assertFalse(os.path.exists(os.path.join(self.out_dir, "-")))
        # /dev/stdout with -f: the link in /dev would have become the key file.
        for name in ("/dev/stdout", "/proc/self/fd/1"):
            self.fails(["keygen", "-o", name, "-f"], 2, "is a stream")
        self.assertTrue(stat.S_ISLNK(os.lstat("/dev/stdout").st_mode))

    def test_names_up_to_the_file_systems_limit(self):
        name = os.path.join(self.out_dir, "n" * 255)
        self.assert_exit(self.encrypt("sealed") + ["-o", name])
        self.assertEqual(os.listdir(self.out_dir), ["n" * 255])

    def test_an_existing_output_is_refused_before_a_passphrase_is_asked(self):
        existing = write_file(os.path.join(self.out_dir, "exists"), b"keep me")
        # No key: paes would ask for a passphrase (and find no terminal); the output comes first.
        self.fails(["encrypt", self.inp, "-o", existing], 1, "already exists")
        self.fails(["encrypt", self.inp, "-o", os.path.join(self.out_dir, "no", "such", "dir")], 1,
                     "cannot create the output in")
        self.assertEqual(read_file(existing), b"keep me")


def main():
    global PAES
    PAES, _, rest = tool_paths(__doc__)
    os.umask(0o022)  # the modes these tests expect, unless a test gives paes another umask
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
