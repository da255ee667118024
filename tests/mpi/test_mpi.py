#!/usr/bin/env python3
"""End-to-end tests of paes' MPI engine (`mpiexec -n N paes ... --engine mpi`), with the
threads engine and the `openssl` command as the oracles.

Run as:  python3 tests/mpi/test_mpi.py --paes build/release/paes --openssl /usr/bin/openssl \
             [--mpiexec /usr/bin/mpiexec]

Covers:
  1. Raw modes are byte-identical to `openssl enc` and to --engine threads: at 2 ranks
     every mode (ecb cbc cfb cfb8 cfb1 ofb ctr) x AES-128/192/256 x encrypt/decrypt with
     sizes 0, 1, 17, ~1 KiB with --chunk-size 16 and a few hundred KiB with an odd tail
     with --chunk-size 4K (cfb1: tens of KiB); at 1, 3 and 4 ranks a subset (ctr both
     ways, ecb both ways, cbc/cfb/cfb8/cfb1 decryption, ofb) with the same small sizes,
     fewer chunks than ranks, and a big odd size; ecb/cbc --no-pad at 2 and 4 ranks.
     Sequential directions print exactly one "paes: note:" line, parallel ones none.
  2. Sealed round trips across engines: sealed under MPI (2, 3, 4 ranks, --segment-size
     4K and the default, AES-128 and AES-256 keys from `paes keygen`, sizes 0, 1 and
     several segments per rank) opens with --engine threads and serial; sealed by threads
     opens under MPI; a passphrase file (AES-256, with or without --key-bits 256) with
     --scrypt-log-n 10 both ways, and --key-bits 128 with a passphrase refused under MPI.
  3. Failures under MPI: one flipped byte in the last quarter of a 4K-segment file (rank
     3's range with 4 ranks) -> "authentication failed"; a missing input; an existing
     output without -f (left untouched); a wrong sealed key (-> "header MAC mismatch",
     from rank 0's header check); a raw CBC decryption whose
     padding is bad (the last rank's chunk) or whose length is not whole blocks; a rank
     that sees another input file than rank 0 (longer, or another file of the same size);
     an input renamed over while rank 0 reads its header (paused by the fault shim),
     and, the other way round, a rename after each rank opened the input fails nothing.
     Each exits non-zero with one "paes: " line and leaves nothing in the output directory.
  4. Sequential directions (cbc/cfb/cfb8/cfb1 encryption, ofb both ways) with 3 ranks give
     openssl's bytes and print the note once.
  5. stdin, stdout and other streams are refused under MPI: exit 2, a message naming
     MPI, no file made.
  6. --json with 3 ranks: one object, engine "mpi", "ranks" with 3 entries of
     {compute_seconds, io_seconds, bytes_in, threads}, balanced bytes_in summing to the
     input size (raw modes, sealed encryption, sealed decryption).
  7. MPI only when asked: a plain `paes encrypt` has no MPI library in its memory map
     (paes-mpi, the same check's positive control, has), SIGHUP ignored at its start
     (nohup) stays ignored, also in paes-mpi under mpiexec (UCX installs a SIGHUP
     handler as it loads), and `mpiexec paes --engine mpi` runs the ranks of paes-mpi.
  8. A fault on one rank only (the fault shim preloaded on rank k through mpiexec's
     MPMD syntax): EIO from fsync on rank 1 (sealed and CTR), ENOSPC writing and EIO
     reading on rank 2 of 3: every rank exits 1 (each rank's status is recorded),
     one message names the rank, the output directory stays empty. Without faults
     every rank exits 0; when rank 0 refuses (an existing output), every rank exits 1.
  9. Two hosts on this machine (127.0.0.1 and 127.0.0.2, launched by fork, MPICH's
     node-local path off: MPIR_CVAR_NOLOCAL=1, UCX over TCP only): sealed and CTR round trips
     across them (each rank, alone on its host, takes every CPU), and SIGKILL of rank 1
     mid-run (paused by the fault shim), after which nothing is left in the output
     directory.
 10. Ranks x GPUs (a build with the opencl backend and an OpenCL device, else skipped with
     the reason): 2 ranks with --backend opencl, CTR encryption and CBC decryption of a
     3 MiB file give openssl's bytes, and --json's ranks say that rank r ran opencl on
     device r modulo the node's device count (PoCL is asked for two CPU devices,
     POCL_DEVICES, so that the two ranks' devices differ), or every rank on --device's;
     -v names each rank's device. A rank whose host lists no OpenCL device (the ICD
     loader pointed at no vendors, OCL_ICD_VENDORS) runs the CPU's backend, with the
     same bytes.

Python 3.9+ standard library only. Exits non-zero when any test fails; every skip says why
(no mpiexec, or a paes built without the mpi engine, skips everything).
"""

import argparse
import json
import os
import stat
import shutil
import signal
import subprocess
import sys
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launchers import Launcher, Ranks, Unsupported  # noqa: E402
from harness.fault_shim import fault_shim_variables  # noqa: E402
from harness import (ScratchTestCase, describe, killed_unless_finished, openssl_ok,  # noqa: E402
                     oracle_input_and_output, raw_args, read_file, run_paes, run_unittest, tool_paths,
                     wait_for_pause, write_file)

PAES = "paes"
OPENSSL = "openssl"
MPIEXEC = None
LAUNCHER = None  # launchers.Launcher of MPIEXEC: every launch is spelled there
SHIM = None  # the fault injection library (tests/fault/fault_inject.c), or None
SKIP_REASON = None  # set by main() when the MPI tests cannot run at all

MODES = ["ecb", "cbc", "cfb", "cfb8", "cfb1", "ofb", "ctr"]
KEY_BITS = [128, 192, 256]
DIRECTIONS = ["encrypt", "decrypt"]
# Directions that run on rank 0 alone (and print one note) under MPI.
SEQUENTIAL = {("encrypt", "cbc"), ("encrypt", "cfb"), ("encrypt", "cfb8"), ("encrypt", "cfb1"),
              ("encrypt", "ofb"), ("decrypt", "ofb")}
# mpiexec start-up dominates; two runs side by side keep the 2-core machine busy.
POOL = ThreadPoolExecutor(max_workers=2)


# --------------------------------------------------------------------------- helpers

def mpiexec_command(groups, **options):
    """(argv, environment) of mpiexec starting `groups` (launchers.Ranks). Open MPI's
    ranks talk over TCP alone, the transport every cluster has (its node-local and
    UCX paths off). MPICH's use the transports UCX picks, but for the two-hosts tests:
    over TCP alone, Debian's MPICH 4.0.2 would hang in MPI_Finalize now and then, and
    paes' way out of that (docs/CLUSTER.md) ends such a job 0.25 s late."""
    options.setdefault("tcp_only", LAUNCHER.flavor == "openmpi")
    return LAUNCHER.command(groups, **options)


def run_mpi(ranks, args, timeout=120):
    """`mpiexec -n ranks paes args`; stdin is /dev/null (both launchers forward stdin)."""
    cmd, env = mpiexec_command([Ranks(ranks, [PAES] + list(args))])
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, env=env)


def mpi_cmd(ranks, args):
    return " ".join(mpiexec_command([Ranks(ranks, [PAES] + list(args))])[0])


def stderr_lines(proc):
    return [l for l in proc.stderr.decode(errors="replace").splitlines() if l.strip()]


def note_lines(proc):
    return [l for l in stderr_lines(proc) if l.startswith("paes: note:")]


def raw_args_with_key_file(direction, mode, key_file, iv, inp, out, chunk=None, nopad=False, extra=()):
    """harness.raw_args with the key in `key_file`, --chunk-size `chunk` and --no-pad."""
    options = (["--chunk-size", chunk] if chunk is not None else []) + (["--no-pad"] if nopad else [])
    return raw_args(direction, mode, ["--key-file", key_file], iv, options + list(extra), inp, out)


