//! Deterministic discrete-event simulator: the sans-IO core driven over modelled links in
//! virtual time. Every link is the emulator's (`linkemu::link::Link`, through
//! [`emulated_link`]), so simulated and emulated trials share one link model. Used by the test suite (`Pair`, `run_transfer`) and by the `mpsim` binary.
//!
//! Everything random (link loss, connection ids, CC draws) comes from the run seed, so a run
//! repeats exactly.

pub mod abr;
pub mod app_limited;
mod cross;
pub mod emulated_link;
mod endpoint;
pub mod net;
pub mod pair;
pub mod player;
pub mod timed;

pub use app_limited::{AppLimitedResult, AppLimitedSpec, run_app_limited};
pub use emulated_link::{Link, LinkCounters, LinkSpec};
pub use endpoint::per_path;
pub use net::{BulkPump, FlowId, FlowResult, LinkId, Net, Route, run_bulk, shared_bottleneck};
pub use pair::{
    DriveError, Pair, SimPath, TransferResult, TransferSpec, run_transfer, run_transfer_with,
};
pub use timed::{TimedResult, TimedSpec, run_timed};
