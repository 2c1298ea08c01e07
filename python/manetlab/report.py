"""A self-contained HTML report of one result directory: the scenario, the summary
tables, and every figure that can be drawn, embedded as SVG images (no external
files, so the page can be mailed or archived alone).

A result folder may come from anyone: every value read from it is escaped, the
figures are images (an SVG there cannot run script), and the page's
Content-Security-Policy runs no script at all (`manetlab._html`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from manetlab import _html, safeio
from manetlab.plots import KINDS, PlotError, load_summary, plot
from manetlab.results import _table_layout

__all__ = ["report"]

_CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:12px;margin-bottom:1.5em}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}figure{margin:1em 0}figcaption{font-weight:bold}img{max-width:100%;height:auto}"""


def report(result_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Path:
    """Write ``report.html`` (or `out`) for the run in `result_dir`; returns its path."""
    rdir = Path(result_dir)
    summary = load_summary(rdir)
    # The folder may come from someone else: its files are read only if they are
    # regular files themselves (safeio), the page written whole, never through a
    # link, and every value in it escaped (_html).
    scenario_path = rdir / "scenario.json"
    try:
        scenario = json.dumps(json.loads(safeio.read_text(scenario_path)), indent=2)
    except FileNotFoundError:
        scenario = "(scenario.json not in this directory)"
    except safeio.UnsafePathError as e:
        raise PlotError(str(e)) from None
    figures = []
    fig_dir = safeio.ensure_dir(rdir / "figures")
    for kind in KINDS:
        try:
            _, svg = plot(rdir, kind, fig_dir)
        except PlotError:
            continue  # e.g. no traced TCP flow: no cwnd/seq figure
        figures.append(f"<figure><figcaption>{kind}</figcaption>{_html.svg_img(svg.read_text(encoding='utf-8'), kind)}</figure>")
    title = _html.text(summary.get("scenario_name") or rdir.name)
    tables = []
    for name in ("flows", "nodes", "links"):
        if summary.get(name):
            columns, data = _table_layout(summary[name])
            tables.append(f"<h2>{name}</h2>" + _html.table(columns, ([data[c][i] for c in columns] for i in range(len(summary[name])))))
    # The animation (`manetlab animate`, a separate page: it can be megabytes).
    anim = rdir / "animate.html"
    path = Path(out) if out is not None else rdir / "report.html"
    if safeio.is_regular_file(anim):
        href = _html.href(Path(os.path.relpath(anim.resolve(), path.resolve().parent)).as_posix())
        animation = f'<p><a href="{href}">animation of this run</a> ({anim.stat().st_size / 1e6:.1f} MB, opens offline in any browser)</p>'
    else:
        animation = f"<p>No animation yet: <code>manetlab animate {_html.text(rdir)}</code> writes animate.html here, and this page links it.</p>"
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{_html.csp_meta(styles=[_CSS], images=True)}
<title>manetlab: {title}</title>
<style>{_CSS}</style></head>
<body><h1>{title}</h1>
<p>seed {_html.number(summary.get('seed'), 'd')}, {_html.number(summary.get('duration_s'))} s simulated, {_html.number(summary.get('events'), ',')} events, manetlab {_html.text(summary.get('manetlab_version'))}</p>
<h2>animation</h2>{animation}
{''.join(tables)}
<h2>figures</h2>{''.join(figures) or '<p>(none)</p>'}
<h2>scenario</h2><pre>{_html.text(scenario)}</pre>
</body></html>
"""
    safeio.write_text(path, page)
    return path
