//! LIA, the Linked Increases Algorithm of RFC 6356 ("Coupled Congestion Control for
//! Multipath Transport Protocols"), as the out-of-tree Linux MPTCP kernel runs it
//! (`mptcp_coupled.c`, congestion control "coupled").
//!
//! # Model (w_i = cwnd in packets, r_i = SRTT, over the members R: established subflows
//! with an RTT sample)
//! ```text
//!   α        = w_tot · max_i(w_i / r_i²) / (Σ_i w_i / r_i)²
//!   CA ACK:  w_i += min(α / w_tot, 1 / w_i) per acknowledged packet        (RFC 6356 §3)
//!   loss:    Reno (ssthresh = max(w_i/2, 2)), slow start: Reno
//! ```
//! With one member α = 1/w_tot·w_tot… = 1 and the increase is Reno's 1/w_i.
//!
//! # Kernel form (default, `--cc-opt form=kernel`)
//! `mptcp_coupled.c` keeps a connection-wide integer α_k and grows a subflow by one packet
//! after max(w_i, ⌊2¹²/α_k⌋) + 1 ACKs (see Counting below; `growth=rfc`: after that many
//! acknowledged packets):
//! ```text
//!   b   = argmax_i w_i / r_i²   (ties: the later subflow, as the kernel's `>=`)
//!   α_k = ⌊2³² · w_b / ((Σ_j 2¹⁰ · w_j · r_b / r_j)²)⌋ = ⌊2¹² · w_b / (Σ_j w_j r_b/r_j)²⌋,
//!         1 if that is 0 or if at most one subflow is established
//! ```
//! 2¹²/α_k is w_tot/α of the RFC, so both forms agree up to the integer rounding. α_k is
//! recomputed where the kernel does: after every slow-start ACK, after each +1 packet, on
//! an RTO (`CA_EVENT_LOSS`), and on the first congestion-avoidance ACK after any loss-state
//! change (`set_state` sets `forced_update`). Between those it is stale, as in the kernel.
//!
//! `--cc-opt form=rfc` uses the RFC's per-ACK byte formula instead, with α recomputed from
//! the current windows on every ACK.
//!
//! # Counting (`--cc-opt growth=kernel`, the default; `growth=rfc`)
//! `mptcp_ccc_cong_avoid` counts ACKs, not acknowledged packets: per ACK
//! `if (snd_cwnd_cnt >= n) { snd_cwnd++; snd_cwnd_cnt = 0; } else snd_cwnd_cnt++;` with
//! n = max(w_i, ⌊2¹²/α_k⌋), so +1 packet takes n + 1 ACKs, and the ACK that ends slow start
//! adds nothing in congestion avoidance (the module returns after `tcp_slow_start`). That
//! is the default ([`Growth::Kernel`], the window machine's `Increase::PerAck`). With the
//! receiver's ACK every second packet it grows about half as fast as Linux Reno per RTT,
//! which counts acknowledged packets. `growth=rfc` counts acknowledged packets (RFC 6356
//! §3's "for each ACK received ... acknowledging bytes_acked", the pre-fix behaviour), and
//! slow start's leftover goes on to congestion avoidance.
//!
//! # Choices
//! * With one established subflow the kernel v0.95 computes α_k from that subflow alone
//!   (n = max(w, ⌊2¹²/⌊2¹²/w⌋⌋), a packet or two above w once w > 64); here n = w.
//! * Slow start, recovery (PRR), RTO and idle restart are the base window machine's
//!   (`window.rs`).
//!
//! Stats extras: `lia_alpha` (RFC α from the windows and SRTTs at the last ACK, 1 while
//! uncoupled), `lia_alpha_k` (the kernel's cached integer), `lia_acks_per_mss` (packets
//! acknowledged per +1 packet).
//! Documentation: `docs/algorithms/lia.md`.

use std::time::Duration;

