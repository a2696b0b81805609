//! Congestion control: the interface between the connection core and the algorithms, and
//! the registry that maps names (`--cc reno`) to them.
//!
//! # Two levels
//! * [`CongestionController`] is what the connection talks to: one object per connection
//!   with per-subflow state inside. Coupled algorithms (LIA, OLIA, BALIA, wVegas, Coupled
//!   BBR, ...) implement it directly; every hook receives `views`, a read-only snapshot of
//!   every subflow, so they can couple on (w_i, r_i, x_i, phase).
//! * [`SubflowCc`] is the per-subflow algorithm of uncoupled CCs (Reno, CUBIC, BBR); the
//!   registry wraps one instance per subflow in [`Uncoupled`].
//!
//! # Order of calls made by the core (per subflow)
//! 1. `on_sent` for every packet that counts towards inflight, after it was added.
//! 2. On an ACK frame (and when the loss timer declares packets lost): the core runs loss
//!    detection and the delivery-rate sampler (`rate.rs`) first; then `on_recovery_exit` if
//!    the subflow's episode ended (see 4); then `on_congestion(Loss)` if a *new* fast-recovery
//!    episode starts — losses while an episode (fast recovery or RTO-loss) is in progress do
//!    not start another, as Linux stays in CA_Recovery/CA_Loss; they appear in
//!    `AckEvent::newly_lost_bytes` — then `on_ack` once per ACK frame that newly
//!    acknowledged or lost something.
//! 3. `on_congestion(Rto { repeat })` when the retransmission timeout fires, before the
//!    retransmission is sent. The first RTO of a loss episode has `repeat == false` and
//!    reduces ssthresh once (Linux `tcp_enter_loss`); the backoff repeats that follow while
//!    the subflow is still in the RTO-loss state with no ACK since the previous timeout, and
//!    a timeout during fast recovery (ssthresh was lowered when it began), have
//!    `repeat == true` and must not reduce ssthresh again (only collapse cwnd).
//! 4. `on_recovery_exit` when a fast-recovery episode ends OR when the RTO-loss state ends:
//!    everything sent before the episode began (before the latest timeout) is acknowledged or,
//!    if it was lost, delivered (Linux leaves CA_Recovery/CA_Loss when `snd_una` reaches
//!    `high_seq`; `connection/recovery.rs`). BBR restores `prior_cwnd` here.
//! 5. `on_idle_restart` before sending after the subflow was idle (nothing in flight) for
//!    longer than one RTO.
//!
//! Windows are in bytes, rates in [`Bandwidth`], times in [`Instant`]/[`Duration`]. No hook
//! reads a clock; `now` is always passed in.
//!
//! # Adding an algorithm
//! One file `cc/<name>.rs` with a `Config` + `Default`, a model comment, and one line in
//! [`REGISTRY`]. Names are unique (checked by a test and at lookup).
//!
//! Shared pieces: per-subflow state lives in a [`SubflowSlots`]; a controller whose subflows
//! each hold a [`SubflowCc`] and that couples only some hooks (Coupled BBR, the EMPTCP
//! family) implements [`PerSubflowCc`] and gets the other hooks from
//! `delegate_to_subflow_cc!()`; coupled window CCs build on `coupled.rs`.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::units::{Bandwidth, Instant, SubflowId};

// The registry (names -> constructors) lives beside this interface, in registry.rs.
pub use registry::{CcEntry, REGISTRY, build, check_unique, names};

// Algorithm modules: one line each (H-algos adds theirs here).
pub mod balia;
pub mod bbr;
pub mod compound;
pub mod coupled;
pub mod coupled_bbr;
pub mod cubic;
pub mod emptcp;
pub mod hbdp;
pub mod hmptcp;
pub mod lia;
pub mod mpcubic;
pub mod olia;
pub mod per_rtt;
pub mod rate;
pub mod registry;
pub mod reno;
#[cfg(test)]
pub mod test_sender;
pub mod window;
pub mod wmptcp;
pub mod wvegas;

/// What the algorithm is doing; logged as `cc_state` and shown to schedulers (AR&P pre-assigns
/// only in PROBE_BW).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CcPhase {
    SlowStart,
    CongestionAvoidance,
    /// Fast recovery after a loss.
    Recovery,
    /// After a retransmission timeout (RTO-Loss state: schedulers skip the subflow).
    Loss,
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl CcPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            CcPhase::SlowStart => "slow_start",
            CcPhase::CongestionAvoidance => "congestion_avoidance",
            CcPhase::Recovery => "recovery",
            CcPhase::Loss => "loss",
            CcPhase::Startup => "startup",
            CcPhase::Drain => "drain",
            CcPhase::ProbeBw => "probe_bw",
            CcPhase::ProbeRtt => "probe_rtt",
        }
    }
}

