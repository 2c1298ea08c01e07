"""The animation page in a real headless browser (Debian's chromium + chromedriver,
driven by Selenium): it plays, nodes are where the movement file puts them, the
known drop of tests/test_animate.py appears at its node and time, clicking a node
opens its panel, nothing is fetched from anywhere and nothing is logged as an error.

Skipped, with the reason, where there is no chromium/chromedriver (the CI machine
has only Python and Rust); tests/test_animate.py checks the embedded data anyway.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

import manetlab
from manetlab.animate import animate
from manetlab.animate.browser import chromium_paths

selenium = pytest.importorskip("selenium", reason="selenium not installed (pip install -e '.[dev]')")
if chromium_paths() is None:
    pytest.skip("no chromium + chromedriver on PATH (apt-get install chromium chromium-driver)", allow_module_level=True)

from manetlab.animate.browser import open_page  # noqa: E402
from test_animate import LINK_BREAK_S, SCENARIO, trace_lines  # noqa: E402


@pytest.fixture(scope="module")
def page_and_run(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("animate-browser") / "run"
    manetlab.run(SCENARIO, out=out)
    a = animate(out)
    page = open_page(a.path)
    yield page, out, a
    page.close()


def test_page_plays(page_and_run):
    page, _, a = page_and_run
    assert page.load_s < 10  # opening is quick (the 100-node benchmark is in docs/animate.md)
    page.js("manetlab.setSpeed(5); manetlab.play()")
    time.sleep(1.0)
    s = page.state()
    page.js("manetlab.pause()")
    assert s["playing"] and s["t"] > 0.5 and s["frames"] > 5
    assert len(s["positions"]) == 4


def test_nodes_are_where_the_movement_file_puts_them(page_and_run):
    page, out, a = page_and_run
    lines = trace_lines(out / "trace.tr")
    # Three moments with nodes in motion: node 3 going north (t≈3), node 2 leaving
    # (t≈5.5), node 3 heading west after its second setdest (t≈6.5); the reference is
    # the position the core printed on a trace line at that moment.
    for target, node in ((3.0, 3), (5.5, 2), (6.5, 3)):
        ev, t, n, x, y, _, _ = min((ln for ln in lines if ln[2] == node), key=lambda ln: abs(ln[1] - target))
        page.js("manetlab.seek(arguments[0])", t)
        s = page.state()
        assert s["t"] == t
        assert s["positions"][node] == pytest.approx([x, y], abs=0.01)
        for i in range(4):
            assert s["positions"][i] == pytest.approx(list(a.data.position_at(i, t)), abs=0.01)
    # Node 3 really moved between those moments (the check is not of a still picture).
    assert page.js("return manetlab.position(3, 3.0)") != page.js("return manetlab.position(3, 6.5)")


def test_known_drop_appears_at_its_node_and_time(page_and_run):
    page, out, a = page_and_run
    t_drop, node = next((d[0], d[1]) for d in a.data.drops if d[4] == 0)
    assert node == 1 and LINK_BREAK_S < t_drop < LINK_BREAK_S + 0.2
    # Just before: not shown. At its time: shown at node 1 with ns-2's code.
    page.js("manetlab.seek(arguments[0])", t_drop - 0.001)
    assert not [d for d in page.state()["drops"] if d["node"] == 1 and d["reason"] == "CBK"]
    # "next drop" from 5 s lands on it.
    page.js("manetlab.seek(5.0)")
    assert page.js("return manetlab.next('drop')") == pytest.approx(t_drop, abs=1e-6)
    s = page.state()
    assert s["t"] == pytest.approx(t_drop, abs=1e-6)
    shown = [d for d in s["drops"] if d["node"] == 1 and d["reason"] == "CBK" and d["flow"] == 0]
    assert shown and shown[0]["t"] == pytest.approx(t_drop, abs=1e-6)
    assert any(e["kind"] == "break" and e["node"] == 1 and e["peer"] == 2 for e in s["route"])


def test_click_a_node_and_filter_flows(page_and_run):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    page, _, _ = page_and_run
    page.js("manetlab.seek(2.0)")
    canvas = page.driver.find_element(By.ID, "map")
    x, y = page.js("return manetlab.pixel(1)")
    w, h = canvas.size["width"], canvas.size["height"]
    ActionChains(page.driver).move_to_element_with_offset(canvas, int(x - w / 2), int(y - h / 2)).click().perform()
    panel = page.state()["panel"]
    assert panel["node"] == 1
    assert sorted(panel["neighbours"]) == [0, 2, 3]  # all within 250 m at 2 s
    assert {"dst": 2, "nh": 2} in [{"dst": r["dst"], "nh": r["nh"]} for r in panel["routes"]]
    assert panel["queue"] is not None
    # Unticking flow 0 hides its drops.
    page.driver.find_element(By.CSS_SELECTOR, 'input[data-flow="0"]').click()
    page.js("manetlab.seek(5.2)")
    assert all(d["flow"] != 0 for d in page.state()["drops"])
    page.driver.find_element(By.CSS_SELECTOR, 'input[data-flow="0"]').click()
    assert 0 in page.state()["flowsOn"]


def test_switched_off_node_and_failed_link(page_and_run):
    page, _, _ = page_and_run
    page.js("manetlab.seek(7.5); manetlab.selectNode(1)")
    s = page.state()
    assert s["off"] == [3] and s["down"] == [] and 3 not in s["panel"]["neighbours"]
    page.js("manetlab.seek(9.0)")
    s = page.state()
    assert s["off"] == [] and s["down"] == ["0-1"] and 0 not in s["panel"]["neighbours"]
    page.js("manetlab.seek(9.3)")
    assert page.state()["down"] == [] and 0 in page.state()["panel"]["neighbours"]
    page.js("manetlab.selectNode(-1)")


def test_offline_no_errors_and_screenshot(page_and_run, tmp_path):
    page, _, _ = page_and_run
    page.js("manetlab.seek(5.1); manetlab.selectNode(1); document.getElementById('rng').click()")
    shot = page.screenshot(tmp_path / "animate.png")
    assert shot.stat().st_size > 10_000
    if os.environ.get("MANETLAB_SCREENSHOT_DIR"):
        shutil.copy(shot, Path(os.environ["MANETLAB_SCREENSHOT_DIR"]) / "animate-test.png")
    assert page.console_errors() == []
    assert page.csp_violations() == []  # its CSP admits exactly its own script and style
    # The only request is the page file itself; no script, font or style from anywhere.
    reqs = page.requests()
    assert reqs and all(u.startswith("file://") and u.endswith("/animate.html") for u in reqs), reqs
    assert page.js("return performance.getEntriesByType('resource').length") == 0
