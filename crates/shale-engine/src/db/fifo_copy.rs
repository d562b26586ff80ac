//! FIFO's temperature change by copy (RocksDB 11.8.1's trivial copy in
//! `DBImpl::BackgroundCompaction`, taken when `allow_trivial_copy_when_change_temperature` is
//! set): the one input table's bytes are copied, `trivial_copy_buffer_size` bytes at a time
//! (at least 4 KiB, as RocksDB's `CopyFile`), to a new file number, synced, and the MANIFEST
//! swaps the input for it at the target temperature. The new file keeps the input's keys,
//! sequence numbers, ancestor time, epoch number and unique id (its bytes, properties
//! included, are the input's); its creation time is now and its whole-file checksum is the
//! copy's. Nothing is read as entries and no compaction statistics are added; the ticker
//! `rocksdb.fifo.change_temperature.compactions` counts it once installed (`compact.rs`).
//!
//! Rate limiting, as RocksDB 11.8.1's: the copy's writes ask the database's rate limiter at
//! low priority, as compaction writes (`BackgroundCompaction` passes `IOOptions` with
//! `rate_limiter_priority = IO_LOW` to `CopyFile` and to the destination's `Close`, and its
//! `WritableFileWriter` takes the limiter from the DB's file options), counted in the
//! `rocksdb.rate.limiter.*.write` tickers; its reads ask nothing (`CopyFile`'s
//! `SequentialFileReader` is made without a rate limiter, "TODO: rate limit copy file").

use std::sync::Arc;

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::{DbInner, DbState};
use crate::compaction::picker::CompactionPlan;
use crate::error::{Error, Result};
use crate::version::edit::FileMetaData;

/// RocksDB's `temperature_to_string`.
fn temperature_name(t: u8) -> &'static str {
    match t {
        0x04 => "kHot",
        0x08 => "kWarm",
        0x0A => "kCool",
        0x0C => "kCold",
        0x10 => "kIce",
        _ => "kUnknown",
    }
}

/// The files a copy adds (level, metadata) and the file numbers it took.
type Copied = (Vec<(u32, FileMetaData)>, Vec<u64>);

/// RocksDB's `CopyFile` reads at least this many bytes at a time.
const MIN_COPY_BUFFER: u64 = 4096;

impl DbInner {
    /// Copies `plan`'s input (see the module comment) outside the DB mutex. Returns the
    /// files to add (level, metadata) and the file numbers taken, to release once the
    /// MANIFEST names them; on failure the partial copy is removed.
    pub(super) fn trivial_copy(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        plan: &CompactionPlan,
        output_path_id: u32,
        job: i32,
    ) -> Result<Copied> {
        let temperature = plan.output_temperature.unwrap_or(0);
        let buffer = cf.config().fifo_trivial_copy_buffer_size.max(MIN_COPY_BUFFER);
        let mut outputs = Vec::new();
        let mut numbers = Vec::new();
        let mut lines = Vec::new();
        let this = self.clone();
        let r = super::unlocked(st, || -> Result<()> {
            for f in &plan.inputs {
                let number = this.new_output_number();
                numbers.push(number);
                let from = super::filename::table_file(cf.table_dir(&this.path, f.path_id), f.number);
                let to = super::filename::table_file(cf.table_dir(&this.path, output_path_id), number);
                lines.push(format!(
                    "[{}] [JOB {job}] Started copying from: {}\n temperature={}, to: {}, temperature={}, \
                     buffer_size={}",
                    cf.name,
                    from.display(),
                    temperature_name(f.temperature),
                    to.display(),
                    temperature_name(temperature),
                    cf.config().fifo_trivial_copy_buffer_size
                ));
                let (checksum, func) = copy_table(
                    &*this.fs,
                    &from,
                    &to,
                    buffer,
                    this.config.file_checksum_crc32c,
                    this.config.rate_limiter.as_ref().map(|l| (l, this.config.statistics.as_ref())),
                )?;
                this.fs.sync_dir(cf.table_dir(&this.path, output_path_id))?;
                let mut m = f.as_ref().clone();
                m.number = number;
                m.path_id = output_path_id;
                m.temperature = temperature;
                m.marked_for_compaction = false;
                m.file_creation_time = crate::compaction::picker::unix_now();
                m.file_checksum = checksum;
                m.file_checksum_func_name = func;
                outputs.push((plan.output_level as u32, m));
            }
            Ok(())
        });
        for l in lines {
            self.info_log.buffer_line(format_args!("{l}"));
        }
        if let Err(e) = r {
            super::unlocked(st, || {
                for n in &numbers {
                    let _ = self.fs.remove_file(&super::filename::table_file(
                        cf.table_dir(&self.path, output_path_id),
                        *n,
                    ));
                    self.versions.release_output(*n);
                }
            });
            return Err(e);
        }
        Ok((outputs, numbers))
    }
}

/// The database's rate limiter and statistics, for the copy's writes.
type Limiter<'a> =
    (&'a Arc<crate::rate_limiter::RateLimiter>, Option<&'a Arc<crate::statistics::Statistics>>);

/// Copies table `from` to `to`, `buffer` bytes at a time, and syncs it; returns the copy's
/// recorded whole-file checksum (CRC32C when `checksum`, else RocksDB's "Unknown"). The
/// writes ask `limiter` at low priority (see the module comment).
fn copy_table(
    fs: &dyn shale_base::fs::FileSystem,
    from: &std::path::Path,
    to: &std::path::Path,
    buffer: u64,
    checksum: bool,
    limiter: Option<Limiter<'_>>,
) -> Result<(Vec<u8>, String)> {
    let src = fs.new_random_access_file(from)?;
    let total = src.size()?;
    let mut file = fs.new_writable_file(to)?;
    if let Some((limiter, stats)) = limiter {
        file = Box::new(crate::rate_limiter::RateLimitedFile {
            inner: file,
            limiter: limiter.clone(),
            pri: crate::rate_limiter::IoPriority::Low,
            stats: stats.cloned(),
        });
    }
    let (mut dst, tap) = crate::file_checksum::ChecksummedFile::wrap(file, checksum);
    let mut buf = vec![0u8; usize::try_from(buffer).unwrap_or(usize::MAX).min(64 << 20)];
    let mut off = 0u64;
    while off < total {
        let want = usize::try_from(total - off).unwrap_or(usize::MAX).min(buf.len());
        let n = src.read_at(off, &mut buf[..want])?;
        if n == 0 {
            return Err(Error::corruption(format!(
                "{}: file ends at offset {off}, {total} bytes expected",
                from.display()
            )));
        }
        dst.append(&buf[..n])?;
        off += n as u64;
    }
    dst.sync()?;
    drop(dst);
    Ok(crate::file_checksum::recorded(tap.as_ref()))
}
