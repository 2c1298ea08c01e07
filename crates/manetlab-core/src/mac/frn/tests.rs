use super::*;
use crate::sim::{stream, Component};
use crate::wire::test_support;

fn tcp(uid: u64, payload_bytes: u32) -> Packet {
    test_support::tcp(uid, 0, 2, payload_bytes).with_tag(test_support::tag(0, uid))
}

/// Run node 0's MAC alone for `slots` slots (nobody answers): the slots in
/// which each uid was sent, and the other actions.
fn run_alone(
    p: FrnParams,
    pkts: Vec<Packet>,
    slots: u64,
) -> (BTreeMap<u64, Vec<u64>>, Vec<String>) {
    let shared = FrnShared::new(3, p);
    let mut mac = FrnMac::new(
        NodeId(0),
        MacParams::default(),
        shared,
        stream(9, 0, Component::Mac),
    );
    let mut out = Vec::new();
    for pkt in pkts {
        mac.enqueue(SimTime::ZERO, pkt, Some(NodeId(1)), &mut out);
    }
    let mut timers: Vec<(SimTime, TimerToken)> = Vec::new();
    let (mut sent, mut other) = (BTreeMap::<u64, Vec<u64>>::new(), Vec::new());
    let end = SimTime(p.slot.as_nanos() * slots);
    let mut now = SimTime::ZERO;
    loop {
        for a in out.drain(..) {
            match a {
                MacAction::SetTimer(_, at, tok) => timers.push((at, tok)),
                MacAction::Transmit => {
                    let f = mac.take_frame();
                    sent.entry(f.pkt.as_ref().expect("data").uid)
                        .or_default()
                        .push(now.as_nanos() / p.slot.as_nanos());
                    mac.tx_end();
                }
                a => other.push(format!("{a:?}")),
            }
        }
        let Some(i) = (0..timers.len()).min_by_key(|&i| timers[i].0) else {
            break;
        };
        let (at, tok) = timers.swap_remove(i);
        if at >= end {
            break;
        }
        now = at;
        mac.timer(at, tok, &mut out);
    }
    (sent, other)
}

#[test]
fn ack_segments_are_resent_sooner_than_data() {
    // Fig. 9's setting: data 5–6 slots, TCP ACKs 3–4; no failure detection.
    let p = FrnParams {
        resend_slots: (5, 6),
        ack_resend_slots: (3, 4),
        link_failure_threshold: 0,
        ..FrnParams::default()
    };
    let (sent, _) = run_alone(p, vec![tcp(1, 1000), tcp(2, 0)], 400);
    let gaps =
        |uid: u64| -> Vec<u64> { sent[&uid].windows(2).map(|w| w[1] - (w[0] + 1)).collect() };
    let (data, ack) = (gaps(1), gaps(2));
    assert!(data.len() > 20 && ack.len() > 20, "{data:?} {ack:?}");
    // A slot may be taken by the other packet, so a resend can slip by a slot or two.
    assert!(
        data.iter().all(|&g| (5..=8).contains(&g)),
        "data gaps {data:?}"
    );
    assert!(
        ack.iter().all(|&g| (3..=6).contains(&g)),
        "ACK gaps {ack:?}"
    );
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    assert!(
        mean(&ack) + 1.0 < mean(&data),
        "ACKs {} vs data {}",
        mean(&ack),
        mean(&data)
    );
}

#[test]
fn the_link_fails_at_the_threshold_and_its_packets_go_back_to_routing() {
    let p = FrnParams {
        link_failure_threshold: 3,
        ..FrnParams::default()
    };
    let (sent, actions) = run_alone(p, vec![tcp(1, 1000)], 100);
    assert_eq!(
        sent[&1].len(),
        3,
        "three transmissions, then the link is failed"
    );
    let failed = actions.iter().filter(|a| a.starts_with("TxFailed")).count();
    assert_eq!(failed, 1, "{actions:?}");
}