impl fmt::Display for CcPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), built by
/// `cc/rate.rs` before the CC sees the ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// (delivered − P.delivered) / interval.
    pub delivery_rate: Bandwidth,
    /// max(send interval, ack interval) of the sample.
    pub interval: Duration,
    /// Bytes delivered during `interval`.
    pub delivered_bytes: u64,
    /// Subflow's total delivered bytes when the sampled packet P was sent.
    pub prior_delivered_bytes: u64,
    /// P was sent while the sender had nothing to send (the sample may underestimate).
    pub is_app_limited: bool,
    /// RTT of packet P (now − P.sent).
    pub rtt: Duration,
    /// Bytes newly acknowledged by this ACK.
    pub newly_acked_bytes: u64,
    /// Bytes newly declared lost while processing this ACK.
    pub newly_lost_bytes: u64,
}

/// Everything a CC may want to know about one ACK frame on one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckEvent {
    pub now: Instant,
    /// Bytes newly acknowledged (payload + header bytes counted in inflight).
    pub acked_bytes: u64,
    /// RTT of the largest newly acked packet if it was newly acked (RFC 9002 §5.1).
    pub rtt_sample: Option<Duration>,
    pub srtt: Duration,
    pub min_rtt: Duration,
    /// Inflight after this ACK (and after removing lost packets).
    pub inflight_bytes: u64,
    /// Inflight before this ACK.
    pub prior_inflight_bytes: u64,
    /// The sender was limited by cwnd (not by the application) during the last RTT; window
    /// CCs grow only while this is true (`docs/algorithms/window.md`).
    pub is_cwnd_limited: bool,
    /// The subflow is (still) in a recovery episode after this ACK.
    pub in_recovery: bool,
    /// Send time of the largest newly acknowledged packet.
    pub largest_acked_sent_time: Instant,
    /// Delivery-rate sample, if this ACK produced one.
    pub rate: Option<RateSample>,
    /// Total bytes delivered (acked) on this subflow so far, including this ACK.
    pub delivered_bytes_total: u64,
    pub mss: u64,
    /// Bytes newly declared lost while processing this ACK, whether or not the ACK produced a
    /// rate sample (a discarded sample keeps its losses here, as `tcp_rate.c` does).
    pub newly_lost_bytes: u64,
    /// The subflow is in the RTO-loss state (Linux CA_Loss) after this ACK.
    pub in_rto_loss: bool,
    /// This ACK starts a new packet-timed round: it acknowledged a packet sent after the
    /// previous round ended (delivered-based, as `tcp_rate.c`/`tcp_bbr.c` count rounds).
    pub round_start: bool,
    /// RTT variation of the subflow's estimator after this ACK.
    pub rttvar: Duration,
    /// The ACK moved the subflow's cumulative point (Linux `FLAG_SND_UNA_ADVANCED`): in fast
    /// recovery, the lowest data the subflow still owed was delivered; otherwise, it
    /// acknowledged new data.
    pub snd_una_advanced: bool,
    /// After this ACK a packet sent before the largest acknowledged one is still in flight
    /// (not yet declared lost): data arrived out of order, Linux `tcp_left_out > 0`, which
    /// moves an Open socket to TCP_CA_Disorder (`tcp_try_keep_open`).
    pub disorder: bool,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CongestionEvent {
    /// Packet- or time-threshold loss that starts a new recovery episode.
    Loss {
        lost_bytes: u64,
        largest_lost_sent_time: Instant,
        inflight_bytes: u64,
    },
    /// Retransmission timeout: the whole window is considered lost. `inflight_bytes` is the
    /// inflight before the timeout declared it lost. `repeat` = a backoff repeat within the
    /// same RTO-loss episode: the CC must not reduce ssthresh again (`tcp_enter_loss` lowers
    /// it only when not already in CA_Loss or after an undo).
    Rto { inflight_bytes: u64, repeat: bool },
}

