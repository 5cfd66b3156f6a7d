#!/usr/bin/env python3
"""Runs every distributed test binary under a timeout, in each CI variant.

Each rank writes its own JUnit report; a test case passes at P ranks only if it
passed on every rank and the job exited cleanly. A crash or a hang (timeout) is a
failure that names the binary and the rank count. Ends with one line:
    tests: N passed, M failed
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

DISTRIBUTED = ["test_exchange", "test_array", "test_planner", "test_expr", "test_linalg", "test_hsvd", "test_matmul", "test_par", "test_boxes", "test_io", "test_programs", "test_collective_safety", "test_views", "test_shape", "test_selection", "test_ufuncs", "test_ufunc_table", "test_linalg_lu", "test_complex", "test_complex_linalg", "test_scan", "test_sort", "test_quantiles", "test_histogram", "test_fft", "test_einsum", "test_adversarial"]


def meson_list(name):
    """A list variable of tests/meson.build (the build's own lists, not a copy)."""
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "meson.build")).read()
    m = re.search(r"^" + name + r" = \[(.*)\]", text, re.M)
    return re.findall(r"'([^']+)'", m.group(1)) if m else []


# Not built under the sanitizers (tests/meson.build says why): skipped, visibly.
UNSANITIZED = meson_list("unsanitized_tests")
# Binaries whose cases are about several ranks disagreeing: not run at 1 rank.
MIN_RANKS = {"test_adversarial": 2}
SCRIPTS = [("consumer project (installed + subproject)", ["bash", "tests/consumer/run.sh", ".", "build"]),
           ("examples pca, dmd, kmeans at 1-4 ranks (self-checking)", ["bash", "tests/run_examples.sh"]),
           ("examples dataparallel, box_reshape, embed, heat2d, life, spectral_poisson at 1-4 ranks",
            ["bash", "tests/run_examples.sh", "build", "dataparallel 120", "box_reshape", "embed", "heat2d 64 10", "life 24 30",
             "spectral_poisson 64"]),
           ("example io_roundtrip with numpy at 1-4 ranks", ["bash", "tests/run_examples_io.sh"]),
           ("examples views_numpy, select_numpy, ufuncs_numpy, linalg_numpy, complex_numpy, order_numpy, fft_numpy with numpy at 1-4 ranks", ["bash", "tests/run_examples_numpy.sh"]),
           ("result dtypes of every dtype pair against NumPy's", ["bash", "tests/promotion_numpy.sh"]),
           ("fuzz .npy header + CSV parsers (libFuzzer, 2x12 s), the planner and the box tilings (12 s each)", ["bash", "tests/fuzz/run.sh", "12"])]


def parse_reports(prefix, nranks):
    """{case name: failure text or None} merged over ranks, and missing ranks."""
    cases, missing = {}, []
    for r in range(nranks):
        path = f"{prefix}.rank{r}.xml"
        if not os.path.exists(path):
            missing.append(r)
            continue
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            missing.append(r)
            continue
        for tc in root.iter("testcase"):
            name = tc.get("name")
            # Catch2 reports sections as "case/section"; count the test case once.
            name = name.split("/")[0]
            bad = [c for c in tc if c.tag in ("failure", "error")]
            text = None
            if bad:
                text = f"rank {r}: " + (bad[0].get("message") or "") + "\n" + (bad[0].text or "").strip()
            if name not in cases or cases[name] is None:
                cases[name] = text if text else cases.get(name)
    return cases, missing


# The CI variants (.ci/ember.sh test runs all four; README: how to run each).
#   release  the release build, every binary at 1-4 ranks, then the scripts
#   asan     the AddressSanitizer + UndefinedBehaviorSanitizer build
#            (tests/sanitizers/build.sh), every binary at 1 and 3 ranks, with
#            tests/sanitizers/options.env in the environment
#   tcp      the release build at 2 and 3 ranks over TCP only (no shared-memory
#            transport, one-sided or collective component), so nothing silently
#            depends on shared memory
#   faults   tests/faults/run.py: injected faults and a SIGKILLed rank end the job
VARIANTS = {"release": "1,2,3,4", "asan": "1,3", "tcp": "2,3"}
TCP_MCA = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca", "osc", "^sm", "--mca", "coll", "^sm"]


