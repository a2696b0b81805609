//! Plumbing shared by the coupled window CCs (LIA, OLIA, BALIA, wVegas, MPCubic): one
//! [`Window`] (the base window machine) plus algorithm state per subflow, and a
//! connection-level algorithm object that sees all of them.
//!
//! An algorithm implements [`CoupledAlgo`]; [`Coupled`] turns it into a
//! [`CongestionController`]. The hooks receive every member, so a rule can read the other
//! subflows' windows (current, not the core's possibly older copy in `views`) and take
//! SRTT and establishment from `views`.
//!
//! "Members" of the coupling are the subflows that are established and have an RTT sample
//! (the set R of the papers; the kernel's `mptcp_sk_can_send(sk) && srtt`).

use std::time::Duration;

use super::reno::RenoRule;
use super::window::{Window, WindowConfig};
use super::{
    AckEvent, CcConfig, CcPhase, CcSnapshot, CongestionController, CongestionEvent, RegistryError,
    SubflowCcView, SubflowInit, SubflowSlots,
};
use crate::units::{Bandwidth, Instant, SubflowId};

/// What every coupled window CC file (`lia.rs`, `olia.rs`, `balia.rs`, `wvegas.rs`,
/// `mpcubic.rs`) needs: `use super::coupled::prelude::*;`.
pub mod prelude {
    pub use super::{Coupled, CoupledAlgo, Members};
    pub use crate::cc::{
        AckEvent, CcConfig, CongestionController, CongestionEvent, RegistryError, SubflowCcView,
        SubflowInit,
    };
    pub use crate::units::{Instant, SubflowId};
}

/// One subflow of a coupled CC.
#[derive(Clone, Debug)]
pub struct Member<S> {
    pub id: SubflowId,
    pub window: Window,
    pub state: S,
}

/// All subflows of a coupled CC, indexed by dense subflow id.
#[derive(Clone, Debug)]
pub struct Members<S> {
    slots: SubflowSlots<Member<S>>,
}

impl<S> Default for Members<S> {
    fn default() -> Self {
        Members {
            slots: SubflowSlots::new("coupled cc"),
        }
    }
}

impl<S> Members<S> {
    pub fn get(&self, sf: SubflowId) -> &Member<S> {
        self.slots.get(sf)
    }
    pub fn get_mut(&mut self, sf: SubflowId) -> &mut Member<S> {
        self.slots.get_mut(sf)
    }
    pub fn iter(&self) -> impl Iterator<Item = &Member<S>> {
        self.slots.iter().map(|(_, m)| m)
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Member<S>> {
        self.slots.iter_mut()
    }
    fn insert(&mut self, m: Member<S>) {
        self.slots.insert(m.id, m);
    }
    fn remove(&mut self, sf: SubflowId) {
        self.slots.remove(sf);
    }
}

/// The view of `sf` in `views`, if listed.
pub fn view_of(views: &[SubflowCcView], sf: SubflowId) -> Option<&SubflowCcView> {
    views.iter().find(|v| v.id == sf)
}

/// `sf` takes part in the coupling: established with an RTT sample.
pub fn is_member(views: &[SubflowCcView], sf: SubflowId) -> bool {
    view_of(views, sf).is_some_and(|v| v.established && !v.srtt.is_zero())
}

/// Kernel `cnt_established`: established subflows (RTT sample or not).
pub fn established_count(views: &[SubflowCcView]) -> usize {
    views.iter().filter(|v| v.established).count()
}

/// How congestion avoidance counts, `--cc-opt growth=` of LIA, OLIA and BALIA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// As the out-of-tree MPTCP kernel modules (`mptcp_ccc_cong_avoid`,
    /// `mptcp_olia_cong_avoid`, `mptcp_balia_cong_avoid`), the default: each ACK counts once
    /// whatever it acknowledged (with the receiver's ACK every second packet, half the
    /// per-packet rate), and the ACK that ends slow start adds nothing in congestion
    /// avoidance (the modules return after `tcp_slow_start`, dropping its leftover).
    Kernel,
    /// As the papers and RFC 6356 §3: the increase is per acknowledged packet (bytes / MSS)
    /// and slow start's leftover goes on to congestion avoidance, as Linux Reno counts
    /// (`tcp_cong_avoid_ai(acked)`).
    Rfc,
}

