#!/usr/bin/env python3
"""Key hygiene through the real binary.

  1. Where secrets live: while paes waits on its input, its key is found in a
     mapping marked "dd" (MADV_DONTDUMP) and, where RLIMIT_MEMLOCK allows,
     "lo" (mlocked) in /proc/PID/smaps; with RLIMIT_MEMLOCK 0 it still runs,
     and the mapping is still "dd".
  2. No core dumps: paes killed by SIGSEGV with an unlimited core size leaves
     no core file where a control process of the same kind leaves one.
  3. Never in output: keys and passphrases never appear (hex, either case, or
     raw) on stdout or stderr of successful, verbose, --json and failing runs.
  4. No child processes carry them: paes starts none, and its own command
     line holds no key when the key comes from a file or the environment.
  5. Key and passphrase files readable or writable by group or others, or
     owned by another user than the caller or root, get a warning; private
     files, pipes and /dev/stdin don't.
  6. A key file of text that is not a hex key is refused, never taken as raw
     key bytes; the same bytes as hex are a key. UTF-8 text is named as such,
     a UTF-8 byte-order mark before text is named, an empty file is called
     empty; bytes that are not text (malformed UTF-8, controls) stay raw keys.
  7. paes keygen, and the MPI ranks that encode and decode a job, free no heap
     block that still holds the key (an LD_PRELOAD free() spy, built with the C
     compiler when there is one).
  8. An output that is a key, passphrase, identity or recipients file of the
     same run (by name, symbolic link, hard link, or standard output appending
     to it) is refused as a usage error, -f or not, and the file is unchanged.
  9. Keys, passphrases and identities on standard input ('-'): `paes keygen
     -o -` into a pipe or file feeds `--key-file -`; `keygen --x25519 -o -`
     puts only the identity on stdout (its recipient on stderr, as
     age-keygen) and it, or age-keygen's, opens files with `-i -` (decrypt,
     rekey); `--passphrase-file -`. Refused as usage errors: stdin that is
     also the data, two options reading stdin, a terminal on stdin for a
     secret, `keygen -o -` to a terminal (nothing written on it), an output
     that is the file stdin was redirected from.
Reading another process's smaps and memory needs root (paes makes itself
non-dumpable, so only CAP_SYS_PTRACE may look); those cases say SKIPPED
otherwise.
"""

import os
import pwd
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import launchers  # noqa: E402
from harness import (ScratchTestCase, describe, looks_like_text, read_file, run_test_script,  # noqa: E402
                     write_file)

PAES, OPENSSL = None, None
MPIEXEC = None
KEY = bytes.fromhex("7d1a9e35c2b84f06e1d3a5c7b9f0e2d4c6a8b0f2e4d6c8a0b2f4e6d8c0a2b4f6")
PASSPHRASE = b"kitten-stapler-horizon-7319"
IV = "000102030405060708090a0b0c0d0e0f"
NOBODY_UID, NOBODY_GID = pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid


def secret_forms():
    """Every way a leaked secret could be spelled in output."""
    return [KEY, KEY.hex().encode(), KEY.hex().upper().encode(), PASSPHRASE, KEY[:8].hex().encode()]


def mappings(pid):
    """[(start, end, vmflags set)] of /proc/PID/smaps."""
    maps, current = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) ", line)
            if m:
                current = [int(m.group(1), 16), int(m.group(2), 16), set()]
                maps.append(current)
            elif line.startswith("VmFlags:") and current is not None:
                current[2] = set(line.split()[1:])
    return maps


def read_memory(pid, start, end):
    try:
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.seek(start)
            return f.read(end - start)
    except OSError:
        return b""


