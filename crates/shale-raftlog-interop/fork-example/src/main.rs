// raft-engine 0.4.2's examples/fork.rs, unchanged (see build.rs).
include!(concat!(env!("OUT_DIR"), "/fork.rs"));
