//! Fuzzes the block decoder: `Block::new` (footer, restart array, hash-index footer), the
//! data/meta/index block iterators (forward, backward, seek, seek_for_prev), and the
//! stored-block path `read_block_with_dict` (trailer, checksum, decompression).
//!
//! ```text
//! input = flags | body                     (bits of `flags`: shale_fuzz::block_input)
//! body  = block contents                   kinds DATA, META, INDEX
//!       | checksum type | contents | compression type | checksum      (WITH_TRAILER)
//!       | restart interval | (key_len key value_len value)*          (BUILD)
//! ```
//! BUILD builds a block with `BlockBuilder` from the given entries and checks that the
//! iterators give exactly those entries back.
#![no_main]

use std::cmp::Ordering;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use shale_engine::iter::InternalIterator;
use shale::key::{bytewise_internal_comparator, make_internal_key, ValueType};
use shale::table::block::{Block, BlockBuilder, BlockIter, IndexFormat};
use shale::table::format::{read_block_with_dict, BlockHandle, ChecksumType};
use shale_fuzz::block_input::*;
use shale_fuzz::BytesFile;

/// A small raw-content dictionary for the LZ4/ZSTD dictionary path.
const DICT: &[u8] = b"key000value000key001value001key002value002user_key_prefix_0123456789";

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else { return };
    let kind = flags & 3;
    if kind == KIND_BUILD {
        build_and_check(flags, body);
        return;
    }
    let contents = if flags & WITH_TRAILER != 0 {
        match read_stored(flags, body) {
            Some(c) => c,
            None => return,
        }
    } else {
        body.to_vec()
    };
    let limit = contents.len() + 1;
    let Ok(block) = Block::new(contents) else { return };
    let block = Arc::new(block);
    let icmp = bytewise_internal_comparator();
    match kind {
        KIND_DATA => {
            let c = icmp.clone();
            check_iter(block.iter(icmp), move |a, b| c.compare(a, b), limit, body)
        }
        KIND_META => check_iter(block.meta_iter(), |a, b| a.cmp(b), limit, body),
        _ => check_index(&block, flags, limit, body),
    }
});

/// Runs a stored block (contents + 5-byte trailer) through the table's read path.
fn read_stored(flags: u8, body: &[u8]) -> Option<Vec<u8>> {
    let (&ck, rest) = body.split_first()?;
    let checksum = ChecksumType::from_u8(ck % 5)?;
    let size = rest.len().checked_sub(5)?;
    let file = BytesFile(Arc::new(rest.to_vec()));
    let dict: &[u8] = if flags & 0x40 != 0 { DICT } else { &[] };
    let out = read_block_with_dict(&file, BlockHandle::new(0, size as u64), checksum, true, "fuzz", dict);
    out.ok()
}

/// Seek targets: a few decoded keys, variations of them, and slices of the input.
fn targets(keys: &[Vec<u8>], body: &[u8]) -> Vec<Vec<u8>> {
    let mut t: Vec<Vec<u8>> = Vec::new();
    for k in keys.iter().take(4).chain(keys.iter().rev().take(2)) {
        t.push(k.clone());
        let mut up = k.clone();
        if let Some(b) = up.last_mut() {
            *b = b.wrapping_add(1);
        }
        t.push(up);
        t.push(k[..k.len() / 2].to_vec());
    }
    t.push(Vec::new());
    t.push(vec![0xff; 12]);
    for chunk in body.chunks(16).take(3) {
        t.push(chunk.to_vec());
    }
    t
}

fn check_iter(mut it: BlockIter, cmp: impl Fn(&[u8], &[u8]) -> Ordering, limit: usize, body: &[u8]) {
    let mut keys = Vec::new();
    it.seek_to_first();
    while it.valid() {
        keys.push(it.key().to_vec());
        let _ = it.value().len();
        assert!(keys.len() <= limit, "forward iteration does not end");
        it.next();
    }
    let mut n = 0;
    it.seek_to_last();
    while it.valid() {
        n += 1;
        assert!(n <= limit, "backward iteration does not end");
        it.prev();
    }
    for t in targets(&keys, body) {
        it.seek(&t);
        if it.valid() {
            assert_ne!(cmp(it.key(), &t), Ordering::Less, "seek landed before its target");
            it.next();
            it.prev();
        }
        it.seek_for_prev(&t);
        if it.valid() {
            assert_ne!(cmp(it.key(), &t), Ordering::Greater, "seek_for_prev landed after its target");
            it.prev();
            it.next();
        }
    }
}

