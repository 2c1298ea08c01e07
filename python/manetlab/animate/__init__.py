"""``manetlab animate``: one self-contained HTML page that plays a run back in a
browser (nodes moving, transmissions, drops, routing events, faults, per-flow
charts), an in-browser NAM/NetAnim. See docs/animate.md.

    from manetlab.animate import animate
    info = animate("results/run", out="run.html", from_s=10, to_s=40)

The page is built from the run's ``movement.tcl`` and ``trace.tr``
(``[outputs] movement = true``, ``trace = "old"`` or ``"new"``) and its
``summary.json``. A result folder without them (e.g. ``make run``'s) is re-run
from its ``scenario.json`` with those outputs switched on: runs are
deterministic, so it is the same run, and the re-run's flow results are checked
against the folder's before anything is drawn.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from manetlab import _html
from manetlab.animate.data import AnimationData, build

__all__ = ["animate", "animate_outputs", "Animation", "ANIMATE_OUTPUTS", "AnimateError"]

#: The ``[outputs]`` an animation reads (``manetlab run --animate`` switches them on).
ANIMATE_OUTPUTS: dict[str, Any] = {
    "outputs.movement": True,
    "outputs.trace_levels": ["agt", "rtr", "ifq", "mac"],
    "outputs.series": True,
}


_SIZE = "\x00size\x00"


class AnimateError(ValueError):
    """A result folder that cannot be animated (one line saying why)."""


@dataclass
class Animation:
    path: Path
    bytes: int
    data: AnimationData
    rerun: bool

    def describe(self) -> str:
        s = self.data.stats
        d = self.data.doc
        kept = s["transmissions_kept"]
        thin = "" if kept == s["transmissions"] else f" (thinned from {s['transmissions']:,}; use --from/--to for all)"
        return (
            f"wrote {self.path}: {self.bytes / 1e6:.2f} MB, {d['nodes']} nodes, "
            f"{d['from_s']:g}–{d['to_s']:g} s, {kept:,} transmissions ({s['transmission_source']} level){thin}, "
            f"{s['drops']:,} drops + {s['collisions_kept']:,} of {s['collisions']:,} collisions, {s['route_events']:,} routing events"
        )


def animate_outputs(scenario_normalized: dict[str, Any]) -> dict[str, Any]:
    """Overrides that add what an animation needs to a scenario's own ``[outputs]``."""
    ov = dict(ANIMATE_OUTPUTS)
    outputs = scenario_normalized.get("outputs") or {}
    if not outputs.get("trace"):
        ov["outputs.trace"] = "old"
    levels = set(outputs.get("trace_levels") or []) | set(ANIMATE_OUTPUTS["outputs.trace_levels"])
    ov["outputs.trace_levels"] = sorted(levels, key=["agt", "rtr", "ifq", "mac"].index)
    return ov


def _needs_rerun(rdir: Path) -> bool:
    return not ((rdir / "movement.tcl").is_file() and (rdir / "trace.tr").is_file())


def _rerun(rdir: Path, tmp: Path) -> Path:
    """Run the folder's scenario.json again with the animation outputs into `tmp`,
    and check that it is the same run (equal flow results)."""
    from manetlab.results import run
    from manetlab.scenario import Scenario

    scen = rdir / "scenario.json"
    if not scen.is_file():
        raise AnimateError(f"{rdir}: no movement.tcl/trace.tr and no scenario.json to re-run (run with --animate, or [outputs] movement = true and trace = \"old\")")
    from manetlab import safeio

    stored = json.loads(safeio.read_text(rdir / "summary.json"))
    if stored.get("partial"):
        raise AnimateError(f"{rdir}: partial results (stopped run) without movement.tcl/trace.tr cannot be re-run identically")
    s = Scenario(json.loads(safeio.read_text(scen)))
    out = tmp / "run"
    print(f"{rdir}: no movement.tcl/trace.tr; re-running its scenario.json (seed {s.seed}) with them on", file=sys.stderr)
    r = run(s.with_overrides(animate_outputs(s.normalized)), out=out)
    keys = ("tx_packets", "rx_packets", "dropped_packets", "delay_mean_s")
    if [[f.get(k) for k in keys] for f in r.summary["flows"]] != [[f.get(k) for k in keys] for f in stored["flows"]]:
        raise AnimateError(f"{rdir}: re-running scenario.json gave different flow results (written by another manetlab version?); run it again with --animate")
    return out


