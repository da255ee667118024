#!/usr/bin/env python3
"""Small jobs through the real binary: the threads paes runs and the memory it takes
follow the input's size, not --threads.

Run as:  python3 tests/cli/test_small_jobs.py --paes build/release/paes \\
             --shim build/release/tests/libpaes_fault_inject.so

  - A 1 MiB sealed file decrypts on one thread, given --threads 4 or the default:
    as many threads in /proc/PID/task as --threads 1 has, counted while the fault
    shim (tests/fault/fault_inject.c) holds paes in its read of the final segment;
    and "threads": 1 in --json.
  - A 512 KiB stream (stdin to stdout) with --threads 4 runs one cipher worker
    beside the reader and the writer: as many threads as --threads 1, while paused.
  - And the other side, so that "always one worker" fails too: a 4 MiB file with
    --threads 4 reports "threads": 4 in --json and has more threads than --threads 1
    while paused in its last read; the same 4 MiB as a stream in 64 KiB chunks, paused
    64 KiB before its end, has started a worker per MiB read: two more threads than
    --threads 1 (three workers against one).
  - --threads 4096 --chunk-size 16 over a 3 MB file and over a pipe peaks (ru_maxrss
    of that child alone) within 32 MiB of the same job with --threads 1: the input pays
    for two workers (one per MiB), not 4096, so the runs differ by one worker (the
    workers' memory had grown with the thread count: 870 MB against 10 MB).
  - A 2 KiB sealed stream faults in no more pages with 1 MiB segments than with
    64 KiB ones (ru_minflt, within 128 pages): its slots are not zeroed whole.

No test times anything. Python 3.9+ standard library only; Linux only (/proc, LD_PRELOAD).
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness.fault_shim import fault_shim_env  # noqa: E402
from harness import (ScratchTestCase, describe, killed_unless_finished, path_option, run_unittest,  # noqa: E402
                     tool_paths, wait_for_pause, write_file)

PAES = "paes"
SHIM = "libpaes_fault_inject.so"
MIB = 1024 * 1024
KEY = bytes(range(32))
IV = bytes(range(16, 32))
RUN_TIMEOUT = 120
RSS_MARGIN_KIB = 32 * 1024  # 4096 workers took 860 MB more than 2 did; 2 peak within 1.5 MiB of 1
# 4 KiB pages: less than one whole 1 MiB segment (256 pages), which a single
# zeroed slot faults in (zeroed slots made 1 MiB segments fault in ~300 more).
# TSan's allocator maps 10 to 140 pages more for a 1 MiB buffer it never
# touches (15 runs; 128, half a MiB, failed one run in seven under TSan).
PAGE_MARGIN = 255


class SmallJobs(ScratchTestCase):
    ctest_labels = ("threads",)
    prefix = "paes-small-jobs-"

    def setUp(self):
        super().setUp()
        self.key = write_file(self.path("key"), KEY.hex().encode(), 0o600)

    def paused_threads(self, cmd, pause_at, stdin_path=None, read_path=None):
        """Runs `cmd` until its read of the input reaches byte `pause_at`; returns the
        threads it had then (/proc/PID/task) once it finished successfully."""
        pause_file = self.path("paused")
        faults = {"pause_at": pause_at, "pause_file": pause_file}
        faults.update({"read_fd": 0} if stdin_path else {"read_path": read_path})
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        with open(self.path("stdout"), "wb") as stdout:
            proc = subprocess.Popen(cmd, env=fault_shim_env(SHIM, **faults), stdin=stdin, stdout=stdout,
                                    stderr=subprocess.PIPE)
            try:
                with killed_unless_finished(proc):
                    wait_for_pause(proc, pause_file, timeout=RUN_TIMEOUT)
                    threads = len(os.listdir(f"/proc/{proc.pid}/task"))
                    os.remove(pause_file)
                    _, err = proc.communicate(timeout=RUN_TIMEOUT)
            finally:
                if stdin_path:
                    stdin.close()
        self.assertEqual(proc.returncode, 0, err)
        return threads

    def usage(self, cmd, stdin_path=None):
        """Runs `cmd`; its resource usage (that child's alone)."""
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, for its rusage
            err = proc.stderr.read()
            proc.stderr.close()
        finally:
            if stdin_path:
                stdin.close()
        self.assertEqual(proc.returncode, 0, err)
        return usage

    def test_1mib_sealed_decrypt_runs_one_thread(self):
        plain = write_file(self.path("plain"), os.urandom(MIB))
        sealed = self.path("sealed")
        proc = subprocess.run([PAES, "encrypt", "--key-file", self.key, plain, "-o", sealed], capture_output=True,
                              timeout=RUN_TIMEOUT)
        self.assertEqual(proc.returncode, 0, describe(proc))
        final_segment = os.path.getsize(sealed) - 20  # the short last segment, read after the first

        def decrypt_command(threads):
            return [PAES, "decrypt", "--key-file", self.key, sealed, "-o", self.path("out"), "-f", *threads]
        # Counted against --threads 1, so that a sanitizer's own thread (TSan's) counts on both sides.
        one = self.paused_threads(decrypt_command(["--threads", "1"]), final_segment, read_path=sealed)
        for threads in (["--threads", "4"], []):
            with self.subTest(threads=threads or "default"):
                cmd = decrypt_command(threads)
                self.assertEqual(self.paused_threads(cmd, final_segment, read_path=sealed), one,
                                 "a 1 MiB job started a thread team it can't use")
                proc = subprocess.run(cmd + ["--json"], capture_output=True, timeout=RUN_TIMEOUT)
                self.assertEqual(proc.returncode, 0, describe(proc))
                self.assertEqual(json.loads(proc.stdout)["threads"], 1)

    def test_short_stream_runs_one_worker(self):
        plain = write_file(self.path("plain"), os.urandom(512 * 1024))
        cmd = [PAES, "encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(), "--chunk-size", "64K",
               "--threads"]
        # Paused after seven 64 KiB chunks were read: the reader, one worker and the writer,
        # as with --threads 1 (6 threads had started: every worker at once).
        one = self.paused_threads(cmd + ["1"], 448 * 1024, stdin_path=plain)
        self.assertEqual(self.paused_threads(cmd + ["4"], 448 * 1024, stdin_path=plain), one)

    def test_4mib_runs_the_threads_it_pays_for(self):
        plain = write_file(self.path("plain"), os.urandom(4 * MIB))
        with self.subTest("file"):
            def file_command(threads):
                return [PAES, "encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(), plain,
                        "-o", self.path("out"), "-f", "--threads", threads]
            proc = subprocess.run(file_command("4") + ["--json"], capture_output=True, timeout=RUN_TIMEOUT)
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assertEqual(json.loads(proc.stdout)["threads"], 4, "a 4 MiB file pays for four workers")
            one = self.paused_threads(file_command("1"), 4 * MIB - 1, read_path=plain)
            self.assertGreater(self.paused_threads(file_command("4"), 4 * MIB - 1, read_path=plain), one,
                               "a 4 MiB file ran no more threads with --threads 4 than with --threads 1")
        with self.subTest("stream"):
            cmd = [PAES, "encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(), "--chunk-size", "64K",
                   "--threads"]
            # Paused in the read of the last 64 KiB chunk: 4 MiB - 64 KiB read, so three workers started.
            one = self.paused_threads(cmd + ["1"], 4 * MIB - 64 * 1024, stdin_path=plain)
            self.assertEqual(self.paused_threads(cmd + ["4"], 4 * MIB - 64 * 1024, stdin_path=plain), one + 2,
                             "a stream started no worker per MiB read")

    def test_memory_follows_the_input_not_threads(self):
        # 3 MB pays for two workers: --threads 4096 runs two, --threads 1 one. (Against --threads 2, both
        # runs had two workers.)
        plain = write_file(self.path("plain"), os.urandom(3_000_000))
        for label, stdin, ends in (("files", None, [plain, "-o", self.path("out"), "-f"]),
                                   ("pipe", plain, [])):
            with self.subTest(label):
                def peak(threads):
                    return self.usage([PAES, "encrypt", "--mode", "ctr", "--key-file", self.key, "--iv",
                                              IV.hex(), "--chunk-size", "16", "--threads", str(threads), *ends],
                                      stdin_path=stdin).ru_maxrss
                few, many = peak(1), peak(4096)
                self.assertLessEqual(many, few + RSS_MARGIN_KIB,
                                     f"--threads 4096 peaked at {many} KiB, --threads 1 at {few} KiB")

    def test_short_stream_faults_in_no_whole_segment(self):
        # A stream's slots are sized for a whole segment before its length is known:
        # zeroing them faulted in its pages (1 MiB per slot) for a 2 KiB stream.
        plain = write_file(self.path("plain"), os.urandom(2048))
        faults = {}
        for segment in ("64K", "1M"):
            faults[segment] = self.usage([PAES, "encrypt", "--key-file", self.key, "--segment-size", segment],
                                         stdin_path=plain).ru_minflt
        self.assertLessEqual(faults["1M"], faults["64K"] + PAGE_MARGIN,
                             f"page faults with 1 MiB segments against 64 KiB ones: {faults}")


def main():
    global PAES, SHIM
    PAES, _, rest = tool_paths(__doc__)
    SHIM, rest = path_option(rest, "--shim", "the fault injection library (tests/fault/fault_inject.c)")
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
