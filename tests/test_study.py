"""Studies (docs/studies.md): the study file's checks, common random numbers,
executors giving identical results, the store (resume, --force, code versions,
failures), statistics, and resuming after SIGKILL at 20 random points.

No simulation numbers are hard-coded: runs are compared with each other."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import manetlab
from manetlab.stats import mean_ci, t_quantile
from manetlab.study import LocalExecutor, Store, Study, load_study, metrics_of
from _study_helpers import MARKERS, flaky
from _util import ROOT, run_cli

CHAIN = (ROOT / "examples" / "tcp_chain_80211.toml").as_posix()
DEFAULT = (ROOT / "examples" / "default_study.toml").as_posix()


def write_study(tmp: Path, body: str, name: str = "s.toml") -> Path:
    # A study names scenarios inside its own folder tree (issue 34): the examples are copied beside it.
    for src in (CHAIN, DEFAULT):
        if src in body:
            shutil.copyfile(src, tmp / Path(src).name)
            body = body.replace(src, Path(src).name)
    p = tmp / name
    p.write_text(body, encoding="utf-8")
    return p


def chain_study(tmp: Path, seeds: str = "1-4", duration_s: float = 4, extra: str = "") -> Path:
    return write_study(
        tmp,
        f"""
scenario = "{CHAIN}"
seeds = "{seeds}"
{extra}
[set]
duration_s = {duration_s}
[grid]
"flows[0].transport" = ["newreno", "vegas"]
"flows[0].tcp.window_pkts" = [4, 16]
""",
    )


def metric_frame(s: Study) -> Any:
    return s.results().drop(columns=["wall_s"])


# ----------------------------------------------------------------------------- the study file


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('scenario = "{c}"\nseed = 3', "seed: unknown key (allowed: name, description, scenario, set, grid, zip, seeds, metrics, derived)"),
        ("seeds = 1", "scenario: missing"),
        ('scenario = "nope.toml"', "scenario: "),
        ('scenario = "{c}"\nseeds = "5-1"', "seeds: '5-1' counts down"),
        ('scenario = "{c}"\nseeds = "a"', "seeds: 'a' is not a seed or a range"),
        ('scenario = "{c}"\n[grid]\n"flows[0].transport" = ["newreno", "tahoe2"]',
         "flows[0].transport: "),
        ('scenario = "{c}"\n[grid]\n"flows[3].transport" = ["newreno"]', "flows[3].transport: cannot set it: flows has 1 entry"),
        ('scenario = "{c}"\n[grid]\n"mobility.max_speed_mps" = 5', "grid.mobility.max_speed_mps: 5 is not a non-empty list"),
        ('scenario = "{c}"\n[grid]\nduration_s = [1, 1]', "grid.duration_s: 1 appears twice"),
        ('scenario = "{c}"\n[grid]\nseed = [1, 2]', "grid.seed: vary seeds with the top-level seeds key"),
        ('scenario = "{c}"\n[[zip]]\nduration_s = [1, 2]\n"flows[0].tcp.window_pkts" = [4]', "zip[0]: lists differ in length"),
        ('scenario = "{c}"\n[[zip]]\nduration_s = [1, 2, 1]\n"flows[0].tcp.window_pkts" = [4, 4, 4]', "zip[0]: the values at positions 0 and 2 are the same in every key"),
        ('scenario = "{c}"\n[[zip]]\nduration_s = [1, 1]', "zip[0].duration_s: 1 appears twice"),
        ('scenario = "{c}"\n[grid]\n"flows[0].transport" = ["newreno", "vegas"]\n[[derived]]\nname = "x"\nmetric = "flow0.highest_ack_segs"\naxis = "flows[0].transport"\nnew = "abra"\nbase = "newreno"',
         "derived[0].new: 'abra' is not a value of flows[0].transport"),
        ('scenario = "{c}"\n[grid]\n"flows[0].transport" = ["newreno", "vegas"]\n[[derived]]\nname = "x"\nmetric = "flow0.highest_ack"\naxis = "flows[0].transport"\nnew = "vegas"\nbase = "newreno"',
         "derived[0].metric: 'flow0.highest_ack' is not a metric of this study"),
        ('scenario = "{c}"\nmetrics = ["flow7.pdr"]', "metrics[0]: 'flow7.pdr': the scenario has 1 flows"),
        ('scenario = "{c}"\n[grid]\n"flows[0].transport" = ["newreno"]\n[[derived]]\nname = "x"\nmetric = "events"\naxis = "duration_s"\nnew = 1\nbase = 2',
         "derived[0].axis: 'duration_s' is not an axis of this study"),
    ],
)
def test_bad_study_is_one_line_naming_the_key_before_any_run(tmp_path: Path, body: str, message: str) -> None:
    study = write_study(tmp_path, body.replace("{c}", CHAIN))
    with pytest.raises(manetlab.ScenarioError) as e:
        load_study(study)
    assert message in str(e.value) and "\n" not in str(e.value)
    p = run_cli("study", "run", study, "--dir", tmp_path / "out")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1 and message in p.stderr
    assert not (tmp_path / "out").exists()  # nothing ran, no store was made


def test_bad_cell_names_key_value_and_cell(tmp_path: Path) -> None:
    study = write_study(tmp_path, f'scenario = "{CHAIN}"\n[grid]\n"flows[0].transport" = ["newreno", "tahoe2"]\nduration_s = [5, 10]')
    with pytest.raises(manetlab.ScenarioError) as e:
        load_study(study)
    msg = str(e.value)
    assert msg.startswith("flows[0].transport: ") and "tahoe2" in msg and "(in grid cell flows[0].transport='tahoe2', duration_s=5)" in msg


def test_axes_nested_tables_zip_and_inline_scenario(tmp_path: Path) -> None:
    body = """
