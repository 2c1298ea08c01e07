"""Validation against ns-2.35: writes docs/validation/ns2.md.

    python -m manetlab.ns2.validate --out docs/validation/ns2.md [--seeds N] [--jobs N]
           [--chain-seeds N] [--rwp20-seeds N] [--broch-seeds N]
           [--only TEXT] [--broch-duration S] [--stall-s S] [--keep DIR]
           [--extend-seeds N]

Three tables, every row run in both simulators for seeds 1..N (paired: the same
movement and the same flow endpoints in both; N per table with --chain-seeds,
--rwp20-seeds, --broch-seeds, each defaulting to --seeds):

1. **Chains**: 1–8 hops, 200 m apart, one FTP flow end to end for 100 s, TCP
   Tahoe / Reno / NewReno / Vegas / SACK / FACK, 802.11 data rate 1 and 2 Mb/s
   (basic rate 1 Mb/s), AODV (ns-2.35 has no static wireless routing).
2. **20 nodes** (benchmarks/scenarios/rwp20_aodv_tcp_cbr.toml: 1000 x 750 m, random
   waypoint 0–10 m/s, pause 0, 120 s) with AODV, DSR and DSDV; per seed one
   NewReno FTP pair and ten 4 pkt/s 512-byte CBR pairs drawn at random (src != dst)
   from the seed.
3. **50 nodes, Broch et al. (MobiCom 1998)**: 1500 x 300 m, random waypoint
   0–20 m/s, pause 0, 10 / 20 / 30 CBR sources of 4 pkt/s and 64 bytes, start
   times uniform in [0, 180) s, 900 s (shorten with --broch-duration), 2 Mb/s data
   rate, AODV / DSR / DSDV; endpoints drawn per seed.

Each row gives ours (mean over seeds), ns-2's, their ratio, the 95 % t interval of
the paired difference, and the command that reproduces the row.

A chain or 20-node row left `n.s.` by the first pass (outside the band, but its
interval reaches it: more seeds would tell) is run on with seeds up to `--extend-seeds N`, once, and
reported at N whatever it then shows; its band cell keeps the first verdict in
parentheses. One fixed second stage, not "add seeds until it passes", so the
extension cannot keep sampling until a row happens to enter the band.
"""

from __future__ import annotations

import argparse
import random
import sys
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from manetlab import __version__
from manetlab.ns2.crosscheck import STALL_S, Ns2NotFound, Ns2RunFailed, _one_seed, find_ns, ns_version, paired_ci
from manetlab.scenario import apply_overrides
from manetlab.textsafe import excerpt

REPO = Path(__file__).resolve().parents[3]
CHAIN_BASE = "benchmarks/scenarios/chain_4hop_tcp.toml"
RWP20_BASE = "benchmarks/scenarios/rwp20_aodv_tcp_cbr.toml"
VARIANTS = ("tahoe", "reno", "newreno", "vegas", "sack", "fack")
PROTOCOLS = ("aodv", "dsr", "dsdv")


@dataclass
class Row:
    """One table row: a scenario per seed, the metrics to report, the command."""

    table: str
    row_id: str
    label: str
    metrics: tuple[str, ...]
    command: str
    scenario_for_seed: Any  # seed -> scenario dict
    source: str | None


def _load(rel: str) -> dict[str, Any]:
    with open(REPO / rel, "rb") as fh:
        return tomllib.load(fh)


def _chain_rows() -> list[Row]:
    base = _load(CHAIN_BASE)
    rows = []
    for rate in (1, 2):
        for hops in range(1, 9):
            for v in VARIANTS:
                ov = {
                    "nodes.count": hops + 1,
                    "flows[0].dst": hops,
                    "flows[0].transport": v,
                    "mac.data_rate_mbps": rate,
                    "routing.protocol": "aodv",
                }
                data = apply_overrides(base, ov)
                sets = " ".join(f"--set {k}={val}" for k, val in ov.items())
                rows.append(
                    Row(
                        "chains",
                        f"chain-{hops}hop-{v}-{rate}mbps",
                        f"{hops} hop{'s' if hops > 1 else ''}, {v}, {rate} Mb/s",
                        ("tcp_goodput_kbps",),
                        f"manetlab crosscheck {CHAIN_BASE} {sets} --seeds 1-N",
                        (lambda seed, d=data: d),
                        str(REPO / CHAIN_BASE),
                    )
                )
    return rows


