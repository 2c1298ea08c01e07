"""Metrics from an ns-2 wireless trace, with manetlab's definitions (docs/metrics.md).

`parse_trace(path, meta, ports)` reads an ns-2.35 wireless trace (old CMU format
or the tagged "new" format) and returns `Ns2Metrics`: one dict per flow plus run
totals. manetlab's own traces are in the same format and read the same way
(tests/test_ns2_awk.py checks the result against manetlab's summary). Flows are matched by their IP endpoints ``src:port -> dst:port``, with the
ports ns-2 itself reported (``ports.txt``, written by the exported script).

Definitions, matching manetlab's (docs/ns2.md has the full table):

* CBR ``tx_packets``: ``s`` lines at the source's AGT level; ``rx_packets``: distinct
  packets (uid) received at the destination's AGT level; ``pdr`` = rx/tx;
  ``delay_mean_s``: mean of receive time - send time of the same uid;
  ``jitter_mean_s``: mean |delay(i+1) - delay(i)| in arrival order;
  ``throughput_kbps`` = rx_packets * payload * 8 / active time / 1000.
* TCP: ns-2's one-way agents send seqno 0 as a 40-byte header-only segment (its
  ``syn_`` emulation) and data as seqnos 1, 2, ...; ``tx_packets`` counts data
  segments sent (seqno >= 1, retransmissions included); ``rx_packets`` is the
  number of data segments delivered in order at the sink (the highest seqno
  such that 1..seqno all arrived); ``goodput_kbps`` = rx_packets * packetSize * 8 /
  active time / 1000; ``highest_ack_segs`` is the highest cumulative ACK the
  sender received (ns-2 ACK k acknowledges seqnos 0..k, i.e. k data segments).
* ``routing_ctrl_pkts``: routing control transmissions (``s`` and ``f`` lines at
  RTR level of AODV / DSR / DSDV ("message") packets) — manetlab's
  routing_ctrl_originated_pkts + routing_ctrl_forwarded_pkts summed over nodes.
* ``drops``: ``D`` lines by ``level.REASON`` (``rtr.CBK``, ``ifq.IFQ``, ...; a
  queue overflow that ns-2's PriQueue traces as ``IFQ ---`` counts as ``ifq.IFQ``),
  per run and, for a flow's own packets (data, and ACKs of a TCP flow), per flow.
  MAC-level drops (COL, RET) appear only when the script traces the MAC.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

__all__ = ["Ns2Metrics", "TraceEvent", "parse_trace", "read_ports", "metrics_from_dir", "iter_events", "drop_code"]

#: Packet types ns-2 gives routing control packets (DSDV's updates are "message").
ROUTING_TYPES = frozenset({"AODV", "DSR", "message"})


@dataclass(slots=True)
class TraceEvent:
    """The fields of one trace line the metrics need."""

    op: str  # s r f D
    t: float
    node: int
    level: str  # AGT RTR IFQ MAC
    reason: str  # --- or a drop code
    uid: int
    ptype: str
    size: int
    src: str  # "addr:port"
    dst: str
    seq: int | None
    ack: int | None


def _int(tok: str) -> int | None:
    try:
        return int(tok)
    except ValueError:
        return None


def _old(tok: list[str]) -> TraceEvent | None:
    # s 0.05 _0_ AGT  --- 2 tcp 1040 [0 0 0 0] ------- [0:0 4:0 32 0] [1 0] 0 0
    if len(tok) < 8 or not tok[2].startswith("_"):
        return None  # movement (M) and energy lines
    node = int(tok[2].strip("_"))
    ev = TraceEvent(tok[0], float(tok[1]), node, tok[3], tok[4], int(tok[5]), tok[6], int(tok[7]), "", "", None, None)
    # The IP header is the 4-field bracket after the MAC bracket and the flags.
    try:
        k = tok.index("-------", 8) + 1
    except ValueError:
        k = -1
    if k > 0 and len(tok) >= k + 4 and tok[k].startswith("["):
        ev.src = tok[k][1:]
        ev.dst = tok[k + 1]
        j = k + 4
        if ev.ptype in ("tcp", "ack") and len(tok) > j + 1:
            ev.seq = _int(tok[j].lstrip("["))
            ev.ack = _int(tok[j + 1].rstrip("]"))
        elif ev.ptype == "cbr" and len(tok) > j:
            ev.seq = _int(tok[j].strip("[]"))
    return ev


def _new(tok: list[str]) -> TraceEvent | None:
    # s -t 0.05 -Hs 0 ... -Nl AGT -Nw --- ... -Is 0.0 -Id 4.0 -It tcp -Il 1040 ... -Ii 2 ... -Ps 1 -Pa 0
    tags = {}
    for i in range(1, len(tok) - 1, 2):
        tags[tok[i]] = tok[i + 1]
    if "-Ni" not in tags or "-Nl" not in tags:
        return None
    # ns-2 prints IP addresses as "addr.port" in the new format; use "addr:port" as the old one does.
    src = tags.get("-Is", "")
    dst = tags.get("-Id", "")
    ptype = tags.get("-It", "")
    seq = ack = None
    if ptype in ("tcp", "ack"):
        seq, ack = _int(tags.get("-Ps", "")), _int(tags.get("-Pa", ""))
    elif ptype == "cbr":
        seq = _int(tags.get("-Pi", ""))
    return TraceEvent(
        tok[0],
        float(tags["-t"]),
        int(tags["-Ni"]),
        tags["-Nl"],
        tags.get("-Nw", "---"),
        int(tags.get("-Ii", "-1")),
        ptype,
        int(tags.get("-Il", "0")),
        src.replace(".", ":", 1),
        dst.replace(".", ":", 1),
        seq,
        ack,
    )


def drop_code(level: str, reason: str) -> str:
    """The ``level.REASON`` key of a ``D`` line.

    ns-2's `Queue/DropTail/PriQueue` (AODV, DSDV) drops a packet that finds its queue
    full with a plain `Connector::drop(p)`; that reaches the IFQ's `CMUTrace::recv`,
    which writes the reason ``---``. DSR's `CMUPriQueue` names the same event
    `DROP_IFQ_QFULL` (``IFQ``), and manetlab's trace writes ``IFQ`` for every
    overflow. No other IFQ drop is reasonless (ARP and end-of-run flushes carry
    ``ARP`` / ``END``), so ``IFQ ---`` is counted as ``ifq.IFQ``.
    """
    if level == "IFQ" and reason == "---":
        reason = "IFQ"
    return f"{level.lower()}.{reason}"


def iter_events(path: str | Path) -> Iterator[TraceEvent]:
    """Every packet event (s, r, f, D) of a trace, either format."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            tok = line.split()
            if len(tok) < 3 or tok[0] not in ("s", "r", "f", "D", "d"):
                continue
            if tok[0] == "d":  # the new format writes drops as "d"
                tok[0] = "D"
            ev = _new(tok) if tok[1] == "-t" else _old(tok)
            if ev is not None:
                yield ev


