"""Studies shared by processes and folders from others (issue 34, docs/studies.md):
one `study run` per folder (the lock), trace files staged and renamed before their
row commits and never written through planted symlinks, read-only folders and full
disks, Ctrl-C and SIGTERM, results checked against their task (Dask).

The reproducers are in tests/fixtures/robustness-found-2026-11-29/ (03, 07, 10, 15);
each test below says which one it makes a test of. No simulation numbers are
hard-coded: runs are compared with each other."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from manetlab.study import LocalExecutor, Study
from manetlab.study.executor import Task, check_result, from_wire, run_task, to_wire
from manetlab.study.store import LOCK_NAME, Store, StoreError, StudyLock, StudyLocked
from _util import ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures" / "robustness-found-2026-11-29"
CLI = [sys.executable, "-W", "error", "-m", "manetlab"]
LOCKED = re.compile(r"^error: .*: another `study run` is running this study directory \(pid (\d+)\); wait for it to end, or pass --wait to queue behind it$")


def fixture_study(tmp: Path, fixture: str, scenario: str, name: str | None = None, **replace: str) -> Path:
    """A reproducer's study file copied into `tmp` beside a copy of the example
    `scenario` it names (paths relative to the study file), with `replace`d lines
    (``seeds='"1-3"'``: the line ``seeds = ...`` becomes ``seeds = "1-3"``)."""
    shutil.copy(ROOT / "examples" / scenario, tmp / scenario)
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    text = re.sub(r'(?m)^scenario = ".*"$', f'scenario = "{scenario}"', text)
    for key, value in replace.items():
        text, n = re.subn(rf'(?m)^("?){key}\1 = .*$', lambda m: f"{m.group(1)}{key}{m.group(1)} = {value}", text)
        assert n == 1, key
    p = tmp / (name or fixture)
    p.write_text(text, encoding="utf-8")
    return p


def store_rows(d: Path) -> list[tuple[Any, ...]]:
    """Every run row of a store, without what differs between equal runs (time, worker, wall time)."""
    db = sqlite3.connect(f"{(d / 'study.sqlite').resolve().as_uri()}?mode=ro", uri=True)
    try:
        return db.execute("SELECT scenario_hash, seed, code_version, status, error, attempts, metrics_json, summary_z FROM runs ORDER BY scenario_hash, seed").fetchall()
    finally:
        db.close()


def run_files(d: Path) -> dict[str, bytes]:
    """runs/**: relative path -> bytes (every entry a regular file)."""
    out = {}
    for p in sorted((d / "runs").rglob("*")):
        assert not p.is_symlink(), p
        if p.is_file():
            out[p.relative_to(d).as_posix()] = p.read_bytes()
    return out


def lock_held(d: Path) -> bool:
    """Whether some process holds the study folder's lock (probed without taking it for long)."""
    try:
        fd = os.open(d / LOCK_NAME, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def wait_for(cond: Any, what: str, limit_s: float = 60) -> None:
    """Poll `cond` (not a timed assertion: the limit only stops a hung test)."""
    end = time.monotonic() + limit_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


# ----------------------------------------------------------------------------- 03: one `study run` per folder


def test_03_two_concurrent_study_runs_x20_equal_a_single_run(tmp_path: Path) -> None:
    """Reproducer 03: two `study run` on one folder at once, 20 times. Before: pcap
    files appended by both, wrong sizes stored, both exit 0. Now one of them
    refuses at once (one line naming the other's PID, exit 75), or they ran one
    after the other; either way the store's rows and the trace files' bytes equal
    a single run's."""
    study = fixture_study(tmp_path, "03_concurrent_study.toml", "cbr_chain.toml", seeds='"1-3"', duration_s="5")
    solo = tmp_path / "solo"
    p = run_cli("study", "run", study, "--dir", solo, "--jobs", "1", "--no-progress")
    assert p.returncode == 0, p.stderr
    ref_rows, ref_files = store_rows(solo), run_files(solo)
    assert len(ref_rows) == 3 and all(r[3] == "ok" for r in ref_rows) and len(ref_files) == 3
    refused = 0
    for trial in range(20):
        d = tmp_path / f"two{trial}"
        procs = [subprocess.Popen([*CLI, "study", "run", str(study), "--dir", str(d), "--jobs", "1", "--no-progress"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [q.communicate(timeout=120) for q in procs]
        codes = sorted(q.returncode for q in procs)
        assert codes in ([0, 0], [0, 75]), (codes, outs)
        for q, (out, err) in zip(procs, outs):
            if q.returncode == 75:
                refused += 1
                lines = err.splitlines()
                m = LOCKED.match(lines[-1]) if len(lines) == 1 else None
                assert m is not None, err
                assert int(m.group(1)) == next(o.pid for o in procs if o is not q)
            else:
                assert err == "" and "3 ok, 0 failed, 0 missing" in out, (out, err)
        assert store_rows(d) == ref_rows, f"trial {trial}"
        assert run_files(d) == ref_files, f"trial {trial}"
        assert not lock_held(d)
    print(f"refused in {refused} of 20 trials (the others ran one after the other)")


GATE = '''
import os, time
from manetlab.study.executor import run_task

def gated(task):
    """Runs a task once the file $GATE exists."""
    while not os.path.exists(os.environ["GATE"]):
        time.sleep(0.01)
    return run_task(task)
'''


def test_03_second_run_refuses_at_once_or_waits_with_wait(tmp_path: Path) -> None:
    """A `study run` whose runs are held back by a gate holds the lock; a second
    `study run` refuses at once (exit 75, one line naming the first's PID), a third
    with --wait says it waits and runs after the first, finding nothing left to run.
    `study status` reads meanwhile, without the lock."""
    study = fixture_study(tmp_path, "03_concurrent_study.toml", "cbr_chain.toml", seeds='"1-3"', duration_s="5")
    (tmp_path / "gate_helper.py").write_text(GATE, encoding="utf-8")
    d, gate = tmp_path / "st", tmp_path / "open"
    env = {**os.environ, "GATE": str(gate), "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, gate_helper\nfrom manetlab.study import Study, LocalExecutor\n"
         "Study(sys.argv[1], sys.argv[2]).run(executor=LocalExecutor(1, fn=gate_helper.gated), progress=False)", str(study), str(d)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (lock_held(d) and (d / "study.sqlite").exists()) or holder.poll() is not None, "the first run to take the lock")
        assert holder.poll() is None, holder.communicate()
        assert (d / LOCK_NAME).read_text().strip() == str(holder.pid)
        second = run_cli("study", "run", study, "--dir", d, "--no-progress")
        assert second.returncode == 75
        assert second.stderr.splitlines() == [f"error: {d}: another `study run` is running this study directory (pid {holder.pid}); wait for it to end, or pass --wait to queue behind it"]
        st = run_cli("study", "status", study, "--dir", d)
        assert st.returncode == 0 and "0 ok, 0 failed, 3 missing" in st.stdout, st.stderr
        waiter = subprocess.Popen([*CLI, "study", "run", str(study), "--dir", str(d), "--no-progress", "--wait"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert waiter.stderr is not None
        assert waiter.stderr.readline() == f"waiting: another `study run` is running {d} (pid {holder.pid})\n"
        gate.touch()
        assert holder.wait(timeout=120) == 0, holder.communicate()
        out, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0 and err == "" and "ran 0 (0 failed), 3 already in the store" in out
    finally:
        gate.touch()
        holder.communicate(timeout=120)  # closes its pipes
    solo = tmp_path / "solo"
    assert run_cli("study", "run", study, "--dir", solo, "--no-progress").returncode == 0
    assert store_rows(d) == store_rows(solo) and run_files(d) == run_files(solo)


def test_lock_is_released_by_a_killed_holder_and_refuses_a_planted_symlink(tmp_path: Path) -> None:
    d = tmp_path / "st"
    with StudyLock(d):
        assert (d / LOCK_NAME).read_text() == f"{os.getpid()}\n"
        with pytest.raises(StudyLocked, match=rf"\(pid {os.getpid()}\)"):
            StudyLock(d).acquire()
    # A holder killed by SIGKILL: the kernel drops its flock, the next run goes ahead.
    p = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom manetlab.study.store import StudyLock\nStudyLock(sys.argv[1]).acquire()\nprint('held', flush=True)\ntime.sleep(600)", str(d)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline() == "held\n"
    with pytest.raises(StudyLocked, match=rf"\(pid {p.pid}\)"):
        StudyLock(d).acquire()
    p.kill()
    p.communicate()
    with StudyLock(d):
        pass
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (d / LOCK_NAME).unlink()
    (d / LOCK_NAME).symlink_to(victim)
    with pytest.raises(StoreError, match="study.lock: is a symbolic link; refusing to follow it"):
        StudyLock(d).acquire()
    assert victim.read_text() == "precious"
    # The store (and its write-ahead log) planted as symlinks: refused, not written through.
    for name in ("study.sqlite", "study.sqlite-wal"):
        (d / name).symlink_to(victim)
        with pytest.raises(StoreError, match=f"{name}: not a regular file \\(a symbolic link\\?\\); refusing to write through it"):
            Store(d)
        assert victim.read_text() == "precious"
        (d / name).unlink()


# ----------------------------------------------------------------------------- 07 (study part) and staging


def test_07_study_trace_writer_does_not_follow_planted_symlinks(tmp_path: Path) -> None:
    """Reproducer 07, study part: a symlink planted at runs/<run>/node0.pcap, then
    `study run --force`: the victim file is unchanged, node0.pcap is a regular file
    again with the run's bytes. A symlink planted in place of runs/<run> itself is
    refused with one line (exit 1); nothing is written where it points."""
    study = fixture_study(tmp_path, "07_study.toml", "cbr_chain.toml")
    d = tmp_path / "07_st"
    assert run_cli("study", "run", study, "--dir", d, "--no-progress").returncode == 0
    (run,) = (d / "runs").iterdir()
    pcap = run / "node0.pcap"
    before = pcap.read_bytes()
    victim = tmp_path / "07_victim_pcap.txt"
    victim.write_text("precious C\n")
    pcap.unlink()
    pcap.symlink_to(victim)
    p = run_cli("study", "run", study, "--dir", d, "--force", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "precious C\n"
    assert not pcap.is_symlink() and pcap.read_bytes() == before
    # The run's folder itself replaced by a symlink to a folder elsewhere.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(run)
    run.symlink_to(elsewhere)
    p = run_cli("study", "run", study, "--dir", d, "--force", "--no-progress")
    assert p.returncode == 1
    assert p.stderr.splitlines() == [f"error: {run}: not a directory (a symbolic link or a file); refusing to write through it"]
    assert list(elsewhere.iterdir()) == [] and run.is_symlink()
    assert not [n for n in os.listdir(d / "runs") if n.startswith(".tmp-")]
    # `study results` tables: a symlink planted at runs.csv / flows.parquet is refused (one line), not written through.
    for name, fmt in (("runs.csv", "csv"), ("flows.parquet", "parquet")):
        victim = tmp_path / f"victim-{name}"
        victim.write_text("precious D\n")
        (d / name).unlink(missing_ok=True)
        (d / name).symlink_to(victim)
        p = run_cli("study", "results", study, "--dir", d, "--format", fmt)
        assert p.returncode == 1, p.stderr
        assert p.stderr.splitlines() == [f"error: {d / name} is a symbolic link; manetlab does not write through links here (remove it, or use another path)"]
        assert victim.read_text() == "precious D\n" and (d / name).is_symlink()
        (d / name).unlink()


class _CheckingExecutor:
    """Runs tasks in this process (run_task) and checks, as each result is handed
    to the study, that the run's files are in place with the summary's sizes, no
    staging folder is left, and the store has no row of the run yet."""

    describe = "in-process, checking"

    def __init__(self, study_dir: Path) -> None:
        self.dir = study_dir
        self.checked = 0

    def map(self, tasks: list[Task]) -> Any:
        for t in tasks:
            result = run_task(t)
            assert result["status"] == "ok", result
            outputs = json.loads(zlib.decompress(result["summary_z"]))["outputs"]
            assert outputs
            for o in outputs:
                assert os.path.getsize(Path(t.out_dir) / o["file"]) == o["bytes"]
            assert not [n for n in os.listdir(self.dir / "runs") if n.startswith(".tmp-")]
            with Store(self.dir, create=False) as store:
                assert t.key not in store.keys(store.manifest()[1])  # type: ignore[index]
            self.checked += 1
            yield t, result


def test_trace_files_are_staged_fsynced_and_renamed_before_the_row_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = fixture_study(tmp_path, "10_study.toml", "cbr_chain.toml", seeds='"1-2"', duration_s="6")
    d = tmp_path / "st"
    # A staging folder left by a killed run is removed by the next run (under the lock).
    (d / "runs" / ".tmp-old-0123").mkdir(parents=True)
    (d / "runs" / ".tmp-old-0123" / "node0.pcap").write_bytes(b"partial")
    calls: list[tuple[str, str]] = []
    real_fsync, real_rename = os.fsync, os.rename

    def fsync(fd: int) -> None:
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def rename(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
        calls.append(("rename", os.path.join(os.readlink(f"/proc/self/fd/{dst_dir_fd}"), dst) if dst_dir_fd is not None else dst))
        real_rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "rename", rename)
    s = Study(study, d)
    ex = _CheckingExecutor(d)
    rep = s.run(executor=ex, progress=False)
    assert rep.ran == 2 and rep.failed == 0 and ex.checked == 2
    assert not (d / "runs" / ".tmp-old-0123").exists()
    for run in sorted((d / "runs").iterdir()):
        for f in ("node0.pcap", "node1.pcap"):
            final = str((run / f).resolve())
            renamed = calls.index(("rename", final))
            staged = [i for i, (what, path) in enumerate(calls) if what == "fsync" and Path(path).name == f and Path(path).parent.name.startswith(f".tmp-{run.name}-")]
            assert staged and staged[0] < renamed, (f, calls)
            assert ("fsync", str(run.resolve())) in calls[renamed:], "the run's folder is fsynced after the renames"
    # The files are the same as without staging checks: a plain second study.
    ref = tmp_path / "ref"
    Study(study, ref).run(jobs=1, progress=False)
    assert store_rows(d) == store_rows(ref) and run_files(d) == run_files(ref)


# ----------------------------------------------------------------------------- 10: read-only folders, full disks


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def tmpfs(tmp_path: Path) -> Any:
    """Mounts a tmpfs of a given size (root only; skipped where mounting is not allowed)."""
    mounted: list[Path] = []

    def mount(name: str, size: str) -> Path:
        p = tmp_path / name
        p.mkdir()
        if os.geteuid() != 0 or shutil.which("mount") is None or not _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(p)):
            pytest.skip("mounting a tmpfs is not permitted here")
        mounted.append(p)
        return p

    yield mount
    for p in mounted:
        subprocess.run(["umount", "-l", str(p)], capture_output=True)


def test_10a_status_and_results_on_a_read_only_mount(tmp_path: Path, tmpfs: Any) -> None:
    """Reproducer 10 (a): `study status`/`results` on a read-only copy of a study
    folder work (before: sqlite3 traceback); `study run` there is one line, exit 1."""
    study = fixture_study(tmp_path, "10_study.toml", "cbr_chain.toml", seeds='"1-3"', duration_s="5")
    ro = tmpfs("10_ro", "20m")
    d = ro / "st"
    assert run_cli("study", "run", study, "--dir", d, "--no-progress").returncode == 0
    want = run_cli("study", "results", study, "--dir", d)
    assert want.returncode == 0
    for leftovers in (False, True):
        if leftovers:  # no -wal/-shm beside the store (a clean copy): opened immutable
            assert _mount("-o", "remount,rw", str(ro))
            for f in ("study.sqlite-wal", "study.sqlite-shm"):
                (d / f).unlink(missing_ok=True)
        assert _mount("-o", "remount,ro", str(ro))
        before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
        st = run_cli("study", "status", study, "--dir", d)
        assert st.returncode == 0 and st.stderr == "" and "3 ok, 0 failed, 0 missing" in st.stdout
        res = run_cli("study", "results", study, "--dir", d)
        assert res.returncode == 0 and res.stderr == "" and res.stdout == want.stdout
        assert {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()} == before
        run = run_cli("study", "run", study, "--dir", d, "--no-progress")
        assert run.returncode == 1 and run.stderr.splitlines() == [f"error: {d / LOCK_NAME}: read-only file system"]
        csv = run_cli("study", "results", study, "--dir", d, "--format", "csv")
        assert csv.returncode == 1 and len(csv.stderr.splitlines()) == 1, csv.stderr
        assert csv.stderr.startswith(f"error: cannot write to {d}") and csv.stderr.endswith(": read-only file system\n"), csv.stderr


def test_status_reads_without_writing(tmp_path: Path) -> None:
    """A reader takes no lock and writes nothing into the store (no meta row)."""
    study = fixture_study(tmp_path, "10_study.toml", "cbr_chain.toml", seeds='"1"', duration_s="6")
    d = tmp_path / "st"
    Study(study, d).run(jobs=1, progress=False)
    before = (d / "study.sqlite").read_bytes()
    with StudyLock(d):  # a running `study run` does not keep readers out
        st = run_cli("study", "status", study, "--dir", d)
    assert st.returncode == 0 and "1 ok" in st.stdout
    assert (d / "study.sqlite").read_bytes() == before
    with Store(d, create=False) as s, pytest.raises(StoreError, match="opened read-only"):
        s.put("x", 1, "v", {"status": "ok"}, 1)


def test_10b_full_disk_is_one_line_and_the_store_resumes(tmp_path: Path, tmpfs: Any) -> None:
    """Reproducer 10 (b): `study run` on a 1 MB file system ends with one line,
    `error: ...: no space left on device`, exit 1 (before: sqlite3 traceback); the
    store stays valid, and with room again the study resumes to a full run's result."""
    study = fixture_study(tmp_path, "10_study.toml", "cbr_chain.toml", seeds='"1-6"', duration_s="10")
    small = tmpfs("10_small", "1m")
    d = small / "st"
    p = run_cli("study", "run", study, "--dir", d, "--no-progress")
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith(": no space left on device"), p.stderr
    st = run_cli("study", "status", study, "--dir", d)
    assert st.returncode == 0 and st.stderr == ""
    done = int(re.search(r"(\d+) ok, 0 failed, (\d+) missing", st.stdout).group(1))  # type: ignore[union-attr]
    assert done < 6
    assert _mount("-o", "remount,size=64m", str(small))
    again = run_cli("study", "run", study, "--dir", d, "--no-progress")
    assert again.returncode == 0 and f"ran {6 - done} (0 failed), {done} already in the store" in again.stdout, again.stdout
    ref = tmp_path / "ref"
    assert run_cli("study", "run", study, "--dir", ref, "--no-progress").returncode == 0
    assert store_rows(d) == store_rows(ref) and run_files(d) == run_files(ref)


@pytest.mark.parametrize("size", ["80k", "200k"])
def test_full_disk_while_writing_the_store_is_one_line_and_resumes(tmp_path: Path, tmpfs: Any, size: str) -> None:
    """No trace files: the store itself fills the disk (80 KB: while it is created,
    200 KB: after some runs). One line naming the store, exit 1; the store stays
    valid (all its tables or none), and resumes to a full run's rows."""
    study = fixture_study(tmp_path, "10_study.toml", "default_study.toml", seeds='"1-40"', duration_s="10")
    study.write_text(study.read_text().replace('"outputs.pcap_nodes" = [0, 1]', ""))
    fs = tmpfs("tiny", size)
    d = fs / "st"
    p = run_cli("study", "run", study, "--dir", d, "--no-progress")
    assert p.returncode == 1 and p.stderr.splitlines() == [f"error: {d / 'study.sqlite'}: no space left on device"], p.stderr
    st = run_cli("study", "status", study, "--dir", d)
    assert st.returncode == 0 and st.stderr == "" and ", 0 failed, " in st.stdout, st.stderr
    assert _mount("-o", "remount,size=16m", str(fs))
    assert run_cli("study", "run", study, "--dir", d, "--no-progress").returncode == 0
    ref = tmp_path / "ref"
    assert run_cli("study", "run", study, "--dir", ref, "--no-progress").returncode == 0
    rows = store_rows(d)
    assert len(rows) == 40 and rows == store_rows(ref)


# ----------------------------------------------------------------------------- 15: Ctrl-C, SIGTERM


def _workers_starting(pid: int) -> int:
    """How many spawned workers (`spawn_main`) process `pid` has."""
    n = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split():
                try:
                    n += b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()
                except OSError:
                    pass
    except OSError:
        pass
    return n


def _kill_study(tmp_path: Path) -> Path:
    shutil.copy(FIXTURES / "15_study_kill.toml", tmp_path / "study_kill.toml")
    shutil.copy(ROOT / "examples" / "default_study.toml", tmp_path / "default_study.toml")
    return tmp_path / "study_kill.toml"


def test_15_ctrl_c_while_workers_start_prints_no_traceback(tmp_path: Path) -> None:
    """Reproducer 15: SIGINT to the process group (as a terminal's Ctrl-C) while
    `study run` starts its workers: one line and status, exit 130, no
    KeyboardInterrupt traceback from a worker. The signal is sent as soon as the
    first or second worker process exists (0-80 ms later), when its interpreter
    is starting: the window the reproducer's fixed delays aimed at."""
    study = _kill_study(tmp_path)
    for trial in range(8):
        d = tmp_path / f"st{trial}"
        p = subprocess.Popen([*CLI, "study", "run", str(study), "--dir", str(d), "--jobs", "2", "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        wait_for(lambda: _workers_starting(p.pid) >= 1 + trial % 2 or p.poll() is not None, "workers to start")
        time.sleep((trial % 5) * 0.02)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
        assert "Traceback" not in err and p.returncode == 130, (trial, err)
        assert err.startswith("interrupted (Ctrl-C); finished runs are in the store, rerun to resume\n"), err


def _start_and_signal(args: list[str], sig: int, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Start `manetlab ARGS`, wait for its first line of output (its signal
    handlers are in place by then), send `sig`."""
    p = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert p.stdout is not None
    first = p.stdout.readline()
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    return subprocess.CompletedProcess(args, p.returncode, first + out, err)


def test_sigterm_exits_143_for_study_run_run_and_reproduce(tmp_path: Path) -> None:
    study = _kill_study(tmp_path)
    p = _start_and_signal(["study", "run", str(study), "--dir", str(tmp_path / "st"), "--jobs", "2", "--no-progress"], signal.SIGTERM, tmp_path)
    assert p.returncode == 143 and "Traceback" not in p.stderr
    assert p.stderr.startswith("terminated (SIGTERM)"), p.stderr  # "; finished runs are in the store ...", or before the store opened, ": stopped; nothing written"
    assert not lock_held(tmp_path / "st")
    p = _start_and_signal(["study", "run", str(study), "--dir", str(tmp_path / "st"), "--jobs", "1", "--no-progress"], signal.SIGINT, tmp_path)
    assert p.returncode == 130 and p.stderr.startswith("interrupted (Ctrl-C)") and "Traceback" not in p.stderr
    # `run` prints its first line only at the end: its progress line on stderr says it runs.
    scen = tmp_path / "default_study.toml"
    r = subprocess.Popen([*CLI, "run", str(scen), "--set", "duration_s=5000", "--out", str(tmp_path / "r"), "--progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.stderr is not None and r.stderr.read(1)
    r.send_signal(signal.SIGTERM)
    _, err = r.communicate(timeout=60)
    assert r.returncode == 143 and "terminated (SIGTERM)" in err and "Traceback" not in err
    p = _start_and_signal(["reproduce", "abra", "--quick", "--out", str(tmp_path / "rep"), "--no-progress", "--jobs", "1"], signal.SIGTERM, tmp_path)
    assert p.returncode == 143 and "Traceback" not in p.stderr, p.stderr


# ----------------------------------------------------------------------------- results checked against their task


def _task(tmp_path: Path, seed: int = 1) -> tuple[Study, Task]:
    study = fixture_study(tmp_path, "07_study.toml", "cbr_chain.toml", seeds="[1, 2]")
    s = Study(study, tmp_path / "st")
    (task,) = [t for t in s._tasks(None) if t.seed == seed]
    return s, task


def test_check_result_rejects_forged_and_mismatched_results(tmp_path: Path) -> None:
    s, task = _task(tmp_path)
    good = run_task(task)
    checked = check_result(task, good, s.code_version)
    assert checked["status"] == "ok" and checked["metrics"] == good["metrics"] and checked["summary_z"] == good["summary_z"]
    assert checked["worker"] == good["worker"] and checked["wall_s"] == good["wall_s"]
    # Through the Dask wire format (JSON text) and back: the same result.
    assert check_result(task, from_wire(to_wire(good)), s.code_version)["status"] == "ok"
    summary = json.loads(zlib.decompress(good["summary_z"]))

    def forged_summary(**change: Any) -> dict[str, Any]:
        return {**good, "summary_z": zlib.compress(json.dumps({**summary, **change}).encode())}

    cases = {
        "metrics do not follow": {**good, "metrics": {**good["metrics"], "flow0.throughput_kbps": good["metrics"]["flow0.throughput_kbps"] * 2}},
        "metric names": {**good, "metrics": {**good["metrics"], "flow9.pdr": 1.0}},
        "another run": {**good, "seed": 2},
        "another run ": {**good, "scenario_hash": "0" * 64},
        "summary seed": forged_summary(seed=2),
        "summary partial": forged_summary(partial=True),
        "summary scenario_name": forged_summary(scenario_name="other"),
        "flow count": forged_summary(flows=summary["flows"][:1]),
        "not zlib": {**good, "summary_z": b"{}"},
        "no summary": {**good, "summary_z": "text"},
        "code version": {**good, "code_version": "0.0.0+forged"},
        "not a result": ["ok"],
        "status": {**good, "status": "great"},
        "nan metric": {**good, "metrics": {**good["metrics"], "events": float("nan")}},
    }
    for why, forged in cases.items():
        r = check_result(task, forged, s.code_version)
        assert r["status"] == "failed" and r["metrics"] is None and r["summary_z"] is None, why
        assert r["error"].startswith(("result rejected: ", "worker ran code version")), (why, r["error"])
    # A failed result keeps only plain fields of known types, its error on one line.
    odd = check_result(task, {"status": "failed", "error": "boom\nline two", "wall_s": {"x": 1}, "worker": ["w"], "attempts": "many"}, s.code_version)
    assert odd == {"status": "failed", "error": "boom line two", "metrics": None, "summary_z": None, "wall_s": odd["wall_s"],
                   "worker": "['w']", "code_version": s.code_version}
    assert odd["wall_s"] != odd["wall_s"]  # NaN
    assert from_wire(b"\x80\x04pickle")["status"] == "failed"
    assert from_wire("[1, 2]")["error"].startswith("result rejected: the worker sent no result in JSON")


def forge_throughput(task: Task) -> dict[str, Any]:
    """A tampered worker: doubles seed 2's throughput (the forged-metrics attack of issue 34)."""
    r = run_task(task)
    if task.seed == 2 and r["status"] == "ok":
        r["metrics"] = {**r["metrics"], "flow0.throughput_kbps": r["metrics"]["flow0.throughput_kbps"] * 2}
    return r


def test_a_forged_result_is_stored_as_an_error_not_ok(tmp_path: Path) -> None:
    study = fixture_study(tmp_path, "07_study.toml", "cbr_chain.toml", seeds="[1, 2]")
    s = Study(study, tmp_path / "st")
    rep = s.run(executor=LocalExecutor(1, fn=forge_throughput), progress=False)
    assert rep.ran == 2 and rep.failed == 1
    (f,) = s.status()["failures"]
    assert f["seed"] == 2 and f["error"] == "result rejected: its metrics do not follow from its summary (metrics_of)"
    assert s.results()["seed"].tolist() == [1]


def test_dask_results_are_json_checked_and_forgeries_rejected(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    study = fixture_study(tmp_path, "07_study.toml", "cbr_chain.toml", seeds="[1, 2]")
    from manetlab.study import DaskExecutor

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        s = Study(study, tmp_path / "dask")
        rep = s.run(executor=DaskExecutor(cluster.scheduler_address, fn=forge_throughput), progress=False)
    assert rep.ran == 2 and rep.failed == 1
    assert [f["seed"] for f in s.status()["failures"]] == [2]
    ref = Study(study, tmp_path / "ref")
    ref.run(jobs=1, progress=False)
    assert s.results().drop(columns=["wall_s"]).equals(ref.results().drop(columns=["wall_s"]).iloc[:1])


def _certificates(d: Path) -> dict[str, str]:
    """A self-signed CA and one certificate it signed (scheduler, worker and client share it)."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"), "-days", "2", "-subj", "/CN=manetlab-test-ca")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "node.key"), "-out", str(d / "node.csr"), "-subj", "/CN=manetlab-test-node")
    openssl("x509", "-req", "-in", str(d / "node.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"), "-CAcreateserial", "-out", str(d / "node.pem"), "-days", "2")
    return {"ca": str(d / "ca.pem"), "cert": str(d / "node.pem"), "key": str(d / "node.key")}


def test_dask_tls_scheduler_with_dask_security_configuration(tmp_path: Path) -> None:
    """docs/studies.md#executors: a tls:// scheduler that requires client
    certificates (mutual TLS) is used through Dask's own configuration (here its
    DASK_* environment variables); without the client certificate the client
    cannot connect, and `study run` says so in one line (exit 2)."""
    distributed = pytest.importorskip("distributed")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificates")
    c = _certificates(tmp_path)
    study = fixture_study(tmp_path, "07_study.toml", "cbr_chain.toml", seeds="[1, 2]")
    sec = distributed.Security(tls_ca_file=c["ca"], tls_scheduler_cert=c["cert"], tls_scheduler_key=c["key"],
                               tls_worker_cert=c["cert"], tls_worker_key=c["key"], tls_client_cert=c["cert"], tls_client_key=c["key"],
                               require_encryption=True)
    tls_env = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": c["ca"], "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": c["cert"],
               "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": c["key"], "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, protocol="tls://", host="127.0.0.1",
                                  security=sec, dashboard_address=None) as cluster:
        addr = cluster.scheduler_address
        assert addr.startswith("tls://")
        p = subprocess.run([*CLI, "study", "run", str(study), "--dir", str(tmp_path / "tls"), "--scheduler", addr, "--no-progress"],
                           env={**os.environ, **tls_env}, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and "ran 2 (0 failed)" in p.stdout, p.stderr
        no_cert = {k: v for k, v in tls_env.items() if "CLIENT" not in k}
        p = subprocess.run([*CLI, "study", "run", str(study), "--dir", str(tmp_path / "no-cert"), "--scheduler", addr, "--no-progress"],
                           env={**os.environ, **no_cert, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"}, capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith(f"error: --scheduler: cannot connect to '{addr}': "), p.stderr
        # A client certificate the cluster's CA did not sign is refused (authentication).
        (tmp_path / "other").mkdir()
        o = _certificates(tmp_path / "other")
        stranger = {**tls_env, "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": o["cert"], "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": o["key"],
                    "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"}
        p = subprocess.run([*CLI, "study", "run", str(study), "--dir", str(tmp_path / "stranger"), "--scheduler", addr, "--no-progress"],
                           env={**os.environ, **stranger}, capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.splitlines()) == 1, p.stderr
        assert not (tmp_path / "stranger" / "study.sqlite").exists() or not store_rows(tmp_path / "stranger")
    ref = tmp_path / "ref"
    assert run_cli("study", "run", study, "--dir", ref, "--no-progress").returncode == 0
    assert store_rows(tmp_path / "tls") == store_rows(ref) and run_files(tmp_path / "tls") == run_files(ref)
