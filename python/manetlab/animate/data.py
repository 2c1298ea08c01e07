"""The data embedded in an animation page, built from a result folder.

Sources (all written by ``manetlab run``): ``movement.tcl`` for positions,
``trace.tr`` for transmissions, drops and routing events, ``summary.json`` for
flows, faults, the TCP traces (cwnd) and the queue series, ``scenario.json``
for the area and radio ranges. Everything is plain JSON-able lists so the page
and the tests read the same thing; times are seconds.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from manetlab.animate.movement import Waypoints, position_at, read_movement
from manetlab.animate.trace import BROADCAST, Line, read_trace

__all__ = ["build", "decode_drops", "AnimationData", "TX_KINDS", "FLOW_CTRL", "FLOW_MAC"]

#: Transmission kinds (index = code in ``tx.k``).
TX_KINDS = ["DATA", "RTS", "CTS", "ACK", "CTRL"]
#: Pseudo-flow of routing control packets, and of MAC frames not tied to a flow.
FLOW_CTRL = -1
FLOW_MAC = -2

# The port the core gives flow f at both ends: `flows[f].port`, else 50000 + f
# (scenario/mod.rs DEFAULT_BASE_PORT, docs/metrics.md "What a pcap holds").
_BASE_PORT = 50000
_ROUTING = {"AODV", "DSR", "message"}
# AODV sizes at RTR/IFQ level (20 B IP + message; routing/aodv/packets.rs): RREQ 48,
# RREP/HELLO 44, RERR 24 + 8 per destination (a 3-destination RERR is also 48 B).
_AODV_RREQ_BYTES = 48


@dataclass
class AnimationData:
    """What the page shows; ``doc`` is the JSON embedded in it."""

    doc: dict[str, Any]
    waypoints: list[Waypoints]
    stats: dict[str, Any] = field(default_factory=dict)
    #: Every drop in the window as ``[t, node, reason, level, flow, ptype]`` (before any thinning of COL).
    drops: list[list[Any]] = field(default_factory=list)

    def position_at(self, node: int, t: float) -> tuple[float, float]:
        return position_at(self.waypoints[node], t)


def _flow_ports(flows: list[dict[str, Any]], scen_flows: list[dict[str, Any]]) -> dict[tuple[int, str, int], int]:
    """(node, "tcp" | "udp", port) -> flow, for both ends of every flow."""
    out: dict[tuple[int, str, int], int] = {}
    for i, f in enumerate(flows):
        spec = scen_flows[i] if i < len(scen_flows) else {}
        port = spec.get("port") or _BASE_PORT + i
        proto = "udp" if f.get("kind") == "cbr" else "tcp"
        for node in (f["src"], f["dst"]):
            out.setdefault((node, proto, port), i)
    return out


def _flow_of(ln: Line, ports: dict[tuple[int, str, int], int]) -> int:
    if ln.ip_src == -2:
        return FLOW_MAC
    if ln.ptype in _ROUTING or ln.sport == 255:
        return FLOW_CTRL
    proto = "tcp" if ln.ptype in ("tcp", "ack") else "udp"
    return ports.get((ln.ip_src, proto, ln.sport), FLOW_MAC)


def _ranges(scenario: dict[str, Any], summary: dict[str, Any]) -> tuple[float | None, float | None]:
    """Reception and carrier-sense ranges (m): the distances where the mean received
    power equals RXThresh and CSThresh (ns-2 WaveLAN defaults; wireless.md)."""
    radio = scenario.get("radio")
    if radio is None:
        return None, None
    def g(k: str, d: float) -> float:
        return d if radio.get(k) is None else float(radio[k])

    pt = g("tx_power_w", 0.28183815)
    lam = 299792458.0 / (g("frequency_mhz", 914.0) * 1e6)
    h = g("antenna_height_m", 1.5)
    gain = g("tx_antenna_gain", 1.0) * g("rx_antenna_gain", 1.0)
    loss = g("system_loss", 1.0)
    prop = radio.get("propagation") or "two_ray_ground"

    def dist(p_w: float) -> float:
        if prop == "free_space":
            return math.sqrt(pt * gain * lam**2 / ((4 * math.pi) ** 2 * loss * p_w))
        if prop == "shadowing":
            d0 = g("reference_distance_m", 1.0)
            beta = g("path_loss_exponent", 2.0)
            p0 = pt * gain * lam**2 / ((4 * math.pi * d0) ** 2 * loss)
            d_m: float = d0 * (p0 / p_w) ** (1 / beta)
            return d_m
        crossover = 4 * math.pi * h * h / lam
        d: float = (pt * gain * h**4 / (loss * p_w)) ** 0.25
        if d < crossover:
            d = math.sqrt(pt * gain * lam**2 / ((4 * math.pi) ** 2 * loss * p_w))
        return d

    rx = radio.get("rx_range_m") or dist(g("rx_threshold_w", 3.652e-10))
    cs = radio.get("cs_range_m") or dist(g("cs_threshold_w", 1.559e-11))
    conn = summary.get("connectivity") or {}
    return float(conn.get("range_m") or rx), float(cs)


def _area(area: dict[str, Any], xs: list[float], ys: list[float]) -> list[float]:
    """The scenario's area, else the nodes' extent, at least a quarter as high as wide
    (and vice versa), so a chain on one line is not drawn one pixel high."""
    if area.get("width_m") and area.get("height_m"):
        return [float(area["width_m"]), float(area["height_m"])]
    w, h = max([*xs, 1.0]), max([*ys, 1.0])
    return [max(w, h / 4), max(h, w / 4)]


def _thin(ts: list[float], vs: list[float], cap: int) -> tuple[list[float], list[float]]:
    """At most about `cap` points of a step series: every k-th point plus the last."""
    if len(ts) <= cap:
        return ts, vs
    k = math.ceil(len(ts) / cap)
    idx = list(range(0, len(ts), k))
    if idx[-1] != len(ts) - 1:
        idx.append(len(ts) - 1)
    return [ts[i] for i in idx], [vs[i] for i in idx]


def _window(ts: list[float], vs: list[Any], lo: float, hi: float) -> tuple[list[float], list[Any]]:
    """The points in [lo, hi], plus the last one before lo (the value in force at lo)."""
    import bisect

    a = bisect.bisect_left(ts, lo)
    b = bisect.bisect_right(ts, hi)
    a0 = max(a - 1, 0)
    return ts[a0:b], vs[a0:b]


def _delta_us(ts: list[float]) -> list[int]:
    """Times (s, non-decreasing) as integer microseconds, each relative to the previous."""
    us = [round(t * 1e6) for t in ts]
    return [us[0]] + [us[i] - us[i - 1] for i in range(1, len(us))] if us else []


def _encode_drops(drops: list[list[Any]]) -> dict[str, Any]:
    """Drops column by column, strings as indices into small tables (a big run has
    hundreds of thousands of them, mostly COL)."""
    tables: dict[str, list[str]] = {"reasons": [], "levels": [], "ptypes": []}
    index: dict[str, dict[str, int]] = {k: {} for k in tables}

    def code(table: str, v: str) -> int:
        ix = index[table]
        if v not in ix:
            ix[v] = len(tables[table])
            tables[table].append(v)
        return ix[v]

    return {
        "dt_us": _delta_us([d[0] for d in drops]),
        "node": [d[1] for d in drops],
        "reason": [code("reasons", d[2]) for d in drops],
        "level": [code("levels", d[3]) for d in drops],
        "flow": [d[4] for d in drops],
        "ptype": [code("ptypes", d[5]) for d in drops],
        **tables,
    }


def decode_drops(doc: dict[str, Any]) -> list[list[Any]]:
    """The page's drops back as ``[t, node, reason, level, flow, ptype]`` (what page.js decodes)."""
    d = doc["drops"]
    out, acc = [], 0
    for i, dt in enumerate(d["dt_us"]):
        acc += dt
        out.append([acc / 1e6, d["node"][i], d["reasons"][d["reason"][i]], d["levels"][d["level"][i]], d["flow"][i], d["ptypes"][d["ptype"][i]]])
    return out


