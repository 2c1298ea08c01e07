"""The `manetlab` command (also `python -m manetlab`).

    manetlab validate SCENARIO [--set key.path=value]...
    manetlab run SCENARIO [--seed N] [--out DIR] [--force] [--partial] [--animate] [--max-memory SIZE] [--set key.path=value]...
    manetlab plot RESULT_DIR --kind KIND [--out DIR] [--flows F ...] [--nodes N ...]
    manetlab report RESULT_DIR [--out FILE]
    manetlab animate RESULT_DIR [--out FILE.html] [--from S] [--to S]   (docs/animate.md)
    manetlab compare SCENARIO --flow N --transports A B ... [--seed N | --seeds 1-10] [--out DIR] [--force] [--no-progress] [--max-memory SIZE] [--set k=v]...
    manetlab export-ns2 SCENARIO --out DIR [--seed N] [--trace old|new] [--set k=v]...
    manetlab crosscheck SCENARIO [--seeds 1-20] [--jobs N] [--per-flow] [--mac-trace] [--keep DIR] [--csv FILE] [--no-progress] [--set k=v]...
    manetlab study run|status|results STUDY [...]   (docs/studies.md)
    manetlab reproduce NAME [--quick] [--jobs N] [--scheduler ADDR] [--out DIR] [--max-memory SIZE] | --list   (docs/reproduce.md)
    manetlab examples DIR [--docs]   (copy the example scenarios and studies, and with --docs the docs, into DIR)

A bad scenario prints one line, ``error: key.path: what is wrong``, to stderr and
exits with status 2 (the usage-error status argparse also uses); no traceback,
since the message already says where to look.

A failure to write the outputs (a read-only folder, a full disk, a planted link,
an --out folder manetlab did not write: see --force) prints one line,
``error: ...``, and exits with status 1 (docs/python.md).

A run whose estimated memory exceeds the limit (``--max-memory``; default half
of the machine's memory) is a bad scenario too: one line naming the key, exit 2.
A bug in the core (a panic) prints one line, ``error: internal error in manetlab
...; this is a bug, please report it ...``, and exits with status 70.

Ctrl-C (SIGINT) or SIGTERM stops a run within a fraction of a second: one line
on stderr, exit status 130 (SIGINT) or 143 (SIGTERM), for every command; with
``run --partial`` the results up to the stop are written, marked ``"partial":
true``. Output cut short by a closed pipe (``manetlab run ... | head``) ends
quietly with status 141.

A study directory that cannot be written or read (disk full, read-only) is one
line, ``error: PATH: what went wrong``, exit status 1 (as for any failure to
write outputs). ``study run`` on a directory another ``study run`` is running
is one line naming that process and exit status 75 (EX_TEMPFAIL: try again
later), unless ``--wait``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

from manetlab import __version__
from manetlab._core import InternalError
from manetlab.plots import KINDS, PlotError, plot
from manetlab.results import ResultFolderError, check_replaceable, run
from manetlab.safeio import shown, write_csv
from manetlab.scenario import Scenario, ScenarioError, load_scenario, parse_set, parse_value
from manetlab.textsafe import excerpt, printable

EXIT_SCENARIO_ERROR = 2
EXIT_IO_ERROR = 1
EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE (sysexits.h)
EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_BUSY = 75  # sysexits.h EX_TEMPFAIL: another `study run` holds the study directory


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (the run stops at its next check)."""


_terminated = False


def _on_sigterm(signum: int, frame: object) -> None:
    global _terminated
    _terminated = True
    raise _Terminated()


