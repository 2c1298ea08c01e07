#!/usr/bin/env python3
"""Scenario benchmarks: wall time, simulator events per second and peak memory.

Each scenario in benchmarks/scenarios/ runs in its own process through the core's
`run_scenario` example (release build, no Python in the loop), `--repeat` times;
we report the median wall time of the simulation itself (as the binary measures
it), events/s at that median, and the peak resident set size of the process
(`VmHWM`, reported by the binary itself). Usage:

    python benchmarks/run.py [--repeat 3] [--record] [NAME_SUBSTRING ...]
    python benchmarks/run.py --study 200 [--jobs N] [--record]

`--study N` measures study throughput instead: N runs (seeds 1..N) of the 20-node,
120 s scenario of examples/default_study.toml through `manetlab.Study` with the
local pool (`--jobs`, default one per core), against N times one in-process run
(the mean of `--baseline` seeds run serially in this process), and the overhead
per run (worker time not spent in the core: task transfer, metrics, store).

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


def build() -> None:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "manetlab-core", "--example", "run_scenario"],
        cwd=ROOT,
        check=True,
    )


def run_once(scenario: Path) -> tuple[float, int, float, int]:
    """(wall seconds, events, peak RSS MiB, trace bytes) of one run in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="manetlab-bench-") as out:
        proc = subprocess.run([str(BINARY), str(scenario), "--time", "--out", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{scenario.name} failed: {proc.stderr.strip()}")
    m = re.search(r"wall_s=([\d.]+) events=(\d+) events_per_s=\d+ peak_rss_kib=(\d+) trace_bytes=(\d+)", proc.stderr)
    if not m:
        sys.exit(f"{scenario.name}: no timing line in {proc.stderr!r}")
    return float(m.group(1)), int(m.group(2)), int(m.group(3)) / 1024.0, int(m.group(4))


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
    ap.add_argument("only", nargs="*", help="run only scenarios whose file name contains one of these")
    args = ap.parse_args()

    if args.study:
        lines, table = study_bench(args.study, args.jobs, args.baseline)
        print("\n".join(lines))
        record(args, table, "python benchmarks/run.py " + " ".join(sys.argv[1:]))
        return

    build()
    files = sorted(p for p in SCENARIOS.glob("*.toml") if not args.only or any(s in p.name for s in args.only))
    rows = []
    for f in files:
        runs = [run_once(f) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        events = runs[0][1]
        rss = max(r[2] for r in runs)
        trace_mib = runs[0][3] / 2**20
        rows.append((f.stem, wall, events, rss, trace_mib))
        print(f"{f.stem:24s} {wall:8.3f} s  {events:>11,d} events  {events / wall / 1e6:6.2f} M ev/s  {rss:7.1f} MiB  trace {trace_mib:.1f} MiB", flush=True)

    table = ["| scenario | wall (s, median of %d) | events | events/s | peak RSS (MiB) | traces (MiB) |" % args.repeat, "|---|---:|---:|---:|---:|---:|"]
    table += [f"| {n} | {w:.3f} | {e:,d} | {e / w / 1e6:.2f} M | {r:.1f} | {t:.1f} |" for n, w, e, r, t in rows]
    record(args, table, "python benchmarks/run.py " + " ".join(sys.argv[1:]))


def record(args: argparse.Namespace, table: list[str], cmd: str) -> None:
    if args.record:
        block = [
            "",
            f"## {dt.date.today().isoformat()} — `{cmd.strip()}`",
            "",
            f"Machine: {os.cpu_count()} CPUs (`nproc`), {cpu_model()}; {platform.system()} {platform.release()}; "
            f"git {subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()}.",
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
