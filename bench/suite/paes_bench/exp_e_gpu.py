"""Experiment e: GPU work-size sweep.

Mirrors the thesis (seeds/thesis-mpj-express-openmp-mpich-cuda-aes.txt), table 5.9 and figure 5.12: CUDA
speed-up against the number of GPU threads, per file size. Recorded as not run, with the reason, until the
suite drives `paes bench --engine cuda|opencl`: no numbers are invented.
"""

SEED = "thesis table 5.9 and figure 5.12 (CUDA: GPU threads against file size)"
TITLE = "GPU work-size sweep"


def run(suite):
    gpu = [e for e in suite.engines if e in ("cuda", "gpu", "opencl", "hip", "sycl")]
    if not gpu:
        return {"status": "not run",
                "reason": f"paes has no GPU engine (paes info engines: {' '.join(suite.engines) or 'none'}); "
                          "no numbers are reported rather than invented"}
    return {"status": "not run",
            "reason": f"paes lists GPU engine(s) {gpu}, but this suite has no driver for a work-size sweep yet"}


def section(suite, ex, derived):
    return []
