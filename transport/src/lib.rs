//! `mptransport`: a user-space multipath transport (MPTCP semantics over UDP) for the video
//! testbed. See docs/TRANSPORT.md for the design, wire format and measured figures.
//!
//! * `units`: Instant (time passed in), Bandwidth, SubflowId, PathMask.
//! * `cc`: congestion-control traits, registry, delivery-rate sampler, algorithms.
//! * `sched`: scheduler traits, registry, algorithms.

pub mod cc;
pub mod connection;
pub mod pacer;
pub mod ranges;
pub mod report;
pub mod rng;
pub mod rtt;
pub mod runtime;
pub mod sched;
pub mod sim;
pub mod subflow;
pub mod units;
pub mod wire;

pub use connection::{Config, Connection, Event, PathConfig, Transmit};
pub use units::{Bandwidth, Instant, SubflowId};
