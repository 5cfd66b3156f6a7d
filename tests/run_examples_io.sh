#!/usr/bin/env bash
# The io_roundtrip example at 1-4 ranks: NumPy writes the input (C and Fortran
# order, big-endian), ember loads it split, computes and saves, NumPy checks every
# output bit for bit (2x-1 and the CSV are exact; the column sums to 1e-12).
#   bash tests/run_examples_io.sh [build-dir]
set -u
# The whole-program check: every evaluation of every example measures each
# step's bytes and messages and ends the run with ember::error on every rank if
# they differ from what its plan (EXPLAIN) predicted for that rank.
export EMBER_CHECK_TRAFFIC=1
build="${1:-build}"
exe="$build/examples/io_roundtrip"
[[ -x "$exe" ]] || { echo "run_examples_io: $exe not found (build it first)"; exit 1; }
. "$(dirname "$0")/numpy_python.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
for variant in c fortran bigendian; do
  $py - "$dir/in.npy" "$variant" <<'PY' || exit 1
import numpy as np, sys
rng = np.random.default_rng(7)
x = rng.standard_normal((37, 5)) * 1e3
if sys.argv[2] == "fortran": x = np.asfortranarray(x)
if sys.argv[2] == "bigendian": x = x.astype(">f8")
np.save(sys.argv[1], x)
PY
  for p in 1 2 3 4; do
    rm -f "$dir"/scaled.npy "$dir"/colsum.npy "$dir"/x.csv
    out=$(timeout -k 10 120 mpirun -n "$p" --oversubscribe "$exe" "$dir/in.npy" "$dir" 2>&1)
    rc=$?
    if [[ $rc -eq 0 ]]; then
      out+=$'\n'$($py - "$dir" <<'PY' 2>&1
import numpy as np, sys
d = sys.argv[1]
x = np.load(f"{d}/in.npy").astype("<f8")
s = np.load(f"{d}/scaled.npy")
assert s.dtype == np.float64 and s.shape == x.shape
assert s.tobytes() == (x * 2.0 - 1.0).tobytes(), "scaled differs"
c = np.load(f"{d}/colsum.npy")
assert c.shape == (x.shape[1],)
np.testing.assert_allclose(c, x.sum(axis=0), rtol=1e-12, atol=1e-9)
t = np.loadtxt(f"{d}/x.csv", delimiter=",", ndmin=2)
assert t.tobytes() == np.ascontiguousarray(x).tobytes(), "csv differs"
print("numpy check ok")
PY
)
      rc=$?
    fi
    if [[ $rc -eq 0 ]]; then
      echo "io_roundtrip $variant np=$p ok"
    else
      echo "io_roundtrip $variant np=$p FAILED (exit $rc)"
      echo "$out" | tail -n 20 | sed 's/^/    /'
      failed=1
    fi
  done
done
exit $failed
