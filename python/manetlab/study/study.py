"""`Study`: plan, run (resumably), and summarise a study (docs/studies.md)."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetlab import safeio
from manetlab.plots import LEGEND_NAME_CHARS, TITLE_CHARS, _short, pyplot, save_figure
from manetlab.scenario import Scenario, ScenarioError
from manetlab.study.executor import DaskExecutor, LocalExecutor, Task, check_result, code_version, remove_staging
from manetlab.study.spec import Cell, SeedHook, StudySpec, load_study
from manetlab.study.store import Store, StoreError, StudyLock

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunReport", "Study"]

STAT_COLUMNS = ["n", "mean", "sd", "ci_low", "ci_high"]
TABLES = ("flows", "nodes", "links", "timeseries", "packet_series", "queue_series", "faults")


@dataclass
class RunReport:
    """What one `Study.run` did."""

    planned: int  # distinct (scenario, seed) runs in the study
    skipped: int  # already in the store for this code version
    ran: int = 0
    failed: int = 0
    retried: int = 0
    other_versions: dict[str, int] = field(default_factory=dict)


class Study:
    """A study file and its store.

        >>> s = manetlab.Study("examples/abra_study.toml")
        >>> s.run(jobs=2)
        >>> s.summary()          # mean, sd, 95 % CI per cell and metric
        >>> s.derived()          # the study's paired quantities

    `directory` holds the store (default ``results/<study file stem>``).
    `seed_hook` (`manetlab.study.SeedHook`) gives per-seed scenario overrides,
    the same in every cell (e.g. flow endpoints drawn per movement scenario).
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | Mapping[str, Any],
        directory: str | os.PathLike[str] | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        seed_hook: SeedHook | None = None,
        *,
        allow_outside: bool = False,
    ) -> None:
        self.spec: StudySpec = load_study(source, base_dir, seed_hook, allow_outside=allow_outside)
        stem = Path(source).stem if not isinstance(source, Mapping) else self.spec.name
        self.dir = Path(directory) if directory is not None else Path("results") / stem
        self.code_version = code_version()

    # ------------------------------------------------------------------ plan

    @property
    def cells(self) -> list[Cell]:
        return self.spec.cells

    def scenario_for(self, cell: Cell, seed: int) -> Scenario:
        """The scenario run (cell, seed) simulates (seed hook applied)."""
        return self.spec.scenario_for(cell, seed)

    def plan(self) -> list[tuple[Cell, int]]:
        """Every (cell, seed) of the study, seed-major (early seeds cover every cell first)."""
        return [(c, s) for s in self.spec.seeds for c in self.spec.cells]

    def _tasks(self, keys: set[tuple[str, int]] | None) -> list[Task]:
        tasks: dict[tuple[str, int], Task] = {}
        for cell, seed in self.plan():
            key = (cell.scenario_hash, seed)
            if key in tasks or (keys is not None and key not in keys):
                continue
            sc = self.spec.scenario_for(cell, seed)
            wants = any(sc.normalized.get("outputs", {}).get(k) for k in ("trace", "pcap", "pcap_nodes", "movement", "series"))
            out = str(self.dir / "runs" / f"{cell.scenario_hash[:16]}-seed{seed}") if wants else None
            tasks[key] = Task(cell.scenario_hash, seed, sc.to_json(), out)
        return list(tasks.values())

    # ------------------------------------------------------------------ run

    def run(
        self,
        jobs: int | None = None,
        scheduler: Any = None,
        force: bool = False,
        retry_failed: bool = False,
        progress: bool | None = None,
        executor: Any = None,
        wait: bool = False,
        on_wait: Any = None,
    ) -> RunReport:
        """Run what the store lacks (everything with `force`; failed runs again
        with `retry_failed`). `scheduler`: a Dask scheduler address or Client;
        otherwise `jobs` local worker processes (default: one per core).
        `progress`: None = a bar when stderr is a terminal.

        One process runs a study directory at a time (`StudyLock`): if another
        holds it, `StudyLocked` is raised at once, or with `wait` the call waits
        for it (`on_wait(pid)` is called first). A file-system failure (disk
        full, read-only) raises `StoreError`; every run committed before it
        stays in the store and the rest is run by the next call."""
        from tqdm import tqdm

        if executor is None:
            executor = DaskExecutor(scheduler) if scheduler is not None else LocalExecutor(jobs)
        wanted = {(c.scenario_hash, s) for c, s in self.plan()}
        with StudyLock(self.dir, wait=wait, on_wait=on_wait), Store(self.dir) as store:
            try:
                remove_staging(self.dir)  # left by runs killed mid-way; no run of ours writes now
            except OSError as e:
                raise StoreError(f"{self.dir / 'runs'}: cannot remove left-over staging folders: {e.strerror or e}") from None
            store.write_manifest(self.spec.manifest(), self.code_version, [(c.scenario_hash, c.scenario.to_json()) for c in self.cells])
            versions = store.versions()
            report = RunReport(planned=len(wanted), skipped=0, other_versions={v: n for v, n in versions.items() if v != self.code_version})
            if force:
                todo = wanted
            else:
                done = store.keys(self.code_version) if not retry_failed else store.keys(self.code_version, "ok")
                todo = wanted - done
            report.skipped = len(wanted) - len(todo)
            tasks = self._tasks(todo)
            failed_before = len((store.keys(self.code_version, "failed") & wanted) - todo)
            bar = tqdm(total=len(wanted), initial=report.skipped, desc=self.spec.name, unit="run", disable=(None if progress is None else not progress), file=sys.stderr, dynamic_ncols=True, smoothing=0.1)
            results = executor.map(tasks)
            try:
                bar.set_postfix(failed=failed_before, refresh=False)
                for task, raw in results:
                    if isinstance(raw, dict) and raw.get("status") == "failed" and raw.get("io_error"):
                        # Its trace files could not be written: not the run's fault, so
                        # not recorded; the study stops and a later run redoes it.
                        raise StoreError(" ".join(str(raw.get("error")).split())[:500])
                    # Trace files (if any) are in place and fsynced: only now is the row committed.
                    result = check_result(task, raw, self.code_version)
                    attempts = result.get("attempts")
                    store.put(task.scenario_hash, task.seed, self.code_version, result, attempts if isinstance(attempts, int) else task.attempts + 1)
                    report.ran += 1
                    report.retried += task.attempts > 0
                    if result["status"] != "ok":
                        report.failed += 1
                    bar.set_postfix(failed=failed_before + report.failed, refresh=False)
                    bar.update(1)
            finally:
                bar.close()
                close = getattr(results, "close", None)
                if close is not None:
                    close()  # a generator: ends its workers now, not when the traceback is freed
                try:
                    remove_staging(self.dir)  # of runs cut short by a stop
                except OSError:
                    pass
        return report

    # ------------------------------------------------------------------ state

    def _store(self) -> Store:
        return Store(self.dir, create=False)

    def status(self) -> dict[str, Any]:
        """Counts (planned, ok, failed, missing), the failures and the code versions in the store."""
        wanted = [(c, s) for c, s in self.plan()]
        with self._store() as store:
            rows = store.rows(self.code_version)
            versions = store.versions()
        ok = failed = 0
        failures = []
        seen: set[tuple[str, int]] = set()
        for c, s in wanted:
            r = rows.get((c.scenario_hash, s))
            if r is None:
                continue
            if r["status"] == "ok":
                ok += 1
            else:
                failed += 1
                if (c.scenario_hash, s) not in seen:
                    failures.append({"cell": c.index, "cell_values": c.label(), "seed": s, "attempts": r["attempts"], "error": r["error"]})
            seen.add((c.scenario_hash, s))
        return {
            "study": self.spec.name,
            "directory": str(self.dir),
            "code_version": self.code_version,
            "cells": len(self.cells),
            "seeds": len(self.spec.seeds),
            "planned": len(wanted),
            "ok": ok,
            "failed": failed,
            "missing": len(wanted) - ok - failed,
            "failures": failures,
            "other_versions": {v: n for v, n in versions.items() if v != self.code_version},
        }

    def format_status(self) -> str:
        st = self.status()
        lines = [
            f"{st['study']}: {st['cells']} cells x {st['seeds']} seeds = {st['planned']} runs; "
            f"{st['ok']} ok, {st['failed']} failed, {st['missing']} missing ({st['directory']}, code {st['code_version']})"
        ]
        for f in st["failures"]:
            lines.append(f"  failed: cell {f['cell']} ({f['cell_values']}), seed {f['seed']}, {f['attempts']} attempt(s): {f['error']}")
        for v, n in st["other_versions"].items():
            lines.append(f"  note: {n} runs in the store are from code version {v}; they are kept apart, not mixed in (rerun to redo them under {st['code_version']})")
        return "\n".join(lines)

    # ------------------------------------------------------------------ results

    def results(self, include_failed: bool = False) -> pd.DataFrame:
        """One row per finished (cell, seed): ``cell``, one column per axis key,
        ``seed``, ``status``, ``error``, ``wall_s``, then one column per metric."""
        import pandas as pd

        with self._store() as store:
            rows = store.rows(self.code_version)
        records = []
        for c, s in self.plan():
            r = rows.get((c.scenario_hash, s))
            if r is None or (r["status"] != "ok" and not include_failed):
                continue
            rec = {"cell": c.index, **{k: _cellvalue(v) for k, v in c.values.items()}, "seed": s, "status": r["status"], "error": r["error"], "wall_s": r["wall_s"]}
            rec.update(r["metrics"] or {})
            records.append(rec)
        head = ["cell", *self.spec.axis_keys, "seed", "status", "error", "wall_s"]
        df = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=head)
        metric_cols = sorted(c for c in df.columns if c not in head)
        for col in metric_cols:
            if ".drops_" in col:
                df[col] = df[col].fillna(0.0)  # a drop reason a run did not see: 0 drops
        df = df[head + metric_cols].sort_values(["cell", "seed"], kind="stable").reset_index(drop=True)
        return df

    def metric_names(self, df: pd.DataFrame | None = None) -> list[str]:
        df = self.results() if df is None else df
        if self.spec.metrics:
            return list(self.spec.metrics)
        head = {"cell", *self.spec.axis_keys, "seed", "status", "error", "wall_s"}
        return [c for c in df.columns if c not in head]

    def summary(self, metrics: Sequence[str] | None = None, level: float = 0.95) -> pd.DataFrame:
        """Per cell and metric: n, mean, sd and the `level` Student-t CI (long form)."""
        import pandas as pd

        from manetlab.stats import mean_ci

        df = self.results()
        metrics = list(metrics) if metrics is not None else self.metric_names(df)
        out = []
        for c in self.cells:
            g = df[df["cell"] == c.index]
            for m in metrics:
                vals = g[m].tolist() if m in g else []
                out.append({"cell": c.index, **{k: _cellvalue(v) for k, v in c.values.items()}, "metric": m, **mean_ci(vals, level)._asdict()})
        return pd.DataFrame(out, columns=["cell", *self.spec.axis_keys, "metric", *STAT_COLUMNS])

    def paired(self, axis: str, new: Any, base: Any, metrics: Sequence[str] | None = None, level: float = 0.95) -> pd.DataFrame:
        """Paired comparison of `new` with `base` along `axis`, per cell of the other
        axes and per metric, over the seeds both finished: the difference new − base
        (mean, sd, CI) and the per-seed improvement % (new − base)/base·100 (mean,
        sd, CI; seeds with base = 0 left out, counted in ``n_pct``)."""
        import pandas as pd

        from manetlab.stats import improvement_pct, mean_ci

        df = self.results()
        metrics = list(metrics) if metrics is not None else self.metric_names(df)
        groups = self._pairs(axis, new, base)
        rows = []
        for other, (cn, cb) in groups.items():
            a = df[df["cell"] == cn].set_index("seed")
            b = df[df["cell"] == cb].set_index("seed")
            seeds = sorted(set(a.index) & set(b.index))
            for m in metrics:
                xs = [float(a[m].loc[s]) if m in a else math.nan for s in seeds]
                ys = [float(b[m].loc[s]) if m in b else math.nan for s in seeds]
                diff = mean_ci([x - y for x, y in zip(xs, ys)], level)
                pct = mean_ci([improvement_pct(x, y) for x, y in zip(xs, ys) if y != 0 and not math.isnan(x) and not math.isnan(y)], level)
                rows.append({**dict(other), "metric": m, "new": _cellvalue(new), "base": _cellvalue(base),
                             "n": diff.n, "diff_mean": diff.mean, "diff_sd": diff.sd, "diff_ci_low": diff.ci_low, "diff_ci_high": diff.ci_high,
                             "n_pct": pct.n, "pct_mean": pct.mean, "pct_sd": pct.sd, "pct_ci_low": pct.ci_low, "pct_ci_high": pct.ci_high})
        other_keys = [k for ax in self.spec.axes if axis not in ax for k in ax]
        cols = [*other_keys, "metric", "new", "base", "n", "diff_mean", "diff_sd", "diff_ci_low", "diff_ci_high", "n_pct", "pct_mean", "pct_sd", "pct_ci_low", "pct_ci_high"]
        return pd.DataFrame(rows, columns=cols)

    def _pairs(self, axis: str, new: Any, base: Any) -> dict[tuple[tuple[str, Any], ...], tuple[int, int]]:
        group = next((ax for ax in self.spec.axes if axis in ax), None)
        if group is None:
            raise ScenarioError(f"{axis}: not an axis of this study (allowed: {', '.join(self.spec.axis_keys)})")
        found: dict[tuple[tuple[str, Any], ...], dict[str, int]] = {}
        for c in self.cells:
            other = tuple((k, _cellvalue(v)) for k, v in c.values.items() if k not in group)
            v = c.values[axis]
            if v == new:
                found.setdefault(other, {})["new"] = c.index
            elif v == base:
                found.setdefault(other, {})["base"] = c.index
        return {o: (d["new"], d["base"]) for o, d in found.items() if "new" in d and "base" in d}

    def derived(self, level: float = 0.95) -> pd.DataFrame:
        """The study file's [[derived]] quantities: per cell of the other axes, the
        statistics of the per-seed improvement % (kind improvement_pct) or
        difference (kind difference)."""
        import pandas as pd

        parts = []
        for d in self.spec.derived:
            p = self.paired(d.axis, d.new, d.base, [d.metric], level)
            pre = "pct" if d.kind == "improvement_pct" else "diff"
            q = p.drop(columns=["metric", "new", "base"])
            keep = [c for c in q.columns if not c.startswith(("pct_", "diff_", "n"))]
            q = q[keep].assign(name=d.name, metric=d.metric, n=p["n_pct" if pre == "pct" else "n"], mean=p[f"{pre}_mean"], sd=p[f"{pre}_sd"], ci_low=p[f"{pre}_ci_low"], ci_high=p[f"{pre}_ci_high"])
            parts.append(q)
        if not parts:
            return pd.DataFrame(columns=["name", "metric", *STAT_COLUMNS])
        out = pd.concat(parts, ignore_index=True)
        first = ["name", "metric"]
        return out[first + [c for c in out.columns if c not in first]]

    # ------------------------------------------------------------------ tables, text, figures

    def table(self, name: str = "flows") -> pd.DataFrame:
        """A per-run table of every finished run, with ``cell``, the axis values and
        ``seed`` in front: ``flows``, ``nodes``, ``links``, or a time series the
        scenario asked for (``timeseries`` with ``tcp.trace``, ``packet_series`` and
        ``queue_series`` with ``outputs.series``, ``faults`` with ``[faults]``; see
        `manetlab.Result`)."""
        import pandas as pd

        from manetlab.results import Result

        if name not in TABLES:
            raise ValueError(f"table must be one of {', '.join(TABLES)}, not {name!r}")
        parts = []
        with self._store() as store:
            for c, s in self.plan():
                text = store.summary(c.scenario_hash, s, self.code_version)
                if text is None:
                    continue
                t = getattr(Result(text), name)
                if t.empty:
                    continue
                for i, (k, v) in enumerate([("cell", c.index), *((k, _cellvalue(v)) for k, v in c.values.items()), ("seed", s)]):
                    t.insert(i, k, [v] * len(t))
                parts.append(t)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def write_tables(self, out: str | os.PathLike[str] | None = None) -> list[Path]:
        """flows/nodes/links of every run, and the time series runs recorded, as
        Parquet (default: into the study directory)."""
        out = Path(out) if out is not None else self.dir
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in TABLES:
            t = self.table(name)
            if t.empty and name not in ("flows", "nodes", "links"):
                continue
            p = out / f"{name}.parquet"
            with safeio.atomic_open(p, "wb") as f:  # written whole; a planted link is refused
                t.to_parquet(f, index=False)
            paths.append(p)
        return paths

    def to_markdown(self, metrics: Sequence[str] | None = None) -> str:
        """The summary (one table per metric, rows = cells) and derived quantities as Markdown."""
        summ = self.summary(metrics)
        keys = self.spec.axis_keys
        st = self.status()
        parts = [f"# {self.spec.name}", "", f"{st['cells']} cells x {st['seeds']} seeds; {st['ok']} runs ok, {st['failed']} failed, {st['missing']} missing; code {self.code_version}. Mean ± sd and 95 % Student-t CI over seeds.", ""]
        der = self.derived()
        if len(der):
            parts += ["## Derived", ""]
            dk = [c for c in der.columns if c not in ("name", "metric", *STAT_COLUMNS)]
            parts.append(_md_table(["name", "metric", *dk, "n", "mean", "sd", "95 % CI"],
                                   [[r["name"], r["metric"], *(_g(r[k]) for k in dk), str(r["n"]), _g(r["mean"]), _g(r["sd"]), f"[{_g(r['ci_low'])}, {_g(r['ci_high'])}]"] for _, r in der.iterrows()]))
            parts.append("")
        for m, g in summ.groupby("metric", sort=False):
            parts += [f"## {m}", ""]
            parts.append(_md_table([*keys, "n", "mean", "sd", "95 % CI"],
                                   [[*(_g(r[k]) for k in keys), str(r["n"]), _g(r["mean"]), _g(r["sd"]), f"[{_g(r['ci_low'])}, {_g(r['ci_high'])}]"] for _, r in g.iterrows()]))
            parts.append("")
        return "\n".join(parts)

    def figures(self, out: str | os.PathLike[str] | None = None, x: str | None = None, metrics: Sequence[str] | None = None) -> list[Path]:
        """One figure per metric: mean ± 95 % CI against axis `x` (default: the first
        axis with numeric values, else the first axis), one line per combination of
        the other axes; and one per [[derived]] quantity. PNG and SVG into `out`
        (default: <study dir>/figures), named after the metric or derived quantity
        (`figure_stem`: a name is never a path)."""
        plt = pyplot()
        out = Path(out) if out is not None else self.dir / "figures"
        out.mkdir(parents=True, exist_ok=True)
        keys = self.spec.axis_keys
        if x is None and keys:
            x = next((k for k in keys if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self._values(k))), keys[0])
        if x is not None and x not in keys:
            raise ScenarioError(f"{x}: not an axis of this study (allowed: {', '.join(keys)})")
        if metrics is None:
            metrics = self.spec.metrics or self._headline_metrics()
        summ = self.summary(metrics)
        others = [k for k in keys if k != x]
        paths = []
        # Names are text: "$...$" in a study, axis value or derived name is not TeX
        # (mathtext would misdraw it, or fail on an unknown command).
        with plt.rc_context({"text.parse_math": False}):
            for m in metrics:
                g = summ[summ["metric"] == m]
                fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
                _ci_lines(ax, g, x, others)
                ax.set_xlabel(x or "")
                ax.set_ylabel(m)
                ax.set_title(f"{_short(self.spec.name, TITLE_CHARS - 30)}: {m} (mean ± 95 % CI)", fontsize=10)
                if others:
                    ax.legend(fontsize=7)
                paths += save_figure(fig, out, figure_stem(m), dpi=110)
                plt.close(fig)
            paths += self._derived_figures(out, x, plt)
        return paths

    def to_html(self, metrics: Sequence[str] | None = None, x: str | None = None, figures_dir: str | os.PathLike[str] | None = None) -> str:
        """The study as one self-contained HTML page: status, derived quantities,
        one table per metric (per cell: n, mean ± sd, 95 % CI) and the figures
        (drawn into `figures_dir`, default <study dir>/figures, and embedded as SVG
        images). Every name and value is escaped, the page runs no script, and its
        Content-Security-Policy admits only its own style (`manetlab._html`)."""
        from manetlab import _html

        summ = self.summary(metrics)
        keys = self.spec.axis_keys
        st = self.status()
        der = self.derived()
        parts = [f"<h1>{_html.text(self.spec.name)}</h1>"]
        if self.spec.description:
            parts.append(f"<p>{_html.text(self.spec.description)}</p>")
        parts.append(
            f"<p>{_html.number(st['cells'], 'd')} cells × {_html.number(st['seeds'], 'd')} seeds = {_html.number(st['planned'], 'd')} runs: "
            f"{_html.number(st['ok'], 'd')} ok, {_html.number(st['failed'], 'd')} failed, {_html.number(st['missing'], 'd')} missing; "
            f"code {_html.text(st['code_version'])}. Mean, sample sd and 95 % Student-t confidence interval over the seeds.</p>"
        )
        if len(der):
            dk = [c for c in der.columns if c not in ("name", "metric", *STAT_COLUMNS)]
            parts.append("<h2>derived</h2>" + _html.table(
                ["name", "metric", *dk, "n", "mean", "sd", "95 % CI"],
                ([r["name"], r["metric"], *(r[k] for k in dk), r["n"], r["mean"], r["sd"], f"[{_g(r['ci_low'])}, {_g(r['ci_high'])}]"] for _, r in der.iterrows()),
            ))
        for m, g in summ.groupby("metric", sort=False):
            parts.append(f"<h2>{_html.text(m)}</h2>" + _html.table(
                [*keys, "n", "mean ± sd", "95 % CI"],
                ([*(r[k] for k in keys), r["n"], f"{_g(r['mean'])} ± {_g(r['sd'])}", f"[{_g(r['ci_low'])}, {_g(r['ci_high'])}]"] for _, r in g.iterrows()),
            ))
        figs = [p for p in self.figures(figures_dir, x=x, metrics=metrics) if p.suffix == ".svg"]
        parts.append("<h2>figures</h2>" + ("".join(
            f"<figure>{_html.svg_img(p.read_text(encoding='utf-8'), p.stem)}</figure>" for p in figs) or "<p>(none)</p>"))
        return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{_html.csp_meta(styles=[_HTML_CSS], images=True)}
