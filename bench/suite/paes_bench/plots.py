"""The PNG figures (matplotlib, Agg backend), each naming the seed figure or table it mirrors.

Their order is the order of results.json "plots" and of tables.md's plot list.
"""

from .units import human


def make_plots(suite, out, derived):
    """Draws the PNG figures into out; returns their list for results.json "plots" (file, title, mirrors)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = suite.records
    plots = []
    tag = " [QUICK]" if suite.quick else ""

    def save(fig, name, title, mirrors):
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        plots.append({"file": name, "title": title, "mirrors": mirrors})

    # 1-2: thesis figs 5.5/5.6 (and 5.1/5.2): time and throughput against threads, one line per size
    th = [r for r in recs if r["experiment"] == "a" and r.get("series") == "thesis-sizes" and r["engine"] == "threads"]
    def thesis_sizes_figure(value, ylabel, from_zero):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, mode in zip(axes, ("ctr", "sealed")):
            for s in sorted({r["bytes"] for r in th}):
                pts = sorted((r["threads"], value(r)) for r in th if r["mode"] == mode and r["bytes"] == s)
                ax.plot([p for p, _ in pts], [t for _, t in pts], marker="o", label=suite.thesis_label(s))
            ax.set_xscale("log", base=2)
            ax.set_xticks(suite.thread_counts, [str(t) for t in suite.thread_counts])
            ax.axvline(suite.ncpu, color="grey", ls=":", lw=1)
            ax.set_xlabel("threads")
            ax.set_ylabel(ylabel)
            if from_zero:
                ax.set_ylim(bottom=0)
            ax.set_title(f"AES-256 {mode.upper()} encryption, in memory{tag}")
            ax.legend(fontsize=7)
        return fig

    if th:
        save(thesis_sizes_figure(lambda r: r["seconds"] * 1000, "time (ms)", False), "threads_time.png",
             "execution time against threads, thesis file sizes", "thesis figures 5.1, 5.5")
        save(thesis_sizes_figure(lambda r: r["gbps"], "throughput (GB/s)", True), "threads_throughput.png",
             "throughput against threads, thesis file sizes", "thesis figures 5.2, 5.6")
    # 3: speed-up and throughput of every mode against threads (experiment a)
    sw = [r for r in recs if r["experiment"] == "a" and r.get("series") is None and r["engine"] == "threads"]
    if sw:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        keys = sorted({(r["mode"], r["direction"], r["key_bits"]) for r in sw})
        for k in keys:
            pts = sorted((r["threads"], r.get("speedup", 0), r["gbps"]) for r in sw if (r["mode"], r["direction"], r["key_bits"]) == k)
            lbl = f"{k[0]}-{k[2]} {k[1][:3]}"
            ls = "-" if k[2] == 256 else "--"
            axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ls=ls, label=lbl)
            axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", ls=ls, label=lbl)
        axes[0].plot(suite.thread_counts, [min(t, suite.ncpu) for t in suite.thread_counts], color="black", lw=1, ls=":", label="ideal")
        axes[0].set_ylabel("speed-up S = t_serial / t_p")
        axes[1].set_ylabel("throughput (GB/s)")
        for ax in axes:
            ax.set_xscale("log", base=2)
            ax.set_xticks(suite.thread_counts, [str(t) for t in suite.thread_counts])
            ax.set_xlabel("threads")
            ax.set_ylim(bottom=0)
        axes[1].legend(fontsize=6, ncol=2)
        axes[0].set_title(f"Speed-up, {human(suite.p['sweep_bytes'])} in memory{tag}")
        axes[1].set_title(f"Throughput, {human(suite.p['sweep_bytes'])} in memory{tag}")
        save(fig, "threads_speedup.png", "speed-up and throughput of every mode against threads", "thesis tables 5.2, 5.6; figures 5.2, 5.6")
    # 4: throughput against file size, compute-only and whole-program
    wp = [r for r in recs if r["experiment"] == "c" and r.get("kind") == "whole-program" and r["engine"] == "threads"]
    cp = [r for r in recs if r["experiment"] in ("a", "c") and r.get("kind") == "compute" and r["engine"] == "threads"
          and r["threads"] == suite.ncpu and r.get("key_bits") == 256 and (r["experiment"] == "c" or r.get("series") == "thesis-sizes")]
    if wp:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        for ax, d in zip(axes, ("encrypt", "decrypt")):
            for mode, color in (("ctr", "tab:blue"), ("sealed", "tab:orange")):
                pts = sorted((r["bytes"], r["gbps"]) for r in wp if r["mode"] == mode and r["direction"] == d)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=f"{mode} whole program")
                pts = sorted({r["bytes"]: r["gbps"] for r in cp if r["mode"] == mode and r["direction"] == d}.items())
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", ls="--", color=color, label=f"{mode} compute only")
            ax.set_xscale("log")
            ax.set_xlabel("size (bytes)")
            ax.set_ylabel("throughput (GB/s)")
            ax.set_title(f"AES-256 {d}, {suite.ncpu} threads{tag}")
            ax.legend(fontsize=7)
        save(fig, "sizes_throughput.png", "throughput against file size, compute-only and whole-program",
             "PolarSSL slides (2 KB-100 MB), dual-core paper figures 5 and 6, thesis sizes")
    # 5: MPI ranks sweep
    dd = [r for r in recs if r["experiment"] == "d" and r.get("ranks")]
    if dd:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for mode in ("ctr", "sealed"):
            for t in sorted({r["threads_per_rank"] for r in dd}):
                pts = sorted((r["ranks"], r["seconds"] * 1000, r.get("speedup", 0)) for r in dd
                             if r["mode"] == mode and r["threads_per_rank"] == t)
                axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{mode}, {t} thread(s)/rank")
                axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=f"{mode}, {t} thread(s)/rank")
        axes[0].set_ylabel("time (ms)")
        axes[1].set_ylabel("speed-up vs serial engine")
        for ax in axes:
            ax.set_xlabel("MPI ranks")
            ax.set_xticks(suite.p["mpi_ranks"])
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=7)
        axes[0].set_title(f"mpi engine, {human(suite.experiments['d'].get('file_bytes', 0))} file, encryption{tag}")
        save(fig, "mpi_ranks.png", "MPI ranks x threads: time and speed-up", "thesis tables 5.3, 5.4, 5.7, 5.8; figures 5.3, 5.4, 5.7, 5.8")
    # 6: peers
    ff = [r for r in recs if r["experiment"] == "f"]
    if ff:
        fig, ax = plt.subplots(figsize=(9, 0.32 * len(ff) + 1.5))
        labels = [f"{r['tool']} {r['mode']} {r['direction']}".replace(" none", "") +
                  (f" ({r['threads']} thr)" if r["tool"] == "paes" else "") for r in ff]
        colors = ["tab:green" if r["tool"] == "paes" else ("tab:grey" if r["tool"] in ("cp", "cat") else
                  ("tab:purple" if r["kind"] == "cipher-limit" else "tab:blue")) for r in ff]
        ax.barh(range(len(ff)), [r["gbps"] for r in ff], color=colors)
        ax.set_yticks(range(len(ff)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("throughput (GB/s); openssl speed: one core, in memory")
        ax.set_title(f"Peers on the same {human(suite.experiments['f'].get('file_bytes', 0))} file (whole program){tag}")
        save(fig, "peers.png", "paes against its peers on the same file", "issue 6 peers; PolarSSL slides' future work")
    # 7: Bielecki table 1: compute against total speed-up
    rows = [r for r in derived["bielecki_table1"] if r.get("total_speedup_both") or r.get("compute_speedup_both")]
    if rows:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for mode in ("ctr", "sealed"):
            pts = [r for r in rows if r["mode"] == mode]
            for key, ls in (("compute_speedup_both", "--"), ("total_speedup_both", "-")):
                ax.plot([r["threads"] for r in pts], [r.get(key) or 0 for r in pts], marker="o", ls=ls,
                        label=f"{mode} {key.split('_')[0]}")
        ax.plot(suite.thread_counts, [min(t, suite.ncpu) for t in suite.thread_counts], color="black", lw=1, ls=":", label="ideal")
        ax.set_xlabel("threads")
        ax.set_ylabel("speed-up (encrypt + decrypt)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"Compute-only vs whole-program speed-up{tag}")
        ax.legend(fontsize=7)
        save(fig, "amdahl_speedup.png", "compute-only against total speed-up", "Bielecki & Burak table 1")
    return plots
