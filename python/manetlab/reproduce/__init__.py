"""Reproducing papers: one module per paper in this package, each defining
``PAPER`` (a `manetlab.reproduce.base.Paper`); `reproduce(name)` runs the paper's
study (resumably, through the study engine) and writes its report
(docs/reproduce.md).

    >>> import manetlab.reproduce as rp
    >>> rp.papers()                  # {"abra": <Paper>, "mpr": ..., "tcp-variants-aodv": ..., "tcpap-lred": ...}
    >>> rp.reproduce("abra", quick=True, out="results/reproduce/abra-quick")

Adding a paper is adding one module here: it is found by its ``PAPER``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from manetlab.reproduce.base import Context, Paper, Report, write_report

__all__ = ["Paper", "Report", "default_out", "papers", "reproduce"]

_NOT_PAPERS = {"base"}


def papers() -> dict[str, Paper]:
    """Every paper module of this package, by its name (sorted)."""
    found: dict[str, Paper] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in _NOT_PAPERS:
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        paper = getattr(mod, "PAPER", None)
        if isinstance(paper, Paper):
            if paper.name in found:
                raise RuntimeError(f"two paper modules are named {paper.name!r}")
            found[paper.name] = paper
    return dict(sorted(found.items()))


def get(name: str) -> Paper:
    ps = papers()
    if name not in ps:
        from manetlab.scenario import ScenarioError
        from manetlab.textsafe import quote

        raise ScenarioError(f"reproduce: {quote(name)} is not a paper we reproduce (allowed: {', '.join(ps)})")
    return ps[name]


def default_out(name: str, quick: bool) -> Path:
    return Path("results") / "reproduce" / (f"{name}-quick" if quick else name)


def _load() -> str:
    try:
        l1, l5, l15 = os.getloadavg()
        return f"{l1:.2f} {l5:.2f} {l15:.2f} (1/5/15 min, {os.cpu_count() or 0} cores)"
    except OSError:
        return "load average unknown"


def _history(out: Path, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Every invocation on this report directory (DIR/invocations.json), this one last."""
    import json

    from manetlab import safeio

    p = out / "invocations.json"
    try:
        past = json.loads(safeio.read_text(p)) if os.path.lexists(p) else []
    except ValueError:
        past = []
    past.append(entry)
    out.mkdir(parents=True, exist_ok=True)
    safeio.write_text(p, json.dumps(past, indent=1) + "\n")  # whole, never through a link
    return past


