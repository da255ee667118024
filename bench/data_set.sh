#!/usr/bin/env bash
# Data sets, whole process: one paes command over many files (--recursive)
# against age run once a file, and against paes on one file of the same bytes,
# all to one age recipient (age-keygen's X25519 key):
#   1. FILES files of 4 KiB in DIRS directories (default 10000 in 100):
#      `paes encrypt -r R --recursive TREE` (FILE.paes beside each) against a
#      shell loop of `age -r R -o FILE.age FILE` (dash, a glob: one fork and
#      exec of age a file, nothing more) and against `xargs -0 -P NPROC -I {}
#      age -r R -o {}.age {}` (xargs execs age itself, no shell); then
#      `paes decrypt -i ID --recursive` of paes' .paes files against the same
#      two of `age -d -i ID -o FILE.age.out FILE.age` on age's own files;
#   2. BIG_FILES files of BIG_FILE_MIB MiB (default 1000 of 1) in 10
#      directories (fewer for fewer files): `paes encrypt -r R --recursive`
#      of the set against `paes encrypt -r R ONE -o OUT` of one file, their
#      concatenation; then `paes decrypt -i ID` both ways;
#   3. peak memory (max RSS, by GNU time's %M: Linux carries a process's max
#      RSS across exec, so one forked from Python itself would report
#      Python's): paes encrypt --recursive of case 1's set against paes
#      encrypt of case 2's one file (and of case 2's set, for comparison).
# paes runs its default threads (the online CPUs). Each group runs round-robin
# (bench/suite/paes_bench/runner.py's measure: a warm-up round, then the runs,
# every output of the group deleted and `sync` run before each run, outside
# the timing), so a shared machine's drift weighs on all alike; figures are
# medians with min and max, ratios are of medians in this run. Once, before
# the timing, each paes data set is encrypted and decrypted and checked with
# cmp against the bytes it was cut from, with its originals kept (and the one
# file too). The targets (issue: tmpfs, 2 cores): age loop / paes >= 10 and
# xargs age / paes >= 4, each direction; set / one file <= 1.15, each
# direction; peak RSS of the small-file set / the one file <= 2.0. It
# asserts nothing.
#
#   bench/data_set.sh [RUNS] [DIR]     (defaults: 3, /dev/shm where writable, else $TMPDIR or /tmp)
#   environment: FILES=10000 DIRS=100 (case 1), BIG_FILES=1000 BIG_FILE_MIB=1 (case 2),
#                BIG_RUNS=7 (the runs of cases 2 and 3, which are quick)
set -euo pipefail

files="${FILES:-10000}" dirs="${DIRS:-100}"
big_files="${BIG_FILES:-1000}" big_file_mib="${BIG_FILE_MIB:-1}" big_runs="${BIG_RUNS:-7}"
for value in "$files" "$dirs" "$big_files" "$big_file_mib" "$big_runs"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || {
    echo "FILES, DIRS, BIG_FILES, BIG_FILE_MIB and BIG_RUNS are positive whole numbers, got '$value'" >&2; exit 2; }
