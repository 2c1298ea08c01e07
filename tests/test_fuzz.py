"""Fuzzing the Python front (hypothesis): scenario dicts, scenario files (TOML and
JSON text) through the CLI, and study specs. Whatever the input, the only outcomes
allowed are success or a ScenarioError (CLI: exit status 2 and one line on stderr);
any other exception is a failure. The Rust targets (crates/manetlab-core/tests/fuzz.rs)
cover the core and the ns-2 file readers.

`make test` runs MANETLAB_FUZZ_EXAMPLES (default 60) inputs per target, derandomised
so the suite stays reproducible; docs/validation/fuzz.md records longer runs.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import io
import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import manetlab
from manetlab.cli import main
from manetlab.study.spec import load_study
from _util import ROOT

EXAMPLES = int(os.environ.get("MANETLAB_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("MANETLAB_FUZZ_RANDOM") is None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

SCENARIO_FILES = [
    ROOT / "examples" / "cbr_chain.toml",
    ROOT / "examples" / "rwp_20_nodes.toml",
    ROOT / "examples" / "tcp_chain_80211.toml",
    ROOT / "examples" / "default_study.toml",
    ROOT / "tests" / "fixtures" / "robustness" / "panic_chain_spacing_overflow.toml",
    ROOT / "tests" / "fixtures" / "robustness" / "mem_rwp_huge_speed.toml",
]
CORPUS = [tomllib.loads(p.read_text()) for p in SCENARIO_FILES]
CHAIN = CORPUS[0]
STUDY = {
    "name": "fuzz",
    "scenario": CHAIN,
    "seeds": "1-2",
    "metrics": ["flow0.throughput_kbps", "total.pdr"],
    "grid": {"flows[0].rate_kbps": [100, 200], "links[0].delay_ms": [5, 10]},
    "derived": [{"name": "g", "kind": "difference", "metric": "flow0.throughput_kbps", "axis": "links[0].delay_ms", "new": 10, "base": 5}],
}


def _nest(depth: int) -> Any:
    v: Any = 1
    for _ in range(depth):
        v = [v]
    return v


#: Values that have broken loaders before: extreme and huge numbers, nan/inf, wrong
#: types (tuples, bytes, sets, dates), deep nesting, enum-like strings.
LEAF = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**32, 2**64, 10**400, 1_000_000]),
    st.builds(lambda: 10**5000),  # longer than Python converts to text; built lazily so reprs stay short
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 5e-324, 1e-308, 0.0, -0.0, 1e7, 1e9]),
    st.booleans(),
    st.none(),
    st.text(max_size=12),
    st.sampled_from(["aodv", "dsr", "dsdv", "static", "chain", "grid", "uniform", "ns2_file", "random_waypoint", "cbr", "ftp", "vegas", "old", "new"]),
    st.binary(max_size=4),
    st.dates(),
    st.just(datetime.time(1, 2)),
    st.integers(1, 400).map(_nest),
    st.frozensets(st.integers(0, 3), max_size=2),
)
VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)
KEY = st.one_of(st.text(max_size=10), st.sampled_from(["traffic", "ns2_file", "placement", "count", "max_speed_mps", "rate_kbps", "outputs", "faults", "seed"]), st.integers(0, 3))


def _paths(v: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(v, dict):
        for k, c in v.items():
            out += _paths(c, (*prefix, k))
    elif isinstance(v, list):
        for i, c in enumerate(v):
            out += _paths(c, (*prefix, i))
    return out


def _mutate(data: st.DataObject, doc: Any, n: int) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(n):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        op = data.draw(st.sampled_from(["replace", "replace", "replace", "delete", "add"]))
        if not path:
            if op == "add" and isinstance(doc, dict):
                doc[data.draw(KEY)] = data.draw(VALUE)
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if op == "replace":
            parent[last] = data.draw(VALUE)
        elif op == "delete":
            del parent[last]
        elif isinstance(parent[last], dict):
            parent[last][data.draw(KEY)] = data.draw(VALUE)
    return doc


def _one_line_error(e: Exception) -> None:
    assert isinstance(e, manetlab.ScenarioError), repr(e)
    assert str(e).strip(), "an error says what is wrong"


@FUZZ
@given(st.data())
def test_fuzz_scenario_dicts(data: st.DataObject) -> None:
    doc = _mutate(data, data.draw(st.sampled_from(CORPUS)), data.draw(st.integers(1, 4)))
    try:
        s = manetlab.Scenario(doc)
    except manetlab.ScenarioError as e:
        _one_line_error(e)
        event("rejected")
        return
    event("accepted")
    # Valid: it also runs (cut to at most 1 s of simulated time, small node counts).
    if s.normalized["nodes"]["count"] <= 100:
        try:
            short = s.with_overrides({"duration_s": min(s.duration_s, 1.0)})
        except manetlab.ScenarioError:
            return  # e.g. a flow that starts after 1 s
        with tempfile.TemporaryDirectory() as out:
            manetlab.run(short, out=Path(out) / "r")
        event("ran")


def _cli(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(list(args))
    return rc, err.getvalue()


@FUZZ
@given(st.data())
def test_fuzz_scenario_files_through_the_cli(data: st.DataObject) -> None:
    src = data.draw(st.sampled_from(SCENARIO_FILES))
    as_json = data.draw(st.booleans())
    text = json.dumps(tomllib.loads(src.read_text()), indent=1) if as_json else src.read_text()
    chars = list(text)
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(chars)))
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        c = data.draw(st.one_of(st.characters(), st.sampled_from(list("[]{}\"'=,.#\n0123456789e-+"))))
        if op == "insert":
            chars.insert(i, c)
        elif i < len(chars):
            if op == "delete":
                del chars[i]
            else:
                chars[i] = c
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / ("s.json" if as_json else "s.toml")
        p.write_text("".join(chars), encoding="utf-8", errors="surrogatepass")
        rc, err = _cli("validate", str(p))
    assert rc in (0, 2), err
    event("accepted" if rc == 0 else "rejected")
    if rc == 2:
        assert err.startswith("error: ") and err.count("\n") == 1, err


@FUZZ
@given(st.data())
def test_fuzz_studies(data: st.DataObject) -> None:
    # (The unmutated STUDY loads: test_found_study_sizes_are_bounded's base case.)
    doc = _mutate(data, STUDY, data.draw(st.integers(1, 3)))
    with tempfile.TemporaryDirectory() as d:
        try:
            load_study(doc, base_dir=d)
            event("accepted")
        except manetlab.ScenarioError as e:
            _one_line_error(e)
            event("rejected")


# --- what fuzzing found (each was a traceback, a misleading message or unbounded memory) ---


def test_found_integers_beyond_64_bits_name_the_key() -> None:
    for v, shown in ((2**64, "18446744073709551616"), (10**400, "an integer of 401 digits"), (10**5000, "an integer of about 5000 digits")):
        try:
            manetlab.Scenario({"duration_s": 1, "nodes": {"count": v}})
        except manetlab.ScenarioError as e:
            assert str(e) == f"nodes.count: {shown} is out of range (allowed: integers from -2^63 to 2^64-1)", e
        else:
            raise AssertionError("accepted")


def test_found_integers_python_cannot_read_are_one_line_errors(tmp_path: Path) -> None:
    big = "9" * 5000
    for name, text in (("s.toml", f"duration_s = 1\n[nodes]\ncount = {big}\n"), ("s.json", f'{{"duration_s": 1, "nodes": {{"count": {big}}}}}')):
        (tmp_path / name).write_text(text)
        rc, err = _cli("validate", str(tmp_path / name))
        assert (rc, err) == (2, f"error: (file): {tmp_path / name}: an integer of 5000 digits is out of range (allowed: integers from -2^63 to 2^64-1)\n")
    rc, err = _cli("validate", str(SCENARIO_FILES[0]), "--set", f"nodes.count={big}")
    assert (rc, err) == (2, "error: (--set): an integer of 5000 digits is out of range (allowed: integers from -2^63 to 2^64-1)\n")


def test_found_study_sizes_are_bounded() -> None:
    assert len(load_study(STUDY).cells) == 4  # the fuzzer's base study is valid
    cases = [
        ({"seeds": "1-10000000000"}, "seeds: '1-10000000000' makes more than 100000 seeds (allowed: at most 100000)"),
        ({"seeds": "5,1-99999,7-8"}, "seeds: '7-8' makes more than 100000 seeds (allowed: at most 100000)"),
        ({"grid": {"flows[0].rate_kbps": list(range(1, 201)), "links[0].delay_ms": list(range(1, 201))}},
         "grid: 40000 cells (the product of the axes' lengths) is out of range (allowed: at most 10000)"),
        ({"grid": {"flows[0].rate_kbps": list(range(1, 21))}, "seeds": "1-100000"},
         "seeds: 20 cells x 100000 seeds = 2000000 runs is out of range (allowed: at most 1000000 runs)"),
    ]
    for extra, msg in cases:
        doc = {"scenario": CHAIN, **extra}
        try:
            load_study(doc)
        except manetlab.ScenarioError as e:
            assert str(e) == msg, e
        else:
            raise AssertionError(extra)


def test_found_a_nul_byte_in_a_file_name_is_one_line(tmp_path: Path) -> None:
    for doc in ({"scenario": "a\x00b"}, {"scenario": {**CHAIN, "mobility": {"model": "ns2_file", "path": "m\x00"}}}):
        try:
            load_study(doc, base_dir=tmp_path)
        except manetlab.ScenarioError as e:
            assert "NUL" in str(e) or "nul byte" in str(e), e
        else:
            raise AssertionError(doc)
    rc, err = _cli("validate", "x\x00.toml")
    assert rc == 2 and err.startswith("error: (file): ") and "NUL" in err, err
