#!/usr/bin/env bash
# Builds the AddressSanitizer + UndefinedBehaviorSanitizer variant of the
# distributed test binaries (the distributed_tests list in tests/meson.build
# less its unsanitized_tests, and test_adversarial)
# into [builddir] (default build-asan). Only those binaries and what they link
# (libember, catch_main) are built: no examples, bench or fault_program.
#   bash tests/sanitizers/build.sh [builddir]
# Then, from the repository root, run each binary with the variables of
# tests/sanitizers/options.env in the environment:
#   mpirun -n P --oversubscribe build-asan/tests/test_x
#
# Choices:
#  - clang++ (clang++-14 on Debian 12) when it is installed, else the default
#    C++ compiler (EMBER_SANITIZE_CXX overrides; a build directory keeps the
#    compiler it was set up with): clang compiles the instrumented -O0 tests in
#    about 70% of GCC's time (all 23 binaries and libember: ~17 vs ~25
#    CPU-minutes, 8.5 vs 12.4 min on 2 cores) even without GCC's precompiled
#    header, and the release build is GCC's, so CI compiles and tests ember
#    with both compilers.
#  - -O0 (EMBER_SANITIZE_OPT overrides): GCC spends most of an instrumented
#    build optimizing the instrumentation, so -O0 compiles in a third of the
#    time of -O1 (all 12 binaries: ~12 vs ~33 CPU-minutes, 7 min on 2 cores;
#    tests/test_expr.cpp alone 340 s vs 640 s), while all 12 binaries still run
#    in about 75 s at 1 and 3 ranks together.
#    -O0 also keeps every memory access for ASan to check; the one UBSan check
#    that needs optimization (object-size) is ASan's job anyway.
#  - -g1 (line tables, no variable info): enough for file:line in the reports,
#    and much less to compile, link and load than -g.
#  - -fno-sanitize-recover=all: undefined behaviour ends the rank (so mpirun and
#    the runner see a failure) instead of printing a line and going on.
#  - -D_GLIBCXX_SANITIZE_VECTOR: std::vector tells ASan its capacity, so reading
#    past size() but within capacity() is a container-overflow error too.
#  - -DEMBER_TEST_TREES=3: test_expr's random trees are compile-time types, each
#    ~15 s to compile here; the release build runs all 24, this one 3 of them
#    (the sanitizer build was 12.5 of the CI run's 40 minutes at 6).
#  - b_ndebug=false: assert()s are checked.
#  - b_lundef=false: the shared library leaves the sanitizer runtimes' symbols to
#    the executable (needed with clang, harmless with GCC).
#  - cuda=disabled when that option exists: the sanitizers are for the CPU code.
#  - test_optimization=build: the tests at -O0 like the rest (a release build
#    compiles them at -O0 too, but with the precompiled header of pch/tests).
# The options are applied on every run (meson configure), so a reconfiguration
# triggered by a changed meson.build cannot silently drop them.
set -euo pipefail
cd "$(dirname "$0")/../.."
builddir="${1:-build-asan}"
jobs="${EMBER_SANITIZE_JOBS:-2}"
opt="${EMBER_SANITIZE_OPT:-0}"

opts=("-Doptimization=$opt" -Ddebug=false -Db_ndebug=false
      -Db_sanitize=address,undefined -Db_lundef=false
      "-Dcpp_args=-g1 -fno-omit-frame-pointer -fno-sanitize-recover=all -D_GLIBCXX_SANITIZE_VECTOR=1 -DEMBER_TEST_TREES=3"
      "-Dcpp_link_args=-fno-sanitize-recover=all")
if grep -q "option('cuda'" meson_options.txt 2>/dev/null; then opts+=(-Dcuda=disabled); fi
# the tests at the build's -O0 too (meson_options.txt: test_optimization)
if grep -q "option('test_optimization'" meson_options.txt 2>/dev/null; then opts+=(-Dtest_optimization=build); fi
if [ -f "$builddir/build.ninja" ]; then
  meson configure "$builddir" "${opts[@]}"
else
  cxx="${EMBER_SANITIZE_CXX:-}"
  if [ -z "$cxx" ]; then
    for c in clang++ clang++-14; do command -v "$c" >/dev/null && { cxx="$c"; break; }; done
  fi
  if [[ "$cxx" == *clang++* ]] && command -v "${cxx/clang++/clang}" >/dev/null; then
    CXX="$cxx" CC="${cxx/clang++/clang}" meson setup "$builddir" "${opts[@]}"
  elif [ -n "$cxx" ]; then
    CXX="$cxx" meson setup "$builddir" "${opts[@]}"
  else
    meson setup "$builddir" "${opts[@]}"
  fi
fi

tests=$(sed -n "s/^distributed_tests = \[\(.*\)\]/\1/p" tests/meson.build | sed "s/[',]/ /g")
[ -n "$tests" ] || { echo "build.sh: no distributed_tests list in tests/meson.build" >&2; exit 1; }
skip=" $(sed -n "s/^unsanitized_tests = \[\(.*\)\]/\1/p" tests/meson.build | sed "s/[',]/ /g") "
targets=()
for t in $tests; do [[ "$skip" == *" $t "* ]] || targets+=("tests/$t"); done
# issue 22's adversarial cases run in every variant too (run_tests.py)
grep -q "executable('test_adversarial'" tests/meson.build && targets+=("tests/test_adversarial")
ninja -C "$builddir" -j "$jobs" "${targets[@]}"
