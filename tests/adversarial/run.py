#!/usr/bin/env python3
"""The adversarial cases of issue 22 that need a process of their own.

Runs build/tests/adversarial_program under mpirun at 2, 3 and 4 ranks:
  * lifetime misuse (a factory before any environment, an array used after
    its environment ended, a second environment after the first): every rank
    prints the same ember::error, and the job exits 0;
  * garbage in EMBER_ALPHA / EMBER_BETA / EMBER_GAMMA / EMBER_KAPPA / EMBER_MEMORY_LIMIT /
    EMBER_CHECK_REPLICATED (letters, negative, nan, inf): every rank prints the
    same value_error naming the variable;
  * a null handle on one rank, in an expression or a move, and one rank out of
    memory inside a plan step: the job ENDS (no hang) within DEADLINE seconds with
    ember's one line naming the rank (and the step);
  * a save SIGKILLed mid-write leaves a temporary file; the next save of the same
    target removes it.
Each scenario is one test. run_tests.py imports scenarios() and counts each;
alone: run.py [--build build].
"""
import argparse
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE = 30.0


def _env(**extra):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", OMPI_MCA_btl_base_warn_component_unused="0")
    for k in ("EMBER_FAULT", "EMBER_ON_FAILURE", "EMBER_ALPHA", "EMBER_BETA", "EMBER_GAMMA", "EMBER_KAPPA", "EMBER_MEMORY_LIMIT",
              "EMBER_CHECK_REPLICATED"):
        env.pop(k, None)
    env.update(extra)
    return env


def _run(exe, nranks, args, env):
    cmd = ["timeout", "-k", "5", "90", "mpirun", "-n", str(nranks), "--oversubscribe", exe, *args]
    t0 = time.time()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout, time.time() - t0


def _results(out):
    """{rank: 'type|what'} from the RESULT lines (the last one of each rank)."""
    res = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            _, r, rest = line.split(" ", 2)
            res.setdefault(int(r), []).append(rest)
    return res


def agreed(exe, name, nranks, args, env, kind, needles, nth=0):
    """Every rank's nth RESULT is the same error of `kind` containing `needles`."""
    rc, out, dt = _run(exe, nranks, args, env)
    res = _results(out)
    firsts = {r: v[nth] for r, v in res.items() if len(v) > nth}
    texts = set(firsts.values())
    ok = rc == 0 and len(firsts) == nranks and len(texts) == 1
    text = next(iter(texts)) if texts else ""
    ok = ok and text.startswith(kind + "|") and all(n in text for n in needles)
    why = f"exit {rc} after {dt:.1f} s; {len(firsts)} of {nranks} ranks reported; {len(texts)} distinct: {text[:300]}"
    return (name, ok, why + ("" if ok else "\n" + out[-2500:]))


def aborted(exe, name, nranks, args, env, needles):
    """The job ends (non-zero) within DEADLINE with `needles` in its output."""
    rc, out, dt = _run(exe, nranks, args, env)
    missing = [n for n in needles if n not in out]
    ok = rc != 0 and dt < DEADLINE and not missing
    why = f"exit {rc} after {dt:.1f} s" + (f"; missing {missing}" if missing else "")
    return (name, ok, why + ("" if ok else "\n" + out[-2500:]))


def killed_save(exe, nranks):
    """SIGKILL a job mid-save: a temporary is left; the next save removes it."""
    name = f"a save SIGKILLed at {nranks} ranks leaves a temporary that the next save removes"
    d = tempfile.mkdtemp(prefix="ember-adv-kill-")
    target = os.path.join(d, "big.npy")
    cmd = ["mpirun", "-n", str(nranks), "--oversubscribe", exe, "save_loop", target]
    p = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    left = []
    try:
        t0 = time.time()
        while time.time() - t0 < 20 and not glob.glob(os.path.join(d, ".big.npy.ember-tmp-*")):
            time.sleep(0.005)
        time.sleep(0.05)
        os.killpg(p.pid, signal.SIGKILL)  # mpirun, mid-save
        p.wait(timeout=30)
        # and every rank (OpenMPI puts them in process groups of their own): the
        # job is gone, as after a node failure or a scheduler's kill
        pattern = f"adversarial_program save_loop {target}"
        subprocess.run(["pkill", "-9", "-f", pattern])
        t1 = time.time()
        while time.time() - t1 < 20 and subprocess.run(["pgrep", "-f", pattern], stdout=subprocess.DEVNULL).returncode == 0:
            time.sleep(0.1)
        left = glob.glob(os.path.join(d, ".big.npy.ember-tmp-*"))
        if not left:
            return (name, False, "no temporary file was seen (the save was not caught mid-write)")
        rc, out, dt = _run(exe, nranks, ["save_once", target], _env())
        after = glob.glob(os.path.join(d, ".big.npy.ember-tmp-*"))
        ok = rc == 0 and not after and os.path.exists(target)
        return (name, ok, f"{len(left)} left by the kill, {len(after)} after the next save; exit {rc}" +
                ("" if ok else "\n" + out[-2000:]))
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        subprocess.run(["rm", "-rf", d])


def scenarios(build="build"):
    exe = os.path.join(build, "tests", "adversarial_program")
    if not os.path.exists(exe):
        yield ("adversarial_program is built", False, f"{exe} is missing")
        return
    for n in (2, 3, 4):
        yield agreed(exe, f"a factory before any environment is an ember::error at {n} ranks", n, ["before_env"],
                     _env(), "error", ["MPI is not initialized", "ember::environment"])
        yield agreed(exe, f"... and the program goes on once it has one at {n} ranks", n, ["before_env"], _env(),
                     "ok", [], nth=1)
        yield agreed(exe, f"an array used after its environment ended is an ember::error at {n} ranks", n,
                     ["after_env"], _env(), "error", ["MPI has been finalized"])
        yield agreed(exe, f"a second environment after the first ended is an ember::error at {n} ranks", n,
                     ["second_env"], _env(), "error", ["finalized already", "one ember::environment"])
        yield aborted(exe, f"a null handle in an expression on one rank ends the job at {n} ranks", n, ["null_expr"],
                      _env(), [f"ember: rank {n - 1} of {n}", "null array handle"])
        yield aborted(exe, f"a null handle in a move on one rank ends the job at {n} ranks", n, ["null_move"],
                      _env(), [f"ember: rank {n - 1} of {n}", "null array handle"])
        yield aborted(exe, f"one rank out of memory in a plan step ends the job at {n} ranks", n, ["oom_eval"],
                      _env(), [f"ember: rank {n - 1} of {n}", "of a plan (", "out of memory"])
    for var, val in [("EMBER_ALPHA", "abc"), ("EMBER_BETA", "-1"), ("EMBER_BETA", "nan"), ("EMBER_GAMMA", "inf"),
                     ("EMBER_KAPPA", "-2e-10"), ("EMBER_ALPHA", "1e-6x"), ("EMBER_MEMORY_LIMIT", "-5"), ("EMBER_CHECK_REPLICATED", "yes")]:
        for n in (2, 3):
            yield agreed(exe, f"{var}={val} is refused on every rank at {n} ranks", n, ["env_garbage"],
                         _env(**{var: val}), "value_error", [f"{var}='{val}'"])
    for n in (2, 4):
        yield killed_save(exe, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    passed = failed = 0
    for name, ok, detail in scenarios(args.build):
        print(f"{'ok    ' if ok else 'FAILED'} {name}" + ("" if ok else f"\n    {detail}"), flush=True)
        passed += ok
        failed += not ok
    print(f"adversarial: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
