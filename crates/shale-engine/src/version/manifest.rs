//! The MANIFEST file, the CURRENT file, and recovery from them.
//!
//! ```text
//! CURRENT          = "MANIFEST-" decimal number (at least 6 digits) "\n"
//! MANIFEST-NNNNNN  = RocksDB log format (32 KiB blocks of crc | length | type | payload
//!                    fragments, see crate::wal), log number 0; each logical record is one
//!                    encoded VersionEdit (see edit.rs)
//! ```
//! A new MANIFEST starts with a snapshot of the whole state and is then appended to, one
//! record per edit, with a sync after each batch. CURRENT is replaced atomically: the name
//! goes to `NNNNNN.dbtmp`, which is synced and renamed over CURRENT, and the directory is
//! synced.
//!
//! Recovery replays every record the way RocksDB 7.8.3's `VersionEditHandler` does: edits
//! of an atomic group are buffered and applied together once the group is complete (a group
//! left incomplete at the end of the file is dropped); a record cut short at the end of the
//! file (a crash mid-write) ends the MANIFEST quietly, as RocksDB reads the MANIFEST in
//! `kTolerateCorruptedTailRecords` mode; any other damage is Corruption.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};
use crate::fs::{read_file, write_file_synced, FileSystem};
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::replay::{FilesPresent, Replay};
use crate::wal::{LogReader, LogWriter, WalRecoveryMode};

pub const CURRENT_FILE_NAME: &str = "CURRENT";
pub const DEFAULT_COLUMN_FAMILY_NAME: &str = "default";

/// "MANIFEST-000005" for 5.
pub fn descriptor_file_name(number: u64) -> String {
    format!("MANIFEST-{number:06}")
}

