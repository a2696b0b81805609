//! `mptcp_coupled.c`'s α when its integer argmax ties (docs/reproductions/table1-lia-seed000.md).
//!
//! `mptcp_ccc_recalc_alpha` picks the subflow b with the largest
//! `(snd_cwnd << 32) / (srtt_us * srtt_us)`, srtt_us being the SRTT in µs × 8. That quotient
//! truncates to 0 whenever cwnd < (8·SRTT_µs)² / 2³² — below 37 packets at an SRTT of 50 ms —
//! so for small windows every subflow ties at 0, and the kernel's `if (tmp >= max_numerator)`
//! hands b to the last subflow it visits. The kernel visits the newest subflow first:
//! `mptcp_add_sock` puts a new subflow at the head of the connection's list
//! (`tp->mptcp->next = mpcb->connection_list; mpcb->connection_list = tp;`), so ties go to the
//! oldest subflow, the initial one. `lia::kernel_alpha` takes its inputs in establishment
//! order and visits them in that order, so its ties go to the newest subflow instead.
//!
//! Where it matters (Table I of seed 000, seed 18): a 29-packet initial subflow and a 2-packet
//! second one, SRTT 50 and 54 ms. The kernel's b is the initial subflow, α_k = 124, +1 every
//! max(29, ⌊4096/124⌋ = 33) packets. With b = the 2-packet subflow, α_k = 7 and the initial
//! subflow needs ⌊4096/7⌋ = 585 packets per +1: 20 times slower than Reno, so it stays stuck
//! near 30 packets for tens of seconds.
//!
//! The fix is in `lia.rs`, `kernel_alpha`: visit the members newest first
//! (`w.iter().zip(&rtt).rev()`), keeping `>=`.

use mptransport::cc::lia::{kernel_acks_per_increment, kernel_alpha};

#[test]
fn ties_at_zero_go_to_the_oldest_subflow_as_in_the_kernel() {
    // In establishment order: the initial subflow (29 packets, 50 ms), then the second one.
    let (w, srtt_us) = ([29, 2], [50_000, 54_000]);
    // Both quotients are 0: 29·2³² / (8·50 000)² = 0.78 and 2·2³² / (8·54 000)² = 0.05.
    // The kernel's b is the initial subflow: Σ = 29·1024 + ⌊2·1024·400 000 / 432 000⌋ = 31 592,
    // α_k = ⌊29·2³² / 31 592²⌋ = 124.
    let alpha = kernel_alpha(&w, &srtt_us);
    assert_eq!(
        alpha, 124,
        "α_k {alpha}: the tie went to the newest subflow (the kernel gives it to the oldest)"
    );
    assert_eq!(kernel_acks_per_increment(alpha, 29), 33);
}

#[test]
fn without_a_tie_the_order_does_not_matter() {
    // 160 packets at 53 ms: quotient 3; 17 packets at 50 ms: 0. b is the initial subflow
    // whichever way the list is walked.
    let a = kernel_alpha(&[160, 17], &[53_000, 50_000]);
    let b = kernel_alpha(&[17, 160], &[50_000, 53_000]);
    assert_eq!(a, b);
    // Σ = 160·1024 + ⌊17·1024·424 000 / 400 000⌋ = 182 292; α_k = ⌊160·2³² / Σ²⌋ = 20.
    assert_eq!(a, 20);
    assert_eq!(kernel_acks_per_increment(a, 160), 204);
}