def read_env_file(path):
    env = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            k, v = line.split("=", 1)
            env[k.strip()] = v.strip()
    return env


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []
        self.skip_reasons = []

    def add(self, ok, failure=None):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(failure)


def run_binary(tally, tmp, label, exe, b, p, timeout, extra_env=None, mpirun_args=(), args=()):
    prefix = os.path.join(tmp, f"{label}.{b}.np{p}")
    env = dict(os.environ, EMBER_TEST_REPORT=prefix, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               EMBER_CHECK_PLANS="1")  # every evaluation checks that all ranks planned alike
    env.update(extra_env or {})
    cmd = ["timeout", "-k", "10", str(timeout), "mpirun", "-n", str(p), "--oversubscribe", *mpirun_args, exe, *args]
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.time() - t0
    cases, missing = parse_reports(prefix, p)
    np_pass = sum(1 for v in cases.values() if v is None)
    np_fail = len(cases) - np_pass
    where = f"[{label}] {b} @ {p} ranks"
    # A job that ended abnormally: its output (a sanitizer report or an abort on
    # another rank) goes with the failing cases, so a rare failure can be read.
    tail = ("\n    job output (exit code %d):\n" % proc.returncode + proc.stdout[-3000:]) if proc.returncode != 0 else ""
    for name, text in cases.items():
        tally.add(text is None, f"{where}: {name}\n    {(text or '')[:2000]}{tail if text is not None else ''}")
    if proc.returncode != 0 and np_fail == 0:
        why = "timed out (hang?)" if proc.returncode in (124, 137) else f"exit code {proc.returncode}"
        tally.add(False, f"{where}: job {why}; missing reports from ranks {missing}\n" + proc.stdout[-3000:])
        np_fail += 1
    elif missing:
        tally.add(False, f"{where}: no report from ranks {missing}\n" + proc.stdout[-3000:])
        np_fail += 1
    status = "ok" if np_fail == 0 else "FAILED"
    print(f"{label:<8} {b:<24} np={p}  {np_pass:3d} passed {np_fail:3d} failed  {dt:6.1f}s  {status}", flush=True)


