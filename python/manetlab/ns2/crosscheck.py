"""Run a scenario in manetlab and in ns-2.35 over many seeds and compare.

Per seed: manetlab runs the scenario (also writing its movement file), the
scenario is exported with that very movement file, ``ns run.tcl`` runs in a
temporary directory and its trace is reduced to the same metrics
(`manetlab.ns2.trace`). Seeds run in parallel in a process pool.

`crosscheck(...)` returns the per-seed values (long form); `summarize(...)` turns
them into one row per metric: ours (mean), ns-2's (mean), the ratio of the means,
and the 95 % confidence interval of the paired difference ours − ns-2
(Student t with n − 1 degrees of freedom).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetlab.ns2.export import Ns2Unsupported, export_ns2, to_scenario
from manetlab.ns2.trace import drop_code, iter_events, metrics_from_dir
from manetlab.results import run
from manetlab.scenario import Overrides, Scenario
from manetlab.stats import paired_ci, t_quantile
from manetlab.textsafe import excerpt, printable

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Ns2NotFound",
    "Ns2RunFailed",
    "SeedsError",
    "crosscheck",
    "summarize",
    "parse_seeds",
    "find_ns",
    "ns_version",
    "our_metrics",
    "paired_ci",
    "t_quantile",
    "INSTALL_HINT",
]

INSTALL_HINT = "ns-2 (the `ns` binary) is not on PATH; install it with: sudo apt-get install ns2"


class SeedsError(ValueError):
    """A --seeds text that names no valid seed list."""


class Ns2RunFailed(RuntimeError):
    """ns-2 failed or hung on one seed."""


class Ns2NotFound(RuntimeError):
    """`ns` is not installed (message: how to install it)."""


def find_ns(ns: str | None = None) -> str:
    """The path of the ns-2 binary (`ns` on PATH unless given); Ns2NotFound otherwise."""
    path = shutil.which(ns or "ns")
    if path is None:
        raise Ns2NotFound(INSTALL_HINT)
    return path


def ns_version(ns: str | None = None) -> str:
    """ns-2's version, e.g. "2.35" (Tcl's ``ns-version``; ``ns -version`` prints nothing
    in the Debian build)."""
    with tempfile.TemporaryDirectory(prefix="manetlab-nsver-") as tmp:
        script = Path(tmp) / "v.tcl"
        script.write_text("puts [ns-version]\n", encoding="utf-8")
        out = subprocess.run([find_ns(ns), str(script)], capture_output=True, text=True, timeout=60, check=False)
    text = out.stdout.strip()
    return text.splitlines()[-1] if text else "unknown"


#: Most seeds one command or study may name (each is at least one run).
MAX_SEEDS = 100_000


def parse_seeds(text: str | Iterable[int]) -> list[int]:
    """"1-20", "1,3,5", "1-3,7" or a list -> the seeds, in order, without repeats."""
    if not isinstance(text, str):
        seeds = [int(s) for s in text]
    else:
        seeds = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                if "-" in part:
                    a, b = part.split("-", 1)
                    lo, hi = int(a), int(b)
                else:
                    lo = hi = int(part)
            except ValueError:
                raise SeedsError(f"--seeds: {part!r} is not a seed or a range (write e.g. 1-20 or 1,4,9)") from None
            if hi < lo:
                raise SeedsError(f"--seeds: {part!r} counts down (write {hi}-{lo})")
            # Checked before the range is built: "1-10000000000" must not exhaust memory.
            if hi - lo + 1 + len(seeds) > MAX_SEEDS:
                raise SeedsError(f"--seeds: {part!r} makes more than {MAX_SEEDS} seeds (allowed: at most {MAX_SEEDS})")
            seeds.extend(range(lo, hi + 1))
    if len(seeds) > MAX_SEEDS:
        raise SeedsError(f"--seeds: {len(seeds)} seeds given (allowed: at most {MAX_SEEDS})")
    out: list[int] = []
    seen: set[int] = set()
    for s in seeds:
        if s < 0:
            raise SeedsError(f"--seeds: {s} is negative (seeds are 0 ... 2^64-1)")
        if s not in seen:
            seen.add(s)
            out.append(s)
    if not out:
        raise SeedsError("--seeds: no seed given")
    return out


# --------------------------------------------------------------------------- metrics


def our_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """manetlab's summary.json reduced to the shape `Ns2Metrics.to_dict()` has."""
    flows = []
    for f in summary["flows"]:
        row: dict[str, Any] = {
            "flow": f["flow"],
            "name": f["name"],
            "kind": f["kind"],
            "transport": f["transport"],
            "src": f["src"],
            "dst": f["dst"],
            "rx_packets": f["rx_packets"],
            "rx_bytes": f["rx_bytes"],
            "drops": f.get("drops") or {},
        }
        if f["kind"] == "cbr":
            row.update(
                tx_packets=f["tx_packets"],
                pdr=f["pdr"],
                throughput_kbps=f["throughput_kbps"],
                delay_mean_s=f["delay_mean_s"],
                jitter_mean_s=f["jitter_mean_s"],
            )
        else:
            tcp = f.get("tcp") or {}
            row.update(
                tx_packets=tcp.get("data_segments_sent", f["tx_packets"]),
                goodput_kbps=tcp.get("goodput_kbps", f["throughput_kbps"]),
                throughput_kbps=f["throughput_kbps"],
                highest_ack_segs=tcp.get("highest_ack_segs"),
                retransmissions=tcp.get("retransmissions"),
            )
        flows.append(row)
    drops: dict[str, int] = {}
    ctrl = 0
    for n in summary["nodes"]:
        ctrl += int(n.get("routing_ctrl_originated_pkts", 0)) + int(n.get("routing_ctrl_forwarded_pkts", 0))
        # ns-2's D lines count routing packets too (e.g. AODV requests at the end
        # of a ring, rtr.TTL): add our control-packet drops to the data ones.
        for part in ("drops", "ctrl_drops"):
            for k, v in (n.get(part) or {}).items():
                drops[k] = drops.get(k, 0) + int(v)
    return {"flows": flows, "routing_ctrl_pkts": ctrl, "drops": drops}


