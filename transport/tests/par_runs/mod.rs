//! Shared by the tests that repeat a simulated run over seeds or cells (`sched_scenarios.rs`,
//! `seed003_rates.rs`): the runs on every core, so that a multi-seed check costs its CPU time
//! divided by the cores rather than all of it on one thread while the others sit idle.
#![allow(dead_code)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// `f` over `items` on up to `available_parallelism()` scoped threads; results in the order of
/// `items`. Each simulated run is deterministic for its seed and set-up, so the order in which
/// the threads take the items changes no figure.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was run"))
        .collect()
}

#[test]
fn par_map_keeps_the_order_of_its_items() {
    let items: Vec<u64> = (0..37).collect();
    assert_eq!(
        par_map(&items, |x| x * x),
        items.iter().map(|x| x * x).collect::<Vec<_>>()
    );
    assert!(par_map(&[] as &[u64], |x| *x).is_empty());
}
