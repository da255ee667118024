"""Experiment e: GPU work-size sweep.

Mirrors the thesis (seeds/thesis-mpj-express-openmp-mpich-cuda-aes.txt), table 5.9 and figure 5.12: CUDA
speed-up against the number of GPU threads, per file size. Runs through bench/gpu/gpu_bench.py (`paes bench
--engine NAME` per work size: kernel-only, with transfers, end to end on a file) on every GPU cipher backend
that has a real GPU: a CUDA device, or an OpenCL device of type gpu. An OpenCL device on the CPU (PoCL) is no GPU, and
then the experiment is recorded as not run, with the reason: no numbers are invented.
"""

import os
import sys

from .markdown import md_table
from .runner import log
from .units import MIB

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gpu"))
import gpu_bench  # noqa: E402

SEED = "thesis table 5.9 and figure 5.12 (CUDA: GPU threads against file size)"
TITLE = "GPU work-size sweep"


def run(suite):
    devices = gpu_bench.gpu_devices(suite.paes)
    if not devices:
        built = [b["name"] for b in suite.info.get("backends", []) if b.get("gpu") and b.get("built_in")]
        return {"status": "not run",
                "reason": f"no GPU: paes has the GPU backends {' '.join(built) or 'none'}, but no CUDA device and no "
                          "OpenCL device of type gpu; no numbers are reported rather than invented"}
    works = [1 * MIB, 4 * MIB, 16 * MIB] if suite.quick else [1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB]
    start_seconds = {}
    for engine, name in devices.items():
        log(f"e: {engine} on {name}, work sizes {[w // MIB for w in works]} MiB")
        recs = gpu_bench.engine_figures(suite.paes, engine, works, suite.runs)
        # The start-up is seconds, not a rate: it goes with the experiment, not among the records.
        start_seconds[engine] = next(r["seconds"] for r in recs if r["figure"] == "start")
        recs = [r for r in recs if r["figure"] != "start"]
        for r in recs:
            r["kind"] = "gpu"
            r["device"] = name
        suite.add("e", recs)
    return {"status": "run", "devices": devices, "work_sizes": works, "start_seconds": start_seconds}


def section(suite, ex, derived):
    recs = [r for r in suite.records if r["experiment"] == "e" and r.get("kind") == "gpu"]
    if not recs:
        return []
    rows = []
    starts = [f"{engine} {seconds:.3f} s" for engine, seconds in ex.get("start_seconds", {}).items()]
    for r in recs:
        if r["figure"].startswith("link"):
            rows.append([r["engine"], r["figure"], "-", "-", r["gbps"]])
        else:
            rows.append([r["engine"], r["figure"], f"{r['work_bytes'] // MIB} MiB", r["threads"], r["gbps"]])
    return ["\n" + md_table(["backend", "figure", "work per launch", "GPU threads", "GB/s"], rows),
            "\nkernel: the kernel alone on the work already on the device (its events); transfers: the whole "
            "input in memory through the threads engine's workers, each driving a lane of the device, with batches "
            "of the work size (transfers_pinned: with the input and output pinned beforehand; pin: input bytes per "
            "second of pinning and unpinning them); file: end to end, page cache warm. GPU threads = work / 16 / 8 "
            "blocks per thread, the thesis' axis. Start-up (driver, device, buffers, self-test, the process's "
            f"first): {', '.join(starts) or 'not measured'}.\n"]
