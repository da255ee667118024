#!/usr/bin/env python3
"""Inputs past 4 GiB through the real binary, files sparse where possible.

Byte offsets above 2^32 are where 32-bit offset or length arithmetic breaks, so
every parallel direction runs on a 4 GiB + 1 MiB input and its output is
checked against the openssl command at windows before, across and after
2^32 (each window started with the IV or counter it must have there), then
decrypted back and compared with the input:
  - CTR, with an IV whose low 64 bits wrap just past byte 2^32, also read
    from a named pipe (as a stream);
  - ECB both ways, CBC and CFB decryption (of zero bytes taken as ciphertext);
  - the sealed format both ways, and a byte flipped past 2^32 refused;
  - the mpi engine (2 ranks) on the same CTR job, when it is built;
  - age v1 files: --range on age's own 4 GiB file against `age -d`'s output, and each tool
    opening the other's 4 GiB file.
The sealed format's 2^32-segment limit is refused up front with a clear error,
on encryption (a sparse input of ~176 GB) and on decryption (a sealed file
extended to the same size), leaving no output.
More than 2^32 CTR blocks (64 GiB) run in memory in more_than_2_32_blocks_test.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from harness import ScratchTestCase, describe, run_test_script, write_file  # noqa: E402
from launchers import Launcher, Ranks  # noqa: E402

PAES, OPENSSL = None, None
MPIEXEC = None
GIB, MIB = 1 << 30, 1 << 20
BIG = 4 * GIB + MIB + 48          # whole blocks, for ECB and CBC
BIG_ODD = 4 * GIB + MIB + 37      # a partial last block, for CTR, CFB and sealed
WINDOW = 64 * 1024
KEY = bytes(range(32))
# Upper half arbitrary; the lower 64 bits are 2^64 - 2^28 - 2^14, so they wrap
# at block 2^28 + 2^14, i.e. byte 2^32 + 256 KiB.
IV = bytes.fromhex("0123456789abcdef") + ((1 << 64) - (1 << 28) - (1 << 14)).to_bytes(8, "big")
NEEDED_FREE = 12 * GIB
SEGMENT_LIMIT = 1 << 32


def counter_after(iv, blocks):
    return ((int.from_bytes(iv, "big") + blocks) % (1 << 128)).to_bytes(16, "big")


def openssl(args, data):
    proc = subprocess.run([OPENSSL, "enc", *args, "-K", KEY.hex()], input=data, capture_output=True)
    if proc.returncode != 0:
        raise AssertionError(f"openssl {args}: {proc.stderr!r}")
    return proc.stdout


def read_at(path, offset, length):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def equals_zeros(path, length):
    """True when the file is exactly `length` zero bytes (cmp against /dev/zero)."""
    if os.path.getsize(path) != length:
        return False
    return subprocess.run(["cmp", "-s", "-n", str(length), path, "/dev/zero"]).returncode == 0


def windows(length):
    """(offset, length) of block-aligned windows: the start, across 2^32, across the
    counter's wrap just past it, and the last window, which runs to the end."""
    last = (length - WINDOW) // 16 * 16
    return [(0, WINDOW), ((1 << 32) - WINDOW // 2, WINDOW),
            ((1 << 32) + 256 * 1024 - WINDOW // 2, WINDOW), (last, length - last)]


class HugeFilesCase(ScratchTestCase):
    """The sparse inputs and helpers; the tests are in the two classes below (the one that
    launches mpiexec apart, so that it alone carries the mpi label)."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="paes-huge-", dir=os.environ.get("PAES_HUGE_DIR"))
        free = shutil.disk_usage(cls.dir).free
        if free < NEEDED_FREE:
            shutil.rmtree(cls.dir)
            raise unittest.SkipTest(f"SKIPPED: {free / GIB:.1f} GiB free in {cls.dir}, the >4 GiB tests need "
                                    f"{NEEDED_FREE // GIB} GiB (set PAES_HUGE_DIR to a roomier directory)")
        cls.key = write_file(os.path.join(cls.dir, "key"), KEY.hex().encode() + b"\n", 0o600)
        cls.zeros = cls.sparse("zeros.bin", BIG)
        cls.zeros_odd = cls.sparse("zeros-odd.bin", BIG_ODD)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def sparse(cls, name, length):
        path = os.path.join(cls.dir, name)
        with open(path, "wb") as f:
            f.truncate(length)
        return path

    def shared_path(self, name):
        """A file in the class's directory, which its tests share (the big sparse inputs)."""
        return os.path.join(self.dir, name)

    def tearDown(self):
        for name in os.listdir(self.dir):
            if name not in ("key", "zeros.bin", "zeros-odd.bin"):
                os.remove(os.path.join(self.dir, name))
        super().tearDown()

    def check_windows(self, out, length, expected_at):
        """Each window of `out` equals expected_at(offset, window_length)."""
        self.assertEqual(os.path.getsize(out), length)
        for offset, n in windows(length):
            self.assertEqual(read_at(out, offset, n), expected_at(offset, n),
                             f"{os.path.basename(out)}: window at byte {offset} differs from openssl")


class HugeFiles(HugeFilesCase):
    ctest_labels = ("huge", "slow", "threads")

    def test_ctr_past_2_32_bytes_with_the_counter_wrapping_there(self):
        out, back = self.shared_path("ctr"), self.shared_path("ctr.back")
        self.assert_exit(["encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(),
                          self.zeros_odd, "-o", out], timeout=None)
        self.check_windows(out, BIG_ODD, lambda off, n: openssl(
            ["-aes-256-ctr", "-iv", counter_after(IV, off // 16).hex()], bytes(n)))
        self.assert_exit(["decrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(), out, "-o",
                          back], timeout=None)
        self.assertTrue(equals_zeros(back, BIG_ODD), "CTR round trip differs from the input")

    def test_ctr_past_2_32_bytes_from_a_named_pipe(self):
        """The same job read as a stream: a FIFO that `cat` fills, as <(...) would."""
        fifo, out = self.shared_path("in.fifo"), self.shared_path("ctr.fifo")
        os.mkfifo(fifo)
        writer = subprocess.Popen(["sh", "-c", 'exec cat "$0" > "$1"', self.zeros_odd, fifo])
        try:
            self.assert_exit(["encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(), fifo,
                              "-o", out], timeout=None)
        finally:
            try:
                writer.wait(timeout=60)  # done once paes read to the end
            except subprocess.TimeoutExpired:  # paes failed before reading it all
                writer.kill()
                writer.wait()
        self.assertEqual(writer.returncode, 0, "cat into the FIFO failed")
        self.check_windows(out, BIG_ODD, lambda off, n: openssl(
            ["-aes-256-ctr", "-iv", counter_after(IV, off // 16).hex()], bytes(n)))

    def test_ecb_both_ways(self):
        out, back = self.shared_path("ecb"), self.shared_path("ecb.back")
        self.assert_exit(["encrypt", "--mode", "ecb", "--no-pad", "--key-file", self.key, self.zeros, "-o",
                          out], timeout=None)
        self.check_windows(out, BIG, lambda off, n: openssl(["-aes-256-ecb", "-nopad"], bytes(n)))
        self.assert_exit(["decrypt", "--mode", "ecb", "--no-pad", "--key-file", self.key, out, "-o", back],
                          timeout=None)
        self.assertTrue(equals_zeros(back, BIG), "ECB round trip differs from the input")

    def test_cbc_decryption(self):
        # Zero ciphertext: every window's IV is the zero block before it, or the IV at 0.
        out = self.shared_path("cbc")
        self.assert_exit(["decrypt", "--mode", "cbc", "--no-pad", "--key-file", self.key, "--iv", IV.hex(),
                          self.zeros, "-o", out], timeout=None)
        self.check_windows(out, BIG, lambda off, n: openssl(
            ["-d", "-aes-256-cbc", "-nopad", "-iv", (IV if off == 0 else bytes(16)).hex()], bytes(n)))

    def test_cfb_decryption(self):
        out = self.shared_path("cfb")
        self.assert_exit(["decrypt", "--mode", "cfb", "--key-file", self.key, "--iv", IV.hex(),
                          self.zeros_odd, "-o", out], timeout=None)
        self.check_windows(out, BIG_ODD, lambda off, n: openssl(
            ["-d", "-aes-256-cfb", "-iv", (IV if off == 0 else bytes(16)).hex()], bytes(n)))

    def test_sealed_both_ways_and_a_flip_past_2_32_is_refused(self):
        sealed, back = self.shared_path("sealed"), self.shared_path("sealed.back")
        self.assert_exit(["encrypt", "--key-file", self.key, self.zeros_odd, "-o", sealed], timeout=None)
        self.assertGreater(os.path.getsize(sealed), BIG_ODD)
        self.assert_exit(["decrypt", "--key-file", self.key, sealed, "-o", back], timeout=None)
        self.assertTrue(equals_zeros(back, BIG_ODD), "sealed round trip differs from the input")
        os.remove(back)
        flip_at = (1 << 32) + 12345
        with open(sealed, "r+b") as f:
            f.seek(flip_at)
            byte = f.read(1)
            f.seek(flip_at)
            f.write(bytes([byte[0] ^ 0x01]))
        proc = self.assert_exit(["decrypt", "--key-file", self.key, sealed, "-o", back], code=1, timeout=None)
        self.assertIn(b"segment", proc.stderr, describe(proc))
        self.assertFalse(os.path.exists(back), "a refused file left output")

    def test_more_than_2_32_segments_is_refused_up_front(self):
        # The smallest segment for AES-256: the 40-byte header, a tag, one byte.
        segment = 57
        per_segment = segment - 16
        most = 1 + (SEGMENT_LIMIT - 1) * per_segment  # plaintext bytes 2^32 segments hold
        too_big = self.sparse("too-big.bin", most + 1)
        out = self.shared_path("too-big.paes")
        proc = self.assert_exit(["encrypt", "--key-file", self.key, "--segment-size", str(segment), too_big,
                                 "-o", out], code=1, timeout=None)
        self.assertIn(b"2^32 segments", proc.stderr, describe(proc))
        self.assertFalse(os.path.exists(out), "refused input left output")
        self.assertEqual(len([n for n in os.listdir(self.dir) if n.startswith(".")]), 0, "a temporary was left")

        # Decrypting: a real sealed file, extended (sparse) to more than 2^32 segments.
        small = write_file(self.shared_path("small.bin"), b"x" * 100)
        sealed = self.shared_path("small.paes")
        self.assert_exit(["encrypt", "--key-file", self.key, "--segment-size", str(segment), small, "-o",
                          sealed], timeout=None)
        with open(sealed, "r+b") as f:
            # The preamble, the MAC line and Tink's header, then one byte more than 2^32 segments hold.
            f.truncate(32 + 48 + 40 + SEGMENT_LIMIT * segment + 1)
        back = self.shared_path("small.back")
        proc = self.assert_exit(["decrypt", "--key-file", self.key, sealed, "-o", back], code=1, timeout=None)
        self.assertIn(b"2^32 segments", proc.stderr, describe(proc))
        self.assertFalse(os.path.exists(back), "refused input left output")


def patterned_file(path, length):
    """`length` bytes that differ at every offset that matters: 1 MiB of random bytes repeated,
    each repetition starting with its index (8 bytes), so that a window read from the wrong
    place, even a whole MiB off, can't match."""
    block = bytearray(os.urandom(MIB))
    with open(path, "wb") as f:
        for index in range((length + MIB - 1) // MIB):
            block[:8] = index.to_bytes(8, "big")
            f.write(block[:min(MIB, length - index * MIB)])
    return path


class HugeAgeFiles(HugeFilesCase):
    """age v1 files past 4 GiB (issue 41): paes --range on age's own file returns what
    `age -d` gives there (every range, cut from one pass of its output), at offsets across
    chunk boundaries, across 2^32 and from the end;
    the whole file opens through a pipe; paes' age file of the same input opens in age."""
    ctest_labels = ("huge", "slow", "threads")

    def setUp(self):
        super().setUp()
        self.age, self.age_keygen = shutil.which("age"), shutil.which("age-keygen")
        if not self.age or not self.age_keygen:
            self.skipTest("SKIPPED: age and age-keygen are not installed (scripts/setup.sh installs them)")

    def age_d_windows(self, identity, path, windows):
        """{(offset, length): bytes} of `age -d`'s output, cut from its pipe in one pass (as dd would
        cut them: `age -d | dd skip=OFFSET count=LENGTH iflag=skip_bytes,count_bytes`)."""
        found = {}
        with subprocess.Popen([self.age, "-d", "-i", identity, path], stdout=subprocess.PIPE) as age:
            at = 0
            while chunk := age.stdout.read(MIB):
                for offset, length in windows:
                    lo, hi = max(offset, at), min(offset + length, at + len(chunk))
                    if lo < hi:
                        found[(offset, length)] = found.get((offset, length), b"") + chunk[lo - at:hi - at]
                at += len(chunk)
        self.assertEqual(age.returncode, 0, "age -d of age's own file")
        return found

    def test_range_on_a_4_gib_age_file_and_both_tools_open_each_others(self):
        identity = self.shared_path("age.key")
        subprocess.run([self.age_keygen, "-o", identity], check=True, capture_output=True)
        recipient = subprocess.run([self.age_keygen, "-y", identity], check=True, capture_output=True,
                                   text=True).stdout.strip()
        plain = patterned_file(self.shared_path("plain.bin"), BIG_ODD)
        by_age = self.shared_path("by-age.age")
        subprocess.run([self.age, "-r", recipient, "-o", by_age, plain], check=True, capture_output=True)
        chunk = 64 * 1024
        # (offset or -from_end, length): chunk boundaries, a 1 MiB group of sixteen chunks, 2^32, the end.
        ranges = [(0, 100), (chunk - 10, 20), (16 * chunk - 1, 2), (16 * chunk * 5 + 3, 3 * chunk),
                  ((1 << 32) - 7, 14), ((1 << 32) + chunk * 7 - 5, 100000), (-1, None), (-(chunk + 1), None),
                  (-(MIB + 100), 100)]
        out = self.shared_path("range.out")
        got = {}
        for offset, length in ranges:
            spec = f"{offset}" + (f":{length}" if length is not None else "")
            self.assert_exit(["decrypt", "-i", identity, "--range", spec, by_age, "-o", out, "-f"], timeout=None)
            start = offset if offset >= 0 else BIG_ODD + offset
            end = BIG_ODD if length is None else min(BIG_ODD, start + length)
            got[(start, end - start)] = read_at(out, 0, end - start + 1)
            self.assertEqual(got[(start, end - start)], read_at(plain, start, end - start),
                             f"--range {spec}: not the input's bytes")
        # age's own output at every range, from one pass of age -d.
        for window, data in self.age_d_windows(identity, by_age, list(got)).items():
            self.assertEqual(got[window], data, f"--range at {window}: not what age -d gives there")
        # The whole file, through a pipe, on every core.
        proc = subprocess.run(f'"{PAES}" decrypt -i "{identity}" < "{by_age}" | cmp - "{plain}"', shell=True,
                              capture_output=True)
        self.assertEqual(proc.returncode, 0, f"paes decrypt of age's 4 GiB file: {describe(proc)}")
        os.remove(by_age)
        by_paes = self.shared_path("by-paes.age")
        self.assert_exit(["encrypt", "--format", "age", "-r", recipient, plain, "-o", by_paes], timeout=None)
        proc = subprocess.run(f'"{self.age}" -d -i "{identity}" "{by_paes}" | cmp - "{plain}"', shell=True,
                              capture_output=True)
        self.assertEqual(proc.returncode, 0, f"age -d of paes' 4 GiB age file: {describe(proc)}")


class HugeFilesUnderMpi(HugeFilesCase):
    ctest_labels = ("huge", "mpi")

    def test_mpi_engine_matches_the_threads_engine(self):
        if not MPIEXEC:
            self.skipTest("SKIPPED: no mpiexec given (the mpi engine is not built)")
        threads, mpi = self.shared_path("ctr.threads"), self.shared_path("ctr.mpi")
        args = ["encrypt", "--mode", "ctr", "--key-file", self.key, "--iv", IV.hex(), self.zeros_odd]
        self.assert_exit([*args, "-o", threads], timeout=None)
        argv, env = Launcher(MPIEXEC).command([Ranks(2, [PAES, *args, "--engine", "mpi", "-o", mpi])])
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True)
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}: {describe(proc)}")
        self.assertEqual(subprocess.run(["cmp", "-s", threads, mpi]).returncode, 0,
                         "mpi engine output differs from the threads engine past 4 GiB")



if __name__ == "__main__":  # --mpiexec: the launcher of the MPI paes-mpi was built with
    sys.exit(run_test_script(__doc__, globals(), optional_paths=["--mpiexec"]))