/// Option `growth` = kernel (default) | rfc.
pub fn growth_option(cfg: &CcConfig) -> Result<Growth, RegistryError> {
    match cfg.options.get("growth").map(|s| s.as_str()) {
        None | Some("kernel") => Ok(Growth::Kernel),
        Some("rfc") => Ok(Growth::Rfc),
        Some(other) => Err(RegistryError::BadOption {
            key: "growth".into(),
            value: other.into(),
            valid: "kernel (one count per ACK, as the MPTCP kernel modules; default) or rfc \
                    (per acknowledged packet, RFC 6356 §3)"
                .into(),
        }),
    }
}

/// (window in packets, SRTT) of one member, the inputs of every coupled formula.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowRtt {
    pub id: SubflowId,
    pub cwnd_pkts: f64,
    pub srtt: Duration,
}

/// Current (w, r) of every member, from the members' windows and the views' SRTT.
pub fn member_windows<S>(m: &Members<S>, views: &[SubflowCcView]) -> Vec<WindowRtt> {
    m.iter()
        .filter(|x| is_member(views, x.id))
        .map(|x| WindowRtt {
            id: x.id,
            cwnd_pkts: x.window.cwnd_bytes() as f64 / x.window.config().mss_bytes as f64,
            srtt: view_of(views, x.id).map_or(Duration::ZERO, |v| v.srtt),
        })
        .collect()
}

