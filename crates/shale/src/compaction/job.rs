//! Running a compaction: merge the inputs, drop what no reader can see, write outputs.
//!
//! Visibility follows RocksDB's snapshot stripes. An entry's stripe is the oldest snapshot
//! that can see it (the smallest snapshot >= its sequence; "latest" if none). Of the
//! entries of one user key in one stripe only the newest is kept. An entry is dropped when
//! a range tombstone newer than it lies in its stripe. A deletion is dropped at the
//! bottommost level once every snapshot sees it. Range tombstones go to every output whose
//! key range they cross, clipped to it; at the bottommost level a tombstone every snapshot
//! sees is dropped.
//!
//! Outputs are cut at `target_file_size`, never inside one user key, so files of a level
//! stay disjoint by user key.

use std::path::Path;

use crate::db::filename;
use crate::error::Result;
use crate::fs::FileSystem;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::BoxedIterator;
use crate::key::{make_internal_key, parse_internal_key, ValueType, MAX_SEQUENCE_NUMBER};
use crate::table::builder::{TableBuilder, TableBuilderOptions};
use crate::version::edit::FileMetaData;

/// Everything a compaction job needs, handed in by the database.
/// A compaction filter on values: true removes the entry.
pub type ValueFilter = dyn Fn(&[u8]) -> bool;

pub struct JobInput<'a> {
    pub fs: &'a dyn FileSystem,
    pub dir: &'a Path,
    /// Merged iterator over all input files.
    pub iter: BoxedIterator,
    pub tombstones: Vec<RangeTombstone>,
    /// Live snapshots, ascending.
    pub snapshots: Vec<u64>,
    pub bottommost: bool,
    pub target_file_size: u64,
    /// Builder options for a new output file number.
    pub builder_options: &'a dyn Fn(u64) -> TableBuilderOptions,
    /// Allocates an output file number.
    pub new_file_number: &'a dyn Fn() -> u64,
    /// A compaction filter on values (a TTL database's expiry, `db/ttl.rs`): true removes
    /// the entry. Asked, as RocksDB asks its filters, only for the newest Put of a key that
    /// no snapshot sees; a removed entry becomes a deletion (dropped at the bottommost
    /// level), so that older versions stay hidden.
    pub remove_value: Option<&'a ValueFilter>,
}

struct Output {
    builder: TableBuilder,
    meta: FileMetaData,
    empty: bool,
}

/// The outcome: output files (synced) and bytes read and written.
pub struct JobResult {
    pub outputs: Vec<FileMetaData>,
    pub bytes_written: u64,
    pub entries_dropped: u64,
}

pub fn run(mut input: JobInput<'_>) -> Result<JobResult> {
    let icmp = (input.builder_options)(0).icmp.clone();
    let ucmp = icmp.user_comparator().clone();
    let earliest = input.snapshots.first().copied().unwrap_or(MAX_SEQUENCE_NUMBER);
    let snapshots = input.snapshots.clone();
    let stripe_of = |seq: u64| -> u64 {
        let i = snapshots.partition_point(|&s| s < seq);
        snapshots.get(i).copied().unwrap_or(MAX_SEQUENCE_NUMBER)
    };
    let kept_tombstones: Vec<RangeTombstone> =
        input.tombstones.iter().filter(|t| !(input.bottommost && t.seq <= earliest)).cloned().collect();
    let frag = FragmentedTombstones::new(ucmp.clone(), input.tombstones.clone());

    let mut result = JobResult { outputs: Vec::new(), bytes_written: 0, entries_dropped: 0 };
    let mut out: Option<Output> = None;
    let mut lower: Option<Vec<u8>> = None;
    let mut cur_key: Vec<u8> = Vec::new();
    let mut has_cur = false;
    let mut last_stripe: Option<u64> = None;

    let ctx = Ctx {
        fs: input.fs,
        dir: input.dir,
        builder_options: input.builder_options,
        new_file_number: input.new_file_number,
    };
    let iter = &mut input.iter;
    iter.seek_to_first();
    while iter.valid() {
        let k = iter.key();
        let p = parse_internal_key(k)?;
        let new_key = !has_cur || ucmp.compare(p.user_key, &cur_key).is_ne();
        if new_key {
            if out.as_ref().is_some_and(|o| o.builder.file_size() >= input.target_file_size) {
                let o = out.take();
                finish(&ctx, o, &kept_tombstones, lower.as_deref(), Some(p.user_key), &mut result)?;
                lower = Some(p.user_key.to_vec());
            }
            cur_key.clear();
            cur_key.extend_from_slice(p.user_key);
            has_cur = true;
            last_stripe = None;
        }
        let stripe = stripe_of(p.sequence);
        let drop = if last_stripe == Some(stripe) {
            true
        } else {
            last_stripe = Some(stripe);
            (!frag.is_empty() && frag.max_covering_seq(p.user_key, stripe) > p.sequence)
                || (matches!(p.value_type, ValueType::Deletion | ValueType::SingleDeletion)
                    && input.bottommost
                    && p.sequence <= earliest)
        };
        let filtered = !drop
            && p.value_type == ValueType::Value
            && stripe == MAX_SEQUENCE_NUMBER
            && input.remove_value.is_some_and(|f| f(iter.value()));
        let drop = drop || (filtered && input.bottommost && p.sequence <= earliest);
        if drop {
            result.entries_dropped += 1;
        } else {
            if out.is_none() {
                out = Some(open_output(&ctx)?);
            }
            let tombstone;
            let (k, v) = if filtered {
                tombstone = make_internal_key(p.user_key, p.sequence, ValueType::Deletion);
                (&tombstone[..], &[][..])
            } else {
                (k, iter.value())
            };
            if let Some(o) = out.as_mut() {
                o.builder.add(k, v)?;
                extend(&icmp, &mut o.meta, k, o.empty);
                o.empty = false;
                o.meta.smallest_seqno = o.meta.smallest_seqno.min(p.sequence);
                o.meta.largest_seqno = o.meta.largest_seqno.max(p.sequence);
            }
        }
        iter.next();
    }
    iter.status()?;
    if out.is_none() && overlaps_any(&ucmp, &kept_tombstones, lower.as_deref(), None) {
        out = Some(open_output(&ctx)?);
    }
    finish(&ctx, out, &kept_tombstones, lower.as_deref(), None, &mut result)?;
    Ok(result)
}

