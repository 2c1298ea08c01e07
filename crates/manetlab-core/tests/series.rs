//! `[outputs] series = true`: per-flow packet delay series and per-node queue series.

use manetlab_core::{run, Scenario};

fn chain(outputs: &str) -> manetlab_core::RunResult {
    let text = format!(
        "duration_s = 20\n[nodes]\ncount = 4\nplacement = {{ kind = \"chain\", spacing_m = 200 }}\n[radio]\n\
         [[flows]]\nkind = \"cbr\"\nsrc = 0\ndst = 3\npacket_size_bytes = 1000\nrate_kbps = 400\n[outputs]\n{outputs}\n"
    );
    run(&Scenario::from_toml_str(&text).unwrap())
}

#[test]
fn packet_series_reproduces_the_delay_and_jitter_summaries() {
    let r = chain("series = true");
    let f = &r.flows[0];
    let s = &r.series.as_ref().unwrap().flows[0];
    assert_eq!(s.t_s.len() as u64, f.rx_packets);
    assert!(s.t_s.windows(2).all(|w| w[0] <= w[1]), "arrival order");
    let mean = s.delay_s.iter().sum::<f64>() / s.delay_s.len() as f64;
    assert!((mean - f.delay_mean_s.unwrap()).abs() < 1e-9);
    // Paper 004: jitter(i) = delay(i+1) − delay(i); the summary is the mean |jitter|.
    let jitter: Vec<f64> = s.delay_s.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_abs = jitter.iter().map(|j| j.abs()).sum::<f64>() / jitter.len() as f64;
    assert!((mean_abs - f.jitter_mean_s.unwrap()).abs() < 1e-9);
}

#[test]
fn queue_series_on_change_and_sampled() {
    let r = chain("series = true");
    let q = &r.series.as_ref().unwrap().queues[0];
    assert!(
        q.len_pkts.windows(2).all(|w| w[0] != w[1]),
        "event-driven: a point per change"
    );
    assert_eq!(
        q.len_pkts.iter().max().copied(),
        Some(r.nodes[0].ifq_max_pkts)
    );
    let s = chain("series = true\nseries_interval_s = 0.5");
    let q = &s.series.as_ref().unwrap().queues[1];
    assert_eq!(
        q.t_s.len(),
        41,
        "0, 0.5, ..., 20 s (the end of the run included)"
    );
    assert!((q.t_s[3] - 1.5).abs() < 1e-12);
    assert!(
        chain("pcap_nodes = [0]").series.is_none(),
        "off unless asked for"
    );
}
