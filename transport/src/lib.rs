//! `mptransport`: a user-space multipath transport (MPTCP semantics over UDP) for the video
//! testbed. See docs/TRANSPORT.md for the design, wire format and measured figures.
//!
//! * `units`: Instant (time passed in), Bandwidth, SubflowId, PathMask.
//! * `cc`: congestion-control traits, registry, delivery-rate sampler, algorithms.
//! * `sched`: scheduler traits, registry, algorithms.

pub mod cc;
pub mod sched;
pub mod units;