def _r(x: float, nd: int = 6) -> float:
    return round(x, nd)


def build(
    result_dir: str | Path,
    from_s: float | None = None,
    to_s: float | None = None,
    *,
    max_transmissions: int = 400_000,
    max_collisions: int = 20_000,
    max_series_points: int = 4000,
) -> AnimationData:
    """Read `result_dir` and return the page's data for [from_s, to_s] (default: the
    whole run). Transmissions beyond `max_transmissions`, and collision (``COL``)
    drops beyond `max_collisions`, are thinned evenly (the counts kept and seen
    are in ``doc["stats"]``); packet drops, routing events and faults are always
    complete."""
    rdir = Path(result_dir)
    from manetlab import safeio  # a result folder's files: regular files only, no link followed

    summary = json.loads(safeio.read_text(rdir / "summary.json"))
    scen_path = rdir / "scenario.json"
    scenario = json.loads(safeio.read_text(scen_path)) if scen_path.is_symlink() or scen_path.exists() else {}
    duration = float(summary["duration_s"])
    # A stopped run (--partial) ends where it stopped.
    end = float(summary.get("stopped_at_s") or duration) if summary.get("partial") else duration
    lo = 0.0 if from_s is None else float(from_s)
    hi = end if to_s is None else min(float(to_s), end)
    if not (0 <= lo < hi):
        raise ValueError(f"--from/--to: [{lo:g}, {hi:g}] is not a time window of the run (allowed: 0 <= from < to, from < {end:g})")
    n = len(summary["nodes"])
    flows = summary["flows"]
    ports = _flow_ports(flows, scenario.get("flows") or [])

    waypoints = read_movement(safeio.read_text(rdir / "movement.tcl"), n)
    layout = "positions"
    if scenario.get("radio") is None and len({(w[1][0], w[2][0]) for w in waypoints}) < n and all(len(w[0]) == 1 for w in waypoints):
        # A wired scenario without distinct positions (they mean nothing over wires):
        # show the nodes on a circle so that links and drops can be told apart.
        layout = "circle"
        r_m = 100.0 * max(1.0, n / 8)
        waypoints = [([0.0], [r_m * (1 + math.cos(2 * math.pi * i / n))], [r_m * (1 + math.sin(2 * math.pi * i / n))]) for i in range(n)]
    traj = []
    for ts, xs, ys in waypoints:
        ts2, xy = _window(ts, list(zip(xs, ys)), lo, hi)
        # Keep also the first waypoint after the window, so positions interpolate to its end.
        k = len(ts) and min(ts.index(ts2[-1]) + 1, len(ts) - 1)
        if ts[k] > ts2[-1]:
            ts2, xy = [*ts2, ts[k]], [*xy, (xs[k], ys[k])]
        traj.append([v for t, (x, y) in zip(ts2, xy) for v in (_r(t), _r(x, 3), _r(y, 3))])

    tx_t: list[float] = []
    tx_a: list[int] = []
    tx_b: list[int] = []
    tx_k: list[int] = []
    tx_f: list[int] = []
    drops: list[list[Any]] = []  # [t, node, reason, level, flow, ptype]
    route_ev: list[list[Any]] = []  # [t, node, kind, peer]
    route_chg: list[list[Any]] = []  # [t, node, dst, next_hop]
    rx: list[list[float]] = [[] for _ in flows]
    lines = 0
    mac_seen = False
    rtr_tx: list[tuple[float, int, int, int, int]] = []  # used when there is no MAC level
    route: dict[tuple[int, int], int] = {}
    last_break: dict[tuple[int, int], float] = {}
    # RTS/CTS/ACK get the flow of the DATA frame they belong to.
    pending: dict[tuple[int, int], list[int]] = {}
    last_data_flow: dict[tuple[int, int], int] = {}
    last_kind: dict[tuple[int, int], int] = {}
    ctrl_seen: set[int] = set()
    rx_seen: set[tuple[int, int]] = set()
    trace_path = rdir / "trace.tr"
    for ln in read_trace(str(trace_path), lo, hi, recv_levels=("AGT",)) if trace_path.exists() else ():
        if not 0 <= ln.node < n:
            continue  # not a node of this run (a trace from elsewhere): nothing to draw it at
        lines += 1
        ev, lvl = ln.ev, ln.level
        if ev == "D":
            fl = _flow_of(ln, ports)
            drops.append([ln.t, ln.node, ln.reason, lvl, fl, ln.ptype or "MAC"])
            if ln.reason in ("CBK", "RET") and ln.ip_src != -2 and ln.ip_dst != BROADCAST:
                # The MAC gave up on a next hop: a link (and the routes over it) broke.
                peer = route.get((ln.node, ln.ip_dst), BROADCAST)
                key = (ln.node, peer)
                if ln.t - last_break.get(key, -1.0) > 0.01:
                    route_ev.append([_r(ln.t), ln.node, "break", peer])
                last_break[key] = ln.t
            continue
        if lvl == "MAC":
            if ev != "s":
                continue
            mac_seen = True
            a, b = ln.node, ln.mac_dst
            if ln.ptype in ("RTS", "CTS", "ACK"):
                kind = TX_KINDS.index(ln.ptype)
            elif ln.ip_src == -2:
                # New format: control frames carry no type; tell them apart by what they answer.
                prev = last_kind.get((b, a))
                kind = 2 if prev == 1 else 3 if prev == 0 else 1
            else:
                kind = 4 if ln.ptype in _ROUTING else 0
            last_kind[(a, b)] = kind
            i = len(tx_t)
            if kind in (0, 4):
                fl = _flow_of(ln, ports)
                for j in pending.pop((a, b), ()):
                    tx_f[j] = fl
                last_data_flow[(a, b)] = fl
            elif kind == 1:
                fl = FLOW_MAC
                pending.setdefault((a, b), []).append(i)
            elif kind == 2:
                fl = FLOW_MAC
                pending.setdefault((b, a), []).append(i)
            else:
                fl = last_data_flow.get((b, a), FLOW_MAC)
            tx_t.append(ln.t)
            tx_a.append(a)
            tx_b.append(b)
            tx_k.append(kind)
            tx_f.append(fl)
            continue
        if lvl == "RTR" and ev in ("s", "f") and ln.ip_src != -2:
            bcast = ln.ip_dst == BROADCAST
            if not bcast:
                key = (ln.node, ln.ip_dst)
                if ln.next_hop != BROADCAST and route.get(key) != ln.next_hop and not (ln.next_hop == 0 and ln.ip_dst != 0 and ev == "s" and ln.node == ln.ip_src and ln.ptype in _ROUTING):
                    route[key] = ln.next_hop
                    route_chg.append([_r(ln.t), ln.node, ln.ip_dst, ln.next_hop])
            rtr_tx.append((ln.t, ln.node, BROADCAST if bcast else ln.next_hop, 4 if ln.ptype in _ROUTING else 0, _flow_of(ln, ports)))
            if ev == "s" and bcast and ln.ptype in _ROUTING and ln.uid not in ctrl_seen:
                # A forwarded broadcast keeps its uid: the first send is the originator's.
                ctrl_seen.add(ln.uid)
                if ln.ptype == "AODV":
                    # The message kind from the trace's AODV part; by size for traces without it.
                    msg = {"REQUEST": "RREQ", "ERROR": "RERR"}.get(ln.aodv) or ("RREQ" if ln.size == _AODV_RREQ_BYTES else "RERR")
                    if ln.aodv != "HELLO":
                        route_ev.append([_r(ln.t), ln.node, msg, BROADCAST])
                elif ln.ptype == "DSR":
                    route_ev.append([_r(ln.t), ln.node, "RREQ", BROADCAST])
            continue
        if lvl == "AGT" and ev == "r" and ln.ptype in ("cbr", "tcp"):
            fl = _flow_of(ln, ports)
            # Each packet once (a retransmitted segment or duplicated copy arrives twice),
            # as the summary counts rx_packets.
            # A TCP segment without payload (SYN, FIN: 40 B of headers) is not data.
            if fl >= 0 and ln.node == flows[fl]["dst"] and (fl, ln.seq) not in rx_seen and not (ln.ptype == "tcp" and ln.size <= 40):
                rx_seen.add((fl, ln.seq))
                rx[fl].append(ln.t)
    if not mac_seen:
        for t, a, b, k, fl in rtr_tx:
            tx_t.append(t)
            tx_a.append(a)
            tx_b.append(b)
            tx_k.append(k)
            tx_f.append(fl)
    tx_total = len(tx_t)
    keep = list(range(tx_total))
    if tx_total > max_transmissions:
        step = tx_total / max_transmissions
        keep = [int(i * step) for i in range(max_transmissions)]

    # Transmissions: times as integer microseconds, delta-coded (small numbers, small file).
    dt = _delta_us([tx_t[i] for i in keep])
    cols = [i for i, d in enumerate(drops) if d[2] == "COL"]
    shown_drops = drops
    if len(cols) > max_collisions:
        step = len(cols) / max_collisions
        keep_col = {cols[int(i * step)] for i in range(max_collisions)}
        shown_drops = [d for i, d in enumerate(drops) if d[2] != "COL" or i in keep_col]

    flow_doc = []
    for i, f in enumerate(flows):
        tr = (f.get("tcp") or {}).get("trace") or {}
        cw_t, cw_v = _window(tr.get("t_s", []), tr.get("cwnd_segs", []), lo, hi)
        cw_t, cw_v = _thin(cw_t, cw_v, max_series_points)
        rx_t, rx_n = _thin(rx[i], list(range(1, len(rx[i]) + 1)), max_series_points)
        flow_doc.append({
            "id": i, "name": f["name"], "kind": f["kind"], "transport": f.get("transport"), "src": f["src"], "dst": f["dst"],
            "rx_t": [_r(t) for t in rx_t], "rx_n": rx_n, "rx_total": len(rx[i]),
            "cwnd_t": [_r(t) for t in cw_t], "cwnd": [_r(v, 3) for v in cw_v],
        })
    queues = []
    # The series is of the wireless interface queue: nothing to show over wires.
    for q in (summary.get("series") or {}).get("queues", []) if scenario.get("radio") is not None else []:
        qt, qv = _window(q["t_s"], q["len_pkts"], lo, hi)
        qt, qv = _thin(qt, qv, max_series_points)
        queues.append({"node": q["node"], "t": [_r(t) for t in qt], "len": qv})
    rx_range, cs_range = _ranges(scenario, summary)
    area = scenario.get("area") or {}
    xs_all = [v for tr in traj for v in tr[1::3]]
    ys_all = [v for tr in traj for v in tr[2::3]]
    stats = {
        "trace_lines_used": lines,
        "transmissions": tx_total,
        "transmissions_kept": len(keep),
        "transmission_source": "MAC" if mac_seen else "RTR" if tx_total else "none",
        "drops": len(drops) - len(cols),
        "collisions": len(cols),
        "collisions_kept": min(len(cols), max_collisions),
        "route_events": len(route_ev),
    }
    doc = {
        "format": 1,
        "manetlab_version": summary.get("manetlab_version"),
        "scenario_name": summary.get("scenario_name") or rdir.name,
        "seed": summary.get("seed"),
        "duration_s": duration,
        "from_s": lo,
        "to_s": hi,
        "partial": bool(summary.get("partial")),
        "area": _area(area, xs_all, ys_all),
        "layout": layout,
        "links": [[lk["a"], lk["b"]] for lk in scenario.get("links") or []],
        "range_m": rx_range,
        "cs_range_m": cs_range,
        "routing": (scenario.get("routing") or {}).get("protocol"),
        "nodes": n,
        "traj": traj,
        "flows": flow_doc,
        "tx_kinds": TX_KINDS,
        "tx": {"dt_us": dt, "a": [tx_a[i] for i in keep], "b": [tx_b[i] for i in keep], "k": [tx_k[i] for i in keep], "f": [tx_f[i] for i in keep]},
        "drops": _encode_drops(shown_drops),
        "route_events": route_ev,
        "routes": route_chg,
        "faults": [[_r(f["time_s"]), f["kind"], f["nodes"]] for f in summary.get("faults", []) if lo <= f["time_s"] <= hi or f["time_s"] < lo],
        "queues": queues,
        "stats": stats,
    }
    return AnimationData(doc, waypoints, stats, drops)
