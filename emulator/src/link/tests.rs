//! Tests of `link.rs` (kept in their own file to hold link.rs under the size limit).

use super::*;
use crate::spec::{Field, LossSpec, QueueSpec, RateSpec, ScheduleEvent};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn spec(rate_bps: f64, delay_ms: f64) -> LinkSpec {
    LinkSpec {
        rate: RateSpec::Constant { bps: rate_bps },
        delay_ms,
        jitter_ms: 0.0,
        loss: LossSpec::None,
        queue: QueueSpec::Packets { limit: 1000 },
        schedule: vec![],
    }
}

/// Runs the link to `until_ns` and returns every output.
fn drain(link: &mut Link, until_ns: u64) -> Vec<Output> {
    let mut now = 0;
    let mut out = Vec::new();
    while let Some(t) = link.next_wakeup() {
        if t > until_ns {
            break;
        }
        now = now.max(t);
        link.advance_to(now);
        while let Some(o) = link.poll_output() {
            out.push(o);
        }
    }
    link.advance_to(until_ns);
    while let Some(o) = link.poll_output() {
        out.push(o);
    }
    out
}

#[test]
fn back_to_back_packets_serialise_exactly_then_propagate() {
    // 100 Mbit/s: 1500 bytes take 120 µs; delay 25 ms.
    let mut link = Link::new(&spec(100e6, 25.0), 1, 0).unwrap();
    for i in 0..10 {
        assert_eq!(link.enqueue(i, 1500, 0), Verdict::Queued);
    }
    let out = drain(&mut link, 100 * MS);
    assert_eq!(out.len(), 10);
    for (i, o) in out.iter().enumerate() {
        assert_eq!(o.token, i as u64);
        assert_eq!(o.decision, Decision::Accept);
        assert_eq!(o.at_ns, (i as u64 + 1) * 120 * US + 25 * MS);
    }
    let t = link.totals();
    assert_eq!((t.pkts_in, t.pkts_out, t.bytes_out), (10, 10, 15_000));
    assert_eq!(t.sojourn_max_ns, 10 * 120 * US + 25 * MS);
}

#[test]
fn spaced_packets_see_only_their_own_serialisation() {
    let mut link = Link::new(&spec(10e6, 5.0), 1, 0).unwrap();
    let mut out = Vec::new();
    for i in 0..5u64 {
        // 2 ms apart, 1.2 ms serialisation: no queueing.
        link.enqueue(i, 1500, i * 2 * MS);
        out.extend(drain(&mut link, i * 2 * MS + 2 * MS - 1));
    }
    for (i, o) in out.iter().enumerate() {
        assert_eq!(o.at_ns, i as u64 * 2 * MS + 1200 * US + 5 * MS);
    }
}

/// Sends `n` 1000-byte packets `spacing_ns` apart at 50 Mbit/s, 20 ± 10 ms;
/// returns the outputs and each packet's added delay minus serialisation.
fn jittered(n: u64, spacing_ns: u64) -> (Vec<Output>, Vec<f64>) {
    let mut s = spec(50e6, 20.0);
    s.jitter_ms = 10.0;
    let mut link = Link::new(&s, 9, 0).unwrap();
    let mut out = Vec::new();
    for i in 0..n {
        let t = i * spacing_ns;
        link.enqueue(i, 1000, t);
        out.extend(drain(&mut link, t + spacing_ns - 1));
    }
    out.extend(drain(&mut link, n * spacing_ns + 100 * MS));
    let delays_ms = out
        .iter()
        .map(|o| (o.at_ns - o.token * spacing_ns) as f64 / 1e6 - 0.16)
        .collect();
    (out, delays_ms)
}