def terminated(e: BaseException) -> bool:
    """Whether KeyboardInterrupt `e` came from SIGTERM (exit 143) rather than Ctrl-C (130)."""
    return isinstance(e, _Terminated)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.command_line = shlex.join(["manetlab", *(sys.argv[1:] if argv is None else argv)])
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if _main_thread() else None
    try:
        rc = int(args.func(args))
        # A command that caught the interrupt itself and returned 130 (reproduce):
        # SIGTERM is 143 whatever the command.
        return EXIT_SIGTERM if rc == EXIT_SIGINT and _terminated else rc
    except (ScenarioError, PlotError, ResultFolderError, _animate_error()) as e:
        print(f"error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_SCENARIO_ERROR
    except _ns2_errors() as e:
        # A feature ns-2.35 lacks, `ns` missing, or a bad --seeds: one line, no traceback.
        print(f"error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_SCENARIO_ERROR
    except _study_errors() as e:
        from manetlab.study.store import StudyLocked

        print(f"error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_BUSY if isinstance(e, StudyLocked) else EXIT_IO_ERROR
    except InternalError as e:
        print(f"error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    except KeyboardInterrupt as e:
        what = "terminated (SIGTERM)" if isinstance(e, _Terminated) else "interrupted (Ctrl-C)"
        hint = " (run --partial keeps the results up to the stop)" if args.command == "run" else ""
        print(f"{what}: stopped; nothing written{hint}", file=sys.stderr)
        return EXIT_SIGTERM if isinstance(e, _Terminated) else EXIT_SIGINT
    except BrokenPipeError:
        # The reader went away (`| head`): stop writing, and do not let the
        # interpreter's final flush of stdout fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as e:
        # A file that cannot be written or read (read-only folder, full disk, a
        # planted link, a folder manetlab did not write): one line, exit 1.
        print(f"error: {os_error_line(e)}", file=sys.stderr)
        return EXIT_IO_ERROR
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def os_error_line(e: OSError) -> str:
    """`e` as one line: manetlab's own refusals as they are, else "PATH: reason"
    (paths escaped and bounded, `manetlab.safeio.shown`)."""
    from manetlab.safeio import OutputError, shown

    if isinstance(e, OutputError):
        return " ".join(str(e).split())
    what = e.strerror or type(e).__name__
    paths = [shown(p) for p in (e.filename, e.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {what}" if paths else " ".join(what.split())[:300]


def _write_error(out: Path, e: OSError) -> str:
    from manetlab.safeio import OutputError

    return os_error_line(e) if isinstance(e, OutputError) else f"cannot write results to {shown(out)}: {os_error_line(e)}"


#: Most characters of an error line the CLI prints (messages are far shorter;
#: this bounds runaway text from anywhere).
MAX_ERROR_CHARS = 2000


def one_line(message: str) -> str:
    """`message` as one terminal line: whitespace runs (newlines included) become
    one space, other control and format characters are escaped (``\\x1b``,
    ``\\u{202e}``: nothing reaches the terminal as a control sequence), and at
    most MAX_ERROR_CHARS characters are kept."""
    return excerpt(" ".join(message.split()), MAX_ERROR_CHARS)


def _animate_error() -> type[Exception]:
    from manetlab.animate import AnimateError

    return AnimateError


def _study_errors() -> tuple[type[Exception], ...]:
    from manetlab.study.store import StoreError, StudyLocked

    return (StoreError, StudyLocked)


def _ns2_errors() -> tuple[type[Exception], ...]:
    from manetlab.ns2.crosscheck import Ns2NotFound, Ns2RunFailed, SeedsError
    from manetlab.ns2.export import Ns2Unsupported

    return (Ns2Unsupported, Ns2NotFound, Ns2RunFailed, SeedsError)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="manetlab", description="Discrete-event simulation of TCP over MANETs.")
    p.add_argument("--version", action="version", version=f"manetlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def scenario_args(sp: argparse.ArgumentParser, outside: bool = True) -> None:
        sp.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
        if outside:
            sp.add_argument(
                "--allow-outside",
                action="store_true",
                help="read files the scenario names (movement, traffic) even outside its folder tree (docs/scenarios.md#files-a-scenario-names)",
            )
        sp.add_argument(
            "--set",
            dest="sets",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="override a key, e.g. --set flows[0].rate_kbps=100 (VALUE is read as TOML, else as a string); repeatable",
        )

    v = sub.add_parser("validate", help="check a scenario and summarise it")
    scenario_args(v)
    v.set_defaults(func=_validate)

    r = sub.add_parser("run", help="run a scenario, print per-flow results, write tables")
    scenario_args(r)
    # Parsed by us, not argparse, so "--seed 1.5" gets the core's one-line message like any other bad seed.
    r.add_argument("--seed", help="run seed (replaces the scenario's seed)")
    r.add_argument("--out", type=Path, help="output directory (default: results/<scenario file stem>); replaced as a whole if manetlab wrote it")
    r.add_argument("--force", action="store_true", help="replace --out even if it is not a folder manetlab wrote (deleted whole)")
    r.add_argument(
        "--partial",
        action="store_true",
        help="on Ctrl-C/SIGTERM, write the results up to the stop (marked \"partial\": true) instead of nothing",
    )
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help="progress line on stderr (default: when stderr is a terminal)")
    r.add_argument("--animate", action="store_true", help="also write OUT/animate.html (turns on the movement, trace and series outputs it reads; docs/animate.md)")
    _max_memory_arg(r)
    r.set_defaults(func=_run)

    pl = sub.add_parser("plot", help="draw a figure (PNG and SVG) from a result directory")
    pl.add_argument("result_dir", metavar="RESULT_DIR", type=Path)
    pl.add_argument("--kind", required=True, choices=KINDS)
    pl.add_argument("--out", type=Path, help="where to write the figures (default: RESULT_DIR)")
    pl.add_argument("--flows", nargs="+", metavar="F", help="draw only these flows (indices or unambiguous names; figures of flows)")
    pl.add_argument("--nodes", nargs="+", metavar="N", help="draw only these nodes (indices; drops, queue)")
    pl.set_defaults(func=_plot)

    cp = sub.add_parser("compare", help="run one TCP flow with several variants on the same seed and compare")
    scenario_args(cp)
    cp.add_argument("--flow", type=int, required=True, help="index of the FTP flow whose transport changes")
    cp.add_argument("--transports", nargs="+", required=True, metavar="VARIANT", help="TCP variants; the first is the baseline")
    cp_seed = cp.add_mutually_exclusive_group()
    cp_seed.add_argument("--seed", help="run seed (replaces the scenario's seed)")
    cp_seed.add_argument("--seeds", metavar="SEEDS", help="run every variant on each of these seeds, e.g. 1-10 or 1,4,9: means and the paired difference's 95%% CI")
    cp.add_argument("--out", type=Path, help="output directory (default: results/<scenario file stem>-compare); replaced as a whole if manetlab wrote it")
    cp.add_argument("--force", action="store_true", help="replace --out even if it is not a folder manetlab wrote (deleted whole)")
    cp.add_argument("--no-progress", action="store_true", help="no progress bar (none is drawn when stderr is not a terminal)")
    _max_memory_arg(cp)
    cp.set_defaults(func=_compare)

    ex = sub.add_parser("export-ns2", help="write an ns-2.35 Tcl script (and movement file) of a scenario")
    scenario_args(ex, outside=False)
    ex.add_argument("--seed", help="run seed (replaces the scenario's seed): the movement and ns-2's RNG seed")
    ex.add_argument("--out", type=Path, required=True, help="directory for run.tcl, movement.tcl, flows.json")
    ex.add_argument("--trace", choices=("old", "new"), help="ns-2 trace format (default: the scenario's outputs.trace, else old)")
    ex.set_defaults(func=_export_ns2)

    xc = sub.add_parser("crosscheck", help="run a scenario in manetlab and in ns-2.35 over many seeds and compare")
    scenario_args(xc, outside=False)
    xc.add_argument("--seeds", default="1-20", help="seeds, e.g. 1-20 or 1,4,9 (default 1-20)")
    xc.add_argument("--jobs", type=int, default=1, help="seeds run in parallel (processes, default 1)")
    xc.add_argument("--per-flow", action="store_true", help="also print every flow's metrics")
    xc.add_argument("--keep", type=Path, help="keep each seed's ns-2 directory (script, trace) under DIR/seed<N>")
    xc.add_argument("--mac-trace", action="store_true", help="trace ns-2's MAC too, to compare MAC drops (mac.RET, mac.COL); larger traces")
    xc.add_argument("--csv", type=Path, help="write the per-seed values (seed, metric, ours, ns2) to this CSV file")
    xc.add_argument("--no-progress", action="store_true", help="no progress bar (none is drawn when stderr is not a terminal)")
    xc.set_defaults(func=_crosscheck)

    rp = sub.add_parser("report", help="write a self-contained HTML report of a result directory")
    rp.add_argument("result_dir", metavar="RESULT_DIR", type=Path)
    rp.add_argument("--out", type=Path, help="the HTML file (default: RESULT_DIR/report.html)")
    rp.set_defaults(func=_report)

    an = sub.add_parser("animate", help="write a self-contained HTML animation of a run (nodes, transmissions, drops, routes)")
    an.add_argument("result_dir", metavar="RESULT_DIR", type=Path)
    an.add_argument("--out", type=Path, help="the HTML file (default: RESULT_DIR/animate.html)")
    an.add_argument("--from", dest="from_s", type=float, metavar="S", help="start of the time window (s, default 0)")
    an.add_argument("--to", dest="to_s", type=float, metavar="S", help="end of the time window (s, default: the run's end)")
    an.set_defaults(func=_animate)

    from manetlab.study.cli import add_parser as add_study_parser

    add_study_parser(sub)

    rr = sub.add_parser("reproduce", help="re-run a paper's experiments and write its report (paper's values beside ours)")
    rr.add_argument("name", metavar="NAME", nargs="?", help="the paper (see --list)")
    rr.add_argument("--list", action="store_true", help="list the papers that can be reproduced")
    rr.add_argument("--quick", action="store_true", help="reduced version (fewer seeds, same code paths), for CI and trying it")
    rr.add_argument("--jobs", type=int, help="local worker processes (default: one per core)")
    rr.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler, e.g. tcp://host:8786 (instead of local workers)")
    rr.add_argument("--out", type=Path, help="report directory (default: results/reproduce/NAME[-quick]); the store is DIR/study")
    rr.add_argument("--no-progress", action="store_true", help="no progress bar")
    _max_memory_arg(rr)
    rr.set_defaults(func=_reproduce)

    eg = sub.add_parser("examples", help="copy the example scenarios and studies (and with --docs the docs) into a folder")
    eg.add_argument("out", metavar="DIR", type=Path, help="destination folder (made if missing); existing files are never overwritten")
    eg.add_argument("--docs", action="store_true", help="also copy the docs (README, docs/*.md, figures, validation tables) into DIR/docs/")
    eg.set_defaults(func=_examples)
    return p


def _examples(args: argparse.Namespace) -> int:
    from manetlab.packaged import copy_examples

    written = copy_examples(args.out, docs=args.docs)
    n_docs = sum(1 for p in written if p.parent != args.out)
    print(f"wrote {_count(len(written) - n_docs, 'example')}" + (f" and {_count(n_docs, 'doc file')}" if args.docs else "") + f" to {shown(args.out)}/")
    print(f"try: manetlab run {shlex.quote(str(args.out / 'cbr_chain.toml'))}")
    return 0


def _max_memory_arg(sp: argparse.ArgumentParser) -> None:
    # Parsed by us (parse_size), so a bad size is the usual one-line error.
    sp.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="refuse a run whose estimated memory exceeds SIZE (bytes, or with a K, M, G or T suffix: powers of 1024; "
        "default: $MANETLAB_MAX_MEMORY, else half of this machine's memory)",
    )


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, key: str = "--max-memory") -> int:
    """``"8G"`` → 8·2³⁰ bytes; ``"512M"``, ``"1.5T"``, ``"1000000"`` (bytes); an
    optional trailing ``B`` or ``iB``. ScenarioError (one line) for anything else."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    value = float(m.group(1)) * _SIZE_UNITS[m.group(2)] if m else 0.0
    if not 1 <= value < 2**63:
        raise ScenarioError(f"{key}: {excerpt(text, 40)} is not a memory size (allowed: a number of bytes >= 1, or with a K, M, G or T suffix, e.g. 8G)")
    return int(value)


def _max_memory(args: argparse.Namespace) -> int | None:
    """--max-memory in bytes (None: the default). Also exported as
    MANETLAB_MAX_MEMORY, so every run this command starts gets it (compare's
    variants; reproduce's local worker processes, which inherit it)."""
    if getattr(args, "max_memory", None) is None:
        return None
    b = parse_size(args.max_memory)
    os.environ["MANETLAB_MAX_MEMORY"] = str(b)
    return b


def _reproduce(args: argparse.Namespace) -> int:
    from manetlab.reproduce import main_cli

    # Through the environment: the local worker processes inherit it (a remote
    # --scheduler's workers use their own machine's default).
    _max_memory(args)
    return main_cli(args)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    ov = dict(parse_set(s) for s in args.sets)
    if getattr(args, "seed", None) is not None:
        ov["seed"] = parse_value(args.seed)
    return ov


def _load(args: argparse.Namespace) -> Scenario:
    """The scenario of run/validate/compare/export-ns2/crosscheck, with the
    command line's overrides. A study file given instead is one line saying so
    and naming `manetlab study run` (not the first study key the core refuses)."""
    try:
        return load_scenario(args.scenario, _overrides(args), allow_outside=getattr(args, "allow_outside", False))
    except ScenarioError:
        from manetlab.study.spec import study_file_error

        err = study_file_error(args.scenario)
        if err is None:
            raise
        raise err from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _describe(s: Scenario) -> str:
    n = s.normalized
    return (
        f"{_count(n['nodes']['count'], 'node')}, {_count(len(n['links']), 'link')}, "
        f"{_count(len(n['flows']), 'flow')}, {s.duration_s:g} s"
    )


def _validate(args: argparse.Namespace) -> int:
    s = _load(args)
    print(f"ok: {printable(s.label)}: {_describe(s)}")
    return 0


def _run(args: argparse.Namespace) -> int:
    max_memory = _max_memory(args)
    s = _load(args)
    if args.animate:
        from manetlab.animate import animate_outputs

        s = s.with_overrides(animate_outputs(s.normalized))
    out = args.out if args.out is not None else Path("results") / Path(args.scenario).stem
    try:
        result = run(
            s, out=out, keep_partial=args.partial, progress=args.progress, command=args.command_line, force=args.force, max_memory_bytes=max_memory
        )
    except OSError as e:
        print(f"error: {_write_error(out, e)}", file=sys.stderr)
        return EXIT_IO_ERROR
    if result.partial:
        sig = "SIGTERM" if _terminated else "Ctrl-C (SIGINT)"
        print(
            f"stopped by {sig} at {result.summary['stopped_at_s']:g} s of {s.duration_s:g} s: partial results written to {out}/",
            file=sys.stderr,
        )
    print(f"{printable(s.label)}: seed {s.seed}, {_describe(s)}, {result.summary['events']} events" + (" (partial)" if result.partial else ""))
    print(result.table())
    print(f"wrote {out}/: summary.json, run.json, flows/nodes/links .csv and .parquet")
    for f in result.summary.get("outputs", []):
        print(f"  {f['file']}: {f['bytes']:,} bytes")
    if args.animate:
        from manetlab.animate import animate

        print(animate(out, out / "animate.html").describe())
    sys.stdout.flush()
    if result.partial:
        return EXIT_SIGTERM if _terminated else EXIT_SIGINT
    return 0


def _plot(args: argparse.Namespace) -> int:
    for path in plot(args.result_dir, args.kind, args.out, flows=args.flows, nodes=args.nodes):
        print(f"wrote {path}")
    return 0


#: Printed under `compare`'s table: its differences come from one run per variant.
SEEDS_NOTE = ("means over the seeds; A - B [95% CI]: the mean paired difference (same seed, common random numbers) "
              "with its Student-t interval; an interval that holds 0 shows no difference at this many seeds")
ONE_SEED_NOTE = ("one seed: a single run per variant proves nothing about a difference; "
                 "--seeds 1-10 runs every variant on each of many seeds (means, 95% CI of the difference), as does a study (docs/studies.md)")


def _compare(args: argparse.Namespace) -> int:
    # Imported here, like report: `manetlab run` does not need them (start-up, issue 15).
    from manetlab.compare import compare

    _max_memory(args)
    s = _load(args)
    if not (0 <= args.flow < len(s.normalized["flows"])) or s.normalized["flows"][args.flow]["kind"] != "ftp":
        raise ScenarioError(f"--flow: {args.flow} is not an FTP (TCP) flow of this scenario")
    out = args.out if args.out is not None else Path("results") / f"{Path(args.scenario).stem}-compare"
    seeds = None
    if args.seeds is not None:
        from manetlab.ns2.crosscheck import parse_seeds

        seeds = parse_seeds(args.seeds)  # the same grammar as crosscheck's; a bad one is one line, exit 2
    check_replaceable(out, "comparison", args.force)  # before the runs, not after
    c = compare(s, args.flow, args.transports, seeds=seeds, progress=False if args.no_progress else None)
    try:
        report_path = c.write(out, force=args.force)  # before printing: a closed stdout must not lose the results
    except OSError as e:
        print(f"error: {_write_error(out, e)}", file=sys.stderr)
        return EXIT_IO_ERROR
    if len(c.seeds) == 1:
        print(f"{printable(s.label)}: seed {c.seeds[0]}, {_describe(s)}; flow {args.flow} with {', '.join(args.transports)} (same seed)")
        print(c.table())
        print(ONE_SEED_NOTE)
    else:
        print(f"{printable(s.label)}: seeds {printable(args.seeds)} ({len(c.seeds)}), {_describe(s)}; flow {args.flow} with {', '.join(args.transports)} "
              "(every variant on each seed)")
        print(c.table())
        print(SEEDS_NOTE)
    print(f"wrote {report_path}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from manetlab.report import report

    print(f"wrote {report(args.result_dir, args.out)}")
    return 0


def _animate(args: argparse.Namespace) -> int:
    from manetlab.animate import animate

    print(animate(args.result_dir, args.out, args.from_s, args.to_s).describe())
    return 0


def _export_ns2(args: argparse.Namespace) -> int:
    from manetlab.ns2.export import export_ns2

    s = _load(args)
    e = export_ns2(s, args.out, trace_format=args.trace)
    print(f"{printable(s.label)}: seed {s.seed} (ns-2 RNG seed {e.ns2_seed}), {_describe(s)}")
    print(f"wrote {printable(e.script)}, {e.movement.name}, {e.flows_json.name}; run: cd {printable(shlex.quote(str(e.out_dir)))} && ns run.tcl")
    return 0


def _crosscheck(args: argparse.Namespace) -> int:
    from manetlab.ns2.crosscheck import crosscheck, find_ns, format_summary, ns_version, parse_seeds, summarize

    find_ns()  # say how to install ns-2 before anything runs
    seeds = parse_seeds(args.seeds)
    s = _load(args)
    if args.jobs < 1:
        raise ScenarioError(f"--jobs: {args.jobs} is out of range (allowed: >= 1)")
    df = crosscheck(s, seeds, jobs=args.jobs, keep_dir=args.keep, mac_trace=args.mac_trace, progress=False if args.no_progress else None)
    print(f"{printable(s.label)}: {_describe(s)}; manetlab {__version__} vs ns-{printable(ns_version())}, seeds {printable(args.seeds)} ({len(seeds)})")
    print(format_summary(summarize(df, per_flow=args.per_flow)))
    for msg in df.attrs.get("failed", {}).values():
        print(f"left out: {printable(msg)}")
    if args.csv is not None:
        try:
            write_csv(df, args.csv, index=False)  # names neutralised against spreadsheet formulas
        except OSError as e:
            print(f"error: {_write_error(args.csv, e)}", file=sys.stderr)
            return EXIT_IO_ERROR
        print(f"wrote {args.csv}")
    return 0