/// The number in a MANIFEST file name, or None if `name` is not one.
pub fn parse_descriptor_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("MANIFEST-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

pub fn current_file_path(dir: &Path) -> PathBuf {
    dir.join(CURRENT_FILE_NAME)
}

/// `NNNNNN.dbtmp`, RocksDB's temporary file name.
pub fn temp_file_name(number: u64) -> String {
    format!("{number:06}.dbtmp")
}

/// Points CURRENT at MANIFEST-`manifest_number`, RocksDB's way: write the name and a newline
/// to `<tmp_number>.dbtmp`, sync it, rename it over CURRENT, sync the directory.
pub fn set_current_file(
    fs: &dyn FileSystem,
    dir: &Path,
    manifest_number: u64,
    tmp_number: u64,
) -> Result<()> {
    let tmp = dir.join(temp_file_name(tmp_number));
    let contents = format!("{}\n", descriptor_file_name(manifest_number));
    let renamed = write_file_synced(fs, &tmp, contents.as_bytes())
        .and_then(|()| fs.rename(&tmp, &current_file_path(dir)));
    if let Err(e) = renamed {
        let _ = fs.remove_file(&tmp); // best effort; the error that matters is `e`
        return Err(e);
    }
    fs.sync_dir(dir)
}

/// The MANIFEST file name CURRENT names. A missing CURRENT is the fs's error, for the
/// caller to turn into "does not exist (create_if_missing is false)".
pub fn read_current(fs: &dyn FileSystem, dir: &Path) -> Result<String> {
    let data = read_file(fs, &current_file_path(dir))?;
    let Some(body) = data.strip_suffix(b"\n") else {
        return Err(Error::corruption("CURRENT file does not end with newline"));
    };
    match std::str::from_utf8(body).ok().filter(|n| parse_descriptor_file_name(n).is_some()) {
        Some(name) => Ok(name.to_string()),
        None => Err(Error::corruption("CURRENT file corrupted")),
    }
}

/// An open MANIFEST being appended to.
pub struct ManifestWriter {
    log: LogWriter,
    number: u64,
}

impl ManifestWriter {
    /// Creates MANIFEST-`number` in `dir` holding `snapshot` (one record per edit), syncs it
    /// and the directory. CURRENT is left alone: call `set_current_file` next.
    pub fn create(
        fs: &dyn FileSystem,
        dir: &Path,
        number: u64,
        snapshot: &[VersionEdit],
    ) -> Result<ManifestWriter> {
        let file = fs.new_writable_file(&dir.join(descriptor_file_name(number)))?;
        let mut w = ManifestWriter { log: LogWriter::new(file, 0), number };
        w.append(snapshot)?;
        fs.sync_dir(dir)?;
        Ok(w)
    }

    /// A writer over `file` as MANIFEST-`number`, writing nothing now. Read-only and
    /// secondary opens give a file that refuses every write (`db/readonly.rs`).
    pub fn over(file: Box<dyn crate::fs::WritableFile>, number: u64) -> ManifestWriter {
        ManifestWriter { log: LogWriter::new(file, 0), number }
    }

    /// Appends one record per edit, then syncs once.
    pub fn append(&mut self, edits: &[VersionEdit]) -> Result<()> {
        let mut buf = Vec::new();
        for e in edits {
            buf.clear();
            e.encode(&mut buf);
            self.log.add_record(&buf)?;
        }
        self.log.sync()
    }

    /// Bytes written so far (how RocksDB decides when to start a new MANIFEST).
    pub fn file_size(&self) -> u64 {
        self.log.file_size()
    }

    pub fn number(&self) -> u64 {
        self.number
    }

    /// MANIFEST-`number`, `size` bytes long, named by CURRENT but not open for writing
    /// (RocksDB's null `descriptor_log_` after an open that wrote no MANIFEST,
    /// `optimize_manifest_for_recovery`): its number and size are what checkpoints and
    /// backups copy; the VersionSet starts a new MANIFEST at the first change
    /// (`VersionSet::roll_manifest_next`), so nothing is ever appended to it.
    pub fn unopened(number: u64, size: u64) -> ManifestWriter {
        ManifestWriter { log: LogWriter::new(Box::new(UnopenedFile(size)), 0), number }
    }

    /// MANIFEST-`number` of `dir`, `size` bytes long, reopened to append to (RocksDB's
    /// `ReopenManifestForAppend`; `reuse_manifest_on_open`). An error when the file system
    /// cannot reopen it or the reopened file is not `size` bytes: the caller then writes a
    /// new MANIFEST, as RocksDB falls back.
    pub fn reopen(fs: &dyn FileSystem, dir: &Path, number: u64, size: u64) -> Result<ManifestWriter> {
        let file = fs.reopen_writable_file(&dir.join(descriptor_file_name(number)), 64 << 10)?;
        if file.size() != size {
            return Err(Error::io_msg(format!(
                "reopened handle size {} != last valid record end {size}",
                file.size()
            )));
        }
        Ok(ManifestWriter { log: LogWriter::new(file, 0), number })
    }
}

/// The file of [`ManifestWriter::unopened`]: its size, and no write.
struct UnopenedFile(u64);

impl crate::fs::WritableFile for UnopenedFile {
    fn append(&mut self, _data: &[u8]) -> Result<()> {
        Err(Error::io_msg("the MANIFEST is not open for writing"))
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Err(Error::io_msg("the MANIFEST is not open for writing"))
    }
    fn size(&self) -> u64 {
        self.0
    }
}

/// One live column family as the MANIFEST describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredCf {
    pub name: String,
    /// The comparator name last recorded for the column family (None if never recorded,
    /// as in the first MANIFEST RocksDB writes for a new database).
    pub comparator: Option<String>,
    /// WALs below this number hold nothing of this column family that is not in its files.
    pub log_number: u64,
    /// Live files, by level then file number.
    pub files: Vec<(u32, FileMetaData)>,
    /// The last `full_history_ts_low` recorded (empty: none; user-defined timestamps).
    pub full_history_ts_low: Vec<u8>,
    /// RocksDB 8+'s `persist_user_defined_timestamps` as last recorded (None: never).
    pub persist_user_defined_timestamps: Option<bool>,
    /// Live blob files (BlobDB).
    pub blob_files: crate::version::blob_files::BlobFiles,
    /// RocksDB's compact cursors by level (`kCompactCursor`, `compaction_pri` kRoundRobin).
    pub compact_cursors: std::collections::BTreeMap<u32, Vec<u8>>,
}

impl RecoveredCf {
    /// Refuses to open the column family with a comparator of another name, with RocksDB's
    /// message. A column family with no recorded comparator accepts any.
    pub fn check_comparator(&self, given: &str) -> Result<()> {
        match &self.comparator {
            Some(stored) if stored != given => {
                Err(Error::invalid_argument(format!("{given}: does not match existing comparator {stored}")))
            }
            _ => Ok(()),
        }
    }
}

