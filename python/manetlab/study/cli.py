"""`manetlab study run|status|results` (wired into manetlab.cli)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from manetlab.scenario import ScenarioError

if TYPE_CHECKING:
    from manetlab.study import Study

FORMATS = ("csv", "parquet", "markdown")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    st = sub.add_parser("study", help="run a study (grid of parameters x seeds) resumably and summarise it")
    ss = st.add_subparsers(dest="study_command", required=True, metavar="ACTION")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("study", metavar="STUDY", help="study file (.toml)")
        p.add_argument("--dir", type=Path, help="study directory holding the store (default: results/<study file stem>)")
        p.add_argument("--allow-outside", action="store_true", help="read a scenario (and the files it names) outside the study file's folder tree (docs/scenarios.md#files-a-scenario-names)")

    r = ss.add_parser("run", help="run what the store lacks (a killed run resumes)")
    common(r)
    r.add_argument("--jobs", type=int, help="local worker processes (default: one per core)")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler, e.g. tcp://host:8786, or tls://host:8786 with Dask's TLS configuration (instead of local workers; a trusted cluster only)")
    r.add_argument("--force", action="store_true", help="redo every run, even those in the store")
    r.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    r.add_argument("--no-progress", action="store_true", help="no progress bar (none is drawn when stderr is not a terminal)")
    r.add_argument("--wait", action="store_true",
                   help="if another `study run` is running this directory, wait for it to end (default: refuse at once, exit status 75)")
    from manetlab.cli import _max_memory_arg

    _max_memory_arg(r)
    r.set_defaults(func=_run)

    s = ss.add_parser("status", help="runs done, failed (with their errors) and missing")
    common(s)
    s.set_defaults(func=_status)

    res = ss.add_parser("results", help="per-cell statistics (mean, sd, 95%% CI) and derived quantities")
    common(res)
    res.add_argument("--format", choices=FORMATS, default="markdown", help="markdown (default, to stdout), csv or parquet (files)")
    res.add_argument("--out", type=Path, help="output directory for csv/parquet/figures (default: the study directory)")
    res.add_argument("--metrics", nargs="+", metavar="METRIC", help="metrics to summarise (default: the study's metrics, else all)")
    res.add_argument("--figures", action="store_true", help="also draw a figure per metric (mean ± CI across an axis)")
    res.add_argument("--x", metavar="AXIS", help="the figures' x axis (default: the first numeric axis)")
    res.add_argument("--html", action="store_true", help="also write OUT/report.html: the tables and figures on one self-contained page (figures in OUT/figures)")
    res.set_defaults(func=_results)


def _study(args: argparse.Namespace) -> Study:
    from manetlab.study import Study

    return Study(args.study, args.dir, allow_outside=args.allow_outside)


def _run(args: argparse.Namespace) -> int:
    from manetlab.cli import EXIT_SIGINT, EXIT_SIGTERM, _max_memory, terminated

    if args.jobs is not None and args.jobs < 1:
        raise ScenarioError(f"--jobs: {args.jobs} is out of range (allowed: >= 1)")
    # Through the environment, as reproduce: local worker processes inherit it (a
    # remote --scheduler's workers use their own machine's default).
    _max_memory(args)
    s = _study(args)  # validates every cell before anything runs
    from manetlab.study.executor import DaskExecutor, LocalExecutor

    ex = DaskExecutor(args.scheduler) if args.scheduler else LocalExecutor(args.jobs)
    print(f"{s.spec.name}: {len(s.cells)} cells x {len(s.spec.seeds)} seeds = {s.spec.n_runs} runs; {ex.describe}; store {s.dir}", flush=True)

    def on_wait(pid: int | None) -> None:
        print(f"waiting: another `study run` is running {s.dir} (pid {pid if pid is not None else 'unknown'})", file=sys.stderr, flush=True)

    try:
        rep = s.run(force=args.force, retry_failed=args.retry_failed, progress=False if args.no_progress else None, executor=ex,
                    wait=args.wait, on_wait=on_wait)
    except KeyboardInterrupt as e:
        # Every finished run is already committed; the workers were ended by the pool.
        what = "terminated (SIGTERM)" if terminated(e) else "interrupted (Ctrl-C)"
        print(f"{what}; finished runs are in the store, rerun to resume", file=sys.stderr)
        try:
            print(s.format_status(), file=sys.stderr)
        except Exception:  # noqa: BLE001 - stopped before the store existed, or it cannot be read: the line above says it all
            pass
        return EXIT_SIGTERM if terminated(e) else EXIT_SIGINT
    for v, n in rep.other_versions.items():
        print(f"note: {n} runs in the store are from code version {v}; not mixed with {s.code_version}, redone under it")
    print(f"ran {rep.ran} ({rep.failed} failed{f', {rep.retried} retried after a worker died' if rep.retried else ''}), {rep.skipped} already in the store")
    print(s.format_status())
    return 0


def _status(args: argparse.Namespace) -> int:
    try:
        print(_study(args).format_status())
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _results(args: argparse.Namespace) -> int:
    s = _study(args)
    if args.metrics:
        from manetlab.study.spec import check_metric_names

        check_metric_names(s.spec, [("--metrics", m) for m in args.metrics])  # a misspelt name is an error, not a NaN table
    try:
        summ = s.summary(args.metrics)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = args.out if args.out is not None else s.dir
    if args.format == "markdown":
        print(s.to_markdown(args.metrics))
    from manetlab import safeio

    try:
        if args.format != "markdown":
            out.mkdir(parents=True, exist_ok=True)
            tables = {"runs": s.results(include_failed=True), "summary": summ, "derived": s.derived()}
            for name, df in tables.items():
                p = out / f"{name}.{args.format}"
                # Written whole beside and renamed over; a symlink planted at p is refused, not followed.
                if args.format == "csv":
                    safeio.write_csv(df, p, index=False, lineterminator="\n")  # text neutralised against spreadsheet formulas
                else:
                    with safeio.atomic_open(p, "wb") as f:
                        df.to_parquet(f, index=False)
                print(f"wrote {p}")
            if args.format == "parquet":
                for p in s.write_tables(out):
                    print(f"wrote {p}")
        if args.figures and not args.html:  # --html draws them too
            figs = s.figures(out / "figures", x=args.x, metrics=args.metrics)
            print(f"wrote {len(figs) // 2} figures (PNG and SVG) in {out / 'figures'}")
        if args.html:
            print(f"wrote {s.write_html(out, metrics=args.metrics, x=args.x)}")
    except safeio.OutputError as e:  # a planted link or other refusal: its own line
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = e.filename if e.filename is not None else out
        print(f"error: cannot write to {safeio.shown(where)}: {(e.strerror or str(e)).lower()}", file=sys.stderr)
        return 1
    return 0
