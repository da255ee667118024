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
"""

import os
import subprocess
from dataclasses import dataclass, field


class Unsupported(Exception):
    """The launcher cannot do what was asked (the message says why)."""


@dataclass
class Ranks:
    count: int
    argv: list
    env: dict = field(default_factory=dict)


def flavor_of(mpiexec):
    """'mpich' or 'openmpi', from the launcher's --version."""
    text = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
    if "HYDRA" in text:
        return "mpich"
    if "OpenRTE" in text or "Open MPI" in text:
        return "openmpi"
    raise Unsupported(f"{mpiexec} is neither MPICH's hydra nor Open MPI's launcher:\n{text}")


class Launcher:
    def __init__(self, mpiexec):
        self.path = mpiexec
        self.flavor = flavor_of(mpiexec)

    def __str__(self):
        return f"{self.flavor} ({self.path})"

    def command(self, groups, tcp_only=False, hosts=None, env=None):
        """(argv, environment) that start `groups`.

        tcp_only: every message between ranks goes over TCP on loopback, the
          transport a commodity cluster has (MPICH: UCX's tcp transport with the
          node-local shared-memory path off; Open MPI: the ob1 PML over the tcp
          BTL, which keeps UCX out).
        hosts: names of this machine to spread ranks over, one per host, as if
          on several nodes (MPICH's fork launcher; Open MPI has none, so that is
          Unsupported there).
        env: the launcher's own environment (default: this process's).
        """
        env = dict(os.environ if env is None else env)
        if self.flavor == "mpich":
            argv = [self.path]
            if hosts:
                argv += ["-launcher", "fork", "-hosts", ",".join(hosts), "-ppn", "1"]
            if tcp_only:
                argv += ["-genv", "UCX_TLS", "tcp,self", "-genv", "MPIR_CVAR_NOLOCAL", "1"]
            per_group = lambda g: [x for k, v in g.env.items() for x in ("-env", k, str(v))]  # noqa: E731
        else:
            if hosts:
                raise Unsupported("Open MPI has no fork launcher: ranks on several names of one host "
                                  "need ssh to it, which the tests don't set up")
            argv = [self.path, "--oversubscribe"]
            if tcp_only:
                argv += ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]
            if os.geteuid() == 0:
                env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            per_group = lambda g: [x for k, v in g.env.items() for x in ("-x", f"{k}={v}")]  # noqa: E731
        for i, group in enumerate(groups):
            if i:
                argv.append(":")
            argv += ["-n", str(group.count)] + per_group(group) + [str(a) for a in group.argv]
        return argv, env
