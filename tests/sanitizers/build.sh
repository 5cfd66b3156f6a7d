#!/usr/bin/env bash
# Builds the AddressSanitizer + UndefinedBehaviorSanitizer variant of the
# distributed test binaries (tests/meson.build's distributed_tests) into
# [builddir] (default build-asan). Only those 12 binaries and what they link
# (libember, catch_main) are built; examples, bench and fault_program are not.
#   bash tests/sanitizers/build.sh [builddir]
# Then, from the repository root, run each binary with the variables of
# tests/sanitizers/options.env in the environment:
#   mpirun -n P --oversubscribe build-asan/tests/test_x
#
# Choices (measured on 2 cores, see the numbers at the end of this comment):
#  - -O1 (optimization=1): ASan's own docs recommend it; -O0 makes the
#    expression-template tests several times slower to run, -O2/-O3 take longer
#    to compile and inline away frames from the reports.
#  - -g1 (line tables, no variable info) instead of -g: enough for symbolized
#    stack traces, and much less to compile, link and load than -g.
#  - -fno-omit-frame-pointer: reliable stack traces from ASan's fast unwinder.
#  - -fno-sanitize-recover=all: undefined behaviour aborts the rank (so mpirun
#    and the runner see a failure) instead of printing a line and going on.
#  - b_ndebug=false: ember's assert()s are checked too.
#  - b_lundef=false: the sanitizer runtimes resolve some symbols at load time.
set -euo pipefail
cd "$(dirname "$0")/../.."
builddir="${1:-build-asan}"
jobs="${EMBER_SANITIZE_JOBS:-2}"

flags="-g1 -fno-omit-frame-pointer -fno-sanitize-recover=all"
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" \
    --buildtype=plain -Doptimization=1 -Ddebug=false -Db_ndebug=false \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dcpp_args="$flags" -Dcpp_link_args="-fno-sanitize-recover=all"
fi

tests=$(sed -n "s/^distributed_tests = \[\(.*\)\]/\1/p" tests/meson.build | sed "s/[',]/ /g")
[ -n "$tests" ] || { echo "build.sh: no distributed_tests list in tests/meson.build" >&2; exit 1; }
targets=()
for t in $tests; do targets+=("tests/$t"); done
ninja -C "$builddir" -j "$jobs" "${targets[@]}"
