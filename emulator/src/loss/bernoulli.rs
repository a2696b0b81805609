//! Bernoulli loss: every packet is lost independently with probability p.

use super::{uniform, LossModel};
use rand_chacha::ChaCha8Rng;

pub struct Bernoulli {
    p: f64,
}

impl Bernoulli {
    pub fn new(p: f64) -> Bernoulli {
        Bernoulli { p }
    }
}

impl LossModel for Bernoulli {
    fn lose(&mut self, rng: &mut ChaCha8Rng) -> bool {
        // Always draw, so a change of p does not shift the rest of the pattern.
        uniform(rng) < self.p
    }
    fn loss_p(&self) -> Option<f64> {
        Some(self.p)
    }
    fn set_loss_p(&mut self, p: f64) {
        self.p = p;
    }
    fn describe(&self) -> String {
        format!("bernoulli [p={}]", self.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn loss_rate_is_p_within_sampling_error() {
        // 1% over 200k packets: sd = sqrt(n p (1-p)) ≈ 44.5 losses; allow 4 sd.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut m = Bernoulli::new(0.01);
        let n = 200_000;
        let lost = (0..n).filter(|_| m.lose(&mut rng)).count() as f64;
        assert!((lost - 2000.0).abs() < 4.0 * 44.5, "lost {lost}");
    }

    #[test]
    fn same_seed_same_pattern_other_seed_other_pattern() {
        let pattern = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut m = Bernoulli::new(0.1);
            (0..1000).map(|_| m.lose(&mut rng)).collect::<Vec<bool>>()
        };
        assert_eq!(pattern(1), pattern(1));
        assert_ne!(pattern(1), pattern(2));
    }
}