name = "inline"
seeds = [1, 2]
[scenario]
duration_s = 2
nodes = { count = 3, placement = { kind = "chain", spacing_m = 200 } }
radio = {}
[[scenario.flows]]
kind = "ftp"
src = 0
dst = 2
[grid.flows]            # nested table form of "flows[0]..." is not possible; mix with dotted keys
[grid]
"flows[0].transport" = ["newreno", "vegas"]
[grid.mac]
rts_threshold_bytes = [0, 3000]
[[zip]]
duration_s = [2, 3]
"nodes.placement.spacing_m" = [150, 200]
"""
    body = body.replace("[grid.flows]            # nested table form of \"flows[0]...\" is not possible; mix with dotted keys\n", "")
    s = load_study(write_study(tmp_path, body))
    assert s.name == "inline" and s.seeds == [1, 2]
    assert [list(ax) for ax in s.axes] == [["flows[0].transport"], ["mac.rts_threshold_bytes"], ["duration_s", "nodes.placement.spacing_m"]]
    assert len(s.cells) == 2 * 2 * 2 and s.n_runs == 16
    assert s.cells[-1].values == {"flows[0].transport": "vegas", "mac.rts_threshold_bytes": 3000, "duration_s": 3, "nodes.placement.spacing_m": 200}
    assert len({c.scenario_hash for c in s.cells}) == 8


# ----------------------------------------------------------------------------- common random numbers


def test_variants_on_one_seed_see_identical_trajectories(tmp_path: Path) -> None:
    study = write_study(
        tmp_path,
        f"""
