"""Experiment f: paes against its peers on the same file, whole program, in the same rounds.

Mirrors the PolarSSL MPI slides' future work (seeds/polarssl-mpi-aes-slides.txt: "time the entire program",
not only the cipher) with the peers of issue 6: openssl enc, age, gpg --symmetric, cp, cat and openssl speed
(the per-core cipher limit).
"""

import re
import shlex
import shutil
import subprocess

from .markdown import md_table, ms
from .runner import CommandFailed, run_checked, summarize
from .units import MIB, human

SEED = ("PolarSSL slides' future work (time the entire program), issue 6 peers: "
        "openssl enc, age, gpg --symmetric, cp, cat, openssl speed")
TITLE = "Peers on the same files"

# (paes, peer) pairs of the ratio table, as (tool, mode, direction)
PAIRS = [
    (("paes", "ctr", "encrypt"), ("openssl enc", "ctr", "encrypt")),
    (("paes", "ctr", "decrypt"), ("openssl enc", "ctr", "decrypt")),
    (("paes", "cbc", "decrypt"), ("openssl enc", "cbc", "decrypt")),
    (("paes", "sealed", "encrypt"), ("openssl enc", "ctr", "encrypt")),
    (("paes", "sealed", "decrypt"), ("openssl enc", "ctr", "decrypt")),
    (("paes", "sealed", "encrypt"), ("age", "chacha20-poly1305", "encrypt")),
    (("paes", "sealed", "decrypt"), ("age", "chacha20-poly1305", "decrypt")),
    (("paes", "sealed", "encrypt"), ("gpg --symmetric", "cfb-mdc", "encrypt")),
    (("paes", "sealed", "decrypt"), ("gpg --symmetric", "cfb-mdc", "decrypt")),
    (("paes", "ctr", "encrypt"), ("cp", "none", "copy")),
    (("paes", "sealed", "encrypt"), ("cp", "none", "copy")),
    (("paes", "ctr", "encrypt"), ("cat", "none", "read")),
]


def run(suite):
    plain = getattr(suite, "sweep_file", None) or suite.make_file(suite.p["sweep_bytes"])
    size = plain.stat().st_size
    skipped = []
    cands, cbc = _file_candidates(suite, plain, skipped)
    home = suite.work / "gnupg"
    try:
        suite.measure(cands)
    finally:
        if home.exists():
            subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    for algo in suite.p["speed_algos"]:
        rec = _openssl_speed(suite, algo)
        if rec:
            suite.records.append(rec)
        else:
            skipped.append(f"openssl speed {algo}: no result parsed")
    return {"status": "run", "file_bytes": size, "skipped_peers": skipped,
            "notes": "gpg runs with --compress-algo none (its default zlib compression would time "
                     "zlib, not the cipher; random data does not compress); age uses "
                     "ChaCha20-Poly1305 with an X25519 recipient; openssl speed figures are "
                     "one core, 1 MiB blocks"}


def _file_candidates(suite, plain, skipped):
    """Every peer that is installed, then paes, on the same file; their inputs are made here, untimed."""
    size = plain.stat().st_size
    ct = suite.ciphertexts(plain)
    out = suite.work / "out.bin"
    w = suite.work
    cands = []

    def peer(tool, mode, direction, key_bits, argv, src):
        cands.append(suite.cand(exp="f", tool=tool, mode=mode, direction=direction, key_bits=key_bits, engine=tool,
                                threads=1, nbytes=size, argv=argv, src=src, out=out, extra={"series": "peers"}))

    peer("cp", "none", "copy", 0, ["cp", str(plain), str(out)], plain)
    peer("cat", "none", "read", 0, ["cat", str(plain)], plain)
    ossl = ["openssl", "enc", "-K", suite.key_hex, "-iv", suite.iv]
    peer("openssl enc", "ctr", "encrypt", 256, ossl[:2] + ["-aes-256-ctr"] + ossl[2:] + ["-in", str(plain), "-out", str(out)], plain)
    peer("openssl enc", "ctr", "decrypt", 256, ossl[:2] + ["-d", "-aes-256-ctr"] + ossl[2:] + ["-in", str(ct["ctr"]), "-out", str(out)], ct["ctr"])
    cbc = w / "in.cbc"
    run_checked(ossl[:2] + ["-aes-256-cbc"] + ossl[2:] + ["-in", str(plain), "-out", str(cbc)])
    peer("openssl enc", "cbc", "encrypt", 256, ossl[:2] + ["-aes-256-cbc"] + ossl[2:] + ["-in", str(plain), "-out", str(out)], plain)
    peer("openssl enc", "cbc", "decrypt", 256, ossl[:2] + ["-d", "-aes-256-cbc"] + ossl[2:] + ["-in", str(cbc), "-out", str(out)], cbc)
    if shutil.which("age") and shutil.which("age-keygen"):
        ident = w / "age.id"
        run_checked(["age-keygen", "-o", str(ident)])
        recipient = run_checked(["age-keygen", "-y", str(ident)]).stdout.decode().strip()
        aged = w / "in.age"
        run_checked(["age", "-e", "-r", recipient, "-o", str(aged), str(plain)])
        peer("age", "chacha20-poly1305", "encrypt", 256, ["age", "-e", "-r", recipient, "-o", str(out), str(plain)], plain)
        peer("age", "chacha20-poly1305", "decrypt", 256, ["age", "-d", "-i", str(ident), "-o", str(out), str(aged)], aged)
    else:
        skipped.append("age: not installed")
    if shutil.which("gpg"):
        home = w / "gnupg"
        home.mkdir(mode=0o700, exist_ok=True)
        pf = w / "passphrase"
        pf.write_text("paes-suite benchmark passphrase\n")
        g = ["gpg", "--homedir", str(home), "--batch", "--yes", "--no-symkey-cache", "--passphrase-file", str(pf),
             "--pinentry-mode", "loopback"]
        gpgd = w / "in.gpg"
        try:
            run_checked(g + ["--symmetric", "--cipher-algo", "AES256", "--compress-algo", "none", "-o", str(gpgd), str(plain)])
            peer("gpg --symmetric", "cfb-mdc", "encrypt", 256,
                 g + ["--symmetric", "--cipher-algo", "AES256", "--compress-algo", "none", "-o", str(out), str(plain)], plain)
            peer("gpg --symmetric", "cfb-mdc", "decrypt", 256, g + ["-d", "-o", str(out), str(gpgd)], gpgd)
        except CommandFailed as e:
            skipped.append(f"gpg: failed ({str(e)[-200:]})")
    else:
        skipped.append("gpg: not installed (gnupg)")
    for mode in ("ctr", "sealed"):
        for direction in ("encrypt", "decrypt"):
            cands.append(suite.paes_cand("f", mode, direction, plain, "threads", suite.ncpu, extra={"series": "peers"}))
    argv = [suite.paes, "decrypt", "--mode", "cbc", "--key-file", str(suite.key), "--iv", suite.iv, "--no-progress",
            "--json", "--threads", str(suite.ncpu), str(cbc), "-o", str(out)]
    cands.append(suite.cand(exp="f", tool="paes", mode="cbc", direction="decrypt", key_bits=256, engine="threads",
                            threads=suite.ncpu, nbytes=size, argv=argv, src=cbc, out=out, parse_json=True,
                            extra={"series": "peers"}))
    return cands, cbc


