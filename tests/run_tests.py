#!/usr/bin/env python3
"""Runs every distributed test binary at 1, 2, 3 and 4 ranks under a timeout.

Each rank writes its own JUnit report; a test case passes at P ranks only if it
passed on every rank and the job exited cleanly. A crash or a hang (timeout) is a
failure that names the binary and the rank count. Ends with one line:
    tests: N passed, M failed
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

DISTRIBUTED = ["test_exchange", "test_array", "test_planner", "test_expr", "test_linalg", "test_hsvd", "test_matmul", "test_par", "test_boxes", "test_io", "test_programs", "test_collective_safety"]
SCRIPTS = [("consumer project (installed + subproject)", ["bash", "tests/consumer/run.sh"]),
           ("examples pca, dmd, kmeans at 1-4 ranks (self-checking)", ["bash", "tests/run_examples.sh"]),
           ("examples dataparallel, box_reshape at 1-4 ranks",
            ["bash", "tests/run_examples.sh", "build", "dataparallel 120", "box_reshape"]),
           ("example io_roundtrip with numpy at 1-4 ranks", ["bash", "tests/run_examples_io.sh"]),
           ("fuzz .npy header + CSV parsers (libFuzzer, 2x20 s) and the planner (15 s)", ["bash", "tests/fuzz/run.sh", "20"])]


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="1,2,3,4")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--only", default="", help="comma-separated binaries")
    ap.add_argument("--no-scripts", action="store_true")
    args = ap.parse_args()
    ranks = [int(x) for x in args.ranks.split(",")]
    binaries = [b for b in DISTRIBUTED if not args.only or b in args.only.split(",")]
    passed = failed = 0
    failures = []
    tmp = tempfile.mkdtemp(prefix="ember-tests-")
    for b in binaries:
        exe = os.path.join(args.build, "tests", b)
        for p in ranks:
            prefix = os.path.join(tmp, f"{b}.np{p}")
            env = dict(os.environ, EMBER_TEST_REPORT=prefix, OMPI_ALLOW_RUN_AS_ROOT="1",
                       OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                       EMBER_CHECK_PLANS="1")  # every evaluation checks that all ranks planned alike
            cmd = ["timeout", "-k", "10", str(args.timeout), "mpirun", "-n", str(p), "--oversubscribe", exe]
            t0 = time.time()
            proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            dt = time.time() - t0
            cases, missing = parse_reports(prefix, p)
            np_pass = sum(1 for v in cases.values() if v is None)
            np_fail = len(cases) - np_pass
            for name, text in cases.items():
                if text is not None:
                    failures.append(f"{b} @ {p} ranks: {name}\n    {text[:2000]}")
            if proc.returncode != 0 and np_fail == 0:
                why = "timed out (hang?)" if proc.returncode in (124, 137) else f"exit code {proc.returncode}"
                failures.append(f"{b} @ {p} ranks: job {why}; missing reports from ranks {missing}\n"
                                + proc.stdout[-3000:])
                np_fail += 1
            elif missing:
                failures.append(f"{b} @ {p} ranks: no report from ranks {missing}\n" + proc.stdout[-3000:])
                np_fail += 1
            passed += np_pass
            failed += np_fail
            status = "ok" if np_fail == 0 else "FAILED"
            print(f"{b:<24} np={p}  {np_pass:3d} passed {np_fail:3d} failed  {dt:6.1f}s  {status}", flush=True)
    if not args.no_scripts and not args.only:
        for name, cmd in SCRIPTS:
            t0 = time.time()
            proc = subprocess.run(["timeout", "-k", "10", "1800"] + cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            ok = proc.returncode == 0
            print(f"{name:<40} {time.time() - t0:6.1f}s  {'ok' if ok else 'FAILED'}", flush=True)
            if ok:
                passed += 1
            else:
                failed += 1
                failures.append(f"{name}: exit code {proc.returncode}\n" + proc.stdout[-3000:])
    for f in failures:
        print("\nFAILURE: " + f)
    print(f"tests: {passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
