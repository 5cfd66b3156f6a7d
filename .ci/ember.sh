#!/usr/bin/env bash
# One entry point for humans and CI:
#   .ci/ember.sh demo    install what is missing, build, run the quickstart on 4 ranks
#   .ci/ember.sh test    install what is missing, build (release, and the ASan+UBSan
#                        build in build-asan), run every CI variant (tests/run_tests.py:
#                        release at 1-4 ranks, sanitizers at 1 and 3, TCP at 2 and 3,
#                        fault injection); extra arguments go to run_tests.py, e.g.
#                        `.ci/ember.sh test --variants release`
#   .ci/ember.sh bench   install what is missing, build, run the benchmarks (2 ranks)
set -euo pipefail
cd "$(dirname "$0")/.."

install_deps() {
  local missing=()
  while read -r p; do
    [[ -z "$p" || "$p" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done < .ci/debian-packages.txt
  if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
  fi
}

# Builds what the command needs: the demo only its example (a few minutes on a
# fresh machine), everything else the whole tree.
build() {
  if [[ ! -f build/build.ninja ]]; then
    meson setup build --buildtype=release
  fi
  ninja -C build "$@"
}

# mpirun as root, more ranks than cores, one BLAS thread per rank.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# No network fabric probing on a single machine.
export OMPI_MCA_btl_base_warn_component_unused=0

cmd="${1:-test}"
shift || true
install_deps
if [[ "$cmd" == demo ]]; then build examples/quickstart; else build; fi
case "$cmd" in
  demo)  exec mpirun -n 4 --oversubscribe build/examples/quickstart ;;
  test)
    # the sanitizer build only when a variant needs it
    if [[ " $* " != *" --variants "* || " $* " == *asan* ]]; then bash tests/sanitizers/build.sh build-asan; fi
    exec python3 tests/run_tests.py --build build "$@" ;;
  bench) exec bash bench/run.sh build "$@" ;;
  build) ;;
  *) echo "usage: $0 demo|test|bench|build" >&2; exit 2 ;;
esac
