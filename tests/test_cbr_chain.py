"""CBR over a chain of point-to-point links, checked through the Python API
against what the link parameters predict:

* below capacity, received throughput equals the offered load;
* above capacity, it equals the bottleneck's capacity times payload/(payload + 20);
* with a single packet in an empty network, the end-to-end delay is the sum over
  links of (size·8/bandwidth + propagation delay), size = payload + 20 bytes (IP; no UDP header, as ns-2's Agent/UDP).
"""

from __future__ import annotations

import math

import pytest

import manetlab
from _util import HEADERS, chain


@pytest.mark.parametrize(
    ("payload", "rate_kbps", "bandwidths"),
    [(512, 200.0, [1.0, 1.0, 1.0]), (1000, 500.0, [1.0, 2.0, 1.0]), (64, 50.0, [0.1, 10.0])],
)
def test_below_capacity_throughput_equals_offered_load(payload: int, rate_kbps: float, bandwidths: list[float]) -> None:
    # Stop sending at 9 s of 10 so every packet arrives before the run ends.
    flow = {"packet_size_bytes": payload, "rate_kbps": rate_kbps, "stop_s": 9.0}
    f = manetlab.run(chain(bandwidths, [10.0] * len(bandwidths), flow, 10.0)).flows.iloc[0]
    interval_s = payload * 8 / (rate_kbps * 1e3)
    assert f["tx_packets"] == math.ceil(9.0 / interval_s - 1e-9)
    assert f["rx_packets"] == f["tx_packets"] and f["pdr"] == 1.0
    drops = [c for c in f.index if c.startswith("drops_")]
    assert {"drops_ifq.IFQ", "drops_mac.RET", "drops_rtr.NRTE"} <= set(drops), "every drop key is present"
    assert all(f[c] == 0 for c in drops), "nothing dropped below capacity"
    assert f["in_flight_packets"] == 0 and f["delivered_packets"] == f["tx_packets"]
    # Whole packets in a 9 s window: within one packet's worth of the offered rate.
    one_packet_kbps = payload * 8 / 9.0 / 1e3
    assert abs(f["throughput_kbps"] - rate_kbps) <= one_packet_kbps
    assert f["throughput_kbps"] == pytest.approx(f["rx_packets"] * payload * 8 / 9.0 / 1e3, rel=1e-12)


@pytest.mark.parametrize(
    ("payload", "offered_kbps", "bandwidths", "bottleneck"),
    [
        (512, 2000.0, [1.0, 1.0, 1.0], 0),  # equal links: the source's queue overflows
        (1000, 3000.0, [2.0, 2.0, 2.0], 0),
        (512, 1500.0, [2.0, 1.0, 2.0], 1),  # a slow middle link: node 1's queue overflows
    ],
)
def test_above_capacity_throughput_equals_link_capacity(payload: int, offered_kbps: float, bandwidths: list[float], bottleneck: int) -> None:
    r = manetlab.run(chain(bandwidths, [5.0] * len(bandwidths), {"packet_size_bytes": payload, "rate_kbps": offered_kbps}, 20.0))
    f = r.flows.iloc[0]
    capacity_kbps = min(bandwidths) * 1e3 * payload / (payload + HEADERS)
    assert f["throughput_kbps"] == pytest.approx(capacity_kbps, rel=0.01)
    assert f["throughput_kbps"] < capacity_kbps, "no more than the bottleneck can carry"
    # Every drop is a queue overflow at the node in front of the bottleneck.
    nodes = r.nodes
    assert nodes.loc[bottleneck, "drops_ifq.IFQ"] > 0
    assert nodes["drops_ifq.IFQ"].sum() == nodes.loc[bottleneck, "drops_ifq.IFQ"] == f["drops_ifq.IFQ"]
    links = r.links.set_index(["from", "to"])
    assert links.loc[(bottleneck, bottleneck + 1), "utilization"] > 0.99
    assert links.loc[(bottleneck, bottleneck + 1), "max_queue_pkts"] == 50, "default queue limit"


@pytest.mark.parametrize(
    ("payload", "bandwidths", "delays_ms"),
    [(512, [1.0, 1.0, 1.0], [10.0, 10.0, 10.0]), (300, [1.0, 2.0, 0.5], [10.0, 5.0, 20.0]), (1, [11.0], [0.0])],
)
def test_empty_network_delay_is_transmission_plus_propagation(payload: int, bandwidths: list[float], delays_ms: list[float]) -> None:
    flow = {"packet_size_bytes": payload, "interval_s": 1.0, "max_packets": 1}
    f = manetlab.run(chain(bandwidths, delays_ms, flow, 5.0)).flows.iloc[0]
    size_bits = (payload + HEADERS) * 8
    expected_s = sum(size_bits / (bw * 1e6) + d / 1e3 for bw, d in zip(bandwidths, delays_ms))
    assert (f["tx_packets"], f["rx_packets"]) == (1, 1)
    # Transmission times are rounded up to whole nanoseconds, one per link at most.
    assert abs(f["delay_mean_s"] - expected_s) <= len(bandwidths) * 1e-9
    assert f["delay_min_s"] == f["delay_max_s"] == f["delay_mean_s"]
    assert math.isnan(f["jitter_mean_s"]), "one packet: no jitter sample"


def test_delay_is_the_same_in_both_directions() -> None:
    s = chain([1.0, 2.0, 0.5], [10.0, 5.0, 20.0], {"interval_s": 1.0, "max_packets": 1}, 5.0)
    s["flows"].append({"kind": "cbr", "src": 3, "dst": 0, "interval_s": 1.0, "max_packets": 1})
    f = manetlab.run(s).flows
    assert f.loc[0, "delay_mean_s"] == f.loc[1, "delay_mean_s"]
