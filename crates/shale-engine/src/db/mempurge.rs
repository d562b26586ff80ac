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
//! The purged memtable joins the immutable ones without a flush request (RocksDB's
//! `MemTableList::Add` without `EnqueuePendingFlush`; `CfState::imm_front_purged`): alone it
//! is neither purged again nor flushed until a memtable switched after it asks for a flush
//! (then all are purged or flushed together) or a manual flush takes it.
//! Nothing is written to the MANIFEST and the family's log number stays (RocksDB's
//! `TryInstallMemtableFlushResults(write_edits = false)`): the WALs holding the purged data
//! stay until a real flush writes it. Not attempted for a manual flush, with atomic flush,
//! or (in Shale) with user-defined timestamps.
//!
//! What is kept is what a flush would write (`compaction::job::flush_entries`, RocksDB's
//! MemPurge runs the same CompactionIterator and MergeHelper as its flush): per user key and
//! snapshot stripe the newest entry, merge operands combined (onto a Put or deletion of
//! their stripe into one Put, else by the partial merge), entries a newer range tombstone of
//! their stripe covers dropped; deletions (older data may be in tables) and range
//! tombstones kept. Wide-column entities are kept as they are, as RocksDB's MemPurge copies
//! every entry its CompactionIterator emits into the new memtable. A memtable holding a blob
//! index is not purged (only blob direct write puts one in a memtable, and RocksDB refuses
//! it with MemPurge at open: "Blob direct write does not support MemPurge."), nor one whose
//! merge fails (the ordinary flush then reports it).

use std::sync::Arc;

use super::cf::CfHandle;
use crate::compaction::job::flush_entries;
use crate::error::Result;
use crate::iter::range_del::RangeTombstone;
use crate::iter::InternalIterator;
use crate::key::{parse_internal_key, trailer, user_key, ValueType};
use crate::memtable::MemTable;

/// The purged memtable, or None when MemPurge does not apply (the caller flushes).
pub fn mempurge(
    handle: &CfHandle,
    mems: &[Arc<MemTable>],
    snapshots: &[u64],
    threshold: f64,
    stats: Option<&crate::statistics::Statistics>,
    enforce_single_del: bool,
) -> Result<Option<Arc<MemTable>>> {
    if mems.is_empty() || threshold <= 0.0 || handle.icmp.timestamp_size() > 0 {
        return Ok(None);
    }
    let write_buffer_size = handle.config().write_buffer_size.max(1);
    let mut iter: Box<dyn InternalIterator> = match mems {
        [one] => one.iter(),
        _ => Box::new(crate::iter::merging::MergingIterator::new(
            handle.icmp.clone(),
            mems.iter().map(|m| m.iter()).collect(),
        )),
    };
    let tombstones: Vec<(Vec<u8>, Vec<u8>)> = mems.iter().flat_map(|m| m.range_tombstones()).collect();
    let range_dels = tombstones
        .iter()
        .map(|(start, end)| {
            let p = parse_internal_key(start)?;
            Ok(RangeTombstone { start: p.user_key.to_vec(), end: end.clone(), seq: p.sequence })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut kept: Vec<(u64, ValueType, Vec<u8>, Vec<u8>)> = Vec::new();
    let mut live_bytes = 0usize;
    let mut other_kind = false;
    // What a flush would write (the compaction's per-key code, merges combined), into
    // memory: RocksDB's MemPurge runs the same CompactionIterator and MergeHelper.
    let r = flush_entries(
        handle.icmp.user_comparator(),
        &mut *iter,
        range_dels,
        snapshots,
        None,
        handle.config().callbacks.merge(),
        stats,
        enforce_single_del,
        None,
        &mut |ikey, value| {
            let tr = trailer(ikey);
            let t = match (tr & 0xff) as u8 {
                0x0 => ValueType::Deletion,
                0x1 => ValueType::Value,
                0x2 => ValueType::Merge,
                0x7 => ValueType::SingleDeletion,
                0x16 => ValueType::WideColumnEntity,
                _ => {
                    other_kind = true;
                    return Ok(());
                }
            };
            live_bytes += ikey.len() + value.len();
            kept.push((tr >> 8, t, user_key(ikey).to_vec(), value.to_vec()));
            Ok(())
        },
    );
    // A failed merge (or a merge with no operator): the ordinary flush runs and reports it,
    // as RocksDB's falls back to a flush when MemPurge fails.
    if r.is_err() || other_kind {
        return Ok(None);
    }
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
