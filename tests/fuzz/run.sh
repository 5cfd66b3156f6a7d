#!/usr/bin/env bash
# Fuzzes ember's .npy header parser and CSV reader for a bounded time (CI:
# ~40 s in all), then the planner (tests/fuzz/fuzz_planner.cpp: random valid IR ->
# plan invariants, invalid layouts -> ember::error) and the box intersection code
# (tests/fuzz/fuzz_boxes.cpp: random tilings -> check_box_tilings, box_distribution
# and the exchange engine's schedule and data movement against a brute-force
# reference, invalid tilings -> ember::error) for min(seconds, 15) s each; their
# sources (~65 s of CPU) compile, niced, while the parsers are fuzzed: about
# 1 min 45 s in all with 20 s on 2 otherwise idle cores. Builds tests/fuzz/fuzz_io.cpp +
# runtime/npy_format.cpp (pure functions: no MPI) with clang++-14
# -fsanitize=fuzzer,address,undefined, seeds a corpus (NumPy-written headers when
# python3-numpy is there, hand-made ones, CSV snippets) and runs libFuzzer; the
# planner and boxes targets link the runtime but never call MPI. Seeds: fixed
# pseudo-random bytes, plus tests/fuzz/boxes_seeds/. A finding prints FINDING and
# exits 1, its input kept in $FUZZ_ARTIFACTS (default /tmp/ember-fuzz-findings).
# Without libFuzzer it says so, builds plain replay drivers with the sanitizers it
# has, and replays the corpora.
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
art="${FUZZ_ARTIFACTS:-/tmp/ember-fuzz-findings}"
mkdir -p "$art"

