#!/usr/bin/env bash
# The views_numpy example at 1-4 ranks: NumPy writes a random field, ember slices,
# computes a stencil, assigns through views and reshapes, pads, joins, tiles, NumPy runs the same program and
# compares every result bit for bit.
#   bash tests/run_examples_views.sh [build-dir]
set -u
build="${1:-build}"
exe="$build/examples/views_numpy"
[[ -x "$exe" ]] || { echo "run_examples_views: $exe not found (build it first)"; exit 1; }
. "$(dirname "$0")/numpy_python.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
for shape in "23 9" "5 6" "40 17"; do
  $py - "$dir/in.npy" $shape <<'PY' || exit 1
import numpy as np, sys
rng = np.random.default_rng(int(sys.argv[2]) * 100 + int(sys.argv[3]))
np.save(sys.argv[1], rng.standard_normal((int(sys.argv[2]), int(sys.argv[3]))))
PY
  for p in 1 2 3 4; do
    rm -f "$dir"/[a-z].npy
    out=$(timeout -k 10 120 mpirun -n "$p" --oversubscribe "$exe" "$dir/in.npy" "$dir" 2>&1)
    rc=$?
    if [[ $rc -eq 0 ]]; then
      out+=$'\n'$($py - "$dir" <<'PY' 2>&1
import numpy as np, sys
d = sys.argv[1]
x = np.load(f"{d}/in.npy")
def same(name, want):
    got = np.load(f"{d}/{name}.npy")
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    assert got.tobytes() == np.ascontiguousarray(want).tobytes(), f"{name} differs"
same("a", x[2:-1:3, ::-2])
same("s", x[1:-1, 1:-1] + 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]))
same("c", x[::2, 1] + 1)
y = x.copy(); y[0, :] = 0; y[1:-1, 3] = x[1:-1, 2] * 2; y[-1] = x[0]
same("y", y)
same("r", x[::-2, 1:4] * 2)
same("m", x.reshape(x.shape[1], -1))
same("v", np.ravel(x.T))
same("j", np.concatenate([x, x[::-1]], axis=1))
same("k", np.stack([x, 2 * x], axis=2))
same("p", np.pad(x, ((1, 2), (0, 3)), mode="reflect"))
same("l", np.tril(x, -1))
same("d", np.diagonal(x, 1))
same("e", np.repeat(x, 2, axis=0))
same("t", np.tile(x, (2, 1)))
print("numpy check ok")
PY
)
      rc=$?
    fi
    if [[ $rc -eq 0 ]]; then
      echo "views_numpy $shape np=$p ok"
    else
      echo "views_numpy $shape np=$p FAILED (exit $rc)"
      echo "$out" | tail -n 20 | sed 's/^/    /'
      failed=1
    fi
  done
done
exit $failed