class WaitingPaes:
    """paes sealing from a pipe it is still waiting on: the key is loaded, and
    the process sits still while the test looks at it."""

    def __init__(self, args, preexec=None, cwd=None, prefix=()):
        self.proc = subprocess.Popen([*prefix, PAES, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, preexec_fn=preexec, cwd=cwd)
        self.pid = self.proc.pid
        self._wait_until_blocked_on_input()

    def _wait_until_blocked_on_input(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"paes ended early: {self.proc.stderr.read()!r}")
            # One of its threads asleep waiting on the pipe (in read(2), or in
            # the poll(2) that makes its reads interruptible): the key schedule
            # and the segment key were made before the first read.
            if any(word in self._wchan(task) for task in self._tasks() for word in ("pipe", "poll")):
                return
            time.sleep(0.05)
        raise AssertionError("paes never blocked on its input")

    def _tasks(self):
        try:
            return os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            return []

    def _wchan(self, task):
        try:
            with open(f"/proc/{self.pid}/task/{task}/wchan") as f:
                return f.read()
        except OSError:
            return ""

    def close_input_and_wait(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.proc.stderr.close()
        return self.proc.returncode


@unittest.skipUnless(os.geteuid() == 0, "SKIPPED: reading another process's smaps and memory needs root")
class WhereSecretsLive(ScratchTestCase):
    def secure_mappings(self, pid):
        return [(s, e, flags) for s, e, flags in mappings(pid) if "dd" in flags]

    def test_the_key_sits_in_memory_excluded_from_dumps_and_locked(self):
        paes = WaitingPaes(["encrypt", "--key-file", self.key_file(KEY, name="key"), "-o", self.path("out.paes")])
        try:
            dd = self.secure_mappings(paes.pid)
            self.assertTrue(dd, "no mapping of paes is marked MADV_DONTDUMP")
            holding = [(s, e, f) for s, e, f in dd if KEY in read_memory(paes.pid, s, e)]
            self.assertTrue(holding, "the key is not inside the MADV_DONTDUMP mapping")
            print(f"\n    key found in a {(holding[0][1] - holding[0][0]) // 1024} KiB mapping, "
                  f"VmFlags {' '.join(sorted(holding[0][2]))}", file=sys.stderr)
            soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
            if soft == resource.RLIM_INFINITY or soft >= (2 << 20):
                self.assertIn("lo", holding[0][2], "RLIMIT_MEMLOCK allows it, but the key is not mlocked")
        finally:
            self.assertEqual(paes.close_input_and_wait(), 0)

    def test_without_mlock_it_still_runs_and_still_keeps_the_key_out_of_dumps(self):
        # As nobody: root's CAP_IPC_LOCK would ignore the limit.
        def no_memlock():
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
        os.chmod(self.tmp, 0o777)
        key = self.key_file(KEY, name="key")
        os.chown(key, NOBODY_UID, NOBODY_GID)
        paes = WaitingPaes(["encrypt", "--key-file", key, "-o", self.path("out.paes")], preexec=no_memlock,
                           prefix=("setpriv", f"--reuid={NOBODY_UID}", f"--regid={NOBODY_GID}", "--clear-groups"))
        try:
            holding = [(s, e, f) for s, e, f in self.secure_mappings(paes.pid)
                       if KEY in read_memory(paes.pid, s, e)]
            self.assertTrue(holding, "with RLIMIT_MEMLOCK 0 the key is not in a MADV_DONTDUMP mapping")
            self.assertNotIn("lo", holding[0][2])
        finally:
            self.assertEqual(paes.close_input_and_wait(), 0)


class NoCoreDumps(ScratchTestCase):
    def crash_and_look_for_a_core(self, argv, cwd):
        def unlimited_core():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        if argv[0] == PAES:
            proc = WaitingPaes(argv[1:], preexec=unlimited_core, cwd=cwd).proc
        else:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, preexec_fn=unlimited_core, cwd=cwd)
            time.sleep(0.3)
        proc.send_signal(signal.SIGSEGV)
        proc.wait(timeout=30)
        time.sleep(0.5)  # a core is written by the kernel as the process dies
        return [n for n in os.listdir(cwd) if n.startswith("core")]

    def test_a_crashing_paes_leaves_no_core(self):
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
        control_dir = self.path("control")
        os.mkdir(control_dir)
        if not self.crash_and_look_for_a_core(["cat"], control_dir):
            self.skipTest(f"SKIPPED: this machine writes no core files where the test can see them "
                          f"(core_pattern {pattern!r}), so their absence proves nothing")
        paes_dir = self.path("paes")
        os.mkdir(paes_dir)
        key = write_file(self.path("key"), KEY.hex().encode() + b"\n", 0o600)
        cores = self.crash_and_look_for_a_core([PAES, "encrypt", "--key-file", key, "-o", "out.paes"], paes_dir)
        self.assertEqual(cores, [], "paes killed by SIGSEGV left a core file")


class NeverInOutput(ScratchTestCase):
    def assert_no_secret(self, proc, what):
        for stream, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            for form in secret_forms():
                self.assertNotIn(form, text or b"", f"{what}: a secret appears on {stream}")

    def test_no_run_prints_a_secret(self):
        data = write_file(self.path("data"), os.urandom(100_000))
        key = write_file(self.path("key"), KEY.hex().encode() + b"\n", 0o600)
        raw_key = write_file(self.path("raw.key"), KEY, 0o600)
        short_key = write_file(self.path("short.key"), KEY[:20], 0o600)
        wrong_key = write_file(self.path("wrong.key"), bytes(32).hex().encode(), 0o600)
        passphrase = write_file(self.path("pass"), PASSPHRASE + b"\n", 0o600)
        env = dict(os.environ, PAES_TEST_KEY=KEY.hex(), PAES_TEST_PASS=PASSPHRASE.decode(),
                   PAES_TEST_BAD_KEY=KEY.hex()[:40])
        sealed, ctr = self.path("data.paes"), self.path("data.ctr")
        runs = [
            ["encrypt", "--key-file", key, "-v", "--json", data, "-o", sealed],
            ["decrypt", "--key-file", key, "-v", "--json", sealed, "-o", self.path("back1")],
            ["decrypt", "--key-file", wrong_key, sealed, "-o", self.path("back2")],
            ["decrypt", "--key-env", "PAES_TEST_KEY", data, "-o", self.path("back3")],
            ["encrypt", "--key-file", short_key, data, "-o", self.path("x1")],
            ["encrypt", "--key-env", "PAES_TEST_BAD_KEY", data, "-o", self.path("x2")],
            ["encrypt", "--mode", "ctr", "--key-file", raw_key, "--iv", IV, "-v", "--json", data, "-o", ctr],
            ["encrypt", "--mode", "ctr", "--key-file", raw_key, "--iv", "0011", data, "-o", self.path("x3")],
            ["decrypt", "--mode", "cbc", "--key-file", raw_key, "--iv", IV, data, "-o", self.path("x4")],
            ["encrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", passphrase, "-v", data,
             "-o", self.path("x5")],
            ["encrypt", "--passphrase-env", "PAES_TEST_PASS", "--scrypt-log-n", "10", "-v", data,
             "-o", self.path("x6")],
            ["decrypt", "--passphrase-file", key, self.path("x6"), "-o", self.path("x7")],
            ["encrypt", "--key-file", key, "--passphrase-env", "PAES_TEST_PASS", data, "-o", self.path("x8")],
            # The secret itself pasted where its variable's name belongs.
            ["encrypt", "--mode", "ctr", "--key-env", KEY.hex(), "--iv", IV, data, "-o", self.path("x10")],
            ["encrypt", "--passphrase-env", PASSPHRASE.decode(), data, "-o", self.path("x11")],
        ]
        for args in runs:
            proc = subprocess.run([PAES, *args], capture_output=True, env=env)
            self.assert_no_secret(proc, " ".join(args))
        # --key-hex is the one place a key is on the command line: paes warns, and still never echoes it.
        proc = subprocess.run([PAES, "encrypt", "--mode", "ctr", "--key-hex", KEY.hex()[:60], "--iv", IV, data,
                               "-o", self.path("x9")], capture_output=True)
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertNotIn(KEY.hex()[:60].encode(), proc.stderr)


# An LD_PRELOAD shim: every block the process frees that holds 32 or more lowercase hex
# digits in a row (a key as hex) is appended, as it was just before free(), to the file
# $PAES_FREE_SPY_LOG.
FREE_SPY_SOURCE = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void __libc_free(void*);

/* PAES_FREE_SPY_NEEDLE, when set, is a secret as hex: blocks that hold its raw
   bytes are logged. Otherwise blocks holding a run of 32 hex digits are. */
static int holds_needle(const unsigned char* bytes, size_t len) {
  const char* hex = getenv("PAES_FREE_SPY_NEEDLE");
  unsigned char needle[64];
  size_t n = 0;
  while (hex != NULL && hex[2 * n] != 0 && hex[2 * n + 1] != 0 && n < sizeof needle) {
    char pair[3] = {hex[2 * n], hex[2 * n + 1], 0};
    needle[n++] = (unsigned char)strtoul(pair, NULL, 16);
  }
  return n != 0 && memmem(bytes, len, needle, n) != NULL;
}

void free(void* block) {
  if (block != NULL) {
    const unsigned char* bytes = block;
    const size_t len = malloc_usable_size(block);
    size_t run = 0;
    for (size_t i = 0; i < len && run < 32; ++i) {
      const unsigned char c = bytes[i];
      run = ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) ? run + 1 : 0;
    }
    const char* log = getenv("PAES_FREE_SPY_LOG");
    const int found = getenv("PAES_FREE_SPY_NEEDLE") != NULL ? holds_needle(bytes, len) : run >= 32;
    if (found && log != NULL) {
      const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
      if (fd >= 0) {
        (void)!write(fd, bytes, len);
        (void)!write(fd, "\n", 1);
        close(fd);
      }
    }
  }
  __libc_free(block);
}
"""

# A control: frees a heap block holding a hex string, which the spy must see.
FREE_SPY_CONTROL_SOURCE = r"""
#include <stdlib.h>
int main(void) {
  volatile char* text = malloc(80);
  for (int i = 0; i < 64; ++i) text[i] = "0123456789abcdef"[(i * 7) % 16];
  text[64] = 0;
  free((void*)text);
  return 0;
}
"""


class NoUnwipedCopiesFreed(ScratchTestCase):
    """paes keygen frees no heap block that still holds the key it wrote, as hex."""
    ctest_labels = ("mpi",)

    def build(self, name, source, *flags):
        src = write_file(self.path(name + ".c"), source.encode())
        out = self.path(name)
        proc = subprocess.run([self.cc, "-O0", "-o", out, src, *flags], capture_output=True)
        self.assertEqual(proc.returncode, 0, f"building {name}: {describe(proc)}")
        return out

    def spy_env(self, log, needle=None):
        env = {"LD_PRELOAD": self.spy, "PAES_FREE_SPY_LOG": log}
        if needle is not None:
            env["PAES_FREE_SPY_NEEDLE"] = needle.hex()
        return env

    def spied(self, argv, log, needle=None):
        return subprocess.run(argv, capture_output=True, env=dict(os.environ, **self.spy_env(log, needle)),
                              stdin=subprocess.DEVNULL)

    def setUp(self):
        super().setUp()
        self.cc = shutil.which("cc") or shutil.which("gcc")
        if self.cc is None:
            self.skipTest("SKIPPED: no C compiler to build the free() spy")
        with open(PAES, "rb") as f:
            binary = f.read()
        if b"__asan_" in binary or b"__tsan_" in binary:
            self.skipTest("SKIPPED: a sanitizer runtime owns free() in this build")
        self.spy = self.build("free_spy.so", FREE_SPY_SOURCE, "-shared", "-fPIC")
        control_log = self.path("control.log")
        proc = self.spied([self.build("control", FREE_SPY_CONTROL_SOURCE)], control_log)
        self.assertEqual(proc.returncode, 0, describe(proc))
        if not os.path.exists(control_log):
            self.skipTest("SKIPPED: the free() spy sees nothing here, so its silence proves nothing")

    def test_keygen_frees_no_copy_of_the_key(self):
        for bits in (128, 256):
            log, key = self.path(f"free-{bits}.log"), self.path(f"key-{bits}")
            proc = self.spied([PAES, "keygen", "--key-bits", str(bits), "-o", key], log)
            self.assertEqual(proc.returncode, 0, describe(proc))
            hex_key = read_file(key).strip()
            self.assertEqual(len(hex_key), bits // 4)
            freed = read_file(log) if os.path.exists(log) else b""
            for part in (hex_key[:32], hex_key[-32:]):
                self.assertFalse(part in freed, f"AES-{bits}: a freed heap block still holds the key")

    def test_mpi_job_ticket_frees_no_copy_of_the_key(self):
        """Rank 0 encodes the job (key included) for the other ranks, and they decode it."""
        if MPIEXEC is None:
            self.skipTest("SKIPPED: no --mpiexec given (paes is built without the mpi engine)")
        # paes hands --engine mpi to paes-mpi beside it (the spy's LD_PRELOAD goes along).
        paes_mpi = os.path.join(os.path.dirname(os.path.abspath(PAES)), "paes-mpi")
        if not os.path.exists(paes_mpi) or b"MPI_Init_thread" not in read_file(paes_mpi):
            self.skipTest("SKIPPED: no paes-mpi beside paes (built without the mpi engine)")
        key = write_file(self.path("key"), KEY.hex().encode() + b"\n", 0o600)
        inp = write_file(self.path("in"), os.urandom(100000))
        log = self.path("mpi.log")
        # The spy goes to the ranks through the launcher (Open MPI forwards only what it is told).
        argv, env = launchers.Launcher(MPIEXEC).command(
            [launchers.Ranks(2, [PAES, "encrypt", "--engine", "mpi", "--mode", "ctr", "--key-file", key,
                                 "--iv", IV, inp, "-o", self.path("out")], self.spy_env(log, KEY))])
        proc = subprocess.run(argv, capture_output=True, env=env, stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 0, describe(proc))
        freed = read_file(log) if os.path.exists(log) else b""
        self.assertFalse(KEY in freed, "a freed heap block of an MPI rank still holds the key")


class NoChildProcesses(ScratchTestCase):
    def test_paes_starts_no_process_and_its_command_line_holds_no_key(self):
        key = write_file(self.path("key"), KEY.hex().encode() + b"\n", 0o600)
        env_key = dict(os.environ, PAES_TEST_KEY=KEY.hex())
        for args, env in ((["encrypt", "--key-file", key, "-o", self.path("a.paes")], None),
                          (["encrypt", "--key-env", "PAES_TEST_KEY", "-o", self.path("b.paes")], env_key)):
            proc = subprocess.Popen([PAES, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, env=env)
            try:
                time.sleep(0.5)
                children = []
                for task in os.listdir(f"/proc/{proc.pid}/task"):
                    with open(f"/proc/{proc.pid}/task/{task}/children") as f:
                        children += f.read().split()
                self.assertEqual(children, [], f"paes {args[1]} started processes {children}")
                with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
                    cmdline = f.read()
                for form in secret_forms():
                    self.assertNotIn(form, cmdline)
            finally:
                proc.stdin.close()
                proc.wait(timeout=60)


class TextKeyFiles(ScratchTestCase):
    """A key file of text that is not a hex key (a mistyped hex key, a passphrase) is
    refused, not taken as raw key bytes with no KDF; hex of the same bytes works."""

    CASES = {
        "passphrase, 16 bytes with its newline": b"hunter2-hunter2\n",
        "passphrase, 24 bytes": b"my backup passphrase 123",
        "passphrase, 32 bytes": b"correct horse battery staple 42!",
        "hex key with a digit dropped, and a newline": KEY[:16].hex()[:-1].encode() + b"\n",
        "hex key with a typo": KEY[:16].hex()[:-1].encode() + b"g",
        "hex key with a typo, CRLF": KEY.hex()[:-1].encode() + b"O\r\n",
        "words, tabs and every other whitespace": b"\tkey words\t" * 2 + b"more\t \v\f\r\n",
    }

    def test_text_is_refused_with_the_way_out(self):
        data = write_file(self.path("data"), os.urandom(1000))
        for what, content in self.CASES.items():
            self.assertTrue(len(content) in (16, 24, 32) or len(content.strip()) in (32, 48, 64),
                            f"{what}: neither a raw nor a hex key's length, so refused for that")
            key = write_file(self.path("key"), content, 0o600)
            for args in (["encrypt"], ["encrypt", "--mode", "ctr", "--iv", IV],
                         ["decrypt", "--mode", "cbc", "--iv", IV]):
                out = self.path("out")
                proc = subprocess.run([PAES, *args, "--key-file", key, data, "-o", out], capture_output=True)
                err = proc.stderr.decode(errors="replace")
                self.assertEqual(proc.returncode, 2, f"{what}, {args}: {describe(proc)}")
                self.assertFalse(os.path.exists(out), f"{what}, {args}: output written")
                self.assertNotIn(content.strip().decode(), err, f"{what}: the key file's text is in the message")
                digits = content.strip()
                if all(chr(c) in "0123456789abcdefABCDEF" for c in digits):
                    # Hex of the wrong length: counted in hex digits (a digit dropped, not a passphrase).
                    self.assertIn(f"key file {key} holds {len(digits)} hex digits; a key has 32, 48 or 64",
                                  err, what)
                    continue
                self.assertIn(f"key file {key} is text but not a hex key", err, what)
                self.assertIn("--passphrase-file", err, what)
                self.assertIn(f"xxd -p -c 64 {key}", err, what)
                if len(content.strip()) in (32, 48, 64):
                    self.assertIn(f"its {len(content.strip())} characters are not all hex digits", err, what)

    def test_the_same_bytes_as_hex_are_a_key(self):
        data = write_file(self.path("data"), os.urandom(1000))
        for content in (b"hunter2-hunter2\n", b"correct horse battery staple 42!"):
            key = write_file(self.path("key.hex"), content.hex().encode() + b"\n", 0o600)
            out = self.path("out")
            proc = subprocess.run([PAES, "encrypt", "--mode", "ctr", "--iv", IV, "--key-file", key, data,
                                   "-o", out, "-f"], capture_output=True)
            self.assertEqual(proc.returncode, 0, describe(proc))
            expected = subprocess.run([OPENSSL, "enc", f"-aes-{len(content) * 8}-ctr", "-K", content.hex(),
                                       "-iv", IV, "-in", data], capture_output=True, check=True).stdout
            self.assertEqual(read_file(out), expected)


class UnicodeAndEmptyKeyFiles(ScratchTestCase):
    """What is neither a hex key nor raw key bytes is named for what it is."""

    def run_ctr(self, content):
        """paes encrypting with CTR under a key file of `content`: (proc, output path)."""
        data = write_file(self.path("data"), b"attack at dawn" * 50)
        key = write_file(self.path("key"), content, 0o600)
        out = self.path("out")
        if os.path.exists(out):
            os.unlink(out)
        proc = subprocess.run([PAES, "encrypt", "--mode", "ctr", "--iv", IV, "--key-file", key, data, "-o", out],
                              capture_output=True)
        return proc, out

    def assert_key_file_refused(self, content, *phrases):
        proc, out = self.run_ctr(content)
        err = proc.stderr.decode(errors="replace")
        # A key file that holds no key is the wrong file for --key-file: a usage error, as a -R file
        # that holds no recipient is (issue 44, item 11).
        self.assertEqual(proc.returncode, 2, f"{content!r}: {describe(proc)}")
        self.assertFalse(os.path.exists(out), f"{content!r}: output written")
        for phrase in phrases:
            self.assertIn(phrase.replace("KEY", self.path("key")), err, repr(content))
        text = content.removeprefix(b"\xef\xbb\xbf").strip()
        if text:
            self.assertNotIn(text.decode(errors="replace"), err, "the key file's text is in the message")

    def test_utf8_text_is_named_not_taken_as_a_raw_key(self):
        cases = [
            "Passwört123456\n",                  # 16 bytes with its newline
            "Grüße aus Köln 2026!\n",             # 24
            "пароль_123456789\r\n",              # 24, CRLF
            "mot de passe très sûr 🔑 ok\n",      # 32, a 4-byte character
            "\u00a0nbsp, then a passphras",       # 24, the first character after the C1 controls
        ]
        for text in cases:
            content = text.encode()
            self.assertIn(len(content), (16, 24, 32), f"{text!r}: a raw key's length")
            self.assertTrue(looks_like_text(content))
            self.assert_key_file_refused(content, "key file KEY is UTF-8 text but not a hex key", "--passphrase-file",
                                "xxd -p -c 64 KEY")

    def test_a_byte_order_mark_before_text_is_named(self):
        bom = b"\xef\xbb\xbf"
        for content in (bom + KEY.hex().encode() + b"\n", bom + KEY[:16].hex().encode(),
                        bom + b"hunter2hunter",  # 16 bytes in all: a raw key's length
                        bom + "Passwört1234\n".encode()):
            self.assert_key_file_refused(content, "key file KEY starts with a UTF-8 byte-order mark", "save it without one")

    def test_an_empty_file_is_called_empty(self):
        self.assert_key_file_refused(b"", "key file KEY is empty (a key file holds 32, 48 or 64 hex digits")
        self.assert_key_file_refused(b" \n\t\r\n", "key file KEY holds only whitespace")

    def assert_a_raw_key(self, content):
        proc, out = self.run_ctr(content)
        self.assertEqual(proc.returncode, 0, f"{content!r}: {describe(proc)}")
        expected = subprocess.run([OPENSSL, "enc", f"-aes-{len(content) * 8}-ctr", "-K", content.hex(), "-iv", IV,
                                   "-in", self.path("data")], capture_output=True, check=True).stdout
        self.assertEqual(read_file(out), expected, repr(content))

    def test_bytes_that_are_not_text_stay_a_raw_key(self):
        cases = [
            b"Passw\xc3rt1234567\n",              # a lead byte without its continuation
            b"overlong \xc0\xaf slsh",             # an overlong '/'
            b"surrogate \xed\xa0\x80 bt",         # U+D800
            b"past max \xf4\x90\x80\x80 ok",     # U+110000
            b"C1 ctrl \xc2\x85 here!",             # U+0085, a control
            b"a NUL \x00 in w\xc3\xb6rd",          # UTF-8, but a control character
            b"\xef\xbb\xbf" + bytes(range(1, 14)),  # a byte-order mark before bytes that are no text
            b"\xef\xbb\xbf" + b"\xff" * 29,
        ]
        for content in cases:
            self.assertIn(len(content), (16, 24, 32), repr(content))
            self.assertFalse(looks_like_text(content), repr(content))
            self.assert_a_raw_key(content)

    def test_paes_and_the_harness_agree_on_what_is_text(self):
        """16-byte strings from pieces of valid and malformed UTF-8 (cut where the 16th
        byte falls): a raw key exactly when Python's strict UTF-8 decoder finds no text."""
        text_pieces = [b"a", b"7", b" ", b"\n", b"\xc2\xa0", "é".encode(), "€".encode(), "🔑".encode(),
                       b"\xed\x9f\xbf", b"\xf4\x8f\xbf\xbf", b"\xef\xbb\xbf"]
        not_text_pieces = [b"\x00", b"\x7f", b"\x80", b"\xff", b"\xc2\x85", b"\xc0\xaf", b"\xed\xa0\x80",
                           b"\xf4\x90\x80\x80", b"\xe0\x9f\x80", b"\xf0\x8f\xbf\xbf"]
        rng = random.Random(29)
        outcomes = {True: 0, False: 0}
        for _ in range(150):
            content = b""
            while len(content) < 16:
                content += rng.choice(not_text_pieces if rng.random() < 0.08 else text_pieces)
            content = content[:16]
            is_text = looks_like_text(content)
            outcomes[is_text] += 1
            if is_text:
                proc, out = self.run_ctr(content)
                self.assertEqual(proc.returncode, 2, f"{content!r}: {describe(proc)}")
                self.assertRegex(proc.stderr.decode(errors="replace"),
                                 r"is (UTF-8 )?text but not a hex key|starts with a UTF-8 byte-order mark", repr(content))
            else:
                self.assert_a_raw_key(content)
        self.assertGreater(min(outcomes.values()), 30, outcomes)