use super::coupled::prelude::*;
use super::coupled::{Growth, WindowRtt, established_count, growth_option, member_windows};
use super::window::{Increase, LossState, Window, WindowRule, WindowView};

/// RFC 6356 α from (w_i in packets, r_i in seconds). 1 with fewer than one member.
pub fn alpha(w: &[f64], r: &[f64]) -> f64 {
    if w.is_empty() {
        return 1.0;
    }
    let w_tot: f64 = w.iter().sum();
    let best = w
        .iter()
        .zip(r)
        .map(|(w, r)| w / (r * r))
        .fold(f64::MIN, f64::max);
    let den: f64 = w.iter().zip(r).map(|(w, r)| w / r).sum();
    w_tot * best / (den * den)
}

/// RFC 6356 increase of w_i per acknowledged packet: min(α/w_tot, 1/w_i).
pub fn increase_per_packet(alpha: f64, w_tot: f64, w_i: f64) -> f64 {
    (alpha / w_tot).min(1.0 / w_i)
}

/// The kernel's integer α_k (`mptcp_ccc_recalc_alpha`): w in packets, SRTT in µs. Returns 1
/// with at most one subflow.
pub fn kernel_alpha(w: &[u64], srtt_us: &[u64]) -> u64 {
    if w.len() <= 1 {
        return 1;
    }
    // Linux keeps srtt_us scaled by 8; the scale cancels except in rounding.
    let rtt: Vec<u128> = srtt_us.iter().map(|&r| (r.max(1) as u128) << 3).collect();
    let (mut max_num, mut best_w, mut best_rtt) = (0u128, 0u128, 0u128);
    // The kernel walks the subflow list newest first (`mptcp_add_sock` links a new subflow
    // at the head), so with `>=` a tie goes to the oldest subflow: visit ours in that order.
    for (&wi, &ri) in w.iter().zip(&rtt).rev() {
        let tmp = ((wi as u128) << 32) / (ri * ri);
        if tmp >= max_num {
            max_num = tmp;
            best_w = wi as u128;
            best_rtt = ri;
        }
    }
    let sum: u128 = w
        .iter()
        .zip(&rtt)
        .map(|(&wi, &ri)| (((wi as u128) << 10) * best_rtt) / ri)
        .sum();
    let den = sum * sum;
    if den == 0 {
        return 1;
    }
    let a = ((best_w << 32) / den) as u64;
    a.max(1)
}

/// Packets acknowledged per +1 packet in the kernel form: max(w_i, ⌊2¹²/α_k⌋).
pub fn kernel_acks_per_increment(alpha_k: u64, w_i: u64) -> u64 {
    ((1u64 << 12) / alpha_k.max(1)).max(w_i)
}

/// Which increase formula runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiaForm {
    /// `mptcp_coupled.c`: integer α_k, +1 after max(w_i, 2¹²/α_k) packets.
    Kernel,
    /// RFC 6356 §3 byte formula with a float α.
    Rfc,
}

/// Connection state of LIA.
#[derive(Clone, Debug)]
pub struct Lia {
    pub form: LiaForm,
    pub growth: Growth,
    /// Kernel α_k (2¹² = α/w_tot of 1 packet per packet).
    pub alpha_k: u64,
    /// Kernel `forced_update`: recompute α_k on the next CA ACK.
    pub forced_update: bool,
    /// RFC α from the windows and SRTTs of the last ACK (for the stats; 1 uncoupled).
    pub last_alpha: f64,
}

impl Lia {
    pub fn new(form: LiaForm, growth: Growth) -> Lia {
        Lia {
            form,
            growth,
            alpha_k: 1,
            forced_update: false,
            last_alpha: 1.0,
        }
    }

    fn recalc(&mut self, m: &Members<()>, views: &[SubflowCcView]) {
        let ws = member_windows(m, views);
        self.alpha_k = if established_count(views) <= 1 || ws.is_empty() {
            1
        } else {
            let (w, r) = kernel_inputs(&ws);
            kernel_alpha(&w, &r)
        };
    }
}

