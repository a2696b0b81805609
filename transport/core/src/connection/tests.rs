//! Loss detection, the fast-recovery episode, repeated RTOs and the RTO-loss exit, each
//! checked against values worked out by hand from the Linux rules (`tcp_input.c`:
//! `tcp_fastretrans_alert`, `tcp_enter_loss`, `tcp_rtt_estimator`, `__tcp_set_rto`,
//! `tcp_send_loss_probe`).
//!
//! The harness joins a client (the data sender, whose CC is replaced by a recorder with a
//! fixed window and no pacing) and a server (which ACKs every packet at once) by paths of
//! exactly 20 ms one way, no rate limit and a drop rule, so that every RTT sample is 40 ms:
//! SRTT = 40 ms, Linux RTTVAR (`rttvar_us`) = max(2·40, 200) = 200 ms and stays there, RTO =
//! 40 + 200 = 240 ms, tail-loss probe (`tcp_schedule_loss_probe`, more than one packet in
//! flight) = 2·SRTT + 2 ms = 82 ms.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Config, Connection, PathConfig};
use crate::cc::{
    AckEvent, CcPhase, CcSnapshot, CongestionController, CongestionEvent, SubflowCcView,
};
use crate::rtt::RtoForm;
use crate::subflow::{ChunkRef, Subflow, SubflowState, data_packet_bytes};
use crate::units::{Bandwidth, Instant, SubflowId};
use crate::wire::{self, Frame};

const ONE_WAY: Duration = Duration::from_millis(20);
const RTT: Duration = Duration::from_millis(40);
const RTO: Duration = Duration::from_millis(240);
const TLP: Duration = Duration::from_millis(82);
const DATAGRAM: u64 = 1472;

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Loss {
        sf: SubflowId,
        at: Instant,
    },
    Rto {
        sf: SubflowId,
        at: Instant,
        repeat: bool,
    },
    Exit {
        sf: SubflowId,
        at: Instant,
    },
}

/// A fixed window of `pkts` full datagrams per subflow (or, from an RTO on, `rto_cwnd_bytes`
/// when set, as `tcp_enter_loss` leaves one segment); records congestion calls.
struct Recorder {
    cwnd_bytes: u64,
    rto_cwnd_bytes: Option<u64>,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl CongestionController for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn add_subflow(&mut self, _sf: SubflowId, _now: Instant, _mss: u64) {}
    fn remove_subflow(&mut self, _sf: SubflowId) {}
    fn on_sent(&mut self, _sf: SubflowId, _now: Instant, _bytes: u64, _inflight: u64) {}
    fn on_ack(&mut self, _sf: SubflowId, _ack: &AckEvent, _views: &[SubflowCcView]) {}
    fn on_congestion(
        &mut self,
        sf: SubflowId,
        now: Instant,
        ev: &CongestionEvent,
        _views: &[SubflowCcView],
    ) {
        let call = match *ev {
            CongestionEvent::Loss { .. } => Call::Loss { sf, at: now },
            CongestionEvent::Rto { repeat, .. } => {
                self.cwnd_bytes = self.rto_cwnd_bytes.unwrap_or(self.cwnd_bytes);
                Call::Rto {
                    sf,
                    at: now,
                    repeat,
                }
            }
        };
        self.calls.lock().unwrap().push(call);
    }
    fn on_recovery_exit(&mut self, sf: SubflowId, now: Instant) {
        self.calls.lock().unwrap().push(Call::Exit { sf, at: now });
    }
    fn on_idle_restart(&mut self, _sf: SubflowId, _now: Instant) {}
    fn cwnd_bytes(&self, _sf: SubflowId) -> u64 {
        self.cwnd_bytes
    }
    fn pacing_rate(&self, _sf: SubflowId) -> Option<Bandwidth> {
        None
    }
    fn phase(&self, _sf: SubflowId) -> CcPhase {
        CcPhase::CongestionAvoidance
    }
    fn bw_estimate(&self, _sf: SubflowId) -> Option<Bandwidth> {
        None
    }
    fn snapshot(&self, _sf: SubflowId) -> CcSnapshot {
        CcSnapshot::default()
    }
}

/// One packet on the wire, as the drop rule sees it.
#[derive(Clone, Copy, Debug)]
struct Pkt {
    at: Instant,
    to_server: bool,
    path: usize,
    dsn: Option<u64>,
}

