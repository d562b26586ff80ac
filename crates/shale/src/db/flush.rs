//! Flushing immutable memtables to level-0 tables, and removing files nothing needs.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::error_handler::BgErrorReason;
use super::filename::{self, FileType};
use super::{DbInner, DbState};
use crate::error::Result;
use crate::fs::FileSystem;
use crate::key::{parse_internal_key, MAX_SEQUENCE_NUMBER};
use crate::memtable::MemTable;
use crate::table::builder::{TableBuilder, TableBuilderOptions};
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::VersionBuilder;

/// Table-builder options for a column family.
pub(crate) fn builder_options(cf: &CfHandle, orig_file_number: u64) -> TableBuilderOptions {
    let o = &cf.opts;
    let mut b = TableBuilderOptions::new(cf.icmp.clone());
    b.block_size = o.table.block_size;
    b.block_restart_interval = o.table.block_restart_interval;
    b.index_block_restart_interval = o.table.index_block_restart_interval;
    b.compression = o.compression.to_table();
    b.filter_bits_per_key = o.table.bloom_bits_per_key;
    b.whole_key_filtering = o.table.whole_key_filtering;
    b.format_version = o.table.format_version;
    b.column_family_id = cf.id;
    b.column_family_name = cf.name.clone();
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    b.creation_time = now;
    b.file_creation_time = now;
    b.oldest_key_time = now;
    b.orig_file_number = orig_file_number;
    b
}

/// Writes `mem` to table `number` (synced). None when the memtable holds nothing.
pub(crate) fn write_level0_table(
    fs: &dyn FileSystem,
    dir: &Path,
    cf: &CfHandle,
    mem: &Arc<MemTable>,
    number: u64,
    _oldest_snapshot: u64,
) -> Result<Option<FileMetaData>> {
    let tombstones = mem.range_tombstones();
    if mem.is_empty() && tombstones.is_empty() {
        return Ok(None);
    }
    let path = filename::table_file(dir, number);
    let file = fs.new_writable_file(&path)?;
    let mut builder = TableBuilder::new(builder_options(cf, number), file);
    let mut meta = FileMetaData { number, ..Default::default() };
    let mut smallest_seq = MAX_SEQUENCE_NUMBER;
    let mut largest_seq = 0;
    let mut iter = mem.iter();
    iter.seek_to_first();
    let mut first = true;
    let range = |meta: &mut FileMetaData, k: &[u8], first: &mut bool| {
        if *first || cf.icmp.compare(k, &meta.smallest).is_lt() {
            meta.smallest = k.to_vec();
        }
        if *first || cf.icmp.compare(k, &meta.largest).is_gt() {
            meta.largest = k.to_vec();
        }
        *first = false;
    };
    while iter.valid() {
        let k = iter.key();
        let seq = crate::key::trailer(k) >> 8;
        smallest_seq = smallest_seq.min(seq);
        largest_seq = largest_seq.max(seq);
        builder.add(k, iter.value())?;
        range(&mut meta, k, &mut first);
        iter.next();
    }
    iter.status()?;
    for (start, end) in &tombstones {
        let p = parse_internal_key(start)?;
        smallest_seq = smallest_seq.min(p.sequence);
        largest_seq = largest_seq.max(p.sequence);
        builder.add_range_tombstone(start, end)?;
        range(&mut meta, start, &mut first);
        // The tombstone's exclusive end, as RocksDB's sentinel largest key.
        let sentinel =
            crate::key::make_internal_key(end, MAX_SEQUENCE_NUMBER, crate::key::ValueType::RangeDeletion);
        range(&mut meta, &sentinel, &mut first);
    }
    let result = builder.finish()?;
    meta.file_size = result.file_size;
    meta.smallest_seqno = smallest_seq;
    meta.largest_seqno = largest_seq;
    meta.file_creation_time = result.properties.file_creation_time;
    meta.oldest_ancester_time = result.properties.creation_time;
    meta.file_checksum_func_name = "Unknown".to_string();
    Ok(Some(meta))
}