struct Ctx<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    builder_options: &'a dyn Fn(u64) -> TableBuilderOptions,
    new_file_number: &'a dyn Fn() -> u64,
}

fn open_output(ctx: &Ctx<'_>) -> Result<Output> {
    let number = (ctx.new_file_number)();
    let file = ctx.fs.new_writable_file(&filename::table_file(ctx.dir, number))?;
    let builder = TableBuilder::new((ctx.builder_options)(number), file);
    let meta = FileMetaData {
        number,
        smallest_seqno: MAX_SEQUENCE_NUMBER,
        largest_seqno: 0,
        file_checksum_func_name: "Unknown".to_string(),
        ..Default::default()
    };
    Ok(Output { builder, meta, empty: true })
}

fn extend(icmp: &crate::key::InternalKeyComparator, meta: &mut FileMetaData, k: &[u8], empty: bool) {
    if empty || icmp.compare(k, &meta.smallest).is_lt() {
        meta.smallest = k.to_vec();
    }
    if empty || icmp.compare(k, &meta.largest).is_gt() {
        meta.largest = k.to_vec();
    }
}

fn overlaps_any(
    ucmp: &crate::comparator::ComparatorRef,
    ts: &[RangeTombstone],
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> bool {
    ts.iter().any(|t| clip(ucmp, t, lower, upper).is_some())
}

/// `t` clipped to `[lower, upper)`, if anything is left.
fn clip<'a>(
    ucmp: &crate::comparator::ComparatorRef,
    t: &'a RangeTombstone,
    lower: Option<&'a [u8]>,
    upper: Option<&'a [u8]>,
) -> Option<(&'a [u8], &'a [u8])> {
    let s: &[u8] = match lower {
        Some(l) if ucmp.compare(l, &t.start).is_gt() => l,
        _ => &t.start,
    };
    let e: &[u8] = match upper {
        Some(u) if ucmp.compare(u, &t.end).is_lt() => u,
        _ => &t.end,
    };
    ucmp.compare(s, e).is_lt().then_some((s, e))
}

fn finish(
    ctx: &Ctx<'_>,
    out: Option<Output>,
    tombstones: &[RangeTombstone],
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
    result: &mut JobResult,
) -> Result<()> {
    let Some(mut o) = out else { return Ok(()) };
    let icmp = (ctx.builder_options)(0).icmp.clone();
    let ucmp = icmp.user_comparator().clone();
    let mut clipped: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for t in tombstones {
        if let Some((s, e)) = clip(&ucmp, t, lower, upper) {
            let start = make_internal_key(s, t.seq, ValueType::RangeDeletion);
            let sentinel = make_internal_key(e, MAX_SEQUENCE_NUMBER, ValueType::RangeDeletion);
            extend(&icmp, &mut o.meta, &start, o.empty);
            o.empty = false;
            extend(&icmp, &mut o.meta, &sentinel, false);
            o.meta.smallest_seqno = o.meta.smallest_seqno.min(t.seq);
            o.meta.largest_seqno = o.meta.largest_seqno.max(t.seq);
            clipped.push((start, e.to_vec()));
        }
    }
    clipped.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    for (start, end) in &clipped {
        o.builder.add_range_tombstone(start, end)?;
    }
    if o.empty {
        let number = o.meta.number;
        drop(o);
        let _ = ctx.fs.remove_file(&filename::table_file(ctx.dir, number));
        return Ok(());
    }
    let built = o.builder.finish()?;
    o.meta.file_size = built.file_size;
    o.meta.file_creation_time = built.properties.file_creation_time;
    o.meta.oldest_ancester_time = built.properties.creation_time;
    result.bytes_written += built.file_size;
    result.outputs.push(o.meta);
    Ok(())
}
