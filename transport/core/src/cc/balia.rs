//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang, Low, "Multipath
//! TCP: analysis, design, and implementation", IEEE/ACM Transactions on Networking 2016), as
//! the out-of-tree Linux MPTCP kernel runs it (`mptcp_balia.c`).
//!
//! # Model (x_k = w_k / r_k, α_i = max_k x_k / x_i, over the members R)
//! ```text
//!   CA ACK:  w_i += x_i / (r_i · (Σ_k x_k)²) · (1 + α_i)/2 · (4 + α_i)/5   per acked packet
//!   loss:    w_i −= (w_i / 2) · min(α_i, 1.5)           (floor 1 packet)
//! ```
//! The denominator is (Σx)², as in the kernel (some papers print Σ(x²)).
//!
//! # Kernel form (what runs)
//! `mptcp_balia_recalc_ai` caches two integers per subflow:
//! ```text
//!   x_k  = MSS · w_k · 8·10⁶ / srtt_us·8            bytes/s; all rates shifted right by 5
//!                                                   bits at a time while max x > 2²⁵
//!   α    = ⌊x_max / x_i⌋                             integer quotient
//!   ai   = ⌊⌊10 (Σx)² / (x_i + x_max)⌋ · w_i / (4 x_i + x_max)⌋   packets per +1 (w_i if 0)
//!   md   = ⌊⌊w_i / 2⌋ · min(α·2¹⁰, 1.5·2¹⁰) / 2¹⁰⌋
//! ```
//! 1/ai is the float increase above with the exact α; the integer α only affects md, so the
//! cut is exactly ½ unless x_i ≤ x_max / 2. ssthresh = max(w_i − md, 1) (and the window
//! machine's floor of 2). They are recomputed after every slow-start ACK, after each +1, on
//! an RTO (`CA_EVENT_LOSS`) and at the end of a recovery (`CA_EVENT_COMPLETE_CWR`). The
//! kernel's `forced_update` flag is written on the subflow but read on the meta socket, so
//! it never forces a recalculation; that is reproduced (no recalculation on state changes).
//! With at most one established subflow the kernel uses Reno: w_i packets per +1 and
//! ssthresh = max(w/2, 2).
//!
//! # Counting (`--cc-opt growth=kernel`, the default; `growth=rfc`)
//! `mptcp_balia_cong_avoid` counts ACKs: per ACK `if (snd_cwnd_cnt >= ai) { snd_cwnd++;
//! snd_cwnd_cnt = 0; } else snd_cwnd_cnt++;`, so +1 packet takes ai + 1 ACKs whatever they
//! acknowledged, and the ACK that ends slow start adds nothing in congestion avoidance.
//! `growth=rfc` counts acknowledged packets (the paper's per-packet increase) instead.
//!
//! # Choices
//! * The kernel v0.95 computes ai and md with one established subflow too (α = 1: ai ≈ w,
//!   md = ⌊w/2⌋); an older module returns ai = w, md = ⌊w/2⌋ there. Either way a subflow
//!   that was alone has md = ⌊w/2⌋ cached when a second one joins; here too (the cached
//!   values are Reno's while alone, not zero).
//!
//! Stats extras: `balia_ai` (packets per +1), `balia_md_pkts`, `balia_alpha` (float α_i),
//! `balia_rate_Bps` (x_i). Documentation: `docs/algorithms/balia.md`.

use super::coupled::prelude::*;
use super::coupled::{Growth, established_count, growth_option, member_windows};
use super::window::{
    Increase, LossState, Reduction, Window, WindowRule, WindowView, reno_ssthresh,
};

/// Kernel `rate_scale_limit`, `scale_num`, `alpha_scale`.
const RATE_SCALE_LIMIT: u32 = 25;
const SCALE_NUM: u32 = 5;
const ALPHA_SCALE: u32 = 10;

/// Paper form: increase of w_i per acknowledged packet (w in packets, r in seconds).
pub fn increase_per_packet(w: &[f64], r: &[f64], i: usize) -> f64 {
    let x: Vec<f64> = w.iter().zip(r).map(|(w, r)| w / r).collect();
    let sum: f64 = x.iter().sum();
    let x_max = x.iter().cloned().fold(f64::MIN, f64::max);
    let a = x_max / x[i];
    x[i] / (r[i] * sum * sum) * (1.0 + a) / 2.0 * (4.0 + a) / 5.0
}