fn kernel_inputs(ws: &[WindowRtt]) -> (Vec<u64>, Vec<u64>) {
    (
        ws.iter().map(|x| x.cwnd_pkts.floor() as u64).collect(),
        ws.iter().map(|x| x.srtt.as_micros() as u64).collect(),
    )
}

fn float_inputs(ws: &[WindowRtt]) -> (Vec<f64>, Vec<f64>) {
    (
        ws.iter().map(|x| x.cwnd_pkts).collect(),
        ws.iter()
            .map(|x| x.srtt.max(Duration::from_micros(1)).as_secs_f64())
            .collect(),
    )
}

/// The congestion-avoidance rule handed to the window machine for one ACK.
struct LiaRule {
    form: LiaForm,
    growth: Growth,
    /// The ACK began in slow start (set by `on_ack_start`).
    from_slow_start: bool,
    alpha_k: u64,
    coupled: bool,
    /// RFC form: α and w_tot (packets) of this ACK.
    alpha: f64,
    w_tot_pkts: f64,
}

impl WindowRule for LiaRule {
    fn on_ack_start(&mut self, window: &mut Window, _ack: &AckEvent) {
        self.from_slow_start = window.in_slow_start();
    }

    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, acked_bytes: u64) -> Increase {
        let kernel = self.growth == Growth::Kernel;
        if kernel && self.from_slow_start {
            // mptcp_ccc_cong_avoid returns after tcp_slow_start: no leftover.
            return Increase::Hold;
        }
        let w_pkts = w.cwnd_bytes / w.mss_bytes;
        match (self.form, self.coupled) {
            (LiaForm::Kernel, _) | (LiaForm::Rfc, false) => {
                let per = if self.coupled {
                    kernel_acks_per_increment(self.alpha_k, w_pkts)
                } else {
                    w_pkts
                };
                if kernel {
                    Increase::PerAck(per)
                } else if self.coupled {
                    Increase::PerAcked(per as f64)
                } else {
                    Increase::PerAcked(w.cwnd_pkts())
                }
            }
            (LiaForm::Rfc, true) => {
                // One packet's increase per ACK (kernel counting) or per acknowledged packet.
                let pkts = if kernel { 1.0 } else { w.pkts(acked_bytes) };
                Increase::Packets(
                    pkts * increase_per_packet(self.alpha, self.w_tot_pkts, w.cwnd_pkts()),
                )
            }
        }
    }
}

