#!/usr/bin/env bash
# shale-raftlog against tikv/raft-engine 0.4.2 (from crates.io), both ways, in one process each.
#
# What it runs (crates/shale-raftlog-interop, its own workspace with its own Cargo.lock):
#   1. the interop checks (`src/main.rs`): each engine writes a directory (entries, commands,
#      key-values, purges with rewrites, compression), the other opens it, must read what an
#      in-memory model says, writes on, and the first reads back; torn tails in each recovery
#      mode; Shale's prefilled next file; batches that compact or clean a group and then append to
#      it in the same batch, with `compression_level` set, both ways, and the two engines' log
#      files compared byte for byte for the same batches;
#   2. an append/compact/purge program shaped like raft-engine 0.4.2's example, against
#      shale-raftlog under the name `raft_engine` (fork-example/src/bin): raft's entries, per-group
#      state messages, compactions, purges with forced compactions, a reopen, checked at the end.
#      (fork-example's main, raft-engine's examples/fork.rs unchanged, is built but not run: with
#      its default Config, log recycling on, raft-engine's `Engine::fork` refuses, and so does
#      Shale's; tests/fork.rs covers fork.)
#
# Exit status: non-zero if a check fails or a program does not run to its end.
# The first build compiles raft-engine and its dependencies (about 10 minutes on 2 cores); the
# runs then take well under a minute each. Environment: CARGO_TARGET_DIR (its target is
# <target>/raftlog-interop).
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
TARGET_BASE="${CARGO_TARGET_DIR:-$REPO/target}"
export CARGO_TARGET_DIR="$TARGET_BASE/raftlog-interop"
cd "$REPO/crates/shale-raftlog-interop"

# fork-example's build script reads raft-engine 0.4.2's examples/fork.rs from the registry.
cargo fetch --locked
cargo build --release --locked --workspace --bins

echo "== interop checks (shale-raftlog <-> raft-engine 0.4.2)"
"$CARGO_TARGET_DIR/release/shale-raftlog-interop"

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
echo "== append/compact/purge program on shale-raftlog"
"$CARGO_TARGET_DIR/release/append_compact_purge" "$SCRATCH/append-compact-purge"
echo "raftlog-interop: all passed"
