#!/usr/bin/env python3
"""Sealed and raw streams through real pipes, the memory of a 2 GiB stream, and progress.

Run as:  python3 tests/cli/test_sealed_streams.py --paes build/release/paes --openssl /usr/bin/openssl [TestClass ...]

One of the test_sealed_*.py files (the ctests cli_sealed.<class>); their shared helpers are
in tests/harness (sealed_cases, sealed_format, pipes). Covers:
  2. Real pipes (Popen chains, no shell): sealed and every raw mode against `openssl enc`,
     file -> stdout and stdin -> file; a tampered stream decrypted to a pipe exits 1 and
     what came out is a verified prefix of the plaintext.
  6. Memory: 2 GiB sealed from a pipe and opened from a pipe, each paes under 128 MiB RSS.
  7. --progress (a line with "%" and "/s"), silence without it, -v's one summary line.

Python 3.11 standard library only. Exits non-zero when any test fails; every skip says why.
"""

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import describe, error_lines, read_file, run_paes, run_test_script, write_file  # noqa: E402
from harness.oracles import RAW_MODES  # noqa: E402
from harness.pipes import ended_within, pipe  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402
from harness.sealed_format import (DEFAULT_SEGMENT, TAG_LEN, first_segment_capacity, sealed_len,  # noqa: E402
                                   segment_spans)

PAES = "paes"
OPENSSL = "openssl"
RSS_LIMIT_KIB = 128 * 1024


# --------------------------------------------------------------------------- 2. pipes

class PipeTest(SealedTestCase):
    """2: real pipes between processes."""
    ctest_labels = ("threads",)

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
        for mode in RAW_MODES:
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

            def write_into_fifo():
                with open(fifo, "wb") as w:  # waits for paes to open the other end
                    w.write(self.data)
            writer = threading.Thread(target=write_into_fifo, daemon=True)
            writer.start()
            proc = run_paes(["encrypt", "--key-file", self.key, *extra, fifo, "-o", sealed])
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
        p0 = first_segment_capacity(seg, 32)
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
            verified = 0 if bad == 0 else p0 + (bad - 1) * (seg - TAG_LEN)
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


# --------------------------------------------------------------------------- 6. memory

class MemoryTest(SealedTestCase):
    """6: streaming 2 GiB keeps each paes under 128 MiB resident."""
    ctest_labels = ("threads",)

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

class ProgressTest(SealedTestCase):
    """7: --progress, silence by default when stderr is not a terminal, -v."""
    ctest_labels = ("threads",)

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

    def run_on_terminal_slowly(self, key, inp, slave, master):
        """paes encrypt with stderr on the terminal `slave` (automatic progress), its output read
        at ~120 MiB/s; returns what the terminal showed."""
        shown = bytearray()
        stop = threading.Event()

        def drain():
            while not stop.is_set():
                try:
                    shown.extend(os.read(master, 4096))
                except OSError:  # EIO: nothing left open on the terminal
                    return

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        proc = subprocess.Popen([PAES, "encrypt", "--engine", "serial", "--key-file", key, inp],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
        try:
            while block := proc.stdout.read(1 << 20):
                time.sleep(self.SLOW * len(block) / (1 << 20))
            self.assertEqual(proc.wait(timeout=60), 0)
        finally:
            proc.stdout.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        time.sleep(0.2)  # what paes wrote last, through the terminal to the reader
        stop.set()
        return bytes(shown)

    def test_one_progress_line_per_terminal(self):
        """Two paes on one terminal (`paes encrypt | paes decrypt -o x`) draw one progress line:
        each draws only while it holds a lock on the terminal. Held here, paes draws nothing;
        free, it draws."""
        key = self.keygen(256)
        inp = self.big_input()
        with self.terminal() as (master, slave):
            with open(os.ttyname(slave), "rb") as holder:
                fcntl.flock(holder, fcntl.LOCK_EX)
                held = self.run_on_terminal_slowly(key, inp, slave, master)
            free = self.run_on_terminal_slowly(key, inp, slave, master)
        self.assertNotIn(b"%", held, f"drew while another held the terminal: {held[-300:]!r}")
        self.assertIn(b"MiB/s", free, f"no progress line on a free terminal: {free[-300:]!r}")

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
        proc = run_paes(["decrypt", "--no-progress", "--key-file", key, sealed, "-o",
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
            proc = run_paes(args)
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


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
