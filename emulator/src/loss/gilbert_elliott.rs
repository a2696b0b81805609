//! Gilbert-Elliott loss: a two-state Markov chain (Good, Bad) stepped once
//! per packet; in each state a packet is lost with that state's probability.
//!
//! Per packet: first the state moves (G→B with p_good_to_bad, B→G with
//! p_bad_to_good), then the loss is drawn in the new state. With
//! loss_in_good = 0 and loss_in_bad = 1 (the classic Gilbert model) the
//! stationary loss rate is p_gb / (p_gb + p_bg) and loss bursts are
//! geometric with mean length 1 / p_bg.

use super::{uniform, LossModel};
use rand_chacha::ChaCha8Rng;

pub struct GilbertElliott {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_in_good: f64,
    loss_in_bad: f64,
    in_bad_state: bool,
}

impl GilbertElliott {
    pub fn new(
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_in_good: f64,
        loss_in_bad: f64,
    ) -> GilbertElliott {
        GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
            in_bad_state: false,
        }
    }

    /// Long-run fraction of packets lost.
    pub fn stationary_loss(&self) -> f64 {
        let total = self.p_good_to_bad + self.p_bad_to_good;
        if total == 0.0 {
            return self.loss_in_good;
        }
        let in_bad = self.p_good_to_bad / total;
        in_bad * self.loss_in_bad + (1.0 - in_bad) * self.loss_in_good
    }
}

impl LossModel for GilbertElliott {
    fn lose(&mut self, rng: &mut ChaCha8Rng) -> bool {
        let switch = if self.in_bad_state {
            self.p_bad_to_good
        } else {
            self.p_good_to_bad
        };
        if uniform(rng) < switch {
            self.in_bad_state = !self.in_bad_state;
        }
        let p = if self.in_bad_state {
            self.loss_in_bad
        } else {
            self.loss_in_good
        };
        uniform(rng) < p
    }
    fn loss_p(&self) -> Option<f64> {
        None
    }
    fn describe(&self) -> String {
        format!(
            "gilbert_elliott [p_good_to_bad={}, p_bad_to_good={}, loss_in_good={}, loss_in_bad={}]",
            self.p_good_to_bad, self.p_bad_to_good, self.loss_in_good, self.loss_in_bad
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Loss rate and mean burst length over `n` packets.
    fn measure(m: &mut GilbertElliott, seed: u64, n: usize) -> (f64, f64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut lost, mut bursts, mut run) = (0usize, 0usize, 0usize);
        for _ in 0..n {
            if m.lose(&mut rng) {
                lost += 1;
                run += 1;
            } else if run > 0 {
                bursts += 1;
                run = 0;
            }
        }
        if run > 0 {
            bursts += 1;
        }
        (lost as f64 / n as f64, lost as f64 / bursts as f64)
    }

    #[test]
    fn classic_gilbert_matches_stationary_loss_and_burst_length() {
        let mut m = GilbertElliott::new(0.01, 0.3, 0.0, 1.0);
        let theory_loss = m.stationary_loss(); // 0.01 / 0.31 = 3.23 %
        let (loss, burst) = measure(&mut m, 3, 400_000);
        assert!(
            (loss / theory_loss - 1.0).abs() < 0.08,
            "loss {loss} vs {theory_loss}"
        );
        assert!(
            (burst - 1.0 / 0.3).abs() < 0.25,
            "mean burst {burst} vs 3.33"
        );
    }

    #[test]
    fn lossy_good_state_and_leaky_bad_state() {
        let mut m = GilbertElliott::new(0.05, 0.2, 0.01, 0.5);
        let theory_loss = m.stationary_loss(); // 0.2*0.5 + 0.8*0.01 = 0.108
        assert!((theory_loss - 0.108).abs() < 1e-12);
        let (loss, _) = measure(&mut m, 11, 400_000);
        assert!(
            (loss / theory_loss - 1.0).abs() < 0.06,
            "loss {loss} vs {theory_loss}"
        );
    }
}