#[test]
fn jitter_is_uniform_around_the_delay_when_packets_are_sparse() {
    // 25 ms apart > 2 x jitter: the no-reordering rule never binds.
    let (out, delays_ms) = jittered(4000, 25 * MS);
    assert_eq!(out.len(), 4000);
    let min = delays_ms.iter().cloned().fold(f64::MAX, f64::min);
    let max = delays_ms.iter().cloned().fold(f64::MIN, f64::max);
    let mean = delays_ms.iter().sum::<f64>() / delays_ms.len() as f64;
    let var = delays_ms.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / 4000.0;
    assert!(
        min >= 10.0 - 1e-6 && max <= 30.0 + 1e-6,
        "range [{min}, {max}]"
    );
    assert!(
        min < 10.2 && max > 29.8,
        "range [{min}, {max}] does not cover 20 +- 10"
    );
    // U(10, 30): mean 20, sd 20/sqrt(12) = 5.77; sampling sd of the mean 0.09.
    assert!((mean - 20.0).abs() < 0.4, "mean {mean}");
    assert!((var.sqrt() - 5.77).abs() < 0.3, "sd {}", var.sqrt());
}

#[test]
fn jitter_never_reorders_dense_packets() {
    let (out, delays_ms) = jittered(2000, 500 * US);
    assert_eq!(out.len(), 2000);
    for w in out.windows(2) {
        assert!(w[0].token < w[1].token, "reordered");
        assert!(w[0].at_ns <= w[1].at_ns);
    }
    // A release is only ever pulled later, never earlier than its own draw.
    let min = delays_ms.iter().cloned().fold(f64::MAX, f64::min);
    let max = delays_ms.iter().cloned().fold(f64::MIN, f64::max);
    assert!(
        min >= 10.0 - 1e-6 && max <= 30.0 + 1e-6,
        "range [{min}, {max}]"
    );
}

#[test]
fn queue_overflow_drops_the_tail() {
    let mut s = spec(1e6, 0.0);
    s.queue = QueueSpec::Packets { limit: 5 };
    let mut link = Link::new(&s, 1, 0).unwrap();
    let verdicts: Vec<Verdict> = (0..8).map(|i| link.enqueue(i, 1500, 0)).collect();
    assert_eq!(
        verdicts.iter().filter(|v| **v == Verdict::Queued).count(),
        5
    );
    assert_eq!(verdicts[5], Verdict::Dropped(DropReason::Queue));
    let stats = link.take_interval();
    assert_eq!(stats.counters.drops_queue, 3);
    assert_eq!(stats.queue_pkts, 5);
    assert_eq!(stats.queue_bytes, 7500);
    // After one serialisation (12 ms at 1 Mbit/s) there is room again.
    assert_eq!(link.enqueue(8, 1500, 12 * MS), Verdict::Queued);
    assert_eq!(
        link.enqueue(9, 1500, 12 * MS),
        Verdict::Dropped(DropReason::Queue)
    );
}

#[test]
fn achieved_rate_equals_configured_rate_under_overload() {
    let mut s = spec(20e6, 10.0);
    s.queue = QueueSpec::Bytes { limit: 150_000 };
    let mut link = Link::new(&s, 1, 0).unwrap();
    // Offer 40 Mbit/s for 1 s (one 1500-byte packet every 300 µs).
    let mut out = Vec::new();
    for i in 0..3334u64 {
        link.enqueue(i, 1500, i * 300 * US);
        out.extend(drain(&mut link, i * 300 * US + 300 * US - 1));
    }
    let released: Vec<&Output> = out
        .iter()
        .filter(|o| o.at_ns >= 100 * MS && o.at_ns < 900 * MS)
        .collect();
    let bits = released.len() as f64 * 1500.0 * 8.0;
    let rate = bits / 0.8;
    assert!((rate / 20e6 - 1.0).abs() < 0.002, "rate {rate}");
    let t = link.totals();
    assert!(t.drops_queue > 1500, "drops {}", t.drops_queue);
}

