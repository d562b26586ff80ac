//! RocksDB's experimental MemPurge (`experimental_mempurge_threshold`, db/flush_job.cc): a
//! flush caused by a full write buffer may instead garbage-collect the immutable memtables
//! into one new immutable memtable, writing no table.
//!
//! ```text
//! imm: [m1, m2, ... mN] --(merge, drop versions nothing can read)--> imm: [purged]
//!      attempted when:  threshold > N, or live bytes / write_buffer_size < threshold
//!      kept when:       the purged memtable uses less than write_buffer_size
//!      otherwise:       the ordinary flush runs
//! ```
//! Nothing is written to the MANIFEST and the family's log number stays (RocksDB's
//! `TryInstallMemtableFlushResults(write_edits = false)`): the WALs holding the purged data
//! stay until a real flush writes it. Not attempted for a manual flush, with atomic flush,
//! or (in Shale) with user-defined timestamps.
//!
//! What is dropped, per user key, newest first, within each snapshot stripe (entries that
//! the same snapshots see): everything older than the first Put, Delete or SingleDelete of
//! the stripe. Merge operands above it are kept (they are not combined), deletions are
//! kept (older data may be in tables), range tombstones and the entries they cover are
//! kept. A memtable holding an entry of another kind (blob index, wide columns) is not
//! purged.

use std::sync::Arc;

use super::cf::CfHandle;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{parse_internal_key, trailer, user_key, ValueType};
use crate::memtable::MemTable;

/// The purged memtable, or None when MemPurge does not apply (the caller flushes).
pub(crate) fn mempurge(
    handle: &CfHandle,
    mems: &[Arc<MemTable>],
    snapshots: &[u64],
    threshold: f64,
) -> Result<Option<Arc<MemTable>>> {
    if mems.is_empty() || threshold <= 0.0 || handle.icmp.timestamp_size() > 0 {
        return Ok(None);
    }
    let write_buffer_size = handle.opts.write_buffer_size.max(1);
    let mut iter: Box<dyn InternalIterator> = match mems {
        [one] => one.iter(),
        _ => Box::new(crate::iter::merging::MergingIterator::new(
            handle.icmp.clone(),
            mems.iter().map(|m| m.iter()).collect(),
        )),
    };
    let ucmp = handle.icmp.user_comparator().clone();
    let stripe_of = |seq: u64| {
        let i = snapshots.partition_point(|&s| s < seq);
        snapshots.get(i).copied().unwrap_or(u64::MAX)
    };
    let mut kept: Vec<(u64, ValueType, Vec<u8>, Vec<u8>)> = Vec::new();
    let mut live_bytes = 0usize;
    // The user key and stripe being walked, and whether that stripe already ended.
    let mut current: Option<(Vec<u8>, u64, bool)> = None;
    iter.seek_to_first();
    while iter.valid() {
        let ikey = iter.key();
        if ikey.len() < 8 {
            return Ok(None);
        }
        let tr = trailer(ikey);
        let (seq, uk) = (tr >> 8, user_key(ikey));
        let t = match (tr & 0xff) as u8 {
            0x0 => ValueType::Deletion,
            0x1 => ValueType::Value,
            0x2 => ValueType::Merge,
            0x7 => ValueType::SingleDeletion,
            _ => return Ok(None),
        };
        let stripe = stripe_of(seq);
        let same = current.as_ref().is_some_and(|(k, s, _)| *s == stripe && ucmp.compare(k, uk).is_eq());
        if !same {
            current = Some((uk.to_vec(), stripe, false));
        }
        let Some(cur) = current.as_mut() else { break };
        if !cur.2 {
            live_bytes += ikey.len() + iter.value().len();
            kept.push((seq, t, uk.to_vec(), iter.value().to_vec()));
            cur.2 = t != ValueType::Merge;
        }
        iter.next();
    }
    iter.status()?;
    let tombstones: Vec<(Vec<u8>, Vec<u8>)> = mems.iter().flat_map(|m| m.range_tombstones()).collect();
    live_bytes += tombstones.iter().map(|(s, e)| s.len() + e.len()).sum::<usize>();
    // RocksDB's MemPurgeDecider (which estimates by sampling what is counted here).
    if !(threshold > mems.len() as f64 || (live_bytes as f64 / write_buffer_size as f64) < threshold) {
        return Ok(None);
    }
    let id = mems.iter().map(|m| m.id()).max().unwrap_or(0);
    let purged = handle.new_memtable(id);
    for (seq, t, k, v) in &kept {
        purged.add(*seq, *t, k, v);
        if purged.approximate_memory_usage() >= write_buffer_size {
            return Ok(None); // "Mempurge filled more than one memtable."
        }
    }
    for (start, end) in &tombstones {
        let p = parse_internal_key(start)?;
        purged.add(p.sequence, ValueType::RangeDeletion, p.user_key, end);
    }
    if purged.approximate_memory_usage() >= write_buffer_size {
        return Ok(None);
    }
    purged.mark_immutable();
    Ok(Some(purged))
}
