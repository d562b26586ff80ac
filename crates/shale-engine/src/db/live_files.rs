//! The set of files that make up the database at one moment, for checkpoints and backups
//! (RocksDB's `GetLiveFilesStorageInfo`), and the hold on file deletion they take while they
//! copy (RocksDB's `DisableFileDeletions` / `EnableFileDeletions`).
//!
//! `capture` (optionally after flushing every memtable) takes a deletion hold, waits until no
//! MANIFEST change is in flight and keeps the next one out (`DbState::manifest_busy`) while
//! it records, consistently with each other:
//! - every table and blob file of every family's current Version,
//! - the MANIFEST in use and its synced size (its first `size` bytes describe exactly those
//!   tables; the bytes are read while changes are kept out),
//! - the WALs some family still needs, the last one with its size at that moment (records
//!   appended later are not part of the copy),
//! - the newest OPTIONS file (read into memory: a family change may replace it).
//!
//! The caller copies the files while the hold (`DeletionHold`) keeps them on disk, then drops
//! it; the last hold to go runs the purge that waited.

use std::sync::Arc;

use super::filename::{self, FileType};
use super::DbInner;
use crate::error::Result;
use crate::fs::read_file;

/// A hold on file deletion, released when dropped.
pub struct DeletionHold {
    inner: Arc<DbInner>,
}

impl DeletionHold {
    pub fn new(inner: &Arc<DbInner>) -> DeletionHold {
        inner.lock_state().file_deletion_holds += 1;
        DeletionHold { inner: inner.clone() }
    }
}

impl Drop for DeletionHold {
    fn drop(&mut self) {
        self.inner.release_deletion_hold();
    }
}

/// A file of the capture: its name in the database directory and the bytes to copy.
#[derive(Debug, Clone)]
pub struct LiveFile {
    pub name: String,
    /// The directory holding it: the database's, or a table path (`paths.rs`).
    pub dir: std::path::PathBuf,
    pub size: u64,
    /// A table's "rocksdb.db.session.id" property (empty when it has none, or for a
    /// WAL): backups name shared tables by it, as RocksDB does.
    pub db_session_id: String,
}

/// What a checkpoint or backup copies; see the module comment.
pub struct LiveFiles {
    pub tables: Vec<LiveFile>,
    /// Blob files (BlobDB), complete: RocksDB's header + blobs + footer size.
    pub blobs: Vec<LiveFile>,
    pub wals: Vec<LiveFile>,
    pub manifest_name: String,
    /// The MANIFEST's first `manifest_size` bytes.
    pub manifest: Vec<u8>,
    /// The newest OPTIONS file, name and contents.
    pub options: Option<(String, Vec<u8>)>,
    pub last_sequence: u64,
    pub _hold: DeletionHold,
}

impl DbInner {
    pub fn release_deletion_hold(&self) {
        let mut st = self.lock_state();
        st.file_deletion_holds = st.file_deletion_holds.saturating_sub(1);
        if st.file_deletion_holds == 0 && !self.shutting_down.load(std::sync::atomic::Ordering::Acquire) {
            self.purge_obsolete_files(&mut st);
        }
    }

    /// Bytes of the WALs still on disk (RocksDB's live WAL size, checked against a
    /// checkpoint's `log_size_for_flush`).
    pub fn alive_wal_bytes(&self) -> u64 {
        let wals: Vec<u64> = self.lock_state().alive_wals.iter().copied().collect();
        let wal_dir = self.wal_dir();
        wals.iter().filter_map(|w| self.fs.file_size(&filename::wal_file(&wal_dir, *w)).ok()).sum()
    }