class OutputOverSecrets(ScratchTestCase):
    """-o naming a file the same run reads a secret from is a usage error, before
    anything is read or written."""

    def setUp(self):
        super().setUp()
        self.data = write_file(self.path("data"), b"the data " * 100)
        self.key = write_file(self.path("k.key"), KEY.hex().encode() + b"\n", 0o600)
        self.passphrase = write_file(self.path("pass"), PASSPHRASE + b"\n", 0o600)
        self.identity = self.path("id.key")
        proc = subprocess.run([PAES, "keygen", "--x25519", "-o", self.identity], capture_output=True)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.recipients = write_file(self.path("recipients.txt"), proc.stdout)
        self.sealed = self.path("data.paes")
        proc = subprocess.run([PAES, "encrypt", "-R", self.recipients, self.data, "-o", self.sealed],
                              capture_output=True)
        self.assertEqual(proc.returncode, 0, describe(proc))

    def assert_output_over_secret_refused(self, args, secret, option, stdout=None):
        before = read_file(secret)
        for force in ([], ["-f"]):
            proc = subprocess.run([PAES, *args, *force], capture_output=True, stdout=stdout) if stdout is None \
                else subprocess.run([PAES, *args, *force], stderr=subprocess.PIPE, stdout=stdout)
            err = proc.stderr.decode(errors="replace")
            self.assertEqual(proc.returncode, 2, f"{args} {force}: {describe(proc)}")
            self.assertIn(f"is the file given to {option} ", err)
            self.assertIn("write the output elsewhere", err)
            self.assertEqual(read_file(secret), before, f"{args} {force}: {secret} changed")
            self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith(".")], [], "a temporary was left")

    def test_over_the_key_file(self):
        self.assert_output_over_secret_refused(["encrypt", "--key-file", self.key, self.data, "-o", self.key], self.key, "--key-file")
        self.assert_output_over_secret_refused(["encrypt", "--mode", "ctr", "--iv", IV, "--key-file", self.key, self.data,
                             "-o", self.key], self.key, "--key-file")
        self.assert_output_over_secret_refused(["decrypt", "--key-file", self.key, self.sealed, "-o", self.key], self.key, "--key-file")

    def test_over_the_passphrase_file(self):
        self.assert_output_over_secret_refused(["encrypt", "--passphrase-file", self.passphrase, "--scrypt-log-n", "10", self.data,
                             "-o", self.passphrase], self.passphrase, "--passphrase-file")
        self.assert_output_over_secret_refused(["encrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", self.passphrase,
                             self.data, "-o", self.passphrase], self.passphrase, "--passphrase-file")

    def test_over_the_identity_file(self):
        self.assert_output_over_secret_refused(["decrypt", "-i", self.identity, self.sealed, "-o", self.identity], self.identity, "-i")
        other = self.path("other.key")
        subprocess.run([PAES, "keygen", "--x25519", "-o", other], capture_output=True, check=True)
        self.assert_output_over_secret_refused(["decrypt", "-i", other, "-i", self.identity, self.sealed, "-o", self.identity],
                            self.identity, "-i")
        self.assert_output_over_secret_refused(["rekey", "-i", self.identity, "-R", self.recipients, self.sealed, "-o", self.identity],
                            self.identity, "-i")

    def test_over_the_recipients_file(self):
        self.assert_output_over_secret_refused(["encrypt", "-R", self.recipients, self.data, "-o", self.recipients],
                            self.recipients, "-R")
        self.assert_output_over_secret_refused(["rekey", "-i", self.identity, "-R", self.recipients, self.sealed, "-o", self.recipients],
                            self.recipients, "-R")

    def test_through_symbolic_and_hard_links(self):
        link = self.path("link.key")
        os.symlink(self.key, link)
        self.assert_output_over_secret_refused(["encrypt", "--key-file", self.key, self.data, "-o", link], self.key, "--key-file")
        self.assert_output_over_secret_refused(["encrypt", "--key-file", link, self.data, "-o", self.key], self.key, "--key-file")
        hard = self.path("hard.key")
        os.link(self.identity, hard)
        self.assert_output_over_secret_refused(["decrypt", "-i", self.identity, self.sealed, "-o", hard], self.identity, "-i")
        os.symlink("recipients.txt", self.path("r-link"))
        self.assert_output_over_secret_refused(["encrypt", "-R", self.path("r-link"), self.data, "-o", self.recipients],
                            self.recipients, "-R")

    def test_standard_output_appending_to_the_key_file(self):
        with open(self.key, "ab") as out:
            self.assert_output_over_secret_refused(["encrypt", "--key-file", self.key, self.data], self.key, "--key-file", stdout=out)

    def test_other_outputs_are_written(self):
        """The check is no blanket refusal: a new file, or another existing one with -f."""
        out = self.path("new.paes")
        proc = subprocess.run([PAES, "encrypt", "--key-file", self.key, self.data, "-o", out], capture_output=True)
        self.assertEqual(proc.returncode, 0, describe(proc))
        proc = subprocess.run([PAES, "decrypt", "-i", self.identity, self.sealed, "-o", self.data, "-f"],
                              capture_output=True)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.data), b"the data " * 100)