def _scalars(m: Mapping[str, Any], per_flow: bool = True) -> dict[str, float]:
    """One run's metrics as name -> number: aggregates first, then per flow."""
    out: dict[str, float] = {}
    tcp = [f for f in m["flows"] if f["kind"] == "ftp"]
    cbr = [f for f in m["flows"] if f["kind"] == "cbr"]
    if tcp:
        out["tcp_goodput_kbps"] = sum(f["goodput_kbps"] for f in tcp) / len(tcp)
        out["tcp_highest_ack_segs"] = sum(f["highest_ack_segs"] or 0 for f in tcp) / len(tcp)
        out["tcp_data_segments_sent"] = sum(f["tx_packets"] for f in tcp) / len(tcp)
    if cbr:
        tx = sum(f["tx_packets"] for f in cbr)
        rx = sum(f["rx_packets"] for f in cbr)
        out["cbr_pdr"] = rx / tx if tx else 0.0
        out["cbr_rx_packets"] = float(rx)
        d = [(f["delay_mean_s"], f["rx_packets"]) for f in cbr if f["delay_mean_s"] is not None and f["rx_packets"]]
        if d:
            out["cbr_delay_mean_s"] = sum(x * w for x, w in d) / sum(w for _, w in d)
    out["routing_ctrl_pkts"] = float(m["routing_ctrl_pkts"])
    if per_flow:
        for f in m["flows"]:
            p = f"flow{f['flow']}"
            if f["kind"] == "ftp":
                out[f"{p}.goodput_kbps"] = f["goodput_kbps"]
                out[f"{p}.highest_ack_segs"] = float(f["highest_ack_segs"] or 0)
            else:
                out[f"{p}.pdr"] = f["pdr"]
                if f["delay_mean_s"] is not None:
                    out[f"{p}.delay_mean_s"] = f["delay_mean_s"]
    return out


def _drop_scalars(ours: Mapping[str, int], theirs: Mapping[str, int]) -> list[tuple[str, float, float]]:
    keys = sorted(set(ours) | set(theirs))
    return [(f"drops.{k}", float(ours.get(k, 0)), float(theirs.get(k, 0))) for k in keys]


# --------------------------------------------------------------------------- one seed


