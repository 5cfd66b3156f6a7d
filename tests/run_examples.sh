#!/usr/bin/env bash
# Runs self-checking examples at 1, 2, 3 and 4 ranks, at small sizes, each under
# a timeout (a hang is a failure). Each example exits 1 with a message when its
# result is wrong. Exits non-zero if any run failed and names the failing runs.
#
#   bash tests/run_examples.sh [build-dir] ["name args" ...]
#   (default: build; pca, dmd, kmeans at small sizes)
set -u
# The whole-program check: every evaluation of every example measures each
# step's bytes and messages and ends the run with ember::error on every rank if
# they differ from what its plan (EXPLAIN) predicted for that rank.
export EMBER_CHECK_TRAFFIC=1
build="${1:-build}"
shift $(( $# > 0 ? 1 : 0 ))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# name and small-size arguments
if [[ $# -gt 0 ]]; then runs=("$@"); else runs=("pca 4000 16" "dmd 600 30" "kmeans 6000 4 4"); fi
failed=()
for run in "${runs[@]}"; do
  set -- $run
  name="$1"
  shift
  exe="$build/examples/$name"
  if [[ ! -x "$exe" ]]; then
    echo "run_examples: $exe not found (build it first)"
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
  echo "run_examples: ${#failed[@]} failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "run_examples: all ok"
