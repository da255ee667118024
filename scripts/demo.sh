#!/usr/bin/env bash
# What paes is for, in under a minute: build it, then on one random sample
#  - time paes' sealed default (authenticated AES-256-GCM) against age (also
#    authenticated: ChaCha20-Poly1305), and paes' raw AES-256-CTR against
#    `openssl enc -aes-256-ctr`, encryption and decryption, whole programs;
#  - verify the bytes: paes' CTR ciphertext equals openssl's, and every
#    ciphertext decrypts back to the sample;
#  - show the in-memory speed-up over threads (`paes bench`), and draw a plot.
# Why the comparison is fair: every command reads the same sample and writes
# its output to tmpfs (RAM), so paes' fsync-before-rename costs nothing and no
# one pays for a disk (where no tmpfs has room, every command, paes too, has
# its output fsync'ed inside its timing); the sample is read once beforehand
# (warm cache); each figure is the median of 3 runs after a warm-up round, the
# commands alternating within each round so that a drift of the machine
# weighs on all alike, with the output deleted (and `sync` run) between runs,
# untimed (bench/suite/paes_bench/runner.py's measure()). GB/s are plaintext
# bytes (10^9) per second. The keys are throwaway and never printed.
#   scripts/demo.sh [SIZE_MIB]   (default 512)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
size_mib="${1:-512}"
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" >/dev/null
paes="$root/build/release/paes"
plot="$root/build/demo/demo.png"   # git-ignored (/build/)

case "$size_mib" in '' | *[!0-9]* | 0) echo "usage: scripts/demo.sh [SIZE_MIB]" >&2; exit 2 ;; esac
for tool in openssl age age-keygen python3; do
  command -v "$tool" >/dev/null || { echo "demo.sh: $tool not found; run scripts/setup.sh" >&2; exit 1; }
done
ncpu="$(nproc)"

# --- the machine -------------------------------------------------------------
cpu="$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "machine:  $ncpu cores (nproc), ${cpu:-CPU model unknown}, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "paes:     $("$paes" info | head -n 1); $("$paes" info | sed -n 's/^Backends: *//p')"
echo "peers:    $(openssl version | cut -d' ' -f1-2), age $(age --version)"

# --- the sample, in memory ---------------------------------------------------
# The sample, three ciphertexts and one output at a time: about 5x SIZE_MIB.
need_mib=$((size_mib * 5 + 256))
if [ -d /dev/shm ] && [ "$(df -Pm /dev/shm | awk 'NR == 2 { print $4 }')" -ge "$need_mib" ]; then
  base=/dev/shm
else
  base="${TMPDIR:-/tmp}"
fi
work="$(mktemp -d "$base/paes-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fs="$(stat -f -c %T "$work")"
if [ "$fs" = tmpfs ]; then
  sync_outputs=0
  echo "work dir: $work (tmpfs: every input and output is in RAM, no one pays for a disk)"
else
  sync_outputs=1
  echo "work dir: $work ($fs, not tmpfs: every command's output is fsync'ed inside its timing)"
fi
echo "sample:   $size_mib MiB of random data"
head -c "$((size_mib << 20))" /dev/urandom > "$work/sample.bin"
cat "$work/sample.bin" > /dev/null   # warm cache

# Throwaway keys: paes keygen writes 64 hex digits (mode 0600), which paes'
# --key-file and openssl's -K both take; age gets an identity of its own.
"$paes" keygen -o "$work/aes.key"
age-keygen -o "$work/age.id" 2>/dev/null
recipient="$(age-keygen -y "$work/age.id")"
iv="$(openssl rand -hex 16)"
ossl_ctr() { openssl enc -aes-256-ctr -K "$(cat "$work/aes.key")" -iv "$iv" "$@"; }

# --- verify the bytes (this also makes the inputs of the decryption runs) ----
s="$work/sample.bin" k="$work/aes.key" chk="$work/check.bin"
same() { cmp "$s" "$chk"; rm "$chk"; }   # under set -e: a difference ends the demo
"$paes" encrypt --key-file "$k" "$s" -o "$work/sample.paes"
"$paes" decrypt --key-file "$k" "$work/sample.paes" -o "$chk"; same
age -r "$recipient" -o "$work/sample.age" "$s"
age -d -i "$work/age.id" -o "$chk" "$work/sample.age"; same
"$paes" encrypt --mode ctr --key-file "$k" --iv "$iv" "$s" -o "$work/sample.ctr"
ossl_ctr -in "$s" -out "$work/openssl.ctr"
cmp "$work/sample.ctr" "$work/openssl.ctr"
"$paes" decrypt --mode ctr --key-file "$k" --iv "$iv" "$work/openssl.ctr" -o "$chk"; same
ossl_ctr -d -in "$work/sample.ctr" -out "$chk"; same
rm "$work/openssl.ctr"   # byte-identical to sample.ctr, which both tools decrypt below
echo "verified: paes' AES-256-CTR ciphertext is byte-identical to openssl enc's; each tool decrypts"
echo "          the other's to the sample; paes sealed and age each round-trip to the sample"
echo

