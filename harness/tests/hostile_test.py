#!/usr/bin/env python3
"""Hostile-input and results-writer tests of scaleproof, generated from its
own declarations (`scaleproof list --json`: every option of every
subcommand with its type and range, every parameter of every technique with
its type and range).

  hostile_test.py SCALEPROOF DATA_DIR inputs   bad values: exit 2, one line naming it, nothing written
  hostile_test.py SCALEPROOF DATA_DIR signals  SIGINT, SIGTERM, SIGKILL mid-run: no folder left behind
  hostile_test.py SCALEPROOF DATA_DIR concurrent  3 runs into one --out at once: 3 complete folders

By default each option gets NaN and three more of its bad values, and each
parameter one, rotating through the kinds so that every kind meets every
type across the suite (a few hundred processes); SP_HOSTILE_FULL=1 gives
every option and parameter every bad value (a few thousand).

Every case runs in its own empty folder as working directory with its
outputs there, so "nothing written" means the folder is still empty.
"""
import concurrent.futures
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

BIN, DATA, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
PROFILE = os.path.join(DATA, "..", "..", "..", "docs", "profiles", "cpu-2core.json")

# A valid command line per subcommand, as (option, value) pairs; the option
# under test replaces its own pair. "OUT" is a path inside the case's folder.
BASE = {
    "": [("--threads", "1"), ("check", None), ("-t", "stream_copy"), ("-s", "conformance")],
    "list": [("list", None)],
    "check": [("check", None), ("--technique", "stream_copy"), ("--size", "conformance")],
    "bench": [("bench", None), ("--technique", "stream_copy"), ("--size", "conformance"), ("--min-time", "0.001"),
              ("--repetitions", "1"), ("--out", "OUT")],
    "run": [("run", None), ("--technique", "stream_copy"), ("--size", "conformance"), ("--min-time", "0.001"),
            ("--repetitions", "1"), ("--out", "OUT")],
    "report": [("report", None), (None, os.path.join(DATA, "qualify", "run")), ("--out", "OUT")],
    "compare": [("compare", None), (None, os.path.join(DATA, "compare", "a")), (None, os.path.join(DATA, "compare", "b")),
                ("--json", "OUT")],
    "scale": [("scale", None), ("--technique", "split_work"), ("--ranks", "1"), ("--min-time", "0.001"),
              ("--repetitions", "1"), ("--out", "OUT")],
    "qualify": [("qualify", None), ("--profile", PROFILE), ("--results", os.path.join(DATA, "qualify", "run")),
                ("--out", "OUT")],
    "nccl-tests": [("nccl-tests", None), (None, "all_reduce"), ("-b", "1K"), ("-e", "4K"), ("--json", "OUT")],
    "pipeline": [("pipeline", None), ("--out", "OUT")],
    "model parallel": [("model", None), ("parallel", None)],
    "model zero": [("model", None), ("zero", None)],
    "conv-table": [("conv-table", None), (None, os.path.join(DATA, "qualify", "run"))],
    "plan": [("plan", None), ("--preset", "gpt2-small"), ("--ranks", "4"), ("--gemm-gflops", "1000"),
             ("--alpha-us", "1"), ("--beta-gbs", "10"), ("--json", "OUT")],
    "db import": [("db", None), ("import", None), (None, os.path.join(DATA, "qualify", "run")), ("--db", "OUT")],
    "history": [("history", None), ("--db", "OUT"), ("--case", "gemm/kokkos/M=8")],
}


