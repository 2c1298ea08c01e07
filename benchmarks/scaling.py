#!/usr/bin/env python3
"""Cost per simulated second against the number of nodes, at constant density and work per node.

The issue's goal "cost per simulated second growing no worse than linearly in the
number of nodes at constant density" measured apart from any workload growth: a
static square grid (200 m spacing: each node hears the same neighbours whatever
the size, but at the edge), one 1-hop CBR flow per 4 nodes (node 4k sends 512 B
every 0.25 s to the next node in its row), static routing, 802.11 radio with ns-2's
defaults. Events per node are then nearly constant, so ns per event and µs per
node-second show what the simulator itself adds as the network grows.

    cargo build --release -p manetlab-core --example run_scenario
    python3 benchmarks/scaling.py                          # 100, 400, 1600, 6400 nodes, 60 s
    python3 benchmarks/scaling.py --nodes 100,400 --repeats 9
    python3 benchmarks/scaling.py --binary A,B             # alternating runs, one table each
    python3 benchmarks/scaling.py --nodes 400,1600 --repeats 0 --callgrind 400,1600
    python3 benchmarks/scaling.py --routing aodv --ns2 --nodes 100,400,1600   # ns-2.35 beside us

CPU is the user + system time of the child process (`getrusage(RUSAGE_CHILDREN)`
deltas), median over `--repeats` runs; with several binaries the runs alternate
(A, B, A, B, ...) so machine load falls on both alike. `--callgrind N,...` also
counts instructions per event under valgrind for those sizes (slow: about 50×).
`--save DIR` keeps each run's summary.json (events removed) so two binaries can
be checked for identical results on these scenarios.

`--routing aodv` runs the same grid with AODV instead of static routes: ns-2 has no
static routing for wireless nodes, so this is the grid `--ns2` can run there too
(`manetlab export-ns2`, then `ns run.tcl`, alternating with ours; `ns` from the
Debian package `ns2`). It is not constant work per node: with ns-2's rules each
source's first route request floods the whole network.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import run as bench_run  # noqa: E402  (benchmarks/run.py: `timed`, one child's CPU and peak RSS)

BINARY = ROOT / "target" / "release" / "examples" / "run_scenario"
SPACING_M = 200
PACKET_BYTES = 512
INTERVAL_S = 0.25


def scenario(nodes: int, duration_s: float, routing: str = "static") -> str:
    """The grid scenario for `nodes` (a perfect square of an even side ≥ 2),
    with static routes or `routing = "aodv"`."""
    cols = math.isqrt(nodes)
    if cols * cols != nodes or cols % 2:
        raise ValueError(f"nodes must be the square of an even number, got {nodes}")
    side_m = cols * SPACING_M
    lines = [
        f"# benchmarks/scaling.py: {cols}x{cols} grid, {SPACING_M} m spacing, one 1-hop CBR flow per 4 nodes.",
        f'name = "scaling-grid-{nodes}"',
        f"duration_s = {duration_s}",
        "[area]",
        f"width_m = {side_m}",
        f"height_m = {side_m}",
        "[nodes]",
        f"count = {nodes}",
        f'placement = {{ kind = "grid", columns = {cols}, spacing_m = {SPACING_M} }}',
        "[radio]",
    ]
    if routing != "static":
        lines += ["[routing]", f'protocol = "{routing}"']
    # Node 4k is in an even column (the side is even), never the last: its
    # right-hand neighbour is in the same row.
    for src in range(0, nodes, 4):
        lines += ["[[flows]]", 'kind = "cbr"', f"src = {src}", f"dst = {src + 1}", f"packet_size_bytes = {PACKET_BYTES}", f"interval_s = {INTERVAL_S}"]
    return "\n".join(lines) + "\n"


def run_once(binary: Path, scen: Path) -> tuple[float, dict]:
    """CPU seconds (user + system) of one run, and its summary."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(binary), str(scen)], capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{binary} {scen}: {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(proc.stdout)


def manetlab_command() -> list[str]:
    """The `manetlab` command: beside this Python, in the project's .venv, or on PATH."""
    for c in (Path(sys.executable).parent / "manetlab", ROOT / ".venv" / "bin" / "manetlab"):
        if c.exists():
            return [str(c)]
    found = shutil.which("manetlab")
    if found is None:
        sys.exit("--ns2 needs the manetlab command to export the scenario (make .venv/.manetlab-build, or pip install .)")
    return [found]


