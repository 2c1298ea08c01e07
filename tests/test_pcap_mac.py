"""`outputs.pcap = "mac"`: 802.11 frames with radiotap headers (issue 35).

A 5-node AODV chain (one TCP flow end to end, one CBR flow back) is run with the MAC
capture and the MAC-level ns-2 trace. Each node's file holds the frames its `s MAC`
and `r MAC` lines show, kind by kind; DATA frames carry the IP datagram or ARP message;
the retry bit marks exactly the DATA frames the MAC sent again; the counters of the
summary follow from the frames. With tshark on PATH, Wireshark's own `wlan` dissector
reads every frame of node 0 and counts the same kinds (issue 35's must-show)."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import dpkt
import pytest

import manetlab

KINDS = ("RTS", "CTS", "DATA", "ACK")
#: wlan.fc.type_subtype of each kind (control 0x1b, 0x1c, 0x1d; data 0x20).
SUBTYPES = {"RTS": 0x1B, "CTS": 0x1C, "ACK": 0x1D, "DATA": 0x20}
NODES = 5


def chain(pcap: object) -> dict:
    outputs: dict = {"trace": "old", "trace_levels": ["mac"]}
    if pcap is not None:
        outputs["pcap"] = pcap
    return {
        "name": "pcap-mac-chain",
        "seed": 3,
        "duration_s": 30,
        "routing": {"protocol": "aodv"},
        "nodes": {"count": NODES, "placement": {"kind": "chain", "spacing_m": 200}},
        "radio": {},
        "mac": {},
        # Both flows stop well before the end, so every unicast frame is finished
        # (acknowledged or given up) when the run ends and the counters are complete.
        "flows": [
            {"kind": "ftp", "src": 0, "dst": 4, "start_s": 1, "stop_s": 15, "transport": "newreno"},
            {"kind": "cbr", "src": 4, "dst": 0, "start_s": 2, "stop_s": 15, "packet_size_bytes": 512, "interval_s": 0.2},
        ],
        "outputs": outputs,
    }


def mac_addr(n: int) -> bytes:
    return bytes([2, 0, 10, 0, 0, n + 1])


def kind_of(f: dpkt.ieee80211.IEEE80211) -> str:
    if f.type == dpkt.ieee80211.CTL_TYPE:
        return {dpkt.ieee80211.C_RTS: "RTS", dpkt.ieee80211.C_CTS: "CTS", dpkt.ieee80211.C_ACK: "ACK"}[f.subtype]
    assert f.type == dpkt.ieee80211.DATA_TYPE and f.subtype == dpkt.ieee80211.D_DATA, (f.type, f.subtype)
    return "DATA"


def receiver(f: dpkt.ieee80211.IEEE80211) -> bytes:
    return {"RTS": lambda: f.rts.dst, "CTS": lambda: f.cts.dst, "ACK": lambda: f.ack.dst, "DATA": lambda: f.data_frame.dst}[kind_of(f)]()


def transmitter(f: dpkt.ieee80211.IEEE80211) -> bytes | None:
    k = kind_of(f)
    return f.rts.src if k == "RTS" else f.data_frame.src if k == "DATA" else None


def frames(path: Path) -> list[tuple[float, dpkt.radiotap.Radiotap, dpkt.ieee80211.IEEE80211]]:
    with path.open("rb") as fh:
        reader = dpkt.pcap.Reader(fh)
        assert reader.datalink() == 127, "LINKTYPE_IEEE802_11_RADIOTAP"
        out = []
        for ts, buf in reader:
            rt = dpkt.radiotap.Radiotap(buf)
            assert rt.version == 0 and rt.flags_present and rt.rate_present and rt.channel_present
            assert rt.flags.fcs, "frames end with their FCS"
            wlan = dpkt.ieee80211.IEEE80211(buf[rt.length:], fcs=True)
            out.append((ts, rt, wlan))
        return out


def le16(v: int) -> int:
    """An 802.11 little-endian 16-bit field (dpkt unpacks duration and sequence control big-endian)."""
    return int.from_bytes(v.to_bytes(2, "big"), "little")


def sent_by(n: int, f: dpkt.ieee80211.IEEE80211) -> bool:
    """Whether node n sent f (CTS and ACK name only their receiver, never the sender)."""
    ta = transmitter(f)
    return ta == mac_addr(n) if ta is not None else receiver(f) != mac_addr(n)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("mac")
    r = manetlab.run(chain("mac"), out=out)
    plain = manetlab.run(chain(None), out=tmp_path_factory.mktemp("plain"))
    return r, plain, out


def mac_lines(out: Path) -> dict[tuple[int, str], Counter]:
    """Per (node, `s` or `r`), the MAC trace's frames by kind (any packet type is DATA)."""
    lines: dict[tuple[int, str], Counter] = {}
    for line in (out / "trace.tr").read_text().splitlines():
        f = line.split()
        if f[3] != "MAC" or f[0] not in ("s", "r"):
            continue
        kind = f[6] if f[6] in ("RTS", "CTS", "ACK") else "DATA"
        lines.setdefault((int(f[2].strip("_")), f[0]), Counter())[kind] += 1
    return lines


