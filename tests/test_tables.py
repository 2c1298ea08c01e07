"""Result tables written without pandas (issue 15, `manetlab run` start-up).

`Result.write` writes flows/nodes/links (and the time series) with the csv
module and the extension's Parquet writer. A folder written that way must hold
the same CSV bytes as pandas' `DataFrame.to_csv` wrote before, and Parquet files
that `pandas.read_parquet` reads back as the same DataFrames; `load_result` and
pandas must see no difference.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import manetlab
from manetlab.results import TABLES, Result

ROOT = Path(__file__).resolve().parent.parent


def pandas_write(result: Result, out: Path) -> list[str]:
    """The tables as `Result.write` wrote them before (pandas and pyarrow)."""
    names = list(TABLES)
    if any((f.get("tcp") or {}).get("trace") for f in result.summary["flows"]):
        names.append("timeseries")
    if result.summary.get("series"):
        names += ["packet_series", "queue_series"]
    for name in names:
        df = getattr(result, name)
        df.to_csv(out / f"{name}.csv", index=False, lineterminator="\n")
        df.to_parquet(out / f"{name}.parquet", index=False)
    return names


def assert_same_as_pandas(result: Result, tmp_path: Path, *, expect_native: bool = True) -> list[str]:
    new, old = tmp_path / "new", tmp_path / "old"
    result.write(new)
    shutil.copytree(new, old)
    names = pandas_write(result, old)
    for name in names:
        if expect_native:
            assert result._columns(name) is not None, f"{name}: written by the pandas fallback"
        assert (new / f"{name}.csv").read_bytes() == (old / f"{name}.csv").read_bytes(), name
        frame = getattr(result, name)
        from_new = pd.read_parquet(new / f"{name}.parquet")
        pd.testing.assert_frame_equal(from_new, pd.read_parquet(old / f"{name}.parquet"))
        pd.testing.assert_frame_equal(from_new, frame)
        if len(frame):
            pd.testing.assert_frame_equal(pd.read_csv(new / f"{name}.csv"), pd.read_csv(old / f"{name}.csv"))
    a, b = manetlab.load_result(new), manetlab.load_result(old)
    assert a.summary == b.summary == result.summary
    for name in names:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    return names


def test_chain_folder_matches_pandas(tmp_path: Path) -> None:
    # Wireless: no links rows (an empty table); TCP-only series: an empty packet_series.
    r = manetlab.run(ROOT / "benchmarks" / "scenarios" / "chain_4hop_tcp_aodv.toml", overrides={"duration_s": 5, "outputs.series": True})
    names = assert_same_as_pandas(r, tmp_path)
    assert names == ["flows", "nodes", "links", "packet_series", "queue_series"]
    assert r.links.empty and r.packet_series.empty and not r.queue_series.empty


def test_mixed_flows_traces_and_series_match_pandas(tmp_path: Path) -> None:
    # TCP and CBR flows (tcp_* columns NaN for CBR), a TCP trace, packet series with NaN jitter.
    r = manetlab.run(ROOT / "examples" / "default_study.toml", overrides={"duration_s": 10, "outputs.series": True, "flows[0].tcp.trace": True})
    names = assert_same_as_pandas(r, tmp_path)
    assert names == ["flows", "nodes", "links", "timeseries", "packet_series", "queue_series"]
    assert r.flows["tcp_highest_ack_segs"].isna().any() and r.packet_series["jitter_s"].isna().any()


def test_wired_unreachable_flow_matches_pandas(tmp_path: Path) -> None:
    # Links rows, and a flow with no delay at all (NaN columns).
    r = manetlab.run({"duration_s": 1, "nodes": {"count": 3}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}],
                      "flows": [{"kind": "cbr", "src": 0, "dst": 2, "interval_s": 0.25}]})
    assert_same_as_pandas(r, tmp_path)
    assert len(r.links) == 2 and r.flows["delay_mean_s"].isna().all()


def synthetic(flows: list[dict]) -> Result:
    return Result(json.dumps({"partial": False, "seed": 1, "flows": flows, "nodes": [], "links": []}))


def test_awkward_values_match_pandas(tmp_path: Path) -> None:
    floats = [0.1 + 0.2, 1e-05, 1e16, 123456789012.5, -0.0, 5e-324, 1.7976931348623157e308, 2.0 / 3.0, 1e22, 100.0]
    flows = [
        {
            "flow": i,
            "name": ["plain", "a,comma", 'a "quote"', "new\nline", "ünïcode", "", " lead", "cr\r", "x", "y"][i],
            "f": floats[i],
            "int_then_none": None if i == 3 else i * 10**15,
            "int_and_float": i if i % 2 else i + 0.5,
            "maybe_str": None if i % 3 == 0 else f"s{i}",
            "maybe_bool": None if i == 4 else i % 2 == 0,
            "bool": i % 2 == 1,
            "never": None,
            "big": 2**63 - 1 - i,
            "drops": {"rtr.NRTE": i} if i % 2 else {},
            # Two traces with different columns: NaN where a trace has none.
            "tcp": {"variant": "newreno", "trace": {"t_s": [0.0]}} if i == 0 else {"trace": {"t_s": [1.0, 2.5], "cwnd_segs": [1, 2]}} if i == 1 else None,
        }
        for i in range(10)
    ]
    r = synthetic(flows)
    assert list(r.timeseries.columns) == ["flow", "name", "t_s", "cwnd_segs"] and r.timeseries["cwnd_segs"].isna().sum() == 1
    assert [k for _, k, _ in r._columns("flows")] == [
        "int64", "str", "float64", "float64", "float64", "str", "bool", "bool", "float64", "int64", "str", "float64", "int64"
    ]  # fmt: skip
    assert_same_as_pandas(r, tmp_path / "a")
    # One flow: a single-column row of "" is quoted by the csv module, for both writers.
    assert_same_as_pandas(synthetic([{"name": ""}]), tmp_path / "b")


def test_both_writers_share_the_column_layout(tmp_path: Path) -> None:
    # Columns first seen in a later row (a TCP flow after a CBR one), nested
    # objects flattened, drop keys only some rows have (0 elsewhere, sorted
    # after the fields), and empty tables: the DataFrame and the pandas-free
    # writer lay the table out alike, and write the same bytes.
    flows = [
        {"flow": 0, "name": "cbr", "drops": {"rtr.NRTE": 2}},
        {"flow": 1, "name": "tcp", "tcp": {"variant": "newreno", "rto_s": 0.2}, "drops": {}},
        {"flow": 2, "late": 7, "name": "no drops at all"},
    ]
    r = synthetic(flows)
    columns = ["flow", "name", "tcp_variant", "tcp_rto_s", "late", "drops_rtr.NRTE"]
    assert list(r.flows.columns) == [n for n, _, _ in r._columns("flows")] == columns
    assert list(r.flows["drops_rtr.NRTE"]) == [2, 0, 0]
    assert_same_as_pandas(r, tmp_path / "a")
    empty = synthetic([])
    assert list(empty.flows.columns) == [] and empty._columns("flows") == []
    assert_same_as_pandas(empty, tmp_path / "b")


def test_values_without_a_rule_are_written_by_pandas(tmp_path: Path) -> None:
    # An int beyond int64 (pandas: uint64), a nested object: pandas decides their dtype.
    for i, values in enumerate([[2**63, 1], [{"a": {"b": 1}}, {"a": {"b": 2}}]]):
        r = synthetic([{"flow": n, "x": v} for n, v in enumerate(values)])
        assert r._columns("flows") is None
        assert_same_as_pandas(r, tmp_path / str(i), expect_native=False)


def test_tables_are_byte_identical_across_writes(tmp_path: Path) -> None:
    r = manetlab.run(ROOT / "examples" / "default_study.toml", overrides={"duration_s": 3})
    r.write(tmp_path / "a")
    r.write(tmp_path / "b")
    for name in TABLES:
        for ext in ("csv", "parquet"):
            assert (tmp_path / "a" / f"{name}.{ext}").read_bytes() == (tmp_path / "b" / f"{name}.{ext}").read_bytes()


def test_manetlab_run_imports_neither_pandas_nor_pyarrow(tmp_path: Path) -> None:
    out = tmp_path / "r"
    code = (
        "import sys; from manetlab.cli import main; "
        f"rc = main(['run', {str(ROOT / 'benchmarks' / 'scenarios' / 'chain_4hop_tcp_aodv.toml')!r}, '--out', {str(out)!r}, '--set', 'duration_s=2']); "
        "heavy = sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules); "
        "print(heavy); sys.exit(rc or bool(heavy))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().endswith("[]")
    assert {f"{t}.{e}" for t in TABLES for e in ("csv", "parquet")} <= {q.name for q in out.iterdir()}


def test_write_parquet_rejects_bad_columns(tmp_path: Path) -> None:
    from manetlab import _core

    with pytest.raises(ValueError, match='column "a" \\(int64\\)'):
        _core.write_parquet(str(tmp_path / "x.parquet"), [("a", "int64", [1, None])])
    with pytest.raises(ValueError, match="kind"):
        _core.write_parquet(str(tmp_path / "x.parquet"), [("a", "decimal", [1])])
    with pytest.raises(ValueError, match="column \"b\" has 2 values, the first column 1"):
        _core.write_parquet(str(tmp_path / "x.parquet"), [("a", "int64", [1]), ("b", "int64", [1, 2])])
    with pytest.raises(OSError):
        _core.write_parquet(str(tmp_path / "no" / "such" / "x.parquet"), [("a", "int64", [1])])