# --- whole programs, file to file: medians of 3, round-robin -----------------
echo "timing 8 commands, a warm-up round and 3 timed rounds ..."
PAES="$paes" WORK="$work" IV="$iv" RECIPIENT="$recipient" SYNC_OUTPUTS="$sync_outputs" \
  python3 - "$root/bench/suite" <<'EOF'
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure

paes, w, iv = os.environ["PAES"], os.environ["WORK"], os.environ["IV"]
sample, key, out = f"{w}/sample.bin", f"{w}/aes.key", f"{w}/out.bin"
size = os.path.getsize(sample)
with open(key) as f:
    key_hex = f.read().strip()          # passed to openssl -K, never printed
ossl = ["openssl", "enc", "-aes-256-ctr", "-K", key_hex, "-iv", iv]
ctr_in = f"{w}/sample.ctr"
# (pair, direction, tool, argv, input, the command as shown: without the key)
cases = [
    ("sealed", "encrypt", "paes", [paes, "encrypt", "--key-file", key, sample, "-o", out], sample,
     "paes encrypt --key-file K IN -o OUT"),
    ("sealed", "encrypt", "age", ["age", "-r", os.environ["RECIPIENT"], "-o", out, sample], sample,
     "age -r RECIPIENT -o OUT IN"),
    ("sealed", "decrypt", "paes", [paes, "decrypt", "--key-file", key, f"{w}/sample.paes", "-o", out], f"{w}/sample.paes",
     "paes decrypt --key-file K IN -o OUT"),
    ("sealed", "decrypt", "age", ["age", "-d", "-i", f"{w}/age.id", "-o", out, f"{w}/sample.age"], f"{w}/sample.age",
     "age -d -i IDENTITY -o OUT IN"),
    ("ctr", "encrypt", "paes", [paes, "encrypt", "--mode", "ctr", "--key-file", key, "--iv", iv, sample, "-o", out], sample,
     "paes encrypt --mode ctr --key-file K --iv IV IN -o OUT"),
    ("ctr", "encrypt", "openssl", ossl + ["-in", sample, "-out", out], sample,
     "openssl enc -aes-256-ctr -K KEY -iv IV -in IN -out OUT"),
    ("ctr", "decrypt", "paes", [paes, "decrypt", "--mode", "ctr", "--key-file", key, "--iv", iv, ctr_in, "-o", out], ctr_in,
     "paes decrypt --mode ctr --key-file K --iv IV IN -o OUT"),
    ("ctr", "decrypt", "openssl", ossl[:2] + ["-d"] + ossl[2:] + ["-in", ctr_in, "-out", out], ctr_in,
     "openssl enc -d -aes-256-ctr -K KEY -iv IV -in IN -out OUT"),
]
def wrap(argv):   # not on tmpfs: the output reaches the disk inside the timing, for every tool
    if os.environ["SYNC_OUTPUTS"] == "1":
        return ["sh", "-c", 'o=$1; shift; "$@" && sync -- "$o"', "sh", out] + argv
    return argv
cands = [{"argv": wrap(argv), "src": src, "out": out, "parse_json": False, "stdout": subprocess.DEVNULL,
          "rec": {"pair": pair, "direction": d, "tool": tool, "bytes": size, "shown": shown}}
         for pair, d, tool, argv, src, shown in cases]
recs = measure(cands, 3)
with open(f"{w}/files.json", "w") as f:
    json.dump(recs, f)

print(f"\nwhole programs, file to file on the same {size >> 20} MiB, median of 3 (s), GB/s of plaintext:")
print("(both sealed formats authenticate: paes AES-256-GCM with key file K, age ChaCha20-Poly1305 to an\n"
      " X25519 RECIPIENT; KEY: K's key in hex; IV: a random IV)")
print(f"{'':19} {'command':58} {'median s':>9} {'GB/s':>6}")
for i in range(0, len(recs), 2):
    a, b = recs[i], recs[i + 1]
    title = f"{'sealed' if a['pair'] == 'sealed' else 'AES-256-CTR'} {a['direction']}"
    for r in (a, b):
        print(f"{title:19} {r['shown']:58} {r['seconds']:9.3f} {r['gbps']:6.2f}")
        title = ""
    x = b["seconds"] / a["seconds"]
    verdict = f"paes {x:.1f}x faster than {b['tool']}" if x >= 1 else f"paes {1 / x:.1f}x slower than {b['tool']}"
    print(f"{'':19} -> {verdict} (min-max paes {a['min_seconds']:.3f}-{a['max_seconds']:.3f} s, "
          f"{b['tool']} {b['min_seconds']:.3f}-{b['max_seconds']:.3f} s)")
EOF
echo

