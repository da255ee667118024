#!/usr/bin/env bash
# The sealed format end to end on a file, against its peers in one run:
# openssl enc -aes-256-ctr (no integrity, the speed reference), age -e
# (ChaCha20-Poly1305 streaming, authenticated) and paes' own serial engine.
# Warm page cache; each command runs once to warm up, then RUNS times; ratios
# are between medians of this run.
#
#   bench/sealed_file.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 5 $TMPDIR or /tmp)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup sealed "$@"
command -v age >/dev/null || { echo "age is not installed (scripts/setup.sh installs it)" >&2; exit 1; }

head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
cat "$work/in.bin" > /dev/null
"$paes" keygen -o "$work/key"
key_hex="$(tr -d '\n' < "$work/key")"
iv="$(openssl rand -hex 16)"
age-keygen -o "$work/age.id" 2>/dev/null
recipient="$(age-keygen -y "$work/age.id")"

echo "input: $size_mib MiB random, warm page cache, $runs runs after a warm-up, $(nproc) CPUs, $(openssl version | cut -d' ' -f1-2), age $(age --version)"
measure "openssl enc -aes-256-ctr" openssl enc -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/in.bin" -out "$work/out"
measure "age -e" age -e -r "$recipient" -o "$work/out" "$work/in.bin"
measure "paes seal (serial)" "$paes" encrypt --engine serial --key-file "$work/key" "$work/in.bin" -o "$work/out"
measure "paes seal (threads)" "$paes" encrypt --key-file "$work/key" "$work/in.bin" -o "$work/out"
"$paes" encrypt --key-file "$work/key" "$work/in.bin" -o "$work/in.paes"
openssl enc -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/in.bin" -out "$work/in.ctr"
age -e -r "$recipient" -o "$work/in.age" "$work/in.bin"
measure "openssl enc -d -aes-256-ctr" openssl enc -d -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/in.ctr" -out "$work/out"
measure "age -d" age -d -i "$work/age.id" -o "$work/out" "$work/in.age"
measure "paes open (threads)" "$paes" decrypt --key-file "$work/key" "$work/in.paes" -o "$work/out"
cmp "$work/out" "$work/in.bin"
measure "paes seal, stdin to stdout" sh -c "'$paes' encrypt --key-file '$work/key' < '$work/in.bin' > '$work/out'"

echo
echo "ratios of medians (time / time; lower is faster for paes):"
echo "  paes seal threads / openssl enc ctr   : $(ratio "paes seal (threads)" "openssl enc -aes-256-ctr")   (target <= 0.70)"
echo "  paes seal threads / age -e            : $(ratio "paes seal (threads)" "age -e")   (target <= 0.50)"
echo "  paes open threads / openssl enc -d ctr: $(ratio "paes open (threads)" "openssl enc -d -aes-256-ctr")   (target <= 0.70)"
echo "  paes open threads / age -d            : $(ratio "paes open (threads)" "age -d")"
echo "  paes seal threads / paes seal serial  : $(ratio "paes seal (threads)" "paes seal (serial)")"
echo "  paes seal pipe / paes seal file       : $(ratio "paes seal, stdin to stdout" "paes seal (threads)")"