impl CoupledAlgo for Lia {
    type Sub = ();
    fn name(&self) -> &'static str {
        "lia"
    }
    fn new_sub(&mut self, _init: &SubflowInit) {}

    fn on_ack(
        &mut self,
        m: &mut Members<()>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    ) {
        let coupled = established_count(views) > 1;
        let before = m.get(sf).window.view();
        let in_ca = before.state != LossState::Recovery && !before.in_slow_start();
        if in_ca && self.forced_update && ack.is_cwnd_limited {
            self.recalc(m, views);
            self.forced_update = false;
        }
        let (alpha, w_tot_pkts) = {
            let ws = member_windows(m, views);
            let (w, r) = float_inputs(&ws);
            (alpha(&w, &r), w.iter().sum::<f64>().max(1.0))
        };
        self.last_alpha = if coupled { alpha } else { 1.0 };
        let mut rule = LiaRule {
            form: self.form,
            growth: self.growth,
            from_slow_start: false,
            alpha_k: self.alpha_k,
            coupled,
            alpha,
            w_tot_pkts,
        };
        m.get_mut(sf).window.on_ack(ack, &mut rule);
        let after = m.get(sf).window.view();
        // Kernel: recalc after each slow-start ACK and after each +1 in CA.
        if (before.in_slow_start() && ack.is_cwnd_limited && before.state != LossState::Recovery)
            || after.cwnd_bytes > before.cwnd_bytes
        {
            self.recalc(m, views);
        }
    }

    fn on_congestion(
        &mut self,
        m: &mut Members<()>,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        views: &[SubflowCcView],
    ) {
        // tcp_enter_loss: CA_EVENT_LOSS (α recalculated) comes with the ssthresh reduction,
        // only when the RTO reduces it, and before cwnd collapses to one packet.
        let reducing_rto = matches!(ev, CongestionEvent::Rto { repeat: false, .. })
            && m.get(sf).window.state() != LossState::Recovery;
        if reducing_rto {
            self.recalc(m, views);
        }
        m.get_mut(sf)
            .window
            .on_congestion(now, ev, &mut super::reno::RenoRule);
        self.forced_update = true;
    }

    fn on_recovery_exit(&mut self, m: &mut Members<()>, sf: SubflowId, now: Instant) {
        m.get_mut(sf)
            .window
            .on_recovery_exit(now, &mut super::reno::RenoRule);
        self.forced_update = true;
    }

    fn extra(&self, m: &Members<()>, sf: SubflowId, out: &mut Vec<(&'static str, f64)>) {
        let w_i = m.get(sf).window.cwnd_bytes() / m.get(sf).window.config().mss_bytes;
        out.push(("lia_alpha_k", self.alpha_k as f64));
        out.push(("lia_alpha", self.last_alpha));
        out.push((
            "lia_acks_per_mss",
            kernel_acks_per_increment(self.alpha_k, w_i) as f64,
        ));
    }
}

