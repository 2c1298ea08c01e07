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

__all__ = ["Cell", "Derived", "SeedHook", "StudySpec", "load_study", "metric_names_of"]

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
    if metrics is not None:
        if not isinstance(metrics, list) or not metrics or not all(isinstance(m, str) for m in metrics):
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


def metric_names_of(spec: StudySpec) -> set[str] | None:
    """The metric names this study's runs produce, from a run of each cell cut to
    1 ms (cheap); None if such a probe cannot be made (the names are then checked
    as runs come in)."""
    from manetlab.study.executor import metrics_of

    names: set[str] = set()
    for c in spec.cells:
        try:
            probe = c.scenario.with_overrides({"duration_s": 0.001})
            names |= set(metrics_of(json.loads(_core.run(probe.to_json(), None))))
        except Exception:  # noqa: BLE001 - a probe that cannot run proves nothing
            return None
    return names


def _check_metrics(spec: StudySpec) -> None:
    wanted = [(f"metrics[{i}]", m) for i, m in enumerate(spec.metrics or [])]
    wanted += [(f"derived[{i}].metric", d.metric) for i, d in enumerate(spec.derived)]
    if not wanted:
        return
    n_flows = len(spec.base.normalized.get("flows", []))
    for where, m in wanted:
        mm = _METRIC.fullmatch(m)
        if not mm:
            raise ScenarioError(f"{where}: {_show(m)} is not a metric name (allowed: flow<N>.<field>, nodes.<field>, total.<field>, events, jain_throughput)")
        if mm.group(2) is not None and int(mm.group(2)) >= n_flows:
            raise ScenarioError(f"{where}: {_show(m)}: the scenario has {n_flows} flows (flow0 ... flow{n_flows - 1})")
    known = metric_names_of(spec)
    if known is None:
        return
    for where, m in wanted:
        # Drop counts appear only when something was dropped: any drops_ name of a flow is accepted.
        if m not in known and ".drops_" not in m:
            flow = m.split(".", 1)[0]
            near = sorted(k for k in known if k.startswith(flow + "."))[:12]
            raise ScenarioError(f"{where}: {_show(m)} is not a metric of this study (allowed e.g.: {', '.join(near)}; docs/studies.md#metrics)")


# ----------------------------------------------------------------------------- helpers


def _no_unknown(table: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for k in table:
        if k not in allowed:
            path = f"{where}.{k}" if where else k
            raise ScenarioError(f"{key_text(path)}: unknown key (allowed: {', '.join(allowed)})")


def _want(value: Any, typ: type, where: str, what: str) -> None:
    if not isinstance(value, typ) or isinstance(value, bool) and typ is not bool:
        raise ScenarioError(f"{key_text(where)}: {_show(value)} is not {what}")


def _show(v: Any) -> str:
    """A value as a message may show it: bounded and escaped (`manetlab.scenario.show`)."""
    return show(v)
