//! The scheduler registry: the name (and aliases) each scheduler is chosen by
//! (`--sched lrf`), a one-line summary for `--list`, and its constructor. Adding a scheduler
//! = its file and one line here; the interface it implements is `sched/mod.rs`.

use super::{
    SchedConfig, Scheduler, arp, blest, default_oot, default_upstream, ecf, gr_sty, let_, lpc, lrf,
    redundant, rr, tp_sty, tr_sty,
};
use crate::cc::{RegistryError, check_unique};

/// One registry line.
pub struct SchedEntry {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub build: fn(&SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError>,
}

/// Every scheduler, one entry each.
pub const REGISTRY: &[SchedEntry] = &[
    SchedEntry {
        name: "lrf",
        aliases: &["minrtt"],
        summary: "lowest-RTT-first (minRTT): the available subflow with the lowest SRTT",
        build: lrf::build,
    },
    SchedEntry {
        name: "rr",
        aliases: &["roundrobin"],
        summary: "round robin (mptcp_rr.c): quota of num_segments per available subflow",
        build: rr::build,
    },
    SchedEntry {
        name: "redundant",
        aliases: &[],
        summary: "every segment on every available subflow, rotating start (mptcp_redundant.c)",
        build: redundant::build,
    },
    SchedEntry {
        name: "lpc",
        aliases: &[],
        summary: "largest packet credits: the available subflow with the most free window",
        build: lpc::build,
    },
    SchedEntry {
        name: "let",
        aliases: &[],
        summary: "largest estimated throughput: the available subflow with the largest cwnd/SRTT",
        build: let_::build,
    },
    SchedEntry {
        name: "gr-sty",
        aliases: &[],
        summary: "greedy sticky: stay on a subflow until it is exhausted, then take the LRF choice",
        build: gr_sty::build,
    },
    SchedEntry {
        name: "tp-sty",
        aliases: &[],
        summary: "throughput sticky: leave an exhausted subflow only for a larger cwnd/SRTT",
        build: tp_sty::build,
    },
    SchedEntry {
        name: "tr-sty",
        aliases: &[],
        summary: "throughput+RTT sticky: leave only for a larger cwnd/SRTT and lower SRTT",
        build: tr_sty::build,
    },
    SchedEntry {
        name: "arp",
        aliases: &[],
        summary: "AR&P (Han et al., TWC 2021): redundant/non-redundant split, in-order pre-assignment by predicted arrival",
        build: arp::build,
    },
    SchedEntry {
        name: "blest",
        aliases: &[],
        summary: "BLEST (Ferlin et al., IFIP Networking 2016; mptcp_blest.c): skip the slow subflow when it would block the window",
        build: blest::build,
    },
    SchedEntry {
        name: "ecf",
        aliases: &[],
        summary: "ECF (Lim et al., CoNEXT 2017; mptcp_ecf.c): wait for the fast subflow when it completes sooner",
        build: ecf::build,
    },
    SchedEntry {
        name: "default-oot",
        aliases: &[],
        summary: "out-of-tree kernel default (mptcp_sched.c): lowest-SRTT available, pf, backups",
        build: default_oot::build,
    },
    SchedEntry {
        name: "default-upstream",
        aliases: &[],
        summary: "upstream Linux default (net/mptcp/protocol.c): shortest linger wmem/pacing rate, no cwnd test",
        build: default_upstream::build,
    },
];

/// Canonical names (no aliases), in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// Canonical names and aliases.
pub fn all_names() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
        .collect()
}

/// Canonical name for `name` (resolving aliases), if registered.
pub fn canonical(name: &str) -> Option<&'static str> {
    REGISTRY
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
        .map(|e| e.name)
}

pub fn build(name: &str, cfg: &SchedConfig) -> Result<Box<dyn Scheduler>, RegistryError> {
    check_unique("scheduler", &all_names())?;
    match REGISTRY
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
    {
        Some(entry) => (entry.build)(cfg),
        None => Err(RegistryError::UnknownName {
            kind: "scheduler",
            name: name.to_string(),
            valid: all_names(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_unique_and_buildable_with_aliases() {
        check_unique("scheduler", &all_names()).unwrap();
        for name in all_names() {
            let s = build(name, &SchedConfig::default()).unwrap();
            assert_eq!(Some(s.name()), canonical(name));
        }
        assert_eq!(canonical("minrtt"), Some("lrf"));
    }

    #[test]
    fn unknown_scheduler_lists_valid_names() {
        let err = build("fastest", &SchedConfig::default())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("fastest") && err.contains("lrf") && err.contains("minrtt"),
            "{err}"
        );
    }
}