def test_tracing_changes_no_result(runs):
    r, plain, _ = runs
    # Everything but the list of files written: flows, per-node counters, event count.
    assert {k for k in r.summary if r.summary[k] != plain.summary.get(k)} == {"outputs"}
    assert r.summary["flows"] and r.summary["events"] == plain.summary["events"]


def test_each_file_holds_the_frames_of_its_mac_trace_lines(runs):
    r, _, out = runs
    lines = mac_lines(out)
    assert sorted(p.name for p in out.glob("node*.pcap")) == [f"node{n}.pcap" for n in range(NODES)]
    totals: Counter = Counter()
    for n in range(NODES):
        got = {"s": Counter(), "r": Counter()}
        for _, _, f in frames(out / f"node{n}.pcap"):
            got["s" if sent_by(n, f) else "r"][kind_of(f)] += 1
        for way in ("s", "r"):
            want = lines.get((n, way), Counter())
            assert {k: got[way][k] for k in KINDS} == {k: want[k] for k in KINDS}, (n, way)
            totals.update({f"{way} {k}": got[way][k] for k in KINDS})
    # Every kind appears, both ways.
    assert all(totals[f"{w} {k}"] > 0 for w in "sr" for k in KINDS), totals


def test_data_frames_carry_ip_or_arp_and_rates_follow_the_mac(runs):
    _, _, out = runs
    seen = Counter()
    for n in range(NODES):
        for _, rt, f in frames(out / f"node{n}.pcap"):
            broadcast = receiver(f) == b"\xff" * 6
            unicast_data = kind_of(f) == "DATA" and not broadcast
            # ns-2 defaults: 1 Mb/s basic and data rate (radiotap: 500 kb/s units).
            assert rt.rate.val == 2
            if kind_of(f) != "DATA":
                continue
            assert not f.to_ds and not f.from_ds, "IBSS"
            assert f.data_frame.bssid == bytes([2, 0, 0, 0, 0, 0])
            assert le16(f.duration) == (0 if broadcast else 314), "broadcast: no NAV; unicast: SIFS + ACK at 1 Mb/s"
            llc = dpkt.llc.LLC(f.data)
            assert llc.dsap == llc.ssap == 0xAA and llc.type in (dpkt.ethernet.ETH_TYPE_IP, dpkt.ethernet.ETH_TYPE_ARP)
            if llc.type == dpkt.ethernet.ETH_TYPE_IP:
                ip = dpkt.ip.IP(bytes(llc.data))
                assert ip.len == len(bytes(llc.data)) and ip.v == 4
                # AODV control on UDP 654 is broadcast or unicast; TCP and CBR unicast.
                what = {6: "tcp", 17: "udp"}[ip.p]
                seen[what + (" unicast" if unicast_data else " broadcast")] += 1
            else:
                arp = dpkt.arp.ARP(bytes(llc.data))
                assert arp.hrd == 1 and arp.pro == 0x0800 and arp.hln == 6 and arp.pln == 4
                if arp.op == dpkt.arp.ARP_OP_REQUEST:
                    assert broadcast and arp.tha == b"\0" * 6
                    seen["arp request"] += 1
                else:
                    assert not broadcast and arp.tha == receiver(f)
                    seen["arp reply"] += 1
                assert arp.sha == transmitter(f)
    for what in ("tcp unicast", "udp unicast", "udp broadcast", "arp request", "arp reply"):
        assert seen[what] > 0, seen