    /// Captures the live files (see the module comment); with `flush`, every memtable is
    /// flushed first so the WALs captured hold nothing the tables lack.
    pub fn capture_live_files(self: &Arc<Self>, flush: bool) -> Result<LiveFiles> {
        // RocksDB 11.8.1's GetLiveFilesStorageInfo: blob files the write path holds are
        // in no MANIFEST yet, so a capture without a flush cannot name them.
        if !flush && self.has_in_flight_direct_blobs(&self.lock_state()) {
            return Err(crate::Error::not_supported(
                "Blob direct write requires flushing active blob files before capturing live files. \
                 Retry with flush enabled.",
            ));
        }
        let hold = DeletionHold::new(self);
        if flush {
            self.flush_memtables(true, None)?;
        }
        let mut st = self.lock_state();
        if let Some(e) = st.errors.stop_error() {
            return Err(e);
        }
        while st.manifest_busy {
            self.manifest_cv.wait(&mut st);
        }
        st.manifest_busy = true;
        let mut table_metas = Vec::new();
        // Blob files of every family's current Version, by number (a blob file belongs to
        // one family), with RocksDB's size for them: header, blobs and footer.
        let mut blob_sizes = std::collections::BTreeMap::new();
        for cf in st.cfs.values() {
            for (_, f) in cf.current.all_files() {
                table_metas.push((cf.handle.clone(), f.clone()));
            }
            for (n, b) in cf.current.blob_files() {
                let size = (crate::blob::format::HEADER_SIZE + crate::blob::format::FOOTER_SIZE) as u64
                    + b.shared.total_blob_bytes;
                blob_sizes.insert(*n, size);
            }
        }
        let min_log = self.min_wal_to_keep(&st);
        let wal_numbers: Vec<u64> = st.alive_wals.iter().copied().filter(|w| *w >= min_log).collect();
        let last_sequence = self.versions.last_sequence();
        let (manifest_number, manifest_size) = self.versions.manifest_number_and_size();
        let wal_dir = self.wal_dir();
        let read = super::unlocked(&mut st, || -> Result<_> {
            let manifest_name = crate::version::manifest::descriptor_file_name(manifest_number);
            let mut manifest = read_file(&*self.fs, &self.path.join(&manifest_name))?;
            if (manifest.len() as u64) < manifest_size {
                return Err(crate::error::Error::corruption(format!(
                    "{manifest_name}: {} bytes on disk, {manifest_size} written",
                    manifest.len()
                )));
            }
            manifest.truncate(manifest_size as usize);
            // The current WAL's size now: its buffered records reach the file first.
            let current_wal_size = {
                let mut wal = self.lock_or_halt(&self.wal, "WAL")?;
                wal.writer.flush()?;
                (wal.number, wal.writer.file_size())
            };
            let mut wals = Vec::new();
            for w in &wal_numbers {
                let size = if *w == current_wal_size.0 {
                    current_wal_size.1
                } else {
                    self.fs.file_size(&filename::wal_file(&wal_dir, *w))?
                };
                wals.push(LiveFile {
                    name: format!("{w:06}.log"),
                    dir: wal_dir.clone(),
                    size,
                    db_session_id: String::new(),
                });
            }
            let mut newest: Option<u64> = None;
            for name in self.fs.children(&self.path)? {
                if let Some(FileType::Options(n)) = filename::parse_file_name(&name) {
                    if !name.ends_with(".dbtmp") && newest.is_none_or(|m| n > m) {
                        newest = Some(n);
                    }
                }
            }
            let options = match newest {
                Some(n) => {
                    let name = crate::options_file::options_file_name(n);
                    Some((name.clone(), read_file(&*self.fs, &self.path.join(&name))?))
                }
                None => None,
            };
            Ok((manifest_name, manifest, wals, options))
        });
        st.manifest_busy = false;
        self.manifest_cv.notify_all();
        drop(st);
        let (manifest_name, manifest, wals, options) = read?;
        // The tables' session ids, from their (cached or newly opened) readers.
        let mut tables = Vec::with_capacity(table_metas.len());
        for (h, f) in table_metas {
            let db_session_id = self.table_cache.get(&h, &f)?.table.properties().db_session_id.clone();
            tables.push(LiveFile {
                name: filename::table_file_name(f.number),
                dir: h.table_dir(&self.path, f.path_id).to_path_buf(),
                size: f.file_size,
                db_session_id,
            });
        }
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        // Blob files live in the database directory (`blob/`), where readers look for them.
        let blobs = blob_sizes
            .into_iter()
            .map(|(n, size)| LiveFile {
                name: crate::blob::reader::blob_file_name(n),
                dir: self.path.clone(),
                size,
                db_session_id: String::new(),
            })
            .collect();
        Ok(LiveFiles { tables, blobs, wals, manifest_name, manifest, options, last_sequence, _hold: hold })
    }
}