#[test]
fn same_seed_same_losses_other_link_index_other_losses() {
    let run = |seed, index| {
        let mut s = spec(100e6, 1.0);
        s.loss = LossSpec::Bernoulli { p: 0.2 };
        let mut link = Link::new(&s, seed, index).unwrap();
        (0..500u64)
            .map(|i| link.enqueue(i, 100, i * MS))
            .collect::<Vec<Verdict>>()
    };
    assert_eq!(run(5, 0), run(5, 0));
    assert_ne!(run(5, 0), run(5, 1));
    assert_ne!(run(5, 0), run(6, 0));
}

#[test]
fn outage_drops_arrivals_and_packets_finishing_inside_it() {
    let mut s = spec(1e6, 1.0);
    s.schedule = vec![ScheduleEvent::Outage {
        t_s: 0.010,
        until_s: 0.050,
    }];
    let mut link = Link::new(&s, 1, 0).unwrap();
    // Arrives at 0, finishes at 12 ms: inside the outage, dropped.
    assert_eq!(link.enqueue(0, 1500, 0), Verdict::Queued);
    let out = drain(&mut link, 20 * MS);
    assert_eq!(
        out,
        vec![Output {
            token: 0,
            decision: Decision::Drop(DropReason::Outage),
            at_ns: 12 * MS
        }]
    );
    assert_eq!(
        link.enqueue(1, 1500, 30 * MS),
        Verdict::Dropped(DropReason::Outage)
    );
    assert_eq!(link.enqueue(2, 1500, 50 * MS), Verdict::Queued);
    let out = drain(&mut link, 100 * MS);
    assert_eq!(out[0].decision, Decision::Accept);
    assert_eq!(out[0].at_ns, 50 * MS + 12 * MS + MS);
    assert_eq!(link.totals().drops_outage, 2);
    let changes = link.take_changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].op, "outage");
    assert_eq!(changes[0].t_ns, 10 * MS);
}

#[test]
fn rate_step_applies_to_packets_starting_after_it() {
    let mut s = spec(10e6, 0.0);
    s.schedule = vec![ScheduleEvent::Step {
        t_s: 0.005,
        field: Field::RateBps,
        value: 1e6,
    }];
    let mut link = Link::new(&s, 1, 0).unwrap();
    for i in 0..6 {
        link.enqueue(i, 1500, 0);
    }
    // 1.2 ms each at 10 Mbit/s: finishes at 1.2, 2.4, 3.6, 4.8, then the
    // 5th starts at 4.8 ms (before the step) and finishes at 6.0 ms; the
    // 6th starts at 6.0 ms at 1 Mbit/s: 12 ms, finishing at 18 ms.
    let out = drain(&mut link, 100 * MS);
    let at: Vec<u64> = out.iter().map(|o| o.at_ns).collect();
    assert_eq!(
        at,
        vec![
            1200 * US,
            2400 * US,
            3600 * US,
            4800 * US,
            6000 * US,
            18 * MS
        ]
    );
    assert_eq!(link.params().rate_bps, Some(1e6));
}

#[test]
fn delay_ramp_is_followed_by_released_packets() {
    let mut s = spec(1e9, 10.0);
    s.schedule = vec![ScheduleEvent::Ramp {
        t_s: 1.0,
        field: Field::DelayMs,
        value: 30.0,
        until_s: 2.0,
    }];
    let mut link = Link::new(&s, 1, 0).unwrap();
    let mut out = Vec::new();
    for (i, t_ms) in [500u64, 1500, 2500].iter().enumerate() {
        link.enqueue(i as u64, 125, t_ms * MS);
        out.extend(drain(&mut link, t_ms * MS + 100 * MS));
    }
    // 125 bytes at 1 Gbit/s = 1 µs; delay at the finish time: 10 ms, mid-ramp
    // 20 ms + 20 ms/s x 1 µs = 20.00002 ms, then 30 ms.
    let delays: Vec<u64> = out
        .iter()
        .zip([500u64, 1500, 2500])
        .map(|(o, t)| o.at_ns - t * MS - US)
        .collect();
    assert_eq!(delays, vec![10 * MS, 20 * MS + 20, 30 * MS]);
}