class MpiTestCase(ScratchTestCase):
    prefix = "paes-mpi-"

    @classmethod
    def setUpClass(cls):
        if SKIP_REASON:
            raise unittest.SkipTest(SKIP_REASON)

    def random_key_file(self, bits):
        """A hex key file holding a fresh random key; returns (path, key)."""
        key = os.urandom(bits // 8)
        return self.key_file(key), key

    def expect_mpi_failure(self, ranks, args, out_dir, substring=None, code=None, before=None):
        """The MPI run must exit non-zero (`code` if given), print one 'paes: ' line (with
        `substring`), print nothing on stdout, and leave `out_dir` as it was."""
        if before is None:
            before = sorted(os.listdir(out_dir))
        proc = run_mpi(ranks, args)
        cmd = mpi_cmd(ranks, args)
        lines = stderr_lines(proc)
        if code is None:
            self.check(proc.returncode != 0, f"{cmd}: expected failure, got {describe(proc)}")
        else:
            self.check(proc.returncode == code, f"{cmd}: expected exit {code}, got {describe(proc)}")
        self.check(len(lines) == 1 and lines[0].startswith("paes: "),
                   f"{cmd}: expected one 'paes: ' line on stderr, got {lines!r}")
        if substring is not None:
            self.check(any(substring.lower() in l.lower() for l in lines),
                       f"{cmd}: stderr lacks {substring!r}: {lines!r}")
        self.check(proc.stdout == b"", f"{cmd}: unexpected stdout {proc.stdout[:200]!r}")
        after = sorted(os.listdir(out_dir))
        self.check(after == before, f"{cmd}: output directory changed: {before} -> {after}")
        return proc


# --------------------------------------------------------------------------- 1. oracle

class OracleTest(MpiTestCase):
    """1: raw modes under MPI give openssl's bytes and the threads engine's bytes."""
    ctest_labels = ("slow",)

    def mpi_oracle_problems(self, ranks, direction, mode, bits, size, chunk, nopad=False):
        """Returns a list of problems (empty when the case passed)."""
        d = self.new_dir(self.unique_name("case-"))
        key_file, key = self.random_key_file(bits)
        iv = os.urandom(16)
        plaintext = os.urandom(size)
        source, expected = oracle_input_and_output(direction, mode, key, iv, plaintext, nopad)
        inp = write_file(os.path.join(d, "in.bin"), source)
        out_dir = os.path.join(d, "out")
        os.makedirs(out_dir)
        what = (f"{direction} {mode}-{bits} size {size} ranks={ranks} chunk={chunk} "
                f"nopad={nopad}")
        problems = []

        out_t = os.path.join(out_dir, "threads.bin")
        args_t = raw_args_with_key_file(direction, mode, key_file, iv, inp, out_t, chunk, nopad,
                          ["--engine", "threads", "--threads", "2"])
        proc = run_paes(args_t)
        if proc.returncode != 0:
            problems.append(f"{what}: threads engine {describe(proc)}")
        elif read_file(out_t) != expected:
            problems.append(f"{what}: threads engine differs from openssl")

        out_m = os.path.join(out_dir, "mpi.bin")
        args_m = raw_args_with_key_file(direction, mode, key_file, iv, inp, out_m, chunk, nopad,
                          ["--engine", "mpi"])
        proc = run_mpi(ranks, args_m)
        cmd = mpi_cmd(ranks, args_m)
        if proc.returncode != 0:
            return problems + [f"{what}: {describe(proc)}  [{cmd}]"]
        got = read_file(out_m) if os.path.exists(out_m) else None
        if got != expected:
            problems.append(f"{what}: MPI output differs from openssl "
                            f"({None if got is None else len(got)} vs {len(expected)} bytes) [{cmd}]")
        notes = note_lines(proc)
        others = [l for l in stderr_lines(proc) if l not in notes]
        if others:
            problems.append(f"{what}: unexpected stderr {others!r}")
        if (direction, mode) in SEQUENTIAL and ranks > 1:
            if len(notes) != 1:
                problems.append(f"{what}: expected one 'paes: note:' line, got {notes!r}")
        elif (direction, mode) not in SEQUENTIAL and notes:
            problems.append(f"{what}: unexpected note for a parallel direction: {notes!r}")
        left = sorted(os.listdir(out_dir))
        if left != ["mpi.bin", "threads.bin"]:
            problems.append(f"{what}: output directory holds {left}")
        shutil.rmtree(d, ignore_errors=True)
        return problems

    def test_two_ranks_every_mode(self):
        """Modes x key sizes x directions at 2 ranks."""
        cases = []
        for mode in MODES:
            big, medium = (24 * 1024 + 3, 333) if mode == "cfb1" else (300 * 1024 + 7, 1000 + 5)
            for bits in KEY_BITS:
                for direction in DIRECTIONS:
                    cases.append((2, direction, mode, bits, big, "4K"))
                    cases.append((2, direction, mode, bits, medium, "16"))
                    # Tiny sizes: one key size per (mode, direction), rotating.
                    if bits == KEY_BITS[(MODES.index(mode) + DIRECTIONS.index(direction)) % 3]:
                        for size in (0, 1, 17):
                            cases.append((2, direction, mode, bits, size, "16"))
        self.run_cases(self.mpi_oracle_problems, cases, POOL)

    def test_one_three_four_ranks(self):
        """A subset of modes/directions at 1, 3 and 4 ranks, incl. fewer chunks than ranks."""
        subset = [("encrypt", "ctr"), ("decrypt", "ctr"), ("encrypt", "ecb"), ("decrypt", "ecb"),
                  ("decrypt", "cbc"), ("decrypt", "cfb"), ("decrypt", "cfb8"),
                  ("decrypt", "cfb1"), ("encrypt", "ofb")]
        cases = []
        for ranks in (1, 3, 4):
            for i, (direction, mode) in enumerate(subset):
                bits = KEY_BITS[(i + ranks) % 3]
                sizes = [(0, "16"), (1, "16"), (17, "16"),
                         (4096 + 5, "4K"),            # 2 chunks: fewer than 3 or 4 ranks
                         (2 * 4096 + 1, "4K"),        # 3 chunks
                         (12 * 1024 + 3 if mode == "cfb1" else 200 * 1024 + 13, "4K")]
                if mode in ("ecb", "cbc"):
                    sizes.append((3 * 16 - 1, "16"))  # padding fills the 3rd block
                for size, chunk in sizes:
                    cases.append((ranks, direction, mode, bits, size, chunk))
        self.run_cases(self.mpi_oracle_problems, cases, POOL)

    def test_no_pad(self):
        cases = []
        for ranks in (2, 4):
            for mode in ("ecb", "cbc"):
                for direction in DIRECTIONS:
                    for size, chunk in ((0, "16"), (48, "16"), (64 * 1024, "4K")):
                        cases.append((ranks, direction, mode, 256, size, chunk, True))
        self.run_cases(self.mpi_oracle_problems, cases, POOL)


# --------------------------------------------------------------------------- 2. sealed

class SealedTest(MpiTestCase):
    """2: sealed files cross between the MPI, threads and serial engines."""

    def seal_open(self, seal, open_, key_args, size, seg, label):
        """Seals with `seal` ("mpi:N", "threads", "serial") and opens with `open_`;
        returns a list of problems."""
        d = self.new_dir(self.unique_name("sealed-"))
        data = os.urandom(size)
        inp = write_file(os.path.join(d, "in.bin"), data)
        sealed = os.path.join(d, "sealed.paes")
        back = os.path.join(d, "back.bin")
        seg_args = ["--segment-size", seg] if seg else []
        what = f"{label} size {size} segment={seg or 'default'} sealed by {seal}, opened by {open_}"

        def go(engine, args):
            if engine.startswith("mpi:"):
                args = args[:1] + ["--engine", "mpi"] + args[1:]
                return run_mpi(int(engine[4:]), args), mpi_cmd(int(engine[4:]), args)
            args = args[:1] + ["--engine", engine] + args[1:]
            return run_paes(args), "paes " + " ".join(map(str, args))

        proc, cmd = go(seal, ["encrypt"] + key_args + seg_args + [inp, "-o", sealed])
        if proc.returncode != 0 or not os.path.exists(sealed):
            return [f"{what}: sealing failed: {describe(proc)} [{cmd}]"]
        problems = []
        if stderr_lines(proc):
            problems.append(f"{what}: unexpected stderr while sealing: {stderr_lines(proc)!r}")
        open_args = []  # the scrypt cost and key size are read from the file
        skip = 0
        for a in key_args:
            if skip:
                skip -= 1
            elif a in ("--scrypt-log-n", "--key-bits"):
                skip = 1
            else:
                open_args.append(a)
        proc, cmd = go(open_, ["decrypt"] + open_args + [sealed, "-o", back])
        if proc.returncode != 0:
            return problems + [f"{what}: opening failed: {describe(proc)} [{cmd}]"]
        if read_file(back) != data:
            problems.append(f"{what}: round trip differs [{cmd}]")
        left = sorted(os.listdir(d))
        if left != ["back.bin", "in.bin", "sealed.paes"]:
            problems.append(f"{what}: directory holds {left}")
        shutil.rmtree(d, ignore_errors=True)
        return problems

    def test_keys_across_engines(self):
        keys = {bits: self.keygen(bits) for bits in (128, 256)}
        cases = []
        for ranks in (2, 3, 4):
            mpi = f"mpi:{ranks}"
            for seg, big in (("4K", 100 * 1024 + 3), (None, 5 * 1024 * 1024 + 17)):
                for bits in (128, 256):
                    key_args = ["--key-file", keys[bits]]
                    label = f"AES-{bits}"
                    # Big: several segments per rank; sealed under MPI, opened by threads
                    # and serial; sealed by threads, opened under MPI.
                    cases.append((mpi, "threads", key_args, big, seg, label))
                    cases.append((mpi, "serial", key_args, big, seg, label))
                    cases.append(("threads", mpi, key_args, big, seg, label))
                    if seg == "4K" or bits == 256:
                        for size in (0, 1):
                            cases.append((mpi, "threads", key_args, size, seg, label))
                            cases.append(("threads", mpi, key_args, size, seg, label))
            # A whole number of segments' plaintext, and one byte more (4K segments).
            cases.append((mpi, "serial", ["--key-file", keys[256]], 8 * (4096 - 16) - 24, "4K",
                          "AES-256 exact"))
            cases.append((mpi, "threads", ["--key-file", keys[128]], 8 * (4096 - 16) - 23, "4K",
                          "AES-128 exact+1"))
        self.run_cases(self.seal_open, cases, POOL)

    def test_passphrase_across_engines(self):
        pw = write_file(self.path("pass.txt"), b"correct horse battery staple\n", 0o600)
        # A passphrase's file is AES-256 (its scrypt stanza wraps a random file key): --key-bits
        # 256 may be said, and 128 is refused under MPI as it is by the other engines.
        out_dir = self.new_dir("refused")
        inp = write_file(self.path("refused-in.bin"), os.urandom(1000))
        self.expect_mpi_failure(2, ["encrypt", "--engine", "mpi", "--passphrase-file", pw, "--scrypt-log-n", "10",
                                    "--key-bits", "128", inp, "-o", os.path.join(out_dir, "sealed.paes")],
                                out_dir, "AES-256", code=2)
        cases = []
        for bits_args in ([], ["--key-bits", "256"]):
            key_args = ["--passphrase-file", pw, "--scrypt-log-n", "10"] + bits_args
            label = f"passphrase {' '.join(bits_args) or 'AES-256'}"
            cases.append(("mpi:3", "threads", key_args, 50 * 1024 + 1, "4K", label))
            cases.append(("threads", "mpi:4", key_args, 50 * 1024 + 1, "4K", label))
            cases.append(("mpi:2", "serial", key_args, 1, None, label))
        self.run_cases(self.seal_open, cases, POOL)


    def test_recipients_across_engines(self):
        """Version 3 (recipients): sealed under MPI, opened by each identity under
        MPI and threads; a header whose stanzas were swapped (its MAC no longer
        verifies) is refused by rank 0 before any rank gets the job."""
        ids = []
        for i in range(2):
            path = self.path(f"id{i}.txt")
            proc = run_paes(["keygen", "--x25519", "-o", path])
            self.assertEqual(proc.returncode, 0, describe(proc))
            ids.append((path, proc.stdout.decode().strip()))
        data = os.urandom(70 * 1024 + 5)
        inp = write_file(self.path("in.bin"), data)
        sealed = self.path("sealed.paes")
        args = ["encrypt", "--engine", "mpi", "--segment-size", "4K", "-r", ids[0][1], "-r", ids[1][1], inp,
                "-o", sealed]
        proc = run_mpi(3, args)
        self.assertEqual(proc.returncode, 0, describe(proc))
        for identity, _ in ids:
            for engine in ("mpi", "threads"):
                back = self.path(f"back-{engine}.bin")
                open_args = ["decrypt", "--engine", engine, "-i", identity, sealed, "-o", back, "-f"]
                proc = run_mpi(3, open_args) if engine == "mpi" else run_paes(open_args)
                self.check(proc.returncode == 0 and read_file(back) == data,
                           f"{identity} under {engine}: {describe(proc)}")
        # The two stanzas swapped: each still unwraps the file key, but the MAC
        # over the header fails.
        raw = read_file(sealed)
        end_of_stanzas = raw.index(b"\n---") + 1
        lines = raw[32:end_of_stanzas].split(b"\n")[:-1]
        swapped = raw[:32] + b"\n".join(lines[2:4] + lines[0:2]) + b"\n" + raw[end_of_stanzas:]
        bad = write_file(self.path("swapped.paes"), swapped)
        out = self.path("never.bin")
        proc = run_mpi(3, ["decrypt", "--engine", "mpi", "-i", ids[0][0], bad, "-o", out])
        self.check(proc.returncode == 1 and b"header MAC mismatch" in proc.stderr and not os.path.exists(out),
                   f"swapped stanzas under MPI: {describe(proc)}")
        self.finish()


    def test_age_files_across_engines(self):
        """age v1 files (issue 41): sealed under MPI, opened under MPI and threads, and the other
        way; age's own file opened under MPI when age is installed; sizes around age's 64 KiB
        chunks and the engine's 1 MiB groups of them (one, one and a byte, several per rank). A chunk flipped fails on its rank: exit 1,
        nothing written."""
        identity = self.path("age-id.txt")
        proc = run_paes(["keygen", "--x25519", "-o", identity])
        self.assertEqual(proc.returncode, 0, describe(proc))
        recipient = proc.stdout.decode().strip()
        for size in (0, 16 * 65536 + 1, 3 * 1048576 + 5):
            data = os.urandom(size)
            inp = write_file(self.path(f"age-{size}.bin"), data)
            for seal, open_ in (("mpi", "threads"), ("threads", "mpi")):
                sealed = self.path(f"age-{size}-{seal}.age")
                back = self.path(f"age-{size}-{seal}-{open_}.bin")
                seal_args = ["encrypt", "--engine", seal, "--format", "age", "-r", recipient, inp, "-o", sealed, "-f"]
                proc = run_mpi(3, seal_args) if seal == "mpi" else run_paes(seal_args)
                self.check(proc.returncode == 0, f"age seal of {size} bytes under {seal}: {describe(proc)}")
                open_args = ["decrypt", "--engine", open_, "-i", identity, sealed, "-o", back, "-f"]
                proc = run_mpi(3, open_args) if open_ == "mpi" else run_paes(open_args)
                self.check(proc.returncode == 0 and read_file(back) == data,
                           f"age file of {size} bytes sealed under {seal}, opened under {open_}: {describe(proc)}")
        age = shutil.which("age")
        if age:
            data = os.urandom(2 * 1048576 + 3)
            inp = write_file(self.path("by-age.bin"), data)
            by_age = self.path("by-age.age")
            made = subprocess.run([age, "-r", recipient, "-o", by_age, inp], capture_output=True, timeout=60)
            self.assertEqual(made.returncode, 0, describe(made))
            back = self.path("by-age.out")
            proc = run_mpi(4, ["decrypt", "--engine", "mpi", "-i", identity, by_age, "-o", back])
            self.check(proc.returncode == 0 and read_file(back) == data, f"age's file under MPI: {describe(proc)}")
        else:
            print("age is not installed: age's own file under MPI not checked", file=sys.stderr)
        # A byte of the payload's last chunk flipped (the file key and header are good).
        good = read_file(self.path(f"age-{3 * 1048576 + 5}-threads.age"))
        bad = write_file(self.path("flipped.age"), good[:-5] + bytes([good[-5] ^ 1]) + good[-4:])
        out_dir = self.new_dir("age-refused")
        self.expect_mpi_failure(3, ["decrypt", "--engine", "mpi", "-i", identity, bad, "-o",
                                    os.path.join(out_dir, "x")], out_dir, "authentication failed at chunk")
        self.finish()


# --------------------------------------------------------------------------- 3. failures

class FailureTest(MpiTestCase):
    """3: a failing rank, and other failures, leave nothing behind."""

    def sealed_file(self, size=64 * 1024, seg="4K", ranks=4):
        key = self.keygen(256)
        data = os.urandom(size)
        inp = write_file(self.path("plain.bin"), data)
        sealed = self.path("sealed.paes")
        args = ["encrypt", "--engine", "mpi", "--key-file", key, "--segment-size", seg,
                inp, "-o", sealed]
        proc = run_mpi(ranks, args)
        self.assertEqual(proc.returncode, 0, f"{mpi_cmd(ranks, args)}: {describe(proc)}")
        return key, inp, sealed, data

    def test_failing_last_rank(self):
        key, _, sealed, _ = self.sealed_file()
        out_dir = self.new_dir("out")
        blob = bytearray(read_file(sealed))
        for name, pos in (("late", len(blob) - 100), ("three-quarters", len(blob) * 7 // 8)):
            bad = bytearray(blob)
            bad[pos] ^= 0x01
            tampered = write_file(self.path(f"tampered-{name}.paes"), bytes(bad))
            args = ["decrypt", "--engine", "mpi", "--key-file", key, tampered,
                    "-o", os.path.join(out_dir, "plain.bin")]
            proc = self.expect_mpi_failure(4, args, out_dir, "authentication failed")
            lines = stderr_lines(proc)
            # The message may name the rank; the flipped byte is in rank 3's range.
            if lines and "(rank" in lines[0]:
                self.check(lines[0].rstrip().endswith("(rank 3)"),
                           f"{mpi_cmd(4, args)}: damage in rank 3's range reported as {lines[0]!r}")
        self.finish()

    def test_ranks_that_see_another_input(self):
        """Rank 1 runs in another directory, so the relative input path names another file
        there, as on hosts that don't share the input. Every rank must refuse: sizing its
        own file, a rank skips or invents chunks (a sealed body without its last segment,
        committed with exit 0)."""
        key = self.keygen(256)
        here, there = self.new_dir("rank0"), self.new_dir("rank1")
        data = os.urandom(5 * 4096)
        write_file(os.path.join(here, "in.bin"), data[:3 * 4096])
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "sealed.paes")
        args = ["encrypt", "--engine", "mpi", "--key-file", key, "--segment-size", "4K",
                "in.bin", "-o", out]
        paes = os.path.abspath(PAES) if os.sep in PAES else PAES
        rank1 = ["sh", "-c", 'cd "$0" && exec "$@"', there, paes] + args
        cases = (("longer", data), ("same size, another file", os.urandom(3 * 4096)),
                 ("same file, changed since", None))
        for what, other in cases:
            if other is None:  # the same bytes under another inode and time
                other = read_file(os.path.join(here, "in.bin"))
            write_file(os.path.join(there, "in.bin"), other)
            cmd, env = mpiexec_command([Ranks(1, [paes] + args), Ranks(1, rank1)])
            proc = subprocess.run(cmd, cwd=here, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=120, env=env)
            lines = stderr_lines(proc)
            self.check(proc.returncode == 1, f"rank 1 sees a {what} input: expected exit 1, got "
                                             f"{describe(proc)}")
            self.check(len(lines) == 1 and "every rank must see the same file" in lines[0],
                       f"rank 1 sees a {what} input: stderr {lines!r}")
            self.check(os.listdir(out_dir) == [], f"rank 1 sees a {what} input: left "
                                                  f"{os.listdir(out_dir)}")
        self.finish()

    def rename_while_paused(self, cmd, pause, other, name, env=None, cwd=None):
        """Runs `cmd` (mpiexec with the fault shim set to pause); when the shim has made
        `pause`, renames `other` over `name`. Returns (exit status, stderr lines)."""
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=env)
        with killed_unless_finished(proc):
            wait_for_pause(proc, pause, f"{' '.join(cmd)} to pause")
            os.rename(other, name)
            os.remove(pause)
            _, err = proc.communicate(timeout=60)
        return proc.returncode, [l for l in err.decode(errors="replace").splitlines() if l.strip()]

    def test_input_replaced_after_rank_0_opened_it(self):
        """Rank 0 reads an --pbkdf2 CTR file's Salted__ header through the descriptor it opened;
        paused there by the fault shim, the name is given another file of the same size (one
        body byte flipped). Every rank then opens the name: identities taken by path agreed
        with each other, and the run decrypted the new body under the old header, exit 0
        with plaintext that no file holds. Each rank must compare the file it reads (fstat
        of its descriptor) with the one rank 0 read."""
        if not SHIM:
            self.skipTest("SKIPPED: no fault shim given (--shim)")
        passphrase = write_file(self.path("passphrase"), b"swap me\n", 0o600)
        crypt = ["--mode", "ctr", "--pbkdf2", "--passphrase-file", passphrase]
        inp = write_file(self.path("plain.bin"), os.urandom(64 * 1024 + 5))
        enc = self.path("enc.bin")
        proc = run_paes(["encrypt"] + crypt + [inp, "-o", enc])
        self.assertEqual(proc.returncode, 0, describe(proc))
        swapped = bytearray(read_file(enc))
        swapped[16 + 1000] ^= 0x01
        other = write_file(self.path("other.bin"), bytes(swapped))
        out_dir = self.new_dir("out")
        pause = self.path("paused")
        args = ["decrypt", "--engine", "mpi"] + crypt + [enc, "-o", os.path.join(out_dir, "plain.bin")]
        cmd, env = mpiexec_command([Ranks(2, [PAES] + args)],
                          env=dict(os.environ, LD_PRELOAD=SHIM, PAES_FAULT_READ_PATH=enc, PAES_FAULT_PAUSE_AT="0",
                                   PAES_FAULT_PAUSE_FILE=pause))
        status, lines = self.rename_while_paused(cmd, pause, other, enc, env)
        self.assertEqual(status, 1, f"{mpi_cmd(2, args)}: exit {status}, {lines!r}")
        self.assertTrue(len(lines) == 1 and "not the file rank 0 read" in lines[0], lines)
        self.assertEqual(os.listdir(out_dir), [])

    def test_input_renamed_after_a_rank_opened_it(self):
        """A rank that opened the file rank 0 read reads that file, whatever its name names
        later. Rank 1 runs in another directory, where the input's relative name is a hard
        link to rank 0's; paused by the fault shim just after rank 1 opened it, that name is
        given another file. Checked by path, that refused a run that read only the right
        file; checked on the descriptor, the run completes."""
        if not SHIM:
            self.skipTest("SKIPPED: no fault shim given (--shim)")
        key, inp, sealed, _ = self.sealed_file(size=40 * 1024, ranks=2)
        here, there = self.new_dir("rank0"), self.new_dir("rank1")
        os.link(sealed, os.path.join(here, "in.paes"))
        os.link(sealed, os.path.join(there, "in.paes"))
        other = write_file(os.path.join(there, "other.paes"), os.urandom(os.path.getsize(sealed)))
        out = os.path.join(self.new_dir("out"), "plain.bin")
        args = ["decrypt", "--engine", "mpi", "--key-file", key, "in.paes", "-o", out]
        paes = os.path.abspath(PAES) if os.sep in PAES else PAES
        pause = self.path("paused")
        rank1 = Ranks(1, ["sh", "-c", 'cd "$0" && exec "$@"', there, paes] + args,
                      {"LD_PRELOAD": SHIM, "PAES_FAULT_READ_PATH": "in.paes", "PAES_FAULT_PAUSE_OPEN": "1",
                       "PAES_FAULT_PAUSE_FILE": pause})
        cmd, env = mpiexec_command([Ranks(1, [paes] + args), rank1])
        status, lines = self.rename_while_paused(cmd, pause, other, os.path.join(there, "in.paes"), env, cwd=here)
        self.assertEqual((status, lines), (0, []), " ".join(cmd))
        self.assertEqual(read_file(out), read_file(inp))

    def test_other_failures(self):
        key, inp, sealed, _ = self.sealed_file(size=40 * 1024)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "plain.bin")
        # A missing input.
        for ranks in (2, 4):
            self.expect_mpi_failure(ranks, ["decrypt", "--engine", "mpi", "--key-file", key,
                                        self.path("no-such-file"), "-o", out], out_dir,
                                "no-such-file")
            self.expect_mpi_failure(ranks, ["encrypt", "--engine", "mpi", "--mode", "ctr",
                                        "--key-file", key, "--iv", "00" * 16,
                                        self.path("no-such-file"), "-o", out], out_dir,
                                "no-such-file")
        # A wrong key: the header's MAC, keyed by the raw key, fails on rank 0.
        wrong = self.keygen(256)
        for ranks in (2, 3):
            self.expect_mpi_failure(ranks, ["decrypt", "--engine", "mpi", "--key-file", wrong, sealed,
                                        "-o", out], out_dir, "header MAC mismatch")
        # An existing output without -f: refused, left untouched.
        write_file(out, b"precious")
        for ranks in (2, 4):
            for args in (["decrypt", "--engine", "mpi", "--key-file", key, sealed, "-o", out],
                         ["encrypt", "--engine", "mpi", "--mode", "ctr", "--key-file", key,
                          "--iv", "00" * 16, inp, "-o", out]):
                self.expect_mpi_failure(ranks, args, out_dir, "exists")
                self.check(read_file(out) == b"precious", f"{mpi_cmd(ranks, args)}: output changed")
        os.remove(out)
        # With -f the existing output is replaced.
        write_file(out, b"precious")
        args = ["decrypt", "--engine", "mpi", "--key-file", key, sealed, "-o", out, "-f"]
        proc = run_mpi(3, args)
        self.check(proc.returncode == 0 and read_file(out) == read_file(inp),
                   f"{mpi_cmd(3, args)}: -f did not replace the output: {describe(proc)}")
        os.remove(out)
        self.finish()

    def test_raw_decrypt_failures(self):
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "plain.bin")
        key_file, key = self.random_key_file(128)
        iv = os.urandom(16)
        data = os.urandom(50 * 1024 + 5)
        ct = openssl_ok("cbc", key, iv, data)
        # A wrong key: the padding check fails in the last chunk (the last rank's).
        wrong_file, _ = self.random_key_file(128)
        inp = write_file(self.path("ct.bin"), ct)
        for ranks in (2, 4):
            args = raw_args_with_key_file("decrypt", "cbc", wrong_file, iv, inp, out, "4K", extra=["--engine", "mpi"])
            # A random wrong key still gives valid padding with probability ~1/256:
            # accept success only if the padding really happens to be valid.
            proc = run_mpi(ranks, args)
            if proc.returncode == 0:
                os.remove(out)
                continue
            self.check(len(stderr_lines(proc)) == 1,
                       f"{mpi_cmd(ranks, args)}: expected one stderr line: {stderr_lines(proc)!r}")
            self.check(os.listdir(out_dir) == [], f"{mpi_cmd(ranks, args)}: left {os.listdir(out_dir)}")
        # Ciphertext that is not whole blocks.
        trunc = write_file(self.path("trunc.bin"), ct[:-5])
        for ranks in (2, 4):
            for mode in ("cbc", "ecb"):
                ctm = openssl_ok(mode, key, iv, data)
                trunc = write_file(self.path(f"trunc-{mode}.bin"), ctm[:-5])
                self.expect_mpi_failure(ranks, raw_args_with_key_file("decrypt", mode, key_file, iv, trunc, out, "4K",
                                                    extra=["--engine", "mpi"]), out_dir)
        # --no-pad encryption of input that is not whole blocks.
        for ranks in (2, 4):
            plain = write_file(self.path("odd.bin"), os.urandom(4096 * 3 + 7))
            self.expect_mpi_failure(ranks, raw_args_with_key_file("encrypt", "ecb", key_file, iv, plain, out, "4K",
                                                nopad=True, extra=["--engine", "mpi"]), out_dir)
        self.finish()