<title>manetlab study: {_html.text(self.spec.name)}</title>
<style>{_HTML_CSS}</style></head>
<body>{"".join(parts)}
</body></html>
"""

    def write_html(self, out: str | os.PathLike[str] | None = None, metrics: Sequence[str] | None = None, x: str | None = None) -> Path:
        """Write `to_html` as ``report.html`` in `out` (default: the study directory),
        whole (a temporary file renamed over it; a link there is refused), the
        figures into ``out/figures``; returns the page's path."""
        folder = Path(out) if out is not None else self.dir
        folder.mkdir(parents=True, exist_ok=True)
        page = self.to_html(metrics, x, folder / "figures")
        path = folder / "report.html"
        safeio.write_text(path, page)
        return path

    def _derived_figures(self, out: Path, x: str | None, plt: Any) -> list[Path]:
        """One figure per [[derived]] quantity: mean ± CI against `x` (or the first
        other axis), one line per combination of the remaining axes."""
        der = self.derived()
        paths = []
        for d in self.spec.derived:
            g = der[der["name"] == d.name]
            group = next(ax for ax in self.spec.axes if d.axis in ax)
            keys = [k for ax in self.spec.axes if ax is not group for k in ax]
            dx = x if x in keys else (keys[0] if keys else None)
            others = [k for k in keys if k != dx]
            fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
            _ci_lines(ax, g, dx, others)
            ax.axhline(0, color="0.6", linewidth=0.8)
            ax.set_xlabel(dx or "")
            unit = " (%)" if d.kind == "improvement_pct" else ""
            ax.set_ylabel(f"{_short(d.name, LEGEND_NAME_CHARS)}{unit}")
            ax.set_title(f"{_short(d.name, TITLE_CHARS - 30)}: {d.metric}, {_short(str(d.new), 20)} vs {_short(str(d.base), 20)}, paired per seed (mean ± 95 % CI)",
                         fontsize=9)
            if others:
                ax.legend(fontsize=7)
            paths += save_figure(fig, out, figure_stem(d.name), dpi=110)
            plt.close(fig)
        return paths

    def _values(self, key: str) -> list[Any]:
        return next(ax[key] for ax in self.spec.axes if key in ax)

    def _headline_metrics(self) -> list[str]:
        flows = self.spec.base.normalized.get("flows", [])
        ms = [f"flow{i}.throughput_kbps" for i in range(len(flows))]
        ms += [f"flow{i}.highest_ack_segs" for i, f in enumerate(flows) if f.get("kind") == "ftp"]
        ms += [d.metric for d in self.spec.derived if d.metric not in ms]
        return ms