done
(( dirs <= files )) || { echo "DIRS ($dirs) is more than FILES ($files)" >&2; exit 2; }
base="${2:-}"
if [ -z "$base" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base="${TMPDIR:-/tmp}"; fi
fi
[ -d "$base" ] || { echo "no directory $base" >&2; exit 1; }
base="$(cd "$base" && pwd)"  # the script works in its scratch directory: every path absolute

source "$(dirname "$0")/lib.sh"
bench_setup data-set 1 "${1:-3}" "$base"
paes="$(cd "$(dirname "$paes")" && pwd)/$(basename "$paes")"
for tool in age age-keygen; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (scripts/setup.sh installs age)" >&2; exit 1; }
done

# make_tree BLOB TREE FILE_BYTES NDIRS: cuts BLOB into files of FILE_BYTES
# (f000000, f000001, ... in order) spread evenly over NDIRS directories d000...
make_tree() {
  local blob="$1" tree="$2" bytes="$3" ndirs="$4" d=0 off=0 per
  mkdir -p "$tree/.cut"
  split -b "$bytes" -a 7 -d "$blob" "$tree/.cut/f"
  local names=("$tree"/.cut/f*)
  per=$(( (${#names[@]} + ndirs - 1) / ndirs ))
  while (( off < ${#names[@]} )); do
    mkdir "$tree/$(printf 'd%03d' "$d")"
    mv "${names[@]:off:per}" "$tree/$(printf 'd%03d' "$d")/"
    d=$((d + 1)) off=$((off + per))
  done
  rmdir "$tree/.cut"
}
# plain_of TREE: TREE's files that are no ciphertext, in order, concatenated
plain_of() { find "$1" -type f ! -name '*.paes' ! -name '*.age' -print0 | sort -z | xargs -0 cat; }
# count TREE NAME N: TREE holds N files named NAME (a glob), or the script stops
count() {
  local n; n=$(find "$1" -type f -name "$2" | wc -l)
  [ "$n" -eq "$3" ] || { echo "$1: $n files $2, not $3" >&2; exit 1; }
}

cd "$work"
age-keygen -o age.id 2> /dev/null
recipient="$(age-keygen -y age.id)"

# Case 1's set, and its ciphertexts: paes' in cpaes/, age's in cage/ (only
# those; the originals stay in plain/). Checked once: the originals kept, and
# paes' set decrypted back to them.
head -c "$((files * 4096))" /dev/urandom > small.bin
make_tree small.bin plain 4096 "$dirs"
"$paes" encrypt -r "$recipient" --recursive plain
count plain '*.paes' "$files"
plain_of plain | cmp - small.bin
cp -r plain cpaes
find cpaes -type f ! -name '*.paes' -delete
find plain -type f -name '*.paes' -delete
"$paes" decrypt -i age.id --recursive cpaes
count cpaes '*.paes' "$files"
plain_of cpaes | cmp - small.bin
find cpaes -type f ! -name '*.paes' -delete
find plain -type f -print0 | sort -z > plain.list
cp -r plain cage
find cage -type f -print0 | xargs -0 -P "$(nproc)" -I {} age -r "$recipient" -o {}.age {}
find cage -type f ! -name '*.age' -delete
count cage '*.age' "$files"
find cage -type f -name '*.age' -print0 | sort -z > cage.list

# Case 2's set, cut from the one file, checked the same way, and the one file.
head -c "$((big_files * big_file_mib << 20))" /dev/urandom > one.bin
big_dirs=$(( big_files < 10 ? big_files : 10 ))
make_tree one.bin big "$((big_file_mib << 20))" "$big_dirs"
"$paes" encrypt -r "$recipient" --recursive big
plain_of big | cmp - one.bin
cp -r big bigc
find bigc -type f ! -name '*.paes' -delete
find big -type f -name '*.paes' -delete
"$paes" decrypt -i age.id --recursive bigc
plain_of bigc | cmp - one.bin
find bigc -type f ! -name '*.paes' -delete
"$paes" encrypt -r "$recipient" one.bin -o one.bin.paes
"$paes" decrypt -i age.id one.bin.paes -o check
cmp check one.bin; rm -f check

echo "paes: $paes ($("$paes" --version | head -1)), default threads; age $(age --version)"
echo "files in $work, warm page cache, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

"${PYTHON:-python3}" - "$root/bench/suite" "$paes" "$runs" "$big_runs" "$work" "$recipient" \
  "$files" "$dirs" "$big_files" "$big_file_mib" "$big_dirs" <<'EOF'
import os
import statistics
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure, warm  # noqa: E402

paes, runs, big_runs, work, recipient = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
files, dirs, big_files, big_file_mib, big_dirs = (int(v) for v in sys.argv[7:12])
os.chdir(work)
ident = "age.id"
nproc = os.cpu_count()
xargs = f"xargs -P {nproc}"


def files_under(tree):
    for top, _, names in os.walk(tree):
        for name in names:
            yield os.path.join(top, name)


def cleaner(*rules):
    """A prepare hook: deletes, in each (tree, is_output) of rules, the files that is_output(name) picks."""
    def clean():
        for tree, is_output in rules:
            for path in list(files_under(tree)):
                if is_output(os.path.basename(path)):
                    os.unlink(path)
    return clean


def cipher(name):
    return name.endswith((".paes", ".age"))


def time_group(title, group, nruns, prepare, nbytes):
    """group: [(label, argv, out)]; times them round-robin, prints a line each; {label: median seconds}."""
    cands = [{"argv": argv, "src": "age.id", "out": out, "parse_json": False, "stdout": subprocess.DEVNULL,
              "prepare": prepare, "rec": {"bytes": nbytes}} for _, argv, out in group]
    print(f"\n{title} ({nruns} round-robin runs after a warm-up)", flush=True)
    median = {}
    for (label, *_), rec in zip(group, measure(cands, nruns)):
        median[label] = rec["seconds"]
        print(f"{label:44} median {rec['seconds']:7.3f}s  min {rec['min_seconds']:7.3f}s  "
              f"max {rec['max_seconds']:7.3f}s", flush=True)
    return median


# Peak memory: Linux keeps a process's max RSS across exec, so a command forked from this Python (tens of
# MiB) would report at least that; GNU time forks it from a process of about 1 MiB. Without GNU time, a
# fresh `python3 -S` (some 8 MiB) runs it: a floor under the figures, said so.
GNU_TIME = "/usr/bin/time"
if not (os.access(GNU_TIME, os.X_OK) and subprocess.run([GNU_TIME, "-f", "%M", "-o", os.devnull, "true"],
                                                        stderr=subprocess.DEVNULL).returncode == 0):
    GNU_TIME = None


def peak_kib(argv):
    """argv's max RSS in KiB."""
    if GNU_TIME:
        r = subprocess.run([GNU_TIME, "-f", "%M", "-o", "rss.txt", *argv], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL)
        text = open("rss.txt").read().split()
        os.unlink("rss.txt")
    else:
        r = subprocess.run([sys.executable, "-S", "-c", "import resource, subprocess, sys; "
                            "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
                            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *argv],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        text = r.stdout.split()
    if r.returncode != 0:
        sys.exit(f"{argv}: exit {r.returncode}")
    return int(text[-1])


for tree in ("plain", "cpaes", "cage", "big", "bigc"):
    warm(*files_under(tree))
warm("one.bin", "one.bin.paes")

small = f"{files} x 4 KiB files in {dirs} directories"
enc = time_group(f"case 1, encrypt {small}", [
    ("encrypt: paes --recursive", [paes, "encrypt", "-r", recipient, "--recursive", "plain"], None),
    ("encrypt: age, sh loop", ["sh", "-c", 'for f in "$2"/*/*; do age -r "$1" -o "$f.age" "$f"; done', "_",
                               recipient, "plain"], None),
    (f"encrypt: age, {xargs}", ["xargs", "-0", "-P", str(nproc), "-a", "plain.list", "-I", "{}",
                                "age", "-r", recipient, "-o", "{}.age", "{}"], None),
], runs, cleaner(("plain", cipher)), files * 4096)
dec = time_group(f"case 1, decrypt {small}", [
    ("decrypt: paes --recursive", [paes, "decrypt", "-i", ident, "--recursive", "cpaes"], None),
    ("decrypt: age, sh loop", ["sh", "-c", 'for f in "$2"/*/*.age; do age -d -i "$1" -o "$f.out" "$f"; done',
                               "_", ident, "cage"], None),
    (f"decrypt: age, {xargs}", ["xargs", "-0", "-P", str(nproc), "-a", "cage.list", "-I", "{}",
                                "age", "-d", "-i", ident, "-o", "{}.out", "{}"], None),
], runs, cleaner(("cpaes", lambda n: not n.endswith(".paes")), ("cage", lambda n: n.endswith(".out"))),
    files * 4096)

total_mib = big_files * big_file_mib
big = f"{big_files} x {big_file_mib} MiB files in {big_dirs} directories against one {total_mib} MiB file"
big_enc = time_group(f"case 2, encrypt {big}", [
    ("encrypt: paes --recursive, the set", [paes, "encrypt", "-r", recipient, "--recursive", "big"], None),
    ("encrypt: paes -o, one file", [paes, "encrypt", "-r", recipient, "one.bin", "-o", "out"], "out"),
], big_runs, cleaner(("big", cipher)), total_mib << 20)
big_dec = time_group(f"case 2, decrypt {big}", [
    ("decrypt: paes --recursive, the set", [paes, "decrypt", "-i", ident, "--recursive", "bigc"], None),
    ("decrypt: paes -o, one file", [paes, "decrypt", "-i", ident, "one.bin.paes", "-o", "out"], "out"),
], big_runs, cleaner(("bigc", lambda n: not n.endswith(".paes"))), total_mib << 20)

# Case 3: alternated too, each run after its outputs are deleted.
how = "GNU time's %M" if GNU_TIME else "a fresh python3 -S's RUSAGE_CHILDREN: includes its own ~8 MiB"
print(f"\ncase 3, peak memory of paes encrypt (max RSS by {how}; median of {big_runs} alternated runs)",
      flush=True)
memory = [
    (f"RSS: paes --recursive, {files} x 4 KiB", [paes, "encrypt", "-r", recipient, "--recursive", "plain"]),
    (f"RSS: paes --recursive, {big_files} x {big_file_mib} MiB",
     [paes, "encrypt", "-r", recipient, "--recursive", "big"]),
    (f"RSS: paes -o, one file of {total_mib} MiB", [paes, "encrypt", "-r", recipient, "one.bin", "-o", "out"]),
]
clean = cleaner(("plain", cipher), ("big", cipher), (".", lambda n: n == "out"))
kib = {label: [] for label, _ in memory}
for _ in range(big_runs):
    for label, argv in memory:
        clean()
        kib[label].append(peak_kib(argv))
clean()
rss = {}
for label, _ in memory:
    rss[label] = statistics.median(kib[label])
    print(f"{label:44} median {rss[label] / 1024:7.1f} MiB  min {min(kib[label]) / 1024:7.1f} MiB  "
          f"max {max(kib[label]) / 1024:7.1f} MiB", flush=True)
small_rss, big_rss, one_rss = (rss[label] for label, _ in memory)

ratios = [
    ("encrypt: age sh loop / paes --recursive", enc["encrypt: age, sh loop"] / enc["encrypt: paes --recursive"],
     ">= 10"),
    (f"encrypt: age {xargs} / paes --recursive",
     enc[f"encrypt: age, {xargs}"] / enc["encrypt: paes --recursive"], ">= 4"),
    ("decrypt: age sh loop / paes --recursive", dec["decrypt: age, sh loop"] / dec["decrypt: paes --recursive"],
     ">= 10"),
    (f"decrypt: age {xargs} / paes --recursive",
     dec[f"decrypt: age, {xargs}"] / dec["decrypt: paes --recursive"], ">= 4"),
    ("encrypt: paes set / one file", big_enc["encrypt: paes --recursive, the set"]
     / big_enc["encrypt: paes -o, one file"], "<= 1.15"),
    ("decrypt: paes set / one file", big_dec["decrypt: paes --recursive, the set"]
     / big_dec["decrypt: paes -o, one file"], "<= 1.15"),
    ("peak RSS: small-file set / one file", small_rss / one_rss, "<= 2.0"),
    ("peak RSS: large-file set / one file", big_rss / one_rss, ""),
]
print()
print("ratios of medians (time / time and RSS / RSS; age's over paes', paes' set over its one file):")
for what, ratio, target in ratios:
    print(f"  {what:44}: {ratio:6.2f}" + (f"   (target {target})" if target else ""))
EOF