/// The state recorded in a MANIFEST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredManifest {
    pub manifest_number: u64,
    /// Bytes of the MANIFEST file.
    pub manifest_size: u64,
    /// The last next-file number recorded. RocksDB continues numbering from one past it.
    pub next_file_number: u64,
    pub last_sequence: u64,
    pub prev_log_number: u64,
    pub min_log_number_to_keep: u64,
    /// The largest column family id recorded or ever added.
    pub max_column_family: u32,
    pub db_id: Option<String>,
    pub column_families: BTreeMap<u32, RecoveredCf>,
    /// Live WALs tracked in the MANIFEST (only with track_and_verify_wals_in_manifest):
    /// number -> synced size.
    pub wals: BTreeMap<u64, Option<u64>>,
    /// Where the last record replayed whole ends (an atomic group counts once complete):
    /// RocksDB's `manifest_last_valid_record_end_`. Less than `manifest_size` when the file
    /// has a torn tail or an unfinished group. 0 when not known (best-efforts recovery).
    pub last_valid_record_end: u64,
    /// The WAL number below which the tracked WALs were deleted (RocksDB's WalSet
    /// `min_wal_number_to_keep_`).
    pub min_wal_to_keep: u64,
}

impl RecoveredManifest {
    /// The records that start a new MANIFEST for this state, in RocksDB's layout: the DB id;
    /// per column family a record naming it (added, for non-default ones) with its comparator,
    /// then a record of its files, log number and last sequence (min log number to keep on
    /// the default one); last, the record RocksDB's LogAndApply appends with the next file
    /// number, previous log number and max column family.
    pub fn snapshot(&self) -> Vec<VersionEdit> {
        let mut out = Vec::new();
        if let Some(id) = &self.db_id {
            out.push(VersionEdit { db_id: Some(id.clone()), ..VersionEdit::default() });
        }
        if !self.wals.is_empty() {
            let wal_additions = self
                .wals
                .iter()
                .map(|(&number, &synced_size)| crate::version::edit::WalAddition { number, synced_size })
                .collect();
            out.push(VersionEdit { wal_additions, ..VersionEdit::default() });
        }
        for (&id, cf) in &self.column_families {
            out.push(VersionEdit {
                column_family: id,
                column_family_add: (id != 0).then(|| cf.name.clone()),
                comparator: cf.comparator.clone(),
                persist_user_defined_timestamps: cf.persist_user_defined_timestamps,
                ..VersionEdit::default()
            });
            out.push(VersionEdit {
                column_family: id,
                new_files: cf.files.clone(),
                log_number: Some(cf.log_number),
                min_log_number_to_keep: (id == 0 && self.min_log_number_to_keep != 0)
                    .then_some(self.min_log_number_to_keep),
                last_sequence: Some(self.last_sequence),
                full_history_ts_low: (!cf.full_history_ts_low.is_empty())
                    .then(|| cf.full_history_ts_low.clone()),
                compact_cursors: cf.compact_cursors.iter().map(|(l, k)| (*l, k.clone())).collect(),
                ..VersionEdit::default()
            });
        }
        out.push(VersionEdit {
            prev_log_number: Some(self.prev_log_number),
            next_file_number: Some(self.next_file_number),
            max_column_family: (self.max_column_family > 0).then_some(self.max_column_family),
            last_sequence: Some(self.last_sequence),
            ..VersionEdit::default()
        });
        out
    }
}

/// Reads CURRENT and replays the MANIFEST it names.
pub fn recover(fs: &dyn FileSystem, dir: &Path) -> Result<RecoveredManifest> {
    recover_with_readahead(fs, dir, 0)
}

/// [`recover`], the MANIFEST read `readahead` bytes at a time (`log_readahead_size`; 0:
/// as the log reader asks).
pub fn recover_with_readahead(
    fs: &dyn FileSystem,
    dir: &Path,
    readahead: usize,
) -> Result<RecoveredManifest> {
    let name = read_current(fs, dir)?;
    let number = parse_descriptor_file_name(&name).unwrap_or(0);
    let path = dir.join(&name);
    let file = shale_base::fs::ReadaheadSequentialFile::wrap(fs.new_sequential_file(&path)?, readahead);
    replay_from(fs, file, &path, number, &mut |_, _| {})
}

