"""Counts the machine instructions of paes' CUDA kernels per pipe, without a GPU: compiles
src/cipher/cuda/kernels.cu for one architecture (nvcc -cubin), disassembles it (cuobjdump -sass) and, for
each kernel with 10 rounds (AES-128), prints how many instructions go to the integer pipe (LOP3, SHF, LEA,
IADD3, PRMT, ...), to the multiply-add pipe (IMAD, ...) and to shared memory (LDS). A grid-stride kernel
runs one AES block per loop pass, so these are nearly the per-block counts.

Why: a T-table round is table look-ups and the integer arithmetic that forms their indexes, and on a
Hopper SM the integer pipe does 64 instructions a clock against shared memory's 32 look-ups, so the
integer count is the kernel's speed limit: about 132 SMs x 1.755 GHz x 64 / (integer instructions a block)
AES blocks a second on an H100. docs/GPU.md gives the figures; only a GPU measures the real rate
(bench/gpu/gpu_bench.py).

    python3 bench/gpu/kernel_ops.py [--arch sm_90] [--nvcc nvcc] [--cuobjdump PATH] [--portable-lookups]

cuobjdump is not in Debian; PyPI has it: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm (it is
then under site-packages/nvidia/cu13/bin). Standard-library Python 3 only.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
INTEGER = {"LOP3", "SHF", "LEA", "IADD3", "PRMT", "ISETP", "SEL", "LOP", "IABS", "FLO", "POPC", "BMSK", "SGXT",
           "VIADD", "IMNMX"}
MULTIPLY_ADD = {"IMAD", "IMUL", "FFMA", "FMUL", "FADD"}
INSTRUCTION = re.compile(r"\s*/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")
KERNEL = re.compile(r"(ecb_encrypt|ecb_decrypt|ctr|cbc_decrypt|cfb128_decrypt)_kernelILi(\d+)E")


def find_cuobjdump(given):
    if given:
        return given
    found = shutil.which("cuobjdump")
    if found:
        return found
    for site in sys.path:
        for path in glob.glob(os.path.join(site, "nvidia", "cu*", "bin", "cuobjdump")):
            return path
    sys.exit("kernel_ops.py: no cuobjdump (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm, or --cuobjdump)")


def count(sass):
    """{kernel name: {opcode: count}} of the 10-round kernels in cuobjdump's text."""
    kernels = {}
    for function in re.split(r"\n\s*Function : ", sass)[1:]:
        match = KERNEL.search(function.split("\n", 1)[0])
        if not match or match.group(2) != "10":
            continue
        ops = kernels.setdefault(match.group(1), {})
        for line in function.split("\n"):
            m = INSTRUCTION.match(line)
            if m:
                op = m.group(1).split(".")[0]
                ops[op] = ops.get(op, 0) + 1
    return kernels


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90", help="the architecture to compile for (default sm_90: H100)")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--cuobjdump", help="default: on PATH, else from the nvidia-cuda-cuobjdump wheel")
    ap.add_argument("--portable-lookups", action="store_true",
                    help="count the kernels as -DPAES_CUDA_PORTABLE_LOOKUPS=ON builds them (no inline PTX)")
    args = ap.parse_args()
    cuobjdump = find_cuobjdump(args.cuobjdump)
    with tempfile.TemporaryDirectory() as work:
        cubin = os.path.join(work, "kernels.cubin")
        defines = ["-DPAES_CUDA_PORTABLE_LOOKUPS"] if args.portable_lookups else []
        subprocess.run([args.nvcc, "-std=c++17", f"-arch={args.arch}", "-cubin", "-O3", *defines, "-I",
                        os.path.join(ROOT, "src"), "-I", os.path.join(ROOT, "include"), "-o", cubin,
                        os.path.join(ROOT, "src", "cipher", "cuda", "kernels.cu")], check=True)
        sass = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True, text=True).stdout
    kernels = count(sass)
    if not kernels:
        sys.exit("kernel_ops.py: no AES-128 kernel found in the disassembly")
    lookups = "portable look-ups" if args.portable_lookups else "inline PTX look-ups"
    print(f"{args.arch}, {lookups}, AES-128 kernels: instructions per pass of the grid-stride loop (one block), and the kernel's "
          "set-up once")
    print(f"{'kernel':16} {'all':>6} {'integer':>8} {'mul-add':>8} {'LDS':>5}")
    for name, ops in sorted(kernels.items()):
        integer = sum(v for k, v in ops.items() if k in INTEGER)
        multiply_add = sum(v for k, v in ops.items() if k in MULTIPLY_ADD)
        print(f"{name:16} {sum(ops.values()):6d} {integer:8d} {multiply_add:8d} {ops.get('LDS', 0):5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