/// What a CC reports for logs and for schedulers. Fields an algorithm does not have are None.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcSnapshot {
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: Option<u64>,
    pub pacing_rate: Option<Bandwidth>,
    pub bw_estimate: Option<Bandwidth>,
    pub min_rtt: Option<Duration>,
    pub pacing_gain: Option<f64>,
    pub cwnd_gain: Option<f64>,
    /// Algorithm-specific extras (name, value), e.g. ("w_max_bytes", 1.4e5), ("alpha", 0.8).
    pub extra: Vec<(&'static str, f64)>,
}

/// Per-subflow congestion control of an uncoupled algorithm. Hooks other than `on_ack`,
/// `on_congestion` and the getters default to doing nothing.
pub trait SubflowCc: Send {
    /// Called for every packet counted in inflight, after adding it.
    fn on_sent(&mut self, _now: Instant, _bytes: u64, _inflight_bytes: u64) {}
    fn on_ack(&mut self, ack: &AckEvent);
    fn on_congestion(&mut self, now: Instant, ev: &CongestionEvent);
    /// A fast-recovery episode OR the RTO-loss state (CA_Loss) ended.
    fn on_recovery_exit(&mut self, _now: Instant) {}
    fn on_idle_restart(&mut self, _now: Instant) {}
    fn cwnd_bytes(&self) -> u64;
    /// `None` = the CC does not pace: the core sends unpaced, as Linux does without the fq
    /// qdisc (the seeds' kernels ran Reno and CUBIC this way). `Some(rate)` = pace at `rate`
    /// (BBR; window CCs with `paced=true` return cwnd/SRTT × gain, see `pacer.rs`).
    fn pacing_rate(&self) -> Option<Bandwidth>;
    /// Bytes a paced sender may send back to back to catch up after a late release (the
    /// pacer's burst credit). None = the pacer's default of 2 packets; BBR returns its send
    /// quantum, as Linux sends a TSO-autosized skb of that many segments at once.
    fn pacing_burst_bytes(&self) -> Option<u64> {
        None
    }
    fn phase(&self) -> CcPhase;
    fn bw_estimate(&self) -> Option<Bandwidth> {
        None
    }
    /// ssthresh if the algorithm has one (BLEST reads it); override when `snapshot` is costly.
    fn ssthresh_bytes(&self) -> Option<u64> {
        self.snapshot().ssthresh_bytes
    }
    fn snapshot(&self) -> CcSnapshot;
    /// The out-of-tree MPTCP kernel's penalisation of a slow subflow when the peer's window
    /// blocks (`mptcp_rcv_buf_optimization`: halve cwnd, and ssthresh unless in slow start;
    /// only in the Open state). Returns whether it applied; default: not supported.
    fn penalise_cwnd(&mut self) -> bool {
        false
    }
}

/// Read-only view of one subflow given to connection-level (coupled) controllers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubflowCcView {
    pub id: SubflowId,
    /// Handshake done and the subflow has an RTT sample (a member of the set of subflows the coupled CCs sum over).
    pub established: bool,
    pub cwnd_bytes: u64,
    pub srtt: Duration,
    pub min_rtt: Duration,
    pub inflight_bytes: u64,
    pub phase: CcPhase,
    pub bw_estimate: Option<Bandwidth>,
    pub mss: u64,
    /// In a fast-recovery episode.
    pub in_recovery: bool,
    /// In the RTO-loss state (Linux CA_Loss).
    pub in_rto_loss: bool,
    pub rttvar: Duration,
    /// Latest delivery-rate sample (not app-limited unless it exceeded the previous one).
    pub delivery_rate: Option<Bandwidth>,
    pub ssthresh_bytes: Option<u64>,
    /// Bytes sent on this subflow, retransmissions included.
    pub sent_bytes_total: u64,
    /// Bytes declared lost on this subflow (packet/time threshold and RTO).
    pub lost_bytes_total: u64,
    /// Bytes acknowledged on this subflow.
    pub delivered_bytes_total: u64,
    /// RTT samples taken in the current packet-timed round (wVegas needs a count).
    pub rtt_samples_this_round: u32,
    /// The most recent RTT sample, None before the first.
    pub last_rtt_sample: Option<Duration>,
}

