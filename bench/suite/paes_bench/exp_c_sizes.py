"""Experiment c: file sizes, whole program and compute only, both directions, CTR and sealed.

Mirrors three seeds' size axes: the PolarSSL MPI slides (seeds/polarssl-mpi-aes-slides.txt: 2 KB to 100 MB
files), the dual-core OpenMP paper (seeds/openmp-dual-core-aes-paper.txt: tables 1 and 2, 1000-6000 KB, and
its "time saved %" measure) and the thesis' file sizes 107/207/654/1080 MB (tables 5.1, 5.5).
"""

from .markdown import md_table, ms
from .runner import log
from .units import KIB, human

SEED = ("PolarSSL MPI slides (2 KB to 100 MB files), dual-core OpenMP paper tables 1 and 2 "
        "(1000-6000 KB), thesis file sizes 107/207/654/1080 MB (tables 5.1, 5.5)")
TITLE = "File sizes: whole-program and compute-only"


def run(suite):
    series = [("polarssl", s) for s in suite.p["polarssl"]] + [("dual-core", s) for s in suite.p["dual"]] + \
             [("thesis", b) for _, b in suite.thesis_sizes]
    sizes = sorted({s for _, s in series})
    for s in sizes:
        plain = suite.make_file(s)
        names = ",".join(n for n, x in series if x == s)
        suite.measure([suite.paes_cand("c", mode, direction, plain, engine, t, extra={"series": names})
                       for mode in ("ctr", "sealed") for direction in ("encrypt", "decrypt")
                       for engine, t in (("serial", 1), ("threads", suite.ncpu))])
        log(f"c: {human(s)} done")
    # compute-only at the same sizes (the thesis sizes come from experiment a's second sweep)
    small = sorted({s for n, s in series if n != "thesis"})
    recs = suite.bench(modes=["ctr", "sealed"], directions=["encrypt", "decrypt"], key_bits=[256],
                       sizes=small, threads=[suite.ncpu])
    big = suite.bench(modes=["ctr", "sealed"], directions=["decrypt"], key_bits=[256],
                      sizes=[b for _, b in suite.thesis_sizes], threads=[suite.ncpu])
    suite.add("c", recs + big)
    return {"status": "run", "sizes": sizes, "thesis_scale": suite.thesis_scale,
            "notes": "whole-program bytes are the plaintext size in both directions; "
                     "compute-only encryption at the thesis sizes is in experiment a"}


def section(suite, ex, derived):
    recs = suite.records
    lines = []
    wp = [r for r in recs if r["experiment"] == "c" and r.get("kind") == "whole-program"]
    cp = {(r["mode"], r["direction"], r["engine"], r["threads"], r["bytes"]): r for r in recs
          if r.get("kind") == "compute" and r.get("key_bits") == 256 and r["experiment"] in ("a", "c")}
    for series, title in (("polarssl", "PolarSSL slides' sizes"), ("dual-core", "dual-core paper's sizes (tables 1 and 2)"),
                          ("thesis", "thesis sizes")):
        sel = [r for r in wp if series in r.get("series", "").split(",")]
        lines.append(f"\n### {title}\n")
        lines.append(md_table(["size", "mode", "direction", "serial ms", f"{suite.ncpu} threads ms", "min - max ms",
                               "S", "time saved %", "whole-program GB/s", "compute-only GB/s"],
                              _series_rows(suite, series, sel, cp)))
    lines.append("\n`time saved %` is the dual-core paper's measure, (t_seq - t_par) / t_seq x 100 (it reports 38-47 % "
                 "on a Core 2 Duo). Compute-only GB/s: paes bench at the same size, threads engine.\n")
    return lines


def _series_rows(suite, series, sel, cp):
    rows = []
    for s in sorted({r["bytes"] for r in sel}):
        label = suite.thesis_label(s) if series == "thesis" else (f"{s // KIB} KB" if series == "dual-core" else human(s))
        for mode in ("ctr", "sealed"):
            for d in ("encrypt", "decrypt"):
                ser = next((r for r in sel if (r["bytes"], r["mode"], r["direction"], r["engine"]) == (s, mode, d, "serial")), None)
                thr = next((r for r in sel if (r["bytes"], r["mode"], r["direction"], r["engine"]) == (s, mode, d, "threads")), None)
                comp_bytes = s if d == "encrypt" or mode != "sealed" else None
                c = cp.get((mode, d, "threads", suite.ncpu, comp_bytes)) if comp_bytes else None
                if c is None and mode == "sealed" and d == "decrypt":
                    # paes bench sizes sealed decryption by its input (the ciphertext): match within the overhead
                    c = next((x for k, x in cp.items() if k[:4] == (mode, d, "threads", suite.ncpu)
                              and 0 <= k[4] - s <= s // 1000 + 4096), None)
                rows.append([label, mode, d, ms(ser["seconds"]) if ser else "-", ms(thr["seconds"]) if thr else "-",
                             f"{ms(thr['min_seconds'])} - {ms(thr['max_seconds'])}" if thr else "-",
                             thr.get("speedup") if thr else None,
                             (1 - thr["seconds"] / ser["seconds"]) * 100 if thr and ser else None,
                             thr["gbps"] if thr else None, c["gbps"] if c else None])
    return rows
