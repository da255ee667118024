"""Experiment d: the mpi engine, ranks x threads per rank, on one file.

Mirrors the thesis (seeds/thesis-mpj-express-openmp-mpich-cuda-aes.txt), tables 5.3/5.4 (MPJ Express) and
5.7/5.8 (MPICH): execution time and speed-up against processes; figures 5.3/5.4/5.7/5.8.
"""

from .markdown import md_table, ms
from .runner import log
from .units import human

SEED = "thesis tables 5.3, 5.4, 5.7, 5.8 and figures 5.3, 5.4, 5.7, 5.8 (processes against file size)"
TITLE = "MPI ranks x threads on a file"


def run(suite):
    if suite.mpi_launcher is None:
        return {"status": "skipped",
                "reason": f"{suite.mpi_launcher_why} (paes info engines: {' '.join(suite.engines)})"}
    if suite.p["mpi_file"] == "thesis-largest":
        mb, size = suite.thesis_sizes[-1]
    else:
        mb, size = None, suite.p["sweep_bytes"]
    plain = suite.make_file(size)
    tcounts = sorted({1, suite.ncpu})
    for mode in ("ctr", "sealed"):
        cands = [suite.paes_cand("d", mode, "encrypt", plain, "serial", 1, extra={"series": "mpi-baseline"}),
                 suite.paes_cand("d", mode, "encrypt", plain, "threads", suite.ncpu, extra={"series": "mpi-baseline"})]
        cands += [suite.paes_cand("d", mode, "encrypt", plain, "mpi", t, launcher=suite.mpi_prefix(ranks),
                                  ranks=ranks, extra={"series": "mpi", "oversubscribed": ranks * t > suite.ncpu})
                  for ranks in suite.p["mpi_ranks"] for t in tcounts]
        recs = suite.measure(cands)
        base = recs[0]["seconds"]
        for rec in recs:
            rec["speedup"] = base / rec["seconds"]
            rec["efficiency"] = rec["speedup"] / max(1, rec["threads"])
        log(f"d: {mode} done")
    return {"status": "run", "file_bytes": size,
            "file_label": f"{mb} MB" if mb else human(size),
            "notes": "one machine: ranks share its cores; speed-up S = t(serial engine) / t(ranks x threads), "
                     "as the thesis' tables 5.4/5.8 divide by the serial time; "
                     "ranks x threads above the online CPUs are oversubscribed"}


def section(suite, ex, derived):
    dd = [r for r in suite.records if r["experiment"] == "d"]
    lines = [f"File: {ex.get('file_label')} ({human(ex.get('file_bytes', 0))}), encryption, AES-256.\n"]
    rows = []
    for r in dd:
        cfg = f"{r['ranks']} x {r['threads_per_rank']}" if r.get("ranks") else f"{r['engine']} engine, {r['threads']} thread(s)"
        rank_c = ""
        if r.get("rank_detail"):
            rank_c = " / ".join(f"{x.get('compute_seconds', 0) * 1000:.0f}+{x.get('io_seconds', 0) * 1000:.0f}" for x in r["rank_detail"])
        rows.append([r["mode"], cfg, ms(r["seconds"]), f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}", r["gbps"],
                     r.get("speedup"), "yes" if r.get("oversubscribed") else "", rank_c])
    lines.append(md_table(["mode", "ranks x threads", "time ms", "min - max ms", "GB/s", "S vs serial", "oversubscribed",
                           "per rank compute+I/O ms (last run)"], rows))
    lines.append("\nSeed (thesis table 5.7/5.8, MPICH, 31 nodes x 16 logical cores): 1080 MB took 800 ms on 1 process "
                 "and 52 ms on 31 (S = 132.23 against the 6880 ms serial time).\n")
    return lines