def reproduce(
    name: str,
    quick: bool = False,
    jobs: int | None = None,
    scheduler: Any = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    command: str | None = None,
) -> tuple[Report, list[Path]]:
    """Run paper `name`'s study (what the store lacks) and write its report into
    `out` (default ``results/reproduce/<name>[-quick]``): report.md, report.html,
    report.json, figures/. The store is ``out/study``; a second call reruns
    nothing and only rewrites the report."""
    from manetlab.study import Study
    from manetlab.study.executor import DaskExecutor, LocalExecutor

    paper = get(name)
    out = Path(out) if out is not None else default_out(name, quick)
    t0 = time.perf_counter()
    load_before = _load()
    study = Study(paper.study(quick), out / "study", seed_hook=paper.seed_hook())
    executor = DaskExecutor(scheduler) if scheduler is not None else LocalExecutor(jobs)
    rep = study.run(progress=progress, executor=executor)
    t_run = time.perf_counter() - t0
    load_after = _load()
    st = study.status()
    if st["ok"] == 0:
        raise RuntimeError(f"{name}: no run finished ({st['failed']} failed); see `manetlab study status`-like output:\n{study.format_status()}")
    ctx = Context(study, quick, out)
    t1 = time.perf_counter()
    tables = paper.tables(ctx)
    claims = paper.claims(ctx)
    figures = paper.figures(ctx)
    extra = paper.extra_tables(ctx)
    notes = paper.notes(ctx)
    if st["failed"]:
        notes.append(f"{st['failed']} runs failed and are left out: " + "; ".join(f"cell {f['cell']} ({f['cell_values']}) seed {f['seed']}: {f['error']}" for f in st["failures"][:5]))
    wall = [w for w in ctx.results["wall_s"].tolist() if w == w]
    t_report = time.perf_counter() - t1
    history = _history(out, {
        "finished_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "command": command or shlex.join(["manetlab", "reproduce", name, *(["--quick"] if quick else [])]),
        "ran": rep.ran, "reused": rep.skipped, "failed": st["failed"],
        "study_s": round(t_run, 1), "report_s": round(t_report, 1),
        "load_before": load_before, "load_after": load_after, "code_version": study.code_version,
    })
    run = {
        "command": history[-1]["command"],
        "summary": (f"{'quick variant: ' if quick else ''}{st['planned']} runs ({len(study.cells)} cells × {st['seeds']} seeds), "
                    f"{rep.ran} run now and {rep.skipped} reused from the store; study {t_run:.1f} s, report {t_report:.1f} s"),
        "runs planned": st["planned"],
        "runs ok / failed": f"{st['ok']} / {st['failed']}",
        "runs run now / reused from the store": f"{rep.ran} / {rep.skipped}",
        "executor": executor.describe,
        "study wall time": f"{t_run:.1f} s",
        "report wall time (incl. re-runs for traced figures)": f"{t_report:.1f} s",
        "simulation time per run (in the worker)": f"mean {sum(wall) / len(wall):.2f} s, total {sum(wall):.0f} s" if wall else "n/a",
        "load average before / after the study": f"{load_before} / {load_after}",
        "code version": study.code_version,
        "store": str(study.dir),
        "seeds": paper.seeds(quick),
        "paper text": f"/work/shared/papers/{paper.paper_file}",
    }
    for i, h in enumerate(history[-10:]):
        run[f"invocation {len(history) - len(history[-10:]) + i + 1}"] = (
            f"{h['finished_at']}: {h['ran']} run, {h['reused']} reused, {h['failed']} failed; study {h['study_s']} s, report {h['report_s']} s; "
            f"load {h['load_before']} → {h['load_after']}; code {h['code_version']}")
    quick_note = f" — quick variant (seeds {paper.quick_seeds} instead of {paper.full_seeds}; not for conclusions)" if quick else ""
    report = Report(paper.name, paper.title + quick_note, paper.citation,
                    paper.setup(), tables, figures, claims, paper.differences(), run, notes, extra)
    paths = write_report(report, out)
    return report, paths


def main_cli(args: Any) -> int:
    """`manetlab reproduce` (wired into manetlab.cli)."""
    if args.list or not args.name:
        for n, p in papers().items():
            print(f"{n:20s} {p.title}  (seeds {p.full_seeds}; --quick: {p.quick_seeds})")
        if not args.list:
            print("usage: manetlab reproduce NAME [--quick] [--jobs N] [--scheduler ADDR] [--out DIR]", file=sys.stderr)
            return 2
        return 0
    get(args.name)  # an unknown paper is one line, before anything is printed
    if args.jobs is not None and args.jobs < 1:
        from manetlab.scenario import ScenarioError

        raise ScenarioError(f"--jobs: {args.jobs} is out of range (allowed: >= 1)")
    out = args.out if args.out is not None else default_out(args.name, args.quick)
    print(f"reproduce {args.name}{' (quick)' if args.quick else ''}: store {out / 'study'}, report {out}", flush=True)
    try:
        report, paths = reproduce(args.name, quick=args.quick, jobs=args.jobs, scheduler=args.scheduler, out=out,
                                  progress=False if args.no_progress else None, command=getattr(args, "command_line", None))
    except KeyboardInterrupt:
        print("interrupted; finished runs are in the store, rerun to resume", file=sys.stderr)
        return 130
    print(report.run["summary"])
    for c in report.claims:
        print(f"  [{c.verdict}] {c.claim}")
    for written in paths:
        print(f"wrote {written}")
    return 0