#[test]
fn lifetime_runs_out_while_waiting() {
    let p = FrnParams {
        link_failure_threshold: 0,
        lifetime_slots: 30,
        ..FrnParams::default()
    };
    let shared = FrnShared::new(3, p);
    let mut mac = FrnMac::new(
        NodeId(0),
        MacParams::default(),
        shared,
        stream(9, 0, Component::Mac),
    );
    let mut out = Vec::new();
    let mut pkt = tcp(1, 1000);
    pkt.frn = Some(Box::new(FrnHeader {
        expires_slot: 30,
        ..FrnHeader::default()
    }));
    mac.enqueue(SimTime::ZERO, pkt, Some(NodeId(1)), &mut out);
    let mut timers: Vec<(SimTime, TimerToken)> = Vec::new();
    let mut now = SimTime::ZERO;
    for _ in 0..1000 {
        for a in out.drain(..) {
            match a {
                MacAction::SetTimer(_, at, tok) => timers.push((at, tok)),
                MacAction::Transmit => {
                    mac.take_frame();
                    mac.tx_end()
                }
                MacAction::TxFailed(_) => {
                    let pkt = mac.take_parcel();
                    assert_eq!(
                        (pkt.uid, now.as_nanos() / p.slot.as_nanos()),
                        (1, 30),
                        "given back at the start of slot 30"
                    );
                    assert_eq!(mac.buffered(), 0);
                    return;
                }
                _ => {}
            }
        }
        let i = (0..timers.len())
            .min_by_key(|&i| timers[i].0)
            .expect("a timer");
        let (at, tok) = timers.swap_remove(i);
        now = at;
        mac.timer(at, tok, &mut out);
    }
    panic!("lifetime never ran out");
}

/// Node 0's MAC with `pkt` for node 1, driven until it has sent it once.
fn sent_once(pkt: Packet) -> (FrnMac, SimTime) {
    let p = FrnParams {
        link_failure_threshold: 0,
        ..FrnParams::default()
    };
    let mut mac = FrnMac::new(
        NodeId(0),
        MacParams::default(),
        FrnShared::new(6, p),
        stream(9, 0, Component::Mac),
    );
    let mut out = Vec::new();
    mac.enqueue(SimTime::ZERO, pkt, Some(NodeId(1)), &mut out);
    let mut timers: Vec<(SimTime, TimerToken)> = Vec::new();
    for _ in 0..100 {
        for a in out.drain(..) {
            match a {
                MacAction::SetTimer(_, at, tok) => timers.push((at, tok)),
                MacAction::Transmit => {
                    mac.take_frame();
                    mac.tx_end();
                    assert_eq!(mac.buffered(), 1);
                    return (
                        mac,
                        timers.iter().map(|t| t.0).min().unwrap_or(SimTime::ZERO),
                    );
                }
                _ => {}
            }
        }
        let i = (0..timers.len())
            .min_by_key(|&i| timers[i].0)
            .expect("a timer");
        let (at, tok) = timers.swap_remove(i);
        mac.timer(at, tok, &mut out);
    }
    panic!("never sent");
}

/// A data frame carrying `pkt` whose header names `prev` as its last sender.
fn relay(src: u32, dst: Option<u32>, seq: u16, pkt: &Packet, prev: u32) -> Frame {
    let mut pkt = pkt.clone();
    pkt.frn = Some(Box::new(FrnHeader {
        expires_slot: 1000,
        prev: Some(NodeId(prev)),
        ..FrnHeader::default()
    }));
    Frame {
        kind: FrameKind::Data,
        src: NodeId(src),
        dst: dst.map(NodeId),
        nav: SimDuration::ZERO,
        seq,
        retry: false,
        pkt: Some(std::rc::Rc::new(pkt)),
        arp: None,
        airtime: SimDuration::from_micros(100),
    }
}

#[test]
fn only_the_relay_of_our_own_copy_is_an_echo() {
    let pkt = tcp(1, 1000);
    let (mut mac, at) = sent_once(pkt.clone());
    let mut out = Vec::new();
    // Node 1 sends on a copy of the same packet that it had from node 5: not our echo.
    mac.rx_ok(at, &relay(1, Some(2), 40, &pkt, 5), &mut out);
    assert_eq!((mac.buffered(), mac.echoes), (1, 0));
    // Node 1 relays the copy it had from us: the echo.
    mac.rx_ok(at, &relay(1, Some(2), 41, &pkt, 0), &mut out);
    assert_eq!((mac.buffered(), mac.echoes), (0, 1));
}

#[test]
fn a_copy_back_round_a_loop_is_new_while_ours_awaits_its_echo() {
    // Ours was sent on (awaiting its echo): a copy arriving from node 3 is
    // routed, not discarded as a duplicate (it may be the only one left).
    let pkt = tcp(1, 1000);
    let (mut mac, at) = sent_once(pkt.clone());
    let mut out = Vec::new();
    mac.rx_ok(at, &relay(3, Some(0), 7, &pkt, 3), &mut out);
    assert!(
        out.iter()
            .any(|a| matches!(a, MacAction::Deliver(NodeId(3)))),
        "{out:?}"
    );
    assert_eq!(mac.outbox.last_parcel().map(|p| p.uid), Some(1));
    assert_eq!(mac.duplicates, 0);
    // A copy of a packet we hold and have not sent yet is a duplicate: ACKed, not routed.
    let mut mac = FrnMac::new(
        NodeId(0),
        MacParams::default(),
        FrnShared::new(6, FrnParams::default()),
        stream(9, 0, Component::Mac),
    );
    let mut out = Vec::new();
    mac.enqueue(SimTime::ZERO, pkt.clone(), Some(NodeId(1)), &mut out);
    out.clear();
    mac.rx_ok(SimTime::ZERO, &relay(3, Some(0), 7, &pkt, 3), &mut out);
    assert!(
        !out.iter().any(|a| matches!(a, MacAction::Deliver(..))),
        "{out:?}"
    );
    assert_eq!(mac.duplicates, 1);
}