struct Net {
    now: Instant,
    client: Connection,
    server: Option<Connection>,
    /// (arrival, to_server, datagram)
    wire: Vec<(Instant, bool, Vec<u8>)>,
    drop: Box<dyn FnMut(&Pkt) -> bool>,
    /// Extra one-way delay of a packet that is not dropped (none unless a test sets it).
    delay: Box<dyn FnMut(&Pkt) -> Duration>,
    /// Every packet the client sent.
    sent: Vec<Pkt>,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl Net {
    fn new(paths: usize, cwnd_pkts: u64, drop: Box<dyn FnMut(&Pkt) -> bool>) -> Net {
        Net::with_rto_cwnd(paths, cwnd_pkts, None, drop)
    }

    /// As `new`, with the window an RTO leaves (`Recorder::rto_cwnd_bytes`).
    fn with_rto_cwnd(
        paths: usize,
        cwnd_pkts: u64,
        rto_cwnd_bytes: Option<u64>,
        drop: Box<dyn FnMut(&Pkt) -> bool>,
    ) -> Net {
        let path_cfgs: Vec<PathConfig> = (0..paths)
            .map(|i| PathConfig {
                name: format!("p{i}"),
                backup: false,
            })
            .collect();
        let mut client = Connection::client(ms(0), 7, Config::default(), &path_cfgs).unwrap();
        let calls = Arc::new(Mutex::new(Vec::new()));
        client.cc = Box::new(Recorder {
            cwnd_bytes: cwnd_pkts * DATAGRAM,
            rto_cwnd_bytes,
            calls: calls.clone(),
        });
        client.write(&vec![0x5A; 4 << 20]);
        Net {
            now: ms(0),
            client,
            server: None,
            wire: Vec::new(),
            drop,
            delay: Box::new(|_| Duration::ZERO),
            sent: Vec::new(),
            calls,
        }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn flush(&mut self) {
        let mut buf = vec![0u8; 2048];
        loop {
            let mut any = false;
            while let Some(t) = self.client.poll_transmit(self.now, &mut buf) {
                self.put(t.send_at.max(self.now), true, t.path.index(), &buf[..t.len]);
                any = true;
            }
            let mut out = Vec::new();
            if let Some(s) = self.server.as_mut() {
                while let Some(t) = s.poll_transmit(self.now, &mut buf) {
                    out.push((
                        t.send_at.max(self.now),
                        t.path.index(),
                        buf[..t.len].to_vec(),
                    ));
                }
            }
            for (at, path, d) in out {
                self.put(at, false, path, &d);
                any = true;
            }
            if !any {
                return;
            }
        }
    }

    fn put(&mut self, at: Instant, to_server: bool, path: usize, d: &[u8]) {
        let (_, payload) = wire::parse_header(d).unwrap();
        let dsn = wire::frames(payload).find_map(|f| match f {
            Ok(Frame::Data { dsn, .. }) => Some(dsn),
            _ => None,
        });
        let pkt = Pkt {
            at,
            to_server,
            path,
            dsn,
        };
        if to_server {
            self.sent.push(pkt);
        }
        if !(self.drop)(&pkt) {
            let extra = (self.delay)(&pkt);
            self.wire
                .push((at + ONE_WAY + extra, to_server, d.to_vec()));
        }
    }

    /// Runs until `until`.
    fn run(&mut self, until: Instant) {
        loop {
            self.flush();
            let mut next = self.client.poll_timeout();
            if let Some(t) = self.server.as_ref().and_then(|s| s.poll_timeout()) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
            if let Some(t) = self.wire.iter().map(|w| w.0).min() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
            let Some(next) = next.filter(|&t| t <= until) else {
                self.now = until;
                return;
            };
            self.now = self.now.max(next);
            let now = self.now;
            let mut due: Vec<(Instant, bool, Vec<u8>)> = Vec::new();
            self.wire.retain(|w| {
                if w.0 <= now {
                    due.push(w.clone());
                    false
                } else {
                    true
                }
            });
            due.sort_by_key(|w| w.0);
            for (_, to_server, d) in due {
                if to_server {
                    let server = self.server.get_or_insert_with(|| {
                        let cfg = Config {
                            ack_every_pkts: 1,
                            ..Config::default()
                        };
                        Connection::server(now, 7, cfg).unwrap()
                    });
                    server.handle_datagram(now, &d).unwrap();
                } else {
                    self.client.handle_datagram(now, &d).unwrap();
                }
            }
            if self.client.poll_timeout().is_some_and(|t| t <= now) {
                self.client.handle_timeout(now);
            }
            if let Some(s) = self.server.as_mut()
                && s.poll_timeout().is_some_and(|t| t <= now)
            {
                s.handle_timeout(now);
            }
            if let Some(s) = self.server.as_mut() {
                let mut sink = vec![0u8; 1 << 16];
                while s.read(&mut sink) > 0 {}
            }
        }
    }
}

#[test]
fn harness_rtt_is_exactly_40_ms_and_rto_240_ms() {
    let mut net = Net::new(1, 10, Box::new(|_| false));
    net.run(ms(300));
    let s = &net.client.subflows[0];
    assert_eq!(s.rtt.srtt(), RTT);
    assert_eq!(s.rtt.rto(), RTO);
    assert_eq!(s.pto_duration(net.client.cfg.max_ack_delay), TLP);
    // The server got its first sample from the HELLO exchange (PING answered at once).
    let server = net.server.as_ref().unwrap();
    assert!(server.subflows[0].rtt.has_sample());
    assert_eq!(server.subflows[0].rtt.min_rtt(), RTT);
}

#[test]
fn loss_detection_by_packet_and_time_threshold() {
    // Five packets sent at 0, 10, 20, 30, 40 ms; SRTT = latest RTT = 40 ms.
    let mut s = Subflow::new(
        SubflowId(0),
        "p",
        false,
        SubflowState::Established,
        DATAGRAM,
        RtoForm::Linux,
    );
    for pn in 0..5u64 {
        let c = ChunkRef {
            dsn: pn * 1000,
            len: 1000,
            fin: false,
        };
        s.next_pn = pn + 1;
        s.on_packet_sent(ms(pn * 10), pn, 1000, Some(c));
    }
    s.rtt.update(RTT, Duration::ZERO, 0, 5);
    // ACK of pn 3 and 4 at 60 ms. Packet threshold 3: pn + 3 ≤ 4 → pn 0 and 1 are lost.
    // Time threshold 9/8 · 40 = 45 ms: sent at or before 60 − 45 = 15 ms → pn 0 and 1 again;
    // pn 2 (sent at 20 ms) becomes lost at 20 + 45 = 65 ms.
    let acked = s.on_ack_ranges(ms(60), [(3u64, 4u64)].into_iter());
    s.largest_acked = Some(4);
    assert_eq!(acked.acked_bytes, 2000);
    let lost = s.detect_losses(ms(60));
    let lost_pns: Vec<u64> = lost.chunks.iter().map(|(pn, _)| *pn).collect();
    assert_eq!(lost_pns, vec![0, 1]);
    assert_eq!(lost.bytes, 2000);
    assert_eq!(s.loss_time, Some(ms(65)));
    assert_eq!(s.inflight_bytes, 1000);
    let lost = s.detect_losses(ms(65));
    let lost_pns: Vec<u64> = lost.chunks.iter().map(|(pn, _)| *pn).collect();
    assert_eq!(lost_pns, vec![2]);
    assert_eq!(s.loss_time, None);
    assert_eq!(s.inflight_bytes, 0);
    // A late ACK of lost pn 1 delivers it (counted as spurious and as delivered).
    let late = s.on_ack_ranges(ms(70), [(1u64, 1u64)].into_iter());
    assert_eq!(late.delivered.len(), 1);
    assert_eq!(s.counters.spurious_losses_total, 1);
    assert_eq!(s.rate.delivered_bytes(), 3000);
}

/// Drops the client's first transmission of the `nth` distinct chunks (1-based) sent on
/// `on_path` from 200 ms on.
fn drop_chosen(on_path: usize, nth: &'static [usize]) -> Box<dyn FnMut(&Pkt) -> bool> {
    let mut seen: Vec<u64> = Vec::new();
    let mut dropped: Vec<u64> = Vec::new();
    Box::new(move |p: &Pkt| {
        let (true, Some(dsn), true) = (p.to_server, p.dsn, p.path == on_path) else {
            return false;
        };
        if p.at < ms(200) || seen.contains(&dsn) {
            return false;
        }
        seen.push(dsn);
        let idx = seen.len();
        if nth.contains(&idx) && !dropped.contains(&dsn) {
            dropped.push(dsn);
            return true;
        }
        false
    })
}

#[test]
fn fast_recovery_is_one_episode_per_window_on_the_same_subflow() {
    // Two paths, 10 packets of window each; on path 0 the 40th and 42nd fresh chunks after
    // 200 ms are dropped (same window), later the 400th (a window long after recovery).
    let mut net = Net::new(2, 10, drop_chosen(0, &[40, 42, 400]));
    net.run(ms(3000));
    let calls = net.calls();
    let losses: Vec<&Call> = calls
        .iter()
        .filter(|c| matches!(c, Call::Loss { .. }))
        .collect();
    let exits: Vec<&Call> = calls
        .iter()
        .filter(|c| matches!(c, Call::Exit { .. }))
        .collect();
    // Linux: one reduction for the two losses of one window, another for the later one.
    assert_eq!(losses.len(), 2, "{calls:?}");
    assert!(
        losses
            .iter()
            .all(|c| matches!(c, Call::Loss { sf, .. } if *sf == SubflowId(0)))
    );
    assert_eq!(exits.len(), 2, "{calls:?}");
    // Retransmitted on path 0, never on path 1.
    let c = |i: usize| net.client.subflows[i].counters;
    assert_eq!(c(0).pkts_lost_total, 3);
    assert_eq!(c(0).pkts_retrans_total, 3);
    assert_eq!(c(1).pkts_retrans_total, 0);
    assert!(!calls.iter().any(|c| matches!(c, Call::Rto { .. })));
    // The first episode ends when its last retransmission is acknowledged: everything sent
    // before it began was acked or delivered then (snd_una reaches high_seq), one RTT after
    // that retransmission left.
    let Call::Loss { at: began, .. } = *losses[0] else {
        unreachable!()
    };
    let Call::Exit { at: ended, .. } = *exits[0] else {
        unreachable!()
    };
    let last_retrans = net
        .sent
        .iter()
        .filter(|p| p.path == 0 && p.at >= began && p.at < ended && p.dsn.is_some())
        .filter(|p| {
            net.sent
                .iter()
                .filter(|q| q.dsn == p.dsn && q.path == 0)
                .count()
                == 2
        })
        .map(|p| p.at)
        .max()
        .expect("retransmissions in the episode");
    assert_eq!(ended, last_retrans + RTT);
}

/// One path, a window of 4 packets. Everything sent in [300, 1000) ms is dropped both ways;
/// afterwards, the first packet carrying the newest chunk sent before 300 ms is dropped once
/// more, and with `original_lost` so was that chunk's first packet (sent before 300 ms).
/// Runs to 3 s; returns the run and the blackout's last clocked send.
fn blackout(original_lost: bool) -> (Net, Instant) {
    let blackout = (ms(300), ms(1000));
    // Sends before 300 ms do not depend on the drop rule: a first run finds the newest chunk.
    let newest_before = {
        let mut net = Net::new(1, 4, Box::new(|_| false));
        net.run(blackout.0);
        net.sent
            .iter()
            .filter(|p| p.dsn.is_some())
            .map(|p| p.dsn)
            .max()
            .unwrap()
    };
    let mut dropped_again = false;
    let drop = Box::new(move |p: &Pkt| {
        let newest = p.to_server && p.dsn.is_some() && p.dsn == newest_before;
        if p.at < blackout.0 {
            return original_lost && newest;
        }
        if p.at < blackout.1 {
            return true;
        }
        if !dropped_again && newest {
            dropped_again = true;
            return true;
        }
        false
    });
    let mut net = Net::new(1, 4, drop);
    net.run(ms(3000));
    // The last client send the ACK clock allowed: before the blackout's ACKs stopped (at
    // most one RTT after it began).
    let last_clocked = net
        .sent
        .iter()
        .filter(|p| p.at < blackout.0 + RTT)
        .map(|p| p.at)
        .max()
        .unwrap();
    (net, last_clocked)
}

fn rtos_and_exits(calls: &[Call]) -> (Vec<(Instant, bool)>, Vec<Instant>) {
    let rtos = calls
        .iter()
        .filter_map(|c| match *c {
            Call::Rto { at, repeat, .. } => Some((at, repeat)),
            _ => None,
        })
        .collect();
    let exits = calls
        .iter()
        .filter_map(|c| match *c {
            Call::Exit { at, .. } => Some(at),
            _ => None,
        })
        .collect();
    (rtos, exits)
}

#[test]
fn repeated_rtos_lower_ssthresh_once_and_rto_loss_lasts_until_the_flight_is_delivered() {
    let (net, last_clocked) = blackout(true);
    let calls = net.calls();
    // Tail-loss probe 82 ms later (the subflow is in Open state), then RTO 240 ms after it
    // (ssthresh lowered: the first timeout of the episode), then the backed-off RTO 2·240 ms
    // after that, with no ACK in between (a repeat: ssthresh not lowered again).
    let tlp = last_clocked + TLP;
    let rto1 = tlp + RTO;
    let rto2 = rto1 + RTO * 2;
    // After rto2 (blackout over) the probe and three more retransmissions go out at rto2; the
    // ACKs of three arrive at rto2 + 40 ms, but the fourth (the newest chunk, whose original
    // was lost too: the receiver lacks it) was dropped again. No tail-loss probe in the
    // RTO-loss state (Linux `tcp_schedule_loss_probe`: CA_Open only), so the next RTO fires
    // one RTO after the last send (the ACKs reset the backoff); it lowers ssthresh again,
    // because ACKs came since the previous timeout (`tcp_enter_loss`: CA_Loss with
    // `icsk_retransmits` reset). Its retransmission is acknowledged one RTT later, and only
    // then does the state end (`snd_una` passes `high_seq`).
    let last_send = net
        .sent
        .iter()
        .filter(|p| p.to_server && p.dsn.is_some() && p.at >= rto2 && p.at < rto2 + RTO)
        .map(|p| p.at)
        .max()
        .unwrap();
    assert_eq!(last_send, rto2);
    let rto3 = rto2 + RTO;
    let (rtos, exits) = rtos_and_exits(&calls);
    assert_eq!(
        rtos,
        vec![(rto1, false), (rto2, true), (rto3, false)],
        "{calls:?}"
    );
    assert!(
        !calls.iter().any(|c| matches!(c, Call::Loss { .. })),
        "{calls:?}"
    );
    assert_eq!(exits, vec![rto3 + RTT], "{calls:?}");
    assert!(!net.client.subflows[0].in_rto_loss());
}

#[test]
fn rto_loss_ends_with_the_ack_that_shows_the_receiver_holds_the_whole_flight() {
    // As above, but the newest chunk's original got through before the blackout (only its
    // ACK was lost): the ACKs of the retransmissions at rto2 + 40 ms come with a DATA_ACK
    // that covers it, as Linux's cumulative ACK of a duplicate would (`snd_una` past
    // `high_seq`), so the state ends there, without a third RTO, although the newest chunk's
    // own retransmission was dropped.
    let (net, last_clocked) = blackout(false);
    let calls = net.calls();
    let rto1 = last_clocked + TLP + RTO;
    let rto2 = rto1 + RTO * 2;
    let (rtos, exits) = rtos_and_exits(&calls);
    assert_eq!(rtos, vec![(rto1, false), (rto2, true)], "{calls:?}");
    assert_eq!(exits, vec![rto2 + RTT], "{calls:?}");
    assert!(!net.client.subflows[0].in_rto_loss());
}

#[test]
fn a_queued_chunk_costs_its_wire_bytes() {
    // 1441 B of payload (a full chunk) fill a 1472 B datagram; a 100 B chunk leaves room for
    // the DATA_ACK (header 19 + DATA frame 12 + DATA_ACK 17).
    assert_eq!(data_packet_bytes(1441, DATAGRAM), 1472);
    assert_eq!(data_packet_bytes(100, DATAGRAM), 100 + 19 + 12 + 17);
}

#[test]
fn data_lost_during_recovery_and_outstanding_at_its_end_starts_another_recovery() {
    // One path, 10 packets of window, no rate limit: each window leaves at one instant and
    // its ACKs return together one RTT later. The 40th fresh chunk after 200 ms (call it A)
    // is dropped, then its first retransmission and the fresh chunk B sent right after it
    // (a packet sent during the episode, above Linux's high_seq), then B's first
    // retransmission. So: A lost at t0 → episode; at t0 + RTT A's retransmission and B
    // are found lost (both retransmitted); at t0 + 2·RTT the ACK of A's second
    // retransmission ends the episode (snd_una reaches high_seq) while the same ACK shows B's
    // retransmission lost. Linux: `lost_out` > 0 on the exit ACK, so `tcp_fastretrans_alert`
    // enters Recovery again at once (`tcp_time_to_recover`): a second reduction at the
    // instant of the exit, which ends one RTT later when B's second retransmission is
    // acknowledged. (Here B's second loss shows on the exit ACK itself; a loss found earlier
    // in the episode and still undelivered at the exit takes the same path through the
    // episode's `lost_after`. In this harness whole windows leave and return at one instant,
    // so the two cannot be separated in time.)
    let mut seen: Vec<u64> = Vec::new();
    let mut target: Option<u64> = None;
    let mut target_sends = 0;
    let mut drop_next_fresh = false;
    let mut b: Option<u64> = None;
    let mut b_sends = 0;
    let drop = Box::new(move |p: &Pkt| {
        let (true, Some(dsn)) = (p.to_server, p.dsn) else {
            return false;
        };
        if p.at < ms(200) {
            return false;
        }
        let fresh = !seen.contains(&dsn);
        if fresh {
            seen.push(dsn);
        }
        if fresh && seen.len() == 40 {
            target = Some(dsn);
        }
        if Some(dsn) == target {
            target_sends += 1;
            if target_sends == 2 {
                drop_next_fresh = true;
            }
            return target_sends <= 2;
        }
        if fresh && drop_next_fresh {
            drop_next_fresh = false;
            b = Some(dsn);
        }
        if Some(dsn) == b {
            b_sends += 1;
            return b_sends <= 2;
        }
        false
    });
    let mut net = Net::new(1, 10, drop);
    net.run(ms(3000));
    let calls = net.calls();
    let kinds: Vec<&str> = calls
        .iter()
        .map(|c| match c {
            Call::Loss { .. } => "loss",
            Call::Exit { .. } => "exit",
            Call::Rto { .. } => "rto",
        })
        .collect();
    assert_eq!(kinds, vec!["loss", "exit", "loss", "exit"], "{calls:?}");
    let (
        Call::Exit { at: first_exit, .. },
        Call::Loss {
            at: second_loss, ..
        },
    ) = (calls[1], calls[2])
    else {
        unreachable!()
    };
    let (
        Call::Loss { at: t0, .. },
        Call::Exit {
            at: second_exit, ..
        },
    ) = (calls[0], calls[3])
    else {
        unreachable!()
    };
    assert_eq!(first_exit, t0 + RTT * 2, "{calls:?}");
    assert_eq!(second_loss, first_exit, "{calls:?}");
    assert_eq!(second_exit, t0 + RTT * 3, "{calls:?}");
    // Four packets lost (A and B twice each), each retransmitted.
    let c = net.client.subflows[0].counters;
    assert_eq!(c.pkts_lost_total, 4);
    assert_eq!(c.pkts_retrans_total, 4);
    assert_eq!(c.recoveries_total, 2);
}

/// One path, a window of 4 packets that drops to one packet at an RTO; every packet the
/// client sends in [300, 500) ms (its last flight and the tail-loss probe) arrives at the
/// server at `arrive_at` instead of 20 ms later. Runs to 3 s.
fn late_originals(arrive_at: Instant) -> Net {
    let mut net = Net::with_rto_cwnd(1, 4, Some(DATAGRAM), Box::new(|_| false));
    net.delay = Box::new(move |p: &Pkt| {
        if p.to_server && p.at >= ms(300) && p.at < ms(500) {
            arrive_at - (p.at + ONE_WAY)
        } else {
            Duration::ZERO
        }
    });
    net.run(ms(3000));
    net
}

#[test]
fn a_spurious_rto_ends_when_the_data_ack_covers_the_late_originals() {
    // The flight and its tail-loss probe are held up, so the RTO fires and writes them off:
    // their records are dropped at once (sent more than one RTO earlier), so no subflow ACK
    // can deliver them any more. Learn when the RTO fires, then let the originals reach the
    // server at the same instant as the RTO's retransmission (of the lowest chunk): one ACK
    // packet acknowledges the retransmission and carries a DATA_ACK that covers the rest. The
    // RTO-loss state must end with it, one RTT after the RTO. Before the fix it lasted for
    // good: the ACK frame came before the DATA_ACK in the packet, the retransmissions still
    // queued were then stale, nothing was in flight, so no ACK was to come, and no
    // scheduler gives new data to a subflow in that state: the connection sent nothing more.
    let (rto, _) = rtos_and_exits(&late_originals(ms(2500)).calls()).0[0];
    let net = late_originals(rto + ONE_WAY);
    let calls = net.calls();
    let (rtos, exits) = rtos_and_exits(&calls);
    assert_eq!(rtos, vec![(rto, false)], "{calls:?}");
    assert_eq!(exits, vec![rto + RTT], "{calls:?}");
    assert!(!net.client.subflows[0].in_rto_loss());
    // Data keeps flowing to the end of the run.
    let last_data = net
        .sent
        .iter()
        .filter(|p| p.dsn.is_some())
        .map(|p| p.at)
        .max();
    assert!(
        last_data.is_some_and(|t| t > ms(2900)),
        "{last_data:?} {} {calls:?}",
        net.client.describe_state()
    );
}
