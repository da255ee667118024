"""The machine description written beside the figures (results.json "machine", tables.md header)."""

import os
import platform
import re
import shutil
from pathlib import Path

from .runner import run_text

PAGE_CACHE = ("warm: every input file is read once in full before it is timed; "
              "outputs are deleted and `sync` runs between runs, outside the timing; "
              "in-memory figures (paes bench) do no I/O")


def online_cpus():
    """The CPUs this process may run on (its affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def describe(ncpu, info, paes_src, work, mpi_launcher=None):
    """ncpu: online CPUs; info: `paes info --json`; paes_src: the binary measured (its build tree names the
    compiler); work: the scratch directory (its file system is recorded); mpi_launcher: the
    launchers.Launcher the mpi experiment starts ranks with, or None."""
    cpu_model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = {}
    try:
        for line in open("/proc/meminfo"):
            k, v = line.split(":", 1)
            mem[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return {
        "slug": f"{_slug(cpu_model)}-{ncpu}core",
        "cpu_model": cpu_model,
        "online_cpus": ncpu,
        "paes_online_cpus": info.get("online_cpus"),
        "aes_features": info.get("cpu_features", {}),
        "openssl_version": info.get("openssl_version") or run_text(["openssl", "version"]),
        "openssl_cli_version": run_text(["openssl", "version"]),
        "paes_version": info.get("paes_version"),
        "paes_engines": info.get("engines"),
        "openmp": info.get("openmp"),
        "compiler": _compiler(Path(paes_src).parent),
        "kernel": f"{platform.system()} {platform.release()}",
        "os": _os_release(),
        "python": platform.python_version(),
        "mem_total_bytes": mem.get("MemTotal"),
        "mem_available_bytes": mem.get("MemAvailable"),
        "work_dir_filesystem": run_text(["findmnt", "-no", "FSTYPE", "-T", str(work)]),
        "page_cache": PAGE_CACHE,
        "peers": {
            "age": run_text(["age", "--version"]) if shutil.which("age") else None,
            "gpg": run_text(["gpg", "--version"]).splitlines()[0] if shutil.which("gpg") else None,
            "mpiexec": str(mpi_launcher) if mpi_launcher else None,
        },
    }


def _slug(cpu_model):
    """The CPU model as a directory name: docs/benchmarks/<slug>-<N>core/."""
    slug = re.sub(r"\((r|tm|c)\)", "", cpu_model.lower())
    slug = re.sub(r"@.*$", "", slug)
    slug = re.sub(r"\b(cpu|processor|with|radeon graphics|\d+-core)\b", " ", slug)
    return re.sub(r"[^a-z0-9]+", "-", slug).strip("-") or "cpu"


def _compiler(build):
    for f in sorted(build.glob("CMakeFiles/*/CMakeCXXCompiler.cmake")):
        text = f.read_text(errors="replace")
        cid = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
        ver = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
        if cid and ver:
            btype = ""
            cache = build / "CMakeCache.txt"
            if cache.is_file():
                m = re.search(r"^CMAKE_BUILD_TYPE:STRING=(.*)$", cache.read_text(errors="replace"), re.M)
                btype = f", CMAKE_BUILD_TYPE={m.group(1)}" if m else ""
            return f"{cid.group(1)} {ver.group(1)} (from {f.relative_to(build)}{btype})"
    out = run_text(["c++", "--version"]).splitlines()
    return (out[0] + " (c++ --version; the build's compiler is unknown)") if out else "unknown"


def _os_release():
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()