#[test]
fn packets_queued_during_a_ramp_get_the_delay_of_their_finish_time() {
    let mut s = spec(1e6, 10.0);
    s.schedule = vec![ScheduleEvent::Ramp {
        t_s: 0.0,
        field: Field::DelayMs,
        value: 110.0,
        until_s: 1.0,
    }];
    let mut link = Link::new(&s, 1, 0).unwrap();
    // Ten 1250-byte packets at once: they finish every 10 ms (1 Mbit/s).
    for i in 0..10 {
        link.enqueue(i, 1250, 0);
    }
    let out = drain(&mut link, 2000 * MS);
    for (i, o) in out.iter().enumerate() {
        let finish_ns = (i as u64 + 1) * 10 * MS;
        let delay_ns = 10 * MS + finish_ns / 10; // 10 ms + 100 ms per s of ramp
        assert_eq!(o.at_ns, finish_ns + delay_ns, "packet {i}");
    }
}

/// Skipping `apply_schedule` while the schedule is idle and the models hold the params
/// changes nothing: a link that never skips it, driven by the same random arrivals,
/// advances and `set_params` calls through steps, ramps and an outage, gives the same
/// outputs, params, models and counters after every operation.
#[test]
fn skipping_an_idle_schedule_matches_applying_it_every_time() {
    let mut s = spec(20e6, 10.0);
    s.loss = LossSpec::Bernoulli { p: 0.01 };
    s.queue = QueueSpec::Packets { limit: 40 };
    let step = |t_s, field, value| ScheduleEvent::Step { t_s, field, value };
    let ramp = |t_s, field, value, until_s| ScheduleEvent::Ramp {
        t_s,
        field,
        value,
        until_s,
    };
    s.schedule = vec![
        step(0.5, Field::RateBps, 5e6),
        ramp(1.0, Field::DelayMs, 40.0, 2.0),
        step(1.5, Field::LossP, 0.2),
        ScheduleEvent::Outage {
            t_s: 2.2,
            until_s: 2.4,
        },
        ramp(2.5, Field::RateBps, 30e6, 3.5),
        step(3.0, Field::LossP, 0.0),
    ];
    let mut skipping = Link::new(&s, 9, 2).unwrap();
    let mut reference = Link::new(&s, 9, 2).unwrap();
    reference.apply_always = true;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut now = 0u64;
    for token in 0..40_000u64 {
        now += (uniform(&mut rng) * 300.0) as u64 * US;
        let enqueue = uniform(&mut rng) < 0.6;
        for link in [&mut skipping, &mut reference] {
            if token % 5000 == 9 {
                let mut p = link.params();
                p.rate_bps = Some(10e6 + token as f64);
                link.set_params(p);
            } else if enqueue {
                link.enqueue(token, 1200, now);
            } else {
                link.advance_to(now);
            }
        }
        let (a, b) = (&mut skipping, &mut reference);
        assert_eq!(a.params(), b.params(), "params at token {token}");
        assert_eq!(a.describe(), b.describe(), "models at token {token}");
        assert_eq!(a.next_wakeup(), b.next_wakeup());
        loop {
            let (x, y) = (a.poll_output(), b.poll_output());
            assert_eq!(x, y, "output at token {token}");
            if x.is_none() {
                break;
            }
        }
    }
    assert_eq!(skipping.totals(), reference.totals());
    let t = skipping.totals();
    assert!(
        t.pkts_out > 5_000 && t.drops_random > 100 && t.drops_outage > 0,
        "{t:?}"
    );
}