# ns-2.35's DSDV can spin forever at one simulated instant (docs/ns2.md): the trace then
# stops growing while the process burns CPU. A run whose trace has not grown for this
# long is declared hung; a live ns-2 writes its trace in 4 KiB blocks far more often.
STALL_S = 120.0


def ns_time_limit_s(duration_s: float) -> float:
    """How long an ns-2 run of `duration_s` simulated seconds may take before it is
    ended as hung, whatever its trace does (a slow but live run ends well within it)."""
    return 300.0 + 5.0 * duration_s


def _run_ns(ns: str, ns_dir: Path, seed: int, limit_s: float, stall_s: float | None) -> tuple[int, str]:
    """Run ``ns run.tcl`` in `ns_dir`; (status, stderr or stdout). Ns2RunFailed when it
    outlives `limit_s` or its trace stops growing for `stall_s` seconds."""
    trace = ns_dir / "trace.tr"
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([ns, "run.tcl"], cwd=ns_dir, stdout=out, stderr=subprocess.STDOUT, text=True)
        start = last_growth = time.monotonic()
        size = -1
        try:
            while proc.poll() is None:
                time.sleep(0.2)
                now = time.monotonic()
                grown = trace.stat().st_size if trace.exists() else 0
                if grown != size:
                    size, last_growth = grown, now
                if now - start > limit_s:
                    raise Ns2RunFailed(f"seed {seed}: ns run.tcl did not finish within {limit_s:g} s (ns-2 hung; see docs/ns2.md)")
                # Armed once the trace has its first block: building a large network
                # (nodes, movement file) may take longer than stall_s before that.
                if stall_s is not None and size > 0 and now - last_growth > stall_s:
                    raise Ns2RunFailed(
                        f"seed {seed}: ns run.tcl stopped writing its trace for {stall_s:g} s at {size} bytes "
                        "(ns-2 hung; see docs/ns2.md)"
                    )
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        return proc.returncode, out.read()


def mac_drop_lines(trace: Path) -> dict[str, int]:
    """`D … MAC` lines of an ns-2-format trace by code (``mac.RET``, ``mac.COL``, ...)."""
    counts: dict[str, int] = {}
    for ev in iter_events(trace):
        if ev.op == "D":
            code = drop_code(ev.level, ev.reason)
            if code.startswith("mac."):
                counts[code] = counts.get(code, 0) + 1
    return counts


def _trace_file(out_dir: Path) -> Path:
    """The ns-2-format trace a run with `outputs.trace` wrote into `out_dir`."""
    found = sorted(out_dir.glob("*.tr"))
    if len(found) != 1:
        raise RuntimeError(f"expected one trace file in {printable(out_dir)}, found {printable([p.name for p in found])}")
    return found[0]


