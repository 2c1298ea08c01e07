"""The study store: one SQLite database in the study directory.

SQLite (Python's standard library, no extra dependency) rather than DuckDB: the
store's work is many small transactional writes, one per finished run, while
other processes read it (`manetlab study status` during a run); DuckDB allows one
writing process and no concurrent reader from another process, and is an
analytics engine we do not need at this size (a row per run; the statistics are
computed in pandas). Write-ahead logging makes each committed row survive a
SIGKILL of the writer; the primary key makes a re-written run replace its row,
never duplicate it. Schema: docs/studies.md#store.

One process runs a study directory at a time: `StudyLock` (an exclusive
``flock`` on ``study.lock``, which holds the holder's PID) is taken by
`Study.run` before it opens the store for writing. Readers (`study status`,
`study results`) take no lock and open the store read-only, so they also work
on read-only media.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import os
import sqlite3
import stat
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

__all__ = ["LOCK_NAME", "STORE_NAME", "Store", "StoreError", "StudyLock", "StudyLocked"]

STORE_NAME = "study.sqlite"
LOCK_NAME = "study.lock"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS manifests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    written_at TEXT NOT NULL,
    code_version TEXT NOT NULL,
    manifest_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS scenarios (
    scenario_hash TEXT PRIMARY KEY,
    scenario_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    scenario_hash TEXT NOT NULL,
    seed INTEGER NOT NULL,
    code_version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    attempts INTEGER NOT NULL,
    metrics_json TEXT,
    summary_z BLOB,
    wall_s REAL,
    worker TEXT,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (scenario_hash, seed, code_version)
);
"""


class StudyLocked(Exception):
    """Another process is running this study directory (`StudyLock` is held)."""

    def __init__(self, study_dir: Path, pid: int | None) -> None:
        self.study_dir = study_dir
        self.pid = pid
        who = f"pid {pid}" if pid is not None else "a process that has not written its pid yet"
        super().__init__(f"{study_dir}: another `study run` is running this study directory ({who}); "
                         "wait for it to end, or pass --wait to queue behind it")


class StoreError(Exception):
    """The study directory cannot be read or written (disk full, read-only,
    permissions, a symlink where a directory must be): one line, no traceback."""


def io_message(where: str | os.PathLike[str], e: BaseException) -> str:
    """``<where>: <what went wrong>`` in one line, lower case (``no space left on device``)."""
    if isinstance(e, OSError) and e.strerror:
        what = e.strerror
    elif isinstance(e, sqlite3.Error):
        text = str(e)
        what = {"database or disk is full": "no space left on device",
                "attempt to write a readonly database": "read-only file system or store"}.get(text, text)
    else:
        what = str(e) or type(e).__name__
    what = " ".join(what.split())
    return f"{where}: {what[:1].lower()}{what[1:]}"


