"""Same scenario + same seed => byte-identical results, in one process, across
processes and across threads; another seed => different results. The example
has CBR jitter and a lossy link, so the seed really matters."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import manetlab
from _util import EXAMPLE, run_cli

OUTPUTS = ["summary.json", "flows.csv", "nodes.csv", "links.csv"]


def test_two_runs_in_process_are_identical() -> None:
    a, b = manetlab.run(EXAMPLE), manetlab.run(EXAMPLE)
    assert a.summary_json == b.summary_json
    assert a.flows.equals(b.flows) and a.nodes.equals(b.nodes) and a.links.equals(b.links)


def test_two_processes_write_identical_bytes(tmp_path: Path) -> None:
    for d in ("a", "b"):
        p = run_cli("run", EXAMPLE, "--out", tmp_path / d)
        assert p.returncode == 0, p.stderr
    for name in OUTPUTS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    # ...and they are the bytes the in-process API returns.
    assert (tmp_path / "a" / "summary.json").read_bytes() == manetlab.run(EXAMPLE).summary_json.encode()


def test_threads_do_not_disturb_each_other() -> None:
    # The GIL is released during a run, so these really run concurrently.
    with ThreadPoolExecutor(max_workers=4) as pool:
        texts = list(pool.map(lambda seed: manetlab.run(EXAMPLE, seed=seed).summary_json, [1, 2, 1, 2]))
    assert texts[0] == texts[2] == manetlab.run(EXAMPLE).summary_json
    assert texts[1] == texts[3] != texts[0]


def test_another_seed_gives_other_results(tmp_path: Path) -> None:
    for d, seed in (("s1", "1"), ("s2", "2")):
        p = run_cli("run", EXAMPLE, "--seed", seed, "--out", tmp_path / d)
        assert p.returncode == 0, p.stderr
    one = json.loads((tmp_path / "s1" / "summary.json").read_text())
    two = json.loads((tmp_path / "s2" / "summary.json").read_text())
    assert (one["seed"], two["seed"]) == (1, 2)
    # Not just the recorded seed: the traffic itself differs.
    assert one["flows"] != two["flows"]
    assert one["links"] != two["links"]


def test_seed_option_equals_seed_in_the_file() -> None:
    assert manetlab.run(EXAMPLE, seed=1).summary_json == manetlab.run(EXAMPLE).summary_json
    s = manetlab.load_scenario(EXAMPLE, {"seed": 5})
    assert manetlab.run(s).summary_json == manetlab.run(EXAMPLE, seed=5).summary_json


def test_every_seed_differs() -> None:
    flows = [json.dumps(manetlab.run(EXAMPLE, seed=s).summary["flows"]) for s in range(1, 6)]
    assert len(set(flows)) == 5
