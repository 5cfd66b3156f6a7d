#!/usr/bin/env bash
# Runs the self-checking examples of ember::par and box reshape (dataparallel,
# box_reshape) at 1, 2, 3 and 4 ranks, each under a timeout (a hang is a
# failure). Each example exits 1 with a message when its result is wrong.
# Exits non-zero if any run failed and names the failing runs.
#
#   bash tests/run_examples_dataparallel.sh [build-dir]      (default: build)
set -u
build="${1:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# name and small-size arguments
runs=("dataparallel 120" "box_reshape")
failed=()
for run in "${runs[@]}"; do
  set -- $run
  name="$1"
  shift
  exe="$build/examples/$name"
  if [[ ! -x "$exe" ]]; then
    echo "run_examples_dataparallel: $exe not found (build it first)"
    failed+=("$name (missing binary)")
    continue
  fi
  for p in 1 2 3 4; do
    out=$(timeout -k 10 120 mpirun -n "$p" --oversubscribe "$exe" "$@" 2>&1)
    rc=$?
    if [[ $rc -eq 0 ]]; then
      echo "$name np=$p ok"
    else
      why="exit code $rc"
      [[ $rc -eq 124 || $rc -eq 137 ]] && why="timed out after 120 s (hang?)"
      echo "$name np=$p FAILED ($why)"
      echo "$out" | tail -n 30 | sed 's/^/    /'
      failed+=("$name at $p ranks: $why")
    fi
  done
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run_examples_dataparallel: ${#failed[@]} failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "run_examples_dataparallel: all ok"
