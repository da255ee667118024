"""A command run on a pseudo-terminal of its own, for the prompts paes (and age) ask on /dev/tty."""

import fcntl
import os
import select
import subprocess
import tempfile
import termios
import time


def run_on_terminal(cmd, passphrase, timeout=120, prompt="passphrase", env=None):
    """Runs `cmd` with a new pseudo-terminal as its controlling terminal (age opens /dev/tty),
    typing `passphrase` at every prompt that asks for one (each time the word `prompt`, in any
    case, appears once more on the terminal); stdin /dev/null, stdout and stderr to files (a
    pipe would fill while the terminal is served); `env`, when given, is its environment.
    Returns (a CompletedProcess with stdout and stderr, what the terminal showed)."""
    word = prompt.lower().encode()
    master, slave = os.openpty()

    def take_terminal():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                preexec_fn=take_terminal, pass_fds=(slave,), env=env)
        os.close(slave)
        screen, typed = b"", 0
        deadline = time.monotonic() + timeout
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if not select.select([master], [], [], 0.05)[0]:
                    continue
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the terminal's last user is gone
                    break
                screen += chunk
                while screen.lower().count(word) > typed:
                    os.write(master, passphrase.encode() + b"\n")
                    typed += 1
            proc.wait(timeout=max(1, deadline - time.monotonic()))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(master)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read()), screen
