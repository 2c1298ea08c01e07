"""Building manetlab's HTML pages safely (report, comparison, reproduction, animation).

Everything on a page that comes from a result folder, a scenario or a summary is
untrusted data (docs/security.md): it goes in through `text` (HTML-escaped for text
and attribute values alike), `script_json` (JSON that cannot end the ``<script>``
element it sits in) or `svg_img` (a figure as an ``<img>``, where an SVG cannot run
script). Every page carries `csp_meta`: a Content-Security-Policy that lets run only
the page's own inline script and style (by their SHA-256), loads nothing from
anywhere, and so also stops anything that slipped through from running.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote

__all__ = ["text", "script_json", "csp_meta", "svg_img", "href", "table", "number"]


# Characters HTML text may not hold (C0/C1 controls but tab, newline and carriage
# return; DEL; lone surrogates, which a tampered JSON file can hold and UTF-8 cannot).
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def text(value: Any) -> str:
    """`value` as HTML text or a quoted attribute value: ``& < > " '`` escaped, and
    characters HTML text cannot hold shown as U+FFFD."""
    return _NOT_TEXT.sub("\ufffd", html.escape(str(value), quote=True))


# JSON inside <script type="application/json">: the HTML tokenizer ends the element at
# "</script" and enters a double-escaped state at "<!--" followed by "<script", so no
# "<" may appear; ">" and "&" go too (no "-->", no entity-looking text), and U+2028/9
# (line terminators in pre-2019 JavaScript). All are escaped as JSON \u escapes, so
# JSON.parse gives back the same strings.
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def script_json(obj: Any) -> str:
    """`obj` as compact JSON safe to embed in a ``<script>`` element."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).translate(_SCRIPT_ESCAPES)


def _sha256(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def csp_meta(*, scripts: Sequence[str] = (), styles: Sequence[str] = (), images: bool = False) -> str:
    """The ``<meta http-equiv="Content-Security-Policy">`` of a page whose inline
    ``<script>`` and ``<style>`` elements hold exactly `scripts` and `styles`.

    Nothing is loaded from anywhere (``default-src 'none'``); only these scripts and
    styles run (by hash: no ``'unsafe-inline'``, so no ``style=``/``on...=``
    attributes and no ``javascript:`` URLs either); images only as ``data:`` URLs
    (the embedded figures); DOM sinks that parse strings as HTML (``innerHTML``)
    throw where the browser supports Trusted Types; no ``<base>``, no form posts.
    Must come before the first script or style in ``<head>``."""
    policy = ["default-src 'none'"]
    if scripts:
        policy.append("script-src " + " ".join(_sha256(s) for s in scripts))
    if styles:
        policy.append("style-src " + " ".join(_sha256(s) for s in styles))
    if images:
        policy.append("img-src data:")
    policy += ["base-uri 'none'", "form-action 'none'", "require-trusted-types-for 'script'", "trusted-types 'none'"]
    content = "; ".join(policy)
    assert not set(content) & set('"<>&'), content  # our own text: quoted as it is, readable in the file
    return f'<meta http-equiv="Content-Security-Policy" content="{content}">'


def svg_img(svg: str, alt: str) -> str:
    """An SVG document (matplotlib's) as an ``<img>`` with a ``data:`` URL: shown as
    inline SVG would be, but an image cannot run script or reach the page."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" alt="{text(alt)}">'


def href(relative_path: str) -> str:
    """A relative file path as an href attribute value: percent-encoded (so a
    folder named ``javascript:x`` stays a path, not a URL scheme) and escaped."""
    return text(quote(relative_path))


def number(value: Any, spec: str = "g") -> str:
    """A number from a summary formatted with `spec`, as HTML text; anything that
    is not a number (a tampered file) is shown escaped as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return text(format(value, spec))
    return text(value)


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return text(f"{v:.6g}")
    try:  # numpy scalars
        import numpy as np

        if isinstance(v, np.floating):
            return "–" if np.isnan(v) else text(f"{float(v):.6g}")
    except ImportError:  # pragma: no cover
        pass
    return text(v)


def table(columns: Iterable[Any], rows: Iterable[Iterable[Any]]) -> str:
    """A ``<table>`` of escaped cells (floats to 6 significant digits, missing as –)."""
    head = "".join(f"<th>{text(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