def scaleproof(args, cwd, timeout=60):
    return subprocess.run([BIN] + args, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


def declarations():
    r = scaleproof(["list", "--json"], cwd=tempfile.gettempdir())
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def command_line(command, option_names, value, twice=None):
    """The base line of `command` with `option_names` set to `value` (twice: also a second value)."""
    args = []
    for opt, val in BASE[command]:
        if opt in option_names:
            continue
        if opt is not None:
            args.append(opt)
        if val is not None:
            args.append(val)
    extra = [option_names[0], value] + ([option_names[0], twice] if twice is not None else [])
    if command == "":
        return extra + args[2:] if args[:2] == ["--threads", "1"] else extra + args
    return args + extra


def option_aliases(name, all_options, command):
    # CLI11 names an option by its longest name; BASE may use the short one.
    aliases = {"--technique": "-t", "--size": "-s", "--repetitions": "-r", "--out": "-o", "--family": "-F"}
    return [name] + ([aliases[name]] if name in aliases else [])


def bad_numbers(o):
    """Values outside what the option's declaration accepts."""
    vals = ["nan", "NaN", "inf", "-inf", "1e400", "abc", ""]
    integer = o["type"] in ("INT", "UINT")
    vals += ["99999999999999999999", "2.5"] if integer else ["-1e400"]
    rng = o.get("range")
    if rng:
        lo, hi, lo_open = rng["min"], rng["max"], rng["min_open"]
        if lo > 0 or (lo == 0 and lo_open):
            vals.append("0")
        if lo >= 0:
            vals.append("-1")
        elif lo > -1e300:
            vals.append(repr(lo - 1) if not integer else str(int(lo) - 1))
        if hi < 1e300:
            vals.append(str(int(hi) + 1) if integer else "%g" % (hi * 2 + 1))
    return vals


def valid_value(o):
    rng = o.get("range")
    if o["type"] in ("INT", "UINT", "FLOAT"):
        lo = rng["min"] if rng else 1
        v = lo + 1 if rng and rng["min_open"] else lo
        return str(int(v)) if o["type"] != "FLOAT" else repr(v)
    return "x"


FULL = os.environ.get("SP_HOSTILE_FULL") == "1"


def pick(values, index, n):
    """All values (full mode), else values[0] and n more, rotating with index."""
    if FULL or len(values) <= n + 1:
        return values
    rest = values[1:]
    return [values[0]] + [rest[(index * n + k) % len(rest)] for k in range(n)]


def input_cases(decl):
    cases = []  # (label, args, must_name)
    undeclared = []
    for i, o in enumerate(decl["options"]):
        cmd = o["command"]
        if o["positional"] or o["flag"] or cmd not in BASE:
            continue
        names = option_aliases(o["name"], decl["options"], cmd)
        numeric = o["type"] in ("INT", "UINT", "FLOAT")
        if numeric and "range" not in o:
            undeclared.append(f"{cmd} {o['name']}")
        for v in pick(bad_numbers(o), i, 3) if numeric else [""]:
            cases.append((f"{cmd or '(global)'} {o['name']}={v!r}", command_line(cmd, names, v), o["name"]))
        if not o["multiple"]:
            w = valid_value(o)
            cases.append((f"{cmd or '(global)'} {o['name']} twice", command_line(cmd, names, w, twice=w), o["name"]))
    n = 0
    for t in decl["techniques"]:
        # Sizes without a declared maximum: each fits 64 bits, their products do not.
        ints = [p["name"] for p in t["params"] if p["type"] == "integer" and p.get("max") is None]
        for j, p in enumerate(t["params"]):
            n += 1
            if p["type"] == "text":
                vals = [""]
            else:
                vals = ["nan", "inf", "-inf", "1e400", "abc", ""]
                if p["type"] == "integer":
                    vals += ["99999999999999999999", "2.5"]
                lo = p.get("min")
                if lo is not None:
                    vals += ["0"] if lo > 0 else []
                    vals += ["-1"] if lo >= 0 else []
                    vals += [str(int(lo) - 1)] if lo < 0 and p["type"] == "integer" else []
                if p.get("max") is not None:
                    vals.append(str(int(p["max"]) + 1) if p["type"] == "integer" else "%g" % (p["max"] + 1))
            for v in vals if FULL else [vals[n % len(vals)]]:
                args = ["check", "-t", t["name"], "-s", "conformance", "--set", f"{p['name']}={v}"]
                cases.append((f"{t['name']} {p['name']}={v!r}", args, p["name"]))
            if FULL or j == 0:
                args = ["check", "-t", t["name"], "-s", "conformance", "--set", f"{p['name']}={p['example']}",
                        "--set", f"{p['name']}={p['example']}"]
                cases.append((f"{t['name']} {p['name']} twice", args, p["name"]))
        if len(ints) >= 2:
            sets = ",".join(f"{n}=4294967296" for n in ints)
            cases.append((f"{t['name']} product overflow", ["check", "-t", t["name"], "-s", "conformance", "--set", sets],
                          "exceeds 2^62"))
    return cases, undeclared


def run_input_case(case):
    label, args, must_name = case
    with tempfile.TemporaryDirectory(prefix="sp_hostile_") as work:
        args = [os.path.join(work, "OUT") if a == "OUT" else a for a in args]
        try:
            r = scaleproof(args, cwd=work)
        except subprocess.TimeoutExpired:
            return f"{label}: did not exit within 60 s (args {args})"
        err = [l for l in r.stderr.splitlines() if l.strip()]
        problems = []
        if r.returncode != 2:
            problems.append(f"exit {r.returncode}, not 2")
        if len(err) != 1 or not err[0].startswith("scaleproof: error: "):
            problems.append(f"stderr is not one 'scaleproof: error:' line: {err[:3]}")
        elif must_name not in err[0]:
            problems.append(f"the error does not name {must_name}: {err[0]}")
        elif any(len(tok) > 40 and tok.strip("0123456789.") == "" for tok in err[0].split()):
            problems.append(f"unreadable number in: {err[0]}")
        left = os.listdir(work)
        if left:
            problems.append(f"wrote {left}")
        return f"{label}: " + "; ".join(problems) + f" (args {args})" if problems else None


def test_inputs():
    decl = declarations()
    cases, undeclared = input_cases(decl)
    t0 = time.time()
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("SP_HOSTILE_JOBS", "3"))) as pool:
        for f in pool.map(run_input_case, cases):
            if f:
                failures.append(f)
    for u in undeclared:
        failures.append(f"numeric option without a declared range (sp::cli::range): {u}")
    print(f"{len(cases)} hostile inputs, {len(failures)} failed, {time.time() - t0:.1f} s")
    for f in failures[:40]:
        print("FAIL", f)
    return 1 if failures else 0


