"""Study files: a base scenario, axes to vary, seeds, and derived quantities.

A study file is TOML, as strict as a scenario file: unknown keys, wrong types and
values that lead nowhere are `ScenarioError`s with the one-line
``key.path: what is wrong (allowed: ...)`` wording, and every grid cell's
scenario is validated by the core before anything runs (docs/studies.md).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from manetlab import _core
from manetlab.scenario import (
    Scenario,
    ScenarioError,
    _NotReadable,
    _parse_path,
    _plain,
    _read,
    apply_overrides,
    check_name,
    excerpt,
    key_text,
    resolve_named,
    show,
)

__all__ = ["Cell", "Derived", "SeedHook", "StudySpec", "load_study", "metric_names_of", "metric_schema"]

TOP_KEYS = ("name", "description", "scenario", "set", "grid", "zip", "seeds", "metrics", "derived")
DERIVED_KEYS = ("name", "kind", "metric", "axis", "new", "base")
DERIVED_KINDS = ("improvement_pct", "difference")
# SQLite integers are signed 64-bit; seeds beyond that are not needed in practice.
MAX_SEED = 2**63 - 1
# Every cell is validated when the study is loaded; bounds keep loading (and planning) finite.
MAX_CELLS = 10_000
MAX_RUNS = 1_000_000


@dataclass(frozen=True)
class Derived:
    """A paired quantity per (other axes, seed): `new` vs `base` of `axis`, on `metric`."""

    name: str
    kind: str
    metric: str
    axis: str
    new: Any
    base: Any


@dataclass(frozen=True)
class SeedHook:
    """Scenario overrides that depend on the seed only, e.g. the flow endpoints of
    a paper's "10 random pairs" drawn per movement scenario.

    ``overrides(seed)`` must be a pure function of the seed; every cell of a seed
    gets the same overrides, so the runs a study pairs by seed still see the same
    scenario apart from the axes (common random numbers). ``name`` stands for the
    rule in the store key (each cell's hash): change it whenever the rule changes,
    so runs drawn by an old rule are not mistaken for new ones.
    """

    name: str
    overrides: Callable[[int], dict[str, Any]]


@dataclass
class Cell:
    """One point of the grid: its axis values and its validated scenario (seed not set)."""

    index: int
    values: dict[str, Any]
    scenario: Scenario
    scenario_hash: str

    def label(self) -> str:
        return ", ".join(f"{k}={_show(v)}" for k, v in self.values.items()) or "(base)"


@dataclass
class StudySpec:
    name: str
    description: str | None
    source: Path | None
    base: Scenario
    base_data: dict[str, Any]
    axes: list[dict[str, list[Any]]]  # one dict per axis; a zipped axis has several keys
    seeds: list[int]
    metrics: list[str] | None
    derived: list[Derived]
    cells: list[Cell] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    seed_hook: SeedHook | None = None

    def scenario_for(self, cell: Cell, seed: int) -> Scenario:
        """The scenario the run (cell, seed) simulates: the cell's, with the seed
        and the seed hook's overrides applied."""
        extra = self.seed_hook.overrides(seed) if self.seed_hook is not None else {}
        return cell.scenario.with_overrides({**extra, "seed": seed})

    @property
    def axis_keys(self) -> list[str]:
        return [k for ax in self.axes for k in ax]

    @property
    def n_runs(self) -> int:
        return len(self.cells) * len(self.seeds)

    def manifest(self) -> dict[str, Any]:
        """What the store records about the study (base scenario, axes, seeds)."""
        return {
            "name": self.name,
            "description": self.description,
            "source": str(self.source) if self.source else None,
            "base_scenario": self.base.normalized,
            "axes": self.axes,
            "seeds": self.seeds,
            "metrics": self.metrics,
            "derived": [d.__dict__ for d in self.derived],
            "seed_hook": self.seed_hook.name if self.seed_hook is not None else None,
            "cells": [{"index": c.index, "values": c.values, "scenario_hash": c.scenario_hash} for c in self.cells],
        }


def load_study(
    source: str | os.PathLike[str] | Mapping[str, Any],
    base_dir: str | os.PathLike[str] | None = None,
    seed_hook: SeedHook | None = None,
    *,
    allow_outside: bool = False,
) -> StudySpec:
    """Read and validate a study (a TOML file, or a dict with `base_dir` for relative
    paths); `seed_hook` adds per-seed overrides (Python API only, see `SeedHook`).
    The scenario file a study names, and the files that scenario names, must lie
    inside the study's (or scenario's) folder tree unless `allow_outside`."""
    if isinstance(source, Mapping):
        raw = _plain(source, "")
        path = None
        folder = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        path = Path(source)
        raw = _read(path)
        folder = path.resolve().parent
    if not isinstance(raw, dict):
        raise ScenarioError("(top level): a study is a table of keys")
    if is_scenario_file(raw):
        raise ScenarioError(scenario_file_message(raw, path))
    _no_unknown(raw, TOP_KEYS, "")
    name = raw.get("name", path.stem if path else "study")
    check_name("name", name)
    description = raw.get("description")
    if description is not None:
        _want(description, str, "description", "a string")

    base_data, base_source = _base(raw, folder, path, allow_outside)
    sets = raw.get("set", {})
    _want(sets, dict, "set", "a table of key.path = value")
    set_flat = _flatten(sets, "set")
    base_data = apply_overrides(base_data, set_flat)
    base = Scenario(base_data, base_source, allow_outside=allow_outside)

    axes = _axes(raw)
    seeds = _seeds(raw.get("seeds", [base.seed]))
    metrics = raw.get("metrics")
    if metrics is not None and (not isinstance(metrics, list) or not metrics or not all(isinstance(m, str) for m in metrics)):
        raise ScenarioError("metrics: expected a non-empty list of metric names (e.g. [\"flow0.throughput_kbps\"])")
    derived = _derived(raw.get("derived", []), axes)

    spec = StudySpec(name, description, path, base, base_data, axes, seeds, metrics, derived, raw=raw, seed_hook=seed_hook)
    if seed_hook is not None:
        clash = sorted(set(seed_hook.overrides(seeds[0])) & (set(spec.axis_keys) | {"seed"}))
        if clash:
            raise ScenarioError(f"seed hook {_show(seed_hook.name)}: sets {', '.join(clash)}, which the study varies (allowed: keys no axis varies)")
    spec.cells = _cells(spec, base_source)
    _check_metrics(spec)
    return spec


# ----------------------------------------------------------------------------- which kind of file

#: Keys only a study has (besides `scenario`), and keys of a scenario a study lacks.
STUDY_KEYS = ("seeds", "grid", "zip", "set", "metrics", "derived")
SCENARIO_KEYS = ("nodes", "flows", "duration_s")


def is_study_file(raw: Any) -> bool:
    """A study's contents given where a scenario is wanted: a table naming a
    `scenario`, without the `nodes` every scenario has."""
    return isinstance(raw, dict) and "scenario" in raw and "nodes" not in raw


def is_scenario_file(raw: Any) -> bool:
    """A scenario's contents given where a study is wanted: `nodes`, `flows` or
    `duration_s`, and no `scenario` key."""
    return isinstance(raw, dict) and "scenario" not in raw and any(k in raw for k in SCENARIO_KEYS)


def _command(*words: str | os.PathLike[str]) -> str:
    import shlex

    from manetlab.textsafe import excerpt as cut

    return cut(shlex.join(str(w) for w in words), 300)


def study_file_message(raw: dict[str, Any], path: str | os.PathLike[str]) -> str:
    """One line: `path` is a study file, and the command that takes it."""
    from manetlab.safeio import shown

    has = [k for k in STUDY_KEYS if k in raw]
    what = f"a scenario and {', '.join(has)}" if has else "a scenario"
    return f"{shown(path)}: this is a study file (it names {what}); run it with: {_command('manetlab', 'study', 'run', path)}"


def scenario_file_message(raw: dict[str, Any], path: str | os.PathLike[str] | None) -> str:
    """One line: `path` is a scenario file, and the commands that take it (a
    study given as a table, `path` None: it is a scenario, not a study)."""
    from manetlab.safeio import shown

    has = ", ".join(k for k in SCENARIO_KEYS if k in raw)
    if path is None:
        return (f"(top level): this is a scenario (it has {has} and no scenario key), not a study; "
                f"a study names its base scenario: scenario = a file path or a table (docs/studies.md)")
    return (f"{shown(path)}: this is a scenario file (it has {has} and no scenario key); run it with: "
            f"{_command('manetlab', 'run', path)}, or name it in a study file: scenario = \"<its path>\" (docs/studies.md)")


def study_file_error(path: str | os.PathLike[str]) -> ScenarioError | None:
    """For a scenario command whose file failed to load: a ScenarioError saying
    the file is a study (`study_file_message`), or None if it is not one (or
    cannot be read: the first error then stands)."""
    try:
        raw = _read(Path(path))
    except (ScenarioError, OSError, ValueError):
        return None
    return ScenarioError(study_file_message(raw, path)) if is_study_file(raw) else None


# ----------------------------------------------------------------------------- parts


def _base(raw: dict[str, Any], folder: Path, study_path: Path | None, allow_outside: bool = False) -> tuple[dict[str, Any], Path | None]:
    if "scenario" not in raw:
        raise ScenarioError("scenario: missing (allowed: a scenario file path relative to the study file, or an inline [scenario] table)")
    sc = raw["scenario"]
    if isinstance(sc, str):
        # Relative to the study's folder, and inside its tree (symbolic links resolved).
        try:
            p = resolve_named(folder, sc, allow_outside)
        except FileNotFoundError:
            raise ScenarioError(f"scenario: {show(sc)} does not exist (looked for {excerpt(str(folder / sc), 200)})") from None
        except _NotReadable as e:
            raise ScenarioError(f"scenario: cannot read {show(sc)}: {e}") from None
        except (OSError, RuntimeError) as e:
            raise ScenarioError(f"scenario: cannot read {show(sc)} ({getattr(e, 'strerror', None) or e})") from None
        try:
            data = _read(p)
        except ScenarioError as e:
            raise ScenarioError(f"scenario: {str(e).removeprefix('(file): ')}") from None
        return data, p
    if isinstance(sc, dict):
        # Files an inline scenario names (a movement file) are relative to the study file.
        return copy.deepcopy(sc), study_path if study_path is not None else folder / "study.toml"
    raise ScenarioError(f"scenario: {_show(sc)} is not a path or a table (allowed: a file path, or an inline [scenario] table)")


def _flatten(table: dict[str, Any], where: str) -> dict[str, Any]:
    """``{"mobility": {"max_speed_mps": x}, "flows[0].transport": y}`` ->
    ``{"mobility.max_speed_mps": x, "flows[0].transport": y}``: nested TOML tables
    and quoted dotted keys are the same thing. A value that is a list (or anything
    not a table) ends the path."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        path = k
        try:
            _parse_path(path)
        except ScenarioError:
            raise ScenarioError(f"{key_text(f'{where}.{k}')}: not a key path (allowed: names joined by dots, with [N] list indices, e.g. \"flows[0].transport\")") from None
        if isinstance(v, dict):
            for kk, vv in _flatten(v, f"{where}.{k}").items():
                out[f"{path}.{kk}"] = vv
        else:
            out[path] = v
    return out


def _axes(raw: dict[str, Any]) -> list[dict[str, list[Any]]]:
    axes: list[dict[str, list[Any]]] = []
    seen: set[str] = set()

    def check_values(key: str, values: Any, where: str, distinct: bool = True) -> list[Any]:
        at, shown = key_text(where), key_text(key)
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"{at}: {_show(values)} is not a non-empty list of values (write {shown} = [a, b, ...])")
        if key in seen:
            raise ScenarioError(f"{at}: {shown} is varied twice (allowed: each key in one axis)")
        if key == "seed":
            raise ScenarioError(f"{at}: vary seeds with the top-level seeds key (e.g. seeds = \"1-50\")")
        texts = [json.dumps(v, sort_keys=True) for v in values]
        dup = next((values[i] for i, t in enumerate(texts) if texts.index(t) != i), None)
        if distinct and len(set(texts)) != len(texts):
            raise ScenarioError(f"{at}: {_show(dup)} appears twice (allowed: distinct values)")
        seen.add(key)
        return values

    grid = raw.get("grid", {})
    _want(grid, dict, "grid", "a table of key.path = [values]")
    for key, values in _flatten(grid, "grid").items():
        axes.append({key: check_values(key, values, f"grid.{key}")})
    zips = raw.get("zip", [])
    if isinstance(zips, dict):
        zips = [zips]
    if not isinstance(zips, list):
        raise ScenarioError("zip: expected [[zip]] tables of key.path = [values] of equal length")
    for i, z in enumerate(zips):
        _want(z, dict, f"zip[{i}]", "a table of key.path = [values]")
        flat = _flatten(z, f"zip[{i}]")
        if not flat:
            raise ScenarioError(f"zip[{i}]: empty (allowed: two or more key.path = [values] of equal length)")
        # A zipped axis's values are its tuples: a key may repeat a value (a list of
        # chosen cells), the tuples may not.
        ax = {k: check_values(k, v, f"zip[{i}].{k}", distinct=len(flat) == 1) for k, v in flat.items()}
        lengths = {k: len(v) for k, v in ax.items()}
        if len(set(lengths.values())) != 1:
            raise ScenarioError(f"zip[{i}]: lists differ in length ({', '.join(f'{k}: {n}' for k, n in lengths.items())}); zipped values vary together")
        tuples = [json.dumps([ax[k][j] for k in ax], sort_keys=True) for j in range(len(next(iter(ax.values()))))]
        dup_at = next((j for j, t in enumerate(tuples) if tuples.index(t) != j), None)
        if dup_at is not None:
            raise ScenarioError(f"zip[{i}]: the values at positions {tuples.index(tuples[dup_at])} and {dup_at} are the same in every key (allowed: distinct combinations)")
        axes.append(ax)
    return axes


def _seeds(value: Any) -> list[int]:
    from manetlab.ns2.crosscheck import SeedsError, parse_seeds

    if isinstance(value, bool) or not isinstance(value, (str, int, list)):
        raise ScenarioError(f"seeds: {_show(value)} is not seeds (allowed: \"1-50\", \"1,4,9\", an integer, or a list of integers)")
    if isinstance(value, int):
        value = [value]
    if isinstance(value, list) and not all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        raise ScenarioError(f"seeds: {_show(value)} is not a list of integers")
    try:
        seeds = parse_seeds(value)
    except SeedsError as e:
        raise ScenarioError("seeds: " + str(e).removeprefix("--seeds: ")) from None
    big = [s for s in seeds if s > MAX_SEED]
    if big:
        raise ScenarioError(f"seeds: {big[0]} is out of range (allowed: 0 ... 2^63-1 in a study)")
    return seeds


def _derived(value: Any, axes: list[dict[str, list[Any]]]) -> list[Derived]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise ScenarioError("derived: expected [[derived]] tables (name, metric, axis, new, base)")
    out: list[Derived] = []
    names: set[str] = set()
    axis_values = {k: v for ax in axes for k, v in ax.items()}
    for i, d in enumerate(value):
        where = f"derived[{i}]"
        _want(d, dict, where, "a table")
        _no_unknown(d, DERIVED_KEYS, where)
        for k in ("name", "metric", "axis", "new", "base"):
            if k not in d:
                raise ScenarioError(f"{where}.{k}: missing (a derived quantity needs name, metric, axis, new, base)")
        check_name(f"{where}.name", d["name"])
        _want(d["metric"], str, f"{where}.metric", "a metric name, e.g. \"flow0.highest_ack_segs\"")
        _want(d["axis"], str, f"{where}.axis", "an axis key of the grid, e.g. \"flows[0].transport\"")
        if d["name"] in names:
            raise ScenarioError(f"{where}.name: {_show(d['name'])} is used twice")
        names.add(d["name"])
        kind = d.get("kind", "improvement_pct")
        if kind not in DERIVED_KINDS:
            raise ScenarioError(f"{where}.kind: {_show(kind)} is not a kind (allowed: {', '.join(DERIVED_KINDS)})")
        axis = d["axis"]
        if axis not in axis_values:
            allowed = ", ".join(axis_values) or "none: the study has no axes"
            raise ScenarioError(f"{where}.axis: {_show(axis)} is not an axis of this study (allowed: {allowed})")
        for k in ("new", "base"):
            if d[k] not in axis_values[axis]:
                raise ScenarioError(f"{where}.{k}: {_show(d[k])} is not a value of {axis} (allowed: {', '.join(_show(v) for v in axis_values[axis])})")
        if d["new"] == d["base"]:
            raise ScenarioError(f"{where}.new: same as base ({_show(d['new'])})")
        out.append(Derived(d["name"], kind, d["metric"], axis, d["new"], d["base"]))
    return out


def _cells(spec: StudySpec, base_source: Path | None) -> list[Cell]:
    """Every combination of the axes (grid axes in file order, then zipped axes),
    each cell's scenario validated by the core now, before any run."""
    n_cells = math.prod(len(next(iter(ax.values()))) for ax in spec.axes)
    if n_cells > MAX_CELLS:
        raise ScenarioError(f"grid: {n_cells} cells (the product of the axes' lengths) is out of range (allowed: at most {MAX_CELLS})")
    if n_cells * len(spec.seeds) > MAX_RUNS:
        raise ScenarioError(f"seeds: {n_cells} cells x {len(spec.seeds)} seeds = {n_cells * len(spec.seeds)} runs is out of range (allowed: at most {MAX_RUNS} runs)")
    choices = [[{k: ax[k][i] for k in ax} for i in range(len(next(iter(ax.values()))))] for ax in spec.axes]
    cells = []
    for idx, combo in enumerate(itertools.product(*choices)):
        values: dict[str, Any] = {}
        for part in combo:
            values.update(part)
        try:
            sc = Scenario(apply_overrides(spec.base_data, values), base_source, allow_outside=spec.base.allow_outside).with_overrides({"seed": spec.seeds[0]})
            for s in (min(spec.seeds), max(spec.seeds)):
                data = apply_overrides(sc.data, spec.seed_hook.overrides(s)) if spec.seed_hook is not None else sc.data
                _core.validate(json.dumps({**data, "seed": s}), str(base_source.resolve().parent) if base_source else None, sc.allow_outside)
        except ScenarioError as e:
            where = ", ".join(f"{k}={_show(v)}" for k, v in values.items())
            msg = " ".join(str(e).split())
            raise ScenarioError(f"{msg} (in grid cell {where})" if where else msg) from None
        cells.append(Cell(idx, values, sc, scenario_hash(sc, spec.seed_hook)))
    return cells


def scenario_hash(s: Scenario, seed_hook: SeedHook | None = None) -> str:
    """SHA-256 of the normalised scenario without its seed: the run's content key.
    A seed hook's name is part of it (its overrides differ per seed, so the seed
    and the hook's rule together say what the run simulates)."""
    n = dict(s.normalized)
    n.pop("seed", None)
    if seed_hook is not None:
        n["__seed_hook__"] = seed_hook.name
    return hashlib.sha256(json.dumps(n, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


_METRIC = re.compile(r"(flow(\d+)|nodes|total)\.([A-Za-z0-9_.]+)|events|jain_throughput")

# The metric schema: the names `metrics_of` (study/executor.py) gives a run of a
# scenario, known from the scenario's normalised form alone, without a run. It
# mirrors the core's summary (crates/manetlab-core/src/metrics.rs: FlowSummary,
# TcpFlowSummary, NodeSummary, RoutingSummary, DropReason::PACKET_DROPS);
# tests/test_polish35.py checks it against runs with every kind of flow, routing
# protocol and MAC, so a field added to the core and not here fails a test.
FLOW_FIELDS = (
    "tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "delivered_packets", "dropped_packets", "in_flight_packets",
    "dup_rx_packets", "copy_drop_packets", "lost_packets", "pdr", "throughput_kbps", "throughput_run_kbps",
    "delay_mean_s", "delay_min_s", "delay_max_s", "jitter_mean_s",
    "ctrl_tx_packets", "ctrl_delivered_packets", "ctrl_dropped_packets", "ctrl_in_flight_packets",
)
#: FTP (TCP) flows only: the flow's ``tcp`` fields, unprefixed.
TCP_FIELDS = (
    "established_s", "completion_s", "data_segments_sent", "data_bytes_sent", "retransmissions", "timeouts",
    "fast_retransmits", "highest_ack_segs", "highest_ack_bytes", "goodput_kbps", "acks_sent",
    "duplicate_segments_received", "out_of_order_segments_received", "final_cwnd_segs", "final_ssthresh_segs",
    "final_srtt_s", "final_rto_s", "drops_detected", "paced_holds", "route_freezes", "route_probes",
)
#: ``[mac] kind = "frn"`` only.
FRN_FLOW_FIELDS = ("delivered_per_slot",)
#: ``flow<N>.drops_<layer.CODE>``: every reason, 0 when none.
DROP_KEYS = (
    "ifq.IFQ", "ifq.RED", "rtr.NRTE", "rtr.TTL", "rtr.TOUT", "rtr.IFQ", "rtr.LOOP", "rtr.CBK",
    "link.ERR", "link.LNK", "node.OFF", "mac.RET", "ifq.ARP", "rtr.LIFE",
)
NODE_FIELDS = (
    "originated_packets", "received_packets", "delivered_packets", "forwarded_packets", "sent_packets",
    "dropped_packets", "in_flight_packets", "mac_frames", "mac_frames_failed", "mac_retries", "mac_collisions",
    "mac_duplicates", "ifq_max_pkts",
)
#: Every routing protocol but "static".
ROUTING_FIELDS = (
    "routing_ctrl_originated_pkts", "routing_ctrl_originated_bytes", "routing_ctrl_forwarded_pkts",
    "routing_ctrl_forwarded_bytes", "routing_ctrl_received_pkts", "routing_discoveries", "routing_discoveries_failed",
    "routing_request_retries", "routing_routes_found", "routing_route_hops_mean", "routing_discovery_time_mean_s",
    "routing_route_breaks", "routing_local_repairs", "routing_local_repairs_failed", "routing_duplicate_requests",
    "routing_salvaged", "routing_replies_from_cache", "routing_gratuitous_replies",
)
#: ``routing_sent_<TYPE>`` and ``routing_received_<TYPE>`` per protocol.
ROUTING_KINDS = {
    "aodv": ("RREQ", "RREP", "RERR", "HELLO"),
    "dsr": ("RREQ", "RREP", "RERR"),
    "dsdv": ("FULL_DUMP", "INCREMENTAL"),
    "frn": ("CONFIG", "PROBE", "ERSN", "ERDN"),
}
RUN_METRICS = (
    "total.tx_packets", "total.rx_packets", "total.tx_bytes", "total.rx_bytes", "total.throughput_kbps", "total.pdr",
    "events", "jain_throughput",
)


def metric_schema(normalized: Mapping[str, Any]) -> set[str]:
    """Every metric name a run of this (normalised) scenario can have
    (`metrics_of`, docs/studies.md#metrics), from the scenario alone: per flow
    (by index; TCP fields for FTP flows, ``delivered_per_slot`` with the FRN MAC),
    per node (routing counters unless routing is static) and per run. A name
    here may still be missing from a run that could not measure it (a route's
    mean hop count when no route was found): such a value is NaN in the tables."""
    names = set(RUN_METRICS)
    frn = (normalized.get("mac") or {}).get("kind") == "frn"
    for i, f in enumerate(normalized.get("flows") or []):
        fields = FLOW_FIELDS + (TCP_FIELDS if f.get("kind") == "ftp" else ()) + (FRN_FLOW_FIELDS if frn else ())
        names.update(f"flow{i}.{k}" for k in fields)
        names.update(f"flow{i}.drops_{k}" for k in DROP_KEYS)
    if (normalized.get("nodes") or {}).get("count", 0):
        names.update(f"nodes.{k}" for k in NODE_FIELDS)
        protocol = (normalized.get("routing") or {}).get("protocol") or "static"
        if protocol != "static":
            names.update(f"nodes.{k}" for k in ROUTING_FIELDS)
            for kind in ROUTING_KINDS.get(protocol, ()):
                names.update((f"nodes.routing_sent_{kind}", f"nodes.routing_received_{kind}"))
    return names


def metric_names_of(spec: StudySpec) -> set[str]:
    """The metric names this study's runs produce: the union of every cell's
    `metric_schema` (an axis may change a flow's kind or the routing protocol)."""
    names: set[str] = set()
    seen: set[str] = set()
    for c in spec.cells:
        n = c.scenario.normalized
        # What the schema depends on: the flows' kinds, the routing protocol, the MAC, whether there are nodes.
        key = json.dumps([[f.get("kind") for f in n.get("flows") or []], (n.get("routing") or {}).get("protocol"),
                          (n.get("mac") or {}).get("kind"), bool((n.get("nodes") or {}).get("count", 0))])
        if key not in seen:
            seen.add(key)
            names |= metric_schema(n)
    return names


#: Most names an unknown-metric message lists.
MAX_LISTED = 12


def _check_metrics(spec: StudySpec) -> None:
    """Every name in `metrics` and `[[derived]]` against the study's metric
    schema, before any run, whatever the scenario (no probe run)."""
    wanted = [(f"metrics[{i}]", m) for i, m in enumerate(spec.metrics or [])]
    wanted += [(f"derived[{i}].metric", d.metric) for i, d in enumerate(spec.derived)]
    check_metric_names(spec, wanted)


def check_metric_names(spec: StudySpec, wanted: list[tuple[str, str]]) -> None:
    """Each (where, name) of `wanted` against the study's metric schema
    (`metric_names_of`): a ScenarioError ``where: ... (allowed: ...)`` for the
    first name that is not a metric of the study."""
    if not wanted:
        return
    flows = spec.base.normalized.get("flows") or []
    n_flows = len(flows)
    known: set[str] | None = None
    for where, m in wanted:
        mm = _METRIC.fullmatch(m)
        if not mm:
            named = next((i for i, f in enumerate(flows) if f.get("name") and m.startswith(f"{f['name']}.")), None)
            if named is not None:
                field = m[len(flows[named]["name"]) + 1:]
                use = f"flow{named}.{field}" if f"flow{named}.{field}" in metric_names_of(spec) else f"flow{named}.<field>"
                raise ScenarioError(f"{where}: {_show(m)} is not a metric name: flows are named by index in metrics (allowed: {_show(use)} for flow {_show(flows[named]['name'])})")
            raise ScenarioError(f"{where}: {_show(m)} is not a metric name (allowed: flow<N>.<field>, nodes.<field>, total.<field>, events, jain_throughput; docs/studies.md#metrics)")
        if mm.group(2) is not None and int(mm.group(2)) >= n_flows:
            # (Wording kept as tests/test_study.py states it, "1 flows" included.)
            has = f"{n_flows} flows (flow0 ... flow{n_flows - 1})" if n_flows else "no flows"
            raise ScenarioError(f"{where}: {_show(m)}: the scenario has {has}")
        if known is None:
            known = metric_names_of(spec)
        if m not in known:
            field = mm.group(3)
            if mm.group(2) is not None and field in TCP_FIELDS:
                why = f"; a TCP field, and flow {mm.group(2)} is no FTP (TCP) flow in this study"
            elif mm.group(1) == "nodes" and (field in ROUTING_FIELDS or field.startswith(("routing_sent_", "routing_received_"))):
                why = "; a routing counter of another protocol, or of none (static routing has no counters)"
            elif field in FRN_FLOW_FIELDS:
                why = "; only with [mac] kind = \"frn\""
            else:
                why = ""
            raise ScenarioError(f"{where}: {_show(m)} is not a metric of this study{why} (allowed: {listed(m, known)})")


def listed(m: str, known: set[str]) -> str:
    """A bounded list of the names in `known` nearest to `m`: its closest
    matches first, then the others of its group (``flow0.``, ``nodes.``,
    ``total.``; everything when `m` names no group), at most MAX_LISTED, with
    how many more there are."""
    import difflib

    group = m.split(".", 1)[0] + "." if "." in m else ""
    pool = sorted(k for k in known if group and k.startswith(group)) or sorted(known)
    close = difflib.get_close_matches(m, pool, n=3, cutoff=0.75)
    # Then the group's fields before its per-reason drop counts (14 per flow).
    names = close + sorted((k for k in pool if k not in close), key=lambda k: (".drops_" in k, k))
    more = len(names) - MAX_LISTED
    shown = ", ".join(names[:MAX_LISTED])
    return f"{shown}, and {more} more: docs/studies.md#metrics" if more > 0 else shown


# ----------------------------------------------------------------------------- helpers


def _no_unknown(table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for k in table:
        if k not in allowed:
            path = f"{where}.{k}" if where else k
            raise ScenarioError(f"{key_text(path)}: unknown key (allowed: {', '.join(allowed)})")


def _want(value: Any, typ: type, where: str, what: str) -> None:
    if not isinstance(value, typ) or (isinstance(value, bool) and typ is not bool):
        raise ScenarioError(f"{key_text(where)}: {_show(value)} is not {what}")


def _show(v: Any) -> str:
    """A value as a message may show it: bounded and escaped (`manetlab.scenario.show`)."""
    return show(v)
