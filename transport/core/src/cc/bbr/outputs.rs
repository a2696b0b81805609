//! What BBR's model becomes: the pacing rate, the send quantum, the cwnd target with its
//! quantization budget and ACK-aggregation allowance, and the cwnd update (Linux
//! `bbr_set_pacing_rate`, `bbr_tso_segs_goal`, `bbr_inflight`, `bbr_update_ack_aggregation`,
//! `bbr_set_cwnd`). The model these read is updated in `bbr.rs`.

use std::time::Duration;

use super::*;

impl Bbr {
    pub(super) fn pacing_rate_for(&self, bw_bytes_per_s: f64, gain: f64) -> Bandwidth {
        let margin = 1.0 - self.cfg.pacing_margin_percent / 100.0;
        Bandwidth::from_bytes_per_s(bw_bytes_per_s * gain * margin)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain·cwnd/SRTT (1 ms without an SRTT).
    pub(super) fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(s) if !s.is_zero() => {
                self.has_seen_rtt = true;
                s
            }
            _ => Duration::from_millis(1),
        };
        let bw = self.cwnd_bytes as f64 / rtt.as_secs_f64();
        self.pacing_rate = self.pacing_rate_for(bw, HIGH_GAIN);
    }

    /// Pacing = gain·bw; before the pipe is full never lower it (STARTUP's initial rate
    /// may exceed the first, small samples).
    pub(super) fn set_pacing_rate(&mut self, gain: f64, srtt: Option<Duration>) {
        if !self.has_seen_rtt && srtt.is_some_and(|s| !s.is_zero()) {
            self.init_pacing_rate(srtt);
        }
        let mut rate = self.pacing_rate_for(self.bw(), gain);
        if self.mode == Mode::ProbeBw
            && self.cycle.min_pkts_per_rtprop > 0.0
            && let Some(rtprop) = self.min_rtt.filter(|r| !r.is_zero())
        {
            let floor =
                self.cycle.min_pkts_per_rtprop * self.mss_bytes as f64 / rtprop.as_secs_f64();
            rate = rate.max(Bandwidth::from_bytes_per_s(floor));
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_tso_segs_goal`: the data of one pacing interval of 2^-10 s
    /// (`sk_pacing_rate >> sk_pacing_shift`, shift 10), at most `GSO_LEGACY_MAX_SIZE - 1 -
    /// MAX_TCP_HEADER` bytes, in whole packets, at least `bbr_min_tso_segs` (1 below
    /// 1.2 Mbit/s, else 2), at most 127.
    pub(super) fn send_quantum_pkts(&self) -> u64 {
        let rate = self.pacing_rate.bytes_per_s();
        let min_segs = if rate * 8.0 < MIN_TSO_RATE_BPS { 1 } else { 2 };
        let bytes = (rate / PACING_SHIFT_DIVISOR).min(TSO_MAX_BYTES as f64) as u64;
        (bytes / self.mss_bytes).clamp(min_segs, MAX_TSO_SEGS)
    }

    /// BDP in packets (unrounded), None without an RTprop.
    pub fn bdp_pkts(&self, bw: Bandwidth) -> Option<f64> {
        self.min_rtt
            .map(|rtt| bw.bytes_in(rtt) / self.mss_bytes as f64)
    }

    /// Linux `bbr_inflight` (`bbr_bdp` + `bbr_quantization_budget`): ⌈gain·BDP⌉ (IW
    /// without an RTprop) + 3 send quanta, rounded up to an even number of packets, +2 in
    /// PROBE_BW phase 0.
    pub(super) fn target_cwnd_bytes(&self, bw_bytes_per_s: f64, gain: f64) -> u64 {
        self.quantized_target_bytes(bw_bytes_per_s, gain, 0)
    }

    /// `bbr_set_cwnd`'s target: `bbr_bdp` + `extra_pkts` (the ACK-aggregation allowance,
    /// added before the budget), then `bbr_quantization_budget`. Linux adds the phase-0
    /// packets whatever the gain (`mode == BBR_PROBE_BW && cycle_idx == 0`).
    pub(super) fn quantized_target_bytes(
        &self,
        bw_bytes_per_s: f64,
        gain: f64,
        extra_pkts: u64,
    ) -> u64 {
        let bdp = self.bdp_pkts(Bandwidth::from_bytes_per_s(bw_bytes_per_s));
        let mut pkts = match bdp {
            Some(bdp_pkts) => (gain * bdp_pkts).ceil() as u64,
            // `bbr_bdp` without a valid RTT sample: TCP_INIT_CWND, budget still applied.
            None => self.cfg.initial_window_pkts,
        };
        pkts += extra_pkts;
        pkts += 3 * self.send_quantum_pkts();
        pkts = (pkts + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            pkts += 2;
        }
        pkts * self.mss_bytes
    }

    /// Linux `bbr_packets_in_net_at_edt` with the earliest departure time taken as now (the
    /// CC does not see the pacer's release time): inflight, plus one send quantum (the
    /// packet about to depart) when the gain raises inflight.
    pub(super) fn inflight_at_edt_bytes(&self, inflight_bytes: u64) -> u64 {
        if self.pacing_gain > 1.0 {
            inflight_bytes + self.send_quantum_pkts() * self.mss_bytes
        } else {
            inflight_bytes
        }
    }

    /// Linux 6.x `bbr_update_ack_aggregation`: the largest excess of data (S)ACKed in an
    /// epoch over what BtlBw predicts for it, kept as a max over two 5-round windows. An
    /// epoch restarts when the ACKed data falls to (or below) the prediction.
    pub(super) fn update_ack_aggregation(&mut self, ack: &AckEvent) {
        if !self.cfg.ack_aggregation || ack.acked_bytes == 0 {
            return;
        }
        // Linux requires a valid rate sample (`rs->delivered >= 0 && rs->interval_us > 0`).
        if ack.rate.is_none_or(|rs| rs.interval.is_zero()) {
            return;
        }
        let bw = self.bw();
        let a = &mut self.aggr;
        if self.round_start {
            a.win_rounds = (a.win_rounds + 1).min(0x1F);
            if a.win_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                a.win_rounds = 0;
                a.win_idx ^= 1;
                a.extra_acked_bytes[a.win_idx] = 0;
            }
        }
        let epoch = self.delivered_time.saturating_duration_since(a.epoch_stamp);
        let mut expected = (bw * epoch.as_secs_f64()) as u64;
        if a.epoch_acked_bytes <= expected
            || a.epoch_acked_bytes + ack.acked_bytes >= ACK_EPOCH_ACKED_RESET_PKTS * self.mss_bytes
        {
            a.epoch_acked_bytes = 0;
            a.epoch_stamp = self.delivered_time;
            expected = 0;
        }
        a.epoch_acked_bytes += ack.acked_bytes;
        let extra = (a.epoch_acked_bytes - expected).min(self.cwnd_bytes);
        if extra > a.extra_acked_bytes[a.win_idx] {
            a.extra_acked_bytes[a.win_idx] = extra;
        }
    }

    /// Linux 6.x `bbr_ack_aggregation_cwnd`, in packets: once the pipe was full,
    /// gain × max(extra_acked) capped at 100 ms of bandwidth; 0 before.
    pub(super) fn ack_aggregation_cwnd_pkts(&self) -> u64 {
        if !self.cfg.ack_aggregation || !self.full_bw_reached {
            return 0;
        }
        let bw = self.bw();
        let max_aggr_pkts = (bw * EXTRA_ACKED_MAX.as_secs_f64()) as u64 / self.mss_bytes;
        let extra = self.aggr.extra_acked_bytes[0].max(self.aggr.extra_acked_bytes[1]);
        let aggr_pkts = (EXTRA_ACKED_GAIN * extra as f64 / self.mss_bytes as f64).ceil() as u64;
        aggr_pkts.min(max_aggr_pkts)
    }

    /// The current ACK-aggregation allowance in bytes (0 before the pipe is full).
    pub fn ack_aggregation_cwnd_bytes(&self) -> u64 {
        self.ack_aggregation_cwnd_pkts() * self.mss_bytes
    }

    /// Restart from idle (Linux `bbr_cwnd_event(CA_EVENT_TX_START)`): a new ACK epoch.
    pub(super) fn reset_ack_epoch(&mut self, now: Instant) {
        self.aggr.epoch_stamp = now;
        self.aggr.epoch_acked_bytes = 0;
    }

    // ---- cwnd (bbr_set_cwnd) ------------------------------------------------------------

    /// Loss deduction, packet conservation in the first recovery round, restore on exit.
    /// Returns the new cwnd if packet conservation decides it.
    pub(super) fn recover_or_restore(&mut self, ack: &AckEvent, lost_bytes: u64) -> Option<u64> {
        let mut cwnd = self.cwnd_bytes;
        if lost_bytes > 0 {
            cwnd = cwnd.saturating_sub(lost_bytes).max(self.mss_bytes);
        }
        let (state, prev) = (self.ca_state, self.prev_ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: packet conservation, starting a round now.
            self.packet_conservation = true;
            self.next_round_delivered_bytes = self.delivered_bytes_total;
            cwnd = ack.inflight_bytes + ack.acked_bytes;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            self.restore_cwnd = true;
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.restore_cwnd {
            cwnd = cwnd.max(self.prior_cwnd_bytes);
            self.restore_cwnd = false;
        }
        if self.packet_conservation {
            return Some(cwnd.max(ack.inflight_bytes + ack.acked_bytes));
        }
        self.cwnd_bytes = cwnd;
        None
    }

    pub(super) fn set_cwnd(&mut self, ack: &AckEvent, lost_bytes: u64) {
        let min_cwnd = MIN_CWND_PKTS * self.mss_bytes;
        if ack.acked_bytes > 0 {
            if let Some(cwnd) = self.recover_or_restore(ack, lost_bytes) {
                self.cwnd_bytes = cwnd;
            } else {
                // `bbr_set_cwnd`: BDP·gain + the ACK-aggregation allowance, then the budget.
                let aggr_pkts = self.ack_aggregation_cwnd_pkts();
                let target = self.quantized_target_bytes(self.bw(), self.cwnd_gain, aggr_pkts);
                let mut cwnd = self.cwnd_bytes;
                let iw = self.cfg.initial_window_pkts * self.mss_bytes;
                if self.full_bw_reached {
                    cwnd = (cwnd + ack.acked_bytes).min(target);
                } else if cwnd < target || self.delivered_bytes_total < iw {
                    cwnd += ack.acked_bytes;
                }
                self.cwnd_bytes = cwnd.max(min_cwnd);
            }
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd_bytes = self.cwnd_bytes.min(min_cwnd);
        }
    }
}
