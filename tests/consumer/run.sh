#!/usr/bin/env bash
# Proves that a user's own meson project can consume ember two ways:
#   installed:  configure + install ember into a temporary prefix, then build the
#               consumer with dependency('ember') found through pkg-config;
#   subproject: the consumer has subprojects/ember (a symlink to the ember tree)
#               and dependency('ember') resolves to the subproject's
#               meson.override_dependency('ember', ember_dep).
# Each consumer build then runs under `mpirun -n 2`.
#
#   tests/consumer/run.sh [EMBER_ROOT [BUILD_DIR]]    (default: two directories up from here)
#   BUILD_DIR: an ember build directory already built (CI's release build): the
#   installed mode installs it (meson install --destdir into the temporary
#   directory, ember.pc's prefix moved with it) instead of configuring and
#   compiling ember once more.
#   EMBER_CONSUMER_KEEP=1 tests/consumer/run.sh    keeps the temporary directory
#
# Everything happens in a fresh temporary directory (removed on exit); build
# directories are outside every source tree and ember's own tree is only read.
# Prints one line per mode and exits 0 only if both modes built and ran.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root_arg="${1:-$here/../..}"
if [[ ! -d "$root_arg" ]]; then
  echo "run.sh: $root_arg is not a directory (expected the ember repository root)" >&2
  exit 2
fi
ember_root="$(cd "$root_arg" && pwd)"
built=""
if [[ -n "${2:-}" ]]; then
  [[ -f "$2/build.ninja" ]] || { echo "run.sh: $2 is not an ember build directory" >&2; exit 2; }
  built="$(cd "$2" && pwd)"
fi
consumer_src="$here"

if [[ ! -f "$ember_root/meson.build" || ! -f "$ember_root/ember.hpp" ]]; then
  echo "run.sh: $ember_root does not look like the ember repository root" >&2
  exit 2