/// Best-efforts recovery (RocksDB's `best_efforts_recovery`, `VersionSet::TryRecover`):
/// CURRENT is not read; the non-empty MANIFESTs of `dir` are tried newest first, each
/// replayed to the last point in time at which each family's files were all `present`
/// (`Replay::add_point_in_time`); the first that replays is recovered. None when `dir` holds
/// no non-empty MANIFEST (then the database is new, as RocksDB's open decides). When none
/// replays, the newest one's error.
pub fn recover_best_efforts(
    fs: &dyn FileSystem,
    dir: &Path,
    readahead: usize,
    present: &FilesPresent<'_>,
) -> Result<Option<RecoveredManifest>> {
    let mut manifests: Vec<u64> = fs
        .children(dir)?
        .iter()
        .filter_map(|n| parse_descriptor_file_name(n))
        .filter(|&n| fs.file_size(&dir.join(descriptor_file_name(n))).is_ok_and(|b| b > 0))
        .collect();
    manifests.sort_unstable_by(|a, b| b.cmp(a));
    let mut first_err = None;
    for number in manifests {
        let path = dir.join(descriptor_file_name(number));
        let attempt = (|| -> Result<RecoveredManifest> {
            let file =
                shale_base::fs::ReadaheadSequentialFile::wrap(fs.new_sequential_file(&path)?, readahead);
            let file_name = path.display().to_string();
            let mut reader =
                LogReader::new(file, file_name.clone(), 0, WalRecoveryMode::TolerateCorruptedTailRecords);
            let mut replay = Replay::new();
            let mut record = Vec::new();
            while reader.read_record(&mut record)? {
                let offset = reader.last_record_offset();
                let in_file = |e: Error| name_file(e, &file_name, Some(offset));
                let edit = VersionEdit::decode(&record).map_err(in_file)?;
                replay.add_point_in_time(edit, present).map_err(in_file)?;
            }
            let manifest_size = fs.file_size(&path)?;
            replay.finish(number, manifest_size).map_err(|e| name_file(e, &file_name, None))
        })();
        match attempt {
            Ok(r) => return Ok(Some(r)),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(None),
    }
}

/// Replays the MANIFEST at `path` (numbered `number`): the one replay of the workspace, used
/// by recovery and by the operator tools. `visit` sees each record's edit as read, with the
/// record's offset, before it is applied (ldb's manifest_dump prints every edit as written,
/// and numbers versions by the column families created).
pub fn replay_file(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    visit: &mut dyn FnMut(&VersionEdit, u64),
) -> Result<RecoveredManifest> {
    let file = fs.new_sequential_file(path)?;
    replay_from(fs, file, path, number, visit)
}

/// [`replay_file`] from `file`, opened on `path`.
fn replay_from(
    fs: &dyn FileSystem,
    file: Box<dyn shale_base::fs::SequentialFile>,
    path: &Path,
    number: u64,
    visit: &mut dyn FnMut(&VersionEdit, u64),
) -> Result<RecoveredManifest> {
    let file_name = path.display().to_string();
    let mut reader =
        LogReader::new(file, file_name.clone(), 0, WalRecoveryMode::TolerateCorruptedTailRecords);
    let mut replay = Replay::new();
    let mut record = Vec::new();
    let mut valid_end = 0;
    while reader.read_record(&mut record)? {
        let offset = reader.last_record_offset();
        let in_file = |e: Error| name_file(e, &file_name, Some(offset));
        let edit = VersionEdit::decode(&record).map_err(in_file)?;
        visit(&edit, offset);
        replay.add(edit).map_err(in_file)?;
        if !replay.in_group() {
            valid_end = reader.last_record_end();
        }
    }
    let manifest_size = fs.file_size(path)?;
    let mut r = replay.finish(number, manifest_size).map_err(|e| name_file(e, &file_name, None))?;
    r.last_valid_record_end = valid_end;
    Ok(r)
}

/// Adds "in file <path>" (and the record's offset) to a Corruption, as RocksDB does.
fn name_file(e: Error, file_name: &str, offset: Option<u64>) -> Error {
    if e.kind() != ErrorKind::Corruption {
        return e;
    }
    let text = e.to_string();
    let msg = text.strip_prefix("Corruption: ").unwrap_or(&text);
    match offset {
        Some(off) => Error::corruption(format!("{msg} in file {file_name} (record at offset {off})")),
        None => Error::corruption(format!("{msg} in file {file_name}")),
    }
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "interop_tests.rs"]
mod interop_tests;
