#!/usr/bin/env python3
"""Fault injection through the real `paes` binary: what a failing disk, a changing
input, a signal or a missing permission does to a run, and what it leaves on disk.

Run as:  python3 tests/fault/test_faults.py --paes build/release/paes \\
             --shim build/release/tests/libpaes_fault_inject.so

The shim (fault_inject.c, loaded with LD_PRELOAD) fails reads and writes with a
chosen errno at a chosen byte offset, fails fsync, or pauses the run at an input
offset so the test can act while paes is certainly mid-run.

  W. write failure: RLIMIT_FSIZE (paes ignores SIGXFSZ, so the write fails with
     EFBIG), a full 1 MiB tmpfs (root only, else SKIPPED), ENOSPC and EIO from the
     shim mid-file, EIO from fsync; files and stdout.
  R. read error: EIO from the shim mid-file, on a file and on a stdin pipe.
  T. the input truncated mid-run fails ("file shrank while being read"); grown
     mid-run, paes encrypts the size it saw at start and warns; unlinked mid-run, it
     completes correctly (the open descriptor still reads every byte).
  S. SIGINT, SIGTERM, SIGQUIT, and the other signals that end a process by default
     (SIGXCPU, SIGALRM, SIGUSR1, SIGABRT; SIGSEGV, SIGBUS outside sanitizers): paes removes its temporary and dies of the
     signal (a shell shows 128 + the signal number: 130, 143, 131). SIGKILL leaves a stale temporary
     that never blocks the next run. A signal ignored at start (SIGINT in a
     script's background job) stays ignored.
  P. output directory not writable.
  L. no threads to be had (RLIMIT_NPROC, as an unused uid; root only, else SKIPPED): the
     ordered pipeline's reader or a worker, or OpenMP's team (libgomp ends paes
     with exit(), and paes' exit hook removes the temporary and says so).

Each failure runs over raw CTR encryption (threads and serial engines), CBC
decryption (threads), CBC encryption (the ordered pipeline) where it differs,
and the sealed format both ways, once into a fresh output name and once with -f
over an existing output. Every case checks the exit status, one "paes: " line
naming the file and the cause, the input's sha256, and what is left in the
output directory: nothing (or the old output, byte for byte, with -f), and no
temporary except after SIGKILL. A table of the outcomes ends the output.

Python 3.11 standard library only; Linux only (LD_PRELOAD, /proc).
"""

import errno
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness.fault_shim import fault_shim_env  # noqa: E402
from harness import (ScratchTestCase, killed_unless_finished, openssl_ok, path_option, raw_args,  # noqa: E402
                     read_file, run_unittest, tool_paths, wait_for, write_file)

PAES = "paes"
OPENSSL = "openssl"
SHIM = "libpaes_fault_inject.so"

MIB = 1024 * 1024
INPUT_LEN = 8 * MIB
FAULT_AT = 3 * MIB + 7      # an input or output offset well inside the file, off any chunk boundary
PAUSE_AT = 4 * MIB          # where a paused run waits for the test
FSIZE_LIMIT = 2 * MIB
KEY = bytes(range(32))
IV = bytes(range(16, 32))
NOBODY = 65534
RUN_TIMEOUT = 60
# Under ThreadSanitizer (its preset sets TSAN_OPTIONS) a signal may wait for an intercepted call
# (SignalTest): how long a signalled, paused paes gets to die before its read is let go.
UNDER_TSAN = "TSAN_OPTIONS" in os.environ
# (Read at import: the harness later sets every sanitizer's options, to collect reports.)
UNDER_ASAN = "ASAN_OPTIONS" in os.environ
TSAN_SIGNAL_GRACE = 10

RESULTS = []  # (section, case, exit, left for a fresh output, left with -f over an old output)
SECTIONS = "WRTSPL"  # the table's order, as in the docstring


# --------------------------------------------------------------------------- fixtures

