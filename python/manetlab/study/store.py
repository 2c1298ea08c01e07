"""The study store: one SQLite database in the study directory.

SQLite (Python's standard library, no extra dependency) rather than DuckDB: the
store's work is many small transactional writes, one per finished run, while
other processes read it (`manetlab study status` during a run); DuckDB allows one
writing process and no concurrent reader from another process, and is an
analytics engine we do not need at this size (a row per run; the statistics are
computed in pandas). Write-ahead logging makes each committed row survive a
SIGKILL of the writer; the primary key makes a re-written run replace its row,
never duplicate it. Schema: docs/studies.md#store.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["Store", "STORE_NAME"]

STORE_NAME = "study.sqlite"
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


class Store:
    """The runs of one study directory (created on first use)."""

    def __init__(self, study_dir: str | Path, create: bool = True) -> None:
        self.dir = Path(study_dir)
        self.path = self.dir / STORE_NAME
        if not create and not self.path.exists():
            raise FileNotFoundError(f"no study store at {self.path} (run the study first)")
        self.dir.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one transaction per row.
        self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a commit survives a killed process (not a power cut, which is fine here).
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
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
        return _Tx(self.db)


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, typ: Any, *exc: Any) -> None:
        self.db.execute("COMMIT" if typ is None else "ROLLBACK")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
