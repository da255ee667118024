"""Running the tools under test: paes (and openssl, the oracle) as the command line named
them, failures described, paes run as an unprivileged user."""

import contextlib
import os
import shutil
import subprocess
import time


class Tools:
    """The binaries under test, set once from the command line (command_line.tool_paths)."""
    paes = "paes"
    openssl = "openssl"


def run_paes(args, input_bytes=None, *, timeout=300, env=None, as_nobody=False, paes=None, **options):
    """Runs paes with `args` (str() of each) and returns the CompletedProcess, stdout and
    stderr as bytes. Standard input is `input_bytes`, else /dev/null (unless `stdin` is
    given): a test never waits on a terminal. `env` adds variables to this process's
    environment; as_nobody runs it as uid nobody; `paes` replaces the binary (a copy
    nobody can run); other keywords go to subprocess.run (cwd, umask, stdout, ...).
    The timeout only ends a hung run: it never decides a result."""
    cmd = [*(AS_NOBODY if as_nobody else []), paes or Tools.paes, *(str(a) for a in args)]
    if env is not None:
        env = {**os.environ, **env}
    if input_bytes is None:
        options.setdefault("stdin", subprocess.DEVNULL)
    options.setdefault("stdout", subprocess.PIPE)
    options.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(cmd, input=input_bytes, timeout=timeout, env=env, **options)


def paes_output(*args):
    """What paes `args` prints on stdout, as text; AssertionError when it fails."""
    proc = run_paes(args)
    if proc.returncode != 0:
        raise AssertionError(f"paes {' '.join(map(str, args))}: {describe(proc)}")
    return proc.stdout.decode()


def describe(proc):
    """A finished process in a failure message: its exit status and stderr."""
    err = proc.stderr.decode(errors="replace").strip() if proc.stderr else ""
    return f"exit {proc.returncode}, stderr: {err!r}"


def error_lines(stderr):
    """The non-blank lines of a process's stderr (bytes)."""
    return [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]


def wait_for(predicate, what, gave_up=lambda: None, timeout=60):
    """Polls `predicate`; AssertionError when `gave_up` returns a reason or at the timeout."""
    deadline = time.monotonic() + timeout
    while not predicate():
        reason = gave_up()
        if reason:
            raise AssertionError(f"waiting for {what}: {reason}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def wait_for_pause(proc, pause_file, what="paes to reach the pause", timeout=60):
    """Waits until the fault shim (tests/fault/fault_inject.c) paused the run `proc`: it
    makes `pause_file` there. AssertionError when `proc` ends first or at the timeout."""
    wait_for(lambda: os.path.exists(pause_file), what,
             lambda: f"it ended first, exit {proc.returncode}" if proc.poll() is not None else None, timeout)


@contextlib.contextmanager
def killed_unless_finished(proc):
    """Kills `proc` (a Popen) and reaps it when the block leaves it running, so that a
    failed check never leaves a paused paes, or an mpiexec, behind."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


# Tests that need an unprivileged user (permission checks, which root bypasses) run
# paes as uid/gid nobody with no supplementary groups.
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def nobody_can_run(paes, workdir):
    """Returns (path of paes that uid nobody can run, None) or (None, reason to skip):
    "not root" when this process can't switch users."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, "not root"
    if shutil.which("setpriv") is None:
        return None, "setpriv not found"
    try:
        if subprocess.run(AS_NOBODY + [paes, "--help"], capture_output=True, timeout=30).returncode == 0:
            return paes, None
    except OSError:
        pass
    # The build tree may be closed to nobody: try a world-readable copy of the binary.
    os.chmod(workdir, 0o777)
    copy = os.path.join(workdir, "paes-copy")
    shutil.copy2(paes, copy)
    os.chmod(copy, 0o755)
    proc = subprocess.run(AS_NOBODY + [copy, "--help"], capture_output=True, timeout=30)
    if proc.returncode == 0:
        return copy, None
    return None, f"user nobody cannot run paes ({describe(proc)})"