class Fixtures:
    """Inputs shared by every case (never modified): a plaintext and its CTR, CBC and
    sealed encryptions, in a directory any user can read."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="paes-fault-fixtures-")
        os.chmod(self.dir, 0o755)
        self.plain = write_file(os.path.join(self.dir, "plain.bin"), os.urandom(INPUT_LEN), 0o644)
        self.plain_bytes = read_file(self.plain)
        self.key_file = write_file(os.path.join(self.dir, "key.hex"), KEY.hex().encode(), 0o600)
        self.ctr_bytes = openssl_ok("ctr", KEY, IV, self.plain_bytes)
        self.cbc = write_file(os.path.join(self.dir, "plain.cbc"), openssl_ok("cbc", KEY, IV, self.plain_bytes), 0o644)
        self.sealed = os.path.join(self.dir, "plain.paes")
        proc = subprocess.run([PAES, "encrypt", "--key-file", self.key_file, self.plain, "-o", self.sealed],
                              capture_output=True, timeout=RUN_TIMEOUT)
        if proc.returncode != 0:
            raise RuntimeError(f"sealing the fixture failed: {proc.stderr!r}")
        os.chmod(self.sealed, 0o644)

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


FIX = None


def setUpModule():
    global FIX
    FIX = Fixtures()


def tearDownModule():
    FIX.remove()


class Job:
    """One kind of paes run: its arguments, its input, and how to tell a correct output."""

    def __init__(self, label, args, input_path, expected=None, sealed_output=False):
        self.label = label
        self.args = args                 # without input and output
        self.input_path = input_path
        self.expected = expected         # the correct output bytes, or None for sealed output
        self.sealed_output = sealed_output

    def argv(self, inp, out):
        """The paes command line of this job from `inp` to `out`."""
        return [PAES] + self.args + [inp, "-o", out]

    def output_is_correct(self, data, plain=None):
        if not self.sealed_output:
            return data == self.expected
        proc = subprocess.run([PAES, "decrypt", "--key-file", FIX.key_file, "-", "-o", "-"], input=data,
                              capture_output=True, timeout=RUN_TIMEOUT)
        return proc.returncode == 0 and proc.stdout == (plain if plain is not None else FIX.plain_bytes)


def key_env_args(direction, mode, extra=()):
    """A raw-mode run's arguments, the key in PAES_FAULT_TEST_KEY (paes_env sets it)."""
    return raw_args(direction, mode, ["--key-env", "PAES_FAULT_TEST_KEY"], IV, extra)


JOBS = {}


def jobs():
    """The jobs by name, made once the fixtures exist."""
    if JOBS:
        return JOBS
    key_env = ["--key-env", "PAES_FAULT_TEST_KEY"]
    JOBS.update({
        "ctr": Job("raw CTR encrypt, threads", key_env_args("encrypt", "ctr", ["--threads", "2"]), FIX.plain,
                   FIX.ctr_bytes),
        "ctr-serial": Job("raw CTR encrypt, --engine serial", key_env_args("encrypt", "ctr", ["--engine", "serial"]),
                          FIX.plain, FIX.ctr_bytes),
        "cbc-dec": Job("raw CBC decrypt, threads", key_env_args("decrypt", "cbc", ["--threads", "2"]), FIX.cbc,
                       FIX.plain_bytes),
        "cbc-enc": Job("raw CBC encrypt (ordered pipeline)", key_env_args("encrypt", "cbc"), FIX.plain,
                       read_file(FIX.cbc)),
        "seal": Job("sealed encrypt", ["encrypt"] + key_env + ["--threads", "2"], FIX.plain, sealed_output=True),
        "open": Job("sealed decrypt", ["decrypt"] + key_env + ["--threads", "2"], FIX.sealed, FIX.plain_bytes),
    })
    return JOBS


def paes_env(**faults):
    """This process's environment with the key in PAES_FAULT_TEST_KEY, and the shim with
    `faults` when there are any."""
    env = dict(os.environ, PAES_FAULT_TEST_KEY=KEY.hex())
    return fault_shim_env(SHIM, env, **faults) if faults else env


def file_size_limit(limit):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def describe_exit(returncode):
    if returncode >= 0:
        return str(returncode)
    name = signal.Signals(-returncode).name
    return f"killed by {name} (shell: {128 - returncode})"


def left_on_disk(out_dir, out_name, old=None, job=None, plain=None):
    """What the output directory holds for `out_name`, in the words of the table."""
    parts = []
    temps = sorted(e for e in os.listdir(out_dir) if e.startswith(f".{out_name}.paes-"))
    if temps:
        parts.append("stale temp " + ", ".join(f".{out_name}.paes-" + "X" * len(t.split(".paes-")[1])
                                               for t in temps))
    out = os.path.join(out_dir, out_name)
    if os.path.exists(out):
        data = read_file(out)
        if old is not None and data == old:
            parts.append("old output intact")
        elif job is None:
            parts.append(f"an output under the final name ({len(data)} bytes)")
        elif job.output_is_correct(data, plain):
            parts.append("complete, correct output")
        else:
            parts.append(f"WRONG output ({len(data)} bytes)")
    others = [e for e in os.listdir(out_dir) if e != out_name and not e.startswith(f".{out_name}.paes-")]
    if others:
        parts.append("unexpected: " + ", ".join(sorted(others)))
    return "; ".join(parts) if parts else "nothing"


def stderr_line(proc_stderr):
    return proc_stderr.decode(errors="replace").strip()


