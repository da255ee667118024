"""The GPU measurement of paes, in one run (issue #12; docs/GPU.md): for each GPU cipher backend that has a
real GPU (a CUDA device, or an OpenCL device of type gpu):

  - the start-up of the backend (driver, device, buffers, self-test), which each paes process pays first;
  - the page-locked link: up alone, down alone, and each way while both run (paes bench --engine NAME);
  - kernel-only AES-128-CTR on 1 GiB (--work-mib) already on the device, timed with the device's events;
  - in memory with transfers: 1 GiB through the threads engine's workers, each driving a lane of the device
    with 16 MiB batches, staged through the lanes' page-locked buffers, and (CUDA) with the caller's input
    and output pinned beforehand (GpuProbe::pin_memory), with what pinning and unpinning them costs;
  - kernel-only AES-128-CTR for each launch geometry of a sweep (threads per block or work-group size x blocks
    per thread), the best one named: what the backends' defaults should be;
  - a SIZE file on tmpfs, end to end: --engine cuda, --engine opencl (the threads engine on that backend),
    --engine threads, --engine auto and one-thread `openssl enc`, round-robin, medians of RUNS after a warm-up
    (bench/suite/paes_bench/runner.py), each with the backend that ran its AES (auto's choice); and each GPU
    backend again with each --threads of --gpu-file-threads (the workers, each driving a lane of the device);

then the ratios of the issue's goals, all from this one run. Prints a report and writes it as JSON.

    python3 bench/gpu/gpu_bench.py [--paes PAES] [--size-mib 4096] [--runs 3] [--dir /dev/shm] [--json OUT]

Also imported by the benchmark suite's experiment e (the work-size sweep), which uses gpu_devices() and
engine_figures(). Standard-library Python 3 only: GPU machines may have nothing else.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "suite"))
from paes_bench.runner import CommandFailed, measure, run_checked  # noqa: E402

MIB = 1 << 20
KEY_HEX = "000102030405060708090a0b0c0d0e0f"
IV_HEX = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"


def gpu_devices(paes, cpu_opencl=False):
    """The GPU backends of this paes that have a real GPU: {backend: device name}, from the rows of
    `paes info --json`'s backends (a device of type gpu; CUDA lists no other). With cpu_opencl, an OpenCL
    device on the CPU (PoCL) counts too: a check of this script, not a figure."""
    info = json.loads(run_checked([paes, "info", "--json"]).stdout)
    found = {}
    for backend in info.get("backends", []):
        if not backend.get("gpu") or not backend.get("built_in"):
            continue
        gpus = [d for d in backend.get("devices", [])
                if d.get("type") == "gpu" or (cpu_opencl and backend["name"] == "opencl")]
        if gpus:
            found[backend["name"]] = gpus[0].get("name", f"{backend['name']} device {gpus[0].get('index', 0)}")
    return found


def engine_figures(paes, engine, work_sizes, repeat, mode="ctr", key_bits=128):
    """`paes bench --engine ENGINE --json` over `work_sizes` (bytes per launch), ENGINE a GPU backend: its
    records, each with ENGINE as its "engine"."""
    argv = [paes, "bench", "--engine", engine, "--modes", mode, "--key-bits", str(key_bits), "--directions",
            "encrypt", "--size", ",".join(f"{w // MIB}M" for w in work_sizes), "--repeat", str(repeat), "--json"]
    return json.loads(run_checked(argv, timeout=600).stdout)


def geometry_figures(paes, engine, work, repeat, groups, items):
    """Kernel-only AES-128-CTR encryption on `work` bytes for every pair of `groups` x `items`: its records."""
    argv = [paes, "bench", "--engine", engine, "--modes", "ctr", "--key-bits", "128", "--directions", "encrypt",
            "--size", f"{work // MIB}M", "--repeat", str(repeat), "--json",
            "--group-sizes", ",".join(map(str, groups)), "--blocks-per-item", ",".join(map(str, items))]
    return json.loads(run_checked(argv, timeout=600).stdout)


def int_list(text):
    return [int(x) for x in text.split(",") if x]


def figure(records, name, work=None):
    for r in records:
        if r.get("figure") == name and (work is None or r.get("work_bytes") == work):
            return r
    return None


def gbps_of(record):
    return record["gbps"] if record else None


def file_runs(paes, engines, size_mib, runs, directory, gpu_threads=()):
    """A size_mib MiB file on `directory` through each GPU backend (`engines`, as --engine NAME: the threads
    engine on it, also with each of `gpu_threads` as --threads: the workers, each driving a lane of the
    device), the threads engine, auto and one-thread openssl enc: medians, with the backend that ran each."""
    work = tempfile.mkdtemp(prefix="paes-gpu-", dir=directory)
    src, out = os.path.join(work, "in.bin"), os.path.join(work, "out.bin")
    key = os.path.join(work, "key")
    # --engine auto keeps what it measured in a cache of this run's: the warm-up looks for the GPU, measures
    # it and keeps that; the timed runs decide from what was kept, as a user's later jobs do.
    cache_before = os.environ.get("PAES_CACHE_DIR")
    os.environ["PAES_CACHE_DIR"] = os.path.join(work, "cache")
    try:
        with open(key, "wb") as f:
            f.write(bytes.fromhex(KEY_HEX))
        os.chmod(key, 0o600)
        with open(src, "wb") as f:  # zeros: CTR's speed does not depend on the data
            for _ in range(size_mib):
                f.write(bytes(MIB))

        def encrypt(engine, source):
            return [paes, "encrypt", "--mode", "ctr", "--key-file", key, "--iv", IV_HEX, "--engine", engine, "-f",
                    source, "-o", out, "--json"]

        # A GPU backend that fails on a small file is left out, with its reason, so that the others are
        # still measured.
        small = os.path.join(work, "small.bin")
        with open(small, "wb") as f:
            f.write(bytes(MIB))
        failed = {}
        for engine in engines:
            try:
                run_checked(encrypt(engine, small), stdin=subprocess.DEVNULL)
            except CommandFailed as e:
                failed[engine] = {"not_run": str(e)}
        cands = []
        working = [e for e in engines if e not in failed]
        variants = [(e, []) for e in working + ["threads", "auto"]]
        variants += [(f"{e} -t {t}", ["--threads", str(t)]) for e in working for t in gpu_threads]
        for name, extra in variants:
            cands.append({"argv": encrypt(name.split()[0], src) + extra, "src": src, "out": out,
                          "parse_json": True, "stdout": subprocess.DEVNULL,
                          "rec": {"name": name, "bytes": size_mib * MIB}})
        cands.append({"argv": ["openssl", "enc", "-aes-128-ctr", "-K", KEY_HEX, "-iv", IV_HEX, "-in", src, "-out", out],
                      "src": src, "out": out, "parse_json": False, "stdout": subprocess.DEVNULL,
                      "rec": {"name": "openssl enc", "bytes": size_mib * MIB}})
        return {**failed, **{r["name"]: r for r in measure(cands, runs)}}
    finally:
        if cache_before is None:
            del os.environ["PAES_CACHE_DIR"]
        else:
            os.environ["PAES_CACHE_DIR"] = cache_before
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--paes", default=os.environ.get("PAES", os.path.join(root, "build", "release", "paes")))
    ap.add_argument("--size-mib", type=int, default=4096, help="the file's size (default 4096)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each file command, after a warm-up")
    ap.add_argument("--repeat", type=int, default=3, help="repeats of each in-memory figure")
    ap.add_argument("--dir", default="/dev/shm", help="where the file goes (default /dev/shm: tmpfs)")
    ap.add_argument("--work-mib", type=int, default=1024, help="bytes on the device for kernel-only and for "
                    "the in-memory figure (default 1024; at least 256 for the issue's kernel figure)")
    ap.add_argument("--json", default="gpu-bench.json", help="where the report goes as JSON")
    ap.add_argument("--sweep-groups", type=int_list, default=[128, 256, 512, 1024],
                    help="threads per block (work-group sizes) of the kernel's geometry sweep; empty: no sweep")
    ap.add_argument("--sweep-items", type=int_list, default=[1, 2, 4, 8, 16, 32],
                    help="16-byte blocks per GPU thread of the geometry sweep")
    ap.add_argument("--gpu-file-threads", type=int_list, default=[8, 32],
                    help="the file through each GPU backend again with each of these --threads (the workers, each "
                         "driving a lane of the device; paes' default is the online CPUs): what the default should be")
    ap.add_argument("--cpu-opencl", action="store_true",
                    help="count an OpenCL device on the CPU (PoCL) as a GPU: to check this script without one")
    args = ap.parse_args()

    start = time.time()
    devices = gpu_devices(args.paes, args.cpu_opencl)
    if not devices:
        print("no GPU: paes info lists no CUDA device and no OpenCL device of type gpu; nothing to measure")
        return 77
    report = {"devices": devices, "size_mib": args.size_mib, "runs": args.runs, "engines": {}}
    print(f"GPU: {', '.join(f'{e}: {d}' for e, d in devices.items())}", flush=True)
    for engine in devices:
        work = args.work_mib * MIB
        batch = min(16 * MIB, work)
        try:
            records = engine_figures(args.paes, engine, sorted({batch, work}), args.repeat)
        except CommandFailed as e:  # one backend's failure leaves the other's figures
            print(f"\n{engine}: not measured: {e}", flush=True)
            report["engines"][engine] = {"not_run": str(e)}
            continue
        report["engines"][engine] = {
            "start_seconds": figure(records, "start")["seconds"],
            "link_up_gbps": figure(records, "link_up")["gbps"],
            "link_down_gbps": figure(records, "link_down")["gbps"],
            "link_both_ways_gbps": figure(records, "link_both_ways")["gbps"],
            "kernel_only_gbps": figure(records, "kernel", work)["gbps"],
            "with_transfers_gbps": figure(records, "transfers", batch)["gbps"],
            "with_transfers_pinned_gbps": gbps_of(figure(records, "transfers_pinned", batch)),
            "pin_gbps": gbps_of(figure(records, "pin", batch)),
            "records": records,
        }
        if args.sweep_groups and args.sweep_items:
            sweep = geometry_figures(args.paes, engine, work, args.repeat, args.sweep_groups, args.sweep_items)
            best = max(sweep, key=lambda r: r["gbps"])
            report["engines"][engine]["geometry_sweep"] = sweep
            report["engines"][engine]["best_geometry"] = {k: best[k] for k in ("group_size", "blocks_per_item", "gbps")}
        print_engine(engine, report["engines"][engine], args.work_mib)
        write_report(report, start, args.json)  # what is measured so far survives a failure further on
    report["file"] = file_figures(args, list(devices))
    write_report(report, start, args.json)
    print(f"\nthe whole measurement took {report['seconds']:.0f} s; JSON in {args.json}")
    failed = any("not_run" in f for f in [report["file"], *report["file"].values(), *report["engines"].values()]
                 if isinstance(f, dict))
    return 1 if failed else 0


def write_report(report, start, path):
    report["seconds"] = time.time() - start
    with open(path, "w") as f:
        json.dump(report, f, indent=2)


def print_engine(engine, f, work_mib):
    """The link, kernel and in-memory figures of one GPU backend, with the goals they answer."""
    print(f"\n{engine}: start-up {f['start_seconds']:.3f} s (driver, device, buffers, self-test: what each "
          f"paes --engine {engine} process pays first)")
    print(f"  pinned link up {f['link_up_gbps']:.1f} GB/s, down {f['link_down_gbps']:.1f} GB/s, "
          f"both ways at once {f['link_both_ways_gbps']:.1f} GB/s each")
    print(f"  kernel-only AES-128-CTR, {work_mib} MiB on the device: {f['kernel_only_gbps']:.1f} GB/s "
          f"({8 * f['kernel_only_gbps'] / 1000:.2f} Tbit/s)   goal >= 290 GB/s, stretch 400")
    if "best_geometry" in f:
        b = f["best_geometry"]
        print(f"  kernel-only, best of a sweep of {len(f['geometry_sweep'])} launch geometries: {b['gbps']:.1f} GB/s "
              f"({8 * b['gbps'] / 1000:.2f} Tbit/s) at {b['group_size']} threads per block, "
              f"{b['blocks_per_item']} blocks per thread")
    link = f["link_both_ways_gbps"]
    paths = [("staged", f["with_transfers_gbps"])]
    if f["with_transfers_pinned_gbps"]:
        paths.append(("caller's memory pinned once", f["with_transfers_pinned_gbps"]))
        # Pinning for one call only: the pinning's time and the transform's add up.
        per_call = 1 / (1 / f["with_transfers_pinned_gbps"] + 1 / f["pin_gbps"])
        paths.append(("pinned for this call alone", per_call))
        print(f"  pinning and unpinning {work_mib} MiB of input and its output: {f['pin_gbps']:.1f} GB/s of input")
    for name, rate in paths:
        print(f"  in memory with transfers, {work_mib} MiB, {name}: {rate:.1f} GB/s = "
              f"{100 * rate / link if link else 0:.0f}% of the both-ways link")
    name, rate = max(paths, key=lambda p: p[1])
    print(f"  best in memory ({name}): {rate:.1f} GB/s, {100 * rate / link if link else 0:.0f}%   "
          f"goal >= 40 GB/s and >= 85%", flush=True)


def file_figures(args, engines):
    """The file through every engine and openssl, printed with the goals' ratios; {"not_run": why} where
    --dir lacks the room or a command fails, so that the figures measured before still come out."""
    size = args.size_mib * MIB
    need = 2 * size + 256 * MIB  # the input, one output at a time (deleted between runs), and some slack
    free = shutil.disk_usage(args.dir).free
    if free < need:
        why = (f"{args.dir} has {free / MIB:.0f} MiB free and the file runs need {need / MIB:.0f} "
               f"(give --dir a tmpfs with more room, or a smaller --size-mib)")
        print(f"\n{args.size_mib} MiB file: not run: {why}")
        return {"not_run": why}
    try:
        files = file_runs(args.paes, engines, args.size_mib, args.runs, args.dir, args.gpu_file_threads)
    except CommandFailed as e:
        print(f"\n{args.size_mib} MiB file: not run: {e}")
        return {"not_run": str(e)}
    print(f"\n{args.size_mib} MiB file on {args.dir}, medians of {args.runs} round-robin runs after a warm-up:")
    for name, r in files.items():
        if "not_run" in r:
            print(f"  {name:<12} not run: {r['not_run']}")
            continue
        own = f"   (paes' own: {r['paes_reported_seconds']:.3f} s)" if "paes_reported_seconds" in r else ""
        ran = f", AES on {r['backend']}" if "backend" in r else ""  # auto's choice, and a GPU's proof it ran
        print(f"  {name:<12} {r['seconds']:8.3f} s  {r['gbps']:6.2f} GB/s{own}{ran}")
    threads = files["threads"]["seconds"]
    measured = [e for e in engines if "not_run" not in files[e]]
    for engine in measured:
        gpu = files[engine]["seconds"]
        print(f"  --engine {engine} / --engine threads: {gpu / threads:.2f}   goal <= 1.00")
        print(f"  openssl enc / --engine {engine}:      {files['openssl enc']['seconds'] / gpu:.2f}   goal >= 3")
    for engine in measured:
        tried = {n: r for n, r in files.items() if n == engine or n.startswith(engine + " -t ")}
        fastest = min(tried, key=lambda n: tried[n]["seconds"])
        if len(tried) > 1:
            print(f"  --engine {engine}, fastest of the default and --threads {args.gpu_file_threads}: {fastest} "
                  f"({tried[fastest]['seconds'] / threads:.2f} of threads)")
    best = min([threads] + [files[e]["seconds"] for e in measured])
    print(f"  --engine auto / the better of threads and GPU: {files['auto']['seconds'] / best:.2f}   goal <= 1.05")
    return files


if __name__ == "__main__":
    sys.exit(main())
