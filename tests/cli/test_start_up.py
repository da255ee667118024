#!/usr/bin/env python3
"""What a run of paes loads: small jobs map no GPU runtime, no OpenCL loader, no
ipsec-mb and no libssh, which are opened only when a job uses them (issue 43).

Run as:  python3 tests/cli/test_start_up.py --paes build/release/paes

Each case reads /proc/PID/maps of a paes that is still running: its stdout or
stderr is a pipe shrunk to one page and filled beforehand, so paes blocks at its
first write there, with everything it loaded still mapped. The write it blocks
at is its last work (--version's line, the help page, -v's summary after the
output was committed), so the maps hold all that the run loaded. The pipe is
then drained and paes must end with status 0.

  L. paes --version, paes info --help, and a 2 KiB encrypt (to an age recipient,
     into a file) and decrypt (with its identity) map none of: a GPU runtime or
     driver (libcuda, libcudart, libnvidia-*, libnvrtc), an OpenCL loader or
     platform (libOpenCL, PoCL), ipsec-mb, libssh or libsodium; nor libgomp, in
     a build that opens OpenMP's runtime at its first parallel region (GCC's:
     CMake sets PAES_OPENMP_AT_FIRST_USE=ON in the test's environment).
  C. controls, so that L can fail: paes info --json maps the OpenCL loader where
     this paes has the opencl backend and the loader is installed; a 5 MiB
     encrypt maps ipsec-mb where auto takes it on this CPU; an encrypt to an ssh
     key maps libssh (with ssh-keygen); a 16 MiB encrypt on two threads maps
     libgomp. A control that can't apply here skips, saying why.

Python 3.9+ standard library only; Linux only. Nothing is timed.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import ScratchTestCase, run_paes, run_unittest, tool_paths, write_file  # noqa: E402

PAES = "paes"
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ, which Python has from 3.10 on
GPU_OR_OPENCL = re.compile(r"/lib(cuda|cudart|nvidia-[\w-]+|nvrtc|OpenCL|pocl|amdocl\w*|igdrcl|intelocl\w*)\.so")
IPSEC_MB = re.compile(r"/libIPSec_MB\.so")
SSH = re.compile(r"/lib(ssh|sodium)\.so")
OPENMP = re.compile(r"/libgomp\.so")
OPENMP_AT_FIRST_USE = os.environ.get("PAES_OPENMP_AT_FIRST_USE") == "ON"


def mapped_files(pid):
    """The paths of the files mapped into process `pid`."""
    with open(f"/proc/{pid}/maps") as maps:
        return sorted({line.split(None, 5)[5] for line in maps.read().splitlines()
                       if len(line.split(None, 5)) == 6 and line.split(None, 5)[5].startswith("/")})


def blocked_in_pipe_write(pid):
    try:
        with open(f"/proc/{pid}/wchan") as wchan:
            return "pipe_write" in wchan.read()
    except FileNotFoundError:  # it ended
        return False


def maps_at_last_write(argv, stream="stdout", timeout=60):
    """Runs paes with `argv`, its `stream` (stdout or stderr) a full one-page pipe;
    once it blocks writing there: the files mapped into it. Then drains the pipe and
    checks that paes ends with status 0; returns (mapped files, what it wrote there)."""
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, F_SETPIPE_SZ, 4096)
        filler = b"f" * 4096
        os.write(write_end, filler)
        streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: write_end}
        proc = subprocess.Popen([PAES, *argv], stdin=subprocess.DEVNULL, **streams)
        os.close(write_end)
        write_end = -1
        deadline = time.monotonic() + timeout
        while not blocked_in_pipe_write(proc.pid):
            if proc.poll() is not None:
                raise AssertionError(f"paes {' '.join(argv)} ended (status {proc.returncode}) without writing to "
                                     f"its {stream}")
            if time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"paes {' '.join(argv)} never wrote to its {stream}")
            time.sleep(0.005)
        files = mapped_files(proc.pid)
        written = b""
        while chunk := os.read(read_end, 65536):
            written += chunk
        status = proc.wait(timeout=timeout)
        assert status == 0, f"paes {' '.join(argv)} ended with status {status}"
        return files, written[len(filler):]
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


class StartUpTestCase(ScratchTestCase):
    prefix = "paes-start-up-"

    def setUp(self):
        super().setUp()
        identity = self.path("id.txt")
        result = run_paes(["keygen", "--x25519", "-o", identity], paes=PAES)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(identity) as f:
            self.recipient = re.search(r"age1[0-9a-z]+", f.read()).group(0)
        self.identity = identity
        self.small = self.path("small.bin")
        write_file(self.small, os.urandom(2048))

    def assert_none(self, pattern, files, what):
        found = [f for f in files if pattern.search(f)]
        self.assertEqual(found, [], f"{what} maps what it doesn't use")

    def assert_some(self, pattern, files, what):
        self.assertTrue(any(pattern.search(f) for f in files), f"{what} maps none of {pattern.pattern}: {files}")


class LoadedTest(StartUpTestCase):
    def check_small(self, files, what):
        for pattern in (GPU_OR_OPENCL, IPSEC_MB, SSH) + ((OPENMP,) if OPENMP_AT_FIRST_USE else ()):
            self.assert_none(pattern, files, what)

    def test_version(self):
        files, out = maps_at_last_write(["--version"])
        self.assertIn(b"paes", out)
        self.check_small(files, "paes --version")

    def test_info_help(self):
        files, out = maps_at_last_write(["info", "--help"])
        self.assertIn(b"info", out)
        self.check_small(files, "paes info --help")

    def test_small_encrypt_and_decrypt(self):
        sealed = self.path("small.paes")
        files, said = maps_at_last_write(["encrypt", "-v", "-r", self.recipient, self.small, "-o", sealed], "stderr")
        self.assertIn(b"encrypted 2.0 KiB", said)
        self.check_small(files, "a 2 KiB encrypt")
        files, said = maps_at_last_write(["decrypt", "-v", "-i", self.identity, sealed, "-o", self.path("back")],
                                         "stderr")
        self.assertIn(b"decrypted", said)
        self.check_small(files, "a 2 KiB decrypt")
        with open(self.small, "rb") as a, open(self.path("back"), "rb") as b:
            self.assertEqual(a.read(), b.read())


class ControlTest(StartUpTestCase):
    def info(self):
        result = run_paes(["info", "--json"], paes=PAES)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def backend(self, name):
        return next((b for b in self.info()["backends"] if b["name"] == name), None)

    def test_info_maps_the_opencl_loader(self):
        opencl = self.backend("opencl")
        if opencl is None or not opencl["built_in"]:
            self.skipTest("this paes was built without the opencl backend")
        if "missing here" in opencl.get("why_not", ""):
            self.skipTest(f"no OpenCL loader here: {opencl['why_not']}")
        files, _ = maps_at_last_write(["info", "--json"])
        self.assert_some(re.compile(r"/libOpenCL\.so"), files, "paes info")

    def test_a_larger_job_maps_ipsec_mb(self):
        ipsec_mb = self.backend("ipsec-mb")
        if ipsec_mb is None or not ipsec_mb["chosen_by_auto"]:
            self.skipTest("auto doesn't take ipsec-mb here (not built in, or not this CPU's fast code)")
        larger = self.path("larger.bin")
        write_file(larger, os.urandom(5 << 20))
        files, said = maps_at_last_write(["encrypt", "-v", "-r", self.recipient, larger, "-o", self.path("l.paes")],
                                         "stderr")
        self.assertIn(b"ipsec-mb", said)
        self.assert_some(IPSEC_MB, files, "a 5 MiB encrypt")
        self.assert_none(GPU_OR_OPENCL, files, "a 5 MiB encrypt")

    def test_a_job_on_two_threads_maps_libgomp(self):
        if not OPENMP_AT_FIRST_USE:
            self.skipTest("this build links its OpenMP runtime (PAES_OPENMP_AT_FIRST_USE is not ON: not GCC)")
        larger = self.path("larger.bin")
        write_file(larger, os.urandom(16 << 20))
        files, said = maps_at_last_write(["encrypt", "-v", "--threads", "2", "--engine", "threads", "-r",
                                          self.recipient, larger, "-o", self.path("l.paes")], "stderr")
        self.assertIn(b"2 workers", said)
        self.assert_some(OPENMP, files, "a 16 MiB encrypt on two threads")

    def test_an_ssh_key_maps_libssh(self):
        keygen = shutil.which("ssh-keygen")
        if keygen is None:
            self.skipTest("no ssh-keygen here (scripts/setup.sh installs openssh-client)")
        key = self.path("id_ed25519")
        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
        files, _ = maps_at_last_write(["encrypt", "-v", "-R", key + ".pub", self.small, "-o", self.path("s.paes")],
                                      "stderr")
        self.assert_some(SSH, files, "an encrypt to an ssh key")


def main():
    global PAES
    PAES, _, rest = tool_paths(__doc__, need_openssl=False)
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