def _page(doc: dict[str, Any]) -> str:
    pkg = resources.files("manetlab.animate")
    css = pkg.joinpath("page.css").read_text(encoding="utf-8")
    js = pkg.joinpath("page.js").read_text(encoding="utf-8")
    # Every string in `doc` comes from the result folder (names, trace fields): the
    # JSON cannot end its <script> element, and page.js puts data into the page as
    # text only (DOM calls, never innerHTML); the CSP runs page.js alone, by its hash.
    data = _html.script_json(doc)
    title = _html.text(f"{doc['scenario_name']} (seed {doc['seed']})")
    st = doc["stats"]
    meta = _html.text(
        f"{doc['nodes']} nodes, {doc['from_s']:g}–{doc['to_s']:g} s of {doc['duration_s']:g} s, routing {doc['routing'] or 'static'}, "
        f"{st['transmissions_kept']:,} transmissions ({st['transmission_source']} level"
        + ("" if st["transmissions_kept"] == st["transmissions"] else f", thinned from {st['transmissions']:,}")
        + f"), {st['drops']:,} drops, {st['collisions']:,} collisions"
        + ("" if st["collisions_kept"] == st["collisions"] else f" ({st['collisions_kept']:,} shown)")
        + "; this page "
    ) + _SIZE + _html.text(  # the one NUL on the page: text() shows any other as U+FFFD
        f"; manetlab {doc['manetlab_version']}"
        + (" — PARTIAL run" if doc["partial"] else "")
        + ("; wired nodes drawn on a circle (their positions play no part)" if doc["layout"] == "circle" else "")
    )
    # The CSP forbids every load from elsewhere: the page is its own world.
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{_html.csp_meta(scripts=[js], styles=[css])}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>manetlab animate: {title}</title>
<style>{css}</style></head>
<body>
<header><h1>manetlab animate: {title}</h1><div class="meta">{meta}</div></header>
<div id="controls">
<button id="play" type="button">▶ play</button>
<label>speed <input id="speed" type="range"> <span id="speedv"></span></label>
<span id="time"></span>
<input id="scrub" type="range" min="0" max="10000" step="1" value="0" aria-label="time">
<button id="next" type="button">next ▸</button>
<select id="nextkind" aria-label="next event kind"><option value="any">any event</option><option value="drop">drop</option><option value="route">routing event</option><option value="fault">fault</option><option value="tx">transmission</option></select>
<label><input id="rng" type="checkbox"> reception range</label>
<label><input id="cs" type="checkbox"> carrier-sense range</label>
<label><input id="col" type="checkbox"> collisions (COL)</label>
</div>
<div id="flows"></div>
<div id="main"><div id="mapwrap"><canvas id="map"></canvas></div><div id="side"></div></div>
<div id="legend"><span>line colour = flow (grey: routing control)</span><span>━ DATA</span><span>╍ RTS</span><span>┈ CTS</span><span>· ACK</span><span>ring: broadcast</span><span>○ grey growing: route discovery (RREQ)</span><span>○ gold: RERR</span><span class="bad">╌ break: link the MAC gave up on</span><span class="bad">✕ CODE: drop (ns-2 reason)</span><span>hollow node: switched off</span><span>keys: space play/pause, n next event</span></div>
<div id="charts"></div>
<script type="application/json" id="manetlab-data">{data}</script>
<script>{js}</script>
</body></html>
"""


def animate(
    result_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    from_s: float | None = None,
    to_s: float | None = None,
    *,
    max_transmissions: int = 400_000,
) -> Animation:
    """Write the animation page of the run in `result_dir` to `out` (default
    ``RESULT_DIR/animate.html``) for the window [from_s, to_s] (default: all)."""
    rdir = Path(result_dir)
    if not (rdir / "summary.json").is_file():
        subs = sorted(str(p.parent) for p in rdir.glob("*/summary.json")) if rdir.is_dir() else []
        hint = f" (a comparison? animate one of its runs: {', '.join(subs)})" if subs else ""
        raise AnimateError(f"{rdir}: no summary.json: not a result folder{hint}")
    path = Path(out) if out is not None else rdir / "animate.html"
    tmp: Path | None = None
    try:
        src = rdir
        if _needs_rerun(rdir):
            tmp = Path(tempfile.mkdtemp(prefix="manetlab-animate-"))
            src = _rerun(rdir, tmp)
        try:
            data = build(src, from_s, to_s, max_transmissions=max_transmissions)
        except ValueError as e:
            raise AnimateError(str(e)) from None
        page = _page(data.doc)
        # The header states the file's own size (to 0.1 MB; the digits barely change it).
        page = page.replace(_SIZE, f"{len(page.encode('utf-8')) / 1e6:.1f} MB", 1)
        from manetlab import safeio

        path.parent.mkdir(parents=True, exist_ok=True)
        safeio.write_text(path, page)  # whole, never through a planted link
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return Animation(path, path.stat().st_size, data, tmp is not None)
