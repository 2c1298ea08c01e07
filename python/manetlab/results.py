"""Running a scenario and the tables it returns.

The core returns one JSON document (``summary.json``); `Result` keeps that exact
text, so what is written is byte-for-byte what the core produced, and derives
pandas tables from it. pandas is imported only when a DataFrame is asked for:
``Result.write`` (so ``manetlab run``) writes the tables' .csv and .parquet files
without it (`_columns`, `_write_csv`, `_core.write_parquet`), which keeps
``manetlab run`` and ``manetlab validate`` quick.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetlab import _core, safeio
from manetlab.scenario import Overrides, Scenario, ScenarioError, apply_overrides, load_scenario
from manetlab.textsafe import printable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FolderNotOwnedError", "Result", "ResultFolderError", "load_result", "run"]

TABLES = ("flows", "nodes", "links")
#: Columns of `Result.faults` (docs/metrics.md#faults), also when it has no rows.
FAULT_COLUMNS = ["time_s", "kind", "a", "b", "duration_s", "cause", "effect"]


class ResultFolderError(ValueError):
    """A folder that is not a complete manetlab result (missing, unfinished, partial)."""


def run(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    overrides: Overrides | None = None,
    out: str | os.PathLike[str] | None = None,
    *,
    keep_partial: bool = False,
    progress: bool | None = None,
    command: str | None = None,
    force: bool = False,
    max_memory_bytes: int | None = None,
) -> Result:
    """Run `scenario` (a Scenario, a file path, or a dict) and return its Result.

    `seed` replaces the scenario's seed; `overrides` (``{"flows[0].rate_kbps": 100}``)
    are applied first and validated exactly like a file. The GIL is released
    while the core runs.

    With `out`, the whole result folder (``Result.write``) is written there when
    the run ends, trace files included: built under a temporary sibling name and
    renamed into place, so `out` never holds a half-written or mixed result.
    An existing `out` is replaced only if manetlab wrote it (its ``.manetlab``
    marker; see `Result.write`), else FolderNotOwnedError (an OSError) before
    the run starts; ``force=True`` replaces any folder.
    Without `out`, trace files go to a temporary directory (``result.output_dir``)
    that is removed when the Result is garbage-collected.

    Ctrl-C (SIGINT; a Jupyter interrupt) stops the run within a fraction of a
    second and raises KeyboardInterrupt; with ``keep_partial=True`` the run's
    results up to the stop are returned instead (``result.partial``, and
    ``summary["stopped_at_s"]``). `progress`: show a progress line on stderr
    (None: only when stderr is a terminal). `command`: the command line recorded
    in the folder's ``run.json`` (the CLI passes its own).

    Before running, the core estimates the run's peak memory; above
    `max_memory_bytes` it raises ScenarioError naming the key that drives it
    (``nodes.count: 1000000 radio nodes need about 9.1 GiB of memory (allowed:
    ...)``). Default: the ``MANETLAB_MAX_MEMORY`` environment variable (bytes)
    if set, else half of this machine's physical memory. A panic in the core
    (a bug) raises `manetlab.InternalError`.
    """
    if max_memory_bytes is not None and (isinstance(max_memory_bytes, bool) or not isinstance(max_memory_bytes, int) or not 1 <= max_memory_bytes < 2**64):
        shown = repr(max_memory_bytes)[:40]
        raise ScenarioError(f"max_memory_bytes: {shown} is not a memory size (allowed: an int of bytes >= 1, or None for the default)")
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
    final = Path(out) if out is not None else None
    trace_dir: Path | None = None
    owned = False
    if final is not None:
        trace_dir = _staging_dir(final, "run", force)
    elif wants_files:
        trace_dir, owned = Path(tempfile.mkdtemp(prefix="manetlab-")), True
    try:
        with _progress_callback(progress, s.duration_s) as cb:
            summary = _core.run(s.to_json(), str(trace_dir) if wants_files and trace_dir else None, cb, keep_partial, max_memory_bytes)
        result = Result(summary, s, trace_dir if wants_files else None, _owned=owned)
        if final is not None:
            assert trace_dir is not None
            result._write_into(trace_dir, command)
            _replace_dir(trace_dir, final, "run", force)
            if wants_files:
                result.output_dir = final
    except BaseException:
        if trace_dir is not None:
            shutil.rmtree(trace_dir, ignore_errors=True)
        raise
    return result


def load_result(result_dir: str | os.PathLike[str], allow_partial: bool = False) -> Result:
    """Load a result folder written by ``manetlab run --out DIR`` or ``Result.write``.

    Refuses, with ResultFolderError, a folder that is not a finished write (no
    ``summary.json``, an unreadable one, one without the completion marker, or a
    temporary ``.NAME.incomplete-*`` folder left by a killed process) and, unless
    `allow_partial`, the results of a stopped run (``--partial``). The folder may
    come from someone else: a ``summary.json`` or ``scenario.json`` that is a
    symbolic link, FIFO or device is refused, not followed (`manetlab.safeio`)."""
    d = Path(result_dir)
    if _STAGING.fullmatch(d.name):
        raise ResultFolderError(f"{d}: an unfinished write (a process was killed while writing it); delete it")
    path = d / "summary.json"
    if not d.is_dir():
        raise ResultFolderError(f"{d}: no such result folder{_moved_aside_hint(d)}")
    try:
        # The folder may come from someone else: its files are read only if they
        # are regular files themselves (no link followed, no FIFO waited on).
        text = safeio.read_text(path)
        summary = json.loads(text)
    except FileNotFoundError:
        raise ResultFolderError(f"{d}: no summary.json (not a result folder, or an unfinished write)") from None
    except safeio.UnsafePathError as e:
        raise ResultFolderError(str(e)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ResultFolderError(f"{path}: not a complete manetlab summary ({e})") from None
    if not isinstance(summary, dict) or "partial" not in summary or not safeio.is_regular_file(d / "run.json"):
        raise ResultFolderError(f"{d}: no completion marker (summary.json without \"partial\", or no run.json): not written by this manetlab's run/write")
    if summary["partial"] and not allow_partial:
        raise ResultFolderError(
            f"{d}: partial results of a run stopped at {summary.get('stopped_at_s')} s of {summary.get('duration_s')} s "
            "(load_result(..., allow_partial=True) to load them anyway)"
        )
    scenario = None
    if os.path.lexists(d / "scenario.json"):
        try:
            scenario = Scenario(json.loads(safeio.read_text(d / "scenario.json")))
        except safeio.UnsafePathError as e:
            raise ResultFolderError(str(e)) from None
    return Result(text, scenario, d if summary.get("outputs") else None)


def _moved_aside_hint(d: Path) -> str:
    """Where a killed replace left the only copy of `d`'s result, if it did."""
    d = Path(os.path.abspath(d))
    for p in sorted(d.parent.glob(f".{glob_escape(d.name)}.old-*-*")) if d.name and d.parent.is_dir() else []:
        m = _STAGING.fullmatch(p.name)
        if m and os.listdir(p):
            return f" (a replace of it was killed: the previous result is in {safeio.shown(p)}: rename it back to keep it)"
    return ""


