//! Flushing immutable memtables to level-0 tables (the flush job the scheduler runs).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::error_handler::BgErrorReason;
use super::filename;
use super::{DbInner, DbState};
use crate::error::Result;
use crate::fs::FileSystem;
use crate::key::{parse_internal_key, MAX_SEQUENCE_NUMBER};
use crate::memtable::MemTable;
use crate::table::builder::{TableBuilder, TableBuilderOptions};
use crate::version::edit::{FileMetaData, VersionEdit};

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
    /// Flushes family `id`'s immutable memtables, oldest first, each to a level-0 table,
    /// until none is left. The caller has set the family's `flush_running`; the DB mutex is
    /// released while a table is written and while the MANIFEST records it.
    pub(crate) fn flush_cf(&self, st: &mut MutexGuard<'_, DbState>, id: u32) -> Result<()> {
        loop {
            if self.shutting_down.load(Ordering::Acquire) {
                return Ok(()); // what is left is in the WAL
            }
            let Some(cf) = st.cfs.get(&id) else { return Ok(()) };
            let Some((mem, next_log)) = cf.imm.first().cloned() else { return Ok(()) };
            let handle = cf.handle.clone();
            let number = self.versions.new_output_number();
            // Build the table without the lock.
            let started = std::time::Instant::now();
            let result = MutexGuard::unlocked(st, || {
                write_level0_table(&*self.fs, &self.path, &handle, &mem, number, 0).and_then(|m| {
                    if let Some(meta) = m.as_ref().filter(|_| handle.opts.paranoid_file_checks) {
                        self.verify_new_table(&handle, meta)?;
                    }
                    if m.is_some() {
                        self.fs.sync_dir(&self.path).map(|_| m)
                    } else {
                        Ok(m)
                    }
                })
            });
            let write_micros = started.elapsed().as_micros();
            let meta = match result {
                Ok(m) => m,
                Err(e) => {
                    self.versions.release_output(number);
                    let _ = self.fs.remove_file(&filename::table_file(&self.path, number));
                    self.set_bg_error_in(st, e.clone(), BgErrorReason::Flush);
                    return Err(e);
                }
            };
            let bytes = meta.as_ref().map_or(0, |m| m.file_size);
            let mut edit =
                VersionEdit { column_family: id, log_number: Some(next_log), ..Default::default() };
            if let Some(m) = meta {
                edit.new_files.push((0, m));
            }
            let r = self.log_and_apply(st, vec![edit], |st| {
                if let Some(cf) = st.cfs.get_mut(&id) {
                    cf.imm.remove(0);
                    cf.log_number = next_log;
                    cf.mems_flushed += 1;
                }
            });
            self.versions.release_output(number);
            // On failure the table stays: the MANIFEST may name it after all. Once a new
            // MANIFEST is written without it, the next open removes it.
            r?;
            self.stats.flushes.fetch_add(1, Ordering::Relaxed);
            self.stats.flush_bytes.fetch_add(bytes, Ordering::Relaxed);
            if handle.opts.report_bg_io_stats {
                self.info_log.log(format_args!(
                    "[{}] Flushed memtable to table #{number} ({bytes} bytes), write micros {write_micros}",
                    handle.name
                ));
            } else {
                self.info_log.log(format_args!(
                    "[{}] Flushed memtable to table #{number} ({bytes} bytes)",
                    handle.name
                ));
            }
            self.done_cv.notify_all();
            self.purge_obsolete_files(st);
        }
    }
}