scenario = "{DEFAULT}"
seeds = [3]
[set]
duration_s = 20  # on this seed the FTP route takes ~8 s to appear (ns-2 MAC, ARP, AODV rules)
"outputs.movement" = true
"flows[0].tcp.trace" = true
[grid]
"flows[0].transport" = ["newreno", "vegas", "abra"]
""",
    )
    s = Study(study, tmp_path / "out")
    s.run(jobs=2, progress=False)
    runs = sorted((tmp_path / "out" / "runs").iterdir())
    assert len(runs) == 3
    movements = [(d / "movement.tcl").read_text() for d in runs]
    assert movements[0] and "setdest" in movements[0]
    assert movements[0] == movements[1] == movements[2]
    # ...and the final positions in the node tables agree; the TCP flow itself differs.
    nodes = s.table("nodes")
    pos = [g[["node", "x_m", "y_m"]].reset_index(drop=True) for _, g in nodes.groupby("cell")]
    assert pos[0].equals(pos[1]) and pos[0].equals(pos[2])
    # Time series the scenario asked for are kept per run too.
    ts = s.table("timeseries")
    assert set(ts["flows[0].transport"]) == {"newreno", "vegas", "abra"} and len(ts) > 3 and "cwnd_segs" in ts
    written = {p.name for p in s.write_tables(tmp_path / "tables")}
    assert written == {"flows.parquet", "nodes.parquet", "links.parquet", "timeseries.parquet"}
    df = s.results()
    assert df["flows[0].transport"].tolist() == ["newreno", "vegas", "abra"]
    assert len(set(df["flow0.data_segments_sent"])) > 1  # the variants do behave differently
    # Cross traffic: the CBR flows send the same packets (same jitter draws) whatever the TCP variant.
    assert df["flow1.tx_packets"].nunique() == 1


# ----------------------------------------------------------------------------- executors


def test_local_pool_dask_and_one_job_give_identical_results(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    study = chain_study(tmp_path, seeds="1-3")
    one = Study(study, tmp_path / "one")
    one.run(jobs=1, progress=False)
    two = Study(study, tmp_path / "two")
    two.run(jobs=2, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        dsk = Study(study, tmp_path / "dask")
        rep = dsk.run(scheduler=cluster.scheduler_address, progress=False)
        p = run_cli("study", "run", study, "--dir", tmp_path / "dask-cli", "--scheduler", cluster.scheduler_address)
        assert p.returncode == 0, p.stderr
        assert f"Dask scheduler {cluster.scheduler_address}" in p.stdout and "ran 12 (0 failed)" in p.stdout
    assert rep.ran == rep.planned == 12 and rep.failed == 0
    ref = metric_frame(one)
    assert len(ref) == 12 and (ref["status"] == "ok").all()
    assert ref.equals(metric_frame(two)) and ref.equals(metric_frame(dsk))
    assert ref.equals(metric_frame(Study(study, tmp_path / "dask-cli")))
    # Byte-identical summaries, and equal to a plain in-process manetlab.run.
    with Store(tmp_path / "one") as a, Store(tmp_path / "two") as b, Store(tmp_path / "dask") as c:
        for cell, seed in one.plan():
            text = a.summary(cell.scenario_hash, seed, one.code_version)
            assert text == b.summary(cell.scenario_hash, seed, one.code_version) == c.summary(cell.scenario_hash, seed, one.code_version)
    cell, seed = one.plan()[5]
    direct = manetlab.run(cell.scenario, seed=seed)
    row = ref[(ref["cell"] == cell.index) & (ref["seed"] == seed)].iloc[0]
    for k, v in metrics_of(direct.summary).items():
        assert row[k] == v or (math.isnan(v) and math.isnan(row[k])), k
    with Store(tmp_path / "one") as a:
        assert a.summary(cell.scenario_hash, seed, one.code_version) == direct.summary_json


# ----------------------------------------------------------------------------- store


def test_rerun_runs_only_what_is_missing_force_redoes(tmp_path: Path) -> None:
    study = chain_study(tmp_path, seeds="1-2")
    s = Study(study, tmp_path / "st")
    first = s.run(jobs=2, progress=False)
    assert (first.planned, first.ran, first.skipped) == (8, 8, 0)
    again = s.run(jobs=2, progress=False)
    assert (again.ran, again.skipped) == (0, 8)
    # A wider seed range runs just the new seeds.
    wider = Study(chain_study(tmp_path, seeds="1-3"), tmp_path / "st")
    more = wider.run(jobs=2, progress=False)
    assert (more.ran, more.skipped) == (4, 8)
    before = metric_frame(wider)
    forced = wider.run(jobs=2, force=True, progress=False)
    assert forced.ran == 12
    assert metric_frame(wider).equals(before)
    with sqlite3.connect(tmp_path / "st" / "study.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 12
        manifest = json.loads(db.execute("SELECT manifest_json FROM manifests ORDER BY id DESC LIMIT 1").fetchone()[0])
    assert manifest["seeds"] == [1, 2, 3] and manifest["axes"][0] == {"flows[0].transport": ["newreno", "vegas"]}
    assert manifest["base_scenario"]["duration_s"] == 4


def test_changed_code_version_is_reported_not_mixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = chain_study(tmp_path, seeds="1")
    old = Study(study, tmp_path / "st")
    old.code_version = "0.0.1+oldbuild"
    monkeypatch.setattr("manetlab.study.executor._CODE_VERSION", "0.0.1+oldbuild")
    old.run(jobs=1, progress=False)
    monkeypatch.undo()
    new = Study(study, tmp_path / "st")
    st = new.status()
    assert (st["ok"], st["missing"]) == (0, 4) and st["other_versions"] == {"0.0.1+oldbuild": 4}
    assert "from code version 0.0.1+oldbuild" in new.format_status()
    assert len(new.results()) == 0  # not mixed in
    rep = new.run(jobs=1, progress=False)
    assert rep.other_versions == {"0.0.1+oldbuild": 4} and rep.ran == 4
    p = run_cli("study", "run", study, "--dir", tmp_path / "st", "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""  # no progress bar when stderr is not a terminal
    assert "4 runs in the store are from code version 0.0.1+oldbuild" in p.stdout and "ran 0 (0 failed), 4 already in the store" in p.stdout


def test_a_worker_built_from_other_code_is_a_failure(tmp_path: Path) -> None:
    s = Study(chain_study(tmp_path, seeds="1"), tmp_path / "st")
    s.code_version = "something-else"
    rep = s.run(jobs=1, progress=False)
    assert rep.failed == 4
    assert all("worker ran code version" in f["error"] for f in s.status()["failures"])


def test_failures_are_recorded_crashed_workers_retried_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MARKERS, str(tmp_path))
    study = write_study(
        tmp_path,
        f'scenario = "{CHAIN}"\nseeds = "1-5"\n[set]\nduration_s = 2\n[grid]\n"flows[0].transport" = ["newreno"]',
    )
    s = Study(study, tmp_path / "st")
    rep = s.run(executor=LocalExecutor(2, fn=flaky), progress=False)
    assert rep.ran == 5 and rep.failed == 2
    st = s.status()
    assert (st["ok"], st["failed"], st["missing"]) == (3, 2, 0)
    errs = {f["seed"]: f for f in st["failures"]}
    assert set(errs) == {2, 4}
    assert errs[2]["error"].startswith("ScenarioError: duration_s_bogus: unknown key") and errs[2]["attempts"] == 1
    assert "worker process died (exit code 4) while running it, 2 times" in errs[4]["error"] and errs[4]["attempts"] == 2
    df = s.results()
    assert df["seed"].tolist() == [1, 3, 5]  # seed 3 crashed once, then ran
    p = run_cli("study", "status", study, "--dir", tmp_path / "st")
    assert p.returncode == 0 and "3 ok, 2 failed, 0 missing" in p.stdout and "seed 4, 2 attempt(s): worker process died" in p.stdout
    # Failed runs are not redone by a plain rerun; --retry-failed redoes them (with the real worker now).
    assert s.run(jobs=1, progress=False).ran == 0
    again = s.run(jobs=1, retry_failed=True, progress=False)
    assert again.ran == 2 and again.failed == 0 and len(s.results()) == 5
    ref = Study(study, tmp_path / "ref")
    ref.run(jobs=1, progress=False)
    assert metric_frame(s).drop(columns=["status", "error"]).equals(metric_frame(ref).drop(columns=["status", "error"]))


# ----------------------------------------------------------------------------- statistics


def test_mean_ci_is_student_t() -> None:
    r = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert r.n == 5 and r.mean == 3.0 and r.sd == pytest.approx(math.sqrt(2.5))
    half = 2.7764451 * math.sqrt(2.5) / math.sqrt(5)  # t(0.975, 4)
    assert (r.ci_low, r.ci_high) == pytest.approx((3.0 - half, 3.0 + half), abs=1e-6)
    assert t_quantile(0.975, 4) == pytest.approx(2.7764451, abs=1e-6)
    assert mean_ci([2.0, math.nan, 4.0]).n == 2
    one = mean_ci([7.0])
    assert one.mean == 7.0 and math.isnan(one.sd) and math.isnan(one.ci_low)


def test_summary_paired_and_derived_agree_with_the_runs(tmp_path: Path) -> None:
    study = chain_study(
        tmp_path,
        seeds="1-4",
        extra='metrics = ["flow0.highest_ack_segs", "flow0.throughput_kbps"]\n'
        '[[derived]]\nname = "vegas_gain"\nmetric = "flow0.highest_ack_segs"\naxis = "flows[0].transport"\nnew = "vegas"\nbase = "newreno"\n'
        '[[derived]]\nname = "vegas_diff"\nkind = "difference"\nmetric = "flow0.throughput_kbps"\naxis = "flows[0].transport"\nnew = "vegas"\nbase = "newreno"\n',
    )
    s = Study(study, tmp_path / "st")
    s.run(jobs=2, progress=False)
    df = s.results()
    summ = s.summary()
    assert set(summ["metric"]) == {"flow0.highest_ack_segs", "flow0.throughput_kbps"} and len(summ) == 8
    for _, row in summ.iterrows():
        vals = df[df["cell"] == row["cell"]][row["metric"]].tolist()
        ref = mean_ci(vals)
        assert row["n"] == 4 and row["mean"] == pytest.approx(ref.mean) and row["ci_high"] == pytest.approx(ref.ci_high)
    der = s.derived()
    assert list(der["name"]) == ["vegas_gain", "vegas_gain", "vegas_diff", "vegas_diff"]
    for _, row in der.iterrows():
        w = row["flows[0].tcp.window_pkts"]
        a = df[(df["flows[0].transport"] == "vegas") & (df["flows[0].tcp.window_pkts"] == w)].set_index("seed")[row["metric"]]
        b = df[(df["flows[0].transport"] == "newreno") & (df["flows[0].tcp.window_pkts"] == w)].set_index("seed")[row["metric"]]
        per_seed = [(a[k] - b[k]) / b[k] * 100 if row["name"] == "vegas_gain" else a[k] - b[k] for k in a.index]
        assert row["n"] == 4 and row["mean"] == pytest.approx(sum(per_seed) / 4)
    md = s.to_markdown()
    assert "## Derived" in md and "| vegas_gain | flow0.highest_ack_segs |" in md and "## flow0.throughput_kbps" in md
    figs = s.figures(tmp_path / "figs")
    names = ("flow0.highest_ack_segs", "flow0.throughput_kbps", "vegas_gain", "vegas_diff")
    assert sorted(p.name for p in figs) == sorted(f"{m}.{e}" for m in names for e in ("png", "svg"))
    flows = s.table("flows")
    assert len(flows) == 16 and list(flows.columns[:4]) == ["cell", "flows[0].transport", "flows[0].tcp.window_pkts", "seed"]
    p = run_cli("study", "results", study, "--dir", tmp_path / "st", "--format", "csv", "--out", tmp_path / "csv")
    assert p.returncode == 0, p.stderr
    import pandas as pd

    assert len(pd.read_csv(tmp_path / "csv" / "runs.csv")) == 16 and len(pd.read_csv(tmp_path / "csv" / "derived.csv")) == 4
    p = run_cli("study", "results", study, "--dir", tmp_path / "st", "--format", "parquet", "--out", tmp_path / "pq")
    assert p.returncode == 0, p.stderr
    assert len(pd.read_parquet(tmp_path / "pq" / "flows.parquet")) == 16


# ----------------------------------------------------------------------------- SIGKILL


def _rows(db_path: Path) -> int:
    if not db_path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # the schema is not there yet


def test_sigkill_at_20_random_points_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    study = chain_study(tmp_path, seeds="1-15", duration_s=50)  # 4 cells x 15 seeds = 60 runs
    total = 60
    ref = Study(study, tmp_path / "ref")
    ref.run(jobs=2, progress=False)
    rng = random.Random(20)
    # 20 random points of the study's progress: kill once the store holds that many
    # rows, plus a random few milliseconds (so kills also land mid-write); when a
    # restart has already passed its point, kill it at a random moment of its start-up.
    # Points stay below total - 20 so no restart can finish before its kill.
    targets = sorted(rng.sample(range(1, total - 20), 20))
    d = tmp_path / "killed"
    db = d / "study.sqlite"
    cmd = [sys.executable, "-W", "error", "-m", "manetlab", "study", "run", str(study), "--dir", str(d), "--jobs", "2", "--no-progress"]
    seen = []
    for i, target in enumerate(targets):
        log = tmp_path / f"stderr-{i}.txt"
        with open(log, "wb") as err:
            start_rows = _rows(db)
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            if start_rows >= target:
                time.sleep(rng.uniform(0, 0.3))
            else:
                while proc.poll() is None and _rows(db) < target:
                    time.sleep(0.002)
                time.sleep(rng.uniform(0, 0.03))
            assert proc.poll() is None, "the study finished before its kill point"
            os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers, as a crash would
            proc.wait()
        assert "Traceback" not in log.read_text(), log.read_text()  # killed, never failed on its own
        seen.append(_rows(db))
    assert seen[-1] < total
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = con.execute("SELECT scenario_hash, seed, COUNT(*) FROM runs GROUP BY scenario_hash, seed, code_version").fetchall()
    assert len(keys) == total and all(n == 1 for _, _, n in keys)
    killed = Study(study, d)
    assert killed.status()["ok"] == total
    assert metric_frame(killed).equals(metric_frame(ref))
    assert seen == sorted(seen) and seen[0] > 0  # the store only grew, from the first kill on