def run_gpu_array_tests(tally, tmp, build, have_gpu):
    """GPU arrays against host arrays (hidden [.gpu] cases of test_device and of
    its nvcc twin test_device_cuda): at 1 and 2 ranks with a GPU; without one
    their cases count as skipped, never as passed."""
    for exe, b in [(os.path.join(build, "tests", "test_device"), "test_device"),
                   (os.path.join(build, "tests", "gpu", "test_device_cuda"), "test_device_cuda")]:
        if not os.path.exists(exe) and have_gpu and b == "test_device_cuda":
            # not built by default (4 minutes of nvcc); on a GPU machine it runs
            subprocess.run(["ninja", "-C", build, "tests/gpu/test_device_cuda"])
        if not os.path.exists(exe):
            continue
        if have_gpu:
            for p in (1, 2):
                run_binary(tally, tmp, "gpu", exe, b, p, 600, args=["[.gpu]"])
            continue
        names = subprocess.run([exe, "--list-test-names-only", "[.gpu]"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
        n = sum(1 for line in names.stdout.splitlines() if line.startswith("GPU:"))
        if n:
            tally.skipped += n
            tally.skip_reasons.append(f"{b} [.gpu] cases: no GPU")
        print(f"gpu      {b:<24} {n:3d} skipped (no GPU)", flush=True)


def run_hostsim(tally, tmp, build):
    """ember's GPU plumbing without a GPU: test_device's [.gpu] cases (the g++
    build: kernels on host copies) and the [device] collective-safety cases, with
    tests/hostsim's host-memory backend in place of the CUDA plugin. Device memory
    is inaccessible to the host there outside the backend's calls, so a host
    access to it fails the test. Counted as passed: they run, and check values."""
    plugin = os.path.join(build, "tests", "libember_hostsim.so")
    if not os.path.exists(plugin):
        tally.add(False, f"hostsim: {plugin} is not built")
        return
    env = {"EMBER_CUDA_BACKEND": os.path.abspath(plugin)}
    for b, args, ranks in [("test_device", ["[.gpu]"], (1, 2, 3)), ("test_collective_safety", ["[device]"], (2,))]:
        for p in ranks:
            run_binary(tally, tmp, "hostsim", os.path.join(build, "tests", b), b, p, 600, env, args=args)


def run_gpu_tests(tally, build):
    """The CUDA backend's unit tests (built when meson found nvcc): the [nodevice]
    cases count as passed; without a GPU the binary exits 77 and reports how many
    [gpu] cases it did not run, which count as skipped, never as passed. Returns
    whether a GPU ran them."""
    exe = os.path.join(build, "tests", "gpu", "test_gpu")
    if not os.path.exists(exe):
        print("gpu      test_gpu not built (no CUDA toolkit found by meson, or -Dcuda=disabled)", flush=True)
        return False
    t0 = time.time()
    proc = subprocess.run(["timeout", "-k", "10", "900", exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    out = proc.stdout
    m = re.search(r"\((\d+) assertions? in (\d+) test cases?\)|All tests passed \((\d+) assertions? in (\d+) test", out)
    ran = int(m.group(2) or m.group(4)) if m else 0
    skipped = re.search(r"SKIPPED: (\d+) \[gpu\] test cases", out)
    if proc.returncode in (0, 77) and ran > 0:
        for _ in range(ran):
            tally.add(True)
        if proc.returncode == 77 and skipped:
            tally.skipped += int(skipped.group(1))
            reason = re.search(r"SKIPPED: (no CUDA device[^\n]*)", out)
            tally.skip_reasons.append(f"test_gpu [gpu] cases: {reason.group(1) if reason else 'no device'}")
        status = "ok" + (f", {skipped.group(1)} skipped (no GPU)" if proc.returncode == 77 and skipped else "")
    else:
        tally.add(False, f"test_gpu: exit code {proc.returncode}\n" + out[-3000:])
        status = "FAILED"
    print(f"gpu      test_gpu                 {ran:3d} passed  {time.time() - t0:6.1f}s  {status}", flush=True)
    return proc.returncode == 0 and ran > 0


def mount_small_fs(tmp):
    """A 1 MiB tmpfs for test_adversarial's full-disk cases (issue 22), or None
    where this process may not mount one (not root, or no mount in a container)."""
    d = os.path.join(tmp, "smallfs")
    os.makedirs(d, exist_ok=True)
    if os.geteuid() != 0:
        return None
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return d if p.returncode == 0 else None


def adversarial_args(tally, variant, small_fs, env):
    """Catch2 arguments and environment for test_adversarial in `variant`: the
    full-disk cases need the small file system (skipped, visibly, without one);
    the out-of-memory cases limit a rank's address space, which the sanitizers'
    shadow memory makes meaningless (skipped under asan)."""
    excluded = []
    if small_fs:
        env["EMBER_TEST_SMALLFS"] = small_fs
    else:
        excluded.append("[disk]")
        tally.skipped += 2
        tally.skip_reasons.append(f"test_adversarial [disk] in {variant}: no tmpfs could be mounted")
    if variant == "asan":
        excluded.append("[memory]")
        tally.skipped += 1
        tally.skip_reasons.append("test_adversarial [memory] under asan: RLIMIT_AS and shadow memory")
    return (["".join("~" + e for e in excluded)] if excluded else []), env


def openblas_workaround():
    """OpenBLAS 0.3.21 (Debian 12) falls back to its Prescott kernels on a CPU it
    does not recognize. Their dsymv_L (kernel/x86_64/symv_L_sse2.S) reads up to 24
    bytes past the vectors ScaLAPACK's pdsymv allocates (valgrind, inside p?syevd:
    "Invalid read of size 8 ... 0 bytes after a block of size 312 alloc'd" by
    PB_Cmalloc); under ASan's allocator such a read can fault (a CI run: SEGV in
    dsymv_L_PRESCOTT in test_linalg's eigh at 3 ranks). The Nehalem and Haswell
    kernels use dsymv_L.c, which stays in bounds. Returns the core to force, or
    None (detected correctly, set by the caller, or no OpenBLAS)."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return None
    import ctypes
    for path in ("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            core = lib.openblas_get_corename().decode().lower()
            break
        except (OSError, AttributeError):
            continue
    else:
        return None
    if core != "prescott":
        return None
    try:
        flags = set(open("/proc/cpuinfo").read().split())
    except OSError:
        return None
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return "Nehalem" if "sse4_2" in flags else None


def main():
    core = openblas_workaround()
    if core:
        os.environ["OPENBLAS_CORETYPE"] = core
        print(f"OpenBLAS runs its Prescott kernels on this CPU (dsymv over-reads): OPENBLAS_CORETYPE={core}")
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--asan-build", default="build-asan")
    ap.add_argument("--variants", default="release,asan,tcp,faults",
                    help="comma-separated subset of release,asan,tcp,faults")
    ap.add_argument("--ranks", default="", help="override the rank counts of every variant, e.g. 3")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--only", default="", help="comma-separated binaries")
    ap.add_argument("--no-scripts", action="store_true")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS and v != "faults"]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}")
    binaries = [b for b in DISTRIBUTED if not args.only or b in args.only.split(",")]
    tally = Tally()
    tmp = tempfile.mkdtemp(prefix="ember-tests-")
    small_fs = mount_small_fs(tmp)
    here = os.path.dirname(os.path.abspath(__file__))
    for variant in [v for v in variants if v in VARIANTS]:
        ranks = [int(x) for x in (args.ranks or VARIANTS[variant]).split(",")]
        build, extra_env, mpirun_args, timeout = args.build, {}, [], args.timeout
        if variant == "asan":
            build = args.asan_build
            extra_env = read_env_file(os.path.join(here, "sanitizers", "options.env"))
        elif variant == "tcp":
            mpirun_args = TCP_MCA
        t0 = time.time()
        for b in binaries:
            if variant == "asan" and b in UNSANITIZED:
                tally.skipped += 1
                tally.skip_reasons.append(f"{b} under asan: not built there (tests/meson.build unsanitized_tests)")
                print(f"{variant:<8} {b:<24} skipped (not built under the sanitizers)", flush=True)
                continue
            exe = os.path.join(build, "tests", b)
            if not os.path.exists(exe):
                tally.add(False, f"[{variant}] {b}: {exe} is not built")
                print(f"{variant:<8} {b:<24} NOT BUILT ({exe})", flush=True)
                continue
            bargs, benv = [], dict(extra_env)
            if b == "test_adversarial":
                bargs, benv = adversarial_args(tally, variant, small_fs, benv)
            for p in ranks:
                if p < MIN_RANKS.get(b, 1):
                    continue
                run_binary(tally, tmp, variant, exe, b, p, timeout, benv, mpirun_args, bargs)
        print(f"{variant:<8} done in {time.time() - t0:.0f} s", flush=True)
        if variant == "release" and not args.no_scripts and not args.only:
            for name, cmd in SCRIPTS:
                t0 = time.time()
                proc = subprocess.run(["timeout", "-k", "10", "1800"] + cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
                ok = proc.returncode == 0
                print(f"script   {name:<40} {time.time() - t0:6.1f}s  {'ok' if ok else 'FAILED'}", flush=True)
                tally.add(ok, f"{name}: exit code {proc.returncode}\n" + proc.stdout[-3000:])
    if "release" in variants and not args.only:
        run_gpu_array_tests(tally, tmp, args.build, run_gpu_tests(tally, args.build))
        run_hostsim(tally, tmp, args.build)
    if "faults" in variants and not args.only:
        # tests/faults/run.py, then tests/adversarial/run.py: scenarios that end jobs
        for label, folder in (("faults", "faults"), ("advers.", "adversarial")):
            spec = importlib.util.spec_from_file_location(f"{folder}_run", os.path.join(here, folder, "run.py"))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            t0 = time.time()
            for name, ok, detail in module.scenarios(args.build):
                print(f"{label:<8} {name:<70} {'ok' if ok else 'FAILED'}", flush=True)
                tally.add(ok, f"[{folder}] {name}: {detail}")
            print(f"{label:<8} done in {time.time() - t0:.0f} s", flush=True)
    if small_fs:
        subprocess.run(["umount", small_fs])
    for f in tally.failures:
        print("\nFAILURE: " + f)
    if tally.skipped:
        # Not counted as passed (issue 7): they did not run on this machine.
        print(f"skipped: {tally.skipped} ({'; '.join(tally.skip_reasons)})")
    print(f"tests: {tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed or tally.passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