#[test]
fn loss_step_changes_the_bernoulli_rate_at_its_time() {
    let mut s = spec(1e9, 0.0);
    s.loss = LossSpec::Bernoulli { p: 0.0 };
    s.schedule = vec![ScheduleEvent::Step {
        t_s: 1.0,
        field: Field::LossP,
        value: 0.5,
    }];
    let mut link = Link::new(&s, 3, 0).unwrap();
    let before = (0..1000u64)
        .filter(|&i| link.enqueue(i, 100, i * 900 * US) != Verdict::Queued)
        .count();
    let after = (0..1000u64)
        .filter(|&i| link.enqueue(i, 100, 1000 * MS + i * 900 * US) != Verdict::Queued)
        .count();
    assert_eq!(before, 0);
    assert!(
        (430..570).contains(&after),
        "{after} of 1000 lost at p = 0.5"
    );
}

#[test]
fn trace_link_releases_at_opportunities() {
    let dir = std::env::temp_dir().join(format!("linkemu-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.down");
    std::fs::write(&trace, "2\n4\n6\n8\n10\n").unwrap();
    let mut s = spec(1e6, 5.0);
    s.rate = RateSpec::Trace {
        file: trace,
        packet_bytes: 1500,
    };
    let mut link = Link::new(&s, 1, 0).unwrap();
    for i in 0..3 {
        link.enqueue(i, 1500, 0);
    }
    link.record_packet_events();
    let out = drain(&mut link, 100 * MS);
    let at: Vec<u64> = out.iter().map(|o| o.at_ns).collect();
    assert_eq!(at, vec![7 * MS, 9 * MS, 11 * MS]);
    let opportunities: Vec<u64> = link
        .take_packet_events()
        .into_iter()
        .filter_map(|e| match e {
            PacketEvent::Opportunity { t_ns, bytes: 1500 } => Some(t_ns),
            _ => None,
        })
        .collect();
    // Every opportunity of the first 100 ms, used or not: 2, 4, ..., 98 ms.
    assert_eq!(
        opportunities,
        (1..50).map(|k| 2 * k * MS).collect::<Vec<u64>>()
    );
    // Idle past the end: the trace loops (period 10 ms): next at 22 ms.
    link.enqueue(3, 1500, 121 * MS);
    let out = drain(&mut link, 200 * MS);
    assert_eq!(out[0].at_ns, 122 * MS + 5 * MS);
    assert_eq!(link.take_interval().params.rate_bps, None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn packet_events_record_arrivals_drops_and_departures() {
    let mut s = spec(12e6, 2.0);
    s.queue = QueueSpec::Packets { limit: 1 };
    let mut link = Link::new(&s, 1, 0).unwrap();
    link.enqueue(0, 1500, 0);
    assert!(link.take_packet_events().is_empty(), "not recording yet");
    link.record_packet_events();
    link.enqueue(1, 1500, 0); // queue full: the first is still being sent
    drain(&mut link, 10 * MS);
    assert_eq!(
        link.take_packet_events(),
        vec![
            PacketEvent::Arrival {
                t_ns: 0,
                bytes: 1500
            },
            PacketEvent::Drop {
                t_ns: 0,
                bytes: 1500,
                reason: DropReason::Queue
            },
            PacketEvent::Departure {
                t_ns: 3 * MS,
                bytes: 1500,
                sojourn_ns: 3 * MS
            },
        ]
    );
}

#[test]
fn next_release_bound_never_passes_a_release() {
    let mut s = spec(20e6, 15.0);
    s.jitter_ms = 5.0;
    let mut link = Link::new(&s, 4, 0).unwrap();
    for i in 0..50u64 {
        link.enqueue(i, 1500, i * 100 * US);
    }
    // The bound is a lower bound of the next Accept's time.
    let mut now = 5 * MS;
    link.advance_to(now);
    while let Some(bound) = link.next_release_bound() {
        assert!(bound >= now || link.next_wakeup().is_some());
        let next = link.next_wakeup().unwrap();
        now = now.max(next);
        link.advance_to(now);
        while let Some(o) = link.poll_output() {
            assert!(
                o.at_ns >= bound,
                "released at {} before bound {bound}",
                o.at_ns
            );
        }
    }
}