# --------------------------------------------------------------------------- the case runner

class FaultTestCase(ScratchTestCase):
    prefix = "paes-fault-"
    section = "?"  # the docstring's letter

    def setUp(self):
        super().setUp()
        os.chmod(self.tmp, 0o755)  # the permission cases run paes as nobody

    def expect_failure(self, case, job, message, faults=None, preexec=None, out_dir=None,
                       run=None, inp=None, input_unchanged=True):
        """Runs `job` twice under a fault, into a fresh name and with -f over an old
        output; both must exit 1 with `message` (a list of substrings; {out}, {inp}
        and {outdir} filled in) and leave nothing, or the old output. Records a table
        row. `run(cmd, input, output)` replaces the plain run under `faults`."""
        left = []
        exits = []
        for force in (False, True):
            d = out_dir(force) if out_dir else self.new_dir(f"{len(RESULTS)}-{'force' if force else 'new'}")
            out = os.path.join(d, "out.bin")
            old = None
            if force:
                old = os.urandom(100_000)
                write_file(out, old)
            source = inp or job.input_path
            before = sha256(source) if input_unchanged else None
            cmd = job.argv(source, out) + (["-f"] if force else [])
            if run is not None:
                rc, err = run(cmd, source, out)
            else:
                proc = subprocess.run(cmd, env=paes_env(**(faults or {})), preexec_fn=preexec,
                                      capture_output=True, timeout=RUN_TIMEOUT)
                rc, err = proc.returncode, stderr_line(proc.stderr)
            what = left_on_disk(d, "out.bin", old)
            label = f"{case} -- {job.label}{' (-f over old output)' if force else ''}"
            print(f"  {label}: exit {describe_exit(rc)}; stderr: {err!r}; left: {what}", flush=True)
            wanted = [m.format(out=out, inp=source, outdir=d + "/") for m in message]
            self.check(rc == 1, f"{label}: exit {describe_exit(rc)}, wanted 1")
            self.check(err.startswith("paes: ") and "\n" not in err and all(w in err for w in wanted),
                       f"{label}: stderr {err!r} lacks one line with {wanted}")
            if input_unchanged:
                self.check(sha256(source) == before, f"{label}: the input changed")
            self.check(what == ("old output intact" if force else "nothing"), f"{label}: left {what}")
            exits.append(describe_exit(rc))
            left.append(what)
        RESULTS.append((self.section, f"{case} -- {job.label}", " / ".join(sorted(set(exits))), left[0], left[1]))

    def paused_run(self, cmd, input_path, act, preexec=None):
        """Runs `cmd` until its read of `input_path` reaches PAUSE_AT, calls act(proc),
        lets it go on (unless it died) and returns (exit status, stderr line, stdout
        bytes). Stdout goes to a file, so a paused paes never waits on a full pipe."""
        pause_file = self.path("paused")
        env = paes_env(read_path=input_path, pause_at=PAUSE_AT, pause_file=pause_file)
        with open(self.path("stdout"), "w+b") as stdout:
            proc = subprocess.Popen(cmd, env=env, preexec_fn=preexec, stdout=stdout, stderr=subprocess.PIPE)
            try:
                with killed_unless_finished(proc):
                    wait_for(lambda: os.path.exists(pause_file), "paes to reach the pause",
                             lambda: f"paes ended first: {describe_exit(proc.returncode)}, {proc.stderr.read()!r}"
                             if proc.poll() is not None else None)
                    act(proc)
                    if os.path.exists(pause_file):
                        os.remove(pause_file)
                    _, err = proc.communicate(timeout=RUN_TIMEOUT)
            finally:
                if os.path.exists(pause_file):
                    os.remove(pause_file)
            stdout.seek(0)
            return proc.returncode, stderr_line(err), stdout.read()

    def stream_case(self, label, rc, err, message, left):
        """A failure with stdout as the output, where nothing can be taken back."""
        print(f"  {label}: exit {describe_exit(rc)}; stderr: {err!r}; left: {left}", flush=True)
        self.check(rc == 1, f"{label}: exit {describe_exit(rc)}, wanted 1")
        self.check(err.startswith("paes: ") and "\n" not in err and all(m in err for m in message),
                   f"{label}: stderr {err!r} lacks one line with {message}")
        RESULTS.append((self.section, label, describe_exit(rc), left, "-"))

    def outcome_case(self, label, rc, err, out_dir, job, warning=None):
        """A run that must succeed despite what happened to it (saying `warning`, one line, if given)."""
        what = left_on_disk(out_dir, "out.bin", job=job)
        print(f"  {label}: exit {describe_exit(rc)}; stderr: {err!r}; left: {what}", flush=True)
        said = err == "" if warning is None else (err.startswith("paes: warning: ") and "\n" not in err
                                                  and warning in err)
        self.check(rc == 0 and said, f"{label}: exit {describe_exit(rc)}, stderr {err!r}")
        self.check(what == "complete, correct output", f"{label}: left {what}")
        RESULTS.append((self.section, label, describe_exit(rc), what, "-"))


