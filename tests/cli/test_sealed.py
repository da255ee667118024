#!/usr/bin/env python3
"""End-to-end tests of paes' sealed (authenticated) format, pipes, passphrases and keygen.

Run as:  python3 tests/cli/test_sealed.py --paes build/release/paes --openssl /usr/bin/openssl

Covers:
  1. Round trips of the sealed format: sizes 0, 1 and around every segment boundary for
     --segment-size 1024 and 4096 with AES-128 and AES-256 keys from `paes keygen`, a few
     MiB with the default segment size; the ciphertext length and preamble fields; files
     sealed by the serial engine open with the threads engine (threads 1/2/3) and the
     other way round; passphrases (--passphrase-file, --passphrase-env) with --key-bits
     128 and 256; --key-env.
  2. Real pipes (Popen chains, no shell): sealed and every raw mode against `openssl enc`,
     file -> stdout and stdin -> file; a tampered stream decrypted to a pipe exits 1 and
     what came out is a verified prefix of the plaintext.
  3. Tamper detection: one bit flipped at every byte of a small multi-segment file;
     sampled flips of a 2 MiB file; truncation at every segment boundary and +-1, inside
     the preamble and header; appended bytes; swapped, duplicated and dropped segments;
     the messages (bad magic, unsupported version, truncated, authentication failed);
     other tools' files named (openssl's Salted__, OpenPGP, a bare Tink stream) with the
     options that read them, a Tink stream's wrong segment size, and openssl's legacy key
     derivation under --pbkdf2.
  4. Bad input: wrong key, wrong passphrase, empty passphrase, 24-byte key, bad segment
     size, --aad mismatch, --aad-file (bytes, stdin, bounds), passphrase/key given for the other kind of file, --format tink
     with a passphrase, raw-only options on sealed, --json with stdout output, ciphertext
     from a terminal, encrypted output to a terminal.
  5. openssl enc -pbkdf2 interop, both ways, every raw mode and key size, --iter; wrong
     passphrase ("bad decrypt") and input without "Salted__"; passphrase files (CRLF,
     over 1023 bytes, a NUL) read as openssl -pass file: reads them.
  6. Memory: 2 GiB sealed from a pipe and opened from a pipe, each paes under 128 MiB RSS.
  7. --progress (a line with "%" and "/s"), silence without it, -v's one summary line.
  8. keygen: mode 0600 whatever the umask, hex digits and a newline, no overwrite without -f.
  9. Recipients (format version 3, age's keys): keygen --x25519 and -y, encrypt -r/-R (files with
     comments, -R -), decrypt -i (several identities, --range), wrong identity, mixing recipients
     with keys, an identity given as a recipient and the reverse, 4096 recipients and one more;
     refused recipients (bit 255 set, non-canonical, low-order points, ssh, plugins, the unreleased
     paes-x25519 strings, -R /dev/zero and files over 1 MiB) and identity files (age-encrypted,
     ssh, plugin); interop with age-keygen's identity files and with age (multi-identity files too);
     age files and version-2 files named. No secret in any output.
  9b. rekey: --add keeps the file's stanzas, a new list replaces them; the preamble and body are
     copied byte for byte, to a file, in place (-f) and to a pipe; a key-sealed file, a wrong
     identity, a damaged header and an output over the identity file are refused; --help says
     removal is not revocation.

Python 3.9+ standard library only. Exits non-zero when any test fails; every skip says why.
"""

import base64
import json
import os
import random
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (ScratchTestCase, describe, read_file, run_unittest, tool_paths,  # noqa: E402
                     write_file)

PAES = "paes"
OPENSSL = "openssl"

MODES = ["ecb", "cbc", "cfb", "cfb8", "cfb1", "ofb", "ctr"]
PREAMBLE = 32
TAG = 16
DEFAULT_SEGMENT = 1 << 20
RSS_LIMIT_KIB = 128 * 1024
POOL = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))
# What a damaged sealed file may be reported as (anywhere past the magic and version).
DAMAGE_WORDS = ("authentication failed", "truncated", "corrupt")


# --------------------------------------------------------------------------- helpers

def run(args, input_bytes=None, timeout=120, env=None, **kw):
    """Runs paes with `args`; returns the CompletedProcess (bytes)."""
    cmd = [PAES] + [str(a) for a in args]
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    if "stdin" not in kw and input_bytes is None:
        kw["stdin"] = subprocess.DEVNULL
    return subprocess.run(cmd, input=input_bytes, capture_output=True, timeout=timeout,
                          env=full_env, **kw)





def error_lines(stderr):
    return [l for l in stderr.decode(errors="replace").splitlines() if l.strip()]


def header_len(key_len):
    """Tink's header: its length byte, the salt (key length) and a 7-byte nonce prefix."""
    return 1 + key_len + 7


def first_plain(seg, key_len):
    """Plaintext bytes in segment 0."""
    return seg - header_len(key_len) - TAG