fn check_index(block: &Arc<Block>, flags: u8, limit: usize, body: &[u8]) {
    let opts = IndexFormat {
        key_is_user_key: flags & INDEX_USER_KEY != 0,
        value_delta_encoded: flags & INDEX_DELTA != 0,
        has_first_key: flags & INDEX_FIRST_KEY != 0,
    };
    let mut it = block.index_iter(bytewise_internal_comparator(), opts);
    let mut keys = Vec::new();
    it.seek_to_first();
    while it.valid() {
        keys.push(it.key().to_vec());
        let _ = it.handle();
        assert!(keys.len() <= limit, "forward iteration does not end");
        it.next();
    }
    let mut n = 0;
    it.seek_to_last();
    while it.valid() {
        n += 1;
        assert!(n <= limit, "backward iteration does not end");
        it.prev();
    }
    for t in targets(&keys, body) {
        it.seek(&t);
        if it.valid() {
            it.next();
            it.prev();
        }
    }
}

/// Parses `restart interval | (key_len key value_len value)*`, builds a data block and an
/// index block from the (sorted, deduplicated) entries and checks the decoders return
/// them exactly.
fn build_and_check(flags: u8, body: &[u8]) {
    let Some((&ri, mut rest)) = body.split_first() else { return };
    let restart_interval = (ri % 17) as usize + 1;
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let take = |rest: &mut &[u8]| -> Option<Vec<u8>> {
        let (&n, r) = rest.split_first()?;
        let n = (n as usize).min(r.len());
        let (a, b) = r.split_at(n);
        *rest = b;
        Some(a.to_vec())
    };
    while let (Some(k), Some(v)) = (take(&mut rest), take(&mut rest)) {
        entries.push((k, v));
    }
    entries.sort();
    entries.dedup_by(|a, b| a.0 == b.0);

    // A data block with internal keys (user key + a trailer), in internal-key order.
    let icmp = bytewise_internal_comparator();
    let ikeys: Vec<Vec<u8>> = entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| make_internal_key(k, i as u64, ValueType::Value))
        .collect();
    let mut b = BlockBuilder::new(restart_interval);
    for (ik, (_, v)) in ikeys.iter().zip(&entries) {
        b.add(ik, v);
    }
    let block = Arc::new(Block::new(b.finish().to_vec()).expect("a built block parses"));
    let mut it = block.iter(icmp.clone());
    let mut got = Vec::new();
    it.seek_to_first();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().expect("a built block iterates without error");
    let want: Vec<(Vec<u8>, Vec<u8>)> =
        ikeys.iter().cloned().zip(entries.iter().map(|(_, v)| v.clone())).collect();
    assert_eq!(got, want, "forward iteration differs from what was built");
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().expect("backward iteration without error");
    back.reverse();
    assert_eq!(back, want, "backward iteration differs from what was built");
    for (i, ik) in ikeys.iter().enumerate() {
        it.seek(ik);
        assert!(it.valid() && it.key() == &ik[..], "seek to entry {i} missed");
        it.seek_for_prev(ik);
        assert!(it.valid() && it.key() == &ik[..], "seek_for_prev to entry {i} missed");
        // Just past the entry (a smaller trailer sorts later): the next entry, or the end.
        let mut past = ik.clone();
        let n = past.len();
        past[n - 8] = 0; // type 0 with seq i sorts after type 1 with seq i
        it.seek(&past);
        match ikeys.get(i + 1) {
            Some(next) => assert!(it.valid() && it.key() == &next[..], "seek past entry {i}"),
            None => assert!(!it.valid() && it.status().is_ok(), "seek past the last entry"),
        }
    }

    // An index block over the same user keys, handles of contiguous blocks.
    let delta = flags & INDEX_DELTA != 0;
    let mut ib = BlockBuilder::new_index(restart_interval, delta);
    let mut handles = Vec::new();
    let mut prev: Option<BlockHandle> = None;
    for (k, v) in &entries {
        let offset = prev.map_or(0, |p| p.offset + p.size + 5);
        let h = BlockHandle::new(offset, v.len() as u64 * 37);
        ib.add_index(k, h, prev);
        handles.push(h);
        prev = Some(h);
    }
    let iblock = Arc::new(Block::new(ib.finish().to_vec()).expect("a built index block parses"));
    let opts = IndexFormat { key_is_user_key: true, value_delta_encoded: delta, has_first_key: false };
    let mut ii = iblock.index_iter(icmp, opts);
    let mut got = Vec::new();
    ii.seek_to_first();
    while ii.valid() {
        got.push((ii.key().to_vec(), ii.handle()));
        ii.next();
    }
    ii.status().expect("a built index block iterates without error");
    let want: Vec<(Vec<u8>, BlockHandle)> = entries.iter().map(|(k, _)| k.clone()).zip(handles).collect();
    assert_eq!(got, want, "index iteration differs from what was built");
    for (k, h) in &want {
        ii.seek(&make_internal_key(k, 1, ValueType::Value));
        assert!(ii.valid() && ii.key() == &k[..] && ii.handle() == *h, "index seek missed");
    }
}
