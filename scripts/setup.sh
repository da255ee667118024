#!/usr/bin/env bash
# Installs everything paes needs to build and test on Debian 12, from Debian's
# archive only. Safe to run again. Run as root (or with sudo available).
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(
  build-essential cmake pkg-config   # compiler (GCC with OpenMP), build system
  libssl-dev openssl                 # OpenSSL 3: every CPU AES, and the test oracle
  libipsec-mb-dev                    # Intel ipsec-mb: CTR, ECB, CBC/CFB decryption, GCM at VAES speed
  libcli11-dev nlohmann-json3-dev    # command line, --json
  libssh-dev libsodium-dev           # ssh keys as age takes them: libssh reads their formats,
                                     # libsodium maps Ed25519 keys to X25519
  openssh-client                     # unit tests: ssh-keygen makes their ssh keys
  libgtest-dev                       # unit tests
  zlib1g-dev                         # unit tests: inflating CCTV's compressed age vectors
  python3 python3-venv               # end-to-end CLI tests; a venv for PyPI tools
  util-linux                         # setpriv: the CLI tests' permission cases as root
  strace                             # the CLI tests: each message on stderr is whole lines in one write
  age                                # a peer in the sealed-format benchmark
  groff-base man-db zsh               # the man page's checks (groff -ww, man), the zsh completion's
  mpich libmpich-dev                 # the mpi engine (runs as root, oversubscribes)
  openmpi-bin libopenmpi-dev         # the mpi engine's other MPI: the openmpi preset's tests (it
                                     # takes over plain mpicxx/mpiexec; builds pin theirs, PAES_MPI_FLAVOR)
  gnupg                              # gpg --symmetric: a peer in the benchmark suite
  lintian                            # the package test: Debian's checker on both .debs
  ocl-icd-opencl-dev opencl-headers  # the opencl engine: ICD loader and headers
  pocl-opencl-icd clinfo             # an OpenCL device on the CPU, for the tests
  clang libclang-rt-14-dev           # libFuzzer and TSan (the fuzz and tsan presets)
  libomp-dev                         # LLVM OpenMP with Archer: OpenMP that TSan understands
)

$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${packages[@]}"

# Python tools from PyPI, in a virtual environment inside the checkout
# (ignored by git): Google Tink, the interoperability oracle of the sealed
# format; cryptography, the independent reader of format version 3 (X25519,
# HKDF, ChaCha20-Poly1305, HMAC) and the AES-GCM of its key-commitment test;
# pyrage (rage, the Rust age) for tests/tink/age_files.py's second age peer;
# and matplotlib for the benchmark suite's plots.
root="$(cd "$(dirname "$0")/.." && pwd)"
python3 -m venv "$root/.venv"
"$root/.venv/bin/pip" install --quiet --disable-pip-version-check tink==1.16.1 cryptography==49.0.0 \
  pyrage==1.4.0 matplotlib==3.11.2
