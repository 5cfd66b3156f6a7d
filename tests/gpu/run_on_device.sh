#!/usr/bin/env bash
# Builds the CUDA backend and its unit tests in a fresh build directory and runs
# them on this machine's GPU. Meant for a lent GPU machine (e.g. the H200), run
# from the repository root:
#   bash tests/gpu/run_on_device.sh [builddir]        (default: build-gpu-check)
# Budget: about 8 minutes on 16 cores (configure, build libember + ember_cuda +
# test_gpu only, run the tests, one bandwidth measurement). Prints a RESULT line
# and exits non-zero when anything failed; no GPU is a failure here, not a skip.
set -uo pipefail
cd "$(dirname "$0")/../.."
builddir="${1:-build-gpu-check}"
export PATH="/usr/local/cuda/bin:$PATH"
jobs="$(nproc 2>/dev/null || echo 4)"
# Logs go to $OUT when the device tool provides it (they come back), else /tmp.
logs="${OUT:-/tmp}"
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }
fail() { echo "RESULT: FAILED ($1) after $(elapsed)"; exit 1; }

echo "== machine"
nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv,noheader 2>&1 \
  || echo "nvidia-smi: not available"
for tool in nvcc meson ninja g++; do
  command -v "$tool" >/dev/null || fail "$tool not found"
done
nvcc --version | tail -2

echo "== configure ($builddir, -Dcuda=enabled)"
rm -rf "$builddir"
# hdf5 off: not needed here and one less dependency to probe.
meson setup "$builddir" --buildtype=release -Dcuda=enabled -Dhdf5=disabled > "$logs/setup.log" 2>&1 \
  || { tail -n 30 "$logs/setup.log"; fail "meson setup"; }
grep -E "CUDA|Cuda compiler" "$logs/setup.log"

echo "== build test_gpu, test_device, the plugin (-j$jobs)"
tb=$(date +%s)
timeout 360 ninja -C "$builddir" -j "$jobs" tests/gpu/test_gpu tests/test_device tests/gpu/test_device_cuda bench/bench_gpu cuda/libember_cuda.so > "$logs/build.log" 2>&1 \
  || { grep -E "error|FAILED" "$logs/build.log" | head -n 40; tail -n 20 "$logs/build.log"; fail "build"; }
echo "built in $(( $(date +%s) - tb ))s"
if grep -q "warning" "$logs/build.log"; then
  echo "warnings:"; grep -A3 "warning" "$logs/build.log" | head -n 30
fi

echo "== test_gpu"
export EMBER_GPU_TESTS_REQUIRED=1
timeout 180 "$builddir/tests/gpu/test_gpu" --durations yes
rc=$?
echo "test_gpu exit code: $rc"

echo "== test_device (g++: kernels on host copies) and test_device_cuda (nvcc: kernels on the GPU), 1 and 2 ranks"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
drc=0
for bin in tests/test_device tests/gpu/test_device_cuda; do
  for np in 1 2; do
    timeout 120 mpirun --oversubscribe -np "$np" "$builddir/$bin" "[.gpu]" 2>&1 | tail -n 25
    r=${PIPESTATUS[0]}
    echo "$bin at $np ranks: exit code $r"
    [ "$r" -eq 0 ] || drc=1
  done
done

echo "== bandwidth (fused a*b + c*d - 2*e vs device-to-device copy, 2^28 doubles)"
timeout 60 "$builddir/tests/gpu/test_gpu" "[bench]" | grep -E "^bench:|passed|failed"

echo "== bench_gpu: fused vs D2D copy, matmul and QR vs raw cuBLAS/cuSOLVER, GPU vs host"
OPENBLAS_NUM_THREADS="$jobs" timeout 240 "$builddir/bench/bench_gpu" 2>&1 | tail -n 12

if [ "$rc" -eq 0 ] && [ "$drc" -eq 0 ]; then
  echo "RESULT: test_gpu and test_device passed on the GPU after $(elapsed)"
else
  fail "test_gpu exit code $rc, test_device failed: $drc"
fi
