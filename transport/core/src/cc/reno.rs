//! NewReno (RFC 5681, RFC 6582) as Linux runs it (`tcp_reno_cong_avoid`,
//! `tcp_reno_ssthresh` in `net/ipv4/tcp_cong.c`), on the base window machine
//! (`window.rs`): Reno is only its increase and decrease rule.
//!
//! * Increase (congestion avoidance): Linux `tcp_cong_avoid_ai(w = cwnd)`: +1 MSS once a
//!   window's worth of bytes has been acknowledged, so at most +1 MSS per RTT; one ACK of one
//!   MSS at cwnd = 10 MSS adds 0.1 MSS to the counter (144.8 B at MSS 1448).
//! * Decrease: ssthresh = max(cwnd/2, 2 MSS).
//!
//! Slow start, fast recovery (PRR by default), RTO, idle restart, cwnd-limited gating and
//! pacing (none by default; `--cc-opt paced=true`) are the window machine's; see
//! `docs/algorithms/reno.md` and `docs/algorithms/window.md`.

use super::window::{Increase, WindowCc, WindowConfig, WindowRule, WindowView};
use super::{AckEvent, CcConfig, CongestionController, RegistryError, SubflowInit, Uncoupled};

/// Reno's rule: w = cwnd in packets; ssthresh halves cwnd (the machine's default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenoRule;

impl WindowRule for RenoRule {
    fn increase(&mut self, w: &WindowView, _ack: &AckEvent, _acked_bytes: u64) -> Increase {
        Increase::PerAcked(w.cwnd_pkts())
    }
}

/// NewReno state of one subflow.
pub type Reno = WindowCc<RenoRule>;

/// Per-subflow factory; options were validated by [`build`].
pub fn from_config(cfg: &CcConfig, init: &SubflowInit) -> Reno {
    let window = WindowConfig::from_cc_config(cfg, init.mss_bytes).unwrap_or(WindowConfig {
        mss_bytes: init.mss_bytes,
        initial_window_pkts: cfg.initial_window_pkts,
        ..WindowConfig::default()
    });
    WindowCc::new(window, RenoRule)
}