/// Connection-level congestion controller with per-subflow state. Subflow ids are dense
/// small integers (`SubflowId(0)`, `SubflowId(1)`, ...); `add_subflow` is called before any
/// other hook for that id. `views` always lists every current subflow, including `sf`.
pub trait CongestionController: Send {
    fn name(&self) -> &'static str;
    fn add_subflow(&mut self, sf: SubflowId, now: Instant, mss: u64);
    fn remove_subflow(&mut self, sf: SubflowId);
    fn on_sent(&mut self, sf: SubflowId, now: Instant, bytes: u64, inflight_bytes: u64);
    fn on_ack(&mut self, sf: SubflowId, ack: &AckEvent, views: &[SubflowCcView]);
    fn on_congestion(
        &mut self,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        views: &[SubflowCcView],
    );
    /// A fast-recovery episode OR the RTO-loss state of `sf` ended.
    fn on_recovery_exit(&mut self, sf: SubflowId, now: Instant);
    fn on_idle_restart(&mut self, sf: SubflowId, now: Instant);
    fn cwnd_bytes(&self, sf: SubflowId) -> u64;
    /// `None` = unpaced (Linux without fq), `Some(rate)` = pace at `rate`.
    fn pacing_rate(&self, sf: SubflowId) -> Option<Bandwidth>;
    /// [`SubflowCc::pacing_burst_bytes`] of subflow `sf`; default: the pacer's own.
    fn pacing_burst_bytes(&self, _sf: SubflowId) -> Option<u64> {
        None
    }
    fn phase(&self, sf: SubflowId) -> CcPhase;
    fn bw_estimate(&self, sf: SubflowId) -> Option<Bandwidth>;
    fn ssthresh_bytes(&self, sf: SubflowId) -> Option<u64> {
        self.snapshot(sf).ssthresh_bytes
    }
    fn snapshot(&self, sf: SubflowId) -> CcSnapshot;
    /// [`SubflowCc::penalise_cwnd`] for subflow `sf`; default: not supported.
    fn penalise_cwnd(&mut self, _sf: SubflowId) -> bool {
        false
    }
    /// The path name of subflow `sf` (`--path wifi=...` → "wifi"), called after
    /// `add_subflow` and again when the server learns it from the subflow's HELLO. Algorithms
    /// with per-path options (H-MPTCP's `weight.<path>`) key on it; others ignore it.
    fn set_subflow_name(&mut self, _sf: SubflowId, _name: &str) {}
}

/// Settings shared by every algorithm plus free-form per-algorithm options
/// (`--cc-opt hystart=false`), read with [`CcConfig::flag`] / [`CcConfig::number`].
#[derive(Clone, Debug, PartialEq)]
pub struct CcConfig {
    pub mss_bytes: u64,
    /// Initial window in packets (IW = 10 MSS as RFC 6928 and Linux).
    pub initial_window_pkts: u64,
    /// Seed for algorithms that draw random numbers (BBR's PROBE_BW start phase); combine it
    /// with the subflow id so that subflows differ but runs repeat.
    pub seed: u64,
    pub options: BTreeMap<String, String>,
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig {
            mss_bytes: crate::units::DEFAULT_MSS_BYTES,
            initial_window_pkts: 10,
            seed: 1,
            options: BTreeMap::new(),
        }
    }
}

impl CcConfig {
    pub fn initial_window_bytes(&self) -> u64 {
        self.initial_window_pkts * self.mss_bytes
    }
    /// Boolean option `key` (true/false/on/off/1/0), `default` when absent.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, RegistryError> {
        match self.options.get(key).map(|s| s.as_str()) {
            None => Ok(default),
            Some("true" | "on" | "1" | "yes") => Ok(true),
            Some("false" | "off" | "0" | "no") => Ok(false),
            Some(other) => Err(RegistryError::BadOption {
                key: key.to_string(),
                value: other.to_string(),
                valid: "true|false|on|off|1|0".to_string(),
            }),
        }
    }
    /// Numeric option `key`, `default` when absent.
    pub fn number(&self, key: &str, default: f64) -> Result<f64, RegistryError> {
        match self.options.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| RegistryError::BadOption {
                    key: key.to_string(),
                    value: v.clone(),
                    valid: "a finite number".to_string(),
                }),
        }
    }
}

/// Errors from the CC and scheduler registries, worded for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryError {
    UnknownName {
        kind: &'static str,
        name: String,
        valid: Vec<&'static str>,
    },
    BadOption {
        key: String,
        value: String,
        valid: String,
    },
    Duplicate {
        kind: &'static str,
        name: &'static str,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::UnknownName { kind, name, valid } => {
                write!(
                    f,
                    "unknown {kind} '{name}'; valid names: {}",
                    valid.join(", ")
                )
            }
            RegistryError::BadOption { key, value, valid } => {
                write!(f, "option {key}={value} is not valid; expected {valid}")
            }
            RegistryError::Duplicate { kind, name } => {
                write!(f, "{kind} name '{name}' is registered twice")
            }
        }
    }
}

