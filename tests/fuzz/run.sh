#!/usr/bin/env bash
# Fuzzes ember's .npy header parser and CSV reader for a bounded time (CI:
# ~40 s in all), then the planner (tests/fuzz/fuzz_planner.cpp: random valid IR ->
# plan invariants, invalid layouts -> ember::error) for min(seconds, 15) s, plus
# ~25 s to compile its sources on 2 cores. Builds tests/fuzz/fuzz_io.cpp + runtime/npy_format.cpp (pure
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

# ---- planner target: seeds are fixed pseudo-random byte strings (any bytes decode
# to a valid graph; the first byte picks valid IR or, when it is 7 mod 8, an
# invalid layout) ----
mkdir -p "$work/planner_corpus"
for i in $(seq 0 23); do
  : > "$work/planner_corpus/seed$i"
  x=$(( i * 2654435761 % 4294967296 + 1 ))
  for j in $(seq 0 95); do
    x=$(( (x * 1103515245 + 12345) % 2147483648 ))
    printf "\\$(printf '%03o' $(( (x >> 16) % 256 )))" >> "$work/planner_corpus/seed$i"
  done
done
# Builds $work/fuzz_planner: the planner and layout/exchange code with $1 (the
# sanitizers), the runtime code it links against but never runs (MPI, ScaLAPACK)
# plainly, in parallel; links with $2 and any extra sources ($3: a replay main).
build_planner() {
  local cflags=$1 lflags=$2 extra=${3:-} pids=() o objs=() f
  local cxx; cxx=$(command -v "$CXX" || command -v g++)
  local mpi; mpi=$(pkg-config --cflags ompi-cxx 2>/dev/null || true)
  mkdir -p "$work/pobj"
  : > "$work/planner.log"
  for f in tests/fuzz/fuzz_planner.cpp planner/plan.cpp planner/traffic.cpp runtime/layout.cpp runtime/exchange.cpp \
           runtime/matmul.cpp $extra; do
    o="$work/pobj/$(basename "$f" .cpp).o"; objs+=("$o")
    # shellcheck disable=SC2086
    "$cxx" "${flags[@]}" $mpi $cflags -fno-sanitize-recover=all -c "$f" -o "$o" >>"$work/planner.log" 2>&1 & pids+=($!)
  done
  for f in runtime/communicator.cpp runtime/memory.cpp runtime/scalapack.cpp runtime/lapack.cpp; do
    o="$work/pobj/$(basename "$f" .cpp).o"; objs+=("$o")
    # shellcheck disable=SC2086
    "$cxx" -std=c++20 -O0 -I. $mpi -c "$f" -o "$o" >>"$work/planner.log" 2>&1 & pids+=($!)
  done
  local ok=0
  for f in "${pids[@]}"; do wait "$f" || ok=1; done
  [[ $ok -eq 0 ]] || return 1
  # shellcheck disable=SC2086
  "$cxx" $lflags "${objs[@]}" -o "$work/fuzz_planner" \
      $(pkg-config --libs ompi-cxx scalapack-openmpi openblas 2>/dev/null) >>"$work/planner.log" 2>&1
}
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
  echo "fuzz: no findings (parsers)"
  build_planner "-fsanitize=fuzzer-no-link,address,undefined" "-fsanitize=fuzzer,address,undefined" ||
    { echo "fuzz: the planner target failed to build:"; tail -n 30 "$work/planner.log"; exit 1; }
  psecs=$(( secs < 15 ? secs : 15 ))
  echo "fuzz: planner target built; ${psecs} s"
  rc=0
  "$work/fuzz_planner" -max_total_time="$psecs" -timeout=10 -rss_limit_mb=2048 -max_len=1024 \
      -artifact_prefix="$art/" -print_final_stats=1 "$work/planner_corpus" >"$work/planner.run.log" 2>&1 || rc=$?
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/planner.run.log" | sed "s/^/fuzz planner: /" || true
  if [[ $rc -ne 0 ]]; then
    echo "fuzz: FINDING in the planner run (exit $rc; inputs kept in $art):"
    grep -E "fuzz_planner:|ERROR|SUMMARY|Test unit written" "$work/planner.run.log" | head -20
    tail -n 30 "$work/planner.run.log"
    exit 1
  fi
  echo "fuzz: no findings (planner)"
else
  echo "fuzz: libFuzzer is NOT available ($CXX -fsanitize=fuzzer failed; Debian: clang-14 libclang-rt-14-dev);"
  echo "fuzz: replaying the seed corpus through a plain driver instead (this is not fuzzing)"
  [[ -s "$work/build.log" ]] && head -5 "$work/build.log" | sed 's/^/    /'
  cxx=$(command -v "$CXX" || command -v g++)
  san=(-fsanitize=address,undefined)
  "$cxx" "${flags[@]}" "${san[@]}" "${srcs[@]}" tests/fuzz/replay_main.cpp -o "$work/replay" 2>/dev/null ||
    { san=(); "$cxx" "${flags[@]}" "${srcs[@]}" tests/fuzz/replay_main.cpp -o "$work/replay"; }
  "$work/replay" "$corpus"
  if build_planner "${san[*]:-}" "${san[*]:-}" tests/fuzz/replay_main.cpp; then
    "$work/fuzz_planner" "$work/planner_corpus"
  else
    echo "fuzz: the planner replay driver failed to build:"; tail -n 30 "$work/planner.log"; exit 1
  fi
fi