_HTML_CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:12px;margin-bottom:1.5em}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}
figure{margin:1em 0}img{max-width:100%;height:auto}"""


def figure_stem(name: str) -> str:
    """A metric or derived quantity's name as a file name stem: letters, digits, ``.``,
    ``_``, ``-`` kept, anything else ``_``, no leading dot, at most 100 characters,
    and a short hash of the name when anything was changed, so two names never share
    a file. A name (from a study file, which may come from others) never becomes a
    path: ``../x`` or ``a/b`` stays inside the figures folder."""
    import hashlib
    import re

    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")[:100]
    if stem != name:
        stem = f"{stem}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"
    return stem


def _cellvalue(v: Any) -> Any:
    """Axis values as table cells: scalars as they are, lists/tables as JSON text."""
    return json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v


def _numeric(s: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in s)


def _ci_lines(ax: Any, g: Any, x: str | None, others: list[str]) -> None:
    """Summary rows `g` as mean ± 95 % CI against axis `x` (its values as labels
    unless numeric; one point "all" without an axis), one line per combination of
    the `others` axes."""
    for label, line in (g.groupby(others, sort=False, dropna=False) if others else [((), g)]):
        xs = (line[x].tolist() if _numeric(line[x]) else line[x].astype(str).tolist()) if x is not None else ["all"]
        ys = line["mean"].to_numpy(dtype=float)
        err = (ys - line["ci_low"].to_numpy(dtype=float), line["ci_high"].to_numpy(dtype=float) - ys)
        name = ", ".join(f"{k}={_short(str(v), LEGEND_NAME_CHARS)}" for k, v in zip(others, label if isinstance(label, tuple) else (label,), strict=False))
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=name or None)


def _g(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    def esc(c: str) -> str:
        return str(c).replace("|", "\\|")

    lines = ["| " + " | ".join(esc(h) for h in head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