def _pairs(rng: random.Random, nodes: int, k: int) -> list[tuple[int, int]]:
    out = []
    for _ in range(k):
        a = rng.randrange(nodes)
        b = rng.randrange(nodes - 1)
        out.append((a, b if b < a else b + 1))
    return out


def _rwp20_for(proto: str) -> Callable[[int], dict[str, Any]]:
    base = _load(RWP20_BASE)

    def make(seed: int) -> dict[str, Any]:
        rng = random.Random(20_000_000 + seed)
        pairs = _pairs(rng, 20, 11)
        flows: list[dict[str, Any]] = [{"name": "ftp", "kind": "ftp", "src": pairs[0][0], "dst": pairs[0][1], "transport": "newreno"}]
        for a, b in pairs[1:]:
            flows.append({"kind": "cbr", "src": a, "dst": b, "packet_size_bytes": 512, "rate_kbps": 16.384})
        d = dict(base)
        d["flows"] = flows
        d["routing"] = {"protocol": proto}
        d["name"] = f"rwp20-{proto}"
        return d

    return make


def _broch_for(proto: str, sources: int, duration_s: float) -> Callable[[int], dict[str, Any]]:
    def make(seed: int) -> dict[str, Any]:
        rng = random.Random(50_000_000 + 1000 * sources + seed)
        flows = []
        for a, b in _pairs(rng, 50, sources):
            start = round(rng.uniform(0.0, min(180.0, duration_s / 5)), 6)
            flows.append({"kind": "cbr", "src": a, "dst": b, "packet_size_bytes": 64, "interval_s": 0.25, "start_s": start})
        return {
            "name": f"broch50-{proto}-{sources}src",
            "duration_s": duration_s,
            "area": {"width_m": 1500, "height_m": 300},
            "nodes": {"count": 50},
            "radio": {},
            "mac": {"data_rate_mbps": 2},
            "routing": {"protocol": proto},
            "mobility": {"model": "random_waypoint", "max_speed_mps": 20, "pause_s": 0},
            "flows": flows,
        }

    return make


def build_rows(broch_duration_s: float) -> list[Row]:
    rows = _chain_rows()
    for p in PROTOCOLS:
        rows.append(
            Row(
                "rwp20",
                f"rwp20-{p}",
                f"20 nodes, {p.upper()}",
                ("tcp_goodput_kbps", "cbr_pdr", "cbr_delay_mean_s", "routing_ctrl_pkts"),
                f"python -m manetlab.ns2.validate --only rwp20-{p} --seeds N",
                _rwp20_for(p),
                str(REPO / RWP20_BASE),
            )
        )
    for p in PROTOCOLS:
        for k in (10, 20, 30):
            rows.append(
                Row(
                    "broch50",
                    f"broch50-{p}-{k}src",
                    f"50 nodes, {p.upper()}, {k} sources",
                    ("cbr_pdr", "cbr_delay_mean_s", "routing_ctrl_pkts"),
                    f"python -m manetlab.ns2.validate --only broch50-{p}-{k}src --seeds N --broch-duration {broch_duration_s:g}",
                    _broch_for(p, k, broch_duration_s),
                    None,
                )
            )
    return rows


def _task(args: tuple[int, int, dict[str, Any], str | None, str, str | None, float]) -> tuple[int, int, list[tuple[int, str, float, float]] | str]:
    i, seed, data, source, ns, keep, stall_s = args
    try:
        return i, seed, _one_seed(data, source, seed, ns, keep, None, stall_s=stall_s)
    except Ns2RunFailed as e:
        return i, seed, " ".join(str(e).split())


