//! Trace output in the field's formats: pcap (`pcap.rs`) for Wireshark/tcpdump and
//! ns-2's wireless trace text (`ns2.rs`) for existing awk scripts. Both writers
//! serialise the typed packets only when a trace is asked for.

pub mod ns2;
pub mod pcap;