def test_retry_bit_marks_the_data_frames_sent_again_and_the_counters_follow(runs):
    """The retry bit is on exactly the unicast DATA frames that repeat the node's previous
    DATA frame (same receiver and sequence number): the MAC holds one frame at a time.
    The summary's `mac_retries` counts RTS and DATA retransmissions (docs/metrics.md);
    from the frames: every RTS without a CTS and every DATA without an ACK is a timeout,
    and each timeout is a retry except the one that ends a frame at its retry limit."""
    r, _, out = runs
    nodes = {n["node"]: n for n in r.summary["nodes"]}
    total_retry_bits = total_retries = 0
    for n in range(NODES):
        prev = None
        retry_bits = repeats = 0
        c: Counter = Counter()
        for _, _, f in frames(out / f"node{n}.pcap"):
            k, mine = kind_of(f), sent_by(n, f)
            c[("s" if mine else "r") + k] += 1
            if k != "DATA" or not mine or receiver(f) == b"\xff" * 6:
                continue
            c["s unicast DATA"] += 1
            key = (receiver(f), le16(f.data_frame.frag_seq) >> 4)
            repeats += key == prev
            retry_bits += bool(f.retry)
            assert bool(f.retry) == (key == prev), (n, key)
            prev = key
        assert retry_bits == repeats
        s = nodes[n]
        timeouts = (c["sRTS"] - c["rCTS"]) + (c["s unicast DATA"] - c["rACK"])
        assert s["mac_retries"] == timeouts - s["mac_frames_failed"], (n, dict(c), s["mac_retries"], s["mac_frames_failed"])
        assert retry_bits <= s["mac_retries"]
        total_retry_bits += retry_bits
        total_retries += s["mac_retries"]
    assert total_retry_bits > 0, "the chain's hidden terminals make the MAC send DATA again"


TSHARK = shutil.which("tshark")


@pytest.mark.skipif(TSHARK is None, reason="tshark is not on PATH (apt-get install tshark)")
def test_wireshark_dissects_every_frame_of_node0(runs):
    _, _, out = runs
    n0 = str(out / "node0.pcap")

    def tshark(*args: str) -> list[str]:
        proc = subprocess.run([TSHARK, "-r", n0, *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    total = len(frames(out / "node0.pcap"))
    assert len(tshark("-Y", "wlan")) == total > 0, "every frame is dissected as 802.11"
    assert tshark("-Y", "_ws.malformed") == []
    assert tshark("-Y", "_ws.expert.severity >= error") == []
    assert tshark("-Y", "wlan.fcs.status == \"Bad\"") == []
    subtypes = Counter(int(v, 0) for v in tshark("-T", "fields", "-e", "wlan.fc.type_subtype"))
    lines = mac_lines(out)
    for k in KINDS:
        want = lines.get((0, "s"), Counter())[k] + lines.get((0, "r"), Counter())[k]
        assert subtypes[SUBTYPES[k]] == want, (k, subtypes)
    retries = len(tshark("-Y", "wlan.fc.retry == 1"))
    ours = sum(1 for _, _, f in frames(out / "node0.pcap") if f.retry)
    assert retries == ours
