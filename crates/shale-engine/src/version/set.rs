//! The VersionSet (LevelDB's and RocksDB's name): file numbering, the last sequence number,
//! files being written, and the MANIFEST writer. It is the one place that makes a change of
//! the LSM shape durable.
//!
//! What guards what:
//! - `next_file_number` and `last_sequence` are atomics: any thread takes a number or reads
//!   the last sequence without a lock. Only the write leader stores `last_sequence`.
//! - `pending_outputs` (its own mutex, a leaf) holds files being written that no Version names
//!   yet; the purge never removes them.
//! - `manifest` (its own mutex) is held by the one change being written. The DB layer
//!   serialises changes (only one is in flight: `db::versions`), takes the DB mutex to
//!   prepare the edits, releases it, and calls `write` here: the MANIFEST append and its
//!   fsync happen without the DB mutex, as RocksDB's `LogAndApply` does.
//!
//! The Versions themselves (each family's current one and its log number) are kept per
//! family by the DB layer under the DB mutex; `build` turns a base Version and edits into
//! the next one, outside any lock.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use shale_base::lock_rank::{Rank, Ranked};

use crate::error::Result;
use crate::fs::FileSystemRef;
use crate::version::edit::VersionEdit;
use crate::version::manifest::{self, ManifestWriter};
use crate::version::{Version, VersionBuilder};

/// The MANIFEST being appended to.
pub struct ManifestState {
    pub writer: ManifestWriter,
}

/// The ranks of the VersionSet's locks in the database's lock order (docs/architecture.md,
/// "Lock order"; the facade's `db::ranks` lists them with the others). `manifest` is taken
/// under the DB mutex only while no change is in flight (`DbState::manifest_busy`), so that
/// never waits on a MANIFEST fsync; `pending_outputs` is a leaf.
pub mod ranks {
    use super::Rank;
    pub const MANIFEST: Rank = Rank::new(40, "versions.manifest (the MANIFEST writer)");
    pub const PENDING_OUTPUTS: Rank = Rank::new(95, "versions.pending_outputs");
}

pub struct VersionSet {
    fs: FileSystemRef,
    dir: PathBuf,
    /// `max_manifest_file_size` and (below) `max_manifest_space_amp_pct` in force: mutable
    /// DB options (`set_manifest_limits`).
    max_manifest_file_size: AtomicU64,
    next_file_number: AtomicU64,
    last_sequence: AtomicU64,
    /// Rank `ranks::PENDING_OUTPUTS`.
    pending_outputs: Ranked<Mutex<BTreeSet<u64>>>,
    /// Rank `ranks::MANIFEST`.
    manifest: Ranked<Mutex<ManifestState>>,
    /// A MANIFEST write failed: whether its record reached the file is unknown, so the next
    /// change starts a new MANIFEST, and no table or MANIFEST is removed until then. An
    /// atomic, so that the purge (under the DB mutex) never waits for a MANIFEST fsync.
    write_failed: AtomicBool,
    /// The DB id each new MANIFEST starts with (None with `write_dbid_to_manifest = false`).
    db_id: Option<String>,
    /// `max_manifest_space_amp_pct` (RocksDB's default 500; negative values count as 0).
    max_manifest_space_amp_pct: AtomicI32,
    /// The size of the last MANIFEST written new, snapshot and batch (RocksDB's
    /// `last_compacted_manifest_file_size_`): the estimate of a compacted MANIFEST.
    last_compacted_manifest_size: AtomicU64,
    /// The next change starts a new MANIFEST whatever the current one's size (RocksDB's
    /// `descriptor_log_` closed: `verify_manifest_content_on_close` found it damaged).
    roll_next: AtomicBool,
}

impl VersionSet {
    pub fn new(
        fs: FileSystemRef,
        dir: &Path,
        writer: ManifestWriter,
        next_file_number: u64,
        last_sequence: u64,
        max_manifest_file_size: u64,
    ) -> VersionSet {
        VersionSet {
            fs,
            dir: dir.to_path_buf(),
            max_manifest_file_size: AtomicU64::new(max_manifest_file_size),
            next_file_number: AtomicU64::new(next_file_number),
            last_sequence: AtomicU64::new(last_sequence),
            pending_outputs: Ranked::new(ranks::PENDING_OUTPUTS, Mutex::new(BTreeSet::new())),
            manifest: Ranked::new(ranks::MANIFEST, Mutex::new(ManifestState { writer })),
            write_failed: AtomicBool::new(false),
            db_id: None,
            max_manifest_space_amp_pct: AtomicI32::new(500),
            last_compacted_manifest_size: AtomicU64::new(0),
            roll_next: AtomicBool::new(false),
        }
    }

