#!/usr/bin/env python3
"""Same results before and after a speed change: summaries and traces compared byte for byte.

A speed change must leave every result identical (issue 15). This runs a fixed set
of scenarios (the benchmark scenarios, shortened where long, plus variants of the
20-node AODV scenario that switch on each MAC / radio / routing / fault / trace
option whose code a speed change may touch) through a `run_scenario` binary and
saves `summary.json` (with the `events` count removed: fewer events for the same
work is the point) and every trace file. Usage:

    cargo build --release -p manetlab-core --example run_scenario
    cp target/release/examples/run_scenario /tmp/run_scenario.before   # at the old commit
    python benchmarks/identity.py --binary /tmp/run_scenario.before --save /tmp/ident-before
    python benchmarks/identity.py --save /tmp/ident-after              # at the new commit
    python benchmarks/identity.py --compare /tmp/ident-before /tmp/ident-after

`--compare` exits 1 and names the differing files if anything differs.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "benchmarks" / "scenarios"
BINARY = ROOT / "target" / "release" / "examples" / "run_scenario"


def shorten(text: str, duration_s: float) -> str:
    return re.sub(r"(?m)^duration_s\s*=.*$", f"duration_s = {duration_s}", text, count=1)


def add_to_table(text: str, table: str, line: str) -> str:
    """Add `line` under `[table]` (creating the table at the end if absent)."""
    if re.search(rf"(?m)^\[{re.escape(table)}\]\s*$", text):
        return re.sub(rf"(?m)^\[{re.escape(table)}\]\s*$", f"[{table}]\n{line}", text, count=1)
    return text + f"\n[{table}]\n{line}\n"


def cases() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in ["chain_4hop_tcp", "chain_4hop_udp", "chain_7hop_tcp", "chain_7hop_udp", "p2p_chain_cbr", "saturation_50", "chain_4hop_tcp_traced"]:
        out[name] = (SCEN / f"{name}.toml").read_text()
    rwp20 = (SCEN / "rwp20_aodv_tcp_cbr.toml").read_text()
    out["rwp20_aodv_tcp_cbr"] = rwp20
    for seed in (2, 3):
        out[f"rwp20_seed{seed}"] = re.sub(r"(?m)^seed\s*=.*$", f"seed = {seed}", rwp20, count=1)
    short = shorten(rwp20, 40)
    out["rwp20_eifs_standard"] = add_to_table(short, "mac", 'eifs = "standard"')
    out["rwp20_immediate_access"] = add_to_table(short, "mac", "immediate_access = true")
    out["rwp20_no_rts"] = add_to_table(short, "mac", "rts_threshold_bytes = 3000")
    out["rwp20_no_arp"] = add_to_table(short, "mac", "arp = false")
    out["rwp20_sinr"] = add_to_table(short, "radio", 'reception = "sinr"')
    out["rwp20_shadowing"] = add_to_table(short, "radio", 'propagation = "shadowing"')
    out["rwp20_dsr"] = short.replace('protocol = "aodv"', 'protocol = "dsr"')
    out["rwp20_dsdv"] = short.replace('protocol = "aodv"', 'protocol = "dsdv"')
    out["rwp20_faults"] = short + (
        "\n[faults]\nnode_switches = [{ node = 3, off_s = 10.0, on_s = 25.0 }, { node = 10, off_s = 30.0 }]\n"
        "link_outages = [{ a = 1, b = 2, down_s = 5.0, up_s = 20.0 }]\n"
        "[faults.random_link_failures]\nrate_per_s = 0.05\nmean_duration_s = 3.0\n"
    )
    out["rwp20_traced"] = shorten(rwp20, 20) + (
        '\n[outputs]\ntrace = "new"\ntrace_levels = ["agt", "rtr", "mac", "ifq"]\npcap = true\nmovement = true\nseries = true\nseries_interval_s = 0.5\n'
    )
    out["rwp20_traced_old"] = shorten(rwp20, 20) + '\n[outputs]\ntrace = "old"\ntrace_levels = ["agt", "rtr", "mac"]\n'
    out["rwp100_60s"] = shorten((SCEN / "rwp100_aodv_10tcp.toml").read_text(), 60)
    out["rwp400_20s"] = shorten((SCEN / "rwp400_aodv_20tcp.toml").read_text(), 20)
    return out


def save(binary: Path, dest: Path, only: list[str]) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="manetlab-ident-") as tmp:
        for name, text in cases().items():
            if only and not any(o in name for o in only):
                continue
            scen = Path(tmp) / f"{name}.toml"
            scen.write_text(text, encoding="utf-8")
            outdir = dest / name
            outdir.mkdir(exist_ok=True)
            proc = subprocess.run([str(binary), str(scen), "--out", str(outdir)], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"{name}: {proc.stderr.strip()}")
            summary = json.loads(proc.stdout)
            summary.pop("events", None)
            (outdir / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            print(f"{name}: {len(list(outdir.iterdir()))} files", flush=True)


def compare(a: Path, b: Path) -> int:
    bad = []
    n = 0
    for da in sorted(p for p in a.iterdir() if p.is_dir()):
        db = b / da.name
        names = sorted(p.name for p in da.iterdir())
        names_b = sorted(p.name for p in db.iterdir()) if db.is_dir() else []
        if names != names_b:
            bad.append(f"{da.name}: files {names} vs {names_b}")
            continue
        for f in names:
            n += 1
            if not filecmp.cmp(da / f, db / f, shallow=False):
                bad.append(f"{da.name}/{f}")
    for line in bad:
        print("DIFFERS:", line)
    print(f"{n} files compared, {len(bad)} differ")
    return 1 if bad else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", type=Path, default=BINARY)
    ap.add_argument("--save", type=Path, metavar="DIR")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("only", nargs="*", help="only cases whose name contains one of these")
    args = ap.parse_args()
    if args.save:
        save(args.binary, args.save, args.only)
    if args.compare:
        sys.exit(compare(*args.compare))


if __name__ == "__main__":
    main()