def print_table():
    header = ("case", "exit", "left on disk (new output name)", "left on disk (-f over an old output)")
    results = [r[1:] for r in sorted(RESULTS, key=lambda r: SECTIONS.index(r[0]))]
    rows = [header] + results
    widths = [max(len(str(r[i])) for r in rows) for i in range(4)]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    print("\nFault injection outcomes:")
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in results:
        print(line(r))


# --------------------------------------------------------------------------- W. write failures

class WriteFailureTest(FaultTestCase):
    """W: a write that fails mid-file leaves nothing under the output name."""
    ctest_labels = ("threads",)
    section = "W"

    def test_file_size_limit(self):
        limit = file_size_limit(FSIZE_LIMIT)
        for name in ("ctr", "ctr-serial", "cbc-dec", "seal", "open"):
            self.expect_failure("write: RLIMIT_FSIZE 2 MiB", jobs()[name], ["writing {out}: File too large"],
                                preexec=limit)
        self.finish()

    def test_injected_enospc_and_eio(self):
        for errno_name, text in (("ENOSPC", "No space left on device"), ("EIO", "Input/output error")):
            for name in ("ctr", "ctr-serial", "cbc-dec", "cbc-enc", "seal", "open"):
                # The shim matches output files by their directory, known only per run.
                def run_with_write_error(cmd, source, out):
                    proc = subprocess.run(cmd, env=paes_env(write_dir=os.path.dirname(out), write_at=FAULT_AT,
                                                            write_errno=getattr(errno, errno_name)),
                                          capture_output=True, timeout=RUN_TIMEOUT)
                    return proc.returncode, stderr_line(proc.stderr)
                self.expect_failure(f"write: {errno_name} at output byte {FAULT_AT}", jobs()[name],
                                    [f"writing {{out}}: {text}"], run=run_with_write_error)
        self.finish()

    def test_fsync_failure(self):
        """A write error the kernel reports only at fsync (a lost page on a failing disk)."""
        for name in ("ctr", "seal"):
            def run_with_fsync_error(cmd, source, out):
                proc = subprocess.run(cmd, env=paes_env(write_dir=os.path.dirname(out), fsync_errno=5),
                                      capture_output=True, timeout=RUN_TIMEOUT)
                return proc.returncode, stderr_line(proc.stderr)
            self.expect_failure("write: EIO from fsync before the rename", jobs()[name],
                                ["writing {out}: Input/output error"], run=run_with_fsync_error)
        self.finish()

    def test_full_tmpfs(self):
        case = "write: full 1 MiB tmpfs"
        mount_point = self.new_dir("tmpfs")
        reason = None
        if os.geteuid() != 0:
            reason = "not root, so no tmpfs can be mounted"
        else:
            proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount_point],
                                  capture_output=True, timeout=30)
            if proc.returncode != 0:
                reason = f"mount -t tmpfs failed: {stderr_line(proc.stderr)}"
        if reason:
            print(f"SKIPPED: {case}: {reason}", flush=True)
            RESULTS.append((self.section, case, "SKIPPED", reason, ""))
            self.skipTest(reason)
        try:
            for name in ("ctr", "seal", "open"):
                def out_dir(force, tag=name):
                    d = os.path.join(mount_point, f"{tag}-{'force' if force else 'new'}")
                    os.makedirs(d)
                    return d
                self.expect_failure(case, jobs()[name], ["writing {out}: No space left on device"],
                                    out_dir=out_dir)
                for entry in os.listdir(mount_point):  # the next job gets the whole 1 MiB
                    shutil.rmtree(os.path.join(mount_point, entry))
        finally:
            subprocess.run(["umount", mount_point], capture_output=True, timeout=30)
        self.finish()

    def test_stdout(self):
        """To stdout nothing can be taken back: paes stops, exits 1 and says why."""
        job = jobs()["ctr"]
        cmd = [PAES] + job.args + [job.input_path]
        with open(self.path("stdout.bin"), "wb") as stdout:
            proc = subprocess.run(cmd, env=paes_env(), stdout=stdout, stderr=subprocess.PIPE,
                                  preexec_fn=file_size_limit(FSIZE_LIMIT), timeout=RUN_TIMEOUT)
        self.check(read_file(self.path("stdout.bin")) == job.expected[:FSIZE_LIMIT], "stdout: not the first 2 MiB")
        self.stream_case("write: RLIMIT_FSIZE 2 MiB -- raw CTR encrypt to stdout redirected to a file",
                         proc.returncode, stderr_line(proc.stderr), ["writing stdout: File too large"],
                         f"stdout file holds the first {os.path.getsize(self.path('stdout.bin')) // MIB} MiB")
        for name in ("ctr", "seal"):
            job = jobs()[name]
            proc = subprocess.run([PAES] + job.args + [job.input_path], env=paes_env(write_fd=1, write_at=FAULT_AT),
                                  capture_output=True, timeout=RUN_TIMEOUT)
            self.check(len(proc.stdout) == FAULT_AT, f"{job.label} to a pipe: {len(proc.stdout)} bytes out")
            self.stream_case(f"write: ENOSPC at stdout byte {FAULT_AT} -- {job.label} to a pipe",
                             proc.returncode, stderr_line(proc.stderr),
                             ["writing stdout: No space left on device"],
                             f"pipe got the {len(proc.stdout)} bytes before the fault")
        self.finish()