/// Paper form: the decrease of w_i on a loss, (w_i/2)·min(α_i, 1.5).
pub fn decrease(w: &[f64], r: &[f64], i: usize) -> f64 {
    let x: Vec<f64> = w.iter().zip(r).map(|(w, r)| w / r).collect();
    let x_max = x.iter().cloned().fold(f64::MIN, f64::max);
    w[i] / 2.0 * (x_max / x[i]).min(1.5)
}

/// The kernel's cached integers of one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AiMd {
    /// Packets acknowledged per +1 packet; 0 = not computed (Reno).
    pub ai: u64,
    /// Packets taken off at a loss.
    pub md: u64,
    /// ⌊x_max / x_i⌋.
    pub alpha: u64,
}

/// `mptcp_balia_recalc_ai` for member `i`: w in packets, SRTT in µs, MSS in bytes.
pub fn kernel_ai_md(w: &[u64], srtt_us: &[u64], mss: u64, i: usize) -> AiMd {
    let rate_of = |k: usize| -> u128 {
        (mss as u128 * w[k] as u128 * (1_000_000u128 << 3)) / ((srtt_us[k].max(1) as u128) << 3)
    };
    let mut max_rate = 0u128;
    let mut sum_rate = 0u128;
    // The kernel's order: newest subflow first (`mptcp_add_sock` heads the connection list),
    // `>=`. Only the maximum's value is kept, so a tie cannot change ai or md.
    for k in (0..w.len()).rev() {
        let x = rate_of(k);
        sum_rate += x;
        if x >= max_rate {
            max_rate = x;
        }
    }
    let mut rate = rate_of(i);
    if rate == 0 {
        return AiMd::default();
    }
    let alpha = max_rate / rate;
    let mut shifts = 0u32;
    while max_rate > 1u128 << RATE_SCALE_LIMIT {
        max_rate >>= SCALE_NUM;
        shifts += 1;
    }
    if shifts > 0 {
        sum_rate = (0..w.len())
            .map(|k| rate_of(k) >> (SCALE_NUM * shifts))
            .sum();
        rate >>= SCALE_NUM * shifts;
    }
    let sum2 = sum_rate * sum_rate;
    let mut ai = (sum2 * 10) / (rate + max_rate).max(1);
    ai = (ai * w[i] as u128) / ((rate << 2) + max_rate).max(1);
    if ai == 0 {
        ai = w[i] as u128;
    }
    let md = ((w[i] as u128 >> 1) * (alpha << ALPHA_SCALE).min((3u128 << ALPHA_SCALE) >> 1))
        >> ALPHA_SCALE;
    AiMd {
        ai: ai as u64,
        md: md as u64,
        alpha: alpha as u64,
    }
}

/// Per-subflow state: the cached integers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BaliaSub {
    pub cached: AiMd,
    /// Float α_i and x_i (bytes/s) of the last recalculation, for the stats.
    pub alpha: f64,
    pub rate_bytes_per_s: f64,
    /// A recovery ended (`CA_EVENT_COMPLETE_CWR`): recalculate on the next ACK, where the
    /// views are at hand.
    pub recalc_pending: bool,
}

/// BALIA's connection object: how it counts.
#[derive(Clone, Debug)]
pub struct Balia {
    pub growth: Growth,
}

impl Default for Balia {
    fn default() -> Self {
        Balia {
            growth: Growth::Kernel,
        }
    }
}

impl Balia {
    fn recalc(m: &mut Members<BaliaSub>, sf: SubflowId, views: &[SubflowCcView]) {
        let ws = member_windows(m, views);
        let Some(i) = ws.iter().position(|x| x.id == sf) else {
            m.get_mut(sf).state.cached = AiMd::default();
            return;
        };
        if established_count(views) <= 1 {
            // The kernel's values with one subflow (`goto exit` in the older module; α = 1
            // in v0.95): ai = w, md = ⌊w/2⌋, cached for when a second subflow joins.
            let w = m.get(sf).window.cwnd_bytes() / m.get(sf).window.config().mss_bytes;
            m.get_mut(sf).state.cached = AiMd {
                ai: w,
                md: w >> 1,
                alpha: 1,
            };
            return;
        }
        let mss = m.get(sf).window.config().mss_bytes;
        let w: Vec<u64> = ws.iter().map(|x| x.cwnd_pkts.floor() as u64).collect();
        let r: Vec<u64> = ws.iter().map(|x| x.srtt.as_micros() as u64).collect();
        let cached = kernel_ai_md(&w, &r, mss, i);
        let x: Vec<f64> = ws
            .iter()
            .map(|x| x.cwnd_pkts * mss as f64 / x.srtt.as_secs_f64().max(1e-6))
            .collect();
        let x_max = x.iter().cloned().fold(f64::MIN, f64::max);
        let s = &mut m.get_mut(sf).state;
        s.cached = cached;
        s.rate_bytes_per_s = x[i];
        s.alpha = x_max / x[i].max(f64::MIN_POSITIVE);
    }
}