# --- safe result folders ------------------------------------------------------

# A folder under construction: `.NAME.incomplete-PID-RANDOM`, beside NAME; and, where
# no atomic exchange exists, the previous result moved aside while the new one
# replaces it: `.NAME.old-PID-RANDOM` (older versions: the result in its `x` subfolder).
_STAGING = re.compile(r"\..+\.(incomplete|old)-([0-9]+)-[a-z0-9_]+")

#: The file that marks a folder as written by manetlab (and so replaceable by it).
MARKER = ".manetlab"
MARKER_FORMAT = "manetlab-folder/1"
#: What a marked folder holds: a run's results, or a comparison (`manetlab compare`).
FOLDER_KINDS = ("run", "comparison")


class FolderNotOwnedError(safeio.OutputError):
    """`--out` names a folder manetlab cannot prove it wrote: it is not replaced
    (``force=True`` / ``--force`` replaces it anyway)."""


def write_marker(folder: Path, kind: str) -> str:
    """Write ``folder/.manetlab`` (a new file) saying manetlab wrote `folder` as a `kind`."""
    assert kind in FOLDER_KINDS
    doc = {"format": MARKER_FORMAT, "kind": kind, "manetlab_version": _core.__version__}
    with safeio.create_new(folder / MARKER, "w") as f:
        f.write(json.dumps(doc) + "\n")
    return MARKER


