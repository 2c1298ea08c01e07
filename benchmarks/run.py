#!/usr/bin/env python3
"""Scenario benchmarks: wall time, simulator events per second and peak memory.

Each scenario in benchmarks/scenarios/ runs in its own process through the core's
`run_scenario` example (release build, no Python in the loop), `--repeat` times;
we report the median wall time of the simulation itself (as the binary measures
it), events/s at that median, and the peak resident set size of the process
(`VmHWM`, reported by the binary itself). Usage:

    python benchmarks/run.py [--repeat 3] [--record] [NAME_SUBSTRING ...]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="append the results to benchmarks/RESULTS.md")
    ap.add_argument("only", nargs="*", help="run only scenarios whose file name contains one of these")
    args = ap.parse_args()

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
    if args.record:
        cmd = "python benchmarks/run.py " + " ".join(sys.argv[1:])
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
