"""`study results --html` (`Study.write_html`): a study's tables and figures on one
self-contained page, as safe as a run's report.html (docs/security.md): names from
the study file escaped, figures as data: SVG images, the CSP of every page; and a
name never becomes a path or TeX in its figures."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from manetlab.study import Study
from manetlab.study.study import figure_stem
from _util import ROOT, run_cli
from test_security_html import (
    DOC_READY,
    P_AMP,
    P_ATTR,
    P_COMMENT,
    P_END,
    P_IMG,
    P_QUOTE,
    REPORT_TAGS,
    _not_pwned,
    _open,
    _screenshot,
    check_structure,
    needs_browser,
)

STUDY_NAME = f"study {P_COMMENT} {P_IMG} {P_AMP}"
DESCRIPTION = f"{P_END} {P_QUOTE}"
FLOW_NAMES = [f"a {P_ATTR}", f"b {P_END}"]  # the values of an axis (flows[0].name)
DERIVED_NAME = f"../../{P_END} $\\frac{{$"  # a path and TeX, if a name were either
METRICS = ["flow0.throughput_kbps", "flow0.retransmissions"]


def hostile_study() -> dict[str, Any]:
    return {
        "name": STUDY_NAME,
        "description": DESCRIPTION,
        "scenario": {
            "duration_s": 2.0,
            "nodes": {"count": 3, "placement": {"kind": "chain", "spacing_m": 200.0}},
            "radio": {},
            "flows": [{"kind": "ftp", "src": 0, "dst": 2}],
        },
        "seeds": "1-2",
        "metrics": METRICS,
        "grid": {"flows[0].name": FLOW_NAMES, "flows[0].transport": ["newreno", "vegas"]},
        "derived": [{"name": DERIVED_NAME, "metric": METRICS[0], "axis": "flows[0].transport", "new": "vegas", "base": "newreno"}],
    }


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    s = Study(hostile_study(), tmp_path_factory.mktemp("study") / "store")
    s.run(jobs=1, progress=False)
    return s


@pytest.fixture(scope="module")
def page(study: Study) -> Path:
    return study.write_html()


def test_page_is_well_formed_escaped_and_has_the_csp(study: Study, page: Path) -> None:
    p = check_structure(page.read_text(encoding="utf-8"), REPORT_TAGS, scripts=0)
    text = p.all_text()
    assert f"manetlab study: {STUDY_NAME}" in text and DESCRIPTION in text
    assert all(name in text for name in FLOW_NAMES)
    assert DERIVED_NAME in text
    # One figure per metric and one per derived quantity, all embedded.
    assert len(p.attrs("img")) == len(METRICS) + 1
    assert sorted(a["alt"] or "" for a in p.attrs("img")) == sorted([*METRICS, figure_stem(DERIVED_NAME)])


def test_tables_hold_each_cells_mean_and_interval(study: Study, page: Path) -> None:
    p = check_structure(page.read_text(encoding="utf-8"), REPORT_TAGS, scripts=0)
    text = p.all_text()
    summ = study.summary(METRICS)
    assert len(summ) == 4 * len(METRICS) and (summ["n"] == 2).all()
    for _, r in summ.iterrows():
        assert not math.isnan(r["mean"])
        assert f"{r['mean']:.4g} ± {r['sd']:.4g}" in text
        assert f"[{r['ci_low']:.4g}, {r['ci_high']:.4g}]" in text
    assert "4 cells × 2 seeds = 8 runs: 8 ok, 0 failed, 0 missing" in text


def test_figures_stay_in_their_folder(study: Study, page: Path) -> None:
    figures = page.parent / "figures"
    names = sorted(q.name for q in figures.iterdir())
    assert names == sorted(f"{stem}.{ext}" for stem in [*METRICS, figure_stem(DERIVED_NAME)] for ext in ("png", "svg"))
    assert re.fullmatch(r"[A-Za-z0-9._-]+", figure_stem(DERIVED_NAME)) and not figure_stem(DERIVED_NAME).startswith(".")
    # Nothing was written beside the study's own folder.
    assert sorted(q.name for q in page.parent.parent.iterdir()) == [page.parent.name]
    assert figure_stem("flow0.pdr") == "flow0.pdr" and figure_stem("a/b") != figure_stem("a_b")


def test_cli_html(tmp_path: Path) -> None:
    shutil.copyfile(ROOT / "examples" / "tcp_chain_80211.toml", tmp_path / "chain.toml")
    (tmp_path / "st.toml").write_text(
        'name = "chain"\nscenario = "chain.toml"\nseeds = "1-2"\nmetrics = ["flow0.throughput_kbps"]\n'
        '[set]\nduration_s = 2\n[grid]\n"flows[0].transport" = ["newreno", "vegas"]\n',
        encoding="utf-8",
    )
    assert run_cli("study", "run", "st.toml", "--jobs", "1", cwd=tmp_path).returncode == 0
    r = run_cli("study", "results", "st.toml", "--html", "--format", "csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "wrote results/st/report.html"
    p = check_structure((tmp_path / "results" / "st" / "report.html").read_text(encoding="utf-8"), REPORT_TAGS, scripts=0)
    assert len(p.attrs("img")) == 1 and "flow0.throughput_kbps" in p.all_text()


@needs_browser
def test_page_in_browser(page: Path, tmp_path: Path) -> None:
    b = _open(page, ready=DOC_READY)
    try:
        _not_pwned(b)
        assert b.js("return document.querySelector('h1').textContent") == STUDY_NAME
        sizes = b.js("return [...document.images].map(function (i) { return [i.complete, i.naturalWidth]; })")
        assert len(sizes) == len(METRICS) + 1 and all(c and w > 100 for c, w in sizes), sizes
        _screenshot(b, tmp_path / "study-hostile.png")
        assert b.csp_violations() == []
        assert b.console_errors() == []
    finally:
        b.close()