def _one_seed(
    data: dict[str, Any],
    source: str | None,
    seed: int,
    ns: str,
    keep_dir: str | None,
    timeout_s: float | None,
    mac_trace: bool = False,
    stall_s: float | None = STALL_S,
) -> list[tuple[int, str, float, float]]:
    """Run one seed in both simulators (in a worker process); long-form rows."""
    s = Scenario(data, source).with_overrides({"seed": seed})
    tmp = Path(tempfile.mkdtemp(prefix=f"manetlab-xcheck-{seed}-"))
    try:
        ours_dir = tmp / "manetlab"
        with_movement = s.with_overrides({"outputs.movement": True})
        if mac_trace:
            # MAC drops are compared as trace lines on both sides (ours: a MAC-level
            # trace in ns-2's format, counted by ns-2's rules below).
            with_movement = with_movement.with_overrides({"outputs.trace": "old", "outputs.trace_levels": ["mac"]})
        result = run(with_movement, out=ours_dir)
        ns_dir = Path(keep_dir) / f"seed{seed}" if keep_dir else tmp / "ns2"
        export_ns2(s, ns_dir, movement_file=ours_dir / "movement.tcl", mac_trace=mac_trace)
        limit = timeout_s if timeout_s is not None else ns_time_limit_s(s.duration_s)
        returncode, output = _run_ns(ns, ns_dir, seed, limit, stall_s)
        if returncode != 0 or not (ns_dir / "ports.txt").exists():
            # ns-2's own words, bounded and escaped: its output may quote the script.
            tail = " | ".join(excerpt(line, 200) for line in output.strip().splitlines()[-3:])
            raise Ns2RunFailed(f"seed {seed}: ns run.tcl failed in {printable(ns_dir)} (status {returncode}): {tail}")
        theirs = metrics_from_dir(ns_dir).to_dict()
        ours = our_metrics(result.summary)
        a, b = _scalars(ours), _scalars(theirs)
        rows = [(seed, k, a[k], b[k]) for k in a if k in b]
        ours_drops = dict(ours["drops"])
        # ns-2 traces MAC drops only with -macTrace ON: compare them only then, and
        # then line for line. Our summary's `mac.*` drops are packet ends, while a
        # `D … MAC` line is a frame event: ns-2 writes one for every frame its MAC
        # gives up (an RTS, a packet handed back to routing) or loses in a collision.
        ours_drops = {k: v for k, v in ours_drops.items() if not k.startswith("mac.")}
        if mac_trace:
            for k, v in mac_drop_lines(_trace_file(ours_dir)).items():
                ours_drops[k] = v
        rows += [(seed, k, x, y) for k, x, y in _drop_scalars(ours_drops, theirs["drops"])]
        if keep_dir is None:
            (ns_dir / "trace.tr").unlink(missing_ok=True)
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def crosscheck(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any],
    seeds: str | Iterable[int] = "1-20",
    jobs: int = 1,
    overrides: Overrides | None = None,
    ns: str | None = None,
    keep_dir: str | os.PathLike[str] | None = None,
    timeout_s: float | None = None,
    mac_trace: bool = False,
    stall_s: float | None = STALL_S,
    progress: bool | None = False,
) -> pd.DataFrame:
    """Per-seed metrics of manetlab and ns-2 for `scenario`: a long DataFrame with
    columns ``seed``, ``metric``, ``ours``, ``ns2``. `seeds` is "1-20"-style text or
    a list; `jobs` worker processes run seeds in parallel; `keep_dir` keeps every
    seed's ns-2 directory (script, trace, ports) under ``keep_dir/seed<N>``;
    `mac_trace` turns on ns-2's MAC trace so MAC drops (``mac.RET``, ``mac.COL``)
    are compared too (traces grow several-fold). A drop code seen in some seeds
    only counts 0 in the others. `timeout_s` bounds each ns-2 run (default
    300 s + 5 x the simulated duration) and `stall_s` (default 120; None: off) ends a run
    whose trace has not grown for that long: ns-2.35 can hang (DSDV, docs/ns2.md). A seed
    whose ns-2 run fails or hangs is left out of the table for both simulators and
    listed in ``df.attrs["failed"]`` ({seed: message}); if every seed fails,
    Ns2RunFailed is raised.
    `progress` (None: when stderr is a terminal; the CLI's default) shows a bar of
    finished seeds on stderr, with the last one's seed and time (ours + ns-2).
    Raises Ns2NotFound without ns, Ns2Unsupported for what ns-2 cannot build.
    """
    import pandas as pd

    ns_path = find_ns(ns)
    s = to_scenario(scenario, None, overrides)
    seed_list = parse_seeds(seeds)
    export_check(s)
    args = [
        (s.data, str(s.source) if s.source else None, seed, ns_path, str(keep_dir) if keep_dir else None, timeout_s, mac_trace, stall_s)
        for seed in seed_list
    ]
    rows: list[tuple[int, str, float, float]] = []
    failed: dict[int, str] = {}
    parts: dict[int, list[tuple[int, str, float, float]] | str] = {}
    from tqdm import tqdm

    bar = tqdm(total=len(seed_list), desc="crosscheck", unit="seed", file=sys.stderr, dynamic_ncols=True,
               disable=(None if progress is None else not progress))

    def done(seed: int, took_s: float, part: list[tuple[int, str, float, float]] | str) -> None:
        parts[seed] = part
        bar.set_postfix_str(f"seed {seed} {'failed' if isinstance(part, str) else 'done'} ({took_s:.1f} s)", refresh=False)
        bar.update(1)
        bar.refresh()  # every finished seed shown, however close together they end

    try:
        if jobs <= 1 or len(seed_list) == 1:
            for a in args:
                done(a[2], *_one_seed_timed(a))
        else:
            import multiprocessing

            # spawn: no fork of a process that may hold threads (pandas, the core's runs).
            with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = {pool.submit(_one_seed_timed, a): a[2] for a in args}
                for fut in as_completed(futures):  # as they finish, for the progress bar; the table keeps seed order
                    done(futures[fut], *fut.result())
    finally:
        bar.close()
    for seed in seed_list:
        part = parts[seed]
        if isinstance(part, str):
            failed[seed] = part
        else:
            rows += part
    if not rows:
        raise Ns2RunFailed("every seed failed: " + "; ".join(failed.values()))
    seed_list = [sd for sd in seed_list if sd not in failed]
    # A drop code that some seeds never saw is a count of 0 there.
    drop_keys = sorted({m for _, m, _, _ in rows if m.startswith("drops.")})
    seen = {(sd, m) for sd, m, _, _ in rows}
    rows += [(sd, k, 0.0, 0.0) for sd in seed_list for k in drop_keys if (sd, k) not in seen]
    df = pd.DataFrame(rows, columns=["seed", "metric", "ours", "ns2"])
    order = {m: i for i, m in enumerate(dict.fromkeys(m for _, m, _, _ in rows if not m.startswith("drops.")))}
    order.update({k: len(order) + i for i, k in enumerate(drop_keys)})
    df["_o"] = df["metric"].map(order)
    df = df.sort_values(["_o", "seed"], kind="stable").drop(columns="_o").reset_index(drop=True)
    df.attrs["failed"] = failed
    return df