def folder_kind(d: Path) -> str | None:
    """What manetlab wrote the folder `d` as ("run" or "comparison"), or None if
    nothing proves it wrote it. Proof: a ``.manetlab`` marker (regular file, this
    format); or, for folders written before the marker existed, contents that
    are exactly what those versions wrote (`_legacy_kind`)."""
    try:
        doc = json.loads(safeio.read_bytes(d / MARKER, limit=4096))
    except FileNotFoundError:
        return _legacy_kind(d)
    except (OSError, ValueError):
        return None
    if isinstance(doc, dict) and doc.get("format") == MARKER_FORMAT and doc.get("kind") in FOLDER_KINDS:
        return str(doc["kind"])
    return None


# Files a run folder of a manetlab without the marker could hold: what Result.write
# wrote, and what plot, report and animate add to it.
_RUN_FILES = re.compile(
    r"(summary|run|scenario)\.json|(flows|nodes|links|timeseries|packet_series|queue_series|faults)\.(csv|parquet)"
    r"|trace\.tr|movement\.tcl|node[0-9]+\.pcap|report\.html|animate\.html|[a-z_]+\.(png|svg)"
)
_FIGURE_FILES = re.compile(r"[a-z_]+\.(png|svg)")
_COMPARISON_FILES = re.compile(r"comparison\.json|report\.html|compare_[a-z]+\.(png|svg)")


