//! linkemu: a user-space link emulator. The core (`link`, `queue`, `rate`,
//! `loss`, `schedule`) is sans-IO on injected virtual time; `nfqueue` and
//! `main.rs` are the thin shell that feeds it real packets and the clock.
//! `network` chains a scenario's links (paths, then shared bottlenecks) for
//! both the emulator and the simulator. `spec` holds the resolved scenario's
//! types, `scenario` their validation (which builds links to check them, so
//! the link model depends on `spec` only).

pub mod clock;
pub mod link;
pub mod log;
pub mod loss;
pub mod network;
pub mod nfqueue;
pub mod queue;
pub mod rate;
pub mod scenario;
pub mod schedule;
pub mod spec;
