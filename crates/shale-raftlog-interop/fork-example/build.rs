//! Takes raft-engine 0.4.2's `examples/fork.rs` from the cargo registry (the interop
//! workspace depends on raft-engine 0.4.2, so cargo has downloaded it) into OUT_DIR, to be
//! compiled unchanged: nothing of it is copied into this repository.

use std::path::PathBuf;

fn main() {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let src = home.join("registry").join("src");
    let found = std::fs::read_dir(&src)
        .expect("cargo registry sources")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("raft-engine-0.4.2").join("examples").join("fork.rs"))
        .find(|p| p.exists())
        .expect(
            "raft-engine-0.4.2/examples/fork.rs in the cargo registry (cargo fetch in the interop workspace)",
        );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("fork.rs");
    std::fs::copy(&found, &out).expect("copy fork.rs");
    println!("cargo:rerun-if-changed={}", found.display());
}