def sealed_len(n, seg, key_len):
    """The size of a sealed paes file holding n plaintext bytes."""
    p0, p = first_plain(seg, key_len), seg - TAG
    segments = 1 if n <= p0 else 1 + -(-(n - p0) // p)
    return PREAMBLE + header_len(key_len) + n + TAG * segments


def segment_spans(total, seg, key_len):
    """[(start, end)] of each segment in a sealed file of `total` bytes."""
    spans, start, end = [], PREAMBLE + header_len(key_len), PREAMBLE + seg
    while True:
        end = min(end, total)
        spans.append((start, end))
        if end >= total:
            return spans
        start, end = end, end + seg


def boundary_sizes(seg, key_len):
    """Plaintext sizes on and around the first few segment boundaries."""
    p0, p = first_plain(seg, key_len), seg - TAG
    sizes = {0, 1, 2, 15, 16, 17}
    for edge in (p0, p0 + p, p0 + 2 * p):
        sizes.update({edge - 1, edge, edge + 1})
    return sorted(sizes)


class Pipeline:
    """A chain of processes joined by real pipes, as `a | b | c` in a shell would be.

    `data` (bytes) is written to the first one's stdin from a thread, or `stdin` (a file
    object or fd) is its stdin; the last one's stdout is collected unless `stdout` is
    given. Every stderr is collected. `slow_read` (seconds per MiB) throttles the reader."""

    def __init__(self, cmds, data=None, stdin=None, stdout=None, env=None, slow_read=0.0):
        self.cmds = [[str(a) for a in c] for c in cmds]
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update(env)
        self.procs, self.errs, threads = [], [], []
        for i, cmd in enumerate(self.cmds):
            if i == 0:
                src = subprocess.PIPE if data is not None else (
                    stdin if stdin is not None else subprocess.DEVNULL)
            else:
                src = self.procs[-1].stdout
            last = i == len(self.cmds) - 1
            dst = (stdout if stdout is not None else subprocess.PIPE) if last else subprocess.PIPE
            p = subprocess.Popen(cmd, stdin=src, stdout=dst, stderr=subprocess.PIPE,
                                 env=full_env)
            if i > 0:
                self.procs[-1].stdout.close()  # only the next process holds the read end
            self.procs.append(p)
            self.errs.append(b"")
        self.slow_read = slow_read

        def collect(i):
            self.errs[i] = self.procs[i].stderr.read()

        for i in range(len(self.procs)):
            t = threading.Thread(target=collect, args=(i,), daemon=True)
            t.start()
            threads.append(t)
        if data is not None:
            def feed():
                try:
                    self.procs[0].stdin.write(data)
                except (BrokenPipeError, OSError):
                    pass
                finally:
                    try:
                        self.procs[0].stdin.close()
                    except OSError:
                        pass
            t = threading.Thread(target=feed, daemon=True)
            t.start()
            threads.append(t)
        self.threads = threads

    def finish(self, timeout=300, rusage=False):
        """Reads the output; returns (output bytes or None, [exit codes], [stderr bytes],
        [ru_maxrss KiB or None])."""
        out = None
        last = self.procs[-1]
        if last.stdout is not None:
            chunks = []
            while True:
                block = last.stdout.read(1 << 20)
                if not block:
                    break
                chunks.append(block)
                if self.slow_read:
                    time.sleep(self.slow_read * len(block) / (1 << 20))
            out = b"".join(chunks)
        codes, rss = [], []
        deadline = time.monotonic() + timeout
        for p in self.procs:
            if rusage:
                _, status, usage = os.wait4(p.pid, 0)
                p.returncode = os.waitstatus_to_exitcode(status)
                rss.append(usage.ru_maxrss)
            else:
                p.wait(timeout=max(1, deadline - time.monotonic()))
                rss.append(None)
            codes.append(p.returncode)
        for t in self.threads:
            t.join(timeout=max(1, deadline - time.monotonic()))
        for p in self.procs:
            for f in (p.stdout, p.stderr):
                if f is not None:
                    f.close()
        return out, codes, self.errs, rss

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def ended_within(proc, seconds):
    """Waits for proc; kills it (and returns False) when it runs longer than `seconds`."""
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


def pipe(cmds, **kw):
    pl = Pipeline(cmds, **{k: v for k, v in kw.items() if k in
                           ("data", "stdin", "stdout", "env", "slow_read")})
    try:
        return pl.finish(rusage=kw.get("rusage", False))
    except BaseException:
        pl.kill()
        raise


class PaesTestCase(ScratchTestCase):
    """ScratchTestCase with this script's paes helpers."""

    prefix = "paes-sealed-"

    def keygen(self, bits=256, name=None):
        path = self.path(name or f"key{bits}-{len(os.listdir(self.tmp))}")
        proc = run(["keygen", "--key-bits", bits, "-o", path])
        self.assertEqual(proc.returncode, 0, f"keygen: {describe(proc)}")
        return path

    def seal(self, data, key_args, extra=(), env=None):
        """Seals `data` (from a file) and returns the sealed bytes."""
        inp = write_file(self.path(f"seal-in-{threading.get_ident()}"), data)
        out = self.path(f"seal-out-{threading.get_ident()}")
        proc = run(["encrypt"] + list(key_args) + list(extra) + [inp, "-o", out], env=env)
        os.remove(inp)
        self.assertEqual(proc.returncode, 0, f"encrypt {key_args} {extra}: {describe(proc)}")
        self.assertEqual(proc.stderr, b"", f"encrypt printed on stderr: {proc.stderr!r}")
        sealed = read_file(out)
        os.remove(out)
        return sealed

    def open_sealed(self, sealed, key_args, extra=(), env=None, out_dir=None, tag="o"):
        """Decrypts `sealed` from a file to a file; returns (proc, plaintext or None)."""
        out_dir = out_dir or self.new_dir("open")
        inp = write_file(os.path.join(self.tmp, f"open-in-{tag}"), sealed)
        out = os.path.join(out_dir, f"open-out-{tag}")
        proc = run(["decrypt"] + list(key_args) + list(extra) + [inp, "-o", out], env=env)
        os.remove(inp)
        data = None
        if os.path.exists(out):
            data = read_file(out)
            os.remove(out)
        return proc, data

    def check_error(self, proc, code, words, what):
        """`proc` failed with `code` and one 'paes: ' stderr line containing one of `words`
        (a string or a tuple of strings); returns a problem description or None."""
        if isinstance(words, str):
            words = (words,)
        lines = error_lines(proc.stderr)
        if proc.returncode != code:
            return f"{what}: expected exit {code}, got {describe(proc)}"
        if len(lines) != 1 or not lines[0].startswith("paes: "):
            return f"{what}: expected one 'paes: ' line on stderr, got {proc.stderr!r}"
        if not any(w.lower() in lines[0].lower() for w in words):
            return f"{what}: stderr {lines[0]!r} mentions none of {words}"
        return None

    def assert_fails(self, args, code, words, out_dir=None, input_bytes=None, env=None, **kw):
        """paes `args` must exit with `code` (an int or a tuple of allowed codes), print one
        'paes: ' line containing one of `words`, print nothing on stdout, and leave `out_dir`
        as it was."""
        before = sorted(os.listdir(out_dir)) if out_dir is not None else None
        proc = run(args, input_bytes=input_bytes, env=env, **kw)
        cmd = "paes " + " ".join(map(str, args))
        codes = code if isinstance(code, tuple) else (code,)
        self.assertIn(proc.returncode, codes, f"{cmd}: expected exit {code}, got {describe(proc)}")
        problem = self.check_error(proc, proc.returncode, words, cmd)
        self.assertIsNone(problem, problem)
        self.assertEqual(proc.stdout, b"", f"{cmd}: unexpected stdout {proc.stdout[:200]!r}")
        if out_dir is not None:
            self.assertEqual(sorted(os.listdir(out_dir)), before,
                             f"{cmd}: output directory changed (leftovers)")
        return proc


# --------------------------------------------------------------------------- 1. round trips

class RoundTripTest(PaesTestCase):
    """1: sealed round trips, engines, thread counts, passphrases, --key-env."""

    DECRYPT_COMBOS = [["--engine", "serial"], ["--threads", "1"], ["--threads", "2"],
                      ["--threads", "3"]]
    ENCRYPT_COMBOS = [["--engine", "serial"], ["--engine", "threads", "--threads", "3"]]

    def test_segment_boundaries(self):
        """Every size around the first boundaries, sealed by serial and threads engines,
        opened by serial and threads 1/2/3; ciphertext length and preamble checked."""
        out_dir = self.new_dir("out")
        jobs = []
        for bits in (128, 256):
            key = self.keygen(bits)
            key_len = bits // 8
            for seg in (1024, 4096):
                for size in boundary_sizes(seg, key_len):
                    jobs.append((key, key_len, seg, size))

        def one(index, job):
            key, key_len, seg, size = job
            problems = []
            data = os.urandom(size)
            inp = write_file(os.path.join(self.tmp, f"rt-in-{index}"), data)
            sealed_versions = []
            for e, enc in enumerate(self.ENCRYPT_COMBOS):
                out = os.path.join(self.tmp, f"rt-sealed-{index}-{e}")
                proc = run(["encrypt", "--key-file", key, "--segment-size", seg] + enc
                           + [inp, "-o", out])
                what = f"AES-{key_len * 8} seg {seg} size {size} encrypt {enc}"
                if proc.returncode != 0 or not os.path.exists(out):
                    problems.append(f"{what}: {describe(proc)}")
                    continue
                sealed = read_file(out)
                if len(sealed) != sealed_len(size, seg, key_len):
                    problems.append(f"{what}: {len(sealed)} bytes, expected "
                                    f"{sealed_len(size, seg, key_len)}")
                expected_pre = (b"PAES" + bytes([1, 1, key_len, 0, 0, 0, 0, 0])
                                + struct.pack(">I", seg))
                if sealed[:16] != expected_pre:
                    problems.append(f"{what}: preamble {sealed[:16].hex()} expected "
                                    f"{expected_pre.hex()}")
                if sealed[PREAMBLE] != header_len(key_len):
                    problems.append(f"{what}: header length byte {sealed[PREAMBLE]}")
                sealed_versions.append((enc, out))
            if len(sealed_versions) == 2:
                a, b = (read_file(o) for _, o in sealed_versions)
                if a == b:
                    problems.append(f"seg {seg} size {size}: two seals are identical "
                                    f"(no fresh salt/nonce prefix)")
            for enc, sealed_path in sealed_versions:
                for dec in self.DECRYPT_COMBOS:
                    out = os.path.join(out_dir, f"rt-plain-{index}")
                    proc = run(["decrypt", "--key-file", key] + dec + [sealed_path, "-o", out])
                    what = (f"AES-{key_len * 8} seg {seg} size {size} "
                            f"sealed by {enc} opened by {dec}")
                    got = None
                    if os.path.exists(out):
                        got = read_file(out)
                        os.remove(out)
                    if proc.returncode != 0:
                        problems.append(f"{what}: {describe(proc)}")
                    elif got != data:
                        problems.append(f"{what}: plaintext differs "
                                        f"({None if got is None else len(got)} bytes)")
                    elif proc.stderr:
                        problems.append(f"{what}: stderr {proc.stderr!r}")
                os.remove(sealed_path)
            os.remove(inp)
            return problems

        for problems in POOL.map(lambda ij: one(*ij), enumerate(jobs)):
            self.check(not problems, "; ".join(problems))
        self.check(not os.listdir(out_dir), f"leftovers: {os.listdir(out_dir)}")
        self.finish()

    def test_extreme_segment_sizes(self):
        """The smallest segment (one plaintext byte in segment 0) and the largest (64M)."""
        for bits in (128, 256):
            key = self.keygen(bits)
            key_len = bits // 8
            smallest = header_len(key_len) + TAG + 1
            for seg, sizes in ((smallest, (0, 1, 2, 3, 100, 5000)), ("64M", (0, 1000))):
                seg_bytes = seg if isinstance(seg, int) else 64 << 20
                for size in sizes:
                    data = os.urandom(size)
                    sealed = self.seal(data, ["--key-file", key], ["--segment-size", seg])
                    what = f"AES-{bits} segment size {seg} plaintext {size}"
                    self.check(len(sealed) == sealed_len(size, seg_bytes, key_len),
                               f"{what}: {len(sealed)} bytes")
                    for dec in (["--engine", "serial"], ["--threads", "3"]):
                        proc, got = self.open_sealed(sealed, ["--key-file", key], dec)
                        self.check(proc.returncode == 0 and got == data, f"{what} {dec}: " +
                                   (describe(proc) if proc.returncode else "plaintext differs"))
            self.assert_fails(["encrypt", "--key-file", key, "--segment-size", smallest - 1,
                               "-o", self.path("x")], 2, "segment size", input_bytes=b"x")
        self.finish()

    def test_default_segment_multi_mib(self):
        key = self.keygen(256)
        data = os.urandom(3 * DEFAULT_SEGMENT + 12345)
        for enc in self.ENCRYPT_COMBOS:
            sealed = self.seal(data, ["--key-file", key], enc)
            self.assertEqual(len(sealed), sealed_len(len(data), DEFAULT_SEGMENT, 32))
            self.assertEqual(struct.unpack(">I", sealed[12:16])[0], DEFAULT_SEGMENT)
            for dec in self.DECRYPT_COMBOS:
                proc, got = self.open_sealed(sealed, ["--key-file", key], dec)
                self.check(proc.returncode == 0 and got == data,
                           f"sealed by {enc}, opened by {dec}: " +
                           (describe(proc) if proc.returncode else "plaintext differs"))
        self.finish()

    def test_passphrases(self):
        data = os.urandom(5000)
        pw_file = write_file(self.path("pass.txt"), b"correct horse battery\n", 0o600)
        env = {"PAES_TEST_PASS": "correct horse battery"}
        for bits in (128, 256):
            for how in ("file", "env"):
                key_args = (["--passphrase-file", pw_file] if how == "file"
                            else ["--passphrase-env", "PAES_TEST_PASS"])
                sealed = self.seal(data, key_args, ["--key-bits", bits, "--scrypt-log-n", 10,
                                                    "--segment-size", 1024], env=env)
                what = f"passphrase {how} AES-{bits}"
                self.check(sealed[:4] == b"PAES" and sealed[4] == 1 and sealed[5] == 2,
                           f"{what}: preamble {sealed[:16].hex()}")
                self.check(sealed[6] == bits // 8, f"{what}: key length byte {sealed[6]}")
                self.check(sealed[7] == 10, f"{what}: log2 N byte {sealed[7]}, expected 10")
                self.check(sealed[8] > 0 and sealed[9] > 0, f"{what}: scrypt r/p {sealed[8:10]}")
                self.check(sealed[10:12] == b"\0\0", f"{what}: reserved {sealed[10:12].hex()}")
                self.check(sealed[16:32] != bytes(16), f"{what}: all-zero scrypt salt")
                self.check(len(sealed) == sealed_len(len(data), 1024, bits // 8),
                           f"{what}: {len(sealed)} bytes")
                # Open with both ways of giving the passphrase; the preamble says the rest.
                for open_args in (["--passphrase-file", pw_file],
                                  ["--passphrase-env", "PAES_TEST_PASS"]):
                    proc, got = self.open_sealed(sealed, open_args, env=env)
                    self.check(proc.returncode == 0 and got == data,
                               f"{what} opened with {open_args[0]}: " +
                               (describe(proc) if proc.returncode else "plaintext differs"))
        # Two seals with one passphrase use different salts.
        a = self.seal(data, ["--passphrase-file", pw_file], ["--scrypt-log-n", 10])
        b = self.seal(data, ["--passphrase-file", pw_file], ["--scrypt-log-n", 10])
        self.check(a[16:32] != b[16:32], "two passphrase seals share a scrypt salt")
        self.finish()

    def test_key_env(self):
        key = self.keygen(256)
        hex_key = read_file(key).decode().strip()
        data = os.urandom(70000)
        env = {"PAES_TEST_KEY": hex_key}
        sealed = self.seal(data, ["--key-env", "PAES_TEST_KEY"], env=env)
        proc, got = self.open_sealed(sealed, ["--key-file", key])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)
        proc, got = self.open_sealed(sealed, ["--key-env", "PAES_TEST_KEY"], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)
        # A raw 32-byte key file and its hex form are the same key.
        raw = write_file(self.path("raw.key"), bytes.fromhex(hex_key), 0o600)
        proc, got = self.open_sealed(sealed, ["--key-file", raw])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)


# --------------------------------------------------------------------------- 1b. --range

class RangeTest(PaesTestCase):
    """1b: decrypt --range [-]OFFSET[:LENGTH] gives exactly those plaintext bytes."""

    def test_ranges_against_the_whole_plaintext(self):
        key = self.keygen(256)
        data = os.urandom(3 * (1 << 20) + 999)
        for fmt, extra in (("paes", []), ("tink", ["--format", "tink", "--segment-size", "64K"])):
            sealed = write_file(self.path(f"r.{fmt}"), self.seal(data, ["--key-file", key], extra))
            open_extra = ["--format", "tink", "--segment-size", "64K"] if fmt == "tink" else []
            for spec, start, length in (("0:1", 0, 1), ("1M:1M", 1 << 20, 1 << 20), ("1048500:200", 1048500, 200),
                                        ("3M", 3 << 20, None), ("100:0", 100, 0), ("3145700:99999", 3145700, None),
                                        (f"{len(data)}", len(data), 0)):
                want = data[start:] if length is None else data[start:start + length]
                proc = run(["decrypt", "--key-file", key, *open_extra, "--range", spec, sealed, "-o", "-"])
                self.check(proc.returncode == 0 and proc.stdout == want,
                           f"{fmt} --range {spec} to stdout: {describe(proc)}, {len(proc.stdout)} bytes")
            out = self.path(f"part-{fmt}")
            proc = run(["decrypt", "--key-file", key, *open_extra, "--range", "2M:100K", sealed, "-o", out])
            self.check(proc.returncode == 0 and read_file(out) == data[2 << 20:(2 << 20) + 102400],
                       f"{fmt} --range to a file: {describe(proc)}")
        self.finish()

    def test_ranges_counted_from_the_end(self):
        # A '-' before OFFSET counts it back from the plaintext's end (issue 32), which the
        # caller need not know; 4 KiB segments put the last MiB across 257 of them.
        key = self.keygen(256)
        data = os.urandom(3 * (1 << 20) + 999)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["--key-file", key], ["--segment-size", "4K"]))
        end = len(data)
        for spec, start, length in (("-1", end - 1, None), ("-1M", end - (1 << 20), None),
                                    ("-4K:100", end - 4096, 100), ("-1M:1M", end - (1 << 20), None),
                                    ("-5000:99999", end - 5000, None), ("-4M", 0, None), ("-4M:10", 0, 10),
                                    ("-0", end, None), ("-0:5", end, None)):
            want = data[start:] if length is None else data[start:start + length]
            proc = run(["decrypt", "--key-file", key, "--range", spec, sealed, "-o", "-"])
            self.check(proc.returncode == 0 and proc.stdout == want,
                       f"--range {spec}: {describe(proc)}, {len(proc.stdout)} bytes")
        out = self.path("tail")
        proc = run(["decrypt", "--key-file", key, "--range=-1M", sealed, "-o", out])
        self.check(proc.returncode == 0 and read_file(out) == data[end - (1 << 20):], f"--range=-1M: {describe(proc)}")
        for spec in ("-", "--1", "-1x", "-:5", "1:-2", "-1:-2", " -1"):
            proc = run(["decrypt", "--key-file", key, f"--range={spec}", sealed, "-o", "-"])
            self.check(proc.returncode == 2 and b"[-]OFFSET[:LENGTH]" in proc.stderr and not proc.stdout,
                       f"--range={spec!r}: {describe(proc)}")
        self.finish()

    def test_range_reports_what_it_read_and_ran_on(self):
        # bytes_in counted the final segment twice (over the file's size), threads said
        # --threads where one worker ran, and key_bits said 256 for an AES-128 file.
        key = self.keygen(128)
        data = os.urandom(40 * 65536 + 5)  # 2.5 MiB: two workers' worth (one per MiB)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["--key-file", key], ["--segment-size", "64K"]))
        size = os.path.getsize(sealed)
        for spec, threads, want_threads in (("0", "2", 2), ("0:1", "16", 1), (f"{len(data) - 1}", "16", 1)):
            proc = run(["decrypt", "--key-file", key, "--range", spec, "-t", threads, "--json", sealed,
                        "-o", self.path("part")])
            self.assertEqual(proc.returncode, 0, describe(proc))
            summary = json.loads(proc.stdout)
            self.assertLessEqual(summary["bytes_in"], size, spec)
            self.assertEqual(summary["threads"], want_threads, spec)
            self.assertEqual(summary["key_bits"], 128, spec)
            os.remove(self.path("part"))
        proc = run(["decrypt", "--key-file", key, "--range", "0", "--json", sealed, "-o", self.path("part")])
        self.assertEqual(json.loads(proc.stdout)["bytes_in"], size, "the whole file, each byte once")
        os.remove(self.path("part"))
        # Where the memory budget makes a batch fewer segments than threads (4 MiB segments,
        # 256 threads), the workers are still no more than the segments read.
        big = write_file(self.path("big.paes"), self.seal(os.urandom(10 * (4 << 20) - 1000), ["--key-file", key],
                                                          ["--segment-size", "4M"]))
        proc = run(["decrypt", "--key-file", key, "--range", "0", "-t", "256", "--json", big, "-o", "/dev/null"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertLessEqual(json.loads(proc.stdout)["threads"], 10)

    def test_what_range_refuses(self):
        key = self.keygen(256)
        data = os.urandom(100000)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["--key-file", key]))
        self.assert_fails(["decrypt", "--key-file", key, "--range", "100001", sealed], 1, "past the end")
        proc = run(["decrypt", "--key-file", key, "--range", "0:10"], input_bytes=read_file(sealed))
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn(b"not a pipe", proc.stderr)
        self.assert_fails(["decrypt", "--key-file", key, "--range", "1x", sealed], 2, "OFFSET[:LENGTH]")
        self.assert_fails(["decrypt", "--mode", "ctr", "--iv", "00" * 16, "--key-file", key, "--range", "0:1",
                           sealed], 2, "sealed format")
        self.assert_fails(["encrypt", "--key-file", key, "--range", "0:1", sealed], 2, "range")
        # Damage in the range fails; elsewhere it doesn't matter, but for the last segment.
        damaged = bytearray(read_file(sealed))
        damaged[200] ^= 1
        bad = write_file(self.path("bad.paes"), bytes(damaged))
        self.assert_fails(["decrypt", "--key-file", key, "--range", "0:10", bad, "-o", self.path("none")], 1,
                          "authentication failed")
        self.assertFalse(os.path.exists(self.path("none")))

    def test_range_memory_is_bounded_by_the_budget_not_the_threads(self):
        # A range read holds a batch of segments; the file's preamble sets their size (up to 64 MiB),
        # so at 128 threads four segments a thread were 32 GiB of address space for a 1-byte read.
        # It stays within the 512 MiB a run holds in flight: here under a 3 GiB address-space limit.
        with open(shutil.which(PAES), "rb") as f:
            binary = f.read()
        if b"__asan_" in binary or b"__tsan_" in binary:
            self.skipTest("SKIPPED: a sanitizer's shadow memory needs more address space than the limit")
        key = self.keygen(256)
        data = os.urandom(1000)
        sealed = write_file(self.path("big-segments.paes"),
                            self.seal(data, ["--key-file", key, "--segment-size", "64M"]))

        def limit_address_space():
            limit = 3 << 30
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        proc = run(["decrypt", "--key-file", key, "--threads", "128", "--range", "10:5", sealed, "-o", "-"],
                   preexec_fn=limit_address_space)
        self.assertEqual((proc.returncode, proc.stdout), (0, data[10:15]), describe(proc))