# --- in memory: the speed-up over threads -------------------------------------
threads=1
if [ "$ncpu" -gt 1 ]; then threads="1,$ncpu"; fi
echo "in memory (paes bench --modes ctr,sealed --key-bits 256 --directions encrypt --size 64M --thread-counts $threads --repeat 5):"
"$paes" bench --modes ctr,sealed --key-bits 256 --directions encrypt --size 64M --thread-counts "$threads" \
  --repeat 5 --json > "$work/bench.json"
python3 - "$work/bench.json" <<'EOF'
import json, sys
recs = json.load(open(sys.argv[1]))
counts = sorted({r["threads"] for r in recs if r["engine"] == "threads"})
print(f"{'mode':7} {'openssl':>8} {'serial':>8}" + "".join(f" {str(t) + 't GB/s':>9} {'x ser':>6}" for t in counts))
for mode in dict.fromkeys(r["mode"] for r in recs):
    g = {(r["engine"], r["threads"]): r["gbps"] for r in recs if r["mode"] == mode}
    ser = g[("serial", 1)]
    print(f"{mode:7} {g[('openssl', 1)]:8.2f} {ser:8.2f}"
          + "".join(f" {g[('threads', t)]:9.2f} {g[('threads', t)] / ser:6.2f}" for t in counts))
EOF
echo "(GB/s of a 64 MiB buffer, no files: openssl = one OpenSSL call on one core, serial = paes on one"
echo " core, Nt = paes' threads engine on N threads; x ser = its speed-up over serial, at most the cores"
echo " that are free: the files above are bounded by memory copies, this is the cipher alone)"
echo

# --- the plot -------------------------------------------------------------------
py="$root/.venv/bin/python"
if [ ! -x "$py" ]; then
  echo "no plot: $py is missing (scripts/setup.sh makes .venv with matplotlib)"
elif ! "$py" -c 'import matplotlib' 2>/dev/null; then
  echo "no plot: matplotlib is not in .venv (run scripts/setup.sh, or .venv/bin/pip install matplotlib)"
else
  mkdir -p "$(dirname "$plot")"
  if "$py" - "$work/files.json" "$work/bench.json" "$plot" "$ncpu" "$size_mib" <<'EOF'
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

files, bench = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
out, ncpu, size_mib = sys.argv[3], sys.argv[4], sys.argv[5]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
labels, paes_v, peer_v, peers = [], [], [], []
for i in range(0, len(files), 2):
    a, b = files[i], files[i + 1]
    labels.append(f"{'sealed' if a['pair'] == 'sealed' else 'CTR'}\n{a['direction']}\nvs {b['tool']}")
    paes_v.append(a["gbps"]); peer_v.append(b["gbps"]); peers.append(b["tool"])
x = range(len(labels))
bars = ax1.bar([i - 0.2 for i in x], paes_v, 0.4, label="paes", color="tab:blue")
ax1.bar([i + 0.2 for i in x], peer_v, 0.4, label="age / openssl enc", color="tab:grey")
for rect, p, q in zip(bars, paes_v, peer_v):
    ax1.annotate(f"{p / q:.1f}x", (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                 ha="center", va="bottom", fontsize=8)
ax1.set_xticks(list(x), labels, fontsize=8)
ax1.set_ylabel("GB/s of plaintext (median of 3)")
ax1.text(0.99, 0.80, "labels: paes' speed / the peer's", transform=ax1.transAxes, ha="right", fontsize=8)
ax1.set_title(f"Whole programs, {size_mib} MiB file to file on tmpfs, {ncpu} cores", fontsize=10)
ax1.legend(fontsize=8)
modes = list(dict.fromkeys(r["mode"] for r in bench))
series = [("serial", 1)] + [("threads", t) for t in sorted({r["threads"] for r in bench if r["engine"] == "threads"})]
wd = 0.8 / len(series)
for j, (eng, t) in enumerate(series):
    vals = [next(r["gbps"] for r in bench if r["mode"] == m and r["engine"] == eng and r["threads"] == t) for m in modes]
    rects = ax2.bar([i - 0.4 + wd * (j + 0.5) for i in range(len(modes))], vals, wd,
                    label="serial" if eng == "serial" else f"{t} thread{'s' if t > 1 else ''}")
    if eng != "serial":
        ser = [next(r["gbps"] for r in bench if r["mode"] == m and r["engine"] == "serial") for m in modes]
        for rect, v, s in zip(rects, vals, ser):
            ax2.annotate(f"{v / s:.2f}x", (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                         ha="center", va="bottom", fontsize=8)
ax2.set_xticks(range(len(modes)), [f"{m} encrypt" for m in modes], fontsize=8)
ax2.set_ylabel("GB/s (median of 5)")
ax2.set_title("In memory (paes bench, 64 MiB): speed-up over serial", fontsize=10)
ax2.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
EOF
  then
    echo "plot:     ${plot#"$root"/}"
  else
    echo "no plot: drawing it failed (above); the figures are the tables above"
  fi
fi
echo "done in ${SECONDS}s"
