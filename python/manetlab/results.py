"""Running a scenario and the tables it returns.

The core returns one JSON document (``summary.json``); `Result` keeps that exact
text, so what is written is byte-for-byte what the core produced, and derives
pandas tables from it. pandas is imported only when a table is asked for, which
keeps ``manetlab validate`` quick.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetlab import _core
from manetlab.scenario import Overrides, Scenario, apply_overrides, load_scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Result", "run"]

TABLES = ("flows", "nodes", "links")


def run(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    overrides: Overrides | None = None,
    out: str | os.PathLike[str] | None = None,
) -> Result:
    """Run `scenario` (a Scenario, a file path, or a dict) and return its Result.

    `seed` replaces the scenario's seed; `overrides` (``{"flows[0].rate_kbps": 100}``)
    are applied first and validated exactly like a file. The GIL is released
    while the core runs. Trace files the scenario's ``[outputs]`` asks for are
    written into `out` (default: a fresh temporary directory, ``result.output_dir``;
    `Result.write` copies them along).
    """
    ov = dict(overrides or {})
    if seed is not None:
        ov["seed"] = seed
    if isinstance(scenario, Scenario):
        s = scenario.with_overrides(ov) if ov else scenario
    elif isinstance(scenario, (str, os.PathLike)):
        s = load_scenario(scenario, ov)
    elif isinstance(scenario, Mapping):
        s = Scenario(apply_overrides(scenario, ov))
    else:
        raise TypeError(f"scenario must be a Scenario, a path or a dict, not {type(scenario).__name__}")
    wants_files = any(s.normalized.get("outputs", {}).get(k) for k in ("trace", "pcap", "pcap_nodes", "movement"))
    out_dir: Path | None = None
    if wants_files:
        out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="manetlab-"))
    summary = _core.run(s.to_json(), str(out_dir) if out_dir is not None else None)
    return Result(summary, s, out_dir)


class Result:
    """The results of one run.

    ``summary_json`` is the core's text (the bytes of summary.json), ``summary``
    the same parsed; ``flows``, ``nodes`` and ``links`` are DataFrames with one row
    per flow, node and link direction, the ``drops`` maps spread into
    ``drops_<layer.CODE>`` columns and the other maps (``in_flight``,
    ``ctrl_drops``, ``tcp``) into prefixed columns. The core writes every drop
    and holder key in every row (0 when none), so the columns are the same in
    every run and concatenated runs have 0, never NaN, where nothing happened.
    """

    def __init__(self, summary_json: str, scenario: Scenario | None = None, output_dir: Path | None = None) -> None:
        self.summary_json = summary_json
        self.summary: dict[str, Any] = json.loads(summary_json)
        self.scenario = scenario
        #: Where the run wrote its trace files (``summary["outputs"]``), if any.
        self.output_dir = output_dir

    @property
    def flows(self) -> pd.DataFrame:
        return _frame(self.summary["flows"])

    @property
    def nodes(self) -> pd.DataFrame:
        return _frame(self.summary["nodes"])

    @property
    def links(self) -> pd.DataFrame:
        return _frame(self.summary["links"])

    @property
    def timeseries(self) -> pd.DataFrame:
        """TCP time series (flows with ``tcp.trace = true``) in long form: one row per
        change, columns ``flow``, ``name``, ``t_s``, ``cwnd_segs``, ``ssthresh_segs``,
        ``rto_s``, ``srtt_s``, ``seq_segs``, ``ack_segs``. Empty without traces."""
        import pandas as pd

        parts = []
        for f in self.summary["flows"]:
            trace = (f.get("tcp") or {}).get("trace")
            if trace:
                df = pd.DataFrame(trace)
                df.insert(0, "name", f["name"])
                df.insert(0, "flow", f["flow"])
                parts.append(df)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["flow", "name", "t_s"])

    @property
    def packet_series(self) -> pd.DataFrame:
        """Per-flow received packets (``[outputs] series = true``): ``flow``, ``name``,
        ``t_s`` (arrival), ``delay_s`` and ``jitter_s`` = delay(i) − delay(i−1)
        (paper 004; NaN for a flow's first packet). Empty without series."""
        import pandas as pd

        series = (self.summary.get("series") or {}).get("flows", [])
        names = {f["flow"]: f["name"] for f in self.summary["flows"]}
        parts = []
        for s in series:
            if s["t_s"]:
                df = pd.DataFrame({"flow": s["flow"], "name": names[s["flow"]], "t_s": s["t_s"], "delay_s": s["delay_s"]})
                df["jitter_s"] = df["delay_s"].diff()
                parts.append(df)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["flow", "name", "t_s", "delay_s", "jitter_s"])

    @property
    def queue_series(self) -> pd.DataFrame:
        """Per-node interface-queue length (packets) over time: on every change, or
        every ``series_interval_s``. Empty without series."""
        import pandas as pd

        series = (self.summary.get("series") or {}).get("queues", [])
        parts = [pd.DataFrame({"node": q["node"], "t_s": q["t_s"], "len_pkts": q["len_pkts"]}) for q in series if q["t_s"]]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["node", "t_s", "len_pkts"])

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write summary.json and flows/nodes/links as .csv and .parquet into
        `out_dir` (created if needed); returns the paths written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        summary = out / "summary.json"
        summary.write_bytes(self.summary_json.encode("utf-8"))
        written = [summary]
        if self.scenario is not None:
            # The scenario as run (after overrides), so a result directory is self-describing.
            (out / "scenario.json").write_text(self.scenario.to_json(), encoding="utf-8")
            written.append(out / "scenario.json")
        tables = list(TABLES)
        if any((f.get("tcp") or {}).get("trace") for f in self.summary["flows"]):
            tables.append("timeseries")
        if self.summary.get("series"):
            tables += ["packet_series", "queue_series"]
        for name in tables:
            df = getattr(self, name)
            # "\n" whatever the OS, so equal runs give equal CSV bytes everywhere.
            df.to_csv(out / f"{name}.csv", index=False, lineterminator="\n")
            df.to_parquet(out / f"{name}.parquet", index=False)
            written += [out / f"{name}.csv", out / f"{name}.parquet"]
        for f in self.summary.get("outputs", []):
            # Trace files: already there when the run wrote into `out`, else copied.
            src, dst = self.output_dir / f["file"], out / f["file"]
            if src.resolve() != dst.resolve():
                shutil.copyfile(src, dst)
            written.append(dst)
        return written

    def table(self) -> str:
        """A per-flow summary table as text."""
        flows = self.summary["flows"]
        if not flows:
            return "(no flows)"
        head = ["flow", "name", "src→dst", "tx", "rx", "PDR", "throughput kbit/s", "mean delay ms", "jitter ms"]
        rows = [
            [
                str(f["flow"]),
                f["name"],
                f"{f['src']}→{f['dst']}",
                str(f["tx_packets"]),
                str(f["rx_packets"]),
                f"{f['pdr']:.3f}",
                f"{f['throughput_kbps']:.1f}",
                _ms(f["delay_mean_s"]),
                _ms(f["jitter_mean_s"]),
            ]
            for f in flows
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        left = {1, 2}  # name and src→dst read better left-aligned

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

        return "\n".join([line(head), *(line(r) for r in rows)])

    def __repr__(self) -> str:
        s = self.summary
        return f"<Result {s.get('scenario_name') or 'scenario'!r} seed={s['seed']} flows={len(s['flows'])} events={s['events']}>"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _flatten(row: dict[str, Any]) -> dict[str, Any]:
    """One table row: nested objects other than ``drops`` (a TCP flow's ``tcp``)
    become prefixed columns; time series stay out (they are ``timeseries``)."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict) and k != "drops":
            out.update({f"{k}_{kk}": vv for kk, vv in v.items() if kk != "trace"})
        else:
            out[k] = v
    return out


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    flat = [_flatten(r) for r in rows]
    # Columns: the core's field order (first seen across rows, since e.g. only TCP
    # flows have tcp_* fields), then one drops_<key> column per drop key, sorted
    # (the core lists every key in every row; a 0 fills in for older summaries).
    base: list[str] = []
    for r in flat:
        base += [k for k in r if k != "drops" and k not in base]
    drop_keys = sorted({k for r in flat for k in r.get("drops", {})})
    columns = base + [f"drops_{k}" for k in drop_keys]
    records = [[r.get(k) for k in base] + [r.get("drops", {}).get(k, 0) for k in drop_keys] for r in flat]
    df = pd.DataFrame.from_records(records, columns=columns)
    # Optional numbers (a delay when nothing was received) come as None; keep such
    # columns float64 with NaN rather than object, so CSV and Parquet agree on the type.
    for col in df.columns:
        if df[col].dtype == object and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in df[col]):
            df[col] = df[col].astype("float64")
    return df