# --------------------------------------------------------------------------- 2. pipes

class PipeTest(PaesTestCase):
    """2: real pipes between processes."""

    def setUp(self):
        super().setUp()
        self.key = self.keygen(256)
        self.data = os.urandom(3 * 65536 + 777)
        self.inp = write_file(self.path("plain.bin"), self.data)

    def test_sealed_pipe_chain(self):
        for seg in (None, "4096"):
            extra = ["--segment-size", seg] if seg else []
            out, codes, errs, _ = pipe([
                ["cat", self.inp],
                [PAES, "encrypt", "--key-file", self.key] + extra,
                [PAES, "decrypt", "--key-file", self.key],
            ])
            self.assertEqual(codes, [0, 0, 0], f"seg {seg}: {codes} {errs}")
            self.assertEqual(errs[1:], [b"", b""])
            self.assertEqual(out, self.data, f"seg {seg}: pipe round trip differs")

    def test_sealed_file_to_stdout_and_stdin_to_file(self):
        # file -> stdout
        sealed, codes, errs, _ = pipe([[PAES, "encrypt", "--key-file", self.key,
                                        "--segment-size", "8K", self.inp]])
        self.assertEqual(codes, [0], errs)
        self.assertEqual(len(sealed), sealed_len(len(self.data), 8192, 32))
        sealed_path = write_file(self.path("s.paes"), sealed)
        # stdin -> file
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "plain")
        _, codes, errs, _ = pipe([["cat", sealed_path],
                                  [PAES, "decrypt", "--key-file", self.key, "-o", out]])
        self.assertEqual(codes, [0, 0], errs)
        self.assertEqual(read_file(out), self.data)
        # file -> stdout of the decrypt, stdin -> file of the encrypt
        os.remove(out)
        sealed2 = os.path.join(out_dir, "s2.paes")
        _, codes, errs, _ = pipe([["cat", self.inp],
                                  [PAES, "encrypt", "--key-file", self.key, "-o", sealed2]])
        self.assertEqual(codes, [0, 0], errs)
        got, codes, errs, _ = pipe([[PAES, "decrypt", "--key-file", self.key, sealed2]])
        self.assertEqual(codes, [0], errs)
        self.assertEqual(got, self.data)
        # explicit '-' for both ends
        got, codes, errs, _ = pipe([[PAES, "encrypt", "--key-file", self.key, "-", "-o", "-"],
                                    [PAES, "decrypt", "--key-file", self.key, "-", "-o", "-"]],
                                   data=self.data)
        self.assertEqual(codes, [0, 0], errs)
        self.assertEqual(got, self.data)

    def test_raw_modes_through_pipes(self):
        iv = os.urandom(16).hex()
        hex_key = read_file(self.key).decode().strip()
        for mode in MODES:
            data = self.data if mode != "cfb1" else self.data[:20000]
            inp = write_file(self.path(f"in-{mode}"), data)
            iv_args = ["--iv", iv] if mode != "ecb" else []
            ossl_iv = ["-iv", iv] if mode != "ecb" else []
            ossl = subprocess.run([OPENSSL, "enc", f"-aes-256-{mode}", "-K", hex_key] + ossl_iv
                                  + ["-in", inp], capture_output=True, timeout=120)
            self.assertEqual(ossl.returncode, 0, f"openssl {mode}: {ossl.stderr!r}")
            expected = ossl.stdout
            enc = [PAES, "encrypt", "--mode", mode, "--key-file", self.key] + iv_args
            dec = [PAES, "decrypt", "--mode", mode, "--key-file", self.key] + iv_args
            got, codes, errs, _ = pipe([["cat", inp], enc])
            self.check(codes == [0, 0] and got == expected,
                       f"{mode} encrypt stdin->stdout: {codes} {errs[1]!r} "
                       f"{'same' if got == expected else 'differs from openssl'}")
            got, codes, errs, _ = pipe([dec], data=expected)
            self.check(codes == [0] and got == data,
                       f"{mode} decrypt stdin->stdout: {codes} {errs[0]!r}")
            got, codes, errs, _ = pipe([["cat", inp], enc, dec])
            self.check(codes == [0, 0, 0] and got == data,
                       f"{mode} cat | encrypt | decrypt: {codes} {errs[1:]!r}")
            os.remove(inp)
        self.finish()

    def test_named_pipes_and_process_substitution_are_read_as_streams(self):
        """An input path that is a FIFO or bash's <(...) (/dev/fd/N, a pipe) is read front
        to back like stdin, sealed and raw, as openssl and age read them."""
        fifo = self.path("in.fifo")
        os.mkfifo(fifo)
        out_dir = self.new_dir("fifo-out")
        for extra in ([], ["--mode", "ctr", "--iv", "00" * 16]):
            sealed = os.path.join(out_dir, f"sealed{len(extra)}")

            def feed():
                with open(fifo, "wb") as w:  # waits for paes to open the other end
                    w.write(self.data)
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            proc = run(["encrypt", "--key-file", self.key, *extra, fifo, "-o", sealed])
            writer.join(timeout=60)
            self.assertEqual(proc.returncode, 0, f"encrypt {extra} from a FIFO: {describe(proc)}")
            shell = subprocess.run(["bash", "-c", f'"$0" decrypt --key-file "$1" {" ".join(extra)} '
                                    '<(cat "$2") -o -', PAES, self.key, sealed],
                                   capture_output=True, timeout=120)
            self.assertEqual(shell.returncode, 0, f"decrypt {extra} <(cat ...): {shell.stderr!r}")
            self.assertEqual(shell.stdout, self.data, f"decrypt {extra} <(cat ...) differs")
        self.finish()

    def test_reader_that_closes_early_ends_paes(self):
        """`paes decrypt ... | head -c N`: once the reader is gone paes ends, of SIGPIPE as
        cat does, or, where SIGPIPE is ignored, with exit 1 and a message; it never hangs."""
        data = os.urandom(24 << 20)
        sealed = write_file(self.path("big.paes"), self.seal(data, ["--key-file", self.key]))
        for ignore_sigpipe in (False, True):
            proc = subprocess.Popen([PAES, "decrypt", "--key-file", self.key, sealed],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    restore_signals=not ignore_sigpipe)
            head = proc.stdout.read(1000)
            proc.stdout.close()
            if not ended_within(proc, 60):
                self.check(False, f"SIGPIPE ignored={ignore_sigpipe}: still running after the reader left")
                continue
            err = proc.stderr.read()
            proc.stderr.close()
            self.check(head == data[:1000], "the first bytes differ from the plaintext")
            if ignore_sigpipe:
                self.check(proc.returncode == 1 and b"Broken pipe" in err,
                           f"SIGPIPE ignored: exit {proc.returncode}, {err!r}")
            else:
                self.check(proc.returncode == -signal.SIGPIPE,
                           f"SIGPIPE default: exit {proc.returncode}, {err!r}")
        self.finish()

    def test_tampered_stream_to_pipe(self):
        seg = 4096
        data = os.urandom(20 * seg)
        sealed = bytearray(self.seal(data, ["--key-file", self.key], ["--segment-size", seg]))
        spans = segment_spans(len(sealed), seg, 32)
        self.assertGreaterEqual(len(spans), 10)
        p0 = first_plain(seg, 32)
        engines = [[], ["--engine", "serial"], ["--threads", "3"], ["--threads", "1"]]
        for n, bad in enumerate((0, 1, 5, len(spans) - 1)):
            damaged = bytearray(sealed)
            start, end = spans[bad]
            damaged[(start + end) // 2] ^= 0x04
            path = write_file(self.path(f"bad-{bad}.paes"), damaged)
            engine = engines[n % len(engines)]
            out, codes, errs, _ = pipe([["cat", path],
                                        [PAES, "decrypt", "--key-file", self.key] + engine,
                                        ["cat"]])
            what = f"segment {bad} damaged, decrypted to a pipe {engine}"
            self.check(codes[1] == 1, f"{what}: exit {codes[1]} (stderr {errs[1]!r})")
            problem = self.check_error(subprocess.CompletedProcess([], codes[1], b"", errs[1]),
                                       1, "authentication failed", what)
            self.check(problem is None, problem)
            self.check(data.startswith(out), f"{what}: output ({len(out)} bytes) is not "
                                             f"a prefix of the plaintext")
            verified = 0 if bad == 0 else p0 + (bad - 1) * (seg - TAG)
            self.check(len(out) <= verified, f"{what}: wrote {len(out)} bytes, more than the "
                                             f"{verified} bytes that precede the bad segment")
        # Truncated streams too: cut in the middle of the last segment, and at a boundary.
        for cut in (spans[-1][0] + 5, spans[-2][1]):
            path = write_file(self.path(f"cut-{cut}.paes"), sealed[:cut])
            out, codes, errs, _ = pipe([["cat", path], [PAES, "decrypt", "--key-file", self.key]])
            self.check(codes[1] == 1, f"cut at {cut} to a pipe: exit {codes[1]} {errs[1]!r}")
            self.check(data.startswith(out), f"cut at {cut}: output not a prefix")
            self.check(len(out) < len(data), f"cut at {cut}: all the plaintext came out")
        self.finish()

    def test_failure_with_a_stalled_producer_exits_at_once(self):
        """A damaged segment fails the run while the producer still holds its end of the
        pipe open and writes nothing more: paes must exit 1 then, not wait for input it
        will never use (its reader was blocked in read(2) and the pipeline joined it)."""
        seg = 4096
        # Fewer segments than the pipeline has slots, so that its reader has taken all of
        # them and waits in read(2) for more when segment 0 fails.
        data = os.urandom(2 * seg + 100)
        sealed = bytearray(self.seal(data, ["--key-file", self.key], ["--segment-size", seg]))
        start, end = segment_spans(len(sealed), seg, 32)[0]
        sealed[(start + end) // 2] ^= 0x01
        for engine in ([], ["--engine", "serial"], ["--threads", "3"]):
            out_dir = self.new_dir("stalled")
            for target in ("-", os.path.join(out_dir, "out.bin")):
                what = f"damaged stream from a stalled producer to {target} {engine}"
                proc = subprocess.Popen([PAES, "decrypt", "--key-file", self.key, "-o", target]
                                        + engine, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                proc.stdin.write(bytes(sealed))
                proc.stdin.flush()  # and keep the pipe open, as a stalled producer does
                # Not communicate(): it would close stdin. Its output is one line, so
                # the pipes can't fill while it runs.
                if not ended_within(proc, 60):
                    self.check(False, f"{what}: still running 60 s after the bad segment")
                out, err = proc.stdout.read(), proc.stderr.read()
                for stream in (proc.stdin, proc.stdout, proc.stderr):
                    try:
                        stream.close()
                    except BrokenPipeError:
                        pass
                problem = self.check_error(subprocess.CompletedProcess([], proc.returncode, out, err),
                                           1, "authentication failed", what)
                self.check(problem is None, problem)
                self.check(out == b"", f"{what}: {len(out)} bytes of output")
            self.check(not os.listdir(out_dir), f"leftovers: {os.listdir(out_dir)}")
        self.finish()


# --------------------------------------------------------------------------- 3. tampering

class TamperTest(PaesTestCase):
    """3: any change, truncation, extension or reordering fails cleanly."""

    def expect_damage(self, index, sealed, key, what, words=DAMAGE_WORDS, via_stdin=False,
                      out_dir=None):
        """Decrypts damaged `sealed`; returns a problem description or None."""
        out = os.path.join(out_dir, f"plain-{index}")
        if via_stdin:
            proc = run(["decrypt", "--key-file", key, "-", "-o", out], input_bytes=bytes(sealed))
        else:
            inp = write_file(os.path.join(self.tmp, f"damaged-{index}"), sealed)
            proc = run(["decrypt", "--key-file", key, inp, "-o", out])
            os.remove(inp)
        how = "stdin" if via_stdin else "file"
        if os.path.exists(out):
            os.remove(out)
            return f"{what} ({how}): output file left behind ({describe(proc)})"
        if proc.stdout:
            return f"{what} ({how}): wrote on stdout"
        return self.check_error(proc, 1, words, f"{what} ({how})")

    def words_for(self, pos):
        if pos < 4:
            return ("not a paes file",)
        if pos == 4:  # 1 flipped to 3 is version 3, which has no raw-key files
            return ("unsupported", "key source 1 in a version 3 file")
        if pos == 6:  # the key length byte: a key-size mismatch is a fair thing to say
            return DAMAGE_WORDS + ("wrong key",)
        return DAMAGE_WORDS

    def run_cases(self, cases, key):
        """cases: [(what, damaged bytes, words, via_stdin)], run side by side."""
        out_dir = self.new_dir("out")
        results = POOL.map(lambda ic: self.expect_damage(ic[0], ic[1][1], key, ic[1][0],
                                                         ic[1][2], ic[1][3], out_dir),
                           enumerate(cases))
        for problem in results:
            self.check(problem is None, problem)
        self.check(not os.listdir(out_dir), f"leftovers: {os.listdir(out_dir)}")

    def test_flip_every_byte_small(self):
        """One bit flipped at every byte of a 4-segment file; every one must fail."""
        key = self.keygen(256)
        seg = 1024
        data = os.urandom(3000)
        sealed = self.seal(data, ["--key-file", key], ["--segment-size", seg])
        self.assertEqual(len(segment_spans(len(sealed), seg, 32)), 4)
        rng = random.Random(1234)
        cases = []
        for pos in range(len(sealed)):
            damaged = bytearray(sealed)
            bit = rng.randrange(8)
            damaged[pos] ^= 1 << bit
            # Every position through a file; the preamble, header and every 5th byte
            # through stdin as well.
            cases.append((f"bit {bit} of byte {pos} flipped", damaged, self.words_for(pos), False))
            if pos < 80 or pos % 5 == 0:
                cases.append((f"bit {bit} of byte {pos} flipped", damaged,
                              self.words_for(pos), True))
        self.run_cases(cases, key)
        self.finish()

    def test_flip_every_bit_preamble_header(self):
        """Every one of the 8 bits of the preamble and Tink header (AES-128 key)."""
        key = self.keygen(128)
        sealed = self.seal(os.urandom(2500), ["--key-file", key], ["--segment-size", 1024])
        cases = []
        for pos in range(PREAMBLE + header_len(16)):
            for bit in range(8):
                damaged = bytearray(sealed)
                damaged[pos] ^= 1 << bit
                cases.append((f"AES-128 bit {bit} of byte {pos}", damaged,
                              self.words_for(pos), pos % 2 == 1))
        self.run_cases(cases, key)
        self.finish()

    def big_sealed(self):
        key = self.keygen(256)
        seg = 64 * 1024
        data = os.urandom(2 * 1024 * 1024 + 4321)
        sealed = self.seal(data, ["--key-file", key], ["--segment-size", "64K"])
        spans = segment_spans(len(sealed), seg, 32)
        self.assertEqual(spans[-1][1], len(sealed))
        self.assertGreater(len(spans), 30)
        return key, seg, data, sealed, spans

    def test_flip_sampled_multi_segment(self):
        key, seg, data, sealed, spans = self.big_sealed()
        positions = set(range(PREAMBLE + header_len(32)))
        for start, end in spans:
            positions.update({start, start + 1, end - TAG - 1, end - TAG, end - TAG // 2,
                              end - 1, (start + end) // 2})
        rng = random.Random(99)
        positions.update(rng.randrange(len(sealed)) for _ in range(200))
        cases = []
        for i, pos in enumerate(sorted(positions)):
            damaged = bytearray(sealed)
            damaged[pos] ^= 1 << rng.randrange(8)
            cases.append((f"2 MiB file, byte {pos} flipped", damaged, self.words_for(pos),
                          i % 3 == 0))
        self.run_cases(cases, key)
        self.finish()

    def test_truncation_extension_reordering(self):
        key, seg, data, sealed, spans = self.big_sealed()
        cases = []
        cuts = {0, 1, 2, 3, 4, 31, PREAMBLE, PREAMBLE + 1, PREAMBLE + header_len(32) - 1,
                len(sealed) - 1, len(sealed) - TAG, len(sealed) - TAG - 1}
        for start, end in spans:
            cuts.update({start - 1, start, start + 1, end - 1})
            if end < len(sealed):
                cuts.update({end, end + 1})
        for cut in sorted(c for c in cuts if 0 <= c < len(sealed)):
            if cut < 4:
                words = ("truncated", "not a paes file")
            elif cut < PREAMBLE:
                words = ("truncated",)
            else:
                words = DAMAGE_WORDS
            cases.append((f"truncated to {cut} bytes", sealed[:cut], words, cut % 2 == 0))
        for extra in (b"\0", os.urandom(17), os.urandom(TAG), os.urandom(seg)):
            cases.append((f"{len(extra)} bytes appended", sealed + extra, DAMAGE_WORDS, False))
            cases.append((f"{len(extra)} bytes appended", sealed + extra, DAMAGE_WORDS, True))
        seg_bytes = [sealed[s:e] for s, e in spans]
        head = sealed[:spans[0][0]]

        def assemble(order):
            return head + b"".join(seg_bytes[i] for i in order)

        n = len(spans)
        edits = {
            "segments 1 and 2 swapped": [0, 2, 1] + list(range(3, n)),
            "segments 5 and 9 swapped": [i if i not in (5, 9) else 14 - i for i in range(n)],
            "segment 1 duplicated": [0, 1] + list(range(1, n)),
            "segment 3 dropped": [i for i in range(n) if i != 3],
            "last segment dropped": list(range(n - 1)),
            "last full segment duplicated": list(range(n - 1)) + [n - 2, n - 1],
            "last two segments swapped": list(range(n - 2)) + [n - 1, n - 2],
        }
        for what, order in edits.items():
            cases.append((what, assemble(order), DAMAGE_WORDS, False))
            cases.append((what, assemble(order), DAMAGE_WORDS, True))
        # A whole segment of another file sealed with the same key, at the same index.
        other = self.seal(os.urandom(len(data)), ["--key-file", key], ["--segment-size", "64K"])
        s, e = spans[4]
        cases.append(("segment 4 from another file", sealed[:s] + other[s:e] + sealed[e:],
                      DAMAGE_WORDS, False))
        # The other file's header with this file's segments.
        cases.append(("another file's header", other[:spans[0][0]] + sealed[spans[0][0]:],
                      DAMAGE_WORDS, False))
        self.run_cases(cases, key)
        # Sanity: the untouched file still opens.
        proc, got = self.open_sealed(sealed, ["--key-file", key])
        self.check(proc.returncode == 0 and got == data, f"the intact file: {describe(proc)}")
        self.finish()

    def test_specific_messages(self):
        key = self.keygen(256)
        sealed = bytearray(self.seal(os.urandom(3000), ["--key-file", key],
                                     ["--segment-size", 1024]))
        out_dir = self.new_dir("out")
        cases = []
        bad_magic = bytearray(sealed)
        bad_magic[0:4] = b"PAEX"
        cases.append(("bad magic", bad_magic, "not a paes file"))
        cases.append(("openssl-looking input", b"Salted__" + bytes(sealed[8:]), "not a paes file"))
        v2 = bytearray(sealed)
        v2[4] = 2  # the unreleased recipients format: named as such, whatever the rest says
        cases.append(("version 2", v2, "paes format version 2"))
        v3 = bytearray(sealed)
        v3[4] = 3  # version 3 is for recipients only: a raw-key preamble can't be one
        cases.append(("version 3", v3, "key source 1 in a version 3 file"))
        v4 = bytearray(sealed)
        v4[4] = 4
        cases.append(("version 4", v4, "unsupported"))
        v0 = bytearray(sealed)
        v0[4] = 0
        cases.append(("version 0", v0, "unsupported"))
        cases.append(("preamble cut to 20 bytes", sealed[:20], "truncated"))
        cases.append(("header cut", sealed[:PREAMBLE + 10], "truncated"))
        cases.append(("only preamble and header", sealed[:PREAMBLE + header_len(32)],
                      "truncated"))
        reserved = bytearray(sealed)
        reserved[11] = 1
        cases.append(("reserved byte set", reserved, "corrupt"))
        source = bytearray(sealed)
        source[5] = 9
        cases.append(("unknown key source", source, "corrupt"))
        for i, (what, damaged, word) in enumerate(cases):
            for via_stdin in (False, True):
                problem = self.expect_damage(i, damaged, key, what, (word,), via_stdin, out_dir)
                self.check(problem is None, problem)
        self.finish()


class ForeignFileTest(PaesTestCase):
    """3: another tool's file given to decrypt is named, with the options that read it where
    paes can (the library's words name no option: rekey's message shows them); a bare Tink
    stream opened with a wrong segment size, and openssl's legacy key derivation under
    --pbkdf2, are said as such."""

    def setUp(self):
        super().setUp()
        self.key = self.keygen(256, "k256")
        self.data = os.urandom(20000)
        self.plain = write_file(self.path("plain"), self.data)
        self.out_dir = self.new_dir("out")
        self.pw = write_file(self.path("pw"), b"x\n", 0o600)

    def fails_with_all(self, args, words, path=None, absent=()):
        """paes `args` (reading `path` as a file, then from stdin) exits 1 with one 'paes: '
        line holding every one of `words` and none of `absent`, and leaves no output."""
        for via_stdin in ((False, True) if path else (False,)):
            full = list(args) + ([] if via_stdin or not path else [path])
            full += ["-o", os.path.join(self.out_dir, "o")]
            proc = run(full, input_bytes=read_file(path) if via_stdin else None)
            lines = error_lines(proc.stderr)
            what = f"paes {' '.join(map(str, full))}{' < ' + path if via_stdin else ''}"
            self.check(proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("paes: ")
                       and all(w in lines[0] for w in words) and not any(w in lines[0] for w in absent),
                       f"{what}: {describe(proc)}")
            self.check(not os.listdir(self.out_dir), f"{what}: left {os.listdir(self.out_dir)}")

    def test_openssl_salted_file(self):
        enc = self.path("openssl.enc")
        subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:x", "-in", self.plain,
                        "-out", enc], check=True, capture_output=True, timeout=60)
        self.fails_with_all(["decrypt", "--key-file", self.key],
                            ["an openssl enc file (Salted__)", "--mode <mode> --pbkdf2"], enc)
        self.finish()

    def test_openpgp_files(self):
        packets = {
            "old-format passphrase packet (gpg -c)": b"\x8c\x0d\x04\x09\x03\x02",
            "new-format passphrase packet": b"\xc3\x0d\x04\x09\x03\x02",
            "old-format public-key packet (gpg -e)": b"\x85\x01\x0c\x03",
            "new-format public-key packet": b"\xc1\xc0\x4c\x03",
            "armored": b"-----BEGIN PGP MESSAGE-----\n\njA0ECQMC",
        }
        for index, start in enumerate(packets.values()):
            path = write_file(self.path(f"pgp-{index}"), start + os.urandom(200))
            self.fails_with_all(["decrypt", "--key-file", self.key], ["an OpenPGP (gpg) file"], path)
        self.finish()

    def test_bare_tink_stream_given_as_a_paes_file(self):
        for bits in (128, 256):
            key = self.keygen(bits)
            tink = self.path(f"tink{bits}")
            self.assertEqual(run(["encrypt", "--format", "tink", "--key-file", key, self.plain, "-o", tink])
                             .returncode, 0)
            self.fails_with_all(["decrypt", "--key-file", key],
                                ["bare Tink stream", "--format tink --segment-size"], tink)
        self.finish()

    def test_bare_tink_stream_with_a_wrong_segment_size(self):
        tink = self.path("tink")
        self.assertEqual(run(["encrypt", "--format", "tink", "--key-file", self.key, "--segment-size", "4096",
                              self.plain, "-o", tink]).returncode, 0)
        for segment in ("1024", "8192", None):  # None: the default, 1 MiB
            extra = ["--segment-size", segment] if segment else []
            self.fails_with_all(["decrypt", "--format", "tink", "--key-file", self.key] + extra,
                                ["segment size it was written with"], tink)
        proc = run(["decrypt", "--format", "tink", "--key-file", self.key, "--segment-size", "4096", tink, "-o",
                    os.path.join(self.out_dir, "o")])
        self.assertEqual((proc.returncode, read_file(os.path.join(self.out_dir, "o"))), (0, self.data))
        self.finish()

    def test_openssl_legacy_key_derivation(self):
        enc = self.path("legacy.enc")
        subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pass", "pass:x", "-in", self.plain, "-out", enc],
                       check=True, capture_output=True, timeout=60)
        self.fails_with_all(["decrypt", "--mode", "cbc", "--pbkdf2", "--passphrase-file", self.pw],
                            ["bad decrypt", "without -pbkdf2 (openssl's legacy key derivation)"], enc)
        self.finish()

    def test_library_words_name_no_option(self):
        """rekey gets the library's message as it is: the format named, no option."""
        identity = self.path("id")
        proc = run(["keygen", "--x25519", "-o", identity])
        self.assertEqual(proc.returncode, 0, describe(proc))
        recipient = proc.stdout.decode().strip()
        salted = self.path("openssl.enc")
        subprocess.run([OPENSSL, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:x", "-in", self.plain,
                        "-out", salted], check=True, capture_output=True, timeout=60)
        tink = self.path("tink")
        self.assertEqual(run(["encrypt", "--format", "tink", "--key-file", self.key, self.plain, "-o", tink])
                         .returncode, 0)
        for path, words in ((salted, ["an openssl enc file (Salted__)"]), (tink, ["bare Tink stream"])):
            self.fails_with_all(["rekey", "-i", identity, "-r", recipient, path], words, absent=["--"])
        self.finish()


# --------------------------------------------------------------------------- 4. bad input

class BadInputTest(PaesTestCase):
    """4: bad keys, passphrases and options fail cleanly."""

    def setUp(self):
        super().setUp()
        self.key = self.keygen(256, "k1")
        self.data = os.urandom(3000)
        self.inp = write_file(self.path("plain.bin"), self.data)
        self.pw = write_file(self.path("pw"), b"the passphrase\n", 0o600)
        self.out_dir = self.new_dir("out")
        self.out = os.path.join(self.out_dir, "result")
        self.sealed = write_file(self.path("k.paes"), self.seal(self.data, ["--key-file", self.key]))
        self.pw_sealed = write_file(self.path("p.paes"), self.seal(
            self.data, ["--passphrase-file", self.pw], ["--scrypt-log-n", 10]))

    def fails(self, args, code, words, **kw):
        kw.setdefault("out_dir", self.out_dir)
        return self.assert_fails(args, code, words, **kw)

    def test_wrong_key(self):
        other = self.keygen(256, "k2")
        self.fails(["decrypt", "--key-file", other, self.sealed, "-o", self.out], 1,
                   "authentication failed")
        small = self.keygen(128, "k3")
        self.fails(["decrypt", "--key-file", small, self.sealed, "-o", self.out], 1,
                   ("wrong key", "key"))

    def test_wrong_passphrase(self):
        wrong = write_file(self.path("wrong"), b"the passphrasf\n", 0o600)
        self.fails(["decrypt", "--passphrase-file", wrong, self.pw_sealed, "-o", self.out], 1,
                   "authentication failed")
        self.fails(["decrypt", "--passphrase-env", "PAES_TEST_PW", self.pw_sealed, "-o",
                    self.out], 1, "authentication failed", env={"PAES_TEST_PW": "nope"})
        # The first line only is the passphrase: a trailing newline is not part of it,
        # but other text on later lines does not matter.
        two_lines = write_file(self.path("two"), b"the passphrase\nsecond line\n", 0o600)
        proc, got = self.open_sealed(read_file(self.pw_sealed), ["--passphrase-file", two_lines])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)

    def test_empty_passphrase(self):
        empty = write_file(self.path("empty"), b"", 0o600)
        newline = write_file(self.path("newline"), b"\n", 0o600)
        for pw in (empty, newline):
            self.fails(["encrypt", "--passphrase-file", pw, "--scrypt-log-n", 10, self.inp,
                        "-o", self.out], (1, 2), "empty passphrase")
            self.fails(["decrypt", "--passphrase-file", pw, self.pw_sealed, "-o", self.out],
                       (1, 2), "empty passphrase")
        self.fails(["encrypt", "--passphrase-env", "PAES_TEST_PW", self.inp, "-o", self.out],
                   (1, 2), "empty passphrase", env={"PAES_TEST_PW": ""})

    def test_a_passphrase_files_key_size_is_reported_from_the_file(self):
        pw_env = {"PAES_TEST_PW": "size me"}
        for bits in (128, 256):
            sealed = write_file(self.path(f"p{bits}"), self.seal(
                self.data, ["--passphrase-env", "PAES_TEST_PW"], ["--scrypt-log-n", 10, "--key-bits", bits],
                env=pw_env))
            proc = run(["decrypt", "--passphrase-env", "PAES_TEST_PW", "--json", sealed, "-o", self.out],
                       env=pw_env)
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assertEqual(json.loads(proc.stdout)["key_bits"], bits)
            os.remove(self.out)

    def test_scrypt_cost_on_decrypt_is_refused_whatever_its_value(self):
        # Hidden from decrypt's help, and refused with the reason, not a range error.
        for cost in (10, 99):
            self.fails(["decrypt", "--passphrase-file", self.pw, "--scrypt-log-n", cost, self.pw_sealed,
                        "-o", self.out], 2, "read from the sealed file's preamble")

    def test_key_24_bytes_for_sealed(self):
        k24 = write_file(self.path("k24"), os.urandom(24), 0o600)
        self.fails(["encrypt", "--key-file", k24, self.inp, "-o", self.out], 1, "24")
        self.fails(["decrypt", "--key-file", k24, self.sealed, "-o", self.out], 1, "24")
        k192 = self.keygen(192, "k192")
        self.fails(["encrypt", "--key-file", k192, self.inp, "-o", self.out], 1, "24")

    def test_passphrase_key_bits_192(self):
        self.fails(["encrypt", "--passphrase-file", self.pw, "--key-bits", 192, self.inp,
                    "-o", self.out], 2, "128 or 256")

    def test_passphrase_options_with_a_key(self):
        """--key-bits and --scrypt-log-n describe a passphrase's key; with a key file they
        would be silently ignored (a 256-bit key does not become AES-128), so, as raw modes
        do, the sealed format refuses them."""
        for extra in (["--key-bits", "128"], ["--scrypt-log-n", "12"]):
            self.fails(["encrypt", "--key-file", self.key] + extra + [self.inp, "-o", self.out],
                       2, extra[0])

    def test_scrypt_cost_range(self):
        """--scrypt-log-n accepts what paes can open again: the highest cost (20, 1 GiB)
        seals and opens; 21 and 22 would need more than the 2 GiB cap that bounds what a
        hostile file can make paes allocate, so they are usage errors, as is 9."""
        sealed = self.seal(self.data, ["--passphrase-file", self.pw], ["--scrypt-log-n", 20])
        self.assertEqual(sealed[7], 20, "log2 N byte of the preamble")
        proc, got = self.open_sealed(sealed, ["--passphrase-file", self.pw])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)
        for cost in (21, 22, 9):
            self.fails(["encrypt", "--passphrase-file", self.pw, "--scrypt-log-n", cost, self.inp,
                        "-o", self.out], 2, "must be 10 to 20")

    def test_hostile_scrypt_cost_is_refused_before_scrypt_runs(self):
        """A preamble asking for a cost past the cap fails at once: paes never tries to
        allocate what it asks for (2 GiB and more; 2^255 for byte 255)."""
        for cost, words in ((21, "more than the 2048 MiB paes allows"),
                            (30, "more than the 2048 MiB paes allows"),
                            (255, "unsupported scrypt parameters")):
            hostile = bytearray(read_file(self.pw_sealed))
            hostile[7] = cost
            path = write_file(self.path(f"hostile-{cost}.paes"), bytes(hostile))
            started = time.monotonic()
            self.fails(["decrypt", "--passphrase-file", self.pw, path, "-o", self.out], 1, words)
            self.assertLess(time.monotonic() - started, 10, f"log2 N {cost}: scrypt seems to have run")

    def test_bad_segment_size(self):
        for size in ("10", "0", "56", "65M"):
            self.fails(["encrypt", "--key-file", self.key, "--segment-size", size, self.inp,
                        "-o", self.out], 2, "segment size")

    def test_aad_mismatch(self):
        sealed = write_file(self.path("aad.paes"), self.seal(self.data, ["--key-file", self.key],
                                                             ["--aad", "a"]))
        self.fails(["decrypt", "--key-file", self.key, "--aad", "b", sealed, "-o", self.out], 1,
                   "authentication failed")
        self.fails(["decrypt", "--key-file", self.key, sealed, "-o", self.out], 1,
                   "authentication failed")
        self.fails(["decrypt", "--key-file", self.key, "--aad", "a", self.sealed, "-o",
                    self.out], 1, "authentication failed")
        proc, got = self.open_sealed(read_file(sealed), ["--key-file", self.key], ["--aad", "a"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)

    def test_aad_file(self):
        # Bytes no command line carries: a NUL, a newline, invalid UTF-8; and longer than the
        # 32,768 bytes of HKDF info OpenSSL 3.0's HKDF takes.
        aad = b"\0\n\xff" + os.urandom(40000)
        aad_file = write_file(self.path("aad.bin"), aad)
        sealed = write_file(self.path("aadf.paes"), self.seal(self.data, ["--key-file", self.key],
                                                              ["--aad-file", aad_file]))
        proc, got = self.open_sealed(read_file(sealed), ["--key-file", self.key], ["--aad-file", aad_file])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)
        other = write_file(self.path("other.bin"), aad[:-1] + bytes([aad[-1] ^ 1]))
        self.fails(["decrypt", "--key-file", self.key, "--aad-file", other, sealed, "-o", self.out], 1,
                   "authentication failed")
        # '-': standard input, when the data comes from a file.
        proc = run(["decrypt", "--key-file", self.key, "--aad-file", "-", sealed, "-o", self.out],
                   input_bytes=aad)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.out), self.data)
        os.remove(self.out)
        # A text file and --aad with the same text are the same associated data.
        text_file = write_file(self.path("aad.txt"), b"host=db1")
        sealed = write_file(self.path("aadt.paes"), self.seal(self.data, ["--key-file", self.key],
                                                              ["--aad-file", text_file]))
        proc, got = self.open_sealed(read_file(sealed), ["--key-file", self.key], ["--aad", "host=db1"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, self.data)

        self.fails(["encrypt", "--key-file", self.key, "--aad", "a", "--aad-file", aad_file, self.inp,
                    "-o", self.out], 2, "--aad")
        self.fails(["encrypt", "--key-file", self.key, "--aad-file", "-", "-o", self.out], 2,
                   "standard input", input_bytes=self.data)
        self.fails(["encrypt", "--key-file", self.key, "--aad-file", self.path("absent"), self.inp,
                    "-o", self.out], 1, "associated data file")
        big = write_file(self.path("big.bin"), bytes((16 << 20) + 1))
        for name in (big, "/dev/zero"):
            self.fails(["encrypt", "--key-file", self.key, "--aad-file", name, self.inp, "-o", self.out], 1,
                       "larger than 16 MiB")
        self.fails(["encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", "00" * 16, "--aad-file",
                    aad_file, self.inp, "-o", self.out], 2, "--aad-file")

    def test_key_kind_mismatch(self):
        self.fails(["decrypt", "--passphrase-file", self.pw, self.sealed, "-o", self.out],
                   (1, 2), "sealed with a key")
        self.fails(["decrypt", "--passphrase-env", "PAES_TEST_PW", self.sealed, "-o", self.out],
                   (1, 2), "sealed with a key", env={"PAES_TEST_PW": "x"})
        self.fails(["decrypt", "--key-file", self.key, self.pw_sealed, "-o", self.out],
                   (1, 2), "sealed with a passphrase")
        self.fails(["decrypt", "--key-env", "PAES_TEST_KEY", self.pw_sealed, "-o", self.out],
                   (1, 2), "sealed with a passphrase",
                   env={"PAES_TEST_KEY": read_file(self.key).decode().strip()})
        # From stdin too, where the file's kind is only known from the stream.
        self.fails(["decrypt", "--key-file", self.key, "-o", self.out], (1, 2),
                   "sealed with a passphrase", input_bytes=read_file(self.pw_sealed))
        # No key option: a file sealed with a key is named so, rather than a passphrase asked for.
        self.fails(["decrypt", self.sealed, "-o", self.out], 2, "sealed with a raw key: give --key-file")

    def test_library_errors_worded_in_flags(self):
        """The library's errors name no flag (paes::Remedy says what would cure one); the CLI
        words each cure in its own flags, with the exit status the library's kind gives."""
        identity = self.path("id")
        proc = run(["keygen", "--x25519", "-o", identity])
        self.assertEqual(proc.returncode, 0, describe(proc))
        to_recipient = write_file(self.path("r.paes"), self.seal(self.data, ["-r", proc.stdout.decode().strip()]))
        self.fails(["decrypt", "--key-file", self.key, to_recipient, "-o", self.out], 2,
                   ("open it with an identity, not a key or passphrase (give -i IDENTITY-FILE)",))
        self.fails(["decrypt", "-i", identity, self.sealed, "-o", self.out], 2,
                   ("open it with its key, not identities (give --key-file or --key-env)",))
        self.fails(["decrypt", "--passphrase-file", self.pw, self.sealed, "-o", self.out], 2,
                   ("open it with its key (give --key-file or --key-env)",))
        self.fails(["decrypt", "--key-file", self.key, self.pw_sealed, "-o", self.out], 2,
                   ("(give --passphrase-file or --passphrase-env, or type it at the prompt)",))
        self.fails(["decrypt", "--key-file", self.key, "--aad", "other", self.sealed, "-o", self.out], 1,
                   ("wrong associated data, or the data was corrupted, truncated or reordered "
                    "(--aad or --aad-file gives the associated data)",))
        existing = write_file(os.path.join(self.out_dir, "existing"), b"kept")
        self.fails(["decrypt", "--key-file", self.key, self.sealed, "-o", existing], 1,
                   (": already exists (use -f to overwrite)",))
        self.assertEqual(read_file(existing), b"kept")

    def test_tink_with_passphrase(self):
        self.fails(["encrypt", "--format", "tink", "--passphrase-file", self.pw, self.inp,
                    "-o", self.out], 2, "passphrase")

    def test_raw_only_options_on_sealed(self):
        iv = os.urandom(16).hex()
        for direction, inp in (("encrypt", self.inp), ("decrypt", self.sealed)):
            self.fails([direction, "--key-file", self.key, "--iv", iv, inp, "-o", self.out], 2,
                       "--iv")
            self.fails([direction, "--key-file", self.key, "--no-pad", inp, "-o", self.out], 2,
                       "--no-pad")
            self.fails([direction, "--key-file", self.key, "--pbkdf2", inp, "-o", self.out], 2,
                       "--pbkdf2")

    def test_json_with_stdout_output(self):
        for args in (["encrypt", "--key-file", self.key, "--json", self.inp],
                     ["encrypt", "--key-file", self.key, "--json", self.inp, "-o", "-"],
                     ["decrypt", "--key-file", self.key, "--json", self.sealed]):
            self.fails(args, 2, "json")
        # With -o FILE it is fine and counts the bytes.
        proc = run(["encrypt", "--key-file", self.key, "--json", self.inp, "-o", self.out])
        self.assertEqual(proc.returncode, 0, describe(proc))
        summary = json.loads(proc.stdout)
        self.assertEqual(summary["bytes_in"], len(self.data))
        self.assertEqual(summary["bytes_out"], os.path.getsize(self.out))

    def terminal(self):
        try:
            return os.openpty()
        except OSError as e:
            self.skipTest(f"no pseudo-terminal can be made here: {e}")

    def test_ciphertext_from_terminal(self):
        master, slave = self.terminal()
        try:
            self.fails(["decrypt", "--key-file", self.key, "-o", self.out], 2, "terminal",
                       stdin=slave)
            self.fails(["decrypt", "--key-file", self.key, "-", "-o", self.out], 2, "terminal",
                       stdin=slave)
        finally:
            os.close(master)
            os.close(slave)

    def test_binary_output_to_terminal(self):
        master, slave = self.terminal()
        try:
            # Encrypting only: a decrypted plaintext may well be text meant for the screen.
            for args in (["encrypt", "--key-file", self.key, self.inp],
                         ["encrypt", "--key-file", self.key, self.inp, "-o", "-"],
                         ["encrypt", "--mode", "ctr", "--iv", "00" * 16, "--key-file",
                          self.key, self.inp]):
                proc = subprocess.run([PAES] + args, stdout=slave, stderr=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, timeout=60)
                problem = self.check_error(proc, 2, "terminal", "paes " + " ".join(args)
                                           + " > pty")
                self.assertIsNone(problem, problem)
        finally:
            os.close(master)
            os.close(slave)
        self.assertEqual(os.listdir(self.out_dir), [])

    def test_output_exists(self):
        write_file(self.out, b"precious")
        self.fails(["encrypt", "--key-file", self.key, self.inp, "-o", self.out], 1, "exists")
        self.assertEqual(read_file(self.out), b"precious")
        self.fails(["decrypt", "--key-file", self.key, self.sealed, "-o", self.out], 1, "exists")
        self.assertEqual(read_file(self.out), b"precious")


# --------------------------------------------------------------------------- 5. pbkdf2

class Pbkdf2Test(PaesTestCase):
    """5: openssl enc -pbkdf2 interop, both ways."""

    def test_every_mode_and_key_size(self):
        env = {"PAES_TEST_PASS": "pbkdf2 passphrase"}
        full_env = dict(os.environ, **env)
        jobs = [(m, b) for m in MODES for b in (128, 192, 256)]

        def one(index, job):
            mode, bits = job
            size = 1000 if mode == "cfb1" else 70001
            data = os.urandom(size)
            inp = write_file(os.path.join(self.tmp, f"p-in-{index}"), data)
            enc = os.path.join(self.tmp, f"p-enc-{index}")
            problems = []
            what = f"{mode}-{bits}"
            proc = run(["encrypt", "--mode", mode, "--pbkdf2", "--passphrase-env",
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
                proc = run(["decrypt", "--mode", mode, "--pbkdf2", "--passphrase-env",
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

        for problems in POOL.map(lambda ij: one(*ij), enumerate(jobs)):
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
                proc = run(["decrypt", "--mode", mode, "--pbkdf2", "--passphrase-file", pw, enc, "-o",
                            self.path("dec"), "-f"])
                self.check(proc.returncode == 0 and read_file(self.path("dec")) == data,
                           f"{what}, {mode}: paes can't read openssl's file ({describe(proc)})")
                # paes -> openssl
                proc = run(["encrypt", "--mode", mode, "--pbkdf2", "--passphrase-file", pw, inp, "-o", enc, "-f"])
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
        proc = run(["decrypt", "--mode", "ctr", "--pbkdf2", "--iter", 1000, "--passphrase-env",
                    "PAES_TEST_PASS", enc, "-o", self.path("dec")], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.path("dec")), data)
        # The default count (10000) gives a different key: CTR decrypts to garbage.
        proc = run(["decrypt", "--mode", "ctr", "--pbkdf2", "--passphrase-env",
                    "PAES_TEST_PASS", enc, "-o", self.path("dec2")], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertNotEqual(read_file(self.path("dec2")), data, "--iter was ignored")
        proc = run(["encrypt", "--mode", "cbc", "--pbkdf2", "--iter", 1000, "--passphrase-env",
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


# --------------------------------------------------------------------------- 6. memory

class MemoryTest(PaesTestCase):
    """6: streaming 2 GiB keeps each paes under 128 MiB resident."""

    def test_two_gib_stream(self):
        head = shutil.which("head")
        if head is None:
            self.skipTest("no `head` command to generate the input stream")
        key = self.keygen(256)
        size = 2 * 1024 * 1024 * 1024
        out, codes, errs, rss = pipe([
            [head, "-c", str(size), "/dev/zero"],
            [PAES, "encrypt", "--key-file", key, "--threads", "4"],
            [PAES, "decrypt", "--key-file", key, "--json", "-o", "/dev/null"],
        ], rusage=True)
        self.assertEqual(codes, [0, 0, 0], f"exit codes {codes}, stderr {errs}")
        summary = json.loads(out)
        self.assertEqual(summary["bytes_out"], size, summary)
        self.assertEqual(summary["bytes_in"], sealed_len(size, DEFAULT_SEGMENT, 32), summary)
        print(f"\n    peak RSS: encrypt {rss[1] // 1024} MiB, decrypt {rss[2] // 1024} MiB",
              file=sys.stderr, end=" ")
        self.assertLess(rss[1], RSS_LIMIT_KIB, f"encrypt from a pipe peaked at {rss[1]} KiB")
        self.assertLess(rss[2], RSS_LIMIT_KIB, f"decrypt from a pipe peaked at {rss[2]} KiB")


# --------------------------------------------------------------------------- 7. progress

class ProgressTest(PaesTestCase):
    """7: --progress, silence by default when stderr is not a terminal, -v."""

    SIZE = 300 * 1024 * 1024
    # Read the output at no more than ~120 MiB/s, so the run lasts ~2.5 s whatever the CPU.
    SLOW = 1 / 120

    def big_input(self):
        inp = self.path("zeros.bin")
        with open(inp, "wb") as f:
            f.truncate(self.SIZE)  # sparse: costs no disk
        return inp

    def test_progress_shown(self):
        key = self.keygen(256)
        inp = self.big_input()
        start = time.monotonic()
        out, codes, errs, _ = pipe([[PAES, "encrypt", "--progress", "--engine", "serial",
                                     "--key-file", key, inp]], slow_read=self.SLOW)
        elapsed = time.monotonic() - start
        self.assertEqual(codes, [0], errs)
        self.assertEqual(len(out), sealed_len(self.SIZE, DEFAULT_SEGMENT, 32))
        text = errs[0].decode(errors="replace")
        lines = [l for l in re.split(r"[\r\n]", text) if l.strip()]
        shown = [l for l in lines if "%" in l and "/s" in l]
        self.assertTrue(shown, f"no progress line with '%' and '/s' after {elapsed:.1f} s: "
                               f"{text[-500:]!r}")
        self.assertFalse(any(l.startswith("paes: ") for l in lines),
                         f"an error line with --progress: {text[-500:]!r}")

    def test_silent_without_progress(self):
        key = self.keygen(256)
        inp = self.big_input()
        out, codes, errs, _ = pipe([[PAES, "encrypt", "--engine", "serial", "--key-file", key,
                                     inp]], slow_read=self.SLOW)
        self.assertEqual(codes, [0], errs)
        self.assertEqual(errs[0], b"", "stderr not a terminal, no --progress: expected silence")
        sealed = write_file(self.path("s.paes"), out)
        del out
        got, codes, errs, _ = pipe([[PAES, "decrypt", "--key-file", key, sealed]])
        self.assertEqual(codes, [0], errs)
        self.assertEqual(errs[0], b"")
        self.assertEqual(len(got), self.SIZE)
        # --no-progress wins even with a summary requested.
        proc = run(["decrypt", "--no-progress", "--key-file", key, sealed, "-o",
                    self.path("plain")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(proc.stderr, b"")

    def test_verbose_summary(self):
        key = self.keygen(128)
        inp = write_file(self.path("in"), os.urandom(100000))
        sealed = self.path("s.paes")
        for args, word in ((["encrypt", "-v", "--key-file", key, inp, "-o", sealed],
                            "paes: encrypted"),
                           (["decrypt", "-v", "--key-file", key, sealed, "-o",
                             self.path("plain")], "paes: decrypted"),
                           (["encrypt", "--verbose", "--mode", "ctr", "--iv", "00" * 16,
                             "--key-file", key, inp, "-o", self.path("ctr")],
                            "paes: encrypted")):
            proc = run(args)
            self.assertEqual(proc.returncode, 0, describe(proc))
            lines = error_lines(proc.stderr)
            self.assertEqual(len(lines), 1, f"{args}: expected one line, got {proc.stderr!r}")
            self.assertTrue(lines[0].startswith(word), f"{args}: {lines[0]!r}")
            self.assertEqual(proc.stdout, b"")
        self.assertEqual(read_file(self.path("plain")), read_file(inp))
        # -v with output on stdout: the summary stays on stderr.
        out, codes, errs, _ = pipe([[PAES, "encrypt", "-v", "--key-file", key, inp]])
        self.assertEqual(codes, [0], errs)
        self.assertEqual(len(out), sealed_len(100000, DEFAULT_SEGMENT, 16))
        self.assertTrue(errs[0].startswith(b"paes: encrypted"), errs[0])


# --------------------------------------------------------------------------- 8. keygen

class KeygenTest(PaesTestCase):
    """8: keygen writes a fresh 0600 hex key and never overwrites without -f."""

    def test_format_and_mode(self):
        for bits, digits in ((128, 32), (192, 48), (256, 64)):
            for umask in (0o022, 0o000):
                path = self.path(f"k-{bits}-{umask:o}")
                proc = subprocess.run([PAES, "keygen", "--key-bits", str(bits), "-o", path],
                                      capture_output=True, umask=umask, timeout=60)
                self.assertEqual(proc.returncode, 0, describe(proc))
                self.assertEqual(proc.stdout, b"")
                mode = stat.S_IMODE(os.stat(path).st_mode)
                self.assertEqual(mode, 0o600, f"{bits}-bit key with umask {umask:o}: mode {mode:o}")
                text = read_file(path)
                self.assertRegex(text.decode("ascii", errors="replace"),
                                 rf"\A[0-9a-f]{{{digits}}}\n\Z", f"{bits}-bit key file {text!r}")
        proc = run(["keygen", "-o", self.path("default")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(len(read_file(self.path("default"))), 65)
        keys = {read_file(self.path(f"k-256-{u:o}")) for u in (0o022, 0)}
        keys.add(read_file(self.path("default")))
        self.assertEqual(len(keys), 3, "keygen made the same key twice")

    def test_no_overwrite_without_force(self):
        path = write_file(self.path("existing"), b"precious\n", 0o644)
        self.assert_fails(["keygen", "-o", path], 1, "exists", out_dir=self.tmp)
        self.assertEqual(read_file(path), b"precious\n")
        proc = run(["keygen", "-f", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(read_file(path).decode(), r"\A[0-9a-f]{64}\n\Z")
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600,
                         "-f over a 0644 file left it readable by others")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["existing"])
        proc = run(["keygen", "--force", "--key-bits", "128", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(read_file(path).decode(), r"\A[0-9a-f]{32}\n\Z")

    def test_bad_key_bits(self):
        self.assert_fails(["keygen", "--key-bits", "100", "-o", self.path("k")], 2, "key-bits",
                          out_dir=self.tmp)

    def test_key_works_with_openssl(self):
        key = self.path("k")
        self.assertEqual(run(["keygen", "-o", key]).returncode, 0)
        hex_key = read_file(key).decode().strip()
        data = os.urandom(1000)
        inp = write_file(self.path("in"), data)
        iv = os.urandom(16).hex()
        proc = run(["encrypt", "--mode", "ctr", "--key-file", key, "--iv", iv, inp, "-o",
                    self.path("enc")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        o = subprocess.run([OPENSSL, "enc", "-aes-256-ctr", "-K", hex_key, "-iv", iv, "-in", inp],
                           capture_output=True)
        self.assertEqual(o.stdout, read_file(self.path("enc")))


# --------------------------------------------------------------------------- 9. recipients

BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
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


def bech32_polymod(values):
    """BIP-173's checksum of 5-bit values."""
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i, g in enumerate((0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3)):
            if top >> i & 1:
                chk ^= g
    return chk


def bech32_hrp_expand(hrp):
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def bech32_encode(hrp, data):
    """Bech32 (BIP-173, as age writes its keys, not Bech32m) of the bytes `data`, lower case."""
    bits = "".join(f"{b:08b}" for b in data)
    bits += "0" * (-len(bits) % 5)
    words = [int(bits[i:i + 5], 2) for i in range(0, len(bits), 5)]
    check = bech32_polymod(bech32_hrp_expand(hrp) + words + [0] * 6) ^ 1
    words += [check >> 5 * (5 - i) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32_CHARSET[w] for w in words)


def bech32_decode(text):
    """(hrp, bytes) of a Bech32 string in either case; ValueError when its checksum is wrong."""
    hrp, _, rest = text.lower().rpartition("1")
    words = [BECH32_CHARSET.index(c) for c in rest]
    if bech32_polymod(bech32_hrp_expand(hrp) + words) != 1:
        raise ValueError(f"bad Bech32 checksum in {text!r}")
    bits = "".join(f"{w:05b}" for w in words[:-6])
    return hrp, bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8))


def recipient_of_u(u):
    """The age1 recipient holding the 32-byte little-endian `u` (any value below 2^256)."""
    return bech32_encode("age", u.to_bytes(32, "little"))


def random_recipient():
    """A recipient that is a canonical X25519 key of no known identity."""
    return recipient_of_u(int.from_bytes(os.urandom(32), "little") % P25519 or 9)


def header_end(sealed):
    """Where a version-3 file's body starts: past the first header line starting with "---"
    and its LF (stanza lines start with "-> ", their bodies are base64)."""
    pos = PREAMBLE
    while not sealed.startswith(b"---", pos):
        pos = sealed.index(b"\n", pos) + 1
    return sealed.index(b"\n", pos) + 1


def stanzas(sealed):
    """The stanzas' first lines ("-> ..."), in the order of a version-3 file's header."""
    return [l for l in sealed[PREAMBLE:header_end(sealed)].split(b"\n") if l.startswith(b"-> ")]


class RecipientsCase(PaesTestCase):
    """Identities, recipients and the secret check of sections 9 and 9b."""

    def identity(self, name):
        """Makes an identity with paes; returns (path, recipient, secret line), checking keygen."""
        path = self.path(name)
        proc = run(["keygen", "--x25519", "-o", path])
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
            proc = run(["keygen", *args], input_bytes=stdin)
            self.assertEqual((proc.returncode, proc.stdout.decode(), proc.stderr), (0, recipient + "\n", b""),
                             f"keygen {args}")
        self.assert_fails(["keygen", "--x25519", "-o", path], 1, "exists")
        proc = run(["keygen", "--x25519", "-f", "-o", path])
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
        self.assertEqual(sealed[:PREAMBLE], b"PAES\x03\x03\x20" + bytes(5) + (64 << 10).to_bytes(4, "big") + bytes(16))
        b64 = "[A-Za-z0-9+/]{43}"
        self.assertRegex(sealed[PREAMBLE:header_end(sealed)].decode(),
                         rf"\A(-> X25519 {b64}\n{b64}\n){{2}}--- {b64}\n\Z")
        self.assertEqual(len(sealed) - header_end(sealed), sealed_len(len(data), 64 << 10, 32) - PREAMBLE)
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
            proc = run(["decrypt", "-i", a, "--range", spec, sealed, "-o", "-"])
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
        proc = run(["encrypt", "-R", "-", "-r", rb, inp, "-o", out], input_bytes=f"# a\n{ra}\n".encode())
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

        def refused(recipient, words):
            for where, args in (("-r", ["-r", recipient]),
                                ("-R", ["-R", write_file(self.path("r.txt"), f"{ra}\n{recipient}\n".encode())])):
                proc = run(["encrypt", *args, inp, "-o", out])
                problem = self.check_error(proc, 2, words, f"{where} {recipient!r}")
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
        ssh_blob = base64.b64encode(b"\0\0\0\x0bssh-ed25519\0\0\0\x20" + os.urandom(32)).decode()
        refused(f"ssh-ed25519 {ssh_blob} user@host", "ssh public key")
        refused("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ user@host", "ssh public key")
        refused(bech32_encode("age1yubikey", os.urandom(33)), "age plugin recipient")
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
             "ssh key", ()),
            (f"# a yubikey\n{plugin}\n".encode(), "line 2: an age plugin identity", (plugin,)),
            (f"paes-x25519-secret:{bech32_decode(good)[1].hex()}\n".encode(), "unreleased version-2", (good,)),
            (f"# created: now\n\n{garbled}\n".encode(), "line 3: not an age identity", (garbled,)),
        ]
        for i, (text, words, secrets) in enumerate(cases):
            ident = write_file(self.path(f"id-{i}"), text, 0o600)
            for args in (["decrypt", "-i", ident, sealed, "-o", os.path.join(out_dir, "x")], ["keygen", "-y", ident]):
                proc = run(args)
                problem = self.check_error(proc, 1, words, f"{args[0]} of {text[:40]!r}")
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
    def test_age_and_version_2_files_named(self):
        p, rp, _ = self.identity("p.key")
        plain = write_file(self.path("plain"), b"an age file\n")
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "x")
        for armor in ([], ["-a"]):
            aged = self.path(f"f{len(armor)}.age")
            proc = subprocess.run([AGE, "-r", rp, *armor, "-o", aged, plain], capture_output=True, timeout=60)
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assert_fails(["decrypt", "-i", p, aged, "-o", out], 1, "an age file, not a paes file",
                              out_dir=out_dir)
            self.assert_fails(["decrypt", "-i", p, "-o", out], 1, "an age file, not a paes file", out_dir=out_dir,
                              input_bytes=read_file(aged))
            self.assert_fails(["rekey", "-i", p, "-r", rp, aged, "-o", out], 1, "an age file, not a paes file",
                              out_dir=out_dir)
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
        proc = run(["rekey", *args])
        self.assertEqual((proc.returncode, proc.stdout), (0, b""), f"rekey {what}: {describe(proc)}")
        return proc

    def assert_same_body(self, before, after, what):
        self.assertEqual(after[:PREAMBLE], before[:PREAMBLE], f"{what}: the preamble changed")
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
                         rf"\Apaes: rekey: 1 recipient -> 2, {body_len} body bytes copied unchanged[^\n]*\n\Z")
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
            v1 = write_file(self.path("v1.paes"), self.seal(data, key_args, env=env))
            self.assert_fails(["rekey", "-i", a, "-r", rb, v1, "-o", out], 2, "not to recipients", out_dir=out_dir)
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
        proc = run(["rekey", "--help"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("removing a recipient is not revocation", " ".join(proc.stdout.decode().lower().split()))


# --------------------------------------------------------------------------- main

def main():
    global PAES, OPENSSL
    PAES, OPENSSL, rest = tool_paths(__doc__)
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
