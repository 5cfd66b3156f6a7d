#!/usr/bin/env bash
# ember's result dtypes (tests/promotion_table) against NumPy's, pair by pair:
# np.result_type for array operands, NEP 50's weak Python scalars (NumPy 2's
# rule; Debian's NumPy 1.24 is switched to it with _set_promotion_state), and
# the ufuncs' own rules (true_divide, sqrt, floor, sum). The differences ember
# documents (README, "NumPy differences") are listed here and checked too, so
# a change on either side shows up.
#   bash tests/promotion_numpy.sh [build-dir]
set -u
build="${1:-build}"
. "$(dirname "$0")/numpy_python.sh"
exe="$build/tests/promotion_table"
[[ -x "$exe" ]] || { echo "promotion_numpy: $exe not found (build it first)"; exit 1; }
"$exe" | $py -c '
import sys, numpy as np
if hasattr(np, "_set_promotion_state"): np._set_promotion_state("weak")
np.seterr(all="ignore")
# NumPy < 2.1 returns floats from floor of integers (NumPy >= 2.1: the integer type)
documented = {("floor", "bool"): "float16" if np.__version__ < "2.1" else "bool"}
scalars = {"pybool": True, "pyint": 1, "pyfloat": 1.0, "pycomplex": 1j}
bad = n = n16 = 0
for line in sys.stdin:
    op, a, b, got = line.split()
    x = np.ones(3, dtype=a)
    if b == "-":
        want = {"sqrt": lambda: np.sqrt(x), "floor": lambda: np.floor(x), "absolute": lambda: np.absolute(x),
                "sum": lambda: np.sum(x, keepdims=True), "mean": lambda: np.mean(x, keepdims=True),
                "square": lambda: np.square(x)}[op]().dtype.name
        key = (op, a)
        if op == "floor" and a != "bool" and np.__version__ < "2.1": want = a  # NumPy >= 2.1
    else:
        y = scalars[b] if b in scalars else np.ones(3, dtype=b)
        want = getattr(np, op)(x, y).dtype.name
        key = (op, a, b)
    if key in documented:
        if documented[key] != want: print(f"{line.strip()}: the documented difference changed, NumPy gives {want}"); bad += 1
        continue
    # NumPy float16 results (math functions of bool, int8 and uint8): ember has no
    # float16 and computes in float32 (float64 for bool operands only)
    if want == "float16":
        allbool = all(t == "bool" for t in key[1:])
        if got != ("float64" if allbool else "float32"): print(f"{line.strip()}: NumPy float16, ember {got}"); bad += 1
        n16 += 1
        continue
    n += 1
    if got != want: print(f"{op}({a}, {b}): ember {got}, NumPy {want}"); bad += 1
print(f"promotion: {n} pairs compared with NumPy {np.__version__}, {n16} float16 results as float32/64, {bad} differ")
sys.exit(1 if bad else 0)
'
