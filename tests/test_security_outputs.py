"""Outputs in folders others may have touched (issue 34): a folder is replaced only
when manetlab's marker proves it wrote it, atomically; files are written whole and
never through a planted symbolic link; result folders are read without following
links; CSV text cells cannot become spreadsheet formulas; a folder that cannot be
written ends in one line and exit 1.

Reproducers (tests/fixtures/robustness-found-2026-11-29/): 07 (report, animate and
plot part), 09, 14."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import manetlab
from manetlab import safeio
from manetlab.animate import animate
from manetlab.plots import plot
from manetlab.results import MARKER, FolderNotOwnedError, folder_kind
from _util import EXAMPLE, ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures" / "robustness-found-2026-11-29"
TCP = ROOT / "examples" / "tcp_chain_80211.toml"


def one_error_line(p: subprocess.CompletedProcess[str], code: int) -> str:
    """The single `error: ...` line of a failed command (no traceback)."""
    assert p.returncode == code, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, p.stderr
    return lines[0]


def tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and not p.is_symlink()}


# --- 09: a folder is replaced only when manetlab wrote it -----------------------------


def _userdata(d: Path) -> dict[str, bytes]:
    (d / "thesis").mkdir(parents=True)
    (d / "thesis" / "chapter1.tex").write_text("draft")
    (d / "notes.txt").write_text("important")
    (d / "summary.json").write_text('{"written_by": "some other tool"}')
    return tree(d)


def test_09_a_folder_holding_a_summary_json_is_not_deleted(tmp_path: Path) -> None:
    d = tmp_path / "09_userdata"
    before = _userdata(d)
    p = run_cli("run", EXAMPLE, "--out", d)
    line = one_error_line(p, 1)
    assert line.startswith(f"error: refusing to replace {d}: not a manetlab result folder") and "--force" in line, line
    assert tree(d) == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["09_userdata"]  # no temporary folder left
    # --force: replaced whole, by a complete result with its marker.
    p = run_cli("run", EXAMPLE, "--out", d, "--force")
    assert p.returncode == 0, p.stderr
    assert not (d / "notes.txt").exists() and not (d / "thesis").exists()
    assert folder_kind(d) == "run" and manetlab.load_result(d).summary["seed"] == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == ["09_userdata"]


def test_what_may_be_replaced(tmp_path: Path) -> None:
    r = manetlab.run(EXAMPLE)
    out = tmp_path / "r"
    r.write(out)
    doc = json.loads((out / MARKER).read_text())
    assert doc["format"] == "manetlab-folder/1" and doc["kind"] == "run"
    r.write(out)  # marked: replaced
    # A run folder of a version without the marker: replaced when it holds
    # exactly what such versions wrote (figures, report and animation included) ...
    (out / MARKER).unlink()
    plot(out, "throughput")
    (out / "figures").mkdir()
    (out / "figures" / "drops.svg").write_text("<svg/>")
    (out / "report.html").write_text("<p>")
    assert folder_kind(out) == "run"
    r.write(out)
    assert (out / MARKER).exists() and not (out / "report.html").exists()
    # ... and refused with anything else in it, or without its completion marker.
    for spoil in ("notes.txt", "thesis/", "no-run.json", "no-partial", "link"):
        (out / MARKER).unlink()
        if spoil == "notes.txt":
            (out / "notes.txt").write_text("mine")
        elif spoil == "thesis/":
            (out / "thesis").mkdir()
        elif spoil == "no-run.json":
            (out / "run.json").unlink()
        elif spoil == "no-partial":
            s = json.loads((out / "summary.json").read_text())
            del s["partial"]
            (out / "summary.json").write_text(json.dumps(s))
        else:
            (out / "trace.tr").symlink_to(tmp_path / "elsewhere")
        before = tree(out)
        with pytest.raises(FolderNotOwnedError, match="not a manetlab result folder"):
            r.write(out)
        assert tree(out) == before, spoil
        r.write(out, force=True)
    # A marker that is not manetlab's (another format, a link to one) proves nothing.
    (out / "notes.txt").write_text("mine")
    (out / MARKER).write_text('{"format": "other/1", "kind": "run"}')
    with pytest.raises(FolderNotOwnedError):
        r.write(out)
    good = tmp_path / "good-marker"
    good.write_text(json.dumps({"format": "manetlab-folder/1", "kind": "run"}))
    (out / MARKER).unlink()
    (out / MARKER).symlink_to(good)
    with pytest.raises(FolderNotOwnedError):
        r.write(out)
    assert (out / "notes.txt").read_text() == "mine"
    # Never, even with force: a link, a file, the folder holding the current directory.
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x")
    for target, words in ((tmp_path / "link", "symbolic link"), (tmp_path / "file", "not a folder")):
        with pytest.raises(FolderNotOwnedError, match=words):
            r.write(target, force=True)
    assert (tmp_path / "link").is_symlink() and (tmp_path / "file").read_text() == "x"
    p = run_cli("run", EXAMPLE, "--out", ".", "--force", cwd=out)
    assert "holds the current directory" in one_error_line(p, 1)
    assert (out / "notes.txt").exists()
    # An empty folder is fine.
    (tmp_path / "empty").mkdir()
    r.write(tmp_path / "empty")
    assert folder_kind(tmp_path / "empty") == "run"


def test_compare_replaces_only_comparisons_and_has_force(tmp_path: Path) -> None:
    args = ["compare", TCP, "--set", "duration_s=3", "--flow", "0", "--transports", "newreno", "sack"]
    run_dir = tmp_path / "run"
    manetlab.run(EXAMPLE, out=run_dir)
    before = tree(run_dir)
    line = one_error_line(run_cli(*args, "--out", run_dir), 1)
    assert "it holds a manetlab run, not a comparison" in line and "--force" in line, line
    assert tree(run_dir) == before
    # The other way round: `run` onto a comparison.
    cmp_dir = tmp_path / "cmp"
    assert run_cli(*args, "--out", cmp_dir).returncode == 0
    assert folder_kind(cmp_dir) == "comparison" and folder_kind(cmp_dir / "sack") == "run"
    assert "it holds a manetlab comparison, not a run" in one_error_line(run_cli("run", EXAMPLE, "--out", cmp_dir), 1)
    assert run_cli(*args, "--out", cmp_dir).returncode == 0  # its own kind: replaced
    p = run_cli(*args, "--out", run_dir, "--force")
    assert p.returncode == 0, p.stderr
    assert folder_kind(run_dir) == "comparison"


def test_folders_and_files_follow_the_umask(tmp_path: Path) -> None:
    code = (
        "import os, sys, manetlab\n"
        "from manetlab.report import report\n"
        "os.umask(0o027)\n"
        "r = manetlab.run(sys.argv[1], out=sys.argv[2])\n"
        "report(sys.argv[2])\n"
    )
    out = tmp_path / "r"
    subprocess.run([sys.executable, "-c", code, str(EXAMPLE), str(out)], check=True)
    assert stat.S_IMODE(out.stat().st_mode) == 0o750  # not a temporary folder's 0o700
    for name in ("summary.json", "flows.csv", MARKER, "report.html", "figures/throughput.svg"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o640, name


# --- 14: the replace is atomic; a kill never loses the only copy ------------------------


def _kill_in_replace(step: str, out: Path, seed: int) -> None:
    p = subprocess.run([sys.executable, str(FIXTURES / "14_rename_window.py"), step, str(EXAMPLE), str(out), str(seed)], capture_output=True, text=True)
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr)


@pytest.mark.skipif(safeio._renameat2 is None, reason="no renameat2 on this platform")
@pytest.mark.parametrize("step, seed_after", [("exchange-before", 1), ("exchange-after", 2)])
def test_14_a_kill_in_the_exchange_leaves_the_old_or_the_new_result(tmp_path: Path, step: str, seed_after: int) -> None:
    out = tmp_path / "14_out"
    manetlab.run(EXAMPLE, seed=1, out=out)
    _kill_in_replace(step, out, 2)
    # The folder is there, complete: the old result before the exchange, the new one after.
    r = manetlab.load_result(out)
    assert r.summary["seed"] == seed_after
    assert r.summary_json == manetlab.run(EXAMPLE, seed=seed_after).summary_json
    left = [d.name for d in tmp_path.iterdir() if d.name != "14_out"]
    assert all(n.startswith(".14_out.incomplete-") for n in left), left
    # The next write tidies up and replaces it.
    manetlab.run(EXAMPLE, seed=3, out=out)
    assert manetlab.load_result(out).summary["seed"] == 3
    assert [d.name for d in tmp_path.iterdir()] == ["14_out"]


def test_14_the_fallback_never_deletes_the_only_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "14_out"
    manetlab.run(EXAMPLE, seed=1, out=out)
    old = tree(out)
    _kill_in_replace("fallback-window", out, 2)
    # Killed between the two renames: no folder at OUT, the old result beside it.
    assert not out.exists()
    (aside,) = [d for d in tmp_path.iterdir() if d.name.startswith(".14_out.old-")]
    assert tree(aside) == old
    with pytest.raises(manetlab.ResultFolderError, match=re.escape(f"the previous result is in {aside}")):
        manetlab.load_result(out)
    # The next write puts it back first: interrupted before it replaces anything,
    # OUT holds the old result again.
    monkeypatch.setattr(safeio, "exchange", lambda a, b: False)

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(manetlab.results._core, "run", interrupted)
        with pytest.raises(KeyboardInterrupt):
            manetlab.run(EXAMPLE, seed=3, out=out)
    assert tree(out) == old
    assert [d.name for d in tmp_path.iterdir()] == ["14_out"]
    # A complete write through the fallback replaces it and leaves nothing beside it.
    manetlab.run(EXAMPLE, seed=3, out=out)
    assert manetlab.load_result(out).summary["seed"] == 3
    assert [d.name for d in tmp_path.iterdir()] == ["14_out"]


def test_the_old_layout_of_a_moved_aside_result_is_restored_too(tmp_path: Path) -> None:
    # Earlier versions moved the old result to .NAME.old-PID-RANDOM/x.
    out = tmp_path / "r"
    manetlab.run(EXAMPLE, seed=1, out=out)
    old = tree(out)
    aside = tmp_path / ".r.old-999999999-abc"
    aside.mkdir()
    out.rename(aside / "x")
    manetlab.results._recover(out)
    assert tree(out) == old and [d.name for d in tmp_path.iterdir()] == ["r"]


@pytest.mark.skipif(safeio._renameat2 is None, reason="no renameat2 on this platform")
@pytest.mark.parametrize("wrapper", [True, False], ids=["glibc", "syscall"])
def test_exchange_swaps_two_folders(tmp_path: Path, wrapper: bool) -> None:
    fn = safeio._load_renameat2(wrapper)
    if fn is None:
        pytest.skip("no renameat2 system call number for this machine")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "1").write_text("a")
    (b / "2").write_text("b")
    assert fn(os.fsencode(a), os.fsencode(b), 2) == 0
    assert [p.name for p in a.iterdir()] == ["2"] and [p.name for p in b.iterdir()] == ["1"]
    assert safeio.exchange(a, b) and (a / "1").exists()
    with pytest.raises(FileNotFoundError):
        safeio.exchange(a, tmp_path / "missing")


# --- 07: no writing through planted links; no reading through them ------------------------


@pytest.fixture(scope="module")
def animated_result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    res = tmp_path_factory.mktemp("07") / "07_res"
    p = run_cli("run", TCP, "--set", "duration_s=3", "--set", "flows[0].tcp.trace=true", "--animate", "--out", res)
    assert p.returncode == 0, p.stderr
    return res


@pytest.fixture()
def planted(tmp_path: Path, animated_result: Path) -> tuple[Path, Path]:
    """A result folder (with an animation) and a victim file outside it."""
    res = tmp_path / "07_res"
    shutil.copytree(animated_result, res, symlinks=True)
    victim = tmp_path / "07_victim.txt"
    victim.write_text("precious")
    return res, victim


@pytest.mark.parametrize(
    "command, name",
    [
        (["report"], "report.html"),
        (["animate"], "animate.html"),
        (["plot", "--kind", "cwnd"], "cwnd.png"),
        (["plot", "--kind", "cwnd"], "cwnd.svg"),
    ],
)
def test_07_writers_refuse_a_planted_symlink(planted: tuple[Path, Path], command: list[str], name: str) -> None:
    res, victim = planted
    (res / name).unlink(missing_ok=True)
    (res / name).symlink_to(victim)
    p = run_cli(command[0], res, *command[1:])
    line = one_error_line(p, 1)
    assert line == f"error: {res / name} is a symbolic link; manetlab does not write through links here (remove it, or use another path)"
    assert victim.read_text() == "precious" and (res / name).is_symlink()
    assert not [x for x in res.iterdir() if ".tmp-" in x.name]  # no temporary file left


def test_07_report_refuses_a_planted_figures_folder(planted: tuple[Path, Path]) -> None:
    res, victim = planted
    elsewhere = victim.parent / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(res / "figures", ignore_errors=True)
    (res / "figures").symlink_to(elsewhere)
    line = one_error_line(run_cli("report", res), 1)
    assert f"{res / 'figures'} is a symbolic link" in line
    assert list(elsewhere.iterdir()) == []


def test_07_existing_files_are_replaced_whole(planted: tuple[Path, Path]) -> None:
    res, _ = planted
    assert run_cli("report", res).returncode == 0
    page = res / "report.html"
    first = page.stat().st_ino
    hard = res.parent / "hardlink.html"
    os.link(page, hard)  # a hard link to the old page keeps the old bytes
    old = hard.read_bytes()
    (res / "run.json").write_text((res / "run.json").read_text())  # (any change is fine)
    assert run_cli("report", res).returncode == 0
    assert page.stat().st_ino != first and hard.read_bytes() == old


@pytest.mark.parametrize("name", ["summary.json", "scenario.json"])
def test_07_reading_a_result_folder_follows_no_link(planted: tuple[Path, Path], name: str) -> None:
    res, _ = planted
    real = res.parent / f"real-{name}"
    (res / name).rename(real)
    (res / name).symlink_to(real)
    for cmd in (["report"], ["plot", "--kind", "throughput"]):
        if name == "scenario.json" and cmd[0] == "plot":
            continue  # plot does not read the scenario
        line = one_error_line(run_cli(cmd[0], res, *cmd[1:]), 2)
        assert f"{res / name} is a symbolic link" in line, line
    with pytest.raises(manetlab.ResultFolderError, match="is a symbolic link"):
        manetlab.load_result(res)
    with pytest.raises(OSError, match="is a symbolic link"):
        animate(res, res.parent / "a.html")


def test_a_fifo_in_a_result_folder_is_refused_not_waited_on(tmp_path: Path) -> None:
    res = tmp_path / "r"
    manetlab.run(EXAMPLE, out=res)
    (res / "summary.json").unlink()
    os.mkfifo(res / "summary.json")
    with pytest.raises(manetlab.ResultFolderError, match="not a regular file"):
        manetlab.load_result(res)


# --- CSV formula neutralisation ---------------------------------------------------------

HOSTILE = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "=HYPERLINK(\"http://x\",\"y\")", "-5", "ok", "<b>&'\"; $x {y}"]


def test_csv_text() -> None:
    assert [safeio.csv_text(s) for s in HOSTILE] == ["'=1+1", "'+SUM(A1)", "'-2+3", "'@cmd", "'=HYPERLINK(\"http://x\",\"y\")", "-5", "ok", "<b>&'\"; $x {y}"]
    assert safeio.csv_text("\tx") == "'\tx" and safeio.csv_text("\rx") == "'\rx" and safeio.csv_text("") == ""
    for number in ("-1", "+1.5", "-.5", "-1e-3", "2E+10"):
        assert safeio.csv_text(number) == number


def _hostile_result() -> manetlab.Result:
    s = manetlab.load_scenario(EXAMPLE).normalized
    s["name"] = "=cmd|' /C calc'!A0"
    s["outputs"] = {**s.get("outputs", {}), "series": True}
    s["flows"] = [{**s["flows"][0], "name": HOSTILE[i % len(HOSTILE)]} for i in range(len(HOSTILE))]
    return manetlab.run(s)


def test_flow_names_never_become_formulas_and_numbers_round_trip(tmp_path: Path) -> None:
    r = _hostile_result()
    r.write(tmp_path / "r")
    text = (tmp_path / "r" / "flows.csv").read_text()
    rows = pd.read_csv(tmp_path / "r" / "flows.csv")
    assert list(rows["name"]) == [safeio.csv_text(n) for n in HOSTILE]
    for line in text.splitlines()[1:]:
        name_cell = line.split(",")[1]
        assert not name_cell.lstrip('"').startswith(("=", "+", "@")) and not re.match(r'"?-[^0-9]', name_cell), line
    # Every number reads back as written (negative jitter values included).
    numeric = r.flows.select_dtypes("number").columns
    pd.testing.assert_frame_equal(rows[numeric], r.flows[numeric], check_dtype=False)
    series = pd.read_csv(tmp_path / "r" / "packet_series.csv")
    assert (series["jitter_s"] < 0).any()
    pd.testing.assert_series_equal(series["jitter_s"], r.packet_series["jitter_s"])
    assert list(series["name"].unique()) == [safeio.csv_text(n) for n in HOSTILE]
    # The API's tables and the Parquet files keep the names as they are.
    assert list(r.flows["name"]) == HOSTILE
    assert list(pd.read_parquet(tmp_path / "r" / "flows.parquet")["name"]) == HOSTILE


def test_the_pandas_fallback_writes_the_same_neutralised_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _hostile_result()
    r.write(tmp_path / "native")
    monkeypatch.setattr(manetlab.Result, "_columns", lambda self, name: None)
    r.write(tmp_path / "pandas")
    for name in ("flows", "nodes", "links", "packet_series", "queue_series"):
        assert (tmp_path / "native" / f"{name}.csv").read_bytes() == (tmp_path / "pandas" / f"{name}.csv").read_bytes(), name


def test_write_csv_neutralises_text_of_any_column(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {
            "=col": ["=a", "b"],
            "num": [-1.5, 2.0],
            "int": [-3, 4],
            "mixed": ["-x", -7],
            "cat": pd.Categorical(["@c", "d"]),
            "str": pd.array(["+s", None], dtype="string"),
        }
    )
    safeio.write_csv(df, tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv")
    assert list(back.columns) == ["'=col", "num", "int", "mixed", "cat", "str"]
    assert list(back["'=col"]) == ["'=a", "b"] and list(back["cat"]) == ["'@c", "d"] and back["str"][0] == "'+s"
    assert list(back["num"]) == [-1.5, 2.0] and list(back["int"]) == [-3, 4] and list(back["mixed"]) == ["'-x", "-7"]
    assert list(df["=col"]) == ["=a", "b"]  # the caller's frame is untouched


def test_every_csv_writer_goes_through_the_helper() -> None:
    # A new to_csv / csv.writer outside the helpers would skip formula neutralisation.
    import ast

    allowed = {"safeio.py": 1, "results.py": 2}  # write_csv; _write_csv and the pandas fallback
    for path in (ROOT / "python" / "manetlab").rglob("*.py"):
        calls = [
            node
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to_csv", "writer", "DictWriter")
            and (node.func.attr == "to_csv" or (isinstance(node.func.value, ast.Name) and node.func.value.id == "csv"))
        ]
        assert len(calls) == allowed.get(path.name, 0), f"{path}: {len(calls)} CSV writer(s); write through manetlab.safeio.write_csv"
    assert "csv_frame(df).to_csv" in (ROOT / "python" / "manetlab" / "results.py").read_text()


# --- read-only folders, full disks: one line, exit 1 ----------------------------------------


def _can_mount_read_only(probe: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    cmd = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0"'
    return subprocess.run(["unshare", "-rm", "sh", "-c", cmd, str(probe)], capture_output=True).returncode == 0


@pytest.mark.parametrize("command", [["report"], ["animate"], ["plot", "--kind", "throughput"]])
def test_writers_into_a_read_only_folder_say_one_line(planted: tuple[Path, Path], command: list[str]) -> None:
    res, _ = planted
    for name in ("report.html", "animate.html"):
        (res / name).unlink(missing_ok=True)
    before = tree(res)
    argv = [sys.executable, "-W", "error", "-m", "manetlab", command[0], str(res), *command[1:]]
    if os.geteuid() != 0:
        res.chmod(0o555)
    elif _can_mount_read_only(res):
        # Root ignores permissions: a read-only bind mount, in a private mount namespace.
        argv = ["unshare", "-rm", "sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"', str(res), *argv]
    else:
        pytest.skip("running as root and cannot mount a read-only folder here")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    finally:
        res.chmod(0o755)
    line = one_error_line(p, 1)
    assert re.fullmatch(r"error: .*: (Read-only file system|Permission denied)", line), line
    assert tree(res) == before


_FULL_DISK = """
import errno, os, sys
from manetlab import safeio
from manetlab.animate import animate
from manetlab.plots import plot
real = os.fsync
def fsync(fd):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
safeio.os.fsync = fsync
from manetlab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_full_disk_says_one_line_and_keeps_the_old_file(planted: tuple[Path, Path]) -> None:
    res, _ = planted
    assert run_cli("report", res).returncode == 0
    old = (res / "report.html").read_bytes()
    p = subprocess.run([sys.executable, "-c", _FULL_DISK, "report", str(res)], capture_output=True, text=True, timeout=120)
    assert re.fullmatch(f"error: {re.escape(str(res))}/\\S+: No space left on device", one_error_line(p, 1))
    assert (res / "report.html").read_bytes() == old
    assert not [x for x in res.rglob("*") if ".tmp-" in x.name]


def test_os_errors_become_one_bounded_line() -> None:
    from manetlab.cli import os_error_line

    e = OSError(13, "Permission denied", "/tmp/a\nb" + "x" * 500)
    line = os_error_line(e)
    assert "\n" not in line and line.startswith("/tmp/a\\nb") and line.endswith(": Permission denied") and len(line) < 260