def run_rows(rows: list[Row], seeds: dict[str, list[int]], jobs: int, ns: str, keep: str | None, stall_s: float = STALL_S) -> tuple[dict[int, list[tuple[int, str, float, float]]], dict[int, list[str]]]:
    """Every (row, seed) pair in one pool, seeds per table; a seed that fails is left
    out of its row (paired: in both simulators) and reported under the table."""
    tasks = []
    for i, r in enumerate(rows):
        for seed in seeds[r.table]:
            k = str(Path(keep) / r.row_id) if keep else None
            tasks.append((i, seed, r.scenario_for_seed(seed), r.source, ns, k, stall_s))
    results: dict[int, list[tuple[int, str, float, float]]] = {i: [] for i in range(len(rows))}
    failures: dict[int, list[str]] = {}
    if jobs <= 1:
        done: Iterator[tuple[int, int, list[tuple[int, str, float, float]] | str]] = map(_task, tasks)
    else:
        import multiprocessing

        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))
        done = pool.map(_task, tasks)
    for n, (i, seed, res) in enumerate(done, 1):
        print(f"[{n}/{len(tasks)}] {rows[i].row_id} seed {seed}{'' if not isinstance(res, str) else ': ' + res}", file=sys.stderr)
        if isinstance(res, str):
            failures.setdefault(i, []).append(f"seed {seed}: {res}" if not res.startswith("seed") else res)
        else:
            results[i].extend(res)
    if jobs > 1:
        pool.shutdown()
    return results, failures


def _g(v: float) -> str:
    return f"{v:.4g}"


# Issue 10's acceptance bands: TCP goodput within ±3 % of ns-2's mean, CBR delivery
# ratio within ±0.02; the other metrics are reported without one.
BANDS = {"tcp_goodput_kbps": ("rel", 0.03), "cbr_pdr": ("abs", 0.02)}


def verdict(metric: str, ours_mean: float, ns2_mean: float, lo: float, hi: float, n: int) -> str:
    """`within` the band, `n.s.` (outside it, but the difference's 95 % interval still
    reaches the band, or one seed gives no interval: more seeds would tell), `outside`
    (the whole interval is beyond the band), or `—` for a metric without a band."""
    if metric not in BANDS:
        return "—"
    kind, width = BANDS[metric]
    band = width * abs(ns2_mean) if kind == "rel" else width
    if abs(ours_mean - ns2_mean) <= band:
        return "within"
    return "n.s." if n < 2 or (lo <= band and hi >= -band) else "outside"


def row_stats(row: Row, res: list[tuple[int, str, float, float]]) -> list[tuple[str, list[float], list[float], str]]:
    """Per metric of `row` with results: (metric, ours, ns-2's, verdict)."""
    out = []
    for m in row.metrics:
        pairs = [(a, b) for _, mm, a, b in res if mm == m]
        if not pairs:
            continue
        ours = [a for a, _ in pairs]
        theirs = [b for _, b in pairs]
        _, lo, hi = paired_ci(ours, theirs)
        out.append((m, ours, theirs, verdict(m, sum(ours) / len(ours), sum(theirs) / len(theirs), lo, hi, len(pairs))))
    return out


# Tables whose n.s. rows `--extend-seeds` runs on: a chain seed costs ~0.5 s, a 20-node
# one ~3 s; a Broch seed (900 s, 50 nodes) a minute of ns-2, too long for hundreds.
EXTENDABLE = ("chains", "rwp20")


