"""Experiment b: compute-only against whole-program speed-up, with Amdahl's serial fraction.

Mirrors Bielecki & Burak (seeds/openmp-rijndael-loop-parallelization-paper.txt), table 1: encryption,
decryption and total speed-up of AES-256 on a 17 MB file, and the serial fraction they derive from it.
"""

from .markdown import md_table, ms
from .units import human

SEED = ("Bielecki & Burak (Rijndael loop parallelization paper), table 1 "
        "(encryption, decryption and total speed-up; Amdahl serial fraction)")
TITLE = "Compute-only against whole-program speed-up (Amdahl)"


def run(suite):
    size = suite.p["sweep_bytes"]
    plain = suite.make_file(size)
    suite.sweep_file = plain
    for mode in ("ctr", "sealed"):
        for direction in ("encrypt", "decrypt"):
            suite.measure([suite.paes_cand("b", mode, direction, plain, "serial", 1)] +
                          [suite.paes_cand("b", mode, direction, plain, "threads", t) for t in suite.thread_counts])
    return {"status": "run", "file_bytes": size,
            "notes": "compute-only speed-ups come from experiment a (same size, AES-256); "
                     "whole-program speed-ups time `paes encrypt|decrypt` on the file, "
                     "serial engine against threads engine"}


def amdahl_f(s, p):
    """Amdahl's serial fraction from a measured speed-up; undefined (None) where nothing was gained (S <= 1)."""
    if p <= 1 or not s or s <= 1:
        return None
    return (1 / s - 1 / p) / (1 - 1 / p)



def both_directions_speedup(table, mode, p):
    """Serial over p-thread time of encryption and decryption together, or None when a
    measurement is missing."""
    serial = [table.get((mode, d, 1, "serial")) for d in ("encrypt", "decrypt")]
    parallel = [table.get((mode, d, p, "threads")) for d in ("encrypt", "decrypt")]
    if not (all(serial) and all(parallel)):
        return None
    return sum(x["seconds"] for x in serial) / sum(x["seconds"] for x in parallel)

def table1(suite):
    """The seed's table 1 for this machine: per mode and p, compute-only (experiment a, AES-256) and total
    (experiment b) speed-ups per direction and for both, with the serial fraction of each."""
    recs = suite.records
    rows = []
    size = suite.p["sweep_bytes"]
    comp = {(r["mode"], r["direction"], r["threads"], r["engine"]): r for r in recs
            if r.get("experiment") == "a" and r.get("kind") == "compute" and r.get("key_bits") == 256
            and r.get("series") is None}
    whole = {(r["mode"], r["direction"], r["threads"], r["engine"]): r for r in recs if r.get("experiment") == "b"}
    for mode in ("ctr", "sealed"):
        for p in suite.thread_counts:
            row = {"mode": mode, "threads": p, "bytes": size}
            for d in ("encrypt", "decrypt"):
                c = comp.get((mode, d, p, "threads"))
                row[f"compute_speedup_{d}"] = c.get("speedup") if c else None
                w = whole.get((mode, d, p, "threads"))
                row[f"total_speedup_{d}"] = w.get("speedup") if w else None
            for table, speedup_key, fraction_key in (
                    (whole, "total_speedup_both", "amdahl_serial_fraction"),
                    (comp, "compute_speedup_both", "compute_amdahl_serial_fraction")):
                s = both_directions_speedup(table, mode, p)
                if s is not None:
                    row[speedup_key] = s
                    row[fraction_key] = amdahl_f(s, p)
            rows.append(row)
    return rows


def section(suite, ex, derived):
    lines = []
    rows = []
    for r in derived["bielecki_table1"]:
        rows.append([r["mode"], r["threads"], r.get("compute_speedup_encrypt"), r.get("compute_speedup_decrypt"),
                     r.get("total_speedup_encrypt"), r.get("total_speedup_decrypt"), r.get("total_speedup_both"),
                     r.get("amdahl_serial_fraction"), r.get("compute_amdahl_serial_fraction")])
    lines.append(f"File and buffer: {human(suite.p['sweep_bytes'])}, AES-256. Compute-only: paes bench "
                 "(threads engine against the serial engine). Total: whole-program `paes encrypt|decrypt` "
                 "on the file (threads engine against the serial engine); `enc+dec` adds both directions as the "
                 "seed's program did. Amdahl serial fraction f = (1/S - 1/p) / (1 - 1/p), from S of enc+dec "
                 "(- where S <= 1: no parallel gain to attribute; at p above the online CPUs f also counts the "
                 "oversubscription).\n")
    lines.append(md_table(["mode", "p", "S encrypt (compute)", "S decrypt (compute)", "S encrypt (total)",
                           "S decrypt (total)", "S enc+dec (total)", "f (total)", "f (compute)"], rows))
    wb = [r for r in suite.records if r["experiment"] == "b"]
    rows = [[r["mode"], r["direction"], r["engine"], r["threads"], ms(r["seconds"]),
             f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}", r["gbps"]] for r in wb]
    lines.append("\nWhole-program timings behind the totals:\n")
    lines.append(md_table(["mode", "direction", "engine", "p", "time ms", "min - max ms", "GB/s"], rows))
    lines.append("\nSeed (Itanium2 SGI Altix, 17 MB, AES-256): p = 2: S = 1.957 encryption, 1.996 decryption, "
                 "1.600 total; p = 16: 5.554, 12.357, 2.300; serial fraction 0.244.\n")
    return lines