DB = "scaleproof.sqlite"  # the results database every run records into, beside its folders


def entries(folder):
    return sorted(e for e in os.listdir(folder) if e != DB) if os.path.isdir(folder) else []


def long_run(out):
    # Long enough to be interrupted mid-benchmark; stopped long before it ends.
    return subprocess.Popen([BIN, "bench", "-t", "stream_copy", "-s", "small", "--min-time", "5", "-r", "5", "--out", out],
                            env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for_temp(out, p, limit=30):
    t0 = time.time()
    while time.time() - t0 < limit and p.poll() is None:
        if any(".tmp-" in e for e in entries(out)):
            time.sleep(0.3)  # inside the benchmarks
            return True
        time.sleep(0.05)
    return False


def test_signals():
    failures = []
    with tempfile.TemporaryDirectory(prefix="sp_signals_") as work:
        for sig in (signal.SIGINT, signal.SIGTERM):
            out = os.path.join(work, sig.name)
            p = long_run(out)
            if not wait_for_temp(out, p):
                failures.append(f"{sig.name}: no temporary folder appeared")
                p.kill()
                continue
            p.send_signal(sig)
            rc = p.wait(timeout=30)
            if rc != -sig:
                failures.append(f"{sig.name}: the run ended with {rc}, not by the signal")
            if entries(out):
                failures.append(f"{sig.name}: left {entries(out)}")
        # SIGKILL cannot be caught: the next run on this host removes what it left.
        out = os.path.join(work, "SIGKILL")
        p = long_run(out)
        if wait_for_temp(out, p):
            p.kill()
            p.wait()
            left = entries(out)
            if not any(".tmp-" in e for e in left):
                failures.append(f"SIGKILL: expected the killed run's temporary folder, found {left}")
            r = scaleproof(["bench", "-t", "stream_copy", "-s", "conformance", "--min-time", "0.001", "-r", "1",
                            "--out", out, "--name", "next"], cwd=work)
            if r.returncode != 0:
                failures.append(f"SIGKILL: the next run failed: {r.stderr}")
            if entries(out) != ["latest", "next"]:
                failures.append(f"SIGKILL: after the next run {out} holds {entries(out)}, not ['latest', 'next']")
        else:
            failures.append("SIGKILL: no temporary folder appeared")
            p.kill()
    print(f"signals: {len(failures)} failed")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


def test_concurrent():
    failures = []
    with tempfile.TemporaryDirectory(prefix="sp_concurrent_") as work:
        for name in ([], ["--name", "same"]):  # the same second's timestamp, and one name given to all three
            out = os.path.join(work, "named" if name else "stamped")
            args = [BIN, "bench", "-t", "stream_copy", "-s", "conformance", "--min-time", "0.01", "-r", "1",
                    "--out", out] + name
            ps = [subprocess.Popen(args, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for _ in range(3)]
            results = [p.communicate(timeout=120) + (p.returncode,) for p in ps]
            for so, se, rc in results:
                if rc != 0:
                    failures.append(f"{out}: a run exited {rc}: {(se.strip().splitlines() or [''])[-1]}")
            folders = [e for e in entries(out) if e != "latest"]
            if len(folders) != 3 or any(e.startswith(".") for e in folders):
                failures.append(f"{out}: expected 3 results folders, found {entries(out)}")
            for f in folders:
                for file in ("bench.json", "manifest.json", "report.md"):
                    if not os.path.isfile(os.path.join(out, f, file)):
                        failures.append(f"{out}/{f}: no {file}")
            printed = sorted(l.split("results: ", 1)[1] for so, _, _ in results for l in so.splitlines()
                             if l.startswith("results: "))
            if printed != sorted(os.path.join(out, f) for f in folders):
                failures.append(f"{out}: the runs printed {printed}, the folders are {folders}")
            if not os.path.islink(os.path.join(out, "latest")):
                failures.append(f"{out}: latest is not a link")
            # Three writers at once: each run's rows are in the database, none lost.
            with sqlite3.connect(os.path.join(out, DB)) as db:
                rows = db.execute("SELECT r.path, count(DISTINCT c.id), count(m.id) FROM runs r JOIN cases c ON "
                                  "c.run_id = r.id JOIN measurements m ON m.case_id = c.id GROUP BY r.id").fetchall()
            recorded = sorted(os.path.basename(r[0]) for r in rows)
            if recorded != sorted(folders) or len({r[1:] for r in rows}) != 1:
                failures.append(f"{out}: the database holds {rows}, expected one run per folder {folders}, alike")
        # A regular file named latest is the user's: left as it is, with one note.
        out = os.path.join(work, "userlatest")
        os.makedirs(out)
        with open(os.path.join(out, "latest"), "w") as f:
            f.write("mine\n")
        r = subprocess.run([BIN, "bench", "-t", "stream_copy", "-s", "conformance", "--min-time", "0.01", "-r", "1",
                            "--out", out], env=ENV, capture_output=True, text=True, timeout=120)
        latest = os.path.join(out, "latest")
        if r.returncode != 0 or os.path.islink(latest) or not os.path.isfile(latest) or open(latest).read() != "mine\n":
            failures.append(f"regular file latest: rc {r.returncode}, latest replaced or changed")
        if "latest is not a link written by scaleproof" not in r.stdout:
            failures.append("regular file latest: no note said it was left")
    print(f"concurrent: {len(failures)} failed")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


sys.exit({"inputs": test_inputs, "signals": test_signals, "concurrent": test_concurrent}[MODE]())