# --------------------------------------------------------------------------- 4. sequential

class NoFileOutputTest(MpiTestCase):
    """3b: /dev/null as the output (checking a file's integrity on a cluster), and ranks that forgot
    --engine mpi."""

    def test_dev_null_discards_every_ranks_part(self):
        key_file, _ = self.random_key_file(256)
        inp = write_file(self.path("in.bin"), os.urandom((3 << 20) + 5))
        sealed = self.path("s.paes")
        proc = run_paes(["encrypt", "--key-file", key_file, "--segment-size", "64K", inp, "-o", sealed])
        self.assertEqual(proc.returncode, 0, describe(proc))
        proc = run_mpi(3, ["decrypt", "--engine", "mpi", "--key-file", key_file, sealed, "-o", "/dev/null"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        damaged = bytearray(read_file(sealed))
        damaged[len(damaged) // 2] ^= 1
        bad = write_file(self.path("bad.paes"), bytes(damaged))
        proc = run_mpi(3, ["decrypt", "--engine", "mpi", "--key-file", key_file, bad, "-o", "/dev/null"])
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn(b"authentication failed", proc.stderr)
        self.assertTrue(stat.S_ISCHR(os.lstat("/dev/null").st_mode), "/dev/null was replaced")

    def test_ranks_without_engine_mpi_are_refused(self):
        key_file, _ = self.random_key_file(256)
        inp = write_file(self.path("in.bin"), os.urandom(1000))
        out_dir = self.new_dir("out")
        self.expect_mpi_failure(3, ["encrypt", "--key-file", key_file, inp, "-o", os.path.join(out_dir, "x")], out_dir,
                            "add --engine mpi", code=2)
        self.finish()


class SequentialTest(MpiTestCase):
    """4: sequential directions run on rank 0, give openssl's bytes, print one note."""

    def test_sequential_three_ranks(self):
        cases = [("encrypt", "cbc"), ("encrypt", "ofb"), ("decrypt", "ofb"), ("encrypt", "cfb"),
                 ("encrypt", "cfb8"), ("encrypt", "cfb1")]

        def sequential_case_problems(direction, mode):
            key_file, key = self.random_key_file(256)
            iv = os.urandom(16)
            d = self.new_dir(self.unique_name("seq-"))
            size = 20 * 1024 + 1 if mode == "cfb1" else 256 * 1024 + 3
            src = os.urandom(size)
            expected = openssl_ok(mode, key, iv, src, decrypt=(direction == "decrypt"))
            inp = write_file(os.path.join(d, "in.bin"), src)
            out = os.path.join(d, "out.bin")
            args = raw_args_with_key_file(direction, mode, key_file, iv, inp, out, "4K",
                            extra=["--engine", "mpi", "--json"])
            proc = run_mpi(3, args)
            cmd = mpi_cmd(3, args)
            if proc.returncode != 0:
                return [f"{cmd}: {describe(proc)}"]
            problems = []
            if read_file(out) != expected:
                problems.append(f"{cmd}: output differs from openssl")
            notes = note_lines(proc)
            if len(notes) != 1 or len(stderr_lines(proc)) != 1:
                problems.append(f"{cmd}: expected exactly one note line, stderr {stderr_lines(proc)!r}")
            elif "sequential" not in notes[0].lower() and "rank 0" not in notes[0].lower():
                problems.append(f"{cmd}: the note does not say why: {notes[0]!r}")
            try:
                summary = json.loads(proc.stdout)
                ranks = summary["ranks"]
                if len(ranks) != 3 or sum(r["bytes_in"] for r in ranks) != size \
                        or ranks[0]["bytes_in"] != size:
                    problems.append(f"{cmd}: rank 0 should read all {size} bytes: {ranks}")
            except (ValueError, KeyError, TypeError) as e:
                problems.append(f"{cmd}: bad --json ({e}): {proc.stdout[:300]!r}")
            return problems

        self.run_cases(sequential_case_problems, cases, POOL)


# --------------------------------------------------------------------------- 5. stdin/stdout

class PipeRefusedTest(MpiTestCase):
    """5: stdin and stdout are refused under MPI."""

    def test_stdin_stdout_refused(self):
        key_file, _ = self.random_key_file(256)
        inp = write_file(self.path("in.bin"), os.urandom(1000))
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "o.bin")
        raw = ["--mode", "ctr", "--key-file", key_file, "--iv", "00" * 16, "--engine", "mpi"]
        sealed = ["--key-file", key_file, "--engine", "mpi"]
        for ranks in (1, 2, 3):
            for opts in (raw, sealed):
                for direction in DIRECTIONS:
                    for tail in (["-", "-o", out], ["-o", out], [inp, "-o", "-"], [inp]):
                        self.expect_mpi_failure(ranks, [direction] + opts + tail, out_dir,
                                            "refused under MPI: every rank opens the input and output files "
                                            "itself (give INPUT and -o OUTPUT as files)", code=2)
        # Streams named as files: a /proc file (read to its end, its size is made up), and
        # /dev/stdout; refused up front, as stdin and stdout are.
        for tail in (["/proc/self/status", "-o", out], [inp, "-o", "/dev/stdout"]):
            self.expect_mpi_failure(2, ["encrypt"] + raw + tail, out_dir, "MPI", code=2)
        self.finish()


# --------------------------------------------------------------------------- 6. --json

class JsonTest(MpiTestCase):
    """6: --json under MPI has a per-rank list."""

    def check_summary(self, cmd, proc, size, chunk, ranks=3):
        if proc.returncode != 0:
            self.check(False, f"{cmd}: {describe(proc)}")
            return None
        try:
            summary = json.loads(proc.stdout)
        except ValueError as e:
            self.check(False, f"{cmd}: stdout is not one JSON object ({e}): {proc.stdout[:300]!r}")
            return None
        self.check(summary.get("engine") == "mpi", f"{cmd}: engine {summary.get('engine')!r}")
        self.check(summary.get("bytes_in") == size, f"{cmd}: bytes_in {summary.get('bytes_in')} != {size}")
        per_rank = summary.get("ranks")
        if not isinstance(per_rank, list) or len(per_rank) != ranks:
            self.check(False, f"{cmd}: 'ranks' is not a list of {ranks}: {per_rank!r}")
            return None
        for i, r in enumerate(per_rank):
            ok = (isinstance(r, dict)
                  and set(r) >= {"compute_seconds", "io_seconds", "bytes_in", "threads"}
                  and all(isinstance(r[k], (int, float)) and not isinstance(r[k], bool) and r[k] >= 0
                          for k in ("compute_seconds", "io_seconds", "bytes_in"))
                  and isinstance(r["threads"], int) and r["threads"] >= 1)
            self.check(ok, f"{cmd}: rank {i} entry malformed: {r!r}")
        return summary

    def test_json_raw(self):
        key_file, key = self.random_key_file(256)
        iv = os.urandom(16)
        size = 300 * 1024 + 11
        chunk = 4096
        data = os.urandom(size)
        for mode, direction in (("ctr", "encrypt"), ("cbc", "decrypt"), ("ecb", "encrypt")):
            src = data if direction == "encrypt" else openssl_ok(mode, key, iv, data)
            inp = write_file(self.path(f"in-{mode}"), src)
            out = self.path(f"out-{mode}")
            args = raw_args_with_key_file(direction, mode, key_file, iv, inp, out, "4K",
                            extra=["--engine", "mpi", "--json"])
            proc = run_mpi(3, args)
            cmd = mpi_cmd(3, args)
            summary = self.check_summary(cmd, proc, len(src), chunk)
            if summary is None:
                continue
            per_rank = [r["bytes_in"] for r in summary["ranks"]]
            self.check(sum(per_rank) == len(src),
                       f"{cmd}: rank bytes_in {per_rank} sum to {sum(per_rank)}, not {len(src)}")
            # Balanced in whole chunks: the chunk counts differ by at most one.
            chunks = [-(-b // chunk) for b in per_rank]
            self.check(max(chunks) - min(chunks) <= 1,
                       f"{cmd}: ranges not balanced: {per_rank} bytes, {chunks} chunks")
            self.check(all(b > 0 for b in per_rank), f"{cmd}: an idle rank: {per_rank}")
            self.check(summary.get("parallel") is True, f"{cmd}: parallel {summary.get('parallel')!r}")
        self.finish()

    def test_json_sealed_encrypt(self):
        key = self.path("k.key")
        run_paes(["keygen", "-o", key])
        size = 200 * 1024 + 5
        inp = write_file(self.path("in"), os.urandom(size))
        sealed = self.path("sealed")
        args = ["encrypt", "--engine", "mpi", "--key-file", key, "--segment-size", "4K",
                "--json", inp, "-o", sealed]
        cmd = mpi_cmd(3, args)
        summary = self.check_summary(cmd, run_mpi(3, args), size, 4096)
        if summary is not None:
            per_rank = [r["bytes_in"] for r in summary["ranks"]]
            self.check(sum(per_rank) == size, f"{cmd}: rank bytes_in {per_rank} sum to "
                                              f"{sum(per_rank)}, not {size}")
            self.check(summary.get("engine") == "mpi" and summary.get("mode") == "sealed",
                       f"{cmd}: mode {summary.get('mode')!r}")
        self.finish()

    def test_json_sealed_decrypt(self):
        key = self.path("k.key")
        run_paes(["keygen", "-o", key])
        inp = write_file(self.path("in"), os.urandom(200 * 1024 + 5))
        sealed = self.path("sealed")
        proc = run_paes(["encrypt", "--key-file", key, "--segment-size", "4K", inp, "-o", sealed])
        self.assertEqual(proc.returncode, 0, describe(proc))
        size = os.path.getsize(sealed)
        args = ["decrypt", "--engine", "mpi", "--key-file", key, "--json", sealed,
                "-o", self.path("back")]
        cmd = mpi_cmd(3, args)
        summary = self.check_summary(cmd, run_mpi(3, args), size, 4096)
        if summary is not None:
            # Ranks count the segments they read; rank 0 read the preamble (32 bytes), the
            # MAC line (48) and Tink's header (1 + 32 + 7 for AES-256) before handing the
            # job out.
            prefix = 32 + 48 + 1 + 32 + 7
            per_rank = [r["bytes_in"] for r in summary["ranks"]]
            self.check(sum(per_rank) == size - prefix,
                       f"{cmd}: rank bytes_in {per_rank} sum to {sum(per_rank)}, not the "
                       f"input's {size} bytes less its {prefix}-byte prefix")
        self.finish()


# --------------------------------------------------------------------------- 7. MPI only when asked

def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps") as maps:
        return {line.split()[-1] for line in maps if "/" in line}


def mpi_libraries(paths):
    return sorted(p for p in paths if any(w in os.path.basename(p) for w in ("mpi", "ucp", "ucs", "uct")))


class OnlyWhenAskedTest(MpiTestCase):
    """7: a run without --engine mpi neither loads nor starts MPI; --engine mpi runs paes-mpi."""

    def run_waiting_on_a_fifo(self, argv, inspect, preexec_fn=None):
        """Runs argv (which reads the FIFO self.fifo), calls inspect(pid) while it waits for
        the FIFO's writer, then feeds it; returns (process, stderr)."""
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, preexec_fn=preexec_fn)
        try:
            # Opening a FIFO for reading waits for a writer: paes is then past its start.
            deadline = time.monotonic() + 30
            while not self.waits_on_fifo(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            inspect(proc.pid)
            with open(self.fifo, "wb") as w:
                w.write(self.data)
            _, err = proc.communicate(timeout=60)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return proc, err

    def waits_on_fifo(self, pid):
        try:
            with open(f"/proc/{pid}/wchan") as f:
                return f.read().strip() in ("fifo_open", "pipe_read_wait", "wait_for_partner")
        except OSError:
            return False

    def setUp(self):
        super().setUp()
        self.fifo = self.path("in.fifo")
        os.mkfifo(self.fifo)
        self.data = os.urandom(100000)
        self.key, _ = self.random_key_file(256)

    def test_a_plain_run_has_no_mpi_in_its_memory(self):
        out = self.path("plain.paes")
        seen = {}
        proc, err = self.run_waiting_on_a_fifo([PAES, "encrypt", "--key-file", self.key, self.fifo, "-o", out],
                                               lambda pid: seen.update(libs=mapped_libraries(pid)))
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(mpi_libraries(seen["libs"]), [], "paes without --engine mpi mapped MPI")
        # The check can fail: paes-mpi, which links MPI, shows it in the same place.
        paes_mpi = os.path.join(os.path.dirname(os.path.abspath(PAES)), "paes-mpi")
        os.remove(out)
        proc, err = self.run_waiting_on_a_fifo([paes_mpi, "encrypt", "--key-file", self.key, self.fifo, "-o", out],
                                               lambda pid: seen.update(libs=mapped_libraries(pid)))
        self.assertEqual(proc.returncode, 0, err)
        self.assertNotEqual(mpi_libraries(seen["libs"]), [], "paes-mpi showed no MPI library: the check is blind")

    def test_nohup_keeps_ignoring_sighup(self):
        """SIGHUP ignored when paes starts (nohup) stays ignored: the run completes."""
        out = self.path("nohup.paes")

        def hang_up(pid):
            os.kill(pid, signal.SIGHUP)
        proc, err = self.run_waiting_on_a_fifo(
            [PAES, "encrypt", "--key-file", self.key, self.fifo, "-o", out], hang_up,
            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        self.assertEqual(proc.returncode, 0, f"exit {proc.returncode}: {err!r}")
        back = run_paes(["decrypt", "--key-file", self.key, out, "-o", "-"])
        self.assertEqual(back.stdout, self.data)

    def test_nohup_under_mpi(self):
        """SIGHUP ignored when mpiexec starts paes stays ignored in paes-mpi, although UCX
        installs a SIGHUP handler when it loads: rank 0, paused mid-run by the fault shim,
        ignores SIGHUP and completes."""
        if not SHIM:
            self.skipTest("SKIPPED: no fault shim given (--shim)")
        inp = write_file(self.path("in.bin"), os.urandom(8 << 20))
        out = self.path("mpi-nohup.paes")
        pause, pid_file = self.path("paused"), self.path("rank0.pid")
        # Where the launcher does not pass the ignored SIGHUP on, the rank ignores
        # it itself (mpiexec -n 1 nohup paes ...), which paes must keep as well.
        ignore = "" if LAUNCHER.keeps_ignored_signals else "trap '' HUP; "
        if ignore:
            print(f"test_mpi.py: {LAUNCHER} does not pass an ignored SIGHUP on to the ranks: "
                  "each rank ignores it itself", file=sys.stderr)
        cmd, env = mpiexec_command([Ranks(1, ["sh", "-c", ignore + 'echo $$ > "$0"; shift; exec "$@"', pid_file, "-",
                                     PAES, "encrypt", "--engine", "mpi", "--key-file", self.key, inp, "-o", out])],
                          env=dict(os.environ, LD_PRELOAD=SHIM, PAES_FAULT_READ_PATH=inp,
                                   PAES_FAULT_PAUSE_AT=str(2 << 20), PAES_FAULT_PAUSE_FILE=pause))
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        with killed_unless_finished(proc):
            wait_for_pause(proc, pause, "rank 0 to reach the pause")
            with open(pid_file) as f:
                pid = int(f.read())
            with open(f"/proc/{pid}/status") as f:
                ignored = int(next(l for l in f if l.startswith("SigIgn:")).split()[1], 16)
            self.assertTrue(ignored >> (signal.SIGHUP - 1) & 1, "paes-mpi does not ignore SIGHUP")
            os.kill(pid, signal.SIGHUP)
            os.remove(pause)
            _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(run_paes(["decrypt", "--key-file", self.key, out, "-o", "-"]).stdout, read_file(inp))

    def test_engine_mpi_runs_paes_mpi(self):
        inp = write_file(self.path("in.bin"), self.data)
        out = self.path("mpi.paes")
        proc = run_mpi(2, ["encrypt", "--engine", "mpi", "--json", "--key-file", self.key, inp, "-o", out])
        self.assertEqual(proc.returncode, 0, describe(proc))
        report = json.loads(proc.stdout.decode().strip().splitlines()[-1])
        self.assertEqual((report["engine"], len(report["ranks"])), ("mpi", 2), report)


class InfoTest(MpiTestCase):
    """paes info names the MPI paes-mpi was built with and its launcher: what the
    mpi tests launch with here (the build's FindMPI launcher), for paes and for
    paes-mpi alike."""

    def test_info_names_the_mpi_of_the_build(self):
        paes_mpi = os.path.join(os.path.dirname(os.path.abspath(PAES)), "paes-mpi")
        for binary in (PAES, paes_mpi):
            proc = subprocess.run([binary, "info", "--json"], capture_output=True, timeout=60)
            self.check(proc.returncode == 0, f"{binary} info --json: {describe(proc)}")
            mpi = json.loads(proc.stdout).get("mpi") if proc.returncode == 0 else None
            self.check(isinstance(mpi, dict) and mpi["library"].startswith(LAUNCHER.mpi_name) and
                       LAUNCHER.version in mpi["library"] and
                       os.path.realpath(mpi["launcher"]) == os.path.realpath(LAUNCHER.path),
                       f"{binary} info --json: mpi is {mpi!r}, not {LAUNCHER}'s")
            text = subprocess.run([binary, "info"], capture_output=True, timeout=60).stdout.decode(errors="replace")
            line = next((l for l in text.splitlines() if l.startswith("MPI:")), "")
            self.check(f"built with {LAUNCHER.mpi_name}" in line and LAUNCHER.path in line,
                       f"{binary} info: its MPI line is {line!r}, for {LAUNCHER}")
        self.finish()


class OtherMpisLauncherTest(MpiTestCase):
    """7b: paes-mpi under the launcher of another MPI than its own (mpiexec.openmpi
    starting an MPICH build, or mpiexec.mpich an Open MPI one) would run each rank as
    an MPI world of one: every rank the whole job, all on one output. Every rank
    refuses: exit 2, a message naming the MPI it was built for and the ranks the
    launcher started, no output."""

    def test_launcher_of_another_mpi_is_refused(self):
        other = LAUNCHER.other()
        if other is None:
            print(f"test_mpi.py: skipping the other launcher's test: no launcher of another MPI beside {LAUNCHER}",
                  file=sys.stderr)
            self.skipTest("SKIPPED: no launcher of another MPI installed")
        key, _ = self.random_key_file(256)
        inp = write_file(self.path("in.bin"), os.urandom(100000))
        out_dir = self.new_dir("out")
        paes_mpi = os.path.join(os.path.dirname(os.path.abspath(PAES)), "paes-mpi")
        for argv in ([PAES, "encrypt", "--engine", "mpi"], [paes_mpi, "encrypt", "--engine", "mpi"]):
            cmd, env = other.command([Ranks(2, argv + ["--key-file", key, inp, "-o", os.path.join(out_dir, "o")])])
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, env=env)
            what = " ".join(cmd)
            lines = stderr_lines(proc)
            self.check(proc.returncode == 2, f"{what}: expected exit 2, got {describe(proc)}")
            self.check(len(lines) == 2 and all(l.startswith("paes: the launcher started 2 ranks") and
                                               f"built for {LAUNCHER.mpi_name}" in l and "mpiexec" in l
                                               for l in lines),
                       f"{what}: expected each rank's refusal naming {LAUNCHER.mpi_name}, got {lines!r}")
            self.check(proc.stdout == b"" and os.listdir(out_dir) == [],
                       f"{what}: stdout {proc.stdout[:200]!r}, left {os.listdir(out_dir)}")
        self.finish()


    def test_what_a_slurm_step_says(self):
        """Slurm's variables as srun leaves them, without Slurm: a rank of srun --mpi=pmix
        (PMIX_RANK 1, SLURM_STEP_NUM_TASKS 2) that its MPI left a world of one is refused;
        paes-mpi run by a batch script (SLURM_NTASKS 4), or under mpiexec inside a step
        (the step's variables inherited), runs. MPICH's build only: Open MPI's would try
        to reach the PMIx server the variables speak of."""
        if LAUNCHER.flavor != "mpich":
            print(f"test_mpi.py: skipping Slurm's variables under {LAUNCHER}: its MPI would look for their "
                  "PMIx server", file=sys.stderr)
            self.skipTest("SKIPPED: Slurm's variables need a build whose MPI ignores PMIx's")
        key, _ = self.random_key_file(256)
        inp = write_file(self.path("in.bin"), os.urandom(100000))
        paes_mpi = os.path.join(os.path.dirname(os.path.abspath(PAES)), "paes-mpi")
        for what, step, launched, status in (
                ("rank 1 of srun --mpi=pmix", {"PMIX_RANK": "1", "SLURM_STEP_NUM_TASKS": "2"}, False, 2),
                ("a batch script of 4 tasks", {"SLURM_NTASKS": "4"}, False, 0),
                ("mpiexec -n 1 inside a step of 4", {"PMIX_RANK": "0", "SLURM_STEP_NUM_TASKS": "4"}, True, 0)):
            out = self.path(self.unique_name("out-"))
            argv = [paes_mpi, "encrypt", "--engine", "mpi", "--key-file", key, inp, "-o", out]
            env = dict(os.environ, **step)
            if launched:
                argv, env = mpiexec_command([Ranks(1, argv)], env=env)
            proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            self.check(proc.returncode == status and os.path.exists(out) == (status == 0),
                       f"{what}: expected exit {status}, got {describe(proc)}")
            if status:
                self.check(b"the launcher started 2 ranks" in proc.stderr, f"{what}: {describe(proc)}")
        self.finish()


# --------------------------------------------------------------------------- 8. faults on one rank

class OneRankFaultTest(MpiTestCase):
    """8: a fault on one rank only (the fault shim preloaded where the rank is k): every rank
    exits 1, the message names the rank, nothing is left in the output directory."""

    RANKS = 3
    MIB = 1 << 20

    def setUp(self):
        super().setUp()
        if not SHIM:
            self.skipTest("SKIPPED: no fault shim given (--shim)")
        self.key, _ = self.random_key_file(256)
        self.data = os.urandom(6 * self.MIB + 5)
        self.inp = write_file(self.path("in.bin"), self.data)

    def run_with_fault_on(self, faulty, faults, args, out_dir):
        """mpiexec with RANKS ranks, the shim and `faults` (PAES_FAULT_*) on rank `faulty`;
        each rank writes its exit status to a file. Returns (proc, {rank: status})."""
        statuses = self.path(self.unique_name("statuses-"))
        wrapper = ["sh", "-c", 'status_file=$1; shift; "$@"; s=$?; echo "$' + LAUNCHER.rank_variable +
                   ' $s" >> "$status_file"; exit $s', "sh", statuses, PAES] + [str(a) for a in args]
        env = fault_shim_variables(SHIM, **faults)
        groups = []
        if faulty > 0:
            groups.append(Ranks(faulty, wrapper))
        groups.append(Ranks(1, wrapper, env))
        if faulty < self.RANKS - 1:
            groups.append(Ranks(self.RANKS - 1 - faulty, wrapper))
        cmd, launcher_env = mpiexec_command(groups, every_rank_ends=True)
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, env=launcher_env)
        seen = {}
        if os.path.exists(statuses):
            for line in read_file(statuses).decode().split("\n"):
                if line.strip():
                    rank, status = line.split()
                    seen[int(rank)] = int(status)
        return proc, seen

    def check_failed_everywhere(self, what, faulty, faults, words, sealed=True):
        out_dir = self.new_dir(self.unique_name("out-"))
        out = os.path.join(out_dir, "o.bin")
        mode = [] if sealed else ["--mode", "ctr", "--iv", "00" * 16]
        args = ["encrypt", "--engine", "mpi", "--key-file", self.key, *mode, self.inp, "-o", out]
        faults = dict(faults)
        if "write_errno" in faults or "fsync_errno" in faults:
            faults["write_dir"] = out_dir
        proc, seen = self.run_with_fault_on(faulty, faults, args, out_dir)
        lines = stderr_lines(proc)
        self.check(seen == {r: 1 for r in range(self.RANKS)},
                   f"{what}: every rank must exit 1, got {seen} ({describe(proc)})")
        self.check(len(lines) == 1 and all(w in lines[0] for w in words) and f"(rank {faulty})" in lines[0],
                   f"{what}: expected one line with {words} and (rank {faulty}), got {lines!r}")
        self.check(os.listdir(out_dir) == [], f"{what}: left {os.listdir(out_dir)}")

    def test_fsync_error_on_one_rank(self):
        """A write error the kernel reports only at fsync, on a rank other than 0: before
        this, only rank 0 synced, and the output was renamed into place."""
        for sealed in (True, False):
            self.check_failed_everywhere(f"EIO from fsync on rank 1 (sealed={sealed})", 1,
                                         {"fsync_errno": 5}, ["Input/output error"], sealed)
        self.finish()

    def test_write_and_read_errors_on_one_rank(self):
        # Rank 2 of 3 holds the last third of 6 MiB: output byte 5 MiB is its.
        self.check_failed_everywhere("ENOSPC writing on rank 2", 2,
                                     {"write_at": 5 * self.MIB, "write_errno": 28}, ["No space left on device"])
        self.check_failed_everywhere("EIO reading on rank 2", 2,
                                     {"read_path": self.inp, "read_at": 5 * self.MIB}, ["Input/output error"])
        self.finish()

    def test_every_rank_exits_with_rank_0s_status(self):
        out_dir = self.new_dir("out")
        args = ["encrypt", "--engine", "mpi", "--key-file", self.key, self.inp, "-o", os.path.join(out_dir, "o")]
        proc, seen = self.run_with_fault_on(1, {}, args, out_dir)
        self.assertEqual((proc.returncode, seen), (0, {r: 0 for r in range(self.RANKS)}), describe(proc))
        # The same command again: the output exists, rank 0 refuses before any job.
        proc, seen = self.run_with_fault_on(1, {}, args, out_dir)
        self.assertEqual(seen, {r: 1 for r in range(self.RANKS)}, describe(proc))


# --------------------------------------------------------------------------- 9. two hosts

class TwoHostsTest(MpiTestCase):
    """9: ranks as if on two hosts: two names for this machine (127.0.0.1, 127.0.0.2),
    launched by fork, MPICH's node-local (shared-memory) path off (MPIR_CVAR_NOLOCAL), so
    all traffic goes through its network module, UCX, over TCP only (UCX_TLS=tcp,self:
    what a commodity cluster has; MPICH 4.0.2's finalize hang there, docs/CLUSTER.md, is
    worked around). Encrypts and decrypts across them; kills one rank mid-run."""

    HOSTS = ["127.0.0.1", "127.0.0.2"]

    def setUp(self):
        super().setUp()
        try:
            mpiexec_command([], hosts=self.HOSTS, tcp_only=True)
        except Unsupported as e:
            print(f"test_mpi.py: skipping the two-hosts tests under {LAUNCHER}: {e}", file=sys.stderr)
            self.skipTest(f"SKIPPED: {e}")

    def mpiexec(self, argv, timeout=120):
        """2 ranks of `argv`, one on each host."""
        cmd, env = mpiexec_command([Ranks(2, argv)], hosts=self.HOSTS, tcp_only=True)
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, env=env)

    def test_round_trips_across_two_hosts(self):
        key, _ = self.random_key_file(256)
        data = os.urandom(5 * (1 << 20) + 3)
        inp = write_file(self.path("in.bin"), data)
        sealed, back, ctr = self.path("s.paes"), self.path("back"), self.path("ctr")
        proc = self.mpiexec([PAES, "encrypt", "--engine", "mpi", "--json", "--key-file", key, inp, "-o", sealed])
        self.assertEqual(proc.returncode, 0, describe(proc))
        report = json.loads(proc.stdout.decode().strip().splitlines()[-1])
        # Alone on its "host", each rank takes every CPU (one host would split them), as far as its
        # segments go: a rank runs no more threads than it has segments (6 here, 3 a rank, of 1 MiB).
        from harness.sealed_format import DEFAULT_SEGMENT, segment_count
        cpus = len(os.sched_getaffinity(0))
        segments = segment_count(len(data), DEFAULT_SEGMENT, 32)
        per_rank = [segments // 2 + (rank < segments % 2) for rank in range(2)]
        self.assertEqual([r["threads"] for r in report["ranks"]], [min(cpus, n) for n in per_rank], report)
        proc = self.mpiexec([PAES, "decrypt", "--engine", "mpi", "--key-file", key, sealed, "-o", back])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(back), data)
        iv = os.urandom(16)
        proc = self.mpiexec([PAES, "encrypt", "--engine", "mpi", "--mode", "ctr", "--iv", iv.hex(),
                             "--key-file", key, inp, "-o", ctr])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(ctr), openssl_ok("ctr", _key(key), iv, data))

    def test_a_rank_killed_mid_run_leaves_nothing(self):
        """SIGKILL of rank 1 while it reads: mpiexec kills rank 0 with SIGKILL too; rank 0's
        watcher removes the temporary output."""
        if not SHIM:
            self.skipTest("SKIPPED: no fault shim given (--shim)")
        key, _ = self.random_key_file(256)
        inp = write_file(self.path("in.bin"), os.urandom(24 << 20))
        out_dir = self.new_dir("out")
        pause, pid_file = self.path("paused"), self.path("rank1.pid")
        args = ["encrypt", "--engine", "mpi", "--key-file", key, inp, "-o", os.path.join(out_dir, "o")]
        rank1 = Ranks(1, ["sh", "-c", 'echo $$ > "$0"; shift; exec "$@"', pid_file, "-", PAES] + args,
                      {"LD_PRELOAD": SHIM, "PAES_FAULT_READ_PATH": inp, "PAES_FAULT_PAUSE_AT": str(20 << 20),
                       "PAES_FAULT_PAUSE_FILE": pause})
        cmd, env = mpiexec_command([Ranks(1, [PAES] + args), rank1], hosts=self.HOSTS, tcp_only=True)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env)
        with killed_unless_finished(proc):
            wait_for_pause(proc, pause, "rank 1 to reach the pause")
            self.assertNotEqual(os.listdir(out_dir), [], "no temporary output mid-run")
            with open(pid_file) as f:
                os.kill(int(f.read()), signal.SIGKILL)
            proc.communicate(timeout=60)
        self.assertNotEqual(proc.returncode, 0)
        deadline = time.monotonic() + 10  # the watcher runs as rank 0 dies
        while os.listdir(out_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(os.listdir(out_dir), [], "a killed rank left the temporary output")


def _key(path):
    return bytes.fromhex(read_file(path).decode().strip())


# --------------------------------------------------------------------------- 10. ranks x GPUs

def opencl_devices(env):
    """The OpenCL devices `paes info --json` lists under `env`, or why there are none."""
    proc = subprocess.run([PAES, "info", "--json"], env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    if proc.returncode != 0:
        return None, f"paes info --json: {describe(proc)}"
    for backend in json.loads(proc.stdout).get("backends", []):
        if backend.get("name") == "opencl" and backend.get("gpu"):
            if not backend.get("available") or not backend.get("devices"):
                return None, f"no OpenCL device: {backend.get('why_not')}"
            return backend["devices"], None
    return None, "this paes has no opencl backend"


class GpuRanksTest(MpiTestCase):
    """10: each rank drives its own device of --backend opencl."""

    RANKS = 2
    SIZE = 3 * 1024 * 1024 + 5  # 12 chunks of 256K and a tail: both ranks busy

    def setUp(self):
        super().setUp()
        # Two devices where the OpenCL is PoCL (none of its own GPUs), so that the
        # ranks' devices differ; another ICD's devices are listed as they are.
        self.env = dict(os.environ)
        self.env.setdefault("POCL_DEVICES", "pthread pthread")
        self.devices, why = opencl_devices(self.env)
        if self.devices is None:
            print(f"test_mpi.py: skipping the ranks x GPUs tests: {why}", file=sys.stderr)
            self.skipTest(f"SKIPPED: {why}")
        self.data = os.urandom(self.SIZE)
        self.key_path, self.key = self.random_key_file(256)
        self.iv = os.urandom(16)

    def gpu_cases(self):
        """(mode, direction, input bytes, openssl's output bytes)"""
        return [("ctr", "encrypt", self.data, openssl_ok("ctr", self.key, self.iv, self.data)),
                ("cbc", "decrypt", openssl_ok("cbc", self.key, self.iv, self.data), self.data)]

    def run_ranks(self, args, rank1_env=()):
        """2 ranks of paes `args`, rank 1 with `rank1_env` (NAME, VALUE pairs) added."""
        args = [str(a) for a in args]
        cmd, env = mpiexec_command([Ranks(1, [PAES] + args), Ranks(1, [PAES] + args, dict(rank1_env))], env=self.env)
        proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        return " ".join(cmd), proc

    def check_run(self, mode, direction, src, want, extra, rank1_env=()):
        """Runs one job; checks openssl's bytes. Returns (cmd, its --json ranks, stderr lines)."""
        inp = write_file(self.path(self.unique_name("in-")), src)
        out = self.path(self.unique_name("out-"))
        args = raw_args_with_key_file(direction, mode, self.key_path, self.iv, inp, out, "256K",
                        extra=["--engine", "mpi", "--backend", "opencl", "--json", "-v"] + extra)
        cmd, proc = self.run_ranks(args, rank1_env)
        if proc.returncode != 0:
            self.check(False, f"{cmd}: {describe(proc)}")
            return cmd, None, []
        self.check(read_file(out) == want, f"{cmd}: output differs from openssl enc -{mode}")
        try:
            ranks = json.loads(proc.stdout).get("ranks")
        except ValueError as e:
            self.check(False, f"{cmd}: stdout is not one JSON object ({e}): {proc.stdout[:300]!r}")
            return cmd, None, []
        if not isinstance(ranks, list) or len(ranks) != self.RANKS:
            self.check(False, f"{cmd}: 'ranks' is not a list of {self.RANKS}: {ranks!r}")
            return cmd, None, []
        self.check(all(r.get("bytes_in", 0) > 0 for r in ranks), f"{cmd}: an idle rank: {ranks!r}")
        return cmd, ranks, stderr_lines(proc)

    def test_each_rank_its_device(self):
        count = len(self.devices)
        for mode, direction, src, want in self.gpu_cases():
            cmd, ranks, lines = self.check_run(mode, direction, src, want, [])
            if ranks is None:
                continue
            # Both ranks on this one node: each one's node rank is its rank.
            for rank, r in enumerate(ranks):
                self.check((r.get("backend"), r.get("device")) == ("opencl", rank % count),
                           f"{cmd}: rank {rank} ran {r.get('backend')!r} on device {r.get('device')!r}, "
                           f"expected opencl on device {rank % count} of {count}")
                self.check(f"paes: rank {rank}: opencl device {rank % count}" in lines,
                           f"{cmd}: -v does not name rank {rank}'s device: {lines!r}")
        self.finish()

    def test_device_option_for_every_rank(self):
        device = len(self.devices) - 1
        for mode, direction, src, want in self.gpu_cases():
            cmd, ranks, _ = self.check_run(mode, direction, src, want, ["--device", device])
            if ranks is None:
                continue
            self.check([(r.get("backend"), r.get("device")) for r in ranks] == [("opencl", device)] * self.RANKS,
                       f"{cmd}: expected every rank on opencl device {device}: {ranks!r}")
        self.finish()

    def test_rank_without_device_runs_the_cpu(self):
        hidden = [("OCL_ICD_VENDORS", self.path("no-vendors"))]
        devices, _ = opencl_devices(dict(self.env, **dict(hidden)))
        if devices is not None:
            self.skipTest("SKIPPED: OCL_ICD_VENDORS does not hide this machine's OpenCL devices")
        for mode, direction, src, want in self.gpu_cases():
            cmd, ranks, _ = self.check_run(mode, direction, src, want, [], rank1_env=hidden)
            if ranks is None:
                continue
            self.check((ranks[0].get("backend"), ranks[0].get("device")) == ("opencl", 0),
                       f"{cmd}: rank 0 did not run opencl device 0: {ranks[0]!r}")
            self.check(ranks[1].get("backend") not in (None, "opencl") and "device" not in ranks[1],
                       f"{cmd}: rank 1, without a device, did not run the CPU's backend: {ranks[1]!r}")
        self.finish()


# --------------------------------------------------------------------------- main

def probe(paes, mpiexec):
    """None when MPI tests can run, else why not."""
    global LAUNCHER
    if mpiexec is None:
        return "no mpiexec found (give --mpiexec PATH)"
    if not os.access(mpiexec, os.X_OK):
        return f"mpiexec {mpiexec!r} is not executable"
    try:
        LAUNCHER = Launcher(mpiexec)
    except Unsupported as e:
        return str(e)
    proc = subprocess.run([paes, "info"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    engines = [l for l in proc.stdout.decode(errors="replace").splitlines() if l.startswith("Engines:")]
    if proc.returncode != 0 or not engines or "mpi" not in engines[0].split():
        return f"this paes has no mpi engine (paes info: {engines or describe(proc)})"
    try:
        cmd, env = mpiexec_command([Ranks(2, [paes, "--version"])])
        proc = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`{mpiexec} -n 2 paes --version` does not run: {e}"
    if proc.returncode != 0:
        return f"`{mpiexec} -n 2 paes --version` fails: {describe(proc)}"
    return None


def main():
    global PAES, OPENSSL, MPIEXEC, SHIM, SKIP_REASON
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--mpiexec", default=shutil.which("mpiexec"),
                        help="the mpiexec of the MPI paes-mpi was built for (MPICH's or Open MPI's); "
                             "default: mpiexec on PATH")
    parser.add_argument("--shim", help="the fault injection library (tests/fault/fault_inject.c)")
    opts, rest = parser.parse_known_args()
    SHIM = os.path.abspath(opts.shim) if opts.shim else None
    sys.argv = [sys.argv[0]] + rest  # tool_paths reads --paes and --openssl
    PAES, OPENSSL, rest = tool_paths(__doc__)
    MPIEXEC = shutil.which(opts.mpiexec) if opts.mpiexec else None
    if opts.mpiexec and MPIEXEC is None:
        MPIEXEC = os.path.abspath(opts.mpiexec)  # probe() says why it does not run
    SKIP_REASON = probe(PAES, MPIEXEC)
    if SKIP_REASON:
        print(f"{os.path.basename(sys.argv[0])}: skipping every MPI test: {SKIP_REASON}",
              file=sys.stderr)
    else:
        print(f"{os.path.basename(sys.argv[0])}: launching with {LAUNCHER}", file=sys.stderr)
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
