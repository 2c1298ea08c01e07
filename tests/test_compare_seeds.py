"""`compare --seeds` (every variant on each seed: means and the paired difference's
95 % interval) and the progress bars of `compare` and `crosscheck` (issue 35)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from manetlab.compare import Comparison, compare
from manetlab.ns2.crosscheck import crosscheck
from manetlab.stats import paired_ci
from _util import ROOT, run_cli

CHAIN = ROOT / "examples" / "tcp_chain_80211.toml"
SHORT = {"duration_s": 4}


@pytest.fixture(scope="module")
def three_seeds() -> Comparison:
    return compare(CHAIN, 0, ["newreno", "vegas"], overrides=SHORT, seeds=[1, 2, 3], progress=False)


def test_each_seed_is_the_one_seed_comparison_of_that_seed(three_seeds: Comparison) -> None:
    assert three_seeds.seeds == [1, 2, 3]
    for k, seed in enumerate(three_seeds.seeds):
        one = compare(CHAIN, 0, ["newreno", "vegas"], seed=seed, overrides=SHORT, progress=False)
        assert one.seeds == [seed]
        assert [r.summary for r in three_seeds.seed_results[k]] == [r.summary for r in one.results]
    assert three_seeds.results is three_seeds.seed_results[0]


def test_table_gives_means_and_the_paired_interval(three_seeds: Comparison) -> None:
    flows = [[r.summary["flows"][0] for r in rs] for rs in three_seeds.seed_results]
    base = [f[0]["throughput_kbps"] for f in flows]
    new = [f[1]["throughput_kbps"] for f in flows]
    assert three_seeds.value(0, "throughput_kbps") == pytest.approx(sum(base) / 3)
    assert three_seeds.value(1, "throughput_kbps") == pytest.approx(sum(new) / 3)
    mean, lo, hi = paired_ci(new, base)
    assert three_seeds.difference(1, "throughput_kbps") == pytest.approx((mean, lo, hi))
    assert lo < mean < hi  # three seeds that differ: a real interval
    lines = three_seeds.table().splitlines()
    assert lines[0].split("  ")[0] == "metric" and "newreno (mean)" in lines[0] and "vegas - newreno [95% CI]" in lines[0]
    row = next(ln for ln in lines if ln.startswith("throughput"))
    assert row.endswith(f"{mean:+.4g} [{lo:+.4g}, {hi:+.4g}]")


def test_one_seed_table_is_unchanged() -> None:
    c = compare(CHAIN, 0, ["newreno", "vegas"], overrides=SHORT, progress=False)
    head = c.table().splitlines()[0].split()
    assert head == ["metric", "newreno", "vegas", "vegas", "vs", "newreno"]


def test_cli_seeds_writes_every_run_and_says_what_the_interval_is(tmp_path: Path) -> None:
    shutil.copyfile(CHAIN, tmp_path / "chain.toml")
    r = run_cli("compare", "chain.toml", "--flow", "0", "--transports", "newreno", "vegas", "--seeds", "1-3", "--set", "duration_s=4",
                "--out", "cmp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("tcp-chain-80211: seeds 1-3 (3),")
    assert "one seed" not in r.stdout
    assert "A - B [95% CI]: the mean paired difference" in r.stdout
    manifest = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert manifest["seeds"] == [1, 2, 3]
    assert manifest["runs"]["vegas"] == {"1": "vegas/seed1", "2": "vegas/seed2", "3": "vegas/seed3"}
    for t in ("newreno", "vegas"):
        for s in (1, 2, 3):
            assert json.loads((tmp_path / "cmp" / t / f"seed{s}" / "summary.json").read_text())["seed"] == s
    page = (tmp_path / "cmp" / "report.html").read_text()
    assert "3 seeds (1-3)" in page and "vegas - newreno [95% CI]" in page
    assert r.stderr == ""  # no terminal: no progress bar


def test_cli_one_seed_in_seeds_keeps_the_one_seed_note(tmp_path: Path) -> None:
    shutil.copyfile(CHAIN, tmp_path / "chain.toml")
    r = run_cli("compare", "chain.toml", "--flow", "0", "--transports", "newreno", "vegas", "--seeds", "4", "--set", "duration_s=3",
                "--out", "cmp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("tcp-chain-80211: seed 4,")
    assert "one seed: a single run per variant proves nothing" in r.stdout
    assert (tmp_path / "cmp" / "vegas" / "summary.json").is_file()  # the one-seed layout


@pytest.mark.parametrize(("args", "message"), [
    (["--seed", "1", "--seeds", "1-3"], "argument --seeds: not allowed with argument --seed"),
    (["--seeds", "3-1"], "error: --seeds: '3-1' counts down (write 1-3)"),
])
def test_cli_bad_seeds_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    r = run_cli("compare", CHAIN, "--flow", "0", "--transports", "newreno", "vegas", *args, "--out", "cmp", cwd=tmp_path)
    assert r.returncode == 2
    assert message in r.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "cmp").exists()


def test_compare_progress_names_each_finished_run(capsys: pytest.CaptureFixture[str]) -> None:
    compare(CHAIN, 0, ["newreno", "vegas"], overrides={"duration_s": 2}, seeds=[1, 2], progress=True)
    err = capsys.readouterr().err
    assert "compare: 100%" in err and "4/4" in err
    assert "seed 2 (2/2) vegas done (" in err
    compare(CHAIN, 0, ["newreno", "vegas"], overrides={"duration_s": 2}, progress=None)  # stderr not a terminal: off
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (ns) is not installed")
@pytest.mark.parametrize("jobs", [1, 2])
def test_crosscheck_progress_names_each_finished_seed(capsys: pytest.CaptureFixture[str], jobs: int) -> None:
    scenario = ROOT / "benchmarks" / "scenarios" / "chain_4hop_tcp_aodv.toml"
    df = crosscheck(scenario, "1-3", jobs=jobs, overrides={"duration_s": 5}, progress=True)
    err = capsys.readouterr().err
    assert "crosscheck: 100%" in err and "3/3" in err
    assert all(f"seed {s} done (" in err for s in (1, 2, 3))
    assert sorted(set(df["seed"])) == [1, 2, 3]
    assert list(df["seed"][:3]) == [1, 2, 3]  # the table keeps seed order whatever finished first
    crosscheck(scenario, "1", overrides={"duration_s": 5})  # the API's default: no bar
    assert capsys.readouterr().err == ""
