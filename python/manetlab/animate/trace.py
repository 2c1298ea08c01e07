"""Reading a run's ns-2 wireless trace (``trace.tr``, old CMU or new tagged format)
into uniform records; see docs/metrics.md for the fields the core writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["Line", "read_trace", "BROADCAST"]

#: ns-2's broadcast address as the core prints it (IP ``-1`` as u32, MAC ``ffffffff``).
BROADCAST = -1
_IP_BCAST = "4294967295"


class Line(NamedTuple):
    ev: str  # s r f D (the new format's d is read as D)
    t: float
    node: int
    level: str  # AGT RTR IFQ MAC
    reason: str  # --- or a drop code
    uid: int
    ptype: str  # cbr tcp ack AODV DSR message RTS CTS ACK ("" for a new-format MAC frame without IP part)
    size: int
    mac_dst: int  # BROADCAST for ffffffff; 0 above the MAC
    mac_src: int
    ip_src: int  # -2 when the line has no IP part
    sport: int
    ip_dst: int  # BROADCAST for a broadcast
    dport: int
    next_hop: int  # BROADCAST when unset/broadcast in the new format; old format prints 0 when unset
    seq: int  # CBR sequence number or TCP byte sequence number; -1 for other packets
    aodv: str = ""  # AODV message kind as ns-2 traces it (REQUEST, REPLY, ERROR, HELLO); "" otherwise


def _mac_addr(h: str) -> int:
    return BROADCAST if h == "ffffffff" else int(h, 16)


def _old(f: list[str]) -> Line:
    # s 0.011520049 _16_ RTR  --- 10 cbr 532 [0 0 0 0] ------- [16:5005 6:5005 32 6] [0] 0 0
    ev = f[0]
    if len(f) > 16:
        s, sp = f[13][1:].split(":")
        d, dp = f[14].split(":")
        ip_src, sport, dport, nh = int(s), int(sp), int(dp), int(f[16].rstrip("]"))
        ip_dst = BROADCAST if d in (_IP_BCAST, "-1") else int(d)
        # Only data packets carry a sequence number there (AODV's part is `[0x2 ...`).
        seq = int(f[17].strip("[]")) if len(f) > 17 and f[6] in ("cbr", "tcp", "ack") else -1
    else:
        ip_src, sport, ip_dst, dport, nh, seq = -2, 0, 0, 0, 0, -1
    return Line(
        "D" if ev == "d" else ev, float(f[1]), int(f[2][1:-1]), f[3], f[4], int(f[5]), f[6], int(f[7]),
        _mac_addr(f[9]), _mac_addr(f[10]), ip_src, sport, ip_dst, dport, nh, seq,
        f[-1].strip("()") if f[6] == "AODV" and f[-1].startswith("(") else "",
    )


def _new(f: list[str]) -> Line:
    # s -t 10.5 -Hs 3 -Hd 3 -Ni 3 -Nx .. -Ny .. -Nz 0 -Ne -1 -Nl AGT -Nw --- -Ma .. -Md .. -Ms .. -Mt .. [-Is 0.0 -Id 3.0 -It cbr -Il 512 -If 0 -Ii 42 -Iv 29 ...]
    kv = {f[i]: f[i + 1] for i in range(1, len(f) - 1, 2)}
    ip_src, sport, ip_dst, dport = -2, 0, 0, 0
    if "-Is" in kv:
        s, sp = kv["-Is"].split(".")
        d, dp = kv["-Id"].split(".")
        ip_src, sport, dport = int(s), int(sp), int(dp)
        ip_dst = BROADCAST if d in (_IP_BCAST, "-1") else int(d)
    hd = int(kv["-Hd"])
    level = kv["-Nl"]
    ptype = kv.get("-It", "")
    size = int(kv.get("-Il", 0))
    uid = int(kv.get("-Ii", 0))
    return Line(
        "D" if f[0] == "d" else f[0], float(kv["-t"]), int(kv["-Ni"]), level, kv["-Nw"], uid, ptype, size,
        _mac_addr(kv["-Md"]), _mac_addr(kv["-Ms"]), ip_src, sport, ip_dst, dport, BROADCAST if hd < 0 else hd,
        int(kv.get("-Pi", kv.get("-Ps", -1))),
        kv.get("-Pc", "") if kv.get("-P") == "aodv" else "",
    )


def read_trace(path: str, from_s: float = 0.0, to_s: float = float("inf"), recv_levels: tuple[str, ...] | None = None) -> Iterator[Line]:
    """Every line of `path` with ``from_s <= t <= to_s``, in file (time) order;
    with `recv_levels`, receive (``r``) lines only at those levels (most of a MAC
    trace is receptions, so skipping them unparsed saves much of the time)."""
    from manetlab import safeio

    with safeio.open_read(path, "r", encoding="ascii") as fh:  # a regular file, no link followed
        for raw in fh:
            f = raw.split()
            if len(f) < 8:
                continue
            if f[1] == "-t":
                if recv_levels is not None and f[0] == "r" and f[f.index("-Nl") + 1] not in recv_levels:
                    continue
                rec = _new(f)
            else:
                if recv_levels is not None and f[0] == "r" and f[3] not in recv_levels:
                    continue
                rec = _old(f)
            if rec.t < from_s:
                continue
            if rec.t > to_s:
                break
            yield rec
