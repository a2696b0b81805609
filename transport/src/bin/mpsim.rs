//! mpsim: placeholder until the simulator lands.
fn main() {
    eprintln!("mpsim: not implemented yet");
    std::process::exit(2);
}