impl std::error::Error for RegistryError {}

/// What a per-subflow factory gets when a subflow is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubflowInit {
    pub id: SubflowId,
    pub now: Instant,
    pub mss_bytes: u64,
    /// `cfg.seed` mixed with the subflow id.
    pub seed: u64,
}

impl SubflowInit {
    /// The init of subflow `sf` of a controller whose run seed is `run_seed`.
    pub fn new(run_seed: u64, sf: SubflowId, now: Instant, mss_bytes: u64) -> SubflowInit {
        SubflowInit {
            id: sf,
            now,
            mss_bytes,
            seed: mix_seed(run_seed, sf.0 as u64 + 1),
        }
    }
}

/// Mixes a run seed with a subflow id (splitmix64 finaliser) so subflows draw different
/// but reproducible sequences.
pub fn mix_seed(seed: u64, salt: u64) -> u64 {
    let mut z = seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Per-subflow state of one controller, indexed by the dense subflow id. Using a subflow
/// before `add_subflow` (or after `remove_subflow`) is a bug in the core: it panics naming
/// the controller (`owner`).
#[derive(Clone, Debug)]
pub struct SubflowSlots<T> {
    owner: &'static str,
    slots: Vec<Option<T>>,
}

impl<T> SubflowSlots<T> {
    pub fn new(owner: &'static str) -> Self {
        SubflowSlots {
            owner,
            slots: Vec::new(),
        }
    }
    pub fn get(&self, sf: SubflowId) -> &T {
        self.slots
            .get(sf.index())
            .and_then(|s| s.as_ref())
            .unwrap_or_else(|| panic!("{}: subflow {sf} used before add_subflow", self.owner))
    }
    pub fn get_mut(&mut self, sf: SubflowId) -> &mut T {
        let owner = self.owner;
        self.slots
            .get_mut(sf.index())
            .and_then(|s| s.as_mut())
            .unwrap_or_else(|| panic!("{owner}: subflow {sf} used before add_subflow"))
    }
    /// The state of `sf` if it was added and not removed.
    pub fn find_mut(&mut self, sf: SubflowId) -> Option<&mut T> {
        self.slots.get_mut(sf.index()).and_then(|s| s.as_mut())
    }
    /// Adds (or replaces) the state of `sf`.
    pub fn insert(&mut self, sf: SubflowId, state: T) {
        if self.slots.len() <= sf.index() {
            self.slots.resize_with(sf.index() + 1, || None);
        }
        self.slots[sf.index()] = Some(state);
    }
    pub fn remove(&mut self, sf: SubflowId) {
        if let Some(slot) = self.slots.get_mut(sf.index()) {
            *slot = None;
        }
    }
    /// Every present subflow with its id, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (SubflowId, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (SubflowId(i as u8), s)))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().flatten()
    }
}

/// A controller whose per-subflow state is (or contains) a [`SubflowCc`] that handles
/// every hook but the ones the controller couples: [`delegate_to_subflow_cc!`] writes the
/// pass-through methods.
pub trait PerSubflowCc {
    type Cc: SubflowCc;
    fn subflow_cc(&self, sf: SubflowId) -> &Self::Cc;
    fn subflow_cc_mut(&mut self, sf: SubflowId) -> &mut Self::Cc;
}

