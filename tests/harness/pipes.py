"""Processes joined by real pipes (no shell), as `a | b | c` would be: streams through paes,
what came out, each exit status and peak memory."""

import os
import subprocess
import threading
import time


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
    """Runs `cmds` as a Pipeline (keywords as there, and rusage) to the end; returns what
    Pipeline.finish returns, and kills every process when that fails."""
    pl = Pipeline(cmds, **{k: v for k, v in kw.items() if k in
                           ("data", "stdin", "stdout", "env", "slow_read")})
    try:
        return pl.finish(rusage=kw.get("rusage", False))
    except BaseException:
        pl.kill()
        raise