impl DbInner {
    /// Flushes the oldest immutable memtable of some family. Returns false when there was
    /// none. Called by the flush thread, with `state` locked and `flush_running` set.
    pub(crate) fn flush_one(&self, st: &mut MutexGuard<'_, DbState>) -> Result<bool> {
        let Some((cf_id, mem, next_log)) = st
            .cfs
            .iter()
            .filter_map(|(id, c)| c.imm.first().map(|(m, l)| (*id, m.clone(), *l)))
            .min_by_key(|(_, m, _)| m.id())
        else {
            return Ok(false);
        };
        let handle = st.cfs[&cf_id].handle.clone();
        let number = st.next_file_number;
        st.next_file_number += 1;
        st.pending_outputs.insert(number);
        // Build the table without the lock.
        let result = MutexGuard::unlocked(st, || {
            write_level0_table(&*self.fs, &self.path, &handle, &mem, number, 0).and_then(|m| {
                if m.is_some() {
                    self.fs.sync_dir(&self.path).map(|_| m)
                } else {
                    Ok(m)
                }
            })
        });
        st.pending_outputs.remove(&number);
        let meta = match result {
            Ok(m) => m,
            Err(e) => {
                let _ = self.fs.remove_file(&filename::table_file(&self.path, number));
                self.set_bg_error_in(st, e.clone(), BgErrorReason::Flush);
                return Err(e);
            }
        };
        let Some(cf) = st.cfs.get(&cf_id) else { return Ok(true) }; // dropped meanwhile
        let mut edit = VersionEdit { column_family: cf_id, log_number: Some(next_log), ..Default::default() };
        let bytes = meta.as_ref().map_or(0, |m| m.file_size);
        if let Some(m) = meta {
            edit.new_files.push((0, m));
        }
        let mut b = VersionBuilder::new(&cf.current);
        b.apply(&edit)?;
        let version = Arc::new(b.build());
        super::open::log_and_apply(self, st, &[edit])?;
        let cf = st.cfs.get_mut(&cf_id).ok_or_else(|| crate::Error::corruption("family vanished"))?;
        cf.current = version.clone();
        cf.imm.remove(0);
        cf.log_number = next_log;
        cf.install_super_version();
        st.live_versions.push(Arc::downgrade(&version));
        self.stats.flushes.fetch_add(1, Ordering::Relaxed);
        self.stats.flush_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.info_log
            .log(format_args!("[{}] Flushed memtable to table #{number} ({bytes} bytes)", handle.name));
        purge_obsolete_files(self, st);
        Ok(true)
    }
}

/// Removes WALs every family has flushed past, and tables no live Version names.
pub(crate) fn purge_obsolete_files(inner: &DbInner, st: &mut DbState) {
    // WALs: below the smallest log number any family still needs.
    let wal_now = st.alive_wals.back().copied().unwrap_or(0);
    let min_log = st
        .cfs
        .values()
        .map(|c| if c.mem.is_empty() && c.imm.is_empty() { wal_now } else { c.log_number })
        .min()
        .unwrap_or(wal_now);
    while let Some(&w) = st.alive_wals.front() {
        if w >= min_log || w == wal_now {
            break;
        }
        st.alive_wals.pop_front();
        let _ = inner.fs.remove_file(&filename::wal_file(&inner.path, w));
    }
    if st.manifest_write_failed {
        return; // the durable MANIFEST may name any table, and CURRENT any MANIFEST
    }
    // Tables: keep those of live versions and pending outputs.
    st.live_versions.retain(|w| w.strong_count() > 0);
    let mut live: BTreeSet<u64> = st.pending_outputs.clone();
    for v in st.live_versions.iter().filter_map(|w| w.upgrade()) {
        live.extend(v.all_files().map(|(_, f)| f.number));
    }
    for c in st.cfs.values() {
        live.extend(c.current.all_files().map(|(_, f)| f.number));
    }
    let Ok(children) = inner.fs.children(&inner.path) else { return };
    for name in children {
        match filename::parse_file_name(&name) {
            Some(FileType::Table(n)) if !live.contains(&n) => {
                inner.table_cache.evict(n);
                let _ = inner.fs.remove_file(&inner.path.join(&name));
            }
            Some(FileType::Wal(n)) if n < min_log && n != wal_now && !st.alive_wals.contains(&n) => {
                let _ = inner.fs.remove_file(&inner.path.join(&name));
            }
            Some(FileType::Manifest(n)) if n != st.manifest.number() => {
                let _ = inner.fs.remove_file(&inner.path.join(&name));
            }
            Some(FileType::Temp(n)) if !st.pending_outputs.contains(&n) => {
                let _ = inner.fs.remove_file(&inner.path.join(&name));
            }
            _ => {}
        }
    }
}
