"""Shared helpers for the test suites: repository paths, the CLI as a user runs
it, and a builder for chain scenarios."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cbr_chain.toml"

#: IP header bytes added to every CBR payload on the wire (ns-2's Agent/UDP sends
#: no UDP header; a flow's ``udp_header = true`` adds 8 more).
HEADERS = 20


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m manetlab ARGS` in a fresh interpreter, with warnings as errors."""
    return subprocess.run(
        [sys.executable, "-W", "error", "-m", "manetlab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def chain(bandwidths_mbps: list[float], delays_ms: list[float], flow: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """A chain 0-1-...-n of point-to-point links with one CBR flow (defaults: 0 to the last node)."""
    n = len(bandwidths_mbps) + 1
    return {
        "duration_s": duration_s,
        "nodes": {"count": n},
        "links": [
            {"a": i, "b": i + 1, "bandwidth_mbps": bw, "delay_ms": d}
            for i, (bw, d) in enumerate(zip(bandwidths_mbps, delays_ms, strict=True))
        ],
        "flows": [{"kind": "cbr", "src": 0, "dst": n - 1, **flow}],
    }
