"""Experiment a: threads sweep 1..N and 2N, in memory (compute only).

Mirrors the thesis (seeds/thesis-mpj-express-openmp-mpich-cuda-aes.txt), tables 5.1/5.2 (MPJ Express) and
5.5/5.6 (OpenMP): execution time, speed-up and % efficiency against threads and file size; figures
5.1/5.2/5.5/5.6 (time and throughput against threads).
"""

from .markdown import fmt, md_table, ms
from .units import human

SEED = ("thesis tables 5.1, 5.2, 5.5, 5.6 and figures 5.1, 5.2, 5.5, 5.6 "
        "(execution time, throughput, speed-up and efficiency against threads)")
TITLE = "Threads sweep in memory (compute only)"


def run(suite):
    size = suite.p["sweep_bytes"]
    recs = suite.bench(modes=["ctr", "ecb", "sealed"], directions=["encrypt", "decrypt"],
                       key_bits=suite.p["sweep_key_bits"], sizes=[size], threads=suite.thread_counts)
    # CBC encryption is sequential by construction: the sweep is about CBC decryption.
    recs += suite.bench(modes=["cbc"], directions=["decrypt"], key_bits=suite.p["sweep_key_bits"], sizes=[size],
                        threads=suite.thread_counts)
    suite.add("a", recs)
    # the thesis' own axis: threads x thesis file sizes (AES-256 CTR and sealed, encryption)
    recs = suite.bench(modes=["ctr", "sealed"], directions=["encrypt"], key_bits=[256],
                       sizes=[b for _, b in suite.thesis_sizes], threads=suite.thread_counts)
    for r in recs:
        r["series"] = "thesis-sizes"
        r["size_label"] = suite.thesis_label(r["bytes"])
    suite.add("a", recs)
    return {"status": "run", "buffer_bytes": size,
            "notes": "in memory (paes bench): no file I/O; t_serial is the serial engine"}


def section(suite, ex, derived):
    recs = suite.records
    lines = []
    sweep = [r for r in recs if r["experiment"] == "a" and r.get("series") is None]
    keys = sorted({(r["mode"], r["direction"], r["key_bits"]) for r in sweep},
                  key=lambda k: (["ctr", "ecb", "cbc", "sealed"].index(k[0]), k[1] != "encrypt", k[2]))
    lines.append(f"Buffer: {human(suite.p['sweep_bytes'])}. Per row: OpenSSL one-shot, serial engine, then the "
                 f"threads engine at p = {', '.join(map(str, suite.thread_counts))} "
                 f"({suite.thread_counts[-1]} oversubscribes {suite.ncpu} CPUs).\n")
    rows = []
    for k in keys:
        g = {(r["engine"], r["threads"]): r for r in sweep if (r["mode"], r["direction"], r["key_bits"]) == k}
        for eng, p in [("openssl", 1), ("serial", 1)] + [("threads", t) for t in suite.thread_counts]:
            r = g.get((eng, p))
            if not r:
                continue
            rows.append([f"{k[0]}-{k[2]} {k[1]}", eng, p, ms(r["seconds"]), f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}",
                         r["gbps"], r.get("speedup"), r.get("efficiency")])
    lines.append(md_table(["mode / direction", "engine", "p", "time ms (median)", "min - max ms", "T GB/s", "S", "E"], rows))
    th = [r for r in recs if r["experiment"] == "a" and r.get("series") == "thesis-sizes"]
    if th:
        lines.append("\nThe thesis' own axes (its tables 5.1/5.5: time against threads and file size; 5.2/5.6: "
                     "speed-up and % efficiency), AES-256 encryption in memory:\n")
        sizes = sorted({r["bytes"] for r in th})
        for mode in ("ctr", "sealed"):
            lines.append(f"\n{mode.upper()} encryption, time in ms:\n")
            lines.append(md_table(["threads"] + [suite.thesis_label(s) for s in sizes], _thesis_rows(suite, th, mode, sizes)))
    lines.append("\nSeed (thesis table 5.5/5.6, OpenMP + OpenSSL, 16 logical cores): 1080 MB took 6880 ms on 1 thread "
                 "and 798 ms on 16 (S = 8.62, E = 53.88 %).\n")
    return lines


def _thesis_rows(suite, th, mode, sizes):
    """Time per thread count and size, then speed-up and % efficiency at p = N (the thesis' layout)."""
    def find(eng, p, s):
        return next((x for x in th if x["mode"] == mode and x["engine"] == eng and x["threads"] == p and x["bytes"] == s), None)

    rows = []
    for eng, p in [("serial", 1)] + [("threads", t) for t in suite.thread_counts]:
        row = [eng if eng == "serial" else str(p)]
        for s in sizes:
            r = find(eng, p, s)
            row.append(ms(r["seconds"]) if r else "-")
        rows.append(row)
    for label, key, mult in (("speed-up at p = N", "speedup", 1), ("% efficiency at p = N", "efficiency", 100)):
        row = [label]
        for s in sizes:
            r = find("threads", suite.ncpu, s)
            row.append(fmt(r[key] * mult, ".2f") if r and r.get(key) else "-")
        rows.append(row)
    return rows