/// Inside `impl CongestionController for X` where `X: PerSubflowCc`: the hooks `on_sent`,
/// `on_congestion`, `on_recovery_exit`, `on_idle_restart` and the getters `cwnd_bytes`,
/// `pacing_rate`, `pacing_burst_bytes`, `phase`, `bw_estimate`, `ssthresh_bytes`, each passed to the subflow's
/// [`SubflowCc`] (`views` unused). The controller writes `name`, `add_subflow`,
/// `remove_subflow`, `on_ack` and `snapshot` itself.
macro_rules! delegate_to_subflow_cc {
    () => {
        fn on_sent(&mut self, sf: SubflowId, now: Instant, bytes: u64, inflight_bytes: u64) {
            $crate::cc::PerSubflowCc::subflow_cc_mut(self, sf).on_sent(now, bytes, inflight_bytes)
        }
        fn on_congestion(
            &mut self,
            sf: SubflowId,
            now: Instant,
            ev: &CongestionEvent,
            _: &[SubflowCcView],
        ) {
            $crate::cc::PerSubflowCc::subflow_cc_mut(self, sf).on_congestion(now, ev)
        }
        fn on_recovery_exit(&mut self, sf: SubflowId, now: Instant) {
            $crate::cc::PerSubflowCc::subflow_cc_mut(self, sf).on_recovery_exit(now)
        }
        fn on_idle_restart(&mut self, sf: SubflowId, now: Instant) {
            $crate::cc::PerSubflowCc::subflow_cc_mut(self, sf).on_idle_restart(now)
        }
        fn cwnd_bytes(&self, sf: SubflowId) -> u64 {
            $crate::cc::PerSubflowCc::subflow_cc(self, sf).cwnd_bytes()
        }
        fn pacing_rate(&self, sf: SubflowId) -> Option<Bandwidth> {
            $crate::cc::PerSubflowCc::subflow_cc(self, sf).pacing_rate()
        }
        fn phase(&self, sf: SubflowId) -> CcPhase {
            $crate::cc::PerSubflowCc::subflow_cc(self, sf).phase()
        }
        fn bw_estimate(&self, sf: SubflowId) -> Option<Bandwidth> {
            $crate::cc::PerSubflowCc::subflow_cc(self, sf).bw_estimate()
        }
        fn ssthresh_bytes(&self, sf: SubflowId) -> Option<u64> {
            $crate::cc::PerSubflowCc::subflow_cc(self, sf).ssthresh_bytes()
        }
        fn penalise_cwnd(&mut self, sf: SubflowId) -> bool {
            $crate::cc::PerSubflowCc::subflow_cc_mut(self, sf).penalise_cwnd()
        }
        fn pacing_burst_bytes(&self, sf: SubflowId) -> Option<u64> {
            $crate::cc::PerSubflowCc::subflow_cc(self, sf).pacing_burst_bytes()
        }
    };
}
pub(crate) use delegate_to_subflow_cc;

/// Builds the per-subflow state of an uncoupled algorithm.
pub type SubflowFactory<T> = fn(&CcConfig, &SubflowInit) -> T;

/// Wraps an uncoupled per-subflow algorithm as a [`CongestionController`]: one independent
/// instance per subflow, `views` ignored.
pub struct Uncoupled<T: SubflowCc> {
    name: &'static str,
    cfg: CcConfig,
    make: SubflowFactory<T>,
    subflows: SubflowSlots<T>,
}

impl<T: SubflowCc> Uncoupled<T> {
    pub fn new(name: &'static str, cfg: &CcConfig, make: SubflowFactory<T>) -> Self {
        Uncoupled {
            name,
            cfg: cfg.clone(),
            make,
            subflows: SubflowSlots::new(name),
        }
    }
}

impl<T: SubflowCc> PerSubflowCc for Uncoupled<T> {
    type Cc = T;
    fn subflow_cc(&self, sf: SubflowId) -> &T {
        self.subflows.get(sf)
    }
    fn subflow_cc_mut(&mut self, sf: SubflowId) -> &mut T {
        self.subflows.get_mut(sf)
    }
}

impl<T: SubflowCc> CongestionController for Uncoupled<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn add_subflow(&mut self, sf: SubflowId, now: Instant, mss: u64) {
        let init = SubflowInit::new(self.cfg.seed, sf, now, mss);
        let state = (self.make)(&self.cfg, &init);
        self.subflows.insert(sf, state);
    }
    fn remove_subflow(&mut self, sf: SubflowId) {
        self.subflows.remove(sf);
    }
    fn on_ack(&mut self, sf: SubflowId, ack: &AckEvent, _views: &[SubflowCcView]) {
        self.subflows.get_mut(sf).on_ack(ack)
    }
    fn snapshot(&self, sf: SubflowId) -> CcSnapshot {
        self.subflows.get(sf).snapshot()
    }
    delegate_to_subflow_cc!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_validated() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("hystart".into(), "maybe".into());
        assert!(cfg.flag("hystart", true).is_err());
        cfg.options.insert("hystart".into(), "off".into());
        assert!(!cfg.flag("hystart", true).unwrap());
        assert_eq!(cfg.number("beta", 0.7).unwrap(), 0.7);
    }
}
