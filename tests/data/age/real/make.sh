#!/bin/sh
# Regenerates the real-age test files in this directory with the reference
# age implementation (Debian's age 1.1.1: `age`, `age-keygen`), then writes
# expected.txt with compute_file_keys.py (independent Python reference).
#
# The keys here are throwaway TEST DATA, deliberately committed.
#
#   ./make.sh          keep existing identity*.txt and *.age; only recompute
#                      expected.txt (deterministic: must come out identical)
#   ./make.sh --fresh  delete everything and regenerate new keys and files
#                      (random: the .age files and file keys will change)
#
# PYTHON defaults to /tmp/agevenv/bin/python, a venv with `cryptography`:
#   python3 -m venv /tmp/agevenv && /tmp/agevenv/bin/pip install cryptography
set -eu
cd "$(dirname "$0")"
PYTHON=${PYTHON:-/tmp/agevenv/bin/python}

if [ "${1:-}" = "--fresh" ]; then
    rm -f identity.txt identity2.txt identity3.txt one.age three.age armored.age expected.txt
fi

# age-keygen refuses to overwrite an existing -o file, so existing keys are kept.
for f in identity.txt identity2.txt identity3.txt; do
    [ -e "$f" ] || age-keygen -o "$f" 2>/dev/null
done

R1=$(age-keygen -y identity.txt)
R2=$(age-keygen -y identity2.txt)
R3=$(age-keygen -y identity3.txt)

[ -e one.age ]     || printf 'hello age\n' | age -r "$R1" > one.age
[ -e three.age ]   || printf 'hello age\n' | age -r "$R1" -r "$R2" -r "$R3" > three.age
[ -e armored.age ] || printf 'hello age\n' | age -a -r "$R1" > armored.age

# Sanity: the reference implementation decrypts what it wrote.
for f in one.age three.age armored.age; do
    [ "$(age -d -i identity.txt "$f")" = "hello age" ]
done
for i in identity2.txt identity3.txt; do
    [ "$(age -d -i "$i" three.age)" = "hello age" ]
done

{
    printf '%s\n' "# age 1.1.1 test files. Plaintext of every file: printf 'hello age\\n'."
    echo "# age-keygen -y identity.txt  = $R1"
    echo "# age-keygen -y identity2.txt = $R2"
    echo "# age-keygen -y identity3.txt = $R3"
    echo "# one.age:     age -r \$R1                 (1 X25519 stanza)"
    echo "# three.age:   age -r \$R1 -r \$R2 -r \$R3 (3 X25519 stanzas, in that order)"
    echo "# armored.age: age -a -r \$R1              (ASCII armor, 1 X25519 stanza)"
    echo "# Negative use: one.age/armored.age with identity2.txt or identity3.txt => no match."
    echo "# 'stanza.N ... unwrapped_by' names the identity file whose key opens stanza N."
    "$PYTHON" compute_file_keys.py -i identity.txt -i identity2.txt -i identity3.txt \
        one.age three.age armored.age
} > expected.txt.tmp
mv expected.txt.tmp expected.txt
echo "ok: expected.txt written"