# --------------------------------------------------------------------------- R. read errors

class ReadErrorTest(FaultTestCase):
    """R: a read error mid-file fails the run and leaves nothing."""
    ctest_labels = ("threads",)
    section = "R"

    def test_file_read_error(self):
        for name in ("ctr", "ctr-serial", "cbc-dec", "cbc-enc", "seal", "open"):
            job = jobs()[name]
            self.expect_failure(f"read: EIO at input byte {FAULT_AT}", job, ["reading {inp}: Input/output error"],
                                faults={"read_path": job.input_path, "read_at": FAULT_AT})
        self.finish()

    def test_stdin_read_error(self):
        job = jobs()["ctr"]

        def run_from_stdin_with_read_error(cmd, source, out):
            cmd = ["-" if arg == source else arg for arg in cmd]
            proc = subprocess.run(cmd, input=FIX.plain_bytes, env=paes_env(read_fd=0, read_at=FAULT_AT),
                                  capture_output=True, timeout=RUN_TIMEOUT)
            return proc.returncode, stderr_line(proc.stderr)
        stdin_job = Job("raw CTR encrypt, stdin pipe to a file", job.args, job.input_path, job.expected)
        self.expect_failure(f"read: EIO at stdin byte {FAULT_AT}", stdin_job, ["reading stdin: Input/output error"],
                            run=run_from_stdin_with_read_error)
        self.finish()


# --------------------------------------------------------------------------- T. the input changes mid-run

class InputChangesTest(FaultTestCase):
    """T: truncated mid-run fails; grown or unlinked mid-run, paes encrypts what it saw at start."""
    ctest_labels = ("threads",)
    section = "T"

    def private_input(self, job):
        inp = self.path("input-" + os.path.basename(job.input_path))
        shutil.copyfile(job.input_path, inp)
        return inp

    def test_truncated(self):
        for name in ("ctr", "ctr-serial", "cbc-enc", "seal", "open"):
            job = jobs()[name]
            inp = self.private_input(job)

            def run_and_truncate_input(cmd, source, out):
                shutil.copyfile(job.input_path, source)  # the -f run needs the whole input again
                rc, err, _ = self.paused_run(cmd, source, lambda _: os.truncate(source, 2 * MIB))
                return rc, err
            self.expect_failure("input truncated to 2 MiB mid-run", job,
                                ["reading {inp}: file shrank while being read"], run=run_and_truncate_input, inp=inp,
                                input_unchanged=False)
        self.finish()

    def test_truncated_stream_to_stdout(self):
        """A file read front to back (the output is stdout) must notice the shrink too."""
        for name in ("ctr", "seal"):
            job = jobs()[name]
            inp = self.private_input(job)
            rc, err, out = self.paused_run([PAES] + job.args + [inp], inp, lambda _: os.truncate(inp, 2 * MIB))
            # How many chunks the writer passed on before the failed read stopped it varies.
            self.check(len(out) <= PAUSE_AT + MIB, f"{job.label} to stdout: {len(out)} bytes out")
            self.stream_case(f"input truncated to 2 MiB mid-run -- {job.label} to stdout", rc, err,
                             [f"reading {inp}: file shrank while being read"],
                             f"stdout got a prefix read before the shrink (at most {PAUSE_AT // MIB} MiB of input)")
        self.finish()

    def test_grown(self):
        """Bytes appended mid-run are not read: the output is the input as it was at start, and
        a warning says so."""
        for name in ("ctr", "seal"):
            job = jobs()[name]
            for to_stdout in (False, True):
                inp = self.private_input(job)
                out_dir = self.new_dir(f"grown-{name}-{to_stdout}")
                out = os.path.join(out_dir, "out.bin")
                cmd = [PAES] + job.args + [inp] + ([] if to_stdout else ["-o", out])

                def grow(_):
                    with open(inp, "ab") as f:
                        f.write(os.urandom(MIB))
                rc, err, stdout = self.paused_run(cmd, inp, grow)
                if to_stdout:
                    write_file(out, stdout)
                where = "stdout" if to_stdout else "a file"
                self.outcome_case(f"input grown by 1 MiB mid-run -- {job.label} to {where}", rc, err, out_dir, job,
                                  warning=f"grew while it was read ({INPUT_LEN} bytes when it was opened, "
                                          f"{INPUT_LEN + MIB} now): what came after the first {INPUT_LEN} bytes "
                                          "is not in the output")
        self.finish()

    def test_unlinked(self):
        """The open descriptor still reads every byte, so nothing is lost: paes completes."""
        for name in ("ctr", "cbc-enc", "seal", "open"):
            job = jobs()[name]
            inp = self.private_input(job)
            out_dir = self.new_dir(f"unlinked-{name}")
            rc, err, _ = self.paused_run(job.argv(inp, os.path.join(out_dir, "out.bin")), inp,
                                         lambda _: os.unlink(inp))
            self.outcome_case(f"input unlinked mid-run -- {job.label}", rc, err, out_dir, job)
        self.finish()


