//! Shaped like raft-engine 0.4.2's examples/append_compact_purge.rs, against shale-raftlog
//! under the name `raft_engine`: raft's `eraftpb::Entry` stored through `MessageExt`, a
//! per-region state message (raft's `HardState`, since the example's kvproto
//! `RaftLocalState` is not on crates.io) through `put_message`/`get_message`,
//! `compact_to`, and `purge_expired_files` with forced compactions. Bounded (the example
//! loops forever) and checked at the end.

use raft::eraftpb::{Entry, HardState};
use raft_engine::{Config, Engine, LogBatch, MessageExt, ReadableSize};

#[derive(Clone)]
pub struct MessageExtTyped;

impl MessageExt for MessageExtTyped {
    type Entry = Entry;

    fn index(e: &Self::Entry) -> u64 {
        e.index
    }
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "append-compact-purge-data".to_owned());
    let _ = std::fs::remove_dir_all(&dir);
    let config = Config {
        dir: dir.clone(),
        target_file_size: ReadableSize::mb(1),
        purge_threshold: ReadableSize::mb(8),
        batch_compression_threshold: ReadableSize::kb(0),
        ..Default::default()
    };
    let engine = Engine::open(config.clone()).expect("Open raft engine");
    let compact_offset = 32; // raft-engine's rewrite limit
    let mut seed = 42u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        seed >> 33
    };
    let mut batch = LogBatch::with_capacity(256);
    let mut entry = Entry::new();
    entry.set_data(vec![b'x'; 4096].into());
    let (mut compacts, mut forced) = (0, 0);
    for _round in 0..12 {
        for _ in 0..512 {
            let region = 1 + next() % 64;
            let mut state =
                engine.get_message::<HardState>(region, b"last_index").unwrap().unwrap_or_default();
            state.commit += 1; // the region's last index
            let mut e = entry.clone();
            e.index = state.commit;
            batch.add_entries::<MessageExtTyped>(region, &[e]).unwrap();
            batch.put_message(region, b"last_index".to_vec(), &state).unwrap();
            engine.write(&mut batch, false).unwrap();
            if state.commit.is_multiple_of(compact_offset) {
                let offset = 16 + next() % 32;
                if state.commit > offset {
                    engine.compact_to(region, state.commit - offset);
                    compacts += 1;
                }
            }
        }
        for region in engine.purge_expired_files().unwrap() {
            let state = engine.get_message::<HardState>(region, b"last_index").unwrap().unwrap();
            engine.compact_to(region, state.commit - 7);
            forced += 1;
        }
    }
    // Every region's last entry and state survive a reopen.
    let regions = engine.raft_groups();
    let used = engine.get_used_size();
    drop(engine);
    let engine = Engine::open(config).expect("reopen");
    for region in &regions {
        let state = engine.get_message::<HardState>(*region, b"last_index").unwrap().unwrap();
        let last: Entry = engine.get_entry::<MessageExtTyped>(*region, state.commit).unwrap().unwrap();
        assert_eq!(last.index, state.commit);
        assert_eq!(engine.last_index(*region), Some(state.commit));
    }
    println!(
        "ok: {} regions, {compacts} compactions, {forced} forced by purge, {} bytes used before reopen, append files {:?}",
        regions.len(),
        used,
        engine.file_span(raft_engine::LogQueue::Append)
    );
}