def read_ports(path: str | Path) -> dict[int, tuple[int, int]]:
    """ports.txt: ``flow src_port sink_port`` per line, as the exported script writes it."""
    ports = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            i, sp, dp = line.split()
            ports[int(i)] = (int(sp), int(dp))
    return ports


@dataclass
class Ns2Metrics:
    """ns-2 metrics of one run: per-flow dicts (manetlab column names) and totals."""

    flows: list[dict[str, Any]]
    routing_ctrl_pkts: int
    drops: dict[str, int] = field(default_factory=dict)
    events: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"flows": self.flows, "routing_ctrl_pkts": self.routing_ctrl_pkts, "drops": dict(sorted(self.drops.items())), "events": self.events}


def parse_trace(path: str | Path, meta: Mapping[str, Any], ports: Mapping[int, tuple[int, int]]) -> Ns2Metrics:
    """Metrics of the trace at `path`; `meta` is export's flows.json, `ports` from ports.txt."""
    flows = meta["flows"]
    # (src "a:p", dst "a:p") -> (flow index, "fwd" | "rev")
    key: dict[tuple[str, str], tuple[int, str]] = {}
    for f in flows:
        sp, dp = ports[f["flow"]]
        a, b = f"{f['src']}:{sp}", f"{f['dst']}:{dp}"
        key[(a, b)] = (f["flow"], "fwd")
        key[(b, a)] = (f["flow"], "rev")

    n = len(flows)
    sent_t: list[dict[int, float]] = [{} for _ in range(n)]  # CBR: uid -> send time
    tx = [0] * n
    rx_uids: list[set[int]] = [set() for _ in range(n)]
    delays: list[list[float]] = [[] for _ in range(n)]
    tcp_got: list[set[int]] = [set() for _ in range(n)]
    tcp_next = [1] * n  # next in-order data seqno expected at the sink
    tcp_sent_seqs: list[set[int]] = [set() for _ in range(n)]
    tcp_ack = [-1] * n
    flow_drops: list[dict[str, int]] = [defaultdict(int) for _ in range(n)]
    drops: dict[str, int] = defaultdict(int)
    ctrl = 0
    events = 0
    for ev in iter_events(path):
        events += 1
        if ev.op == "D":
            code = drop_code(ev.level, ev.reason)
            drops[code] += 1
            fk = key.get((ev.src, ev.dst))
            if fk is not None and ev.ptype in ("cbr", "tcp", "ack"):
                flow_drops[fk[0]][code] += 1
            continue
        if ev.level == "RTR":
            if ev.op in ("s", "f") and ev.ptype in ROUTING_TYPES:
                ctrl += 1
            continue
        if ev.level != "AGT":
            continue
        fk = key.get((ev.src, ev.dst))
        if fk is None:
            continue
        i, way = fk
        f = flows[i]
        if f["kind"] == "cbr":
            if way != "fwd" or ev.ptype != "cbr":
                continue
            if ev.op == "s" and ev.node == f["src"]:
                tx[i] += 1
                sent_t[i][ev.uid] = ev.t
            elif ev.op == "r" and ev.node == f["dst"] and ev.uid not in rx_uids[i]:
                rx_uids[i].add(ev.uid)
                t0 = sent_t[i].get(ev.uid)
                if t0 is not None:
                    delays[i].append(ev.t - t0)
        else:
            if way == "fwd" and ev.ptype == "tcp" and ev.seq is not None:
                if ev.op == "s" and ev.node == f["src"] and ev.seq >= 1:
                    tx[i] += 1
                    tcp_sent_seqs[i].add(ev.seq)
                elif ev.op == "r" and ev.node == f["dst"] and ev.seq >= 1:
                    got = tcp_got[i]
                    got.add(ev.seq)
                    while tcp_next[i] in got:
                        got.discard(tcp_next[i])
                        tcp_next[i] += 1
            elif way == "rev" and ev.ptype == "ack" and ev.op == "r" and ev.node == f["src"] and ev.seq is not None:
                tcp_ack[i] = max(tcp_ack[i], ev.seq)

    out = []
    for i, f in enumerate(flows):
        active = max(f["stop_s"] - f["start_s"], 0.0)
        row: dict[str, Any] = {
            "flow": i,
            "name": f["name"],
            "kind": f["kind"],
            "transport": f["transport"],
            "src": f["src"],
            "dst": f["dst"],
            "tx_packets": tx[i],
        }
        if f["kind"] == "cbr":
            rxp = len(rx_uids[i])
            rxb = rxp * f["packet_size_bytes"]
            d = delays[i]
            row.update(
                rx_packets=rxp,
                rx_bytes=rxb,
                pdr=rxp / tx[i] if tx[i] else 0.0,
                throughput_kbps=rxb * 8 / active / 1000 if active > 0 else 0.0,
                delay_mean_s=sum(d) / len(d) if d else None,
                jitter_mean_s=(sum(abs(b - a) for a, b in pairwise(d)) / (len(d) - 1)) if len(d) > 1 else None,
            )
        else:
            segs = tcp_next[i] - 1
            rxb = segs * f["mss_bytes"]
            if f.get("file_bytes"):
                rxb = min(rxb, int(f["file_bytes"]))
            row.update(
                rx_packets=segs,
                rx_bytes=rxb,
                goodput_kbps=rxb * 8 / active / 1000 if active > 0 else 0.0,
                throughput_kbps=rxb * 8 / active / 1000 if active > 0 else 0.0,
                highest_ack_segs=max(tcp_ack[i], 0),
                retransmissions=tx[i] - len(tcp_sent_seqs[i]),
            )
        row["drops"] = dict(sorted(flow_drops[i].items()))
        out.append(row)
    return Ns2Metrics(out, ctrl, dict(drops), events)


def metrics_from_dir(out_dir: str | Path) -> Ns2Metrics:
    """Metrics of an exported directory after `ns run.tcl` ran in it."""
    d = Path(out_dir)
    meta = json.loads((d / "flows.json").read_text(encoding="utf-8"))
    return parse_trace(d / "trace.tr", meta, read_ports(d / "ports.txt"))