/// A coupled algorithm: per-subflow state `Sub` plus whatever connection state it holds in
/// `self`. Hooks not overridden run the window machine with Reno's rule.
pub trait CoupledAlgo: Send + 'static {
    type Sub: Send;
    fn name(&self) -> &'static str;
    fn new_sub(&mut self, init: &SubflowInit) -> Self::Sub;
    fn on_ack(
        &mut self,
        m: &mut Members<Self::Sub>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    );
    fn on_congestion(
        &mut self,
        m: &mut Members<Self::Sub>,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        views: &[SubflowCcView],
    ) {
        let _ = views;
        m.get_mut(sf).window.on_congestion(now, ev, &mut RenoRule);
    }
    fn on_recovery_exit(&mut self, m: &mut Members<Self::Sub>, sf: SubflowId, now: Instant) {
        m.get_mut(sf).window.on_recovery_exit(now, &mut RenoRule);
    }
    fn on_sent(
        &mut self,
        m: &mut Members<Self::Sub>,
        sf: SubflowId,
        now: Instant,
        bytes: u64,
        inflight_bytes: u64,
    ) {
        m.get_mut(sf)
            .window
            .on_sent(now, bytes, inflight_bytes, &mut RenoRule);
    }
    fn on_idle_restart(&mut self, m: &mut Members<Self::Sub>, sf: SubflowId, now: Instant) {
        m.get_mut(sf).window.on_idle_restart(now, &mut RenoRule);
    }
    /// Per-subflow values for the stats (`CcSnapshot::extra`).
    fn extra(&self, _m: &Members<Self::Sub>, _sf: SubflowId, _out: &mut Vec<(&'static str, f64)>) {}
}

/// A [`CoupledAlgo`] as a [`CongestionController`].
pub struct Coupled<A: CoupledAlgo> {
    algo: A,
    cfg: CcConfig,
    window_cfg: WindowConfig,
    pub members: Members<A::Sub>,
}

impl<A: CoupledAlgo> Coupled<A> {
    /// Validates the window machine's options (`prr`, `paced`, ...) in `cfg`.
    pub fn new(algo: A, cfg: &CcConfig) -> Result<Self, RegistryError> {
        let window_cfg = WindowConfig::from_cc_config(cfg, cfg.mss_bytes)?;
        Ok(Coupled {
            algo,
            cfg: cfg.clone(),
            window_cfg,
            members: Members::default(),
        })
    }
    pub fn algo(&self) -> &A {
        &self.algo
    }
}

impl<A: CoupledAlgo> CongestionController for Coupled<A> {
    fn name(&self) -> &'static str {
        self.algo.name()
    }
    fn add_subflow(&mut self, sf: SubflowId, now: Instant, mss: u64) {
        let init = SubflowInit::new(self.cfg.seed, sf, now, mss);
        let state = self.algo.new_sub(&init);
        self.members.insert(Member {
            id: sf,
            window: Window::new(WindowConfig {
                mss_bytes: mss,
                ..self.window_cfg
            }),
            state,
        });
    }
    fn remove_subflow(&mut self, sf: SubflowId) {
        self.members.remove(sf);
    }
    fn on_sent(&mut self, sf: SubflowId, now: Instant, bytes: u64, inflight_bytes: u64) {
        self.algo
            .on_sent(&mut self.members, sf, now, bytes, inflight_bytes)
    }
    fn on_ack(&mut self, sf: SubflowId, ack: &AckEvent, views: &[SubflowCcView]) {
        self.algo.on_ack(&mut self.members, sf, ack, views)
    }
    fn on_congestion(
        &mut self,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        views: &[SubflowCcView],
    ) {
        self.algo
            .on_congestion(&mut self.members, sf, now, ev, views)
    }
    fn on_recovery_exit(&mut self, sf: SubflowId, now: Instant) {
        self.algo.on_recovery_exit(&mut self.members, sf, now)
    }
    fn on_idle_restart(&mut self, sf: SubflowId, now: Instant) {
        self.algo.on_idle_restart(&mut self.members, sf, now)
    }
    fn cwnd_bytes(&self, sf: SubflowId) -> u64 {
        self.members.get(sf).window.cwnd_bytes()
    }
    fn penalise_cwnd(&mut self, sf: SubflowId) -> bool {
        self.members.get_mut(sf).window.penalise()
    }
    fn pacing_rate(&self, sf: SubflowId) -> Option<Bandwidth> {
        self.members.get(sf).window.pacing_rate()
    }
    fn phase(&self, sf: SubflowId) -> CcPhase {
        self.members.get(sf).window.phase()
    }
    fn bw_estimate(&self, _sf: SubflowId) -> Option<Bandwidth> {
        None
    }
    fn ssthresh_bytes(&self, sf: SubflowId) -> Option<u64> {
        self.members.get(sf).window.ssthresh_bytes()
    }
    fn snapshot(&self, sf: SubflowId) -> CcSnapshot {
        let mut snap = self.members.get(sf).window.snapshot(&RenoRule);
        self.algo.extra(&self.members, sf, &mut snap.extra);
        snap
    }
}

#[cfg(test)]
pub mod testkit {
    //! Drives a [`CongestionController`] with hand-made ACKs and views (unit tests).
    use super::*;

    pub const MSS: u64 = 1448;

    pub fn view(id: u8, cwnd_pkts: u64, srtt_ms: u64) -> SubflowCcView {
        SubflowCcView {
            id: SubflowId(id),
            established: true,
            cwnd_bytes: cwnd_pkts * MSS,
            srtt: Duration::from_millis(srtt_ms),
            min_rtt: Duration::from_millis(srtt_ms),
            inflight_bytes: 0,
            phase: CcPhase::CongestionAvoidance,
            bw_estimate: None,
            mss: MSS,
            in_recovery: false,
            in_rto_loss: false,
            rttvar: Duration::ZERO,
            delivery_rate: None,
            ssthresh_bytes: None,
            sent_bytes_total: 0,
            lost_bytes_total: 0,
            delivered_bytes_total: 0,
            rtt_samples_this_round: 0,
            last_rtt_sample: None,
        }
    }

    pub fn ack(now_ms: u64, acked_bytes: u64, srtt_ms: u64) -> AckEvent {
        AckEvent {
            now: Instant::from_nanos(now_ms * 1_000_000),
            acked_bytes,
            rtt_sample: Some(Duration::from_millis(srtt_ms)),
            srtt: Duration::from_millis(srtt_ms),
            min_rtt: Duration::from_millis(srtt_ms),
            is_cwnd_limited: true,
            mss: MSS,
            ..AckEvent::default()
        }
    }

