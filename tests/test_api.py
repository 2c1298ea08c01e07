"""The Python API: loading, overrides, running, DataFrames, writing outputs, and
the CLI commands that wrap them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import manetlab
from manetlab import _core
from _util import EXAMPLE, run_cli

TABLE_FILES = {f"{t}.{ext}" for t in ("flows", "nodes", "links") for ext in ("csv", "parquet")}


@pytest.fixture(scope="module")
def result() -> manetlab.Result:
    return manetlab.run(EXAMPLE)


# --- scenarios ---------------------------------------------------------------


def test_load_scenario() -> None:
    s = manetlab.load_scenario(EXAMPLE)
    assert (s.name, s.seed, s.duration_s, s.source) == ("cbr-chain", 1, 10.0, EXAMPLE)
    assert s.label == "cbr-chain"
    # normalized has every default filled in by the core; data is as written.
    assert s.normalized["links"][0]["error_rate"] == 0.0
    assert "error_rate" not in s.data["links"][0]
    assert _core.validate(s.to_json()) == s.to_json(), "normalised form is a fixed point"


def test_json_file_is_the_same_scenario(tmp_path: Path) -> None:
    s = manetlab.load_scenario(EXAMPLE)
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(s.data))
    j = manetlab.load_scenario(path)
    assert j.to_json() == s.to_json()
    assert manetlab.run(j).summary_json == manetlab.run(s).summary_json


def test_unknown_extension_is_read_as_toml(tmp_path: Path) -> None:
    path = tmp_path / "chain.scenario"
    path.write_bytes(EXAMPLE.read_bytes())
    assert manetlab.load_scenario(path).to_json() == manetlab.load_scenario(EXAMPLE).to_json()


def test_overrides_make_a_new_validated_scenario() -> None:
    s = manetlab.load_scenario(EXAMPLE)
    t = s.with_overrides({"flows[0].rate_kbps": 100, "duration_s": 5, "queue.limit_pkts": 10})
    assert t.normalized["flows"][0]["rate_kbps"] == 100
    assert t.duration_s == 5
    assert t.normalized["queue"]["limit_pkts"] == 10, "a missing table is created"
    assert s.normalized["flows"][0]["rate_kbps"] == 200, "the original is unchanged"
    assert s.normalized["queue"] is None
    assert manetlab.load_scenario(EXAMPLE, {"duration_s": 5, "flows[0].rate_kbps": 100, "queue.limit_pkts": 10}).to_json() == t.to_json()


def test_overrides_are_validated_like_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("rate_kbps = 200.0", "rate_kbps = -5.0", 1))
    with pytest.raises(manetlab.ScenarioError) as from_file:
        manetlab.load_scenario(bad)
    with pytest.raises(manetlab.ScenarioError) as from_override:
        manetlab.load_scenario(EXAMPLE, {"flows[0].rate_kbps": -5.0})
    with pytest.raises(manetlab.ScenarioError) as from_run:
        manetlab.run(EXAMPLE, overrides={"flows[0].rate_kbps": -5.0})
    assert str(from_file.value) == str(from_override.value) == str(from_run.value)
    assert str(from_file.value).startswith("flows[0].rate_kbps: -5 is out of range")


def test_apply_overrides_does_not_mutate_its_input() -> None:
    data = {"a": {"b": [1, {"c": 2}]}}
    out = manetlab.apply_overrides(data, {"a.b[1].c": 3, "a.d": "x", "e.f.g": True})
    assert data == {"a": {"b": [1, {"c": 2}]}}
    assert out == {"a": {"b": [1, {"c": 3}], "d": "x"}, "e": {"f": {"g": True}}}
    with pytest.raises(manetlab.ScenarioError, match=r"^x\[0\]: cannot set it: there is no list x$"):
        manetlab.apply_overrides(data, {"x[0]": 1})


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("duration_s=5", "duration_s", 5),
        ("flows[0].rate_kbps = 0.5", "flows[0].rate_kbps", 0.5),
        ("name=my run", "name", "my run"),
        ('name="quoted"', "name", "quoted"),
        ("name=cbr", "name", "cbr"),
        ("x=true", "x", True),
        ("x=[1, 2]", "x", [1, 2]),
        ('nodes.placement={kind = "chain", spacing_m = 10}', "nodes.placement", {"kind": "chain", "spacing_m": 10}),
        ("name=a=b", "name", "a=b"),
        ("name=", "name", ""),
    ],
)
def test_parse_set(text: str, key: str, value: object) -> None:
    assert manetlab.parse_set(text) == (key, value)


# --- running -----------------------------------------------------------------


def test_run_accepts_scenario_path_and_dict(result: manetlab.Result) -> None:
    s = manetlab.load_scenario(EXAMPLE)
    for form in (s, EXAMPLE, str(EXAMPLE), s.data):
        assert manetlab.run(form).summary_json == result.summary_json
    with pytest.raises(TypeError, match="not int"):
        manetlab.run(42)  # type: ignore[arg-type]


def test_run_with_seed_and_overrides() -> None:
    r = manetlab.run(EXAMPLE, seed=7, overrides={"flows[1].rate_kbps": 100})
    assert r.summary["seed"] == 7 and r.scenario is not None and r.scenario.seed == 7
    # 100 kbit/s of 512-byte packets for 3 s: 4096 bits per 40.96 ms, 74 packets.
    assert r.summary["flows"][1]["tx_packets"] == 74


def test_summary_shape(result: manetlab.Result) -> None:
    s = result.summary
    assert s["manetlab_version"] == manetlab.__version__
    assert (s["scenario_name"], s["seed"], s["duration_s"]) == ("cbr-chain", 1, 10.0)
    assert s["events"] > 0
    assert [f["name"] for f in s["flows"]] == ["steady", "burst"]
    assert len(s["nodes"]) == 4 and len(s["links"]) == 6, "one links row per direction"
    assert json.loads(result.summary_json) == s


def test_dataframes(result: manetlab.Result) -> None:
    flows, nodes, links = result.flows, result.nodes, result.links
    assert list(flows["name"]) == ["steady", "burst"]
    assert (len(nodes), len(links)) == (4, 6)
    for df, rows in ((flows, result.summary["flows"]), (nodes, result.summary["nodes"])):
        # Nested maps (in_flight, ctrl_drops) become prefixed columns in place.
        base = [c for k, v in rows[0].items() if k != "drops" for c in ([f"{k}_{kk}" for kk in v] if isinstance(v, dict) else [k])]
        drops = sorted(rows[0]["drops"])
        assert all(sorted(r["drops"]) == drops for r in rows), "every drop key in every row"
        assert list(df.columns) == base + [f"drops_{k}" for k in drops]
        assert "drops_mac.RET" in df.columns and "drops_mac.COL" not in df.columns, "collisions are MAC counters"
        for i, row in enumerate(rows):
            for k in drops:
                assert df.loc[i, f"drops_{k}"] == row["drops"].get(k, 0)
            assert df[f"drops_{drops[0]}"].dtype == "int64"
    # The overload drops at node 1's queue, the lossy link at node 3's arrival.
    assert nodes.loc[1, "drops_ifq.IFQ"] > 0 and nodes.loc[0, "drops_ifq.IFQ"] == 0
    assert nodes.loc[3, "drops_link.ERR"] > 0
    assert links["queue_drops"].sum() == nodes["drops_ifq.IFQ"].sum()


def test_a_flow_that_receives_nothing_has_float_nan_delays(tmp_path: Path) -> None:
    # Node 2 is unreachable: every packet is a no-route drop.
    r = manetlab.run({"duration_s": 1, "nodes": {"count": 3}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}],
                      "flows": [{"kind": "cbr", "src": 0, "dst": 2, "interval_s": 0.25}]})
    f = r.flows
    assert f["delay_mean_s"].dtype == "float64" and f["delay_mean_s"].isna().all()
    assert list(f["drops_rtr.NRTE"]) == [4]
    r.write(tmp_path)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "flows.csv"), f)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "flows.parquet"), f)
    assert "-" in r.table().splitlines()[1]


def test_write(tmp_path: Path, result: manetlab.Result) -> None:
    out = tmp_path / "deep" / "out"
    written = result.write(out)
    assert {p.name for p in written} == TABLE_FILES | {"summary.json", "scenario.json", "run.json", ".manetlab"}
    assert {p.name for p in out.iterdir()} == TABLE_FILES | {"summary.json", "scenario.json", "run.json", ".manetlab"}
    assert (out / "summary.json").read_bytes() == result.summary_json.encode("utf-8")
    for name in ("flows", "nodes", "links"):
        frame = getattr(result, name)
        from_csv = pd.read_csv(out / f"{name}.csv")
        from_parquet = pd.read_parquet(out / f"{name}.parquet")
        pd.testing.assert_frame_equal(from_csv, from_parquet)
        pd.testing.assert_frame_equal(from_parquet, frame)


def test_table(result: manetlab.Result) -> None:
    lines = result.table().splitlines()
    assert len(lines) == 3
    for title in ("flow", "name", "src→dst", "tx", "rx", "PDR", "throughput kbit/s", "mean delay ms", "jitter ms"):
        assert title in lines[0]
    f = result.summary["flows"][0]
    cells = lines[1].split()
    assert cells[:5] == ["0", "steady", "0→3", str(f["tx_packets"]), str(f["rx_packets"])]
    assert cells[5:] == [f"{f['pdr']:.3f}", f"{f['throughput_kbps']:.1f}", f"{f['delay_mean_s'] * 1e3:.3f}", f"{f['jitter_mean_s'] * 1e3:.3f}"]
    assert manetlab.run({"duration_s": 1, "nodes": {"count": 1}}).table() == "(no flows)"


# --- the command line ----------------------------------------------------------


def test_cli_version() -> None:
    p = run_cli("--version")
    assert (p.returncode, p.stdout) == (0, f"manetlab {manetlab.__version__}\n")


def test_cli_validate() -> None:
    p = run_cli("validate", EXAMPLE)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == "ok: cbr-chain: 4 nodes, 3 links, 2 flows, 10 s\n"
    p = run_cli("validate", EXAMPLE, "--set", "duration_s=20", "--set", "flows[0].rate_kbps=50")
    assert p.stdout == "ok: cbr-chain: 4 nodes, 3 links, 2 flows, 20 s\n"


def test_cli_run_default_output_directory(tmp_path: Path, result: manetlab.Result) -> None:
    p = run_cli("run", EXAMPLE, cwd=tmp_path)
    assert (p.returncode, p.stderr) == (0, "")
    out = tmp_path / "results" / "cbr_chain"
    assert (out / "summary.json").read_bytes() == result.summary_json.encode()
    assert {x.name for x in out.iterdir()} == TABLE_FILES | {"summary.json", "scenario.json", "run.json", ".manetlab"}
    assert result.table() in p.stdout
    assert "results/cbr_chain" in p.stdout.splitlines()[-1]


def test_cli_run_with_set_and_seed(tmp_path: Path) -> None:
    p = run_cli("run", EXAMPLE, "--seed", "3", "--set", "flows[1].rate_kbps=100", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    expected = manetlab.run(EXAMPLE, seed=3, overrides={"flows[1].rate_kbps": 100})
    assert (tmp_path / "summary.json").read_text() == expected.summary_json


def test_cli_usage_errors_exit_2() -> None:
    p = run_cli()
    assert p.returncode == 2 and "usage: manetlab" in p.stderr
    p = run_cli("frobnicate")
    assert p.returncode == 2 and "invalid choice" in p.stderr