# --------------------------------------------------------------------------- S. signals

class SignalTest(FaultTestCase):
    """S: SIGINT/SIGTERM/SIGQUIT remove the temporary; SIGKILL's stale one never blocks a rerun."""
    ctest_labels = ("threads",)
    section = "S"

    def signal_case(self, sig, name, rerun=False):
        job = jobs()[name]
        left = []
        exits = set()
        for force in (False, True):
            out_dir = self.new_dir(f"{sig.name}-{name}-{force}")
            out = os.path.join(out_dir, "out.bin")
            old = None
            if force:
                old = os.urandom(100_000)
                write_file(out, old)
            cmd = job.argv(job.input_path, out) + (["-f"] if force else [])

            def has_grown():
                return any(e.startswith(".out.bin.paes-") and os.path.getsize(os.path.join(out_dir, e)) > 0
                           for e in os.listdir(out_dir))

            released = []  # under TSan: the pause let go while the signal was still pending

            def signal_once_the_output_grew(proc):
                wait_for(has_grown, "the temporary output to grow")
                proc.send_signal(sig)
                try:
                    proc.wait(timeout=TSAN_SIGNAL_GRACE if UNDER_TSAN else RUN_TIMEOUT)
                except subprocess.TimeoutExpired:
                    if not UNDER_TSAN:
                        raise
                    # TSan runs a handler only once the thread the signal went to calls a function
                    # it intercepts; a thread waiting in OpenMP's barrier for the paused read never
                    # does. Let the read go on, so that one does: paes must still die of the signal.
                    print(f"    (TSan: {sig.name} still pending after {TSAN_SIGNAL_GRACE} s; the paused "
                          "read goes on)", flush=True)
                    released.append(True)
                    os.remove(self.path("paused"))
                    proc.wait(timeout=RUN_TIMEOUT)
            before = sha256(job.input_path)
            rc, err, _ = self.paused_run(cmd, job.input_path, signal_once_the_output_grew)
            what = left_on_disk(out_dir, "out.bin", old)
            label = f"{sig.name} mid-run -- {job.label}{' (-f over old output)' if force else ''}"
            if released and rc == 0:
                # TSan may never run the handler at all (the signal stays queued until the process
                # exits): the run then ends as if the signal came after it, and what it leaves must be
                # whole. Outside TSan the signal is handled at once, and the checks below hold.
                what = left_on_disk(out_dir, "out.bin", old, job=job)
                print(f"  {label}: exit 0 (TSan never ran the {sig.name} handler); left: {what}", flush=True)
                self.check(what == "complete, correct output", f"{label}: TSan, signal never handled: left {what}")
                self.check(sha256(job.input_path) == before, f"{label}: the input changed")
                exits.add("0 (TSan: the handler never ran)")
                left.append(what)
                continue
            expected = (["stale temp .out.bin.paes-XXXXXX"] if sig == signal.SIGKILL else []) + \
                (["old output intact"] if force else [])
            print(f"  {label}: exit {describe_exit(rc)}; stderr: {err!r}; left: {what}", flush=True)
            self.check(rc == -sig, f"{label}: exit {describe_exit(rc)}, wanted death by {sig.name}")
            self.check(sha256(job.input_path) == before, f"{label}: the input changed")
            self.check(what == ("; ".join(expected) or "nothing"), f"{label}: left {what}")
            if rerun:
                proc = subprocess.run(cmd, env=paes_env(), capture_output=True, timeout=RUN_TIMEOUT)
                again = left_on_disk(out_dir, "out.bin", job=job)
                print(f"    rerun: exit {proc.returncode}; stderr: {stderr_line(proc.stderr)!r}; left: {again}",
                      flush=True)
                self.check(proc.returncode == 0, f"{label}: rerun exit {proc.returncode}")
                self.check(again == "stale temp .out.bin.paes-XXXXXX; complete, correct output",
                           f"{label}: after the rerun, left {again}")
                what += f"; rerun: exit {proc.returncode}, " + again.split("; ")[-1]
            exits.add(describe_exit(rc))
            left.append(what)
        RESULTS.append((self.section, f"{sig.name} mid-run -- {job.label}", " / ".join(sorted(exits)), left[0], left[1]))

    def test_sigint_sigterm_sigquit(self):
        for sig, name in ((signal.SIGINT, "ctr"), (signal.SIGTERM, "ctr-serial"), (signal.SIGQUIT, "cbc-dec"),
                          (signal.SIGTERM, "cbc-enc"), (signal.SIGINT, "seal"), (signal.SIGQUIT, "open")):
            self.signal_case(sig, name)
        self.finish()

    def test_other_signals_that_end_a_process(self):
        """A CPU-time limit (ulimit -t), `timeout -s ALRM`, a stray SIGUSR1, an abort:
        each ended paes with its temporary (partial plaintext, decrypting) left behind."""
        cases = [(signal.SIGXCPU, "ctr"), (signal.SIGALRM, "cbc-dec"), (signal.SIGUSR1, "open"),
                 (signal.SIGABRT, "cbc-enc")]
        if UNDER_ASAN or UNDER_TSAN:
            print("  (SIGSEGV, SIGBUS: not here: the sanitizer's runtime handles them, as paes leaves it to)")
        else:
            cases += [(signal.SIGSEGV, "seal"), (signal.SIGBUS, "ctr-serial")]
        for sig, name in cases:
            self.signal_case(sig, name)
        self.finish()

    def test_sigkill(self):
        for name in ("ctr", "seal", "open"):
            self.signal_case(signal.SIGKILL, name, rerun=True)
        self.finish()

    def test_sigint_ignored_at_start(self):
        """A signal ignored when paes starts stays ignored: a script's background job
        (`paes ... &` in sh) has SIGINT ignored, and a Ctrl-C meant for the
        foreground must not kill it."""
        job = jobs()["ctr"]
        out_dir = self.new_dir("ignored")

        def send_sigint(proc):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.1)
        rc, err, _ = self.paused_run(job.argv(job.input_path, os.path.join(out_dir, "out.bin")),
                                     job.input_path, send_sigint,
                                     preexec=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        self.outcome_case(f"SIGINT mid-run, ignored at start (a script's background job) -- {job.label}",
                          rc, err, out_dir, job)
        self.finish()


# --------------------------------------------------------------------------- P. permissions

class PermissionTest(FaultTestCase):
    """P: an output directory paes may not write to."""
    section = "P"

    def test_output_directory_not_writable(self):
        as_nobody = os.geteuid() == 0
        paes = PAES
        if as_nobody:
            if shutil.which("setpriv") is None:
                print("SKIPPED: output directory not writable: root, and no setpriv to drop to nobody")
                RESULTS.append((self.section, "output directory not writable", "SKIPPED", "no setpriv", ""))
                self.skipTest("no setpriv")
            # The build tree may be closed to nobody: run a world-readable copy of the binary.
            paes = shutil.copy2(PAES, self.path("paes"))
            os.chmod(paes, 0o755)
        who = "uid nobody, directory owned by root" if as_nobody else "chmod 0555"
        for name in ("ctr", "seal", "open"):
            job = jobs()[name]

            def run_in_read_only_directory(cmd, source, out):
                d = os.path.dirname(out)
                if not as_nobody:
                    os.chmod(d, 0o555)
                cmd = [paes] + cmd[1:]
                if as_nobody:
                    cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] + cmd
                proc = subprocess.run(cmd, env=paes_env(), capture_output=True, timeout=RUN_TIMEOUT)
                os.chmod(d, 0o755)
                return proc.returncode, stderr_line(proc.stderr)
            self.expect_failure(f"output directory not writable ({who})", job,
                                ["cannot create the output in {outdir}", "temporary beside it", "Permission denied"],
                                run=run_in_read_only_directory)
        self.finish()


