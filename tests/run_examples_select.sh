#!/usr/bin/env bash
# The select_numpy example at 1-4 ranks: NumPy writes a random field, ember selects
# with masks and index arrays (nonzero, argwhere, take, put, setitem through a
# mask), and the NumPy program at the end of examples/select_numpy.cpp runs the
# same selections and compares every result bit for bit.
#   bash tests/run_examples_select.sh [build-dir]
set -u
build="${1:-build}"
exe="$build/examples/select_numpy"
[[ -x "$exe" ]] || { echo "run_examples_select: $exe not found (build it first)"; exit 1; }
. "$(dirname "$0")/numpy_python.sh"
check=$(sed -n '/^\/\/ CHECK/,$p' "$(dirname "$0")/../examples/select_numpy.cpp" | cut -c4- | tail -n +2)
[[ -n "$check" ]] || { echo "run_examples_select: no CHECK block in examples/select_numpy.cpp"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
for shape in "23 9" "5 8" "40 17"; do
  $py - "$dir/in.npy" $shape <<'PY' || exit 1
import numpy as np, sys
rng = np.random.default_rng(int(sys.argv[2]) * 100 + int(sys.argv[3]))
np.save(sys.argv[1], rng.standard_normal((int(sys.argv[2]), int(sys.argv[3]))))
PY
  for p in 1 2 3 4; do
    rm -f "$dir"/[a-hj-z]*.npy  # the outputs of the last run (in.npy stays)
    out=$(timeout -k 10 120 mpirun -n "$p" --oversubscribe "$exe" "$dir/in.npy" "$dir" 2>&1)
    rc=$?
    if [[ $rc -eq 0 ]]; then
      out+=$'\n'$($py -c "$check" "$dir/in.npy" "$dir" 2>&1)
      rc=$?
    fi
    if [[ $rc -eq 0 ]]; then
      echo "select_numpy $shape np=$p ok"
    else
      echo "select_numpy $shape np=$p FAILED (exit $rc)"
      echo "$out" | tail -n 20 | sed 's/^/    /'
      failed=1
    fi
  done
done
exit $failed
