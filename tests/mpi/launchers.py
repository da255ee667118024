"""The MPI launchers the tests, the soak and the benchmarks start ranks with:
MPICH's hydra (`mpiexec.mpich`) and Open MPI's (`mpiexec.openmpi`, ORTE). Their
command lines differ in every flag the tests use (per-rank environment, the
fork launcher, oversubscription, transport choice, running as root), so the
scripts build launches through this one layer and never spell a flag of
either.

    launcher = Launcher("/usr/bin/mpiexec.mpich")
    argv, env = launcher.command([Ranks(2, ["paes", "encrypt", ...])], tcp_only=True)
    subprocess.run(argv, env=env, stdin=subprocess.DEVNULL)

A launch is one or more groups of ranks (MPMD, joined with `:` on both
launchers), each with its own argv and environment: rank 0 plain, rank 1
under the fault shim, for example.

Launches side by side: every Open MPI launch gets a session directory of its
own (under a temporary directory of the Launcher's, removed when the process
exits). Open MPI 4.1's launchers otherwise share one tree under /tmp, and a job
that ends removes directories another job is creating: that job fails before
its program runs ("ORTE_ERROR_LOG: Error in file ../../../orte/util/
session_dir.c at line 107", open-mpi/ompi#8510; concurrent_launches.py shows
it). MPICH's hydra keeps no such tree.

Shell scripts (the benchmarks) use it from the command line:

    python3 tests/mpi/launchers.py MPIEXEC --describe     # "MPICH 4.0.2 (/usr/bin/mpiexec.mpich)"
    python3 tests/mpi/launchers.py MPIEXEC N [--tcp-only] [--session-dirs DIR]
                                  # the words that start N ranks of what follows them, one
                                  # a line; Open MPI's session directory under DIR (which
                                  # the caller removes), else Open MPI's default
"""

import argparse
import atexit
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field


class Unsupported(Exception):
    """The launcher cannot do what was asked (the message says why)."""


@dataclass
class Ranks:
    count: int
    argv: list
    env: dict = field(default_factory=dict)


def identify(mpiexec):
    """('mpich' or 'openmpi', its version), from the launcher's --version."""
    text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
    if "HYDRA" in text:
        version = re.search(r"Version:\s*(\S+)", text)
        return "mpich", version.group(1) if version else "?"
    if "OpenRTE" in text or "Open MPI" in text:
        version = re.search(r"\)\s*(\S+)", text)
        return "openmpi", version.group(1) if version else "?"
    raise Unsupported(f"{mpiexec} is neither MPICH's hydra nor Open MPI's launcher:\n{text}")


def flavor_of(mpiexec):
    """'mpich' or 'openmpi'."""
    return identify(mpiexec)[0]


# Each launcher's name for the rank it started a process as, in that process's
# environment (a script a rank runs can use it).
RANK_VARIABLE = {"mpich": "PMI_RANK", "openmpi": "OMPI_COMM_WORLD_RANK"}
NAMES = {"mpich": "MPICH", "openmpi": "Open MPI"}
# Whether a signal ignored where mpiexec starts (nohup) is still ignored in the
# ranks: hydra passes dispositions on; Open MPI's launcher starts each rank with
# every signal at its default, and itself ends the job on SIGHUP
# (docs/CLUSTER.md).
KEEPS_IGNORED_SIGNALS = {"mpich": True, "openmpi": False}
# Where Open MPI puts a launch's session directory tree: orte_tmpdir_base in
# 4.x (tested here); PRRTE's prte_tmpdir_base in 5.x (from its documentation:
# Debian 12 has no 5.x to try).
OPEN_MPI_SESSION_BASE_VARIABLES = ("OMPI_MCA_orte_tmpdir_base", "PRTE_MCA_prte_tmpdir_base")


