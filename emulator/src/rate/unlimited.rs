//! No rate limit: packets leave the queue the moment they reach its head.

use super::RateModel;

pub struct Unlimited;

impl RateModel for Unlimited {
    fn finish_ns(&mut self, _bytes: u32, ready_ns: u64) -> u64 {
        ready_ns
    }

    fn rate_bps(&self) -> Option<f64> {
        None
    }

    fn drain_rate_bps(&self) -> Option<f64> {
        None
    }

    fn describe(&self) -> String {
        "unlimited".to_string()
    }
}