    /// `algo` under the default config, with subflows 0 to `subflows` - 1 added at time zero.
    pub fn coupled_with_subflows<A: CoupledAlgo>(algo: A, subflows: u8) -> Coupled<A> {
        let mut cc = Coupled::new(algo, &CcConfig::default()).unwrap();
        for id in 0..subflows {
            cc.add_subflow(SubflowId(id), Instant::ZERO, MSS);
        }
        cc
    }

    /// One packet lost (sent at time zero) with `inflight_pkts` packets in flight.
    pub fn one_packet_lost(inflight_pkts: u64) -> CongestionEvent {
        CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: inflight_pkts * MSS,
        }
    }

    /// One subflow each of `cc` and of Reno, fed the same `n` ACKs (`acked(i)` bytes each,
    /// SRTT 50 ms) with a loss after every `loss_every`-th ACK (inflight = `cc`'s window),
    /// the recovery ending at once. Returns both windows (bytes) after every ACK: a coupled
    /// CC with one subflow must reduce to Reno.
    pub fn side_by_side_with_reno(
        cc: &mut dyn CongestionController,
        n: u64,
        acked: impl Fn(u64) -> u64,
        loss_every: u64,
    ) -> Vec<(u64, u64)> {
        let mut reno = crate::cc::reno::build(&CcConfig::default()).unwrap();
        let views = [view(0, 10, 50)];
        let id = SubflowId(0);
        cc.add_subflow(id, Instant::ZERO, MSS);
        reno.add_subflow(id, Instant::ZERO, MSS);
        let mut out = Vec::new();
        for i in 0..n {
            let a = ack(i, acked(i), 50);
            cc.on_ack(id, &a, &views);
            reno.on_ack(id, &a, &views);
            if i % loss_every == loss_every - 1 {
                let loss = CongestionEvent::Loss {
                    lost_bytes: MSS,
                    largest_lost_sent_time: Instant::ZERO,
                    inflight_bytes: cc.cwnd_bytes(id),
                };
                cc.on_congestion(id, Instant::ZERO, &loss, &views);
                reno.on_congestion(id, Instant::ZERO, &loss, &views);
                cc.on_recovery_exit(id, Instant::ZERO);
                reno.on_recovery_exit(id, Instant::ZERO);
            }
            out.push((cc.cwnd_bytes(id), reno.cwnd_bytes(id)));
        }
        out
    }

    /// Grows subflow `sf` of `cc` by slow start to `top_pkts`, then a loss from that window
    /// and the recovery exit: the window the CC's cut leaves, in congestion avoidance.
    pub fn grow_then_lose(
        cc: &mut dyn CongestionController,
        sf: u8,
        top_pkts: u64,
        views: &[SubflowCcView],
    ) {
        let id = SubflowId(sf);
        let top = top_pkts * MSS;
        while cc.cwnd_bytes(id) < top {
            let need = top - cc.cwnd_bytes(id);
            cc.on_ack(
                id,
                &ack(0, need.min(64 * MSS), views[0].srtt.as_millis() as u64),
                views,
            );
        }
        let loss = CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: top,
        };
        cc.on_congestion(id, Instant::ZERO, &loss, views);
        cc.on_recovery_exit(id, Instant::ZERO);
    }

    /// Puts subflow `sf` of `cc` at `cwnd_pkts` in congestion avoidance: a loss from a
    /// window of 2·cwnd gives ssthresh = cwnd, the recovery exit sets cwnd = ssthresh.
    pub fn force_ca(
        cc: &mut dyn CongestionController,
        sf: u8,
        cwnd_pkts: u64,
        views: &[SubflowCcView],
    ) {
        grow_then_lose(cc, sf, 2 * cwnd_pkts, views);
        let id = SubflowId(sf);
        assert_eq!(
            cc.cwnd_bytes(id),
            cwnd_pkts * MSS,
            "force_ca({sf}, {cwnd_pkts})"
        );
    }
}
