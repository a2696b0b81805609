//! Machine-readable figures of the benchmarks and seed-paper checks in `tests/`.
//!
//! `./run_trials.sh --reproduce SEED` (testbed/reproduce.py) sets `REPRO_OUT` to a file and
//! runs those tests; each figure a test measures is appended to it as one JSON line
//! `{"figure": NAME, "value": {...}}`, which the reproduction pages are built from (instead
//! of parsing the tests' printed lines). Without `REPRO_OUT` nothing is written.

use std::io::Write;

/// The environment variable naming the JSON Lines file figures are appended to.
pub const OUT_ENV: &str = "REPRO_OUT";

/// Appends `{"figure": figure, "value": value}` to the file named by `REPRO_OUT`, if set.
/// One `write` per line (O_APPEND), so lines of tests running side by side do not interleave.
/// Panics if the file cannot be written: a reproduction run must not lose figures silently.
pub fn emit(figure: &str, value: &serde_json::Value) {
    let Some(path) = std::env::var_os(OUT_ENV) else {
        return;
    };
    let line = serde_json::json!({ "figure": figure, "value": value }).to_string() + "\n";
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .unwrap_or_else(|e| panic!("{OUT_ENV}={}: cannot append: {e}", path.to_string_lossy()));
}
