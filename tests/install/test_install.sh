#!/usr/bin/env bash
# libpaes as another project sees it: install the build tree into a scratch
# prefix, check the installed headers stand alone (nothing from src/) and that
# paes.hpp names them all, that man finds paes' page and the completions are
# where bash-completion and zsh look, build and run examples/seal_file through
# find_package(paes), and build and run a one-file program through pkg-config.
#
#   test_install.sh <cmake> <build dir> <source dir> <c++ compiler> <pkg-config>
set -euo pipefail

cmake=$1 build=$2 source=$3 cxx=$4 pkg_config=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

[[ -x $pkg_config ]] || fail "no pkg-config program ('$pkg_config'); scripts/setup.sh installs it"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/paes-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix

step "cmake --install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$scratch/install.log" \
  || { cat "$scratch/install.log"; fail "cmake --install"; }
[[ -x $prefix/bin/paes ]] || fail "the paes tool was not installed"
"$prefix/bin/paes" --version >/dev/null || fail "the installed paes does not run"

step "man page and shell completions"
for file in share/man/man1/paes.1 share/bash-completion/completions/paes share/zsh/site-functions/_paes; do
  [[ -s $prefix/$file ]] || fail "$file was not installed"
done
grep -q '^complete .* paes$' "$prefix/share/bash-completion/completions/paes" \
  || fail "the installed bash completion does not complete paes"
if command -v man >/dev/null; then
  MANPATH=$prefix/share/man man -w paes | grep -qx "$prefix/share/man/man1/paes.1" \
    || fail "man does not find the installed page"
fi

step "public headers: each compiles alone from the install tree; paes.hpp names each"
headers=("$prefix"/include/paes/*.hpp)
[[ ${#headers[@]} -gt 1 ]] || fail "no headers under $prefix/include/paes"
[[ -z $(find "$prefix/include" -type f ! -path "$prefix/include/paes/*.hpp") ]] \
  || fail "files other than include/paes/*.hpp were installed under include/"
for header in "${headers[@]}"; do
  name=paes/$(basename "$header")
  echo "#include <$name>" | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror \
    -I"$prefix/include" -x c++ - || fail "$name does not compile on its own"
  [[ $name == paes/paes.hpp ]] || grep -q "^#include \"$name\"" "$prefix/include/paes/paes.hpp" \
    || fail "the umbrella paes/paes.hpp does not include $name"
done

step "find_package(paes): build and run examples/seal_file"
"$cmake" -S "$source/examples/seal_file" -B "$scratch/seal_file" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$scratch/configure.log" \
  || { cat "$scratch/configure.log"; fail "configuring the example against the install"; }
grep -q "^paes_DIR:PATH=$prefix/" "$scratch/seal_file/CMakeCache.txt" \
  || fail "the example found a paes other than the one just installed"
mpi_of() { sed -n 's/^MPI_CXX_COMPILER:FILEPATH=//p' "$1/CMakeCache.txt"; }
[[ $(mpi_of "$scratch/seal_file") == "$(mpi_of "$build")" ]] \
  || fail "find_package(paes) found MPI '$(mpi_of "$scratch/seal_file")', not the '$(mpi_of "$build")' paes was built with"
"$cmake" --build "$scratch/seal_file" || fail "building the example"
mkdir "$scratch/run"
"$scratch/seal_file/seal_file" "$scratch/run" || fail "the example's round trips"

step "pkg-config: a one-file program"
pc=$(find "$prefix" -name paes.pc -path '*/pkgconfig/*')
[[ -n $pc ]] || fail "no paes.pc installed"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
flags=$("$pkg_config" --cflags --libs paes) || fail "pkg-config cannot read paes.pc"
echo "pkg-config --cflags --libs paes: $flags"
cat >"$scratch/ctr_kat.cpp" <<'CPP'
// SP 800-38A F.5.1: the first block of CTR-AES128.Encrypt.
#include <paes/paes.hpp>

#include <cstdint>
#include <vector>

int main() {
  const std::uint8_t key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
  paes::CipherSpec spec;
  spec.mode = paes::Mode::ctr;
  spec.key = paes::SecretBytes(key, sizeof key);
  spec.iv = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
             0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};
  const std::vector<std::uint8_t> in = {0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96,
                                        0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a};
  const std::vector<std::uint8_t> want = {0x87, 0x4d, 0x61, 0x91, 0xb6, 0x20, 0xe3, 0x26,
                                          0x1b, 0xef, 0x68, 0x64, 0x99, 0x0d, 0xb6, 0xce};
  std::vector<std::uint8_t> out(in.size());
  paes::transform_memory(spec, out, in, paes::TransformOptions{});
  return out == want ? 0 : 1;
}
CPP
# shellcheck disable=SC2086 # the flags are words
"$cxx" -std=c++20 "$scratch/ctr_kat.cpp" -o "$scratch/ctr_kat" $flags \
  || fail "compiling against pkg-config's flags"
"$scratch/ctr_kat" || fail "the pkg-config program gave the wrong CTR block"

echo "PASS: installed, found by find_package and by pkg-config, examples ran"