def _openssl_speed(suite, algo):
    """`openssl speed` on one core, 1 MiB blocks: the per-core cipher limit, as a record (None: not parsed)."""
    vals = []
    argv = ["openssl", "speed", "-mr", "-evp", algo, "-bytes", str(MIB), "-seconds", str(suite.p["speed_seconds"])]
    for i in range(suite.runs + 1):
        txt = run_checked(argv, timeout=120).stdout.decode(errors="replace")
        m = re.findall(r"^\+F:\d+:[^:]+:([0-9.]+)", txt, re.M)
        if m and i > 0:
            vals.append(float(m[-1]))
    if not vals:
        return None
    t = summarize([MIB / v for v in vals])
    rec = {"experiment": "f", "seed": SEED, "kind": "cipher-limit", "tool": "openssl speed",
           "mode": algo.split("-")[-1], "direction": "encrypt", "key_bits": int(algo.split("-")[1]),
           "engine": "openssl speed", "threads": 1, "bytes": MIB, "gbps": MIB / t["seconds"] / 1e9,
           "command": shlex.join(argv), "series": "peers", "algorithm": algo}
    rec.update(t)
    return rec


def peer_ratios(records):
    """paes time / peer time for PAIRS, from experiment f's whole-program records."""
    peers = {}
    for r in records:
        if r.get("experiment") == "f" and r.get("kind") == "whole-program":
            peers[(r["tool"], r["mode"], r["direction"])] = r
    ratios = []
    for a, b in PAIRS:
        if a in peers and b in peers:
            ratios.append({"paes": " ".join(a[1:]), "peer": f"{b[0]} {b[1]} {b[2]}".replace(" none", ""),
                           "paes_seconds": peers[a]["seconds"], "peer_seconds": peers[b]["seconds"],
                           "time_ratio": peers[a]["seconds"] / peers[b]["seconds"]})
    return ratios


def section(suite, ex, derived):
    ff = [r for r in suite.records if r["experiment"] == "f"]
    rows = [[r["tool"], r["mode"], r["direction"], r["threads"] if r["tool"] == "paes" else 1, ms(r["seconds"]),
             f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}", r["gbps"]] for r in ff if r["kind"] == "whole-program"]
    lines = [f"File: {human(ex.get('file_bytes', 0))} random, the file of experiment b.\n"]
    lines.append(md_table(["tool", "mode", "direction", "threads", "time ms", "min - max ms", "GB/s"], rows))
    if ex.get("skipped_peers"):
        lines.append("\nSkipped: " + "; ".join(ex["skipped_peers"]) + "\n")
    lines.append("\nRatios (paes time / peer time, medians of this run; < 1: paes is faster):\n")
    lines.append(md_table(["paes", "peer", "paes ms", "peer ms", "time ratio", "peer time / paes time"],
                          [[x["paes"], x["peer"], ms(x["paes_seconds"]), ms(x["peer_seconds"]), x["time_ratio"],
                            1 / x["time_ratio"]] for x in derived["peer_ratios"]]))
    sp = [r for r in ff if r["kind"] == "cipher-limit"]
    if sp:
        lines.append("\n`openssl speed` (one core, 1 MiB blocks: the per-core cipher limit):\n")
        lines.append(md_table(["algorithm", "GB/s (median)", "min - max GB/s"],
                              [[r["algorithm"], r["gbps"], f"{MIB / r['max_seconds'] / 1e9:.3f} - {MIB / r['min_seconds'] / 1e9:.3f}"] for r in sp]))
    return lines