def run_ns2(ns: str, scen: Path, work: Path) -> tuple[float, float]:
    """CPU seconds and peak RSS (MiB) of ns-2.35 on `scen` (exported into `work` once)."""
    if not (work / "run.tcl").exists():
        proc = subprocess.run([*manetlab_command(), "export-ns2", str(scen), "--out", str(work)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"manetlab export-ns2 {scen}: {proc.stderr.strip()[-2000:]}")
    _, rss_mib, _, cpu_s = bench_run.timed([ns, "run.tcl"], cwd=work)
    return cpu_s, rss_mib


def callgrind_ir(binary: Path, scen: Path) -> int:
    """Instructions executed by one run under callgrind."""
    with tempfile.TemporaryDirectory(prefix="manetlab-scaling-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary), str(scen)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"callgrind {binary} {scen}: {proc.stderr.strip()[-2000:]}")
        m = re.search(r"(?m)^(?:summary|totals):\s*(\d+)", out.read_text())
        if not m:
            sys.exit(f"callgrind {binary} {scen}: no totals line")
        return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(BINARY), help="run_scenario binary; several, comma-separated, alternate")
    ap.add_argument("--nodes", default="100,400,1600,6400", help="comma-separated node counts (squares of even numbers)")
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds (default 60)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per size and binary (median reported; 0: none)")
    ap.add_argument("--callgrind", default="", help="comma-separated node counts to count instructions for")
    ap.add_argument("--save", type=Path, metavar="DIR", help="write each size's summary.json (events removed) under DIR/<binary index>/")
    ap.add_argument("--routing", choices=["static", "aodv"], default="static", help="routing of the grid (default static; --ns2 needs aodv)")
    ap.add_argument("--ns2", action="store_true", help="also time ns-2.35 on each size (needs --routing aodv and `ns` on PATH)")
    ap.add_argument("--ns2-repeats", type=int, default=1, help="ns-2 runs per size (median; default 1)")
    args = ap.parse_args()
    ns = None
    if args.ns2:
        ns = shutil.which("ns")
        if args.routing == "static":
            sys.exit("--ns2 needs --routing aodv: ns-2 has no static routing for wireless nodes")
        if ns is None:
            sys.exit("--ns2: no `ns` on PATH (Debian: apt-get install ns2)")

    binaries = [Path(b) for b in args.binary.split(",") if b]
    sizes = [int(n) for n in args.nodes.split(",") if n]
    cg_sizes = {int(n) for n in args.callgrind.split(",") if n}
    for b in binaries:
        if not b.exists():
            sys.exit(f"no binary {b}: cargo build --release -p manetlab-core --example run_scenario")

    with tempfile.TemporaryDirectory(prefix="manetlab-scaling-") as tmp:
        for n in sizes:
            scen = Path(tmp) / f"grid{n}.toml"
            scen.write_text(scenario(n, args.duration, args.routing), encoding="utf-8")
        # rows[binary index][n] = (events, [cpu...], ir)
        rows: list[dict[int, list]] = [{n: [None, [], None] for n in sizes} for _ in binaries]
        # ns2[n] = ([cpu...], [peak RSS MiB...])
        ns2: dict[int, tuple[list[float], list[float]]] = {n: ([], []) for n in sizes}
        for n in sizes:
            scen = Path(tmp) / f"grid{n}.toml"
            # One untimed run per binary gives the events (and the summary).
            for bi, b in enumerate(binaries):
                _, summary = run_once(b, scen)
                rows[bi][n][0] = summary["events"]
                if args.save:
                    d = args.save / str(bi)
                    d.mkdir(parents=True, exist_ok=True)
                    summary.pop("events", None)
                    (d / f"grid{n}.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            for r in range(max(args.repeats, args.ns2_repeats if ns else 0)):
                if ns and r < args.ns2_repeats:
                    cpu, rss = run_ns2(ns, scen, Path(tmp) / f"ns2-{n}")
                    ns2[n][0].append(cpu)
                    ns2[n][1].append(rss)
                for bi, b in enumerate(binaries):
                    if r < args.repeats:
                        cpu, _ = run_once(b, scen)
                        rows[bi][n][1].append(cpu)
            if n in cg_sizes:
                for bi, b in enumerate(binaries):
                    rows[bi][n][2] = callgrind_ir(b, scen)

    for bi, b in enumerate(binaries):
        print(f"\n{b} ({args.routing} routing, {args.duration:g} s simulated, median of {args.repeats})")
        extra = " ns-2.35 CPU (s) | ns-2 peak RSS (MiB) | ns-2 / ours (CPU) |" if ns else ""
        print("| nodes | events | events per node | CPU (s) | ns per event | µs per node-second | instructions per event |" + extra)
        print("|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if ns else ""))
        for n in sizes:
            events, cpus, ir = rows[bi][n]
            if cpus:
                cpu = statistics.median(cpus)
                cols = f"{cpu:.3f} | {cpu / events * 1e9:.1f} | {cpu / (n * args.duration) * 1e6:.2f}"
            else:
                cols = " |  | "
            ipe = f"{ir / events:.0f}" if ir else ""
            tail = ""
            if ns:
                t_cpu = statistics.median(ns2[n][0])
                ratio = f"{t_cpu / statistics.median(cpus):.1f}" if cpus else ""
                tail = f" {t_cpu:.2f} | {max(ns2[n][1]):.0f} | {ratio} |"
            print(f"| {n} | {events:,} | {events / n:,.0f} | {cols} | {ipe} |{tail}")


if __name__ == "__main__":
    main()
