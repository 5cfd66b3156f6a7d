#!/usr/bin/env bash
# NumPy-checked examples at 1-4 ranks: NumPy writes a random field, the example
# (examples/<name>.cpp) runs its program on it and saves every result, and the
# NumPy program in the example's closing "// CHECK" block runs the same program
# and compares each result bit for bit.
#   bash tests/run_examples_numpy.sh [build-dir] name...   (default: views_numpy select_numpy ufuncs_numpy linalg_numpy complex_numpy order_numpy fft_numpy)
set -u
# The whole-program check: every evaluation of every example measures each
# step's bytes and messages and ends the run with ember::error on every rank if
# they differ from what its plan (EXPLAIN) predicted for that rank.
export EMBER_CHECK_TRAFFIC=1
build="${1:-build}"
shift || true
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(views_numpy select_numpy ufuncs_numpy linalg_numpy complex_numpy order_numpy fft_numpy)
. "$(dirname "$0")/numpy_python.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
for name in "${names[@]}"; do
  exe="$build/examples/$name"
  [[ -x "$exe" ]] || { echo "run_examples_numpy: $exe not found (build it first)"; exit 1; }
  check=$(sed -n '/^\/\/ CHECK/,$p' "$(dirname "$0")/../examples/$name.cpp" | cut -c4- | tail -n +2)
  [[ -n "$check" ]] || { echo "run_examples_numpy: no CHECK block in examples/$name.cpp"; exit 1; }
  for shape in "23 9" "5 8" "40 17"; do
    $py - "$dir/in.npy" $shape <<'PY' || exit 1
import numpy as np, sys
rng = np.random.default_rng(int(sys.argv[2]) * 100 + int(sys.argv[3]))
np.save(sys.argv[1], rng.standard_normal((int(sys.argv[2]), int(sys.argv[3]))))
PY
    for p in 1 2 3 4; do
      mkdir -p "$dir/out" && rm -f "$dir"/out/*.npy  # the outputs of the last run
      out=$(timeout -k 10 120 mpirun -n "$p" --oversubscribe "$exe" "$dir/in.npy" "$dir/out" 2>&1)
      rc=$?
      if [[ $rc -eq 0 ]]; then
        out+=$'\n'$($py -c "$check" "$dir/in.npy" "$dir/out" 2>&1)
        rc=$?
      fi
      if [[ $rc -eq 0 ]]; then
        echo "$name $shape np=$p ok"
      else
        echo "$name $shape np=$p FAILED (exit $rc)"
        echo "$out" | tail -n 20 | sed 's/^/    /'
        failed=1
      fi
    done
  done
done
exit $failed
