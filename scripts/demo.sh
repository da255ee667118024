#!/usr/bin/env bash
# The main job on a generated sample: build paes, encrypt and decrypt a few
# hundred MiB with AES-256-CTR, verify the round trip and the bytes against
# openssl enc, and print paes' time next to openssl's.
#   scripts/demo.sh [SIZE_MIB]   (default 512)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
size_mib="${1:-512}"
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" >/dev/null
paes="$root/build/release/paes"

work="$(mktemp -d "${TMPDIR:-/tmp}/paes-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "sample: $size_mib MiB of random data in $work"
head -c "$((size_mib << 20))" /dev/urandom > "$work/sample.bin"
openssl rand 32 > "$work/aes.key"
chmod 600 "$work/aes.key"
key_hex="$(od -An -tx1 -v "$work/aes.key" | tr -d ' \n')"
iv="$(openssl rand -hex 16)"

seconds() {  # wall seconds of a command, to the millisecond
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

"$paes" info
echo
t_paes_enc=$(seconds "$paes" encrypt --mode ctr --key-file "$work/aes.key" --iv "$iv" "$work/sample.bin" -o "$work/paes.ctr")
t_paes_dec=$(seconds "$paes" decrypt --mode ctr --key-file "$work/aes.key" --iv "$iv" "$work/paes.ctr" -o "$work/paes.out")
t_ossl_enc=$(seconds openssl enc -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/sample.bin" -out "$work/openssl.ctr")
t_ossl_dec=$(seconds openssl enc -d -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/openssl.ctr" -out "$work/openssl.out")

cmp "$work/paes.ctr" "$work/openssl.ctr"
cmp "$work/paes.out" "$work/sample.bin"
echo "verified: paes' ciphertext is byte-identical to openssl's, and decrypts to the sample"
echo
printf '%-28s %10s %10s %8s\n' "AES-256-CTR, $size_mib MiB" "paes (s)" "openssl (s)" "speed-up"
row() { awk -v n="$1" -v p="$2" -v o="$3" 'BEGIN { printf "%-28s %10s %10s %7.2fx\n", n, p, o, o / p }'; }
row encrypt "$t_paes_enc" "$t_ossl_enc"
row decrypt "$t_paes_dec" "$t_ossl_dec"
