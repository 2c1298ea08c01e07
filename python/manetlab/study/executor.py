"""Running a study's simulations: the per-run task and the executors.

A task is one (scenario, seed): the worker calls the core in-process (no
interpreter start, no pandas import per run), reduces the summary to scalar
metrics and returns them with the zlib-compressed summary. Executors only move
tasks and results:

* `LocalExecutor`: N worker processes (spawned once, each running many tasks),
  fed one task at a time over a pipe, so the parent always knows which run a
  worker holds; a worker that dies (segfault, OOM kill) is replaced and its run
  retried once, then recorded as failed.
* `DaskExecutor`: the same task function submitted to a Dask distributed
  scheduler (a LocalCluster, or dask-jobqueue on a cluster); a worker that dies
  is handled by Dask (its ``distributed.scheduler.allowed-failures``).

Results do not depend on the executor: a run's output is a function of its
scenario and seed only (docs/kernel.md).

A run's trace files are written by the core into a fresh staging folder
(``runs/.tmp-<run>-<random>``), fsynced, then renamed one by one into
``runs/<run>/`` (a rename replaces a symlink planted there, it never writes
through it); the parent commits the run's row only after the worker returned,
so a committed row's files are complete. Every result is checked against its
task (`check_result`) before it is stored; Dask results travel as JSON text.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import math
import multiprocessing
import os
import secrets
import signal
import socket
import stat
import time
import traceback
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Self

__all__ = ["DaskExecutor", "LocalExecutor", "Task", "check_result", "code_version", "metrics_of", "run_task"]

#: Prefix of a run's staging folder in ``runs/`` (left-overs of a killed run are removed by the next `study run`).
STAGING_PREFIX = ".tmp-"

_CODE_VERSION: str | None = None


def code_version() -> str:
    """manetlab's version plus a hash of the compiled core: a rebuilt core with
    different code is a different version even when the version number is not."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        from manetlab import _core

        h = hashlib.sha256()
        with open(_core.__file__, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _CODE_VERSION = f"{_core.__version__}+{h.hexdigest()[:12]}"
    return _CODE_VERSION


@dataclass
class Task:
    """One run: its store key, the scenario as JSON with the seed set, and where
    trace files go (None when the scenario asks for none)."""

    scenario_hash: str
    seed: int
    scenario_json: str
    out_dir: str | None = None
    attempts: int = 0

    @property
    def key(self) -> tuple[str, int]:
        return (self.scenario_hash, self.seed)


def run_task(task: Task) -> dict[str, Any]:
    """Run one task in this process; never raises for a failing run: an error
    (including a panic in the core) comes back as ``status = "failed"``. A run
    whose trace files cannot be written (disk full, a read-only or symlinked
    folder) comes back with ``io_error`` set: the study stops there instead of
    recording the run, so a later `study run` redoes it."""
    from manetlab import _core

    t0 = time.perf_counter()
    out: dict[str, Any] = {"code_version": code_version(), "worker": f"{socket.gethostname()}:{os.getpid()}",
                           "scenario_hash": task.scenario_hash, "seed": task.seed}
    try:
        if task.out_dir is None:
            summary_json = _core.run(task.scenario_json, None)
        else:
            with TraceStaging(task.out_dir) as staging:
                summary_json = _core.run(task.scenario_json, staging.path)
                staging.publish(json.loads(summary_json).get("outputs", []))
        metrics = metrics_of(json.loads(summary_json))
        out.update(status="ok", error=None, metrics=metrics, summary_z=zlib.compress(summary_json.encode("utf-8"), 6))
    except BaseException as e:  # pyo3's PanicException derives from BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        msg = " ".join(str(e).split()) or type(e).__name__
        io = _io_error(e, task.out_dir)
        out.update(status="failed", error=io or f"{type(e).__name__}: {msg}", metrics=None, summary_z=None,
                   traceback=traceback.format_exc(limit=5))
        if io:
            out["io_error"] = True
    out["wall_s"] = time.perf_counter() - t0
    return out


def _io_error(e: BaseException, out_dir: str | None) -> str | None:
    """A one-line ``<folder>: <reason>`` when `e` is a failure to write trace
    files (not the run's fault), else None."""
    if isinstance(e, _TraceFolderError):
        return str(e)
    if type(e) is OSError and out_dir is not None:  # the core's "cannot write outputs to DIR: ... (os error N)"
        text = str(e)
        for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO, errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            if f"(os error {code})" in text:
                what = os.strerror(code)
                return f"{out_dir}: {what[:1].lower()}{what[1:]}"
        if e.errno is not None:
            what = e.strerror or os.strerror(e.errno)
            return f"{out_dir}: {what[:1].lower()}{what[1:]}"
    return None


# ----------------------------------------------------------------------------- trace files


class _TraceFolderError(Exception):
    """A run's trace folder cannot be written safely (one line)."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_subdir(parent_fd: int, name: str, where: str) -> int:
    """``name`` in the folder `parent_fd`, created if missing; a symlink or a
    file in its place is refused, never followed."""
    try:
        os.mkdir(name, 0o777, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _TraceFolderError(f"{where}: not a directory (a symbolic link or a file); refusing to write through it") from None
        raise


class TraceStaging:
    """A run's trace files, written where no one else writes, then published.

    ``path``: a fresh folder ``<runs>/.tmp-<run>-<random>`` (created here, mode
    0700, so nothing can be planted in it) for the core to write into.
    `publish` checks each file's size against the run's summary, fsyncs it,
    renames it into ``<runs>/<run>/`` (replacing whatever is there, a symlink
    included, never writing through it) and fsyncs the folders. On leaving, the
    staging folder is removed whatever happened.
    """

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        runs, self.name = os.path.split(os.path.normpath(out_dir))
        study = os.path.dirname(runs) or "."
        self.runs_path = runs
        try:
            os.makedirs(study, exist_ok=True)  # a Dask worker on another machine may not have it yet
            study_fd = os.open(study, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise _TraceFolderError(_oneline(study, e)) from None
        try:
            self.runs_fd = _open_subdir(study_fd, os.path.basename(runs), runs)
        except OSError as e:
            raise _TraceFolderError(_oneline(runs, e)) from None
        finally:
            os.close(study_fd)
        self.staging = f"{STAGING_PREFIX}{self.name}-{secrets.token_hex(6)}"
        try:
            os.mkdir(self.staging, 0o700, dir_fd=self.runs_fd)
            self.staging_fd = os.open(self.staging, _DIR_FLAGS, dir_fd=self.runs_fd)
        except OSError as e:
            os.close(self.runs_fd)
            raise _TraceFolderError(_oneline(runs, e)) from None
        self.path = os.path.join(runs, self.staging)

    def publish(self, outputs: list[dict[str, Any]]) -> None:
        names = sorted(os.listdir(self.staging_fd))
        sizes = {o.get("file"): o.get("bytes") for o in outputs if isinstance(o, dict)}
        try:
            for n in names:
                fd = os.open(n, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.staging_fd)
                try:
                    st = os.fstat(fd)
                    if stat.S_ISREG(st.st_mode) and n in sizes and sizes[n] != st.st_size:
                        raise _TraceFolderError(f"{self.out_dir}/{n}: {st.st_size} bytes written, the run reports {sizes[n]}")
                    os.fsync(fd)
                finally:
                    os.close(fd)
            final_fd = _open_subdir(self.runs_fd, self.name, self.out_dir)
            try:
                for n in names:
                    os.rename(n, n, src_dir_fd=self.staging_fd, dst_dir_fd=final_fd)
                os.fsync(final_fd)
            finally:
                os.close(final_fd)
        except OSError as e:
            raise _TraceFolderError(_oneline(self.out_dir, e)) from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.staging_fd)
        try:
            _remove(self.runs_fd, self.staging)
            os.fsync(self.runs_fd)
        except OSError:
            pass  # removed by the next `study run` (remove_staging)
        finally:
            os.close(self.runs_fd)


def _remove(dir_fd: int, name: str) -> None:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            for n in os.listdir(fd):
                _remove(fd, n)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def remove_staging(study_dir: str | os.PathLike[str]) -> int:
    """Remove the staging folders runs killed mid-way left in ``<study>/runs``
    (call it holding the study's lock: no run of this study is writing).
    Returns how many were removed."""
    runs = os.path.join(os.fspath(study_dir), "runs")
    try:
        fd = os.open(runs, _DIR_FLAGS)
    except OSError:
        return 0
    n = 0
    try:
        for name in os.listdir(fd):
            if name.startswith(STAGING_PREFIX):
                _remove(fd, name)
                n += 1
    finally:
        os.close(fd)
    return n


def _oneline(where: str, e: OSError) -> str:
    what = e.strerror or str(e)
    return f"{where}: {what[:1].lower()}{what[1:]}"


# ----------------------------------------------------------------------------- checking results


def _same_number(a: Any, b: Any) -> bool:
    if not isinstance(a, (int, float)) or isinstance(a, bool) or not isinstance(b, (int, float)):
        return False
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_result(task: Task, result: Any, version: str) -> dict[str, Any]:
    """`result` if it is a well-formed result of `task` under code `version`,
    else a failed result saying what is wrong (stored as an error, never as ok).

    An ``ok`` result must carry the task's scenario hash and seed and the code
    version, and a summary (zlib JSON) whose seed, scenario name, duration and
    flow and node counts are the task's scenario's, whose run is complete, and
    from which its metrics follow (`metrics_of`, same names and values). This
    catches a worker running other code or a mixed-up or tampered result; it
    cannot catch a worker that forges a consistent summary, which is why a Dask
    cluster must be trusted (docs/studies.md#executors).
    """
    keep = result if isinstance(result, dict) else {}
    wall = keep.get("wall_s")
    attempts = keep.get("attempts")
    # Only plain fields of known types reach the store, whatever the worker sent.
    plain = {"wall_s": float(wall) if isinstance(wall, (int, float)) and not isinstance(wall, bool) else math.nan,
             "worker": str(keep.get("worker", "?"))[:200], "code_version": version,
             **({"attempts": attempts} if isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= 1 else {})}

    def failed(why: str, error: str | None = None) -> dict[str, Any]:
        return {"status": "failed", "error": error or f"result rejected: {why}", "metrics": None, "summary_z": None, **plain}

    if not isinstance(result, dict) or result.get("status") not in ("ok", "failed"):
        return failed("not a result (a table with status ok or failed)")
    if result["status"] == "failed":
        err = result.get("error")
        return failed("", " ".join(str(err).split())[:2000] if err is not None else "failed")
    if result.get("code_version") != version:
        return failed("", f"worker ran code version {str(result.get('code_version'))[:100]}, the study {version}: install the same build everywhere")
    if result.get("scenario_hash") != task.scenario_hash or result.get("seed") != task.seed:
        return failed("it is for another run (scenario hash or seed differ from the task's)")
    z = result.get("summary_z")
    if not isinstance(z, bytes):
        return failed("no summary")
    try:
        summary = json.loads(zlib.decompress(z))
    except (zlib.error, ValueError):
        return failed("its summary is not zlib-compressed JSON")
    if not isinstance(summary, dict):
        return failed("its summary is not a JSON object")
    scenario = json.loads(task.scenario_json)
    want = {"seed": task.seed, "scenario_name": scenario.get("name"), "duration_s": scenario.get("duration_s"), "partial": False}
    for k, v in want.items():
        if v is not None and summary.get(k) != v:
            return failed(f"summary {k} is {str(summary.get(k))[:50]}, the task's {v}")
    n_nodes = (scenario.get("nodes") or {}).get("count")
    if n_nodes is not None and len(summary.get("nodes") or []) != n_nodes:
        return failed("its summary's node count differs from the scenario's")
    if len(summary.get("flows") or []) != len(scenario.get("flows") or []):
        return failed("its summary's flow count differs from the scenario's")
    metrics = result.get("metrics")
    if not isinstance(metrics, dict):
        return failed("no metrics")
    try:
        expected = metrics_of(summary)
    except (TypeError, ValueError, KeyError, AttributeError):
        return failed("its summary does not have the schema of a run's summary")
    if set(metrics) != set(expected) or not all(_same_number(metrics[k], v) for k, v in expected.items()):
        return failed("its metrics do not follow from its summary (metrics_of)")
    return {"status": "ok", "error": None, "metrics": expected, "summary_z": z, **plain}


# ----------------------------------------------------------------------------- metrics

# Identity and configuration fields of a flow, not measurements.
_FLOW_NOT_METRICS = {"flow", "src", "dst", "start_s", "stop_s", "mss_bytes"}
_NODE_NOT_METRICS = {"node", "x_m", "y_m"}


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def metrics_of(summary: dict[str, Any]) -> dict[str, float]:
    """A run's summary reduced to named scalars (docs/studies.md#metrics).

    ``flow<N>.<field>`` for every numeric field of flow N (its ``tcp`` fields
    included, unprefixed, as `manetlab compare` reads them) and
    ``flow<N>.drops_<code>`` per drop reason; ``total.*`` over all flows
    (packets, bytes, throughput summed; ``total.pdr`` = Σrx / Σtx);
    ``nodes.<field>`` summed over nodes (maximum for ``*max*`` fields);
    ``events`` and ``jain_throughput`` (Jain's index of flow throughputs).
    A value the run could not measure (a delay with nothing received) is NaN.
    """
    from manetlab.stats import jain_index

    m: dict[str, float] = {}
    totals = {"tx_packets": 0.0, "rx_packets": 0.0, "tx_bytes": 0.0, "rx_bytes": 0.0, "throughput_kbps": 0.0}
    for f in summary.get("flows", []):
        p = f"flow{f['flow']}."
        fields = {k: v for k, v in f.items() if k not in ("tcp", "drops")}
        fields.update({k: v for k, v in (f.get("tcp") or {}).items() if k not in fields and k != "trace"})
        for k, v in fields.items():
            if k in _FLOW_NOT_METRICS:
                continue
            if v is None and (k.endswith(("_s", "_kbps")) or k == "pdr"):
                m[p + k] = math.nan
            elif (x := _number(v)) is not None:
                m[p + k] = x
        for code, n in (f.get("drops") or {}).items():
            m[f"{p}drops_{code}"] = float(n)
        for k in totals:
            totals[k] += _number(f.get(k)) or 0.0
    for k, v in totals.items():
        m[f"total.{k}"] = v
    m["total.pdr"] = totals["rx_packets"] / totals["tx_packets"] if totals["tx_packets"] else math.nan
    nodes: dict[str, float] = {}
    for n in summary.get("nodes", []):
        for k, v in n.items():
            x = _number(v)
            if k in _NODE_NOT_METRICS or x is None:
                continue
            nodes[k] = max(nodes.get(k, x), x) if "max" in k else nodes.get(k, 0.0) + x
    m.update({f"nodes.{k}": v for k, v in nodes.items()})
    m["events"] = float(summary.get("events", 0))
    thr = [_number(f.get("throughput_kbps")) or 0.0 for f in summary.get("flows", [])]
    m["jain_throughput"] = jain_index(thr) if thr else math.nan
    return m


# ----------------------------------------------------------------------------- local pool


def _worker_main(conn: Connection, fn: Callable[[Task], dict[str, Any]]) -> None:
    # Ctrl-C reaches the whole process group: the parent handles it (and ends its
    # workers); a worker must not die of it with a traceback of its own. It was
    # started with SIGINT blocked (`_start_without_sigint`): ignore it, which
    # discards one pending since, then unblock.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone (killed): nothing to report to
        if task is None:
            return
        try:
            conn.send(fn(task))
        except (BrokenPipeError, OSError):
            return


def _start_without_sigint(p: Any) -> None:
    """Start process `p` so that a Ctrl-C cannot give a traceback.

    In the worker: SIGINT is blocked while it starts; the mask is inherited
    through fork and exec and Python leaves it so, so a Ctrl-C sent to the
    process group while the spawned interpreter starts up (imports, unpickling)
    stays pending there instead of raising KeyboardInterrupt; the worker then
    ignores it, which discards it (`_worker_main`). multiprocessing's resource
    tracker is started first, since starting it unblocks SIGINT.

    Here: a SIGINT or SIGTERM during `start` is held back until `start`
    returned (another thread may take the signal, so a mask is not enough), so
    it cannot cut the hand-over of the worker's start-up data (the worker
    would fail reading it, with a traceback); then the handler runs as usual."""
    import threading
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    held: list[int] = []
    handlers: dict[int, Any] = {}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                handlers[sig] = signal.signal(sig, lambda signum, frame: held.append(signum))
        p.start()
    finally:
        for signum, h in handlers.items():
            signal.signal(signum, h)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for signum in held[:1]:
        h = handlers[signum]
        if callable(h):
            h(signum, None)
        elif h == signal.SIG_DFL:
            signal.raise_signal(signum)


class LocalExecutor:
    """`jobs` worker processes on this machine (default: one per core)."""

    #: How often a run whose worker died is tried in all.
    max_attempts = 2

    def __init__(self, jobs: int | None = None, fn: Callable[[Task], dict[str, Any]] = run_task) -> None:
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        if self.jobs < 1:
            raise ValueError(f"jobs must be >= 1, not {self.jobs}")
        self.fn = fn
        self.describe = f"local pool, {self.jobs} worker process{'es' if self.jobs != 1 else ''}"

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        ctx = multiprocessing.get_context("spawn")  # no fork of a parent with threads (tqdm, Dask)
        pending = deque(tasks)
        workers: dict[Connection, tuple[Any, Task | None]] = {}

        def start() -> Connection:
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker_main, args=(child, self.fn), daemon=True, name="manetlab-study-worker")
            _start_without_sigint(p)
            child.close()
            workers[parent] = (p, None)
            return parent

        def feed(conn: Connection) -> None:
            p, _ = workers[conn]
            if pending:
                t = pending.popleft()
                conn.send(t)
                workers[conn] = (p, t)
            else:
                conn.send(None)
                conn.close()
                p.join()
                del workers[conn]

        try:
            for _ in range(min(self.jobs, len(pending))):
                feed(start())
            while workers:
                by_sentinel = {p.sentinel: c for c, (p, _) in workers.items()}
                ready = wait(list(workers) + list(by_sentinel))
                lost: set[Connection] = set()
                for r in ready:
                    conn = by_sentinel.get(r, r)  # a sentinel stands for its worker's pipe
                    if conn not in workers or conn in lost:
                        continue
                    p, task = workers[conn]
                    if r is conn:
                        try:
                            result = conn.recv()
                        except (EOFError, OSError):
                            lost.add(conn)
                            continue
                        workers[conn] = (p, None)
                        assert task is not None  # a worker answers only the task it was sent
                        yield task, result
                        feed(conn)
                    else:
                        lost.add(conn)
                for conn in lost:
                    p, task = workers.pop(conn)
                    conn.close()
                    p.join(timeout=5)
                    if task is not None:
                        task.attempts += 1
                        why = f"worker process died (exit code {p.exitcode}) while running it"
                        if task.attempts < self.max_attempts:
                            pending.appendleft(task)
                        else:
                            yield task, {"status": "failed", "error": f"{why}, {task.attempts} times", "metrics": None, "summary_z": None,
                                         "wall_s": math.nan, "code_version": code_version(), "worker": "local", "attempts": task.attempts}
                    if pending:
                        feed(start())
        finally:
            for conn, (p, _) in list(workers.items()):
                try:
                    conn.close()
                except OSError:
                    pass
                if p.is_alive():
                    p.terminate()
                p.join(timeout=5)


# ----------------------------------------------------------------------------- Dask


def to_wire(result: dict[str, Any]) -> str:
    """A result as JSON text (plain data: what a Dask worker sends back)."""
    r = dict(result)
    z = r.pop("summary_z", None)
    r["summary_z_b64"] = base64.b64encode(z).decode("ascii") if isinstance(z, bytes) else None
    return json.dumps(r, allow_nan=True)


def from_wire(text: Any) -> dict[str, Any]:
    """`to_wire`'s inverse; anything else becomes a failed result."""
    try:
        if not isinstance(text, str):
            raise ValueError("not JSON text")
        r = json.loads(text)
        if not isinstance(r, dict):
            raise ValueError("not a JSON object")
        z = r.pop("summary_z_b64", None)
        r["summary_z"] = base64.b64decode(z, validate=True) if isinstance(z, str) else None
        return r
    except ValueError as e:
        return {"status": "failed", "error": f"result rejected: the worker sent no result in JSON ({str(e)[:100]})", "metrics": None,
                "summary_z": None, "wall_s": math.nan, "worker": "dask"}


def _dask_task(fn: Callable[[Task], dict[str, Any]], task: Task) -> str:
    """What runs on a Dask worker: the task function, its result as JSON text."""
    return to_wire(fn(task))


class DaskExecutor:
    """Runs tasks on a Dask distributed cluster: a scheduler address
    (``tcp://host:8786``, ``tls://host:8786``) or a `distributed.Client`.

    Dask's configuration applies (``distributed.comm.tls.*``,
    ``distributed.comm.require-encryption``: TLS with client certificates,
    docs/studies.md#executors). Results come back as JSON text; a client made
    here reads them with msgpack only (``deserializers=["msgpack"]``), so a
    result is never unpickled. The cluster must be trusted all the same: any
    client of a scheduler can run code on its workers."""

    def __init__(self, scheduler: Any, fn: Callable[[Task], dict[str, Any]] = run_task) -> None:
        self.scheduler = scheduler
        self.fn = fn
        self.describe = f"Dask scheduler {scheduler if isinstance(scheduler, str) else getattr(scheduler, 'scheduler', scheduler)}"

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        from distributed import Client, as_completed

        own = isinstance(self.scheduler, str)
        if own:
            try:
                client = Client(self.scheduler, deserializers=["msgpack"])
            except (OSError, TypeError, ValueError) as e:  # unreachable, timed out, TLS not configured or refused
                from manetlab.scenario import ScenarioError

                msg = " ".join(str(e).split())[:300] or type(e).__name__
                raise ScenarioError(f"--scheduler: cannot connect to {self.scheduler[:200]!r}: {msg} "
                                    "(a tls:// scheduler needs Dask's TLS settings: docs/studies.md#executors)") from None
        else:
            client = self.scheduler
        try:
            futures = {}
            for t in tasks:
                fut = client.submit(_dask_task, self.fn, t, pure=False, key=f"manetlab-run-{t.scenario_hash[:16]}-{t.seed}-{time.monotonic_ns()}")
                futures[fut] = t
            for fut in as_completed(list(futures)):
                t = futures.pop(fut)
                try:
                    result = from_wire(fut.result())
                except Exception as e:  # noqa: BLE001 - e.g. KilledWorker: the run's worker died repeatedly
                    result = {"status": "failed", "error": f"{type(e).__name__}: {' '.join(str(e).split())}", "metrics": None,
                              "summary_z": None, "wall_s": math.nan, "code_version": code_version(), "worker": "dask"}
                yield t, result
        finally:
            if own:
                client.close()