# ---- planner and boxes targets: seeds are fixed pseudo-random byte strings (any
# bytes decode to a valid input). Planner: the first byte picks valid IR or, when
# it is 7 mod 8, an invalid layout. Boxes: the first byte (mod 8) picks valid
# tilings (0-4), mutated ones (5, 6) or extreme coordinates (7); seed i gets i.
# seeds DIR COUNT FIRST: COUNT strings of 96 bytes; FIRST=1 sets byte 0 to i mod 256.
seeds() {
  local dir=$1 n=$2 first=$3 i j x s b
  mkdir -p "$dir"
  for (( i = 0; i < n; ++i )); do
    s=""
    x=$(( i * 2654435761 % 4294967296 + 1 ))
    for (( j = 0; j < 96; ++j )); do
      x=$(( (x * 1103515245 + 12345) % 2147483648 ))
      b=$(( j == 0 && first == 1 ? i % 256 : (x >> 16) % 256 ))
      printf -v b '\\%03o' "$b"
      s+=$b
    done
    printf "$s" > "$dir/seed$i"
  done
}
seeds "$work/planner_corpus" 24 0
seeds "$work/boxes_corpus" 32 1
cp tests/fuzz/boxes_seeds/* "$work/boxes_corpus/" 2>/dev/null || true
# Builds $work/fuzz_planner and $work/fuzz_boxes: the targets and the pure code
# they test (planner, layouts, boxes, exchange engine) with $1 (the sanitizers),
# the runtime code they link against but never run (MPI, ScaLAPACK) plainly, all
# in parallel and niced (~65 s of CPU: it runs while the parser fuzzers keep their
# core); links each with $2 and any extra sources ($3: a replay main).
build_targets() {
  local cflags=$1 lflags=$2 extra=${3:-} pids=() o objs=() f t
  local cxx; cxx=$(command -v "$CXX" || command -v g++)
  local mpi; mpi=$(pkg-config --cflags ompi-cxx 2>/dev/null || true)
  local libs; libs=$(pkg-config --libs ompi-cxx scalapack-openmpi openblas 2>/dev/null || true)
  mkdir -p "$work/pobj"
  : > "$work/planner.log"
  for f in tests/fuzz/fuzz_planner.cpp tests/fuzz/fuzz_boxes.cpp planner/plan.cpp planner/traffic.cpp \
           runtime/layout.cpp runtime/exchange.cpp runtime/boxes.cpp runtime/matmul.cpp scan/scan_kernel.cpp $extra; do
    o="$work/pobj/$(basename "$f" .cpp).o"
    [[ $f == tests/fuzz/fuzz_* ]] || objs+=("$o")
    # shellcheck disable=SC2086
    nice -n 10 "$cxx" "${flags[@]}" $mpi $cflags -fno-sanitize-recover=all -c "$f" -o "$o" \
        >>"$work/planner.log" 2>&1 & pids+=($!)
  done
  for f in runtime/communicator.cpp runtime/memory.cpp runtime/scalapack.cpp runtime/lapack.cpp runtime/failure.cpp runtime/device.cpp; do
    [[ -f $f ]] || continue
    o="$work/pobj/$(basename "$f" .cpp).o"; objs+=("$o")
    # shellcheck disable=SC2086
    nice -n 10 "$cxx" -std=c++20 -O0 -I. $mpi -c "$f" -o "$o" >>"$work/planner.log" 2>&1 & pids+=($!)
  done
  local ok=0
  for f in "${pids[@]}"; do wait "$f" || ok=1; done
  [[ $ok -eq 0 ]] || return 1
  pids=()
  for t in planner boxes; do
    # shellcheck disable=SC2086
    nice -n 10 "$cxx" $lflags "$work/pobj/fuzz_$t.o" "${objs[@]}" -o "$work/fuzz_$t" $libs \
        >>"$work/planner.log" 2>&1 & pids+=($!)
  done
  for f in "${pids[@]}"; do wait "$f" || ok=1; done
  return $ok
}
# run_target BINARY CORPUS LABEL SECONDS MAX_LEN: libFuzzer; exits 1 on a finding
# (after waiting for the background build, if one is running).
run_target() {
  local bin=$1 dir=$2 t=$3 s=$4 maxlen=$5 rc=0
  "$work/$bin" -max_total_time="$s" -timeout=10 -rss_limit_mb=2048 -max_len="$maxlen" \
      -artifact_prefix="$art/" -print_final_stats=1 "$dir" >"$work/$t.run.log" 2>&1 || rc=$?
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/$t.run.log" | sed "s/^/fuzz $t: /" || true
  # libFuzzer exits non-zero and writes crash-*/timeout-*/oom-* on a finding.
  if [[ $rc -ne 0 ]]; then
    echo "fuzz: FINDING in the $t run (exit $rc; inputs kept in $art):"
    grep -E "$bin:|ERROR|SUMMARY|Test unit written" "$work/$t.run.log" | head -20
    tail -n 30 "$work/$t.run.log"
    [[ -n "${build_pid:-}" ]] && { wait "$build_pid" || true; }
    exit 1
  fi
  echo "fuzz: no findings ($t)"
}
srcs=(tests/fuzz/fuzz_io.cpp runtime/npy_format.cpp)
flags=(-std=c++20 -O1 -g -I. -fno-omit-frame-pointer)
if command -v "$CXX" >/dev/null && "$CXX" "${flags[@]}" -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=undefined "${srcs[@]}" -o "$work/fuzz_io" 2>"$work/build.log"; then
  echo "fuzz: libFuzzer target built with $CXX (address, undefined); ${secs} s per mode"
  # The planner and boxes targets compile meanwhile (the parser runs use one core).
  build_targets "-fsanitize=fuzzer-no-link,address,undefined" "-fsanitize=fuzzer,address,undefined" &
  build_pid=$!
  # Two runs so both parsers get time: the .npy corpus and the CSV corpus.
  mkdir -p "$work/npy" "$work/csv"
  for f in "$corpus"/*; do
    case "$(basename "$f")" in npy*|hand*) cp "$f" "$work/npy/" ;; *) cp "$f" "$work/csv/" ;; esac
  done
  for m in npy csv; do run_target fuzz_io "$work/$m" "$m" "$secs" 4096; done
  echo "fuzz: no findings (parsers)"
  wait "$build_pid" ||
    { echo "fuzz: the planner and boxes targets failed to build:"; tail -n 30 "$work/planner.log"; exit 1; }
  psecs=$(( secs < 15 ? secs : 15 ))
  echo "fuzz: planner and boxes targets built; ${psecs} s each"
  build_pid=
  run_target fuzz_planner "$work/planner_corpus" planner "$psecs" 1024
  run_target fuzz_boxes "$work/boxes_corpus" boxes "$psecs" 1024
else
  echo "fuzz: libFuzzer is NOT available ($CXX -fsanitize=fuzzer failed; Debian: clang-14 libclang-rt-14-dev);"
  echo "fuzz: replaying the seed corpus through a plain driver instead (this is not fuzzing)"
  [[ -s "$work/build.log" ]] && head -5 "$work/build.log" | sed 's/^/    /'
  cxx=$(command -v "$CXX" || command -v g++)
  san=(-fsanitize=address,undefined)
  "$cxx" "${flags[@]}" "${san[@]}" "${srcs[@]}" tests/fuzz/replay_main.cpp -o "$work/replay" 2>/dev/null ||
    { san=(); "$cxx" "${flags[@]}" "${srcs[@]}" tests/fuzz/replay_main.cpp -o "$work/replay"; }
  "$work/replay" "$corpus"
  if build_targets "${san[*]:-}" "${san[*]:-}" tests/fuzz/replay_main.cpp; then
    "$work/fuzz_planner" "$work/planner_corpus"
    "$work/fuzz_boxes" "$work/boxes_corpus"
  else
    echo "fuzz: the planner and boxes replay drivers failed to build:"; tail -n 30 "$work/planner.log"; exit 1
  fi
fi