fi
for tool in meson ninja pkg-config mpirun timeout; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/ember-consumer.XXXXXX")"
# EMBER_CONSUMER_KEEP=1 keeps the directory (logs, prefix, builds) for debugging.
cleanup() {
  if [[ "${EMBER_CONSUMER_KEEP:-0}" == 1 ]]; then
    echo "run.sh: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# mpirun refuses to run as root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Keep the host's pkg-config search path from leaking an unrelated ember.pc.
unset PKG_CONFIG_PATH

log() { echo "    $*" >&2; }

# Runs "$@" with its output in $work/<name>.log; on failure shows the tail.
step() {
  local name="$1"; shift
  local rc=0
  "$@" >"$work/$name.log" 2>&1 || rc=$?
  [[ $rc -eq 0 ]] && return 0
  log "step '$name' failed (exit $rc): $*"
  tail -n 40 "$work/$name.log" | sed 's/^/    | /' >&2
  return 1
}

# Copies the consumer project (meson.build + main.cpp only) to $1.
copy_consumer() {
  mkdir -p "$1" && cp "$consumer_src/meson.build" "$consumer_src/main.cpp" "$1/"
}

# $1 mode name, $2 build dir, $3 expected `type_name()` of the ember dependency;
# the remaining args are extra environment for the run (VAR=value ...).
run_consumer() {
  local mode="$1" bdir="$2" want_type="$3"; shift 3
  if ! grep -q "ember dependency type: $want_type" "$work/$mode-setup.log"; then
    log "$mode: ember was not resolved as a '$want_type' dependency:"
    grep -i 'ember' "$work/$mode-setup.log" | sed 's/^/    | /' >&2 || true
    return 1
  fi
  local envargs=() xargs=()
  local kv
  for kv in "$@"; do
    envargs+=("$kv")
    xargs+=(-x "${kv%%=*}")
  done
  if ! env "${envargs[@]}" timeout 120 mpirun -n 2 --oversubscribe "${xargs[@]}" \
      "$bdir/consumer" >"$work/$mode-run.log" 2>&1; then
    log "$mode: mpirun failed"
    tail -n 40 "$work/$mode-run.log" | sed 's/^/    | /' >&2
    return 1
  fi
  if ! grep -q '^consumer ok' "$work/$mode-run.log"; then
    log "$mode: the program did not print 'consumer ok'"
    sed 's/^/    | /' "$work/$mode-run.log" >&2
    return 1
  fi
}

# ---- (a) installed: meson install into a temporary prefix, found through pkg-config
mode_installed() {
  local prefix="$work/prefix" ebuild="$work/ember-build" sysroot=""
  if [[ -n "$built" ]]; then
    # the build CI made: its install tree under a staging root, as a packager's
    step installed-ember-install timeout 600 meson install -C "$built" --no-rebuild --destdir "$prefix" || return 1
    sysroot="$prefix"
  else
    # -O0: this checks what is installed and how a consumer finds it, not the
    # code (CI builds and tests that at -O3); it compiles libember in a third of the time
    step installed-ember-setup timeout 600 meson setup "$ebuild" "$ember_root" \
        --prefix="$prefix" -Doptimization=0 -Ddebug=false || return 1
    # the library, and the CUDA plugin when the build has one (nvcc found): the
    # install puts it next to libember.so, where libember looks for it
    local targets=(ember)
    grep -q '^build cuda/libember_cuda.so:' "$ebuild/build.ninja" && targets+=(cuda/ember_cuda)
    step installed-ember-build timeout 600 meson compile -C "$ebuild" "${targets[@]}" || return 1
    step installed-ember-install timeout 600 meson install -C "$ebuild" --no-rebuild || return 1
  fi

  local pc
  pc="$(find "$prefix" -name ember.pc -print -quit)"
  if [[ -z "$pc" ]]; then
    log "installed: no ember.pc under $prefix"
    return 1
  fi
  local pcdir libdir
  pcdir="$(dirname "$pc")"
  # a staged install moved under its root: ember.pc's prefix follows it (every
  # other path of it is relative to ${prefix}), as pkgconf's --define-prefix does
  if [[ -n "$sysroot" ]]; then
    local was
    was="$(sed -n 's/^prefix=//p' "$pc")"
    sed -i "s|^prefix=.*|prefix=$sysroot$was|" "$pc"
  fi
  libdir="$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir ember)"
  # The Cflags must point at the installed public header.
  local incdir
  incdir="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags-only-I ember | tr ' ' '\n' | sed -n 's/^-I//p' |
            while read -r d; do [[ -f "$d/ember.hpp" ]] && echo "$d"; done | head -n 1)"
  if [[ -z "$incdir" ]]; then
    log "installed: no -I directory of 'pkg-config --cflags ember' holds ember.hpp"
    return 1
  fi

  local src="$work/consumer-installed" bdir="$work/consumer-installed-build"
  copy_consumer "$src" || return 1
  # nofallback: dependency('ember') must come from pkg-config, never a subproject.
  step installed-setup env PKG_CONFIG_PATH="$pcdir" timeout 600 meson setup "$bdir" "$src" \
      --wrap-mode=nofallback || return 1
  step installed-build env PKG_CONFIG_PATH="$pcdir" timeout 600 meson compile -C "$bdir" || return 1
  run_consumer installed "$bdir" pkgconfig "LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

# ---- (b) subproject: subprojects/ember -> the ember tree, override_dependency
mode_subproject() {
  local src="$work/consumer-subproject" bdir="$work/consumer-subproject-build"
  copy_consumer "$src" || return 1
  mkdir -p "$src/subprojects" && ln -s "$ember_root" "$src/subprojects/ember" || return 1
  # force_fallback_for: use the subproject even if some ember.pc is visible.
  # No CUDA backend in this one (the installed mode builds and installs it where
  # nvcc is): its nvcc compile is most of a subproject build, and the consumer
  # makes no GPU call.
  step subproject-setup timeout 600 meson setup "$bdir" "$src" -Dforce_fallback_for=ember -Dember:cuda=disabled || return 1
  # ember's own tests (and so Catch2) must stay out of a subproject build.
  if grep -qi 'catch2' "$bdir/meson-logs/meson-log.txt"; then
    log "subproject: configuring ember as a subproject looked up Catch2"
    return 1
  fi
  step subproject-build timeout 600 meson compile -C "$bdir" || return 1
  run_consumer subproject "$bdir" internal
}

status=0
for mode in installed subproject; do
  if "mode_$mode"; then
    echo "consumer $mode: ok"
  else
    echo "consumer $mode: FAILED"
    status=1
  fi
done
exit "$status"
