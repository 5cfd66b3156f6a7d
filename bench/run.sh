#!/usr/bin/env bash
# Runs the benchmarks on 2 ranks (one BLAS thread per rank) and reports ratios
# against baselines measured in the same run. Usage: bench/run.sh [builddir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
ninja -C "$build" benchmarks  # not built by default (bench/meson.build)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_foundation" "${2:-4096}" "${3:-7}"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_expr"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_ufuncs"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_views" 4096 20
# a(mask) of 2^25 doubles and take of 2^22 random indices vs hand-written MPI
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_selection" 25 22
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_reshape" 4096
# a whole user program against NumPy in the same run (issue 15): 1 and 2 ranks
mpirun -n 1 "$build/bench/bench_programs"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_programs"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_costmodel"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_matmul"
# scans, sort/argsort, median/percentile, histogram, unique of 2^25 elements (issue 17)
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_order"
# fftn 256^3 and rfft2 4096^2 against FFTW-MPI (issue 18)
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_fft"
# einsum vs matmul, a loop of local dgemms, and the bad contraction order (issue 18)
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_einsum"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_linalg"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_hsvd"
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_par"
mpirun -n 4 --oversubscribe "$build/bench/bench_par"
# 1 GiB .npy save/load vs raw MPI-IO and np.load + scatter (size in MiB: BENCH_IO_MIB).
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_io" "${BENCH_IO_MIB:-1024}"

# Compile times, with the flags the build uses, so they never silently grow:
# a TU that uses the public header (quickstart) and one with a 20-node expression.
# compile_time FILE TARGET [nopch]: the build's own command for FILE (with the
# precompiled <ember.hpp> of pch/ where the build uses one; `nopch`: without it,
# as a user's build without a precompiled header compiles it).
compile_time() {
  local file="$1"
  local cmd
  cmd=$(python3 - "$build" "$file" "${3:-}" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1] + "/compile_commands.json")):
    if e["file"].endswith(sys.argv[2]):
        parts = e["command"].split()
        out, skip = [], False
        for p in parts:
            if skip: skip = False; continue
            if p in ("-o", "-MF", "-MQ"): skip = True; continue
            if p == "-include" and sys.argv[3] == "nopch": skip = True; continue
            if p in ("-MD", "-fpch-deps"): continue  # (GCC 12 crashes on -fpch-deps without -MD)
            out.append(p)
        print(" ".join(out) + " -o /dev/null")
        break
PY
)
  [[ -n "$cmd" ]] || return 0
  local start end
  start=$(date +%s.%N)
  (cd "$build" && eval "$cmd" >/dev/null 2>&1) || echo "compile of $file failed"
  end=$(date +%s.%N)
  python3 -c "import sys; t=$end-$start; print(f'{\"compile time: \" + sys.argv[1]:<44} {t:8.2f} s  (target <= {sys.argv[2]} s)  ' + ('ok' if t <= float(sys.argv[2]) else 'MISS'))" "$file${3:+ (no pch)}" "$2"
}
compile_time examples/quickstart.cpp 10
compile_time examples/quickstart.cpp 15 nopch
compile_time bench/compile_expr.cpp 10
compile_time bench/compile_expr.cpp 15 nopch
