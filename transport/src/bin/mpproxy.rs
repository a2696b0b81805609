//! mpproxy: placeholder until the runtime lands (prints the algorithm names).
fn main() {
    println!("cc: {}", mptransport::cc::names().join(" "));
    println!("sched: {}", mptransport::sched::all_names().join(" "));
}
