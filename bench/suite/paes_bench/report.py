"""The suite's outputs: results.json, results.csv, tables.md (and the plots, drawn by plots.py)."""

import csv
import datetime
import json
import shlex
import sys
import time
from pathlib import Path

from . import exp_b_amdahl, exp_f_peers
from .experiments import EXPERIMENTS
from .markdown import fmt
from .runner import log
from .units import GIB

ROOT = Path(__file__).resolve().parents[3]


def add_speedups(recs, base_engine="serial"):
    """S = t(base engine) / t and E = S / threads, per mode, direction, key size and size."""
    base = {}
    for r in recs:
        if r["engine"] == base_engine:
            base[(r["mode"], r["direction"], r["key_bits"], r["bytes"])] = r["seconds"]
    for r in recs:
        b = base.get((r["mode"], r["direction"], r["key_bits"], r["bytes"]))
        if b and r["seconds"] > 0:
            r["speedup"] = b / r["seconds"]
            r["efficiency"] = r["speedup"] / max(1, r["threads"])


def derive(suite):
    """Speed-ups of whole-program records against the serial engine (where an experiment set none), experiment
    b's table and experiment f's ratios: results.json "derived"."""
    recs = suite.records
    wp = [r for r in recs if r.get("kind") == "whole-program" and r.get("tool") == "paes"]
    serial = {}
    for r in wp:
        if r["engine"] == "serial":
            serial[(r["experiment"], r["mode"], r["direction"], r["bytes"])] = r["seconds"]
    for r in wp:
        if "speedup" in r:
            continue
        b = serial.get((r["experiment"], r["mode"], r["direction"], r["bytes"]))
        if b:
            r["speedup"] = b / r["seconds"]
            r["efficiency"] = r["speedup"] / max(1, r["threads"])
    return {"bielecki_table1": exp_b_amdahl.table1(suite), "peer_ratios": exp_f_peers.peer_ratios(recs)}


def write(suite):
    """Writes every output into --out (default docs/benchmarks/<machine>/); returns the exit status."""
    out = Path(suite.args.out) if suite.args.out else ROOT / "docs" / "benchmarks" / suite.machine["slug"]
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command_line": shlex.join([sys.executable] + sys.argv),
        "profile": "quick" if suite.quick else "full",
        "quick": suite.quick,
        "runs_per_figure": suite.runs,
        "warm_up_runs": 1,
        "timing": f"median of {suite.runs} runs after one warm-up, with min and max"
                  + (" (quick mode: fewer runs and small sizes)" if suite.quick else ""),
        "page_cache": suite.machine["page_cache"],
        "thread_counts": suite.thread_counts,
        "thesis_scale": suite.thesis_scale,
        "units": "bytes in binary units (K = 1024, M = 1048576); gbps = 10^9 bytes per second; "
                 "speedup S = t_serial / t_p; efficiency E = S / p; throughput T = size / time",
        "paes": suite.paes_src,
        "wall_seconds": round(time.time() - suite.t_start, 1),
        "notes": suite.notes,
    }
    exps = [suite.experiments[e] for e in EXPERIMENTS if e in suite.experiments]
    derived = derive(suite)
    plots = []
    try:
        from .plots import make_plots
        plots = make_plots(suite, out, derived)
    except ImportError as e:
        suite.notes.append(f"plots not drawn: {e} (install matplotlib: .venv/bin/pip install matplotlib)")
    doc = {"suite": "paes benchmark suite", "format": 1, "machine": suite.machine, "run": meta,
           "experiments": exps, "records": suite.records, "derived": derived, "plots": plots}
    (out / "results.json").write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    write_csv(out / "results.csv", suite.records)
    (out / "tables.md").write_text(render_tables(suite, exps, derived, plots))
    meta["wall_seconds"] = round(time.time() - suite.t_start, 1)
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    log(f"wrote {out} in {meta['wall_seconds']} s")
    failed = [e["id"] for e in exps if e["status"] == "failed"]
    return 1 if failed else 0


def write_csv(path, records):
    keys = []
    for r in records:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in records:
            w.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})


def render_tables(suite, exps, derived, plots):
    """tables.md: the machine, then one section per experiment (its seed, or why it was not run), then the plots."""
    m = suite.machine
    feats = ", ".join(k for k, v in m["aes_features"].items() if v) or "none"
    lines = [f"# paes benchmark suite: {m['slug']}\n",
             f"- CPU: {m['cpu_model']}, {m['online_cpus']} online CPUs; AES features: {feats}",
             f"- Memory: {fmt((m['mem_total_bytes'] or 0) / GIB, '.1f')} GiB total, "
             f"{fmt((m['mem_available_bytes'] or 0) / GIB, '.1f')} GiB available at the start",
             f"- {m['openssl_version']}; compiler: {m['compiler']}; {m['kernel']}; {m['os']}",
             f"- paes {m['paes_version']}, engines: {m['paes_engines']}; work dir on {m['work_dir_filesystem']}",
             f"- Run: {'QUICK (small sizes, ' + str(suite.runs) + ' runs per figure: a smoke run, not for publication)' if suite.quick else 'full'}, "
             f"{datetime.date.today().isoformat()}, {suite.runs} timed runs after one warm-up per figure (median, min - max)",
             f"- Page cache: {m['page_cache']}",
             "- Units: sizes in binary units (K = 1024 B, M = 1 MiB); GB/s = 10^9 bytes/s; T = size / time; "
             "S = t_serial / t_p (t_serial: the serial engine); E = S / p",
             ""]
    for n in suite.notes:
        lines.append(f"- Note: {n}")
    lines.append("")
    by = {e["id"]: e for e in exps}
    for eid, module in EXPERIMENTS.items():
        ex = by.get(eid, {"status": "not run", "reason": "not reached"})
        lines.append(f"## {eid}. {module.TITLE}\n")
        lines.append(f"Mirrors: {module.SEED}.\n")
        if ex.get("status") != "run":
            lines.append(f"**{ex.get('status', 'not run').upper()}**: {ex.get('reason', '')}\n")
            continue
        if ex.get("notes"):
            lines.append(f"{ex['notes']}.\n")
        lines += module.section(suite, ex, derived)
    if plots:
        lines.append("\n## Plots\n")
        for p in plots:
            lines.append(f"- [{p['file']}]({p['file']}): {p['title']} (mirrors {p['mirrors']})")
        lines.append("")
    return "\n".join(lines) + "\n"
