#!/usr/bin/env bash
# Runs the benchmarks on 2 ranks (one BLAS thread per rank) and reports ratios
# against baselines measured in the same run. Usage: bench/run.sh [builddir]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mpirun -n 2 --oversubscribe --bind-to core "$build/bench/bench_foundation" "${2:-4096}" "${3:-7}"

# Compile time of a translation unit that includes the public header and uses it
# (quickstart), with the flags the build uses: it must never silently grow.
cmd=$(python3 - "$build" <<'PY'
import json, sys
db = json.load(open(sys.argv[1] + "/compile_commands.json"))
for e in db:
    if e["file"].endswith("examples/quickstart.cpp"):
        print(e["command"].replace(" -o ", " -o /dev/null -UNUSED ").split(" -MD")[0] + " -c " + e["file"] + " -o /dev/null")
        break
PY
)
if [[ -n "$cmd" ]]; then
  start=$(date +%s.%N)
  (cd "$build" && eval "$cmd" >/dev/null 2>&1) || true
  end=$(date +%s.%N)
  printf '%-44s %8.2f s\n' "compile time: examples/quickstart.cpp" "$(echo "$end - $start" | bc -l 2>/dev/null || python3 -c "print($end-$start)")"
fi
