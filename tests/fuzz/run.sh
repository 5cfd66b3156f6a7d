#!/usr/bin/env bash
# Fuzzes ember's .npy header parser and CSV reader for a bounded time (CI:
# ~40 s in all). Builds tests/fuzz/fuzz_io.cpp + runtime/npy_format.cpp (pure
# functions: no MPI) with clang++-14 -fsanitize=fuzzer,address,undefined, seeds a
# corpus (NumPy-written headers when python3-numpy is there, hand-made ones, CSV
# snippets) and runs libFuzzer. Without libFuzzer it says so, builds a plain
# replay driver with the sanitizers it has, and replays the corpus.
#   bash tests/fuzz/run.sh [seconds per run, default 30]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-30}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus="$work/corpus"
mkdir -p "$corpus"

# ---- seeds: the first byte picks the parser (even: .npy, odd: CSV) ----
py=python3
$py -c 'import numpy' 2>/dev/null || py=/usr/bin/python3
if $py -c 'import numpy' 2>/dev/null; then
  $py - "$corpus" <<'PY'
import io, numpy as np, sys
d = sys.argv[1]
arrs = [np.zeros((3, 4)), np.ones(5, dtype='>i4'), np.zeros((2, 0, 3), dtype=bool),
        np.asfortranarray(np.ones((2, 3), dtype=np.float32)), np.arange(7, dtype=np.int64)]
k = 0
for a in arrs:
    for v in [(1, 0), (2, 0), (3, 0)]:
        b = io.BytesIO()
        np.lib.format.write_array(b, a, version=v)
        open(f"{d}/npy{k}", "wb").write(b"\x00" + b.getvalue()[:200])
        k += 1
PY
fi
printf '\x00\x93NUMPY\x01\x00\x76\x00{"descr": "<f8", "fortran_order": False, "shape": (3L, 4,)}                                            \n' > "$corpus/hand0"
printf '\x00\x93NUMPY\x02\x00\x3a\x00\x00\x00{'"'"'descr'"'"': '"'"'|b1'"'"', '"'"'fortran_order'"'"': True, '"'"'shape'"'"': ()}   \n' > "$corpus/hand1"
printf '\x01' > "$corpus/csv0"; printf '1,2,3\n4,5,6\n' >> "$corpus/csv0"
printf '\x21' > "$corpus/csv1"; printf '# c\n1.5;-2e3;+inf\r\n\n7;nan;0x1\n' >> "$corpus/csv1"
printf '\x05' > "$corpus/csv2"; printf '  1   2\t3\n4 5 6' >> "$corpus/csv2"
printf '\x09' > "$corpus/csv3"; printf 'True,False,1,0\ntrue,false,2,x\n' >> "$corpus/csv3"
printf '\x11' > "$corpus/csv4"; printf '2147483647,-2147483648\n2147483648,1\n' >> "$corpus/csv4"

CXX=${FUZZ_CXX:-clang++-14}
srcs=(tests/fuzz/fuzz_io.cpp runtime/npy_format.cpp)
flags=(-std=c++20 -O1 -g -I. -fno-omit-frame-pointer)
if command -v "$CXX" >/dev/null && "$CXX" "${flags[@]}" -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=undefined "${srcs[@]}" -o "$work/fuzz_io" 2>"$work/build.log"; then
  echo "fuzz: libFuzzer target built with $CXX (address, undefined); ${secs} s per mode"
  # Two runs so both parsers get time: the .npy corpus and the CSV corpus.
  mkdir -p "$work/npy" "$work/csv"
  for f in "$corpus"/*; do
    case "$(basename "$f")" in npy*|hand*) cp "$f" "$work/npy/" ;; *) cp "$f" "$work/csv/" ;; esac
  done
  art="${FUZZ_ARTIFACTS:-/tmp/ember-fuzz-findings}"
  mkdir -p "$art"
  for m in npy csv; do
    rc=0
    "$work/fuzz_io" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -artifact_prefix="$art/" -print_final_stats=1 "$work/$m" >"$work/$m.log" 2>&1 || rc=$?
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/$m.log" | sed "s/^/fuzz $m: /" || true
    # libFuzzer exits non-zero and writes crash-*/timeout-*/oom-* on a finding.
    if [[ $rc -ne 0 ]]; then
      echo "fuzz: FINDING in the $m run (exit $rc; inputs kept in $art):"
      grep -E "ERROR|SUMMARY|Test unit written" "$work/$m.log" | head -20
      tail -n 30 "$work/$m.log"
      exit 1
    fi
  done
  echo "fuzz: no findings"
else
  echo "fuzz: libFuzzer is NOT available ($CXX -fsanitize=fuzzer failed; Debian: clang-14 libclang-rt-14-dev);"
  echo "fuzz: replaying the seed corpus through a plain driver instead (this is not fuzzing)"
  [[ -s "$work/build.log" ]] && head -5 "$work/build.log" | sed 's/^/    /'
  cxx=$(command -v "$CXX" || command -v g++)
  san=(-fsanitize=address,undefined)
  "$cxx" "${flags[@]}" "${san[@]}" "${srcs[@]}" tests/fuzz/replay_main.cpp -o "$work/replay" 2>/dev/null ||
    { san=(); "$cxx" "${flags[@]}" "${srcs[@]}" tests/fuzz/replay_main.cpp -o "$work/replay"; }
  "$work/replay" "$corpus"
fi