/// Drive `mac` until `until`, answering nothing: (time, uid) of each transmission.
fn drive(
    mac: &mut FrnMac,
    out: &mut Vec<MacAction>,
    timers: &mut Vec<(SimTime, TimerToken)>,
    until: SimTime,
) -> Vec<(SimTime, u64)> {
    let (mut sent, mut now) = (Vec::new(), SimTime::ZERO);
    loop {
        for a in out.drain(..) {
            match a {
                MacAction::SetTimer(_, at, tok) => timers.push((at, tok)),
                MacAction::Transmit => {
                    let f = mac.take_frame();
                    sent.push((now, f.pkt.as_ref().map_or(0, |p| p.uid)));
                    mac.tx_end();
                }
                _ => {}
            }
        }
        let Some(i) = (0..timers.len()).min_by_key(|&i| timers[i].0) else {
            break;
        };
        if timers[i].0 >= until {
            break;
        }
        let (at, tok) = timers.swap_remove(i);
        now = at;
        mac.timer(at, tok, out);
    }
    sent
}

#[test]
fn a_relay_goes_first_in_the_slot_after_reception() {
    // An own packet and a relay both due in slot 1: the relay is sent in slot 1
    // within the first carrier-sense window; the own packet waits.
    let p = FrnParams {
        link_failure_threshold: 0,
        ..FrnParams::default()
    };
    for seed in 0..20 {
        let mut mac = FrnMac::new(
            NodeId(0),
            MacParams::default(),
            FrnShared::new(6, p),
            stream(seed, 0, Component::Mac),
        );
        let (mut out, mut timers) = (Vec::new(), Vec::new());
        mac.enqueue(SimTime::ZERO, tcp(1, 1000), Some(NodeId(1)), &mut out);
        let mut relay = tcp(2, 1000);
        relay.ip.src = NodeId(5);
        mac.enqueue(SimTime::ZERO, relay, Some(NodeId(1)), &mut out);
        let sent = drive(
            &mut mac,
            &mut out,
            &mut timers,
            SimTime(p.slot.as_nanos() * 2),
        );
        let (at, uid) = sent[0];
        let into_slot = at.as_nanos() - p.slot.as_nanos();
        assert_eq!(uid, 2, "seed {seed}: the relay first");
        assert!(
            into_slot < p.minislot.as_nanos() * p.cs_minislots as u64,
            "seed {seed}: relay sensed {into_slot} ns into the slot"
        );
    }
}

#[test]
fn an_echo_heard_late_is_no_failure() {
    // Threshold 1: the echo slot passes without one; the echo comes a slot
    // later, before the resend. Counted at the resend (default) it is no
    // failure; counted when the echo slot passes the link is declared failed.
    for (miss_at_resend, failures) in [(true, 0), (false, 1)] {
        let p = FrnParams {
            link_failure_threshold: 1,
            miss_at_resend,
            ..FrnParams::default()
        };
        let mut mac = FrnMac::new(
            NodeId(0),
            MacParams::default(),
            FrnShared::new(6, p),
            stream(9, 0, Component::Mac),
        );
        let (mut out, mut timers) = (Vec::new(), Vec::new());
        let pkt = tcp(1, 1000);
        mac.enqueue(SimTime::ZERO, pkt.clone(), Some(NodeId(1)), &mut out);
        let slot = p.slot.as_nanos();
        // Sent in slot 1, echo expected in slot 2; at slot 3's start it is late.
        let sent = drive(
            &mut mac,
            &mut out,
            &mut timers,
            SimTime(3 * slot + slot / 2),
        );
        assert_eq!(sent.len(), 1);
        mac.rx_ok(
            SimTime(3 * slot + slot / 2),
            &relay(1, Some(2), 9, &pkt, 0),
            &mut out,
        );
        assert_eq!(
            (mac.links_failed, mac.echoes),
            (failures, 1 - failures),
            "miss_at_resend {miss_at_resend}"
        );
    }
}