def _json_object(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(safeio.read_bytes(path))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _only(d: Path, files: re.Pattern[str], dirs: Callable[[str, Path], bool]) -> bool:
    """Whether every entry of `d` is a regular file named as `files` allows or a
    real folder `dirs` accepts (no links, nothing else)."""
    try:
        with os.scandir(d) as it:
            entries = list(it)
    except OSError:
        return False
    for e in entries:
        if e.is_symlink():
            return False
        if e.is_file(follow_symlinks=False):
            if not files.fullmatch(e.name):
                return False
        elif not (e.is_dir(follow_symlinks=False) and dirs(e.name, Path(e.path))):
            return False
    return True


def _legacy_kind(d: Path) -> str | None:
    """A folder without the marker counts as manetlab's only when it holds exactly
    what an earlier manetlab wrote: a run (summary.json with its completion
    marker "partial" and "manetlab_version", run.json, and only the files
    Result.write, plot, report and animate write; a figures/ folder of figures)
    or a comparison (comparison.json naming its run folders, each such a run,
    report.html and the overlay figures). Anything else (a note, a thesis
    chapter, a link) and the folder is not replaced without --force."""
    summary = _json_object(d / "summary.json") if safeio.is_regular_file(d / "summary.json") else None
    if summary is not None:
        info = _json_object(d / "run.json") if safeio.is_regular_file(d / "run.json") else None
        if "partial" not in summary or "manetlab_version" not in summary or info is None or "manetlab_version" not in info:
            return None
        figures = lambda name, p: name == "figures" and _only(p, _FIGURE_FILES, lambda n, q: False)  # noqa: E731
        return "run" if _only(d, _RUN_FILES, figures) else None
    manifest = _json_object(d / "comparison.json") if safeio.is_regular_file(d / "comparison.json") else None
    if manifest is not None and isinstance(manifest.get("runs"), dict):
        runs = {v for v in manifest["runs"].values() if isinstance(v, str)}
        return "comparison" if _only(d, _COMPARISON_FILES, lambda name, p: name in runs and _legacy_kind(p) == "run") else None
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_replaceable(final: Path, kind: str, force: bool) -> None:
    """Raise FolderNotOwnedError unless `final` is missing, an empty folder, or a
    folder manetlab wrote as a `kind` (any folder with `force`); never a link or
    a file, nor a folder holding the current directory."""
    try:
        st = os.lstat(final)
    except FileNotFoundError:
        return
    where = safeio.shown(final)
    if stat.S_ISLNK(st.st_mode):
        raise FolderNotOwnedError(f"refusing to replace {where}: it is a symbolic link (give the folder itself, or another --out)", final, errno.ELOOP)
    if not stat.S_ISDIR(st.st_mode):
        raise FolderNotOwnedError(f"refusing to replace {where}: it exists and is not a folder", final, errno.ENOTDIR)
    cwd = Path(os.path.abspath(os.getcwd()))
    if cwd == final or final in cwd.parents:
        raise FolderNotOwnedError(f"refusing to replace {where}: it holds the current directory", final, errno.EBUSY)
    if force or not os.listdir(final):
        return
    found = folder_kind(final)
    if found == kind:
        return
    if found is None:
        what = f"not a manetlab result folder (no {MARKER} marker, and not exactly what an earlier manetlab wrote)"
    else:
        what = f"it holds a manetlab {found}, not a {kind}"
    raise FolderNotOwnedError(f"refusing to replace {where}: {what}; choose another --out, or --force to delete and replace it whole", final, errno.EEXIST)


def check_replaceable(out: str | os.PathLike[str], kind: str = "run", force: bool = False) -> None:
    """Raise FolderNotOwnedError now if writing a `kind` folder to `out` would be
    refused (so a caller can say so before spending time on runs)."""
    _check_replaceable(Path(os.path.abspath(out)), kind, force)


def _recover(final: Path) -> None:
    """Tidy the temporary siblings of `final` that killed processes left: the old
    result a killed two-rename replace moved aside goes back to `final` when
    `final` is missing (it is then the only copy); everything else is removed."""
    prefix = f".{final.name}."
    left = []
    for p in final.parent.glob(f".{glob_escape(final.name)}.*-*-*"):
        m = _STAGING.fullmatch(p.name)
        if m and p.name.startswith(prefix) and not _pid_alive(int(m.group(2))):
            left.append((m.group(1), p))
    # The newest moved-aside result first: it is the one a kill left without a copy.
    for what, p in sorted(left, key=lambda t: (t[0] != "old", -_mtime(t[1]))):
        if what == "old" and not os.path.lexists(final):
            try:
                entries = os.listdir(p)
            except FileNotFoundError:  # tidied by another writer meanwhile
                continue
            src = p / "x" if entries == ["x"] else p  # an earlier version's layout
            if entries:
                os.rename(src, final)
                _fsync_dir(final.parent)
                if src == p:
                    continue
        shutil.rmtree(p, ignore_errors=True)


def _mtime(p: Path) -> float:
    try:
        return os.lstat(p).st_mtime
    except OSError:
        return 0.0


def _staging_dir(final: Path, kind: str = "run", force: bool = False) -> Path:
    """A fresh temporary sibling of `final` to build a `kind` folder in, after
    checking `final` may be replaced (`_check_replaceable`, so a long run is not
    wasted on a refused --out) and tidying what killed writers left (`_recover`)."""
    final = Path(os.path.abspath(final))
    if not final.name:
        raise safeio.OutputError(f"cannot write a result folder at {safeio.shown(final)}", final, errno.EINVAL)
    final.parent.mkdir(parents=True, exist_ok=True)
    _recover(final)
    _check_replaceable(final, kind, force)
    return safeio.make_dir(final.parent, f".{final.name}.incomplete-{os.getpid()}-")


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _replace_dir(staging: Path, final: Path, kind: str = "run", force: bool = False) -> None:
    """Move the finished `staging` folder to `final`, replacing what is there only
    if `_check_replaceable` allows it.

    With an existing `final`, the two folders are swapped in one step
    (`safeio.exchange`, renameat2 RENAME_EXCHANGE), so `final` always holds a
    complete result, old or new, and the old one (now under the staging name) is
    deleted after. Without that call (not Linux, an old kernel, a file system
    that lacks it): `final` is renamed to `.NAME.old-PID-RANDOM`, the new folder
    to `final`, then the old one deleted; a kill between the two renames leaves
    no `final` but the old result beside it, which the next write to `final`
    (`_recover`) puts back before doing anything else; it is never deleted while
    it is the only copy."""
    final = Path(os.path.abspath(final))
    if os.path.lexists(final):
        _check_replaceable(final, kind, force)
        if safeio.exchange(staging, final):
            _fsync_dir(final.parent)
            shutil.rmtree(staging, ignore_errors=True)  # the previous result
            return
        old = safeio.make_dir(final.parent, f".{final.name}.old-{os.getpid()}-")
        os.rename(final, old)  # onto the empty folder: one step
        try:
            os.rename(staging, final)
        except BaseException:
            os.rename(old, final)
            raise
        _fsync_dir(final.parent)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, final)
        _fsync_dir(final.parent)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _git_commit() -> str | None:
    """The commit of the source checkout this package is imported from (with
    "-dirty" when tracked files differ), or None outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def run_info(command: str | None = None) -> dict[str, Any]:
    """What ``run.json`` records: how the result was made."""
    import platform

    return {
        "command": command,
        "argv": list(sys.argv),
        "manetlab_version": _core.__version__,
        "git_commit": _git_commit(),
        "build_git_commit": getattr(_core, "__build_git_commit__", None),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


# --- progress -------------------------------------------------------------------


@contextmanager
def _progress_callback(progress: bool | None, duration_s: float) -> Iterator[Callable[[float, int], None] | None]:
    """A tqdm progress line (simulated time, events/s, ETA) on stderr, shown once a
    run has taken a second; None when not wanted (default: stderr not a terminal)."""
    if progress is None:
        progress = sys.stderr is not None and sys.stderr.isatty()
    if not progress:
        yield None
        return
    import time

    from tqdm import tqdm

    bar = tqdm(
        total=duration_s,
        unit="s",
        unit_scale=False,
        file=sys.stderr,
        delay=1.0,
        leave=False,
        dynamic_ncols=True,
        bar_format="{l_bar}{bar}| {n:.1f}/{total:g} s simulated [{elapsed}<{remaining}{postfix}]",
    )
    t0, last = time.monotonic(), 0.0

    def update(sim_s: float, events: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < 0.25:
            return
        last = now
        bar.set_postfix_str(f"{events / max(now - t0, 1e-9):,.0f} events/s", refresh=False)
        bar.update(sim_s - bar.n)

    try:
        yield update
    finally:
        bar.close()


class Result:
    """The results of one run.

    ``summary_json`` is the core's text (the bytes of summary.json), ``summary``
    the same parsed; ``flows``, ``nodes`` and ``links`` are DataFrames with one row
    per flow, node and link direction (``faults`` one per failure), the ``drops`` maps spread into
    ``drops_<layer.CODE>`` columns and the other maps (``in_flight``,
    ``ctrl_drops``, ``tcp``) into prefixed columns. The core writes every drop
    and holder key in every row (0 when none), so the columns are the same in
    every run and concatenated runs have 0, never NaN, where nothing happened.
    """

    def __init__(self, summary_json: str, scenario: Scenario | None = None, output_dir: Path | None = None, *, _owned: bool = False) -> None:
        self.summary_json = summary_json
        self.summary: dict[str, Any] = json.loads(summary_json)
        self.scenario = scenario
        #: Where the run wrote its trace files (``summary["outputs"]``), if any.
        self.output_dir = output_dir
        if _owned and output_dir is not None:
            # A temporary folder of ours: removed with the Result (or at exit).
            weakref.finalize(self, shutil.rmtree, str(output_dir), True)

    @property
    def partial(self) -> bool:
        """Whether the run was stopped before its end (``keep_partial``/``--partial``)."""
        return bool(self.summary.get("partial", False))

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
    def faults(self) -> pd.DataFrame:
        """Every failure of the run, one row each, in order: ``time_s``, ``kind``
        (``"link_down"`` or ``"node_off"``), ``a``, ``b`` (the link's other end;
        NaN for a node), ``duration_s`` (a random failure's drawn duration, which
        may run past the end; a scripted one's, NaN when never undone), ``cause``
        (``"random"``, ``"scripted"``) and ``effect`` (``"blocked"``,
        ``"undecodable"``; None for a node). Empty without ``[faults]``
        (docs/metrics.md)."""
        import pandas as pd

        rows = self.summary.get("failures") or []
        return _frame(rows) if rows else pd.DataFrame(columns=FAULT_COLUMNS)

    @property
    def timeseries(self) -> pd.DataFrame:
        """TCP time series (flows with ``tcp.trace = true``) in long form: one row per
        change, columns ``flow``, ``name``, ``t_s``, ``cwnd_segs``, ``ssthresh_segs``,
        ``rto_s``, ``srtt_s``, ``backoff``, ``seq_segs``, ``ack_segs``. Empty without traces."""
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

    def write(self, out_dir: str | os.PathLike[str], command: str | None = None, *, force: bool = False) -> list[Path]:
        """Write the result folder `out_dir`: summary.json, run.json (how it was
        made), scenario.json, flows/nodes/links (and time series) as .csv and
        .parquet, and the run's trace files; returns the paths written.

        The folder is built under a temporary sibling name and renamed into place
        when complete (summary.json, with its completion marker, written last), so
        a killed writer never leaves a folder that looks complete, and a previous
        result in `out_dir` is replaced as a whole (no stale files remain), in
        one atomic step where the platform allows (`_replace_dir`).

        The folder holds a ``.manetlab`` marker; an existing `out_dir` is
        replaced only when it is empty or manetlab wrote it as a run (that
        marker, or exactly the files an earlier version wrote), else
        FolderNotOwnedError (an OSError) and nothing is touched;
        ``force=True`` replaces any folder (never a link or a file)."""
        final = Path(out_dir)
        staging = _staging_dir(final, "run", force)
        try:
            names = self._write_into(staging, command)
            _replace_dir(staging, final, "run", force)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return [final / n for n in names]

    def _write_into(self, out: Path, command: str | None) -> list[str]:
        """Write every file into the new folder `out` (made by manetlab: every file
        is created exclusively, no link followed); the marker first, summary.json last."""
        names: list[str] = [write_marker(out, "run")]
        if self.scenario is not None:
            # The scenario as run (after overrides), so a result directory is self-describing.
            with safeio.create_new(out / "scenario.json", "w") as f:
                f.write(self.scenario.to_json())
            names.append("scenario.json")
        tables = list(TABLES)
        if any((f.get("tcp") or {}).get("trace") for f in self.summary["flows"]):
            tables.append("timeseries")
        if self.summary.get("series"):
            tables += ["packet_series", "queue_series"]
        if self.summary.get("failures") is not None:
            tables.append("faults")  # a scenario with [faults]: its table, even empty
        for name in tables:
            cols = self._columns(name)
            if cols is not None:
                # Without pandas (importing it and pyarrow was most of a short
                # `manetlab run`): the same bytes as DataFrame.to_csv, and a
                # Parquet file that reads back as the same DataFrame.
                _write_csv(out / f"{name}.csv", cols)
                _core.write_parquet(str(out / f"{name}.parquet"), cols)
                _fsync_file(out / f"{name}.parquet")
            else:
                # A column of values _kind has no rule for: pandas decides.
                df = getattr(self, name)
                # "\n" whatever the OS, so equal runs give equal CSV bytes everywhere.
                with safeio.create_new(out / f"{name}.csv", "w", newline="") as f:
                    safeio.csv_frame(df).to_csv(f, index=False, lineterminator="\n")
                with safeio.create_new(out / f"{name}.parquet", "wb") as f:
                    df.to_parquet(f, index=False)
            names += [f"{name}.csv", f"{name}.parquet"]
        for f in self.summary.get("outputs", []):
            # Trace files: already there when the run wrote into `out`, else copied.
            assert self.output_dir is not None
            src, dst = self.output_dir / f["file"], out / f["file"]
            if src.resolve() != dst.resolve():
                safeio.copy_file(src, dst)
            else:
                _fsync_file(dst)  # written by the core
            names.append(f["file"])
        with safeio.create_new(out / "run.json", "w") as f:
            f.write(json.dumps(run_info(command), indent=2) + "\n")
        names.append("run.json")
        with safeio.create_new(out / "summary.json", "wb") as f:
            f.write(self.summary_json.encode("utf-8"))
        return ["summary.json", *names]

    def _columns(self, name: str) -> list[Column] | None:
        """Table `name` as (column, kind, values) with the columns, values and
        dtypes of the DataFrame property `name`, built without pandas; None when
        a column holds values whose dtype only pandas can say (see `_kind`)."""
        if name in TABLES:
            return _table_columns(self.summary[name])
        if name == "faults":
            rows = self.summary.get("failures") or []
            return _table_columns(rows) if rows else [(n, "null", []) for n in FAULT_COLUMNS]
        if name == "timeseries":
            parts = []
            for f in self.summary["flows"]:
                trace = (f.get("tcp") or {}).get("trace")
                if trace:
                    n = len(next(iter(trace.values()), []))
                    parts.append({"flow": [f["flow"]] * n, "name": [f["name"]] * n, **trace})
            return _concat_columns(parts, ["flow", "name", "t_s"])
        if name == "packet_series":
            names = {f["flow"]: f["name"] for f in self.summary["flows"]}
            parts = []
            for s in (self.summary.get("series") or {}).get("flows", []):
                if s["t_s"]:
                    n, d = len(s["t_s"]), s["delay_s"]
                    # A series point is a received packet: its delay is never None.
                    jitter: list[float | None] = [None, *(float(b) - float(a) for a, b in pairwise(d))]
                    parts.append({"flow": [s["flow"]] * n, "name": [names[s["flow"]]] * n, "t_s": s["t_s"], "delay_s": d, "jitter_s": jitter})
            return _concat_columns(parts, ["flow", "name", "t_s", "delay_s", "jitter_s"])
        if name == "queue_series":
            parts = [
                {"node": [q["node"]] * len(q["t_s"]), "t_s": q["t_s"], "len_pkts": q["len_pkts"]}
                for q in (self.summary.get("series") or {}).get("queues", [])
                if q["t_s"]
            ]
            return _concat_columns(parts, ["node", "t_s", "len_pkts"])
        raise KeyError(name)

    def table(self) -> str:
        """A per-flow summary table as text."""
        flows = self.summary["flows"]
        if not flows:
            return "(no flows)"
        head = ["flow", "name", "src→dst", "tx", "rx", "PDR", "throughput kbit/s", "mean delay ms", "jitter ms"]
        rows = [
            [
                str(f["flow"]),
                printable(f["name"]),  # a terminal table: control characters as escapes
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


def _fsync_file(path: Path) -> None:
    # Data on disk before the rename that publishes the folder (a crash, not just
    # a kill, then also leaves either the old folder or the complete new one).
    # (Files made with safeio.create_new are fsynced as they are closed.)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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


def _table_layout(rows: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[Any]]]:
    """The flows/nodes/links table of the summary's `rows`: its column names in
    order and each column's values, one per row (None where a row lacks the
    field). The one column layout of both `_frame` (the DataFrame) and
    `_table_columns` (the files written without pandas)."""
    flat = [_flatten(r) for r in rows]
    # Columns: the core's field order (first seen across rows, since e.g. only TCP
    # flows have tcp_* fields), then one drops_<key> column per drop key, sorted
    # (the core lists every key in every row; a 0 fills in for older summaries).
    base: list[str] = []
    seen: set[str] = set()
    for r in flat:
        for k in r:
            if k != "drops" and k not in seen:
                seen.add(k)
                base.append(k)
    drop_keys = sorted({k for r in flat for k in r.get("drops", {})})
    data = {k: [r.get(k) for r in flat] for k in base}
    for k in drop_keys:
        data[f"drops_{k}"] = [r.get("drops", {}).get(k, 0) for r in flat]
    return base + [f"drops_{k}" for k in drop_keys], data


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    columns, data = _table_layout(rows)
    records = [[data[c][i] for c in columns] for i in range(len(rows))]
    df = pd.DataFrame.from_records(records, columns=columns)
    # Optional numbers (a delay when nothing was received) come as None; keep such
    # columns float64 with NaN rather than object, so CSV and Parquet agree on the type.
    for col in df.columns:
        if df[col].dtype == object and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in df[col]):
            df[col] = df[col].astype("float64")
    return df


# --- tables without pandas ------------------------------------------------------

#: One table column: (name, kind, values); kind as `_core.write_parquet` takes it.
Column = tuple[str, str, list[Any]]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _kind(values: list[Any]) -> str | None:
    """The dtype the DataFrame tables give a column of these values (`_frame`:
    pandas' inference, then all-number-or-missing columns as float64), or None
    for a mix with no rule here (the table is then written by pandas):
    "int64" (ints, none missing), "float64" (numbers, missing ones NaN; also a
    column with no value at all), "bool" (with a missing one: pandas' object
    column of True/False/None), "str" (strings, missing ones None)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, str) for v in present):
        return "str"
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in present):
        return None
    if len(present) == len(values) and all(isinstance(v, int) for v in present):
        return "int64" if all(_INT64_MIN <= v <= _INT64_MAX for v in present) else None
    return "float64"


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