def _pid_in(fd: int) -> int | None:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class StudyLock:
    """An exclusive lock on a study directory: ``flock`` on ``<dir>/study.lock``,
    a file holding the holder's PID. The kernel releases it when the holder ends
    (even by SIGKILL), so a stale lock file never blocks anyone.

    `wait` False: a held lock raises `StudyLocked` at once; True: `on_wait(pid)`
    is called once and the lock is awaited (Ctrl-C/SIGTERM interrupt the wait).
    """

    def __init__(self, study_dir: str | os.PathLike[str], wait: bool = False, on_wait: Any = None) -> None:
        self.dir = Path(study_dir)
        self.path = self.dir / LOCK_NAME
        self.wait = wait
        self.on_wait = on_wait
        self.fd: int | None = None

    def acquire(self) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            # O_NOFOLLOW: a symlink planted as study.lock is refused, never followed.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise StoreError(f"{self.path}: is a symbolic link; refusing to follow it (remove it)") from None
            raise StoreError(io_message(self.path if self.dir.is_dir() else self.dir, e)) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StoreError(f"{self.path}: not a regular file; refusing to use it as the study lock")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # The holder writes its pid right after it took the lock: give it a moment.
                pid = _pid_in(fd)
                for _ in range(100):
                    if pid is not None:
                        break
                    time.sleep(0.01)
                    pid = _pid_in(fd)
                if not self.wait:
                    raise StudyLocked(self.dir, pid) from None
                if self.on_wait is not None:
                    self.on_wait(pid)
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                text = f"{os.getpid()}\n".encode()
                os.pwrite(fd, text, 0)  # then cut what a longer pid left: never empty meanwhile
                os.ftruncate(fd, len(text))
            except OSError:
                pass  # a full disk: the lock holds all the same, only its pid is not shown
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            os.close(self.fd)  # releases the flock
            self.fd = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Store:
    """The runs of one study directory.

    ``create=True`` (what `Study.run` uses, under `StudyLock`): created on
    first use, opened for writing. ``create=False``: opened read-only and
    never written (no journal-mode change, no meta row), so a store on a
    read-only medium can be read; when SQLite cannot even create its shared-memory
    file there (a write-ahead-logged database on a read-only mount) the file is
    opened as immutable. Errors of the file system (disk full, read-only,
    permissions) are `StoreError` with a one-line message.
    """

    def __init__(self, study_dir: str | os.PathLike[str], create: bool = True) -> None:
        self.dir = Path(study_dir)
        self.path = self.dir / STORE_NAME
        self.readonly = not create
        if not create:
            if not self.path.exists():
                raise FileNotFoundError(f"no study store at {self.path} (run the study first)")
            self.db = _open_readonly(self.path)
            return
        for suffix in ("", "-wal", "-shm", "-journal"):
            p = self.path.with_name(STORE_NAME + suffix)
            if p.is_symlink() or (p.exists() and not p.is_file()):
                # SQLite would write through it (to wherever it points).
                raise StoreError(f"{p}: not a regular file (a symbolic link?); refusing to write through it")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per row.
            self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a commit survives a killed process (not a power cut, which is fine here).
                self.db.execute("PRAGMA synchronous=NORMAL")
                # One transaction: a store has all its tables or none (a full disk
                # while creating it leaves nothing half made).
                self.db.executescript(f"BEGIN IMMEDIATE;\n{_SCHEMA}\n"
                                      f"INSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');\nCOMMIT;")
            except BaseException:
                try:
                    if self.db.in_transaction:
                        self.db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                self.db.close()
                raise
        except (OSError, sqlite3.Error) as e:
            raise StoreError(io_message(self.path, e)) from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- manifest ------------------------------------------------------------

    def write_manifest(self, manifest: dict[str, Any], code_version: str, scenarios: Iterable[tuple[str, str]]) -> None:
        """Record the study as about to be run (kept as history) and its cells' scenarios."""
        text = json.dumps(manifest, sort_keys=True)
        with self._tx():
            last = self.db.execute("SELECT manifest_json, code_version FROM manifests ORDER BY id DESC LIMIT 1").fetchone()
            if last != (text, code_version):
                self.db.execute("INSERT INTO manifests (written_at, code_version, manifest_json) VALUES (?, ?, ?)", (_now(), code_version, text))
            self.db.executemany("INSERT OR IGNORE INTO scenarios VALUES (?, ?)", list(scenarios))

    def manifest(self) -> tuple[dict[str, Any], str] | None:
        row = self.db.execute("SELECT manifest_json, code_version FROM manifests ORDER BY id DESC LIMIT 1").fetchone()
        return (json.loads(row[0]), row[1]) if row else None

    # -- runs ----------------------------------------------------------------

    def put(self, scenario_hash: str, seed: int, code_version: str, result: dict[str, Any], attempts: int) -> None:
        """Write one finished run atomically, replacing any earlier row of the same key."""
        metrics = result.get("metrics")
        with self._tx():
            self.db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scenario_hash,
                    seed,
                    code_version,
                    result["status"],
                    result.get("error"),
                    attempts,
                    json.dumps(metrics, allow_nan=True) if metrics is not None else None,
                    result.get("summary_z"),
                    result.get("wall_s"),
                    result.get("worker"),
                    _now(),
                ),
            )

    def keys(self, code_version: str, status: str | None = None) -> set[tuple[str, int]]:
        q = "SELECT scenario_hash, seed FROM runs WHERE code_version = ?"
        args: tuple[Any, ...] = (code_version,)
        if status is not None:
            q += " AND status = ?"
            args += (status,)
        return {(h, s) for h, s in self.db.execute(q, args)}

    def rows(self, code_version: str) -> dict[tuple[str, int], dict[str, Any]]:
        """(scenario_hash, seed) -> the run's status, error, metrics, wall_s, attempts."""
        out = {}
        for h, s, status, err, att, mj, wall, worker in self.db.execute(
            "SELECT scenario_hash, seed, status, error, attempts, metrics_json, wall_s, worker FROM runs WHERE code_version = ?", (code_version,)
        ):
            out[(h, s)] = {"status": status, "error": err, "attempts": att, "metrics": json.loads(mj) if mj else None, "wall_s": wall, "worker": worker}
        return out

    def summary(self, scenario_hash: str, seed: int, code_version: str) -> str | None:
        """A run's summary.json text, or None."""
        row = self.db.execute(
            "SELECT summary_z FROM runs WHERE scenario_hash = ? AND seed = ? AND code_version = ?", (scenario_hash, seed, code_version)
        ).fetchone()
        return zlib.decompress(row[0]).decode("utf-8") if row and row[0] is not None else None

    def versions(self) -> dict[str, int]:
        """Code version -> number of runs stored under it."""
        return dict(self.db.execute("SELECT code_version, COUNT(*) FROM runs GROUP BY code_version ORDER BY MIN(finished_at)"))

    def _tx(self) -> _Tx:
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only")
        return _Tx(self.db, self.path)


class _Tx:
    """One write transaction; a failing write or commit (disk full) is rolled
    back, so the store keeps its last committed state, and becomes `StoreError`."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise StoreError(io_message(self.path, e)) from None

    def __exit__(self, typ: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> Literal[False]:
        if typ is None:
            try:
                self.db.execute("COMMIT")
                return False
            except sqlite3.Error as e:
                self._rollback()
                raise StoreError(io_message(self.path, e)) from None
        self._rollback()
        if isinstance(value, sqlite3.Error):
            raise StoreError(io_message(self.path, value)) from None
        return False

    def _rollback(self) -> None:
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _open_readonly(path: Path) -> sqlite3.Connection:
    """`path` opened read-only (``mode=ro``), else, when SQLite cannot open it so
    because it cannot create the write-ahead log's shared-memory file (a
    read-only mount), as immutable (``immutable=1``: the log of a writer killed
    mid-study is then not read). A store whose creation never finished (no
    tables) is `FileNotFoundError`, like a missing one."""
    uri = path.resolve().as_uri()
    first: sqlite3.Error | None = None
    for query in ("mode=ro", "mode=ro&immutable=1"):
        db = sqlite3.connect(f"{uri}?{query}", uri=True, isolation_level=None)
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as e:
            db.close()
            if first is None:
                first = e
                if getattr(e, "sqlite_errorname", "SQLITE_CANTOPEN") == "SQLITE_CANTOPEN":
                    continue
            break
        if not {"runs", "manifests", "scenarios"} <= tables:
            db.close()
            raise FileNotFoundError(f"no study store at {path} (its creation did not finish: run the study first)")
        return db
    raise StoreError(io_message(path, first if first is not None else sqlite3.Error("cannot open")))


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