class Launcher:
    def __init__(self, mpiexec, session_dirs=None):
        """session_dirs: the directory Open MPI launches make their session
        directories in, one each (default: a temporary directory of this
        Launcher's, removed when the process exits; False: Open MPI's default,
        shared by every launch)."""
        self.path = mpiexec
        self.flavor, self.version = identify(mpiexec)
        self.rank_variable = RANK_VARIABLE[self.flavor]
        self.mpi_name = NAMES[self.flavor]
        self.keeps_ignored_signals = KEEPS_IGNORED_SIGNALS[self.flavor]
        self._session_dirs = session_dirs
        self._session_dirs_made = threading.Lock()  # the tests launch from several threads
        self._launch_numbers = itertools.count()

    def _session_dir(self):
        """A directory of its own for one Open MPI launch (Open MPI creates it)."""
        with self._session_dirs_made:
            if self._session_dirs is None:
                self._session_dirs = tempfile.mkdtemp(prefix="paes-ompi-sessions-")
                atexit.register(shutil.rmtree, self._session_dirs, ignore_errors=True)
        return os.path.join(self._session_dirs, f"launch-{os.getpid()}-{next(self._launch_numbers)}")

    def other(self):
        """The launcher of the other MPI, where Debian installs it beside this one
        (mpiexec.mpich beside mpiexec.openmpi), or None."""
        other = "openmpi" if self.flavor == "mpich" else "mpich"
        path = os.path.join(os.path.dirname(os.path.realpath(self.path)), f"mpiexec.{other}")
        for candidate in (path, shutil.which(f"mpiexec.{other}")):
            if candidate and os.access(candidate, os.X_OK):
                return Launcher(candidate)
        return None

    def __str__(self):
        return f"{self.mpi_name} {self.version} ({self.path})"

    def command(self, groups, tcp_only=False, hosts=None, env=None, every_rank_ends=False):
        """(argv, environment) that start `groups`.

        tcp_only: every message between ranks goes over TCP on loopback, the
          transport a commodity cluster has (MPICH: UCX's tcp transport with the
          node-local shared-memory path off; Open MPI: the ob1 PML over the tcp
          BTL, which keeps UCX out).
        hosts: names of this machine to spread ranks over, one per host, as if
          on several nodes, so sharing no memory (MPICH's fork launcher, its
          node-local path off; Open MPI has none, so that is Unsupported there).
        env: the launcher's own environment (default: this process's).
        every_rank_ends: when a rank exits non-zero, the others still run to
          their own end, so that a test can see each one's exit status (hydra
          does so anyway; Open MPI's launcher otherwise kills them at once, and
          with this its own exit status is 0 whatever the ranks', so only a
          caller that records each rank's status may ask for it).
        """
        env = dict(os.environ if env is None else env)
        if self.flavor == "mpich":
            argv = [self.path]
            if hosts:
                argv += ["-launcher", "fork", "-hosts", ",".join(hosts), "-ppn", "1"]
            if tcp_only:
                argv += ["-genv", "UCX_TLS", "tcp,self"]
            if hosts or tcp_only:
                argv += ["-genv", "MPIR_CVAR_NOLOCAL", "1"]
            per_group = lambda g: [x for k, v in g.env.items() for x in ("-env", k, str(v))]  # noqa: E731
        else:
            if hosts:
                raise Unsupported("Open MPI has no fork launcher: ranks on several names of one host "
                                  "need ssh to it, which the tests don't set up")
            # --quiet: without it, a run in which a rank exits non-zero ends
            # with a boxed paragraph of Open MPI's on stderr after the rank's
            # own message, which hydra does not add (docs/CLUSTER.md).
            argv = [self.path, "--oversubscribe", "--quiet"]
            if every_rank_ends:
                argv += ["--mca", "orte_abort_on_non_zero_status", "0"]
            if tcp_only:
                argv += ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]
            if os.geteuid() == 0:
                env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            if self._session_dirs is not False:
                session_dir = self._session_dir()
                env.update({variable: session_dir for variable in OPEN_MPI_SESSION_BASE_VARIABLES})
            per_group = lambda g: [x for k, v in g.env.items() for x in ("-x", f"{k}={v}")]  # noqa: E731
        for i, group in enumerate(groups):
            if i:
                argv.append(":")
            argv += ["-n", str(group.count)] + per_group(group) + [str(a) for a in group.argv]
        return argv, env


def prefix(launcher, ranks, tcp_only=False):
    """The words that start `ranks` ranks of what follows them: the launcher's
    own environment as `env NAME=VALUE` words first, where it adds any."""
    argv, env = launcher.command([Ranks(ranks, [])], tcp_only=tcp_only)
    added = [f"{k}={v}" for k, v in env.items() if os.environ.get(k) != v]
    return (["env"] + added if added else []) + argv


def build_mpiexec(build_dir):
    """The launcher a build tree's FindMPI chose (MPIEXEC_EXECUTABLE in its
    CMakeCache.txt): the one of the MPI its paes-mpi links. None if none."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), errors="replace") as cache:
            for line in cache:
                if line.startswith("MPIEXEC_EXECUTABLE:"):
                    return line.split("=", 1)[1].strip() or None
    except OSError:
        pass
    return None


def main():
    parser = argparse.ArgumentParser(description="Print how MPIEXEC starts ranks (see the module's text).")
    parser.add_argument("mpiexec")
    parser.add_argument("ranks", nargs="?", type=int)
    parser.add_argument("--tcp-only", action="store_true")
    parser.add_argument("--describe", action="store_true")
    parser.add_argument("--session-dirs", help="where Open MPI's session directory goes (the caller removes it)")
    opts = parser.parse_args()
    launcher = Launcher(opts.mpiexec, session_dirs=opts.session_dirs or False)
    if opts.describe or opts.ranks is None:
        print(launcher)
        return 0
    print("\n".join(prefix(launcher, opts.ranks, opts.tcp_only)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