# --------------------------------------------------------------------------- L. thread limits

# RLIMIT_NPROC counts every thread of a user, in this container or beyond it: a user that runs
# nothing anywhere makes the count exact. An id in no passwd, above any a system hands out.
UNUSED_UID = 2**30 + 4242


class ThreadLimitTest(FaultTestCase):
    """L: threads that can't be started end the run cleanly."""
    ctest_labels = ("threads",)
    section = "L"

    def test_no_threads_to_be_had(self):
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            why = "not root" if os.geteuid() != 0 else "no setpriv"
            print(f"SKIPPED: no threads to be had: RLIMIT_NPROC binds only a user without privilege, "
                  f"and paes runs as another user only for root with setpriv ({why})")
            RESULTS.append((self.section, "no threads to be had", "SKIPPED", why, ""))
            self.skipTest(why)
        probe = subprocess.run(["setpriv", f"--reuid={UNUSED_UID}", f"--regid={UNUSED_UID}", "--clear-groups", "true"],
                               capture_output=True)
        if probe.returncode != 0:  # a user namespace that maps no such id
            why = f"setpriv can't become uid {UNUSED_UID}: {probe.stderr.decode(errors='replace').strip()}"
            print(f"SKIPPED: no threads to be had: {why}")
            RESULTS.append((self.section, "no threads to be had", "SKIPPED", why, ""))
            self.skipTest(why)
        paes = shutil.copy2(PAES, self.path("paes"))  # the build tree may be closed to other users
        os.chmod(paes, 0o755)
        # (job, threads nobody may start beside paes' main one, what says why). TSan's runtime
        # starts a thread of its own; its build's OpenMP (LLVM's, for Archer) aborts where libgomp
        # calls exit(): paes' SIGABRT handler removes the temporary then.
        runtime_threads = 1 if UNDER_TSAN else 0
        openmp_says = (-signal.SIGABRT, ["OMP: Error #34", "Resource temporarily unavailable"]) if UNDER_TSAN else \
            (1, ["libgomp: Thread creation failed", "paes: stopped before the output was complete: nothing was written"])
        cases = (("cbc-enc", 0, 1, ["starting the reader thread: Resource temporarily unavailable"]),
                 ("cbc-enc", 1, 1, ["starting worker threads: Resource temporarily unavailable"]),
                 ("ctr", 0) + openmp_says)
        for name, spare, status, message in cases:
            spare += runtime_threads
            job = jobs()[name]
            for force in (False, True):
                out_dir = self.new_dir(f"nproc-{name}-{spare}-{force}")
                os.chmod(out_dir, 0o777)
                out = os.path.join(out_dir, "out.bin")
                old = None
                if force:
                    old = os.urandom(100_000)
                    write_file(out, old)
                limit = 1 + spare

                def limit_threads():
                    resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
                cmd = ["setpriv", f"--reuid={UNUSED_UID}", f"--regid={UNUSED_UID}", "--clear-groups", paes] + \
                    job.argv(job.input_path, out)[1:] + (["-f"] if force else [])
                env = paes_env()
                if UNDER_ASAN:  # LeakSanitizer's check at exit needs a thread of its own
                    env["ASAN_OPTIONS"] += ":detect_leaks=0"
                proc = subprocess.run(cmd, env=env, preexec_fn=limit_threads, capture_output=True,
                                      timeout=RUN_TIMEOUT)
                err = stderr_line(proc.stderr)
                what = left_on_disk(out_dir, "out.bin", old)
                label = (f"no thread beyond {1 + spare - runtime_threads} (RLIMIT_NPROC, as an unused uid) -- {job.label}"
                         f"{' (-f over old output)' if force else ''}")
                print(f"  {label}: exit {describe_exit(proc.returncode)}; stderr: {err!r}; left: {what}", flush=True)
                self.check(proc.returncode == status,
                           f"{label}: exit {describe_exit(proc.returncode)}, wanted {describe_exit(status)}")
                self.check(all(m in err for m in message), f"{label}: stderr {err!r} lacks {message}")
                self.check(what == ("old output intact" if force else "nothing"), f"{label}: left {what}")
                if force:
                    RESULTS.append((self.section, label.replace(" (-f over old output)", ""),
                                    describe_exit(proc.returncode), left, what))
                left = what
        self.finish()


def main():
    global PAES, OPENSSL, SHIM
    PAES, OPENSSL, rest = tool_paths(__doc__)
    SHIM, rest = path_option(rest, "--shim", "the fault injection library (fault_inject.c)")
    status = run_unittest(rest)
    print_table()
    return status


if __name__ == "__main__":
    sys.exit(main())