def _columns_of(names: list[str], data: dict[str, list[Any]]) -> list[Column] | None:
    cols = []
    for n in names:
        values = data[n]
        kind = _kind(values)
        if kind is None:
            return None
        cols.append((n, kind, [_float(v) for v in values] if kind == "float64" else values))
    return cols


def _table_columns(rows: list[dict[str, Any]]) -> list[Column] | None:
    """`_frame(rows)` as columns: the same column order and values."""
    return _columns_of(*_table_layout(rows))


def _concat_columns(parts: list[dict[str, list[Any]]], empty: list[str]) -> list[Column] | None:
    """Row blocks concatenated like `pd.concat(frames)` (a column missing from a
    block is missing in its rows); no blocks: the columns `empty`, no rows (an
    empty table's columns are "null", pandas' object columns of no type)."""
    if not parts:
        return [(n, "null", []) for n in empty]
    names: list[str] = []
    for p in parts:
        names += [k for k in p if k not in names]
    rows = [len(next(iter(p.values()))) for p in parts]
    data = {n: [v for p, k in zip(parts, rows) for v in (p[n] if n in p else [None] * k)] for n in names}
    return _columns_of(names, data)


def _csv_cell(kind: str, v: Any) -> Any:
    # As DataFrame.to_csv writes them: missing as "", floats as numpy's shortest
    # repr (the same digits as Python's repr), bools as True/False; text (a flow
    # name) neutralised against spreadsheet formulas as safeio.csv_frame does.
    if v is None:
        return ""
    if kind == "str":
        return safeio.csv_text(v)
    return repr(v) if kind == "float64" else v


def _write_csv(path: Path, cols: list[Column]) -> None:
    """`safeio.csv_frame(df).to_csv(path, index=False, lineterminator="\\n")` of the
    table `cols`, byte for byte (pandas writes through this same csv module);
    `path` is a new file."""
    import csv

    with safeio.create_new(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        w.writerow([safeio.csv_text(n) for n, _, _ in cols])
        n_rows = len(cols[0][2]) if cols else 0
        for i in range(n_rows):
            w.writerow([_csv_cell(kind, values[i]) for _, kind, values in cols])