def extend_rows(rows: list[Row], seeds: dict[str, list[int]], results: dict[int, list[tuple[int, str, float, float]]], failures: dict[int, list[str]], n_max: int, run: Any) -> dict[int, str]:
    """Run the rows of an `EXTENDABLE` table some banded metric of which is `n.s.` on seeds len+1..`n_max` of
    their table (`run(rows, seeds)` -> (results, failures), as `run_rows`), adding
    to `results` and `failures` in place. Returns, per extended row, its first-pass
    note for the band cell ("n.s. at 20 seeds")."""
    ext = [i for i, r in enumerate(rows) if r.table in EXTENDABLE and len(seeds[r.table]) < n_max and any(v == "n.s." for *_, v in row_stats(r, results[i]))]
    if not ext:
        return {}
    first = {i: f"n.s. at {len(seeds[rows[i].table])} seeds" for i in ext}
    more = {t: list(range(len(ss) + 1, n_max + 1)) for t, ss in seeds.items()}
    res2, fail2 = run([rows[i] for i in ext], more)
    for j, i in enumerate(ext):
        results[i].extend(res2.get(j, []))
        failures.setdefault(i, []).extend(fail2.get(j, []))
        if not failures[i]:
            del failures[i]
    return first


def render(rows: list[Row], results: dict[int, Any], failures: dict[int, list[str]], seeds: dict[str, list[int]], nsv: str, argv: list[str], first_pass: dict[int, str] | None = None) -> str:
    present = [t for t in ("chains", "rwp20", "broch50") if any(r.table == t for r in rows)]
    per_table = ", ".join(f"{t} {len(seeds[t])}" for t in present)
    out = [
        "# manetlab vs ns-2.35",
        "",
        f"Written by `python -m manetlab.ns2.validate {' '.join(argv)}` (manetlab {__version__}, ns {nsv}),",
        f"seeds 1–N per row, N = {per_table}. Each row runs the same scenario, movement and",
        "flow endpoints in both simulators per seed (`manetlab crosscheck`, docs/ns2.md); *ours* and *ns-2*",
        "are means over the seeds, *ratio* = ours / ns-2, *diff* the mean paired difference ours − ns-2",
        "with its 95 % Student-t interval. Metric definitions: docs/metrics.md and docs/ns2.md.",
        "In the commands, N is the number of seeds. *band*: issue 10's criterion, TCP goodput within",
        "±3 % of ns-2 and CBR delivery within ±0.02 — `within`; `n.s.` = outside, but the 95 % interval",
        "of the difference reaches the band, or a single seed gives no interval (not distinguishable at",
        "this many seeds); `outside` = the whole interval lies beyond it.",
        "",
    ]
    if first_pass:
        n_ext = max((seed for i in first_pass for seed, *_ in results[i]), default=0)
        out[-1:-1] = [
            f"Rows `n.s.` after the first pass ({len(first_pass)}) were run on, once, with seeds up to {n_ext}",
            "(`--extend-seeds`) and are reported at that size whatever it shows; their band cell gives",
            "the first pass's verdict in parentheses.",
        ]
    summary_at = len(out)
    counts: dict[str, int] = {}
    titles = {
        "chains": "## Chains: 1–8 hops, 200 m, one FTP flow for 100 s, AODV\n\nMetric: TCP goodput (kbit/s, in-order payload over the run).",
        "rwp20": "## 20 nodes, random waypoint, 1 FTP + 10 CBR pairs drawn per seed",
        "broch50": "## 50 nodes, Broch et al. 1998: 1500 x 300 m, 0–20 m/s, pause 0, CBR 4 pkt/s x 64 B",
    }
    for table in ("chains", "rwp20", "broch50"):
        sel = [(i, r) for i, r in enumerate(rows) if r.table == table]
        if not sel:
            continue
        out += [titles[table], "", "| row | metric | ours | ns-2 | ratio | diff [95 % CI] | band | command |", "|---|---|---|---|---|---|---|---|"]
        for i, r in sel:
            res = results[i]
            if not res:
                out.append(f"| {r.label} | — | every seed failed | | | | | `{r.command}` |")
                continue
            for m, ours, theirs, v in row_stats(r, res):
                mo, mt = sum(ours) / len(ours), sum(theirs) / len(theirs)
                diff, lo, hi = paired_ci(ours, theirs)
                ratio = _g(mo / mt) if mt else "—"
                n = f" (n={len(ours)})" if len(ours) != len(seeds[table]) else ""
                if v != "—":
                    counts[v] = counts.get(v, 0) + 1
                cell = f"{v} ({first_pass[i]})" if first_pass and i in first_pass and v != "—" else v
                out.append(f"| {r.label}{n} | {m} | {_g(mo)} | {_g(mt)} | {ratio} | {_g(diff)} [{_g(lo)}, {_g(hi)}] | {cell} | `{r.command}` |")
        out.append("")
        notes = [(rows[i].label, msg) for i, _ in sel for msg in failures.get(i, [])]
        if notes:
            out.append("Seeds left out (ns-2 failed or hung; both simulators' values dropped):")
            out.append("")
            out += [f"* {label}: {msg}" for label, msg in notes]
            out.append("")
    tally = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("within", "n.s.", "outside"))
    out[summary_at:summary_at] = [f"Banded rows (TCP goodput, CBR delivery): {tally}.", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m manetlab.ns2.validate", description="manetlab vs ns-2.35 validation tables")
    p.add_argument("--out", type=Path, required=True, help="the Markdown file to write (e.g. docs/validation/ns2.md)")
    p.add_argument("--seeds", type=int, default=20, help="seeds 1..N per row (default 20)")
    for t in ("chain", "rwp20", "broch"):
        p.add_argument(f"--{t}-seeds", type=int, metavar="N", help=f"seeds 1..N for the {t} rows (default --seeds)")
    p.add_argument("--jobs", type=int, default=1, help="parallel processes (default 1)")
    p.add_argument("--only", action="append", default=[], metavar="TEXT", help="only rows whose id contains TEXT (repeatable), e.g. chain-4hop, rwp20, broch50-aodv")
    p.add_argument("--broch-duration", type=float, default=900.0, help="simulated seconds of the Broch scenarios (default 900, the paper's)")
    p.add_argument("--stall-s", type=float, default=STALL_S, help=f"an ns-2 run whose trace stops growing this long is hung and left out (default {STALL_S:g})")
    p.add_argument("--keep", type=Path, help="keep every ns-2 run directory under DIR/<row>/seed<N>")
    p.add_argument("--extend-seeds", type=int, metavar="N", help="run chain and 20-node rows left n.s. by the first pass on, once, with seeds up to N (default: no extension)")
    args = p.parse_args(argv)
    per = {"chains": args.chain_seeds, "rwp20": args.rwp20_seeds, "broch50": args.broch_seeds}
    per = {t: args.seeds if n is None else n for t, n in per.items()}
    if min(args.seeds, *per.values()) < 1 or args.jobs < 1 or args.broch_duration <= 0 or args.stall_s <= 0 or (args.extend_seeds is not None and args.extend_seeds < 1):
        print("error: --seeds, --chain-seeds, --rwp20-seeds, --broch-seeds, --extend-seeds, --jobs, --broch-duration and --stall-s must be positive", file=sys.stderr)
        return 2
    try:
        ns = find_ns()
    except Ns2NotFound as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rows = build_rows(args.broch_duration)
    if args.only:
        rows = [r for r in rows if any(t in r.row_id for t in args.only)]
        if not rows:
            print(f"error: --only {excerpt(' '.join(args.only), 200)}: no row matches", file=sys.stderr)
            return 2
    seeds = {t: list(range(1, n + 1)) for t, n in per.items()}
    keep = str(args.keep) if args.keep else None
    results, failures = run_rows(rows, seeds, args.jobs, ns, keep, args.stall_s)
    first_pass = {}
    if args.extend_seeds:
        first_pass = extend_rows(rows, seeds, results, failures, args.extend_seeds, lambda rr, ss: run_rows(rr, ss, args.jobs, ns, keep, args.stall_s))
    text = render(rows, results, failures, seeds, ns_version(ns), argv, first_pass)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
