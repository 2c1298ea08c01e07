"""Node trajectories from a run's ``movement.tcl`` (ns-2 ``setdest`` lines).

The file is the one the core writes with ``[outputs] movement = true``: initial
``set X_/Y_`` lines, then ``$ns_ at T "$node_(i) setdest X Y V"`` commands. ns-2's
meaning (``MobileNode::set_destination``): at T the node heads in a straight line
from wherever it is towards (X, Y) at V m/s and stops on arrival; a later setdest
replaces the movement in progress. Each trajectory is turned into waypoints
``(t, x, y)`` with straight-line motion between consecutive ones, which is exact
for this model and what the page interpolates.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right

__all__ = ["read_movement", "position_at", "Waypoints"]

#: Per node: times (s, increasing) and positions (m) at those times.
Waypoints = tuple[list[float], list[float], list[float]]

_SET = re.compile(r"^\$node_\((\d+)\)\s+set\s+([XYZ])_\s+(\S+)\s*$")
_AT = re.compile(r'^\$ns_\s+at\s+(\S+)\s+"\$node_\((\d+)\)\s+setdest\s+(\S+)\s+(\S+)\s+(\S+)\s*"\s*$')
_BARE = re.compile(r"^\$node_\((\d+)\)\s+setdest\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


def read_movement(text: str, node_count: int | None = None) -> list[Waypoints]:
    """Waypoints of every node (``node_count`` nodes, default: as many as the file names)."""
    start: dict[int, list[float]] = {}
    cmds: list[tuple[float, int, int, float, float, float]] = []  # (t, order, node, x, y, v)
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "$god_")) or "$god_" in line:
            continue
        if m := _SET.match(line):
            i, axis, v = int(m.group(1)), m.group(2), float(m.group(3))
            start.setdefault(i, [0.0, 0.0])
            if axis != "Z":
                start[i]["XY".index(axis)] = v
        elif m := _AT.match(line):
            cmds.append((float(m.group(1)), len(cmds), int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5))))
        elif m := _BARE.match(line):
            cmds.append((0.0, len(cmds), int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))))
        else:
            raise ValueError(f"movement file, line {lineno}: not a node position or setdest line: {raw!r}")
    n = node_count if node_count is not None else 1 + max([*start, *(c[2] for c in cmds)], default=-1)
    # Equal times apply in file order, as ns-2's scheduler runs them.
    cmds.sort(key=lambda c: (c[0], c[1]))
    per_node: list[list[tuple[float, float, float, float]]] = [[] for _ in range(n)]
    for t, _, i, x, y, v in cmds:
        if i < n:
            per_node[i].append((t, x, y, v))
    return [_waypoints(start.get(i, [0.0, 0.0]), per_node[i]) for i in range(n)]


def _waypoints(p0: list[float], moves: list[tuple[float, float, float, float]]) -> Waypoints:
    ts, xs, ys = [0.0], [p0[0]], [p0[1]]
    # The movement in progress: from (x, y) at time t0 towards dest, arriving at t_arr.
    x, y, t0 = p0[0], p0[1], 0.0
    dest: tuple[float, float] | None = None
    t_arr = t0
    for t, dx, dy, v in moves:
        # Where the node is at t (it may still be moving, or have arrived).
        if dest is not None and t < t_arr:
            f = (t - t0) / (t_arr - t0)
            x, y = x + (dest[0] - x) * f, y + (dest[1] - y) * f
        elif dest is not None:
            if t_arr > ts[-1]:
                ts.append(t_arr)
                xs.append(dest[0])
                ys.append(dest[1])
            x, y = dest
        if t > ts[-1]:
            ts.append(t)
            xs.append(x)
            ys.append(y)
        elif t == ts[-1]:
            xs[-1], ys[-1] = x, y
        dist = math.hypot(dx - x, dy - y)
        if v <= 0 or dist == 0:
            dest, t0, t_arr = None, t, t  # speed 0 stops the node where it is
            continue
        dest, t0, t_arr = (dx, dy), t, t + dist / v
    if dest is not None:
        ts.append(t_arr)
        xs.append(dest[0])
        ys.append(dest[1])
    return ts, xs, ys


def position_at(w: Waypoints, t: float) -> tuple[float, float]:
    """Position (m) at time `t` (s) by straight-line interpolation between waypoints."""
    ts, xs, ys = w
    k = bisect_right(ts, t) - 1
    if k < 0:
        return xs[0], ys[0]
    if k >= len(ts) - 1:
        return xs[-1], ys[-1]
    f = (t - ts[k]) / (ts[k + 1] - ts[k])
    return xs[k] + (xs[k + 1] - xs[k]) * f, ys[k] + (ys[k + 1] - ys[k]) * f