struct BaliaRule {
    cached: AiMd,
    coupled: bool,
    growth: Growth,
    /// The ACK began in slow start (set by `on_ack_start`).
    from_slow_start: bool,
}

impl WindowRule for BaliaRule {
    fn on_ack_start(&mut self, window: &mut Window, _ack: &AckEvent) {
        self.from_slow_start = window.in_slow_start();
    }
    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, _acked: u64) -> Increase {
        let per = if self.coupled && self.cached.ai > 0 {
            self.cached.ai
        } else {
            w.cwnd_bytes / w.mss_bytes
        };
        match self.growth {
            // mptcp_balia_cong_avoid returns after tcp_slow_start: no leftover.
            Growth::Kernel if self.from_slow_start => Increase::Hold,
            Growth::Kernel => Increase::PerAck(per),
            Growth::Rfc if self.coupled && self.cached.ai > 0 => Increase::PerAcked(per as f64),
            Growth::Rfc => Increase::PerAcked(w.cwnd_pkts()),
        }
    }
    fn ssthresh(&mut self, w: &WindowView, _cause: Reduction) -> u64 {
        if !self.coupled {
            return reno_ssthresh(w);
        }
        let pkts = (w.cwnd_bytes / w.mss_bytes)
            .saturating_sub(self.cached.md)
            .max(1);
        pkts * w.mss_bytes
    }
}

impl CoupledAlgo for Balia {
    type Sub = BaliaSub;
    fn name(&self) -> &'static str {
        "balia"
    }
    fn new_sub(&mut self, _init: &SubflowInit) -> BaliaSub {
        BaliaSub::default()
    }

    fn on_ack(
        &mut self,
        m: &mut Members<BaliaSub>,
        sf: SubflowId,
        ack: &AckEvent,
        views: &[SubflowCcView],
    ) {
        if m.get(sf).state.recalc_pending {
            m.get_mut(sf).state.recalc_pending = false;
            Balia::recalc(m, sf, views);
        }
        let before = m.get(sf).window.view();
        let mut rule = BaliaRule {
            cached: m.get(sf).state.cached,
            coupled: established_count(views) > 1,
            growth: self.growth,
            from_slow_start: false,
        };
        m.get_mut(sf).window.on_ack(ack, &mut rule);
        let after = m.get(sf).window.view();
        let slow_start_ack =
            before.state != LossState::Recovery && before.in_slow_start() && ack.is_cwnd_limited;
        if slow_start_ack || after.cwnd_bytes > before.cwnd_bytes {
            Balia::recalc(m, sf, views);
        }
    }

    fn on_congestion(
        &mut self,
        m: &mut Members<BaliaSub>,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        views: &[SubflowCcView],
    ) {
        // Linux recalculates at the recovery's end (CA_EVENT_COMPLETE_CWR, after cwnd =
        // ssthresh) and only then, on the same ACK, starts the next recovery if data lost
        // during the last one is still outstanding (tcp_fastretrans_alert: D, then E's
        // tcp_time_to_recover). A recalculation still pending must therefore happen before
        // this ssthresh, or it would subtract the md of the window before the first cut.
        if m.get(sf).state.recalc_pending {
            m.get_mut(sf).state.recalc_pending = false;
            Balia::recalc(m, sf, views);
        }
        let mut rule = BaliaRule {
            cached: m.get(sf).state.cached,
            coupled: established_count(views) > 1,
            growth: self.growth,
            from_slow_start: false,
        };
        let cwnd_before = m.get(sf).window.cwnd_bytes();
        let reduced = m.get_mut(sf).window.on_congestion(now, ev, &mut rule);
        if reduced && matches!(ev, CongestionEvent::Rto { .. }) {
            // tcp_enter_loss: CA_EVENT_LOSS right after the ssthresh reduction, with the
            // window before it collapses to one packet (and not on a backoff repeat).
            let w = &mut m.get_mut(sf).window;
            let collapsed = w.cwnd_bytes();
            w.set_cwnd(cwnd_before);
            Balia::recalc(m, sf, views);
            m.get_mut(sf).window.set_cwnd(collapsed);
        }
    }

    fn on_recovery_exit(&mut self, m: &mut Members<BaliaSub>, sf: SubflowId, now: Instant) {
        let me = m.get_mut(sf);
        me.window.on_recovery_exit(now, &mut super::reno::RenoRule);
        me.state.recalc_pending = true;
    }

    fn extra(&self, m: &Members<BaliaSub>, sf: SubflowId, out: &mut Vec<(&'static str, f64)>) {
        let s = &m.get(sf).state;
        out.push(("balia_ai", s.cached.ai as f64));
        out.push(("balia_md_pkts", s.cached.md as f64));
        out.push(("balia_alpha", s.alpha));
        out.push(("balia_rate_Bps", s.rate_bytes_per_s));
    }
}

