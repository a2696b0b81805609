//! `mptransport-core`: the sans-IO core of the user-space multipath transport (MPTCP
//! semantics over UDP). It is given the time, the datagrams received and the application's
//! bytes, and returns the datagrams to send and the next timer; it never reads a clock,
//! opens a socket or a file, or parses a command line. The runtime (`mpproxy`) and the
//! simulator (`mpsim`) in the `mptransport` crate drive it. See docs/TRANSPORT.md.
//!
//! * `units`: Instant (time passed in), Bandwidth, SubflowId, PathMask.
//! * `connection`: the connection state machine (`Connection::handle_datagram`,
//!   `poll_transmit`, `handle_timeout`).
//! * `cc`: congestion-control traits, registry, delivery-rate sampler, algorithms.
//! * `sched`: scheduler traits, registry, algorithms, per-decision trace records.
//! * `wire`, `subflow`, `rtt`, `ranges`, `pacer`, `rng`: the pieces the connection is built of.

pub mod cc;
pub mod connection;
pub mod pacer;
pub mod ranges;
pub mod rng;
pub mod rtt;
pub mod sched;
pub mod subflow;
pub mod units;
pub mod wire;

pub use connection::{Config, Connection, Event, PathConfig, Transmit};
pub use units::{Bandwidth, Instant, SubflowId};
