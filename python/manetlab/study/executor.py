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
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import signal
import socket
import time
import traceback
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

__all__ = ["DaskExecutor", "LocalExecutor", "Task", "code_version", "metrics_of", "run_task"]

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
    (including a panic in the core) comes back as ``status = "failed"``."""
    from manetlab import _core

    t0 = time.perf_counter()
    out: dict[str, Any] = {"code_version": code_version(), "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        if task.out_dir is not None:
            os.makedirs(task.out_dir, exist_ok=True)
        summary_json = _core.run(task.scenario_json, task.out_dir)
        metrics = metrics_of(json.loads(summary_json))
        out.update(status="ok", error=None, metrics=metrics, summary_z=zlib.compress(summary_json.encode("utf-8"), 6))
    except BaseException as e:  # noqa: BLE001 - pyo3's PanicException derives from BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        msg = " ".join(str(e).split()) or type(e).__name__
        out.update(status="failed", error=f"{type(e).__name__}: {msg}", metrics=None, summary_z=None, traceback=traceback.format_exc(limit=5))
    out["wall_s"] = time.perf_counter() - t0
    return out


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
            if v is None and (k.endswith("_s") or k.endswith("_kbps") or k == "pdr"):
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
    # workers); a worker must not die of it with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
            p.start()
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


class DaskExecutor:
    """Runs tasks on a Dask distributed cluster: a scheduler address
    (``tcp://host:8786``) or a `distributed.Client`."""

    def __init__(self, scheduler: Any, fn: Callable[[Task], dict[str, Any]] = run_task) -> None:
        self.scheduler = scheduler
        self.fn = fn
        self.describe = f"Dask scheduler {scheduler if isinstance(scheduler, str) else getattr(scheduler, 'scheduler', scheduler)}"

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        from distributed import Client, as_completed

        own = isinstance(self.scheduler, str)
        client = Client(self.scheduler) if own else self.scheduler
        try:
            futures = {}
            for t in tasks:
                fut = client.submit(self.fn, t, pure=False, key=f"manetlab-run-{t.scenario_hash[:16]}-{t.seed}-{time.monotonic_ns()}")
                futures[fut] = t
            for fut in as_completed(list(futures)):
                t = futures.pop(fut)
                try:
                    result = fut.result()
                except Exception as e:  # noqa: BLE001 - e.g. KilledWorker: the run's worker died repeatedly
                    result = {"status": "failed", "error": f"{type(e).__name__}: {' '.join(str(e).split())}", "metrics": None,
                              "summary_z": None, "wall_s": math.nan, "code_version": code_version(), "worker": "dask"}
                yield t, result
        finally:
            if own:
                client.close()