/// Registry constructor: option `growth` = kernel (default) | rfc, and the window
/// machine's options.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    let growth = growth_option(cfg)?;
    Ok(Box::new(Coupled::new(Balia { growth }, cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled::testkit::{
        MSS, ack, coupled_with_subflows, one_packet_lost, side_by_side_with_reno, view,
    };

    #[test]
    fn equal_rates_tie_at_the_maximum() {
        // MSS 1000 B; 20 packets at 40 ms and 10 packets at 20 ms: x = 1000·w·8·10⁶/(8·srtt_µs)
        // = 500 000 B/s each, the kernel's argmax ties (value kept either way). α = 1, Σx = 10⁶,
        // no scaling (5·10⁵ ≤ 2²⁵): ai = ⌊⌊10·10¹²/10⁶⌋·w/(4·5·10⁵ + 5·10⁵)⌋ = 80 and 40
        // (the paper's 1/0.0125 = 80 acknowledged packets per +1 at w = 20), md = ⌊w/2⌋.
        let (w, r) = ([20, 10], [40_000, 20_000]);
        assert_eq!(
            kernel_ai_md(&w, &r, 1000, 0),
            AiMd {
                ai: 80,
                md: 10,
                alpha: 1
            }
        );
        assert_eq!(
            kernel_ai_md(&w, &r, 1000, 1),
            AiMd {
                ai: 40,
                md: 5,
                alpha: 1
            }
        );
        let paper = increase_per_packet(&[20.0, 10.0], &[0.040, 0.020], 0);
        assert!((1.0 / paper - 80.0).abs() < 1e-9, "{paper}");
    }

    #[test]
    fn paper_increase_and_decrease_match_the_worked_example() {
        let (w, r) = ([10.0, 20.0], [0.010, 0.100]);
        assert!((increase_per_packet(&w, &r, 0) - 0.0694).abs() < 5e-5);
        assert!((increase_per_packet(&w, &r, 1) - 0.0075).abs() < 5e-5);
        assert_eq!(w[0] - decrease(&w, &r, 0), 5.0);
        assert_eq!(w[1] - decrease(&w, &r, 1), 5.0);
    }

    #[test]
    fn kernel_integers_match_the_worked_example() {
        // x = (1000, 200) packets/s → α = (1, 5); ai = ⌊14.4⌋ and ⌊133.3⌋; 10 → 5, 20 → 5.
        let a = kernel_ai_md(&[10, 20], &[10_000, 100_000], MSS, 0);
        let b = kernel_ai_md(&[10, 20], &[10_000, 100_000], MSS, 1);
        assert_eq!((a.alpha, a.ai, a.md), (1, 14, 5));
        assert_eq!((b.alpha, b.ai, b.md), (5, 133, 15));
        // Rates above 2²⁵ B/s are scaled down; the answer stays within rounding of the
        // float 1/increase = 14.4·w_i/10 = 1440.
        let big = kernel_ai_md(&[1000, 2000], &[1_000, 10_000], MSS, 0);
        assert!((1438..=1440).contains(&big.ai), "{big:?}");
    }

    #[test]
    fn a_loss_cuts_the_slow_path_to_a_quarter() {
        let mut cc = coupled_with_subflows(Balia::default(), 2);
        let views = [view(0, 10, 10), view(1, 20, 100)];
        // Slow start to (10, 20) packets; each slow-start ACK recalculates ai/md.
        for _ in 0..10 {
            cc.on_ack(SubflowId(1), &ack(0, MSS, 100), &views);
        }
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 10 * MSS);
        assert_eq!(cc.cwnd_bytes(SubflowId(1)), 20 * MSS);
        assert_eq!(cc.members.get(SubflowId(1)).state.cached.md, 15);
        let loss = one_packet_lost(20);
        cc.on_congestion(SubflowId(1), Instant::ZERO, &loss, &views);
        assert_eq!(cc.ssthresh_bytes(SubflowId(1)), Some(5 * MSS));
    }

    #[test]
    fn a_recovery_started_on_the_exit_ack_uses_the_md_of_the_reduced_window() {
        let mut cc = coupled_with_subflows(Balia::default(), 2);
        // Subflow 1 is the fast one (x = 40/10 ms against 10/100 ms): α = 1, md = w/2.
        let views = [view(0, 10, 100), view(1, 40, 10)];
        for _ in 0..30 {
            cc.on_ack(SubflowId(1), &ack(0, MSS, 10), &views);
        }
        assert_eq!(cc.cwnd_bytes(SubflowId(1)), 40 * MSS);
        assert_eq!(cc.members.get(SubflowId(1)).state.cached.md, 20);
        let loss = one_packet_lost(40);
        cc.on_congestion(SubflowId(1), Instant::ZERO, &loss, &views);
        assert_eq!(cc.ssthresh_bytes(SubflowId(1)), Some(20 * MSS));
        // The recovery ends (cwnd = ssthresh = 20) and, on the same ACK, the next one starts:
        // the kernel has recalculated at CA_EVENT_COMPLETE_CWR with w = 20 (still α = 1), so
        // md = 10 and ssthresh = 20 - 10 = 10 packets (the stale md of 20 would give 1).
        cc.on_recovery_exit(SubflowId(1), Instant::ZERO);
        assert_eq!(cc.cwnd_bytes(SubflowId(1)), 20 * MSS);
        let views = [view(0, 10, 100), view(1, 20, 10)];
        cc.on_congestion(SubflowId(1), Instant::ZERO, &loss, &views);
        assert_eq!(cc.members.get(SubflowId(1)).state.cached.md, 10);
        assert_eq!(cc.ssthresh_bytes(SubflowId(1)), Some(10 * MSS));
    }

    #[test]
    fn a_subflow_that_was_alone_halves_at_its_first_loss_after_a_join() {
        // Subflow 0 grows alone to 20 packets (each slow-start ACK caches the kernel's
        // one-subflow values ai = 20, md = 10); subflow 1 joins; a loss on 0 before any
        // recalculation: ssthresh = 20 − 10 = 10. (Caching zeros while alone left md = 0:
        // ssthresh 20, no cut at all.)
        let mut cc = coupled_with_subflows(Balia::default(), 2);
        let alone = [
            view(0, 10, 50),
            SubflowCcView {
                established: false,
                ..view(1, 10, 50)
            },
        ];
        for _ in 0..10 {
            cc.on_ack(SubflowId(0), &ack(0, MSS, 50), &alone);
        }
        assert_eq!(cc.cwnd_bytes(SubflowId(0)), 20 * MSS);
        assert_eq!(cc.members.get(SubflowId(0)).state.cached.md, 10);
        let joined = [view(0, 20, 50), view(1, 10, 50)];
        cc.on_congestion(SubflowId(0), Instant::ZERO, &one_packet_lost(20), &joined);
        assert_eq!(cc.ssthresh_bytes(SubflowId(0)), Some(10 * MSS));
    }

    #[test]
    fn kernel_growth_counts_one_per_ack() {
        // One subflow at cwnd = ssthresh = 10 (a loss from 20): ai = w = 10, so +1 on the
        // 11th ACK whatever each acknowledged (2 packets here); growth=rfc after 5.
        for (growth, acks) in [(Growth::Kernel, 11), (Growth::Rfc, 5)] {
            let mut cc = coupled_with_subflows(Balia { growth }, 1);
            crate::cc::coupled::testkit::force_ca(&mut cc, 0, 10, &[view(0, 10, 50)]);
            let views = [view(0, 10, 50)];
            for i in 1..acks {
                cc.on_ack(SubflowId(0), &ack(i, 2 * MSS, 50), &views);
                assert_eq!(cc.cwnd_bytes(SubflowId(0)), 10 * MSS, "{growth:?} {i}");
            }
            cc.on_ack(SubflowId(0), &ack(acks, 2 * MSS, 50), &views);
            assert_eq!(cc.cwnd_bytes(SubflowId(0)), 11 * MSS, "{growth:?}");
        }
    }

    #[test]
    fn one_subflow_with_growth_rfc_is_reno() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("growth".into(), "rfc".into());
        let mut balia = build(&cfg).unwrap();
        let windows = side_by_side_with_reno(balia.as_mut(), 3000, |i| MSS * (1 + i % 2), 500);
        for (i, (b, r)) in windows.iter().enumerate() {
            assert_eq!(b, r, "ack {i}");
        }
    }
}