    /// `reuse_manifest_on_open`: the MANIFEST in use is the one the open recovered from, not
    /// one it wrote, so no compacted size is known (RocksDB's
    /// `last_compacted_manifest_file_size_` stays 0 until the next roll, and the roll
    /// happens at `max_manifest_file_size`).
    pub fn with_reused_manifest(self) -> VersionSet {
        self.last_compacted_manifest_size.store(0, Ordering::Relaxed);
        self
    }

    /// True until a MANIFEST is written when the open wrote none (`ManifestWriter::unopened`)
    /// or a roll was asked for: RocksDB's `descriptor_log_` is null.
    pub fn roll_pending(&self) -> bool {
        self.roll_next.load(Ordering::Acquire)
    }

    /// Makes the next change start a new MANIFEST (see `roll_next`).
    pub fn roll_manifest_next(&self) {
        self.roll_next.store(true, Ordering::Release);
    }

    /// RocksDB's `max_manifest_space_amp_pct` (negative values count as 0); the MANIFEST in
    /// use was just written new (at open), so its size is the first compacted size.
    pub fn with_manifest_space_amp(mut self, pct: i32) -> VersionSet {
        self.max_manifest_space_amp_pct = AtomicI32::new(pct);
        let size = self.manifest.lock().writer.file_size();
        self.last_compacted_manifest_size = AtomicU64::new(size);
        self
    }

    /// The size past which the next change starts a new MANIFEST (RocksDB's
    /// `TuneMaxManifestFileSize`): `max_manifest_file_size`, or the last compacted size times
    /// `1 + max_manifest_space_amp_pct / 100` when that is larger.
    pub fn tuned_max_manifest_file_size(&self) -> u64 {
        let compacted = self.last_compacted_manifest_size.load(Ordering::Relaxed);
        let pct = u64::try_from(self.max_manifest_space_amp_pct.load(Ordering::Relaxed)).unwrap_or(0);
        let amp = compacted.saturating_mul(100 + pct) / 100;
        self.max_manifest_file_size.load(Ordering::Relaxed).max(amp)
    }

    /// `SetDBOptions`' `max_manifest_file_size` and `max_manifest_space_amp_pct` (RocksDB's
    /// `VersionSet::UpdatedMutableDbOptions`): the next change's roll decision uses them.
    pub fn set_manifest_limits(&self, max_file_size: Option<u64>, space_amp_pct: Option<i32>) {
        if let Some(v) = max_file_size {
            self.max_manifest_file_size.store(v, Ordering::Relaxed);
        }
        if let Some(v) = space_amp_pct {
            self.max_manifest_space_amp_pct.store(v, Ordering::Relaxed);
        }
    }

    /// Sets the DB id that every new MANIFEST records (RocksDB's `write_dbid_to_manifest`).
    pub fn with_db_id(mut self, db_id: Option<String>) -> VersionSet {
        self.db_id = db_id;
        self
    }

    /// The DB id new MANIFESTs record, if any.
    pub fn db_id(&self) -> Option<&str> {
        self.db_id.as_deref()
    }

    /// A fresh file number (not registered as an output).
    pub fn new_file_number(&self) -> u64 {
        self.next_file_number.fetch_add(1, Ordering::Relaxed)
    }

