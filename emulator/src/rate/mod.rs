//! Rate models: when does a packet finish serialisation on the link?
//!
//! The link asks each time a packet reaches the head of the queue; a model
//! may keep state between calls (a trace's cursor and spare credit).

pub mod constant;
pub mod trace;
pub mod unlimited;

use crate::spec::RateSpec;

pub trait RateModel {
    /// Time (virtual ns) at which a packet of `bytes` that reached the head of
    /// the queue at `ready_ns` has been fully serialised. Calls come with
    /// non-decreasing `ready_ns`.
    fn finish_ns(&mut self, bytes: u32, ready_ns: u64) -> u64;
    /// The configured rate now, for logs (None: trace-driven or unlimited).
    fn rate_bps(&self) -> Option<f64>;
    /// The rate a queue drains at, for ms queue limits (None: no limit).
    fn drain_rate_bps(&self) -> Option<f64>;
    /// Changes the rate (schedules may only do so on constant-rate links).
    fn set_rate_bps(&mut self, _rate_bps: f64) {}
    fn describe(&self) -> String;
    /// Appends the times of the delivery opportunities in [from_ns, to_ns)
    /// (trace-driven links only; for the packet log).
    fn opportunities_in(&self, _from_ns: u64, _to_ns: u64, _out: &mut Vec<u64>) {}
    /// Bytes one delivery opportunity carries (trace-driven links only).
    fn opportunity_bytes(&self) -> Option<u32> {
        None
    }
}

pub fn from_spec(spec: &RateSpec) -> Result<Box<dyn RateModel>, String> {
    Ok(match spec {
        RateSpec::Constant { bps } => Box::new(constant::ConstantRate::new(*bps)),
        RateSpec::Trace { file, packet_bytes } => {
            Box::new(trace::TraceRate::load(file, *packet_bytes)?)
        }
        RateSpec::Unlimited => Box::new(unlimited::Unlimited),
    })
}
