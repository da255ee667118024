#!/usr/bin/env bash
# The Debian packages as a user gets them: cpack -G DEB from the build tree
# into a scratch directory, then each .deb's control fields (dpkg-deb -f) and
# files (dpkg-deb -c), and the tools run from an extracted copy (dpkg-deb -x);
# lintian (when installed) finds no error or warning in either. paes depends
# on what dpkg-shlibdeps found (OpenSSL's libssl3) and on what it opens at run
# time, named by cmake/PaesPackage.cmake (the OpenCL loader, ipsec-mb,
# libssh, libsodium), and never on a CUDA library (the runtime is linked in
# statically); paes-mpi on the MPI library it links and on paes of its
# version.
#
#   test_package.sh <cpack> <build dir> <version> <opencl ON|OFF> <ipsec-mb ON|OFF> <mpi ON|OFF>
set -euo pipefail

cpack=$1 build=$2 version=$3 opencl=$4 ipsec_mb=$5 mpi=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

for tool in dpkg-deb dpkg-shlibdeps dpkg; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: no $tool (dpkg, dpkg-dev: build-essential brings them)"; exit 77; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/paes-package.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
arch=$(dpkg --print-architecture)

step "cpack -G DEB into $scratch"
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$scratch" >"$scratch/cpack.log" 2>&1 \
  || { cat "$scratch/cpack.log"; fail "cpack -G DEB"; }

packages=(paes)
[[ $mpi == ON ]] && packages+=(paes-mpi)
built=$(find "$scratch" -maxdepth 1 -name '*.deb' -printf '%f\n' | sort | tr '\n' ' ')
want=$(for p in "${packages[@]}"; do echo "${p}_${version}_${arch}.deb"; done | sort | tr '\n' ' ')
[[ $built == "$want" ]] || fail "cpack made '$built', not '$want'"

# field <deb> <name>: one control field's value.
field() { dpkg-deb -f "$1" "$2"; }
# depends_on <deb> <package>: Depends names <package> (alone or as one of alternatives).
depends_on() { field "$1" Depends | sed 's/[,|]/\n/g' | sed 's/^ *//; s/ .*//' | grep -qx -- "$2"; }

deb=$scratch/paes_${version}_${arch}.deb
step "paes: control fields"
dpkg-deb -I "$deb"
[[ $(field "$deb" Package) == paes ]] || fail "the package is not named paes"
[[ $(field "$deb" Version) == "$version" ]] || fail "paes' version is not $version (CMake's)"
[[ $(field "$deb" Architecture) == "$arch" ]] || fail "paes is not for $arch"
depends_on "$deb" libssl3 || fail "paes does not depend on libssl3 (libcrypto)"
# Opened at run time (dlopen), so named by hand: dpkg-shlibdeps can't see them.
depends_on "$deb" libssh-4 || fail "paes does not depend on libssh-4 (ssh keys)"
depends_on "$deb" libsodium23 || fail "paes does not depend on libsodium23 (Ed25519 ssh keys)"
# Opened at the first parallel region in a GCC build, linked in a clang one: named either way.
depends_on "$deb" libgomp1 || fail "paes does not depend on libgomp1 (OpenMP, the threads engine)"
if [[ $opencl == ON ]]; then
  depends_on "$deb" ocl-icd-libopencl1 || depends_on "$deb" libopencl1 \
    || fail "paes does not depend on the OpenCL loader"
fi
if [[ $ipsec_mb == ON ]]; then
  depends_on "$deb" libipsec-mb1 || fail "paes does not depend on libipsec-mb1"
fi

step "paes: files"
dpkg-deb -c "$deb" | awk '{print $NF}' >"$scratch/paes.files"
cat "$scratch/paes.files"
for file in ./usr/bin/paes ./usr/share/man/man1/paes.1.gz ./usr/share/bash-completion/completions/paes \
            ./usr/share/zsh/vendor-completions/_paes ./usr/share/doc/paes/copyright ./usr/share/doc/paes/changelog.gz; do
  grep -qx -- "$file" "$scratch/paes.files" || fail "paes lacks $file"
done
! grep -E '^\./usr/(include|lib|share/zsh/site-functions)/|paes-mpi' "$scratch/paes.files" \
  || fail "paes carries the library, the mpi tool or a zsh directory Debian's zsh does not read"

if [[ $mpi == ON ]]; then
  deb_mpi=$scratch/paes-mpi_${version}_${arch}.deb
  step "paes-mpi: control fields and files"
  dpkg-deb -I "$deb_mpi"
  [[ $(field "$deb_mpi" Package) == paes-mpi ]] || fail "the mpi package is not named paes-mpi"
  [[ $(field "$deb_mpi" Version) == "$version" ]] || fail "paes-mpi's version is not $version"
  field "$deb_mpi" Depends | tr ',' '\n' | sed 's/^ *//' | grep -qx -- "paes (= $version)" \
    || fail "paes-mpi does not depend on paes (= $version)"
  # The MPI library the built paes-mpi loads, and the Debian package it comes from.
  mpi_lib=$(ldd "$build/paes-mpi" | awk '$1 ~ /^libmpi(ch)?\.so/ {print $3; exit}')
  [[ -n $mpi_lib ]] || fail "the built paes-mpi loads no libmpi or libmpich"
  mpi_package=$(dpkg -S "$(readlink -f "$mpi_lib")" | head -1 | cut -d: -f1)
  depends_on "$deb_mpi" "$mpi_package" || fail "paes-mpi does not depend on $mpi_package ($mpi_lib)"
  dpkg-deb -c "$deb_mpi" | awk '$NF !~ /\/$/ {print $NF}' | sort >"$scratch/paes-mpi.files"
  want_mpi=$(printf '%s\n' ./usr/bin/paes-mpi ./usr/share/doc/paes-mpi/changelog.gz ./usr/share/doc/paes-mpi/copyright \
             ./usr/share/man/man1/paes-mpi.1.gz | sort)
  [[ $(cat "$scratch/paes-mpi.files") == "$want_mpi" ]] \
    || fail "paes-mpi carries other files than paes-mpi, its man page and its doc files: $(cat "$scratch/paes-mpi.files")"
fi

for deb_file in "$scratch"/*.deb; do
  ! field "$deb_file" Depends | grep -qi cuda || fail "$(basename "$deb_file") depends on a CUDA package"
done

# lintian, Debian's package checker (scripts/setup.sh installs it): no error
# and no warning, and no override: each would need a comment saying why.
if command -v lintian >/dev/null; then
  step "lintian"
  lintian --tag-display-limit 0 "$scratch"/*.deb >"$scratch/lintian.log" 2>&1 || true
  grep -v 'running with root privileges' "$scratch/lintian.log" || true
  ! grep -qE '^[EW]: ' "$scratch/lintian.log" || fail "lintian reports errors or warnings (above)"
else
  echo "lintian is not installed (scripts/setup.sh installs it): the packages were not checked by it"
fi

step "the extracted tools run"
for deb_file in "$scratch"/*.deb; do
  dpkg-deb -x "$deb_file" "$scratch/root"
done
for tool in "${packages[@]}"; do
  out=$("$scratch/root/usr/bin/$tool" --version) || fail "the extracted $tool --version failed"
  [[ $out == "paes $version" ]] || fail "the extracted $tool --version said '$out'"
done

echo "PASS: ${packages[*]} $version built, their dependencies and files as Debian wants them, the tools run"