    /// The next file number that will be handed out (what the MANIFEST records).
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number.load(Ordering::Relaxed)
    }

    /// A fresh file number registered as a pending output until `release_output`.
    pub fn new_output_number(&self) -> u64 {
        let mut p = self.pending_outputs.lock();
        let n = self.new_file_number();
        p.insert(n);
        n
    }

    pub fn release_output(&self, number: u64) {
        self.pending_outputs.lock().remove(&number);
    }

    /// RocksDB's `min_pending_output`: the smallest file number being written, or the next
    /// file number when none is; files numbered this or above may be in the making.
    pub fn min_pending_output(&self) -> u64 {
        let p = self.pending_outputs.lock();
        p.first().copied().unwrap_or_else(|| self.next_file_number())
    }

    pub fn is_pending_output(&self, number: u64) -> bool {
        self.pending_outputs.lock().contains(&number)
    }

    pub fn last_sequence(&self) -> u64 {
        self.last_sequence.load(Ordering::Acquire)
    }

    /// Publishes `seq` as the last sequence readers may see (the write leader only).
    pub fn set_last_sequence(&self, seq: u64) {
        self.last_sequence.store(seq, Ordering::Release);
    }

    /// The number of the MANIFEST in use (waits for a MANIFEST write in flight: not for use
    /// under the DB mutex once background work runs).
    pub fn manifest_number(&self) -> u64 {
        self.manifest.lock().writer.number()
    }

    /// The MANIFEST in use and its synced size (what a checkpoint or backup copies). The
    /// caller has stopped MANIFEST changes (`DbState::manifest_busy`).
    pub fn manifest_number_and_size(&self) -> (u64, u64) {
        let m = self.manifest.lock();
        (m.writer.number(), m.writer.file_size())
    }

    /// True when the next change must start a new MANIFEST (the current one is over
    /// [`tuned_max_manifest_file_size`](Self::tuned_max_manifest_file_size), or its last
    /// write failed). The caller then passes the
    /// whole state as `snapshot` to `write`.
    /// Called by the change in flight only, so the MANIFEST lock is free.
    pub fn needs_new_manifest(&self) -> bool {
        self.manifest_write_failed()
            || self.roll_next.load(Ordering::Acquire)
            // RocksDB's `ProcessManifestWrites`: `manifest_file_size_ >= enforced_limit`.
            || self.manifest.lock().writer.file_size() >= self.tuned_max_manifest_file_size()
    }

    pub fn manifest_write_failed(&self) -> bool {
        self.write_failed.load(Ordering::Acquire)
    }

    /// Makes `edits` durable: appended to the MANIFEST and synced, or, with `snapshot`, in a
    /// new MANIFEST that starts with the snapshot, which CURRENT then names. The last edit
    /// gets the next file number and the last sequence. Called without the DB mutex, by the
    /// one change in flight. On failure the next call must start a new MANIFEST.
    pub fn write(&self, edits: &mut [VersionEdit], snapshot: Option<Vec<VersionEdit>>) -> Result<()> {
        let mut m = self.manifest.lock();
        let result = match snapshot {
            Some(mut snap) => {
                let number = self.new_file_number();
                // CURRENT's temporary file takes the next number.
                let tmp = self.new_file_number();
                if let Some(last) = edits.last_mut() {
                    last.next_file_number = Some(self.next_file_number());
                    last.last_sequence = Some(self.last_sequence());
                }
                snap.extend_from_slice(edits);
                if let Some(last) = snap.last_mut() {
                    last.next_file_number = Some(self.next_file_number());
                }
                ManifestWriter::create(&*self.fs, &self.dir, number, &snap).and_then(|w| {
                    manifest::set_current_file(&*self.fs, &self.dir, number, tmp)?;
                    self.last_compacted_manifest_size.store(w.file_size(), Ordering::Relaxed);
                    self.roll_next.store(false, Ordering::Release);
                    let old = std::mem::replace(&mut m.writer, w);
                    let _ = self.fs.remove_file(&self.dir.join(manifest::descriptor_file_name(old.number())));
                    Ok(())
                })
            }
            None => {
                if let Some(last) = edits.last_mut() {
                    last.next_file_number = Some(self.next_file_number());
                    last.last_sequence = Some(self.last_sequence());
                }
                m.writer.append(edits)
            }
        };
        self.write_failed.store(result.is_err(), Ordering::Release);
        result
    }

    /// The Version that results from applying `edits` (all of one family) to `base`.
    pub fn build(base: &Version, edits: &[&VersionEdit]) -> Result<Arc<Version>> {
        let mut b = VersionBuilder::new(base);
        for e in edits {
            b.apply(e)?;
        }
        Ok(Arc::new(b.build()))
    }
}
