//! Random loss models, one per file. Each draws from the link's own seeded
//! RNG, so the same seed gives the same loss pattern.

pub mod bernoulli;
pub mod gilbert_elliott;

use crate::spec::LossSpec;
use rand_chacha::ChaCha8Rng;

pub trait LossModel {
    /// Draws whether the next packet is lost.
    fn lose(&mut self, rng: &mut ChaCha8Rng) -> bool;
    /// The Bernoulli probability in force (None for other models).
    fn loss_p(&self) -> Option<f64>;
    /// Changes the Bernoulli probability (schedules may only do so on
    /// Bernoulli links).
    fn set_loss_p(&mut self, _p: f64) {}
    fn describe(&self) -> String;
}

/// No random loss.
pub struct NoLoss;

impl LossModel for NoLoss {
    fn lose(&mut self, _rng: &mut ChaCha8Rng) -> bool {
        false
    }
    fn loss_p(&self) -> Option<f64> {
        Some(0.0)
    }
    fn describe(&self) -> String {
        "none".to_string()
    }
}

pub fn from_spec(spec: &LossSpec) -> Box<dyn LossModel> {
    match *spec {
        LossSpec::None => Box::new(NoLoss),
        LossSpec::Bernoulli { p } => Box::new(bernoulli::Bernoulli::new(p)),
        LossSpec::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        } => Box::new(gilbert_elliott::GilbertElliott::new(
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        )),
    }
}

/// A uniform draw in [0, 1) with 53 random bits.
pub fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    use rand::RngCore;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
