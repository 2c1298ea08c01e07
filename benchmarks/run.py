#!/usr/bin/env python3
"""Scenario benchmarks: wall time, simulator events per second and peak memory.

Each scenario in benchmarks/scenarios/ runs in its own process through the core's
`run_scenario` example (release build, no Python in the loop), `--repeat` times;
we report the median wall time of the simulation itself (as the binary measures
it), events/s at that median, and the peak resident set size of the process
(`VmHWM`, reported by the binary itself). Usage:

    python benchmarks/run.py [--repeat 3] [--record] [NAME_SUBSTRING ...]
    python benchmarks/run.py --vs-ns2 [--repeat 3] [--seeds 5] [--kinds] [--record] [NAME_SUBSTRING ...]
    python benchmarks/run.py --study 200 [--jobs N] [--record]

`--study N` measures study throughput instead: N runs (seeds 1..N) of the 20-node,
120 s scenario of examples/default_study.toml through `manetlab.Study` with the
local pool (`--jobs`, default one per core), against N times one in-process run
(the mean of `--baseline` seeds run serially in this process), and the overhead
per run (worker time not spent in the core: task transfer, metrics, store).

`--vs-ns2` (what `make bench` runs) measures issue 15's workloads (WORKLOADS
below) as whole processes: our `run_scenario` binary and, when `ns` is on PATH,
ns-2.35 on the same scenario, seed and movement (written by `manetlab
export-ns2`), the two alternating run by run so that machine load hits both
alike. Per workload: median wall time of each, the ratio ns-2 / ours, peak RSS
of each, and our event count. `--ns2-max-nodes` skips ns-2 on larger networks
(its 1000-node run takes many minutes); `--kinds` adds the event-kind breakdown.

`--record` appends the table, the command, the machine and the date to
benchmarks/RESULTS.md. Timed assertions do not belong in tests; this is where
performance is measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "benchmarks" / "scenarios"
BINARY = ROOT / "target" / "release" / "examples" / "run_scenario"


def build(pgo: str) -> tuple[Path, str]:
    """Build `run_scenario`; returns it and how it was built (for the record).

    `pgo`: "on" builds with profile-guided optimisation (benchmarks/pgo.py) and
    fails without llvm-profdata; "auto" does when the toolchain has it, as
    `make` builds the Python extension; "off" never does.
    """
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import pgo as pgo_build

    if pgo == "on" or (pgo == "auto" and pgo_build.profdata_tool() is not None):
        return pgo_build.build_binary(), "release + PGO (`benchmarks/pgo.py`, training set `benchmarks/pgo/`)"
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "manetlab-core", "--example", "run_scenario"],
        cwd=ROOT,
        check=True,
    )
    return BINARY, "release, no PGO"


def run_once(binary: Path, scenario: Path) -> tuple[float, int, float, int]:
    """(wall seconds, events, peak RSS MiB, trace bytes) of one run in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="manetlab-bench-") as out:
        proc = subprocess.run([str(binary), str(scenario), "--time", "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{scenario.name} failed: {proc.stderr.strip()}")
    m = re.search(r"wall_s=([\d.]+) events=(\d+) events_per_s=\d+ peak_rss_kib=(\d+) trace_bytes=(\d+)", proc.stderr)
    if not m:
        sys.exit(f"{scenario.name}: no timing line in {proc.stderr!r}")
    return float(m.group(1)), int(m.group(2)), int(m.group(3)) / 1024.0, int(m.group(4))


#: Issue 15's workloads: (scenario file stem, seeds). The 20-node row runs 5 seeds.
WORKLOADS = [
    ("chain_4hop_tcp_aodv", [1]),
    ("rwp20_aodv_tcp_cbr", [1, 2, 3, 4, 5]),
    ("rwp100_aodv_10tcp", [1]),
    ("rwp400_aodv_20tcp", [1]),
    ("rwp1000_aodv_50tcp", [1]),
]


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS MiB, stderr, CPU seconds user + system) of one child
    process, whole process. CPU time is the steadier measure on a shared machine:
    other processes' load stretches wall time far more than CPU time."""
    import time

    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {text.strip()[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0, text, usage.ru_utime + usage.ru_stime


def scenario_with_seed(src: Path, seed: int, tmp: Path) -> Path:
    """`src` with its top-level `seed` replaced (a copy in `tmp`)."""
    text = src.read_text(encoding="utf-8")
    text, n = re.subn(r"(?m)^seed\s*=\s*\d+\s*$", f"seed = {seed}", text, count=1)
    if n == 0:
        text = f"seed = {seed}\n" + text
    out = tmp / f"{src.stem}_seed{seed}.toml"
    out.write_text(text, encoding="utf-8")
    return out


def export_ns2(scenario: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "manetlab", "export-ns2", str(scenario), "--out", str(out)], check=True, stdout=subprocess.DEVNULL)


def vs_ns2(args: argparse.Namespace) -> list[str]:
    """Issue 15's table: ours vs ns-2.35, alternating; returns the Markdown table."""
    import shutil

    ns = shutil.which("ns") if not args.no_ns2 else None
    table = [
        f"| workload | seed | ours wall (s, median of {args.repeat}) | ns-2.35 wall (s) | ns-2 / ours (wall) | ours CPU (s) | ns-2.35 CPU (s) | ns-2 / ours (CPU) | ours peak RSS (MiB) | ns-2 peak RSS (MiB) | events |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    kinds_lines: list[str] = []
    for stem, seeds in WORKLOADS:
        # A name selects its workload and those it prefixes at a "_" ("rwp100" is not "rwp1000_...").
        if args.only and not any(stem == s or stem.startswith(s.rstrip("_") + "_") for s in args.only):
            continue
        src = SCENARIOS / f"{stem}.toml"
        n_nodes = int(re.search(r"(?m)^count\s*=\s*(\d+)", src.read_text()).group(1))
        for seed in seeds[: args.seeds]:
            with tempfile.TemporaryDirectory(prefix="manetlab-bench-") as tmp_s:
                tmp = Path(tmp_s)
                scen = scenario_with_seed(src, seed, tmp)
                use_ns = ns is not None and n_nodes <= args.ns2_max_nodes
                if use_ns:
                    export_ns2(scen, tmp / "ns2")
                ours, theirs, rss_o, rss_t, cpu_o, cpu_t = [], [], [], [], [], []
                in_core = None
                for _ in range(args.repeat):
                    if use_ns:
                        w, r, _, c = timed([ns, "run.tcl"], cwd=tmp / "ns2")
                        theirs.append(w)
                        rss_t.append(r)
                        cpu_t.append(c)
                    w, r, err, c = timed([str(args.binary), str(scen), "--time"])
                    ours.append(w)
                    rss_o.append(r)
                    cpu_o.append(c)
                    m = re.search(r"wall_s=([\d.]+) events=(\d+)", err)
                    in_core = (float(m.group(1)), int(m.group(2)))
                if args.kinds:
                    _, _, err, _ = timed([str(args.binary), str(scen), "--kinds"])
                    kinds_lines.append(f"{stem} seed {seed}: " + ", ".join(ln.removeprefix("kind ") for ln in err.splitlines() if ln.startswith("kind ")))
            wo = statistics.median(ours)
            wt = statistics.median(theirs) if theirs else None
            ratio = f"{wt / wo:.2f}" if wt else "—"
            wt_s = f"{wt:.3f}" if wt else ("skipped" if ns else "no ns")
            rss_t_s = f"{max(rss_t):.1f}" if rss_t else "—"
            co = statistics.median(cpu_o)
            ct = statistics.median(cpu_t) if cpu_t else None
            ct_s, cratio = (f"{ct:.3f}", f"{ct / co:.2f}") if ct else ("—", "—")
            row = f"| {stem} | {seed} | {wo:.3f} | {wt_s} | {ratio} | {co:.3f} | {ct_s} | {cratio} | {max(rss_o):.1f} | {rss_t_s} | {in_core[1]:,d} |"
            print(row, flush=True)
            table.append(row)
    if not args.only or any(s in "cli" for s in args.only):
        # `manetlab run` of the 4-hop chain, whole process (start-up and tables included).
        scen = SCENARIOS / "chain_4hop_tcp_aodv.toml"
        walls, rss, cpus = [], [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="manetlab-bench-cli-") as tmp:
                w, r, _, c = timed([str(Path(sys.executable).parent / "manetlab"), "run", str(scen), "--out", tmp])
            walls.append(w)
            rss.append(r)
            cpus.append(c)
        row = f"| `manetlab run` chain_4hop_tcp_aodv (whole CLI process) | 1 | {statistics.median(walls):.3f} | | | {statistics.median(cpus):.3f} | | | {max(rss):.1f} | | |"
        print(row, flush=True)
        table.append(row)
    table.append("")
    table.append(f"Load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}.")
    if kinds_lines:
        table += ["", "Event kinds:", ""] + [f"- {ln}" for ln in kinds_lines]
    return table


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def study_bench(n_runs: int, jobs: int | None, baseline_runs: int) -> tuple[list[str], list[str]]:
    """(lines to print, Markdown table) of the study throughput benchmark."""
    import time

    import manetlab
    from manetlab.study import Study

    jobs = jobs or os.cpu_count() or 1
    base = ROOT / "examples" / "default_study.toml"
    serial = []
    for seed in range(1, baseline_runs + 1):
        t0 = time.perf_counter()
        manetlab.run(base, seed=seed)
        serial.append(time.perf_counter() - t0)
    one = statistics.mean(serial)
    with tempfile.TemporaryDirectory(prefix="manetlab-study-bench-") as tmp:
        study = Path(tmp) / "bench_study.toml"
        study.write_text(f'name = "bench"\nscenario = "{base.as_posix()}"\nseeds = "1-{n_runs}"\n', encoding="utf-8")
        s = Study(study, Path(tmp) / "store")
        t0 = time.perf_counter()
        rep = s.run(jobs=jobs, progress=False)
        wall = time.perf_counter() - t0
        if rep.failed:
            sys.exit(f"study benchmark: {rep.failed} runs failed: {s.format_status()}")
        df = s.results()
    in_core = float(df["wall_s"].sum())
    overhead = (jobs * wall - in_core) / n_runs
    ratio = wall / (n_runs * one)
    lines = [
        f"one in-process run (mean of seeds 1-{baseline_runs}, serial): {one:.3f} s",
        f"study of {n_runs} runs, {jobs} worker processes: {wall:.1f} s wall = {ratio:.2f} x ({n_runs} x one run = {n_runs * one:.1f} s); target <= 0.6",
        f"time in workers' run_task: {in_core:.1f} s ({in_core / n_runs:.3f} s per run); overhead per run (jobs x wall - that) / runs = {overhead * 1e3:.1f} ms",
        f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
    ]
    table = [
        "| runs | jobs | one run, serial (s) | study wall (s) | wall / (runs x one run) | per-run time in worker (s) | overhead per run (ms) | load avg 1/5/15 |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {n_runs} | {jobs} | {one:.3f} | {wall:.1f} | {ratio:.2f} | {in_core / n_runs:.3f} | {overhead * 1e3:.1f} | {' / '.join(f'{x:.2f}' for x in os.getloadavg())} |",
    ]
    return lines, table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="append the results to benchmarks/RESULTS.md")
    ap.add_argument("--study", type=int, metavar="N", help="instead: study throughput, N runs of examples/default_study.toml")
    ap.add_argument("--jobs", type=int, help="worker processes for --study (default: one per core)")
    ap.add_argument("--baseline", type=int, default=5, help="serial in-process runs for --study's baseline (default 5)")
    ap.add_argument("--vs-ns2", action="store_true", help="issue 15's workloads, ours vs ns-2.35 (what `make bench` runs)")
    ap.add_argument("--seeds", type=int, default=5, help="--vs-ns2: at most this many seeds per workload (default 5)")
    ap.add_argument("--ns2-max-nodes", type=int, default=400, help="--vs-ns2: skip ns-2 on larger networks (default 400)")
    ap.add_argument("--no-ns2", action="store_true", help="--vs-ns2: do not run ns-2 even if it is on PATH")
    ap.add_argument("--binary", type=Path, help="the run_scenario binary to time (default: this tree's release build, see --pgo)")
    ap.add_argument("--pgo", choices=["auto", "on", "off"], default="auto", help="build the binary with profile-guided optimisation: auto = when the toolchain has llvm-profdata (as `make` builds the extension), default auto")
    ap.add_argument("--kinds", action="store_true", help="--vs-ns2: also print each run's event-kind breakdown")
    ap.add_argument("only", nargs="*", help="run only scenarios whose file name contains one of these")
    args = ap.parse_args()

    if args.study:
        lines, table = study_bench(args.study, args.jobs, args.baseline)
        print("\n".join(lines))
        record(args, table, "python benchmarks/run.py " + " ".join(sys.argv[1:]))
        return

    if args.binary is None:
        args.binary, args.build = build(args.pgo)
    else:
        args.build = f"given binary `{args.binary}`"
    print(f"binary: {args.binary} ({args.build})", flush=True)
    if args.vs_ns2:
        record(args, vs_ns2(args), "python benchmarks/run.py " + " ".join(sys.argv[1:]))
        return
    files = sorted(p for p in SCENARIOS.glob("*.toml") if not args.only or any(s in p.name for s in args.only))
    rows = []
    for f in files:
        runs = [run_once(args.binary, f) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        events = runs[0][1]
        rss = max(r[2] for r in runs)
        trace_mib = runs[0][3] / 2**20
        rows.append((f.stem, wall, events, rss, trace_mib))
        print(f"{f.stem:24s} {wall:8.3f} s  {events:>11,d} events  {events / wall / 1e6:6.2f} M ev/s  {rss:7.1f} MiB  trace {trace_mib:.1f} MiB", flush=True)

    table = [f"| scenario | wall (s, median of {args.repeat:d}) | events | events/s | peak RSS (MiB) | traces (MiB) |", "|---|---:|---:|---:|---:|---:|"]
    table += [f"| {n} | {w:.3f} | {e:,d} | {e / w / 1e6:.2f} M | {r:.1f} | {t:.1f} |" for n, w, e, r, t in rows]
    record(args, table, "python benchmarks/run.py " + " ".join(sys.argv[1:]))


def record(args: argparse.Namespace, table: list[str], cmd: str) -> None:
    if args.record:
        block = [
            "",
            f"## {dt.date.today().isoformat()} — `{cmd.strip()}`",
            "",
            f"Machine: {os.cpu_count()} CPUs (`nproc`), {cpu_model()}; {platform.system()} {platform.release()}; "
            f"git {subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()}."
            + (f" Build: {args.build}." if getattr(args, "build", None) else ""),
            "",
            *table,
            "",
        ]
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write("\n".join(block))
        print("recorded in benchmarks/RESULTS.md")
    else:
        print("\n".join(table))


if __name__ == "__main__":
    main()
