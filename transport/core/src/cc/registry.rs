//! The congestion-control registry: the name each algorithm is chosen by (`--cc reno`), a
//! one-line summary for `--list`, and its constructor. Adding an algorithm = its file and
//! one line here; the interface it implements is `cc/mod.rs`.

use super::{
    CcConfig, CongestionController, RegistryError, balia, bbr, compound, coupled_bbr, cubic,
    emptcp, hbdp, hmptcp, lia, mpcubic, olia, reno, wmptcp, wvegas,
};

/// One registry line: a name, a one-line description for `--list`, and a constructor.
pub struct CcEntry {
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn(&CcConfig) -> Result<Box<dyn CongestionController>, RegistryError>,
}

/// Every congestion control, one entry each. Uncoupled algorithms wrap their per-subflow
/// type with [`Uncoupled`]; a constructor may validate `cfg.options` first and return
/// [`RegistryError::BadOption`].
pub const REGISTRY: &[CcEntry] = &[
    CcEntry {
        name: "reno",
        summary: "NewReno (RFC 5681/6582, RFC 9002 recovery), uncoupled",
        build: reno::build,
    },
    CcEntry {
        name: "cubic",
        summary: "CUBIC (RFC 9438) with Linux HyStart, uncoupled",
        build: cubic::build,
    },
    CcEntry {
        name: "bbr",
        summary: "BBR v1 (Linux tcp_bbr.c; ack_aggregation=false for 4.x), per subflow = the seeds' mpbbr",
        build: bbr::build,
    },
    CcEntry {
        name: "lia",
        summary: "LIA (RFC 6356), coupled, as mptcp_coupled.c; --cc-opt form=rfc for the RFC formula",
        build: lia::build,
    },
    CcEntry {
        name: "olia",
        summary: "OLIA (Khalili et al., ToN 2013), coupled, as mptcp_olia.c",
        build: olia::build,
    },
    CcEntry {
        name: "balia",
        summary: "BALIA (Peng et al., ToN 2016), coupled, as mptcp_balia.c",
        build: balia::build,
    },
    CcEntry {
        name: "wvegas",
        summary: "wVegas (Cao et al., ICNP 2012), coupled delay-based, as mptcp_wvegas.c",
        build: wvegas::build,
    },
    CcEntry {
        name: "compound",
        summary: "Compound TCP (draft-sridharan-tcpm-ctcp-02), loss + delay, uncoupled",
        build: compound::build,
    },
    CcEntry {
        name: "mpcubic",
        summary: "MPCubic (Le et al., ICTC 2011), CUBIC per subflow coupled by delta",
        build: mpcubic::build,
    },
    CcEntry {
        name: "coupled-bbr",
        summary: "Coupled BBR (Han et al., IEEE TWC 2021): BBR per subflow, PROBE_BW gains [1.25, 0.75, α_i×6] from all BtlBw",
        build: coupled_bbr::build,
    },
    CcEntry {
        name: "emptcp",
        summary: "EMPTCP (semi-coupled, Singhal et al.), coupled: W_l/(τ_l·Σ W_j/τ_j) per RTT",
        build: emptcp::build,
    },
    CcEntry {
        name: "wmptcp",
        summary: "WMPTCP (Singhal et al.): ω_l per RTT, --cc-opt weight.<path>=ω (default 1/S)",
        build: wmptcp::build,
    },
    CcEntry {
        name: "hmptcp",
        summary: "H-MPTCP (Singhal et al.): max(EMPTCP, WMPTCP) increase, weights as wmptcp",
        build: hmptcp::build,
    },
    CcEntry {
        name: "hbdp",
        summary: "HBDP scheme (Chung & Oh): queue-aware increase, expected-throughput load balancing, CUBIC-friendly δ",
        build: hbdp::build,
    },
];

/// Names of every registered algorithm, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// Looks up `name` and builds the controller. Unknown names and duplicate registrations are
/// errors that list the valid names.
pub fn build(name: &str, cfg: &CcConfig) -> Result<Box<dyn CongestionController>, RegistryError> {
    check_unique("congestion control", &names())?;
    match REGISTRY.iter().find(|e| e.name == name) {
        Some(entry) => (entry.build)(cfg),
        None => Err(RegistryError::UnknownName {
            kind: "congestion control",
            name: name.to_string(),
            valid: names(),
        }),
    }
}

/// Rejects a registry that lists a name twice.
pub fn check_unique(kind: &'static str, names: &[&'static str]) -> Result<(), RegistryError> {
    for (i, a) in names.iter().enumerate() {
        if names[..i].contains(a) {
            return Err(RegistryError::Duplicate { kind, name: a });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_buildable() {
        check_unique("congestion control", &names()).unwrap();
        for name in names() {
            let cc = build(name, &CcConfig::default()).unwrap();
            assert_eq!(cc.name(), name);
        }
    }

    #[test]
    fn unknown_name_lists_valid_ones() {
        let err = build("vegas-x", &CcConfig::default()).err().unwrap();
        let text = err.to_string();
        assert!(text.contains("vegas-x") && text.contains("reno"), "{text}");
    }

    #[test]
    fn duplicate_names_are_rejected() {
        assert!(check_unique("x", &["a", "b", "a"]).is_err());
    }
}
