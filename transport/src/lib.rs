//! `mptransport`: a user-space multipath transport (MPTCP semantics over UDP) for the video
//! testbed. See docs/TRANSPORT.md for the design, wire format and measured figures.
//!
//! The protocol logic is the sans-IO crate `mptransport-core` (connection, subflows, CC,
//! schedulers, wire format), re-exported here under its own module names so that
//! `mptransport::cc::...` and `crate::cc::...` keep naming it. This crate adds what does I/O
//! or drives the core:
//!
//! * `runtime`: the UDP event loop of `mpproxy` (sockets, clock, stats and trace files).
//! * `sim`: the deterministic simulator (`mpsim`, the test suite) over linkemu's links.
//! * `report`: machine-readable figures of the tests (`REPRO_OUT`).

pub use mptransport_core::{
    Bandwidth, Config, Connection, Event, Instant, PathConfig, SubflowId, Transmit, cc, connection,
    pacer, ranges, rng, rtt, sched, subflow, units, wire,
};

pub mod report;
pub mod runtime;
pub mod sim;