class KeyFilePermissions(ScratchTestCase):
    def run_with(self, source, mode, owner=None, as_user=None):
        """paes encrypting with a `source` file of `mode` (owned by `owner`, run as `as_user`;
        both uids, default: the caller); returns its stderr."""
        data = write_file(self.path("data"), b"x" * 1000, 0o644)
        if source == "key":
            secret = write_file(self.path(f"key-{mode:o}"), KEY.hex().encode() + b"\n", mode)
            args = ["encrypt", "--key-file", secret]
        else:
            secret = write_file(self.path(f"pass-{mode:o}"), PASSPHRASE + b"\n", mode)
            args = ["encrypt", "--passphrase-file", secret, "--scrypt-log-n", "10"]
        if owner is not None:
            os.chown(secret, owner, -1)
        prefix = []
        if as_user is not None:
            os.chmod(self.tmp, 0o777)
            prefix = ["setpriv", f"--reuid={as_user}", f"--regid={NOBODY_GID}", "--clear-groups"]
        out = self.path(f"out-{source}-{mode:o}")
        proc = subprocess.run([*prefix, PAES, *args, data, "-o", out], capture_output=True)
        self.assertEqual(proc.returncode, 0, describe(proc))
        return proc.stderr.decode()

    def test_readable_by_others_warns(self):
        for source in ("key", "passphrase"):
            err = self.run_with(source, 0o644)
            self.assertRegex(err, rf"warning: {source} file \S+ is readable by other users \(mode 0644\); "
                                  r"restrict it with chmod 600")
            self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_readable_by_group_warns(self):
        err = self.run_with("key", 0o640)
        self.assertIn("is readable by its group (mode 0640)", err)

    def test_writable_by_others_warns(self):
        self.assertRegex(self.run_with("key", 0o602), r"warning: key file \S+ is writable by other users "
                                                      r"\(mode 0602\); restrict it with chmod 600\n$")
        self.assertIn("passphrase file", self.run_with("passphrase", 0o602))
        self.assertIn("is writable by its group (mode 0620)", self.run_with("key", 0o620))
        self.assertIn("is readable and writable by other users (mode 0666)", self.run_with("key", 0o666))
        self.assertIn("is readable by its group and writable by other users (mode 0642)",
                      self.run_with("passphrase", 0o642))

    @unittest.skipUnless(os.geteuid() == 0, "SKIPPED: giving a file to another user needs root")
    def test_owned_by_another_user_warns(self):
        os.chmod(self.tmp, 0o755)
        for source in ("key", "passphrase"):
            err = self.run_with(source, 0o600, owner=NOBODY_UID)
            self.assertRegex(err, rf"^paes: warning: {source} file \S+ belongs to user nobody \(uid {NOBODY_UID}\), "
                                  r"who can change it; use a file that you or root own\n$")
            for form in secret_forms():
                self.assertNotIn(form.decode(errors="replace"), err)
        # Root's files are no one else's: root can change any file anyway.
        err = self.run_with("key", 0o604, as_user=NOBODY_UID)
        self.assertIn("readable by other users", err)
        self.assertNotIn("belongs to", err)

    def test_private_files_and_pipes_are_quiet(self):
        self.assertEqual(self.run_with("key", 0o600), "")
        self.assertEqual(self.run_with("passphrase", 0o400), "")
        data = write_file(self.path("data"), b"x" * 1000)
        r, w = os.pipe()
        os.write(w, KEY.hex().encode() + b"\n")
        os.close(w)
        proc = subprocess.run([PAES, "encrypt", "--key-file", f"/dev/fd/{r}", data, "-o", self.path("p.paes")],
                              capture_output=True, pass_fds=(r,))
        os.close(r)
        self.assertEqual((proc.returncode, proc.stderr), (0, b""), describe(proc))