def _one_seed_timed(a: tuple[Any, ...]) -> tuple[float, list[tuple[int, str, float, float]] | str]:
    """`_one_seed_safe` and its wall time (s), measured where it ran."""
    t0 = time.monotonic()
    part = _one_seed_safe(a)
    return time.monotonic() - t0, part


def _one_seed_safe(a: tuple[Any, ...]) -> list[tuple[int, str, float, float]] | str:
    """One seed; an ns-2 failure becomes its message (the other seeds still count)."""
    try:
        return _one_seed(*a)
    except Ns2RunFailed as e:
        return str(e)


def export_check(s: Scenario) -> None:
    """Refuse early (Ns2Unsupported) what export would refuse, before any run."""
    from manetlab.ns2.export import _plan

    _plan(s)


# --------------------------------------------------------------------------- statistics


# Student-t quantile and the paired CI live in manetlab.stats (shared with studies);
# re-exported here for existing callers.


def summarize(df: pd.DataFrame, per_flow: bool = True) -> pd.DataFrame:
    """One row per metric: n, ours (mean), ns2 (mean), ratio ours/ns2, and the 95 %
    CI of the paired difference ours − ns2 (diff, ci_low, ci_high)."""
    import pandas as pd

    rows = []
    order = list(dict.fromkeys(df["metric"]))
    for metric in order:
        if not per_flow and metric.startswith("flow"):
            continue
        g = df[df["metric"] == metric]
        ours, theirs = g["ours"].astype(float).tolist(), g["ns2"].astype(float).tolist()
        mo, mt = sum(ours) / len(ours), sum(theirs) / len(theirs)
        diff, lo, hi = paired_ci(ours, theirs)
        rows.append(
            {
                "metric": metric,
                "n": len(g),
                "ours": mo,
                "ns2": mt,
                "ratio": mo / mt if mt != 0 else (1.0 if mo == 0 else math.inf),
                "diff": diff,
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return pd.DataFrame(rows, columns=["metric", "n", "ours", "ns2", "ratio", "diff", "ci_low", "ci_high"])


def format_summary(table: pd.DataFrame) -> str:
    """The summary as an aligned text table (what `manetlab crosscheck` prints)."""

    def g(v: object) -> str:
        if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
            return str(v)
        return f"{v:.4g}"

    head = ["metric", "n", "ours", "ns-2", "ratio", "ours-ns2 [95% CI]"]
    body = [
        [excerpt(r.metric, 80), str(r.n), g(r.ours), g(r.ns2), g(r.ratio), f"{g(r.diff)} [{g(r.ci_low)}, {g(r.ci_high)}]"]
        for r in table.itertuples()
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))) for row in [head, *body]]
    return "\n".join(lines)


__all__ += ["format_summary", "Ns2Unsupported", "export_check"]
