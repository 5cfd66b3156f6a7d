#!/usr/bin/env python3
"""Fault injection: a rank failing inside a plan, or killed, must END the job.

Runs build/tests/fault_program under mpirun:
  * EMBER_FAULT=<rank>:<step> for every step of the program's plan, at 2 and 3
    ranks, failing rank varied: the job must exit non-zero within DEADLINE
    seconds, with ember's message naming the rank, the step and the fault, and
    must not print "done";
  * the <n> field (second evaluation), a standalone move, a malformed EMBER_FAULT;
  * one rank: the fault is rethrown, caught by the program, and it carries on;
  * SIGKILL of rank 1 while every rank loops over allreduces (shared memory and
    TCP): mpirun must end the job within DEADLINE seconds.
Each scenario is one test.  Usage: run.py [--build build]  (prints one line per
scenario and `faults: N passed, M failed`; exit 1 on failure).  run_tests.py
imports scenarios() and counts each.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE = 20.0   # seconds from launch to the job's end; a hang is killed at 60 s
TCP = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self"]


def _env(**extra):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", OMPI_MCA_btl_base_warn_component_unused="0")
    for k in ("EMBER_FAULT", "EMBER_ON_FAILURE"):
        env.pop(k, None)
    env.update(extra)
    return env


def _run(exe, nranks, args, env, mca=()):
    cmd = ["timeout", "-k", "5", "60", "mpirun", "-n", str(nranks), "--oversubscribe", *mca, exe, *args]
    t0 = time.time()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout, time.time() - t0


def _plan_steps(exe, nranks):
    rc, out, _ = _run(exe, nranks, ["plan"], _env())
    if rc != 0 or "done" not in out:
        raise RuntimeError(f"fault_program plan failed without a fault at {nranks} ranks:\n" + out[-3000:])
    plan = out.split("<<<plan", 1)[1].split("plan>>>", 1)[0]
    steps = int(re.search(r"ember plan: (\d+) steps", plan).group(1))
    return steps, plan


def scenarios(build="build"):
    """Yields (name, ok, detail) for each scenario."""
    exe = os.path.join(build, "tests", "fault_program")
    steps = {}
    for nranks in (2, 3):
        try:
            steps[nranks], _ = _plan_steps(exe, nranks)
        except Exception as e:  # noqa: BLE001 - reported as a failed scenario
            yield (f"fault_program runs cleanly at {nranks} ranks", False, str(e))
            return
        yield (f"fault_program runs cleanly at {nranks} ranks", True, f"{steps[nranks]}-step plan")

    def aborted(name, nranks, args, fault, must, mca=()):
        rc, out, dt = _run(exe, nranks, args, _env(EMBER_FAULT=fault), mca)
        missing = [m for m in must if m not in out]
        ok = rc != 0 and dt < DEADLINE and not missing and "\ndone" not in out
        why = f"exit {rc} after {dt:.1f} s" + (f"; missing {missing}" if missing else "")
        return (name, ok, why + ("" if ok else "\n" + out[-2500:]))

    for nranks in (2, 3):
        nsteps = steps[nranks]
        for step in range(1, nsteps + 1):
            rank = (7 * step + nranks) % nranks  # a different rank at consecutive steps
            yield aborted(f"EMBER_FAULT={rank}:{step} at {nranks} ranks aborts the job", nranks, ["plan"],
                          f"{rank}:{step}",
                          [f"ember: rank {rank} of {nranks}", f"failed at step {step} of {nsteps} of a plan",
                           "injected fault", "aborted instead of left hanging"])
    nsteps = steps[3]
    yield aborted(f"EMBER_FAULT=1:{nsteps}:2 (second evaluation) at 3 ranks", 3, ["plan"], f"1:{nsteps}:2",
                  [f"EMBER_FAULT=1:{nsteps}:2", f"failed at step {nsteps} of {nsteps} of a plan"])
    yield aborted("EMBER_FAULT=2:1 in a standalone resplit_ at 3 ranks", 3, ["move"], "2:1",
                  ["ember: rank 2 of 3", "failed at step 1 of 1 of a move", "injected fault"])
    yield aborted("EMBER_FAULT=0:2 over TCP at 2 ranks", 2, ["plan"], "0:2",
                  ["ember: rank 0 of 2", "failed at step 2"], TCP)
    yield aborted("malformed EMBER_FAULT: ember::error on every rank before anything moves", 2, ["plan"], "one:two", ["EMBER_FAULT='one:two'"])

    rc, out, dt = _run(exe, 1, ["recover"], _env(EMBER_FAULT="0:1"))
    yield ("one rank: the injected fault is rethrown, caught, and the next evaluation is right",
           rc == 0 and "caught: EMBER_FAULT=0:1:1" in out and "done" in out, f"exit {rc}\n" + out[-2000:])

    for label, mca in (("shared memory", ()), ("TCP", TCP)):
        yield _sigkill(exe, label, mca)


def _sigkill(exe, label, mca):
    name = f"SIGKILL of rank 1 of 3 ({label}) ends the job"
    with tempfile.TemporaryDirectory() as d:
        pidfile = os.path.join(d, "pid")
        cmd = ["timeout", "-k", "5", "90", "mpirun", "-n", "3", "--oversubscribe", *mca, exe, "spin", pidfile, "60"]
        p = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        t0 = time.time()
        pid = None
        while time.time() - t0 < 30 and p.poll() is None:
            try:
                pid = int(open(pidfile).read().strip())
                break
            except (OSError, ValueError):
                time.sleep(0.05)
        if pid is None:
            p.kill()
            return (name, False, "rank 1 never wrote its pid\n" + p.communicate()[0][-2000:])
        time.sleep(0.5)  # let the ranks get into their allreduce loop
        t_kill = time.time()
        os.kill(pid, signal.SIGKILL)
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out = p.communicate()[0]
        dt = time.time() - t_kill
        ok = p.returncode != 0 and dt < DEADLINE and "nobody was killed" not in out
        return (name, ok, f"mpirun exit {p.returncode} {dt:.1f} s after the kill" + ("" if ok else "\n" + out[-2000:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    passed = failed = 0
    for name, ok, detail in scenarios(args.build):
        print(f"{'ok    ' if ok else 'FAILED'} {name}: {detail.splitlines()[0] if detail else ''}", flush=True)
        if not ok:
            print("    " + detail.replace("\n", "\n    "))
        passed += ok
        failed += not ok
    print(f"faults: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