class SecretsOnStandardInput(ScratchTestCase):
    AGE_IDENTITY_RE = r"\A# created: \S+\n# public key: (age1\S+)\nAGE-SECRET-KEY-1[0-9A-Z]+\n\Z"

    def setUp(self):
        super().setUp()
        self.data = write_file(self.path("data"), b"the data " * 100)

    def new_identity_on_stdout(self):
        """A new X25519 identity from 'paes keygen --x25519 -o -': (its file text, its recipient)."""
        proc = self.assert_exit(["keygen", "--x25519", "-o", "-"])
        text = proc.stdout.decode()
        match = re.match(self.AGE_IDENTITY_RE, text)
        self.assertIsNotNone(match, f"stdout holds only the identity file: {text!r}")
        self.assertEqual(proc.stderr.decode(), f"Public key: {match.group(1)}\n")
        return proc.stdout, match.group(1)

    def test_keygen_to_a_pipe_is_the_key_that_encrypt_reads(self):
        key_copy = self.path("key-copy")
        sealed = self.path("data.paes")
        keygen = subprocess.Popen([PAES, "keygen", "-o", "-"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        tee = subprocess.Popen(["tee", key_copy], stdin=keygen.stdout, stdout=subprocess.PIPE)
        keygen.stdout.close()
        self.assert_exit(["encrypt", "--key-file", "-", self.data, "-o", sealed], stdin=tee.stdout)
        tee.stdout.close()
        self.assertEqual((keygen.wait(timeout=60), tee.wait(timeout=60)), (0, 0))
        self.assertRegex(read_file(key_copy).decode(), r"\A[0-9a-f]{64}\n\Z")
        self.assertFalse(os.path.exists(self.path("-")))
        self.assertEqual(self.assert_exit(["decrypt", "--key-file", key_copy, sealed]).stdout, read_file(self.data))
        # --key-bits and a file: redirected, the same text (mode as the shell made it, with a warning).
        with open(self.path("small.key"), "wb") as out:
            os.fchmod(out.fileno(), 0o600)
            self.assert_exit(["keygen", "--key-bits", "128", "-o", "-"], stdout=out)
        self.assertRegex(read_file(self.path("small.key")).decode(), r"\A[0-9a-f]{32}\n\Z")
        with open(self.path("small.key"), "rb") as key:
            self.assert_exit(["encrypt", "--key-file", "-", self.data, "-o", self.path("small.paes")], stdin=key)
        self.assertEqual(self.assert_exit(["decrypt", "--key-file", self.path("small.key"), self.path("small.paes")]).stdout,
                         read_file(self.data))
        # A file named "-" is still a key file, as ./-.
        write_file(self.path("-"), KEY.hex().encode() + b"\n", 0o600)
        self.assert_exit(["encrypt", "--key-file", "./-", self.data, "-o", self.path("dash.paes")], cwd=self.tmp)

    def test_keygen_to_a_file_warns_when_others_can_read_it(self):
        with open(self.path("open.key"), "wb") as out:
            os.fchmod(out.fileno(), 0o644)
            proc = subprocess.run([PAES, "keygen", "-o", "-"], stdout=out, stderr=subprocess.PIPE)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stderr, b"paes: warning: standard output (keygen -o -) is readable by other users "
                                      b"(mode 0644); restrict it with chmod 600\n")

    def test_identities_on_standard_input_open_files_and_rekey_them(self):
        alice, alice_recipient = self.new_identity_on_stdout()
        bob, bob_recipient = self.new_identity_on_stdout()
        sealed = self.path("data.paes")
        self.assert_exit(["encrypt", "-r", alice_recipient, self.data, "-o", sealed])
        self.assertEqual(self.assert_exit(["decrypt", "-i", "-", sealed], stdin=alice).stdout, read_file(self.data))
        self.assert_exit(["decrypt", "-i", "-", sealed], stdin=bob, code=1)
        rekeyed = self.path("rekeyed.paes")
        self.assert_exit(["rekey", "-i", "-", "-r", bob_recipient, sealed, "-o", rekeyed], stdin=alice)
        self.assertEqual(self.assert_exit(["decrypt", "-i", "-", rekeyed], stdin=bob).stdout, read_file(self.data))
        # keygen -y takes it on stdin too.
        self.assertEqual(self.assert_exit(["keygen", "-y", "-"], stdin=alice).stdout.decode(), alice_recipient + "\n")

    @unittest.skipUnless(shutil.which("age-keygen"), "SKIPPED: age-keygen is not installed")
    def test_age_keygens_identity_on_standard_input(self):
        age_keygen = subprocess.run(["age-keygen"], capture_output=True, check=True, stdin=subprocess.DEVNULL)
        recipient = re.search(rb"Public key: (age1\S+)", age_keygen.stderr).group(1).decode()
        sealed = self.path("data.paes")
        self.assert_exit(["encrypt", "-r", recipient, self.data, "-o", sealed])
        self.assertEqual(self.assert_exit(["decrypt", "-i", "-", sealed], stdin=age_keygen.stdout).stdout,
                         read_file(self.data))

    def test_passphrase_on_standard_input(self):
        write_file(self.path("pass"), PASSPHRASE + b"\n", 0o600)
        sealed = self.path("data.paes")
        self.assert_exit(["encrypt", "--passphrase-file", "-", "--scrypt-log-n", "10", self.data, "-o", sealed],
                  stdin=PASSPHRASE + b"\n")
        self.assertEqual(self.assert_exit(["decrypt", "--passphrase-file", self.path("pass"), sealed]).stdout,
                         read_file(self.data))
        salted = self.path("data.enc")
        self.assert_exit(["encrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", "-", self.data, "-o", salted],
                  stdin=PASSPHRASE + b"\n")
        self.assertEqual(self.assert_exit(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", "-", salted],
                                   stdin=PASSPHRASE).stdout, read_file(self.data))
        proc = self.assert_exit(["decrypt", "--passphrase-file", "-", sealed], stdin=b"\n", code=2,
                         words="empty passphrase in standard input (--passphrase-file -)")
        self.assertEqual(proc.stdout, b"")

    def test_standard_input_that_is_also_the_data_or_read_twice_is_refused(self):
        identity, recipient = self.new_identity_on_stdout()
        sealed = self.path("data.paes")
        self.assert_exit(["encrypt", "-r", recipient, self.data, "-o", sealed])
        key = KEY.hex().encode() + b"\n"
        for args, words in (
                (["encrypt", "--key-file", "-"], "--key-file - reads standard input, which is also the input to "
                                                 "encrypt: name the input file"),
                (["encrypt", "--key-file", "-", "-"], "which is also the input to encrypt"),
                (["encrypt", "--passphrase-file", "-", "/dev/stdin"], "--passphrase-file - reads standard input"),
                (["decrypt", "-i", "-"], "-i - reads standard input, which is also the input to decrypt"),
                (["rekey", "-i", "-", "-r", recipient], "-i - reads standard input, which is also the input to re-key"),
                (["encrypt", "--key-file", "-", "--aad-file", "-", self.data], "--key-file - and --aad-file - both "
                                                                              "read standard input, which is read once"),
                (["decrypt", "-i", "-", "-i", "/dev/stdin", sealed], "-i - and -i /dev/stdin both read"),
                (["decrypt", "-i", "-", "--aad-file", "-", sealed], "-i - and --aad-file - both read"),
                (["rekey", "-i", "-", "-R", "-", sealed], "-i - and -R - both read")):
            proc = self.assert_exit(args + ["-o", self.path("out")], stdin=key, code=2, words=words)
            self.assertNotIn(KEY.hex(), proc.stderr.decode())
            self.assertFalse(os.path.exists(self.path("out")))

    def test_an_output_over_the_file_on_standard_input_is_refused(self):
        key = write_file(self.path("k.key"), KEY.hex().encode() + b"\n", 0o600)
        with open(key, "rb") as stdin:
            self.assert_exit(["encrypt", "--key-file", "-", self.data, "-o", key, "-f"], stdin=stdin, code=2,
                      words="-o " + key + " is the file given to --key-file - (on standard input)")
        self.assertEqual(read_file(key), KEY.hex().encode() + b"\n")

    def test_a_terminal_on_standard_input_is_no_secret(self):
        identity, recipient = self.new_identity_on_stdout()
        sealed = self.path("data.paes")
        self.assert_exit(["encrypt", "-r", recipient, self.data, "-o", sealed])
        with self.terminal() as (master, slave):
            for args, words in (
                    (["encrypt", "--key-file", "-", self.data], "standard input (--key-file -) is a terminal: a key "
                                                                "is not typed"),
                    (["encrypt", "--key-file", "/dev/stdin", self.data], "key file /dev/stdin is a terminal"),
                    (["encrypt", "--passphrase-file", "-", self.data], "leave out --passphrase-file, and paes asks"),
                    (["decrypt", "-i", "-", sealed], "standard input (-i -) is a terminal"),
                    (["rekey", "-i", "-", "-r", recipient, sealed], "standard input (-i -) is a terminal"),
                    (["keygen", "-y", "-"], "standard input (-y -) is a terminal")):
                self.assert_exit(args + (["-o", self.path("out")] if args[0] != "keygen" else []), stdin=slave, code=2,
                          words=words)
                self.assertFalse(os.path.exists(self.path("out")))

    def test_keygen_to_a_terminal_is_refused_and_writes_nothing_there(self):
        with self.terminal() as (master, slave):
            for args in (["keygen", "-o", "-"], ["keygen", "--x25519", "-o", "-"]):
                proc = self.assert_exit(args, stdout=slave, code=2, words="standard output, which is a terminal")
                self.assertEqual(proc.stderr.count(b"\n"), 1, describe(proc))
            os.set_blocking(master, False)
            try:
                shown = os.read(master, 4096)
            except BlockingIOError:
                shown = b""
            self.assertEqual(shown, b"", "keygen wrote on the terminal")
        # Other streams stay refused as key outputs: a named pipe (nothing opens it).
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        self.assert_exit(["keygen", "-o", fifo], code=2, words="is a stream, not one")


if __name__ == "__main__":  # --mpiexec: the launcher of the MPI paes-mpi was built with
    sys.exit(run_test_script(__doc__, globals(), optional_paths=["--mpiexec"]))