/// Registry constructor: options `form` = kernel (default) | rfc and `growth` = kernel
/// (default) | rfc.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    let form = match cfg.options.get("form").map(|s| s.as_str()) {
        None | Some("kernel") => LiaForm::Kernel,
        Some("rfc") => LiaForm::Rfc,
        Some(other) => {
            return Err(RegistryError::BadOption {
                key: "form".into(),
                value: other.into(),
                valid: "kernel (mptcp_coupled.c, default) or rfc (RFC 6356 §3)".into(),
            });
        }
    };
    let growth = growth_option(cfg)?;
    Ok(Box::new(Coupled::new(Lia::new(form, growth), cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled::testkit::{MSS, ack, force_ca, side_by_side_with_reno, view};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn rfc_alpha_and_increase_match_the_worked_example() {
        // w = (10, 20), r = (10, 100) ms: α = 2.083; increase (0.0694, 0.050).
        let (w, r) = ([10.0, 20.0], [0.010, 0.100]);
        let a = alpha(&w, &r);
        assert!(close(a, 2.083, 5e-4), "{a}");
        assert!(close(increase_per_packet(a, 30.0, 10.0), 0.0694, 5e-5));
        assert!(close(increase_per_packet(a, 30.0, 20.0), 0.050, 5e-4));
    }

    #[test]
    fn kernel_alpha_is_284_and_increments_every_14_and_20_packets() {
        let ak = kernel_alpha(&[10, 20], &[10_000, 100_000]);
        assert_eq!(ak, 284);
        assert_eq!(kernel_acks_per_increment(ak, 10), 14);
        assert_eq!(kernel_acks_per_increment(ak, 20), 20);
    }

    #[test]
    fn n_equal_subflows_give_alpha_one_over_n() {
        for n in 1..=4 {
            let w = vec![10.0; n];
            let r = vec![0.05; n];
            assert!(close(alpha(&w, &r), 1.0 / n as f64, 1e-12));
        }
    }

    #[test]
    fn one_subflow_with_growth_rfc_is_reno() {
        // Same ACK sequence to LIA with one subflow and to Reno: identical windows.
        let mut cfg = CcConfig::default();
        cfg.options.insert("growth".into(), "rfc".into());
        let mut lia = build(&cfg).unwrap();
        let windows = side_by_side_with_reno(lia.as_mut(), 3000, |i| MSS * (1 + i % 3), 700);
        for (i, (l, r)) in windows.iter().enumerate() {
            assert_eq!(l, r, "ack {i}");
        }
        assert!(windows.last().unwrap().0 > 20 * MSS);
    }

    /// LIA built from `cfg` with the worked example's two subflows in congestion avoidance:
    /// w = (10, 20) packets, r = (10, 100) ms.
    fn worked_example_in_ca(cfg: CcConfig) -> (Box<dyn CongestionController>, [SubflowCcView; 2]) {
        let mut lia = build(&cfg).unwrap();
        lia.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        lia.add_subflow(SubflowId(1), Instant::ZERO, MSS);
        let views = [view(0, 10, 10), view(1, 20, 100)];
        force_ca(lia.as_mut(), 0, 10, &views);
        force_ca(lia.as_mut(), 1, 20, &views);
        (lia, views)
    }

    #[test]
    fn two_subflows_grow_at_the_coupled_rate() {
        // w = (10, 20), r = (10, 100) ms in CA: n = 14 for subflow 0; the kernel's
        // `snd_cwnd_cnt >= n` test after one count per ACK gives +1 on the 15th ACK.
        let (mut lia, views) = worked_example_in_ca(CcConfig::default());
        let id = SubflowId(0);
        // First CA ACK recomputes α_k (forced by the recovery exit).
        for i in 0..14 {
            lia.on_ack(id, &ack(i, MSS, 10), &views);
            assert_eq!(lia.cwnd_bytes(id), 10 * MSS, "after {} ACKs", i + 1);
        }
        lia.on_ack(id, &ack(14, MSS, 10), &views);
        assert_eq!(lia.cwnd_bytes(id), 11 * MSS);
        let snap = lia.snapshot(id);
        let ak = snap.extra.iter().find(|e| e.0 == "lia_alpha_k").unwrap().1;
        // Recomputed after the increment with w = (11, 20).
        assert_eq!(ak as u64, kernel_alpha(&[11, 20], &[10_000, 100_000]));
    }

    #[test]
    fn rfc_form_grows_subflow_0_by_0_0694_per_packet() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("form".into(), "rfc".into());
        let (mut lia, views) = worked_example_in_ca(cfg);
        // 1/0.0694 = 14.4 packets per +1.
        for i in 0..14 {
            lia.on_ack(SubflowId(0), &ack(i, MSS, 10), &views);
        }
        assert_eq!(lia.cwnd_bytes(SubflowId(0)), 10 * MSS);
        lia.on_ack(SubflowId(0), &ack(14, MSS, 10), &views);
        assert_eq!(lia.cwnd_bytes(SubflowId(0)), 11 * MSS);
    }

    /// One-subflow LIA (kernel form) built with `opts`, in congestion avoidance at 10
    /// packets.
    fn one_subflow_in_ca(opts: &[(&str, &str)]) -> Coupled<Lia> {
        let mut cfg = CcConfig::default();
        for (k, v) in opts {
            cfg.options.insert(k.to_string(), v.to_string());
        }
        let growth = growth_option(&cfg).unwrap();
        let mut lia = Coupled::new(Lia::new(LiaForm::Kernel, growth), &cfg).unwrap();
        lia.add_subflow(SubflowId(0), Instant::ZERO, MSS);
        force_ca(&mut lia, 0, 10, &[view(0, 10, 50)]);
        lia
    }

    #[test]
    fn kernel_growth_counts_one_per_ack_and_needs_w_plus_1_acks() {
        // cwnd 10 in CA, every ACK acknowledging 2 packets (the receiver's ACK every second
        // packet). mptcp_ccc_cong_avoid: snd_cwnd_cnt 0, 1, ..., 10 over ten ACKs, then the
        // 11th finds cnt ≥ 10 → cwnd 11: 22 packets acknowledged per +1, where Reno needs 10.
        let mut lia = one_subflow_in_ca(&[]);
        let views = [view(0, 10, 50)];
        for i in 0..10 {
            lia.on_ack(SubflowId(0), &ack(i, 2 * MSS, 50), &views);
            assert_eq!(
                lia.cwnd_bytes(SubflowId(0)),
                10 * MSS,
                "after {} ACKs",
                i + 1
            );
        }
        lia.on_ack(SubflowId(0), &ack(10, 2 * MSS, 50), &views);
        assert_eq!(lia.cwnd_bytes(SubflowId(0)), 11 * MSS);
        // growth=rfc counts acknowledged packets as Reno: +1 after 5 such ACKs.
        let mut lia = one_subflow_in_ca(&[("growth", "rfc")]);
        for i in 0..4 {
            lia.on_ack(SubflowId(0), &ack(i, 2 * MSS, 50), &views);
        }
        assert_eq!(lia.cwnd_bytes(SubflowId(0)), 10 * MSS);
        lia.on_ack(SubflowId(0), &ack(4, 2 * MSS, 50), &views);
        assert_eq!(lia.cwnd_bytes(SubflowId(0)), 11 * MSS);
    }

    #[test]
    fn kernel_growth_drops_the_slow_start_leftover() {
        // cwnd 9 < ssthresh 10; an ACK of 5 packets: tcp_slow_start takes cwnd to 10 and
        // mptcp_ccc_cong_avoid returns, so the 4 packets left over count nothing; the next
        // 10 ACKs count 0..9 and +1 comes on the 11th. growth=rfc: the 4 left over go to
        // congestion avoidance (tcp_cong_avoid_ai), +1 after 6 more packets.
        for (opts, acks_to_grow) in [(&[][..], 11u64), (&[("growth", "rfc")][..], 6)] {
            let mut lia = one_subflow_in_ca(opts);
            let views = [view(0, 10, 50)];
            // A loss from 20 leaves ssthresh 10; put cwnd at 9 below it.
            lia.members.get_mut(SubflowId(0)).window.set_cwnd(9 * MSS);
            lia.on_ack(SubflowId(0), &ack(0, 5 * MSS, 50), &views);
            assert_eq!(lia.cwnd_bytes(SubflowId(0)), 10 * MSS, "{opts:?}");
            for i in 1..acks_to_grow {
                lia.on_ack(SubflowId(0), &ack(i, MSS, 50), &views);
                assert_eq!(lia.cwnd_bytes(SubflowId(0)), 10 * MSS, "{opts:?} {i}");
            }
            lia.on_ack(SubflowId(0), &ack(acks_to_grow, MSS, 50), &views);
            assert_eq!(lia.cwnd_bytes(SubflowId(0)), 11 * MSS, "{opts:?}");
        }
    }

    #[test]
    fn an_rto_recalculates_alpha_with_the_window_before_the_collapse() {
        // tcp_enter_loss raises CA_EVENT_LOSS before cwnd = 1: α_k from w = (10, 20), 284,
        // not from (1, 20).
        let (mut lia, views) = worked_example_in_ca(CcConfig::default());
        let rto = CongestionEvent::Rto {
            inflight_bytes: 10 * MSS,
            repeat: false,
        };
        lia.on_congestion(SubflowId(0), Instant::ZERO, &rto, &views);
        assert_eq!(lia.cwnd_bytes(SubflowId(0)), MSS);
        let snap = lia.snapshot(SubflowId(0));
        let ak = snap.extra.iter().find(|e| e.0 == "lia_alpha_k").unwrap().1;
        assert_eq!(ak as u64, 284);
        assert_ne!(284, kernel_alpha(&[1, 20], &[10_000, 100_000]));
    }

    #[test]
    fn bad_form_is_rejected() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("form".into(), "paper".into());
        let err = build(&cfg).err().unwrap().to_string();
        assert!(err.contains("form=paper") && err.contains("rfc"), "{err}");
    }
}