/// Registry constructor; rejects bad `--cc-opt` values before any subflow exists.
pub fn build(cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    WindowConfig::from_cc_config(cfg, cfg.mss_bytes)?;
    Ok(Box::new(Uncoupled::new("reno", cfg, from_config)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::window::LossState;
    use crate::cc::{CcPhase, CongestionEvent, SubflowCc};
    use crate::units::Instant;
    use std::time::Duration;

    const MSS: u64 = 1448;

    fn reno() -> Reno {
        WindowCc::new(
            WindowConfig {
                mss_bytes: MSS,
                ..WindowConfig::default()
            },
            RenoRule,
        )
    }

    fn ack(acked_bytes: u64) -> AckEvent {
        AckEvent {
            acked_bytes,
            rtt_sample: Some(Duration::from_millis(50)),
            srtt: Duration::from_millis(50),
            min_rtt: Duration::from_millis(50),
            is_cwnd_limited: true,
            mss: MSS,
            ..AckEvent::default()
        }
    }

    /// cwnd = ssthresh = 10 MSS: congestion avoidance from the first ACK.
    fn in_ca_at_10_mss() -> Reno {
        let mut r = reno();
        r.window.set_ssthresh(10 * MSS);
        r
    }

    #[test]
    fn one_ca_ack_adds_144_8_bytes_and_ten_add_one_mss() {
        let mut r = in_ca_at_10_mss();
        r.on_ack(&ack(MSS));
        // 1448 · 1448 / 14480 = 144.8 B of progress, cwnd itself unchanged.
        assert!((r.window.cwnd_exact_bytes() - (10 * MSS) as f64 - 144.8).abs() < 1e-9);
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
        for _ in 0..9 {
            r.on_ack(&ack(MSS));
        }
        assert_eq!(r.cwnd_bytes(), 11 * MSS);
        assert_eq!(r.window.cwnd_cnt_bytes(), 0.0);
    }

    #[test]
    fn three_dupacks_at_flight_20_give_ssthresh_10_and_cwnd_10_after_recovery() {
        let mut r = reno();
        r.window.set_cwnd(20 * MSS);
        let loss = CongestionEvent::Loss {
            lost_bytes: MSS,
            largest_lost_sent_time: Instant::ZERO,
            inflight_bytes: 20 * MSS,
        };
        r.on_congestion(Instant::ZERO, &loss);
        assert_eq!(r.ssthresh_bytes(), Some(10 * MSS));
        assert_eq!(r.phase(), CcPhase::Recovery);
        // No growth during recovery whatever is acknowledged.
        r.on_ack(&AckEvent {
            in_recovery: true,
            inflight_bytes: 16 * MSS,
            ..ack(3 * MSS)
        });
        assert!(r.cwnd_bytes() <= 20 * MSS);
        r.on_recovery_exit(Instant::ZERO);
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
        assert_eq!(r.phase(), CcPhase::CongestionAvoidance);
    }

    #[test]
    fn rto_sets_one_mss_then_slow_start_and_a_repeat_keeps_ssthresh() {
        let mut r = reno();
        r.window.set_cwnd(20 * MSS);
        let rto = |repeat| CongestionEvent::Rto {
            inflight_bytes: 20 * MSS,
            repeat,
        };
        r.on_congestion(Instant::ZERO, &rto(false));
        assert_eq!(r.cwnd_bytes(), MSS);
        assert_eq!(r.ssthresh_bytes(), Some(10 * MSS));
        assert_eq!(r.phase(), CcPhase::Loss);
        // Backoff repeat: cwnd 1 MSS again, ssthresh stays 10 (not max(1/2, 2) = 2 MSS).
        r.on_congestion(Instant::ZERO, &rto(true));
        assert_eq!(r.ssthresh_bytes(), Some(10 * MSS));
        assert_eq!(r.cwnd_bytes(), MSS);
        // Slow start in the RTO-loss state: 1 → 2 MSS.
        r.on_ack(&AckEvent {
            in_rto_loss: true,
            ..ack(MSS)
        });
        assert_eq!(r.cwnd_bytes(), 2 * MSS);
        assert_eq!(r.window.state(), LossState::RtoLoss);
        // The loss state ends: cwnd is kept, slow start continues.
        r.on_recovery_exit(Instant::ZERO);
        assert_eq!(r.cwnd_bytes(), 2 * MSS);
        assert_eq!(r.phase(), CcPhase::SlowStart);
    }

    #[test]
    fn after_three_backoff_rtos_slow_start_regains_half_the_window_in_six_rtts() {
        // Linux tcp_enter_loss: ssthresh = 100/2 = 50 once; the two repeats leave it. Slow
        // start from 1 MSS doubles per RTT: 2, 4, 8, 16, 32, then 50 (capped at ssthresh;
        // the 14 MSS acked beyond it go to the CA counter at w = 50: no increase).
        use crate::cc::test_sender::TestSender;
        let mut s = TestSender::new(reno(), MSS, Duration::from_millis(50));
        s.cc.window.set_cwnd(100 * MSS);
        s.send_window();
        s.rto();
        s.advance_time(Duration::from_millis(400));
        s.send_window();
        s.rto();
        s.advance_time(Duration::from_millis(800));
        s.send_window();
        s.rto();
        assert_eq!(s.cc.ssthresh_bytes(), Some(50 * MSS));
        let mut cwnds = Vec::new();
        for _ in 0..6 {
            s.run_round_trip();
            cwnds.push(s.cc.cwnd_bytes() / MSS);
        }
        assert_eq!(cwnds, vec![2, 4, 8, 16, 32, 50]);
        assert_eq!(s.cc.phase(), CcPhase::CongestionAvoidance);
    }

    #[test]
    fn ca_adds_at_most_one_mss_per_window_of_acks() {
        let mut r = in_ca_at_10_mss();
        // One RTT = cwnd bytes acknowledged, in odd-sized ACKs.
        for bytes in [1000, 3000, 500, 7000, 2980] {
            r.on_ack(&ack(bytes));
        }
        assert_eq!(r.cwnd_bytes(), 11 * MSS);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut r = reno();
        r.on_ack(&AckEvent {
            is_cwnd_limited: false,
            ..ack(MSS)
        });
        assert_eq!(r.cwnd_bytes(), 10 * MSS);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_counts_in_ca() {
        let mut r = reno();
        r.window.set_ssthresh(11 * MSS);
        r.on_ack(&ack(2 * MSS));
        assert_eq!(r.cwnd_bytes(), 11 * MSS);
        assert_eq!(r.phase(), CcPhase::CongestionAvoidance);
        assert_eq!(r.window.cwnd_cnt_bytes(), MSS as f64);
    }

    #[test]
    fn unpaced_by_default_and_linux_rates_when_paced() {
        let r = reno();
        assert_eq!(r.pacing_rate(), None);
        let mut cfg = CcConfig::default();
        cfg.options.insert("paced".into(), "true".into());
        let init = SubflowInit {
            id: crate::units::SubflowId(0),
            now: Instant::ZERO,
            mss_bytes: MSS,
            seed: 1,
        };
        let mut r = from_config(&cfg, &init);
        assert_eq!(r.pacing_rate(), None, "no SRTT yet");
        r.on_ack(&AckEvent {
            srtt: Duration::from_millis(100),
            is_cwnd_limited: false,
            ..ack(0)
        });
        // 14480 B / 100 ms = 1.1584 Mbit/s, ×2 while cwnd < ssthresh/2 (ssthresh = ∞).
        let got = r.pacing_rate().unwrap().bps();
        assert!((got - 2.0 * 1.1584e6).abs() < 1.0, "{got}");
        r.window.set_ssthresh(15 * MSS);
        // cwnd 10 ≥ 15/2: ×1.2.
        let got = r.pacing_rate().unwrap().bps();
        assert!((got - 1.2 * 1.1584e6).abs() < 1.0, "{got}");
    }

    #[test]
    fn bad_option_is_rejected() {
        let mut cfg = CcConfig::default();
        cfg.options.insert("prr".into(), "sometimes".into());
        let err = build(&cfg).err().unwrap().to_string();
        assert!(err.contains("prr"), "{err}");
    }
}
