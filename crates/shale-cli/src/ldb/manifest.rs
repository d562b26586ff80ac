//! ldb's commands that read the MANIFEST without opening the database through the engine:
//! manifest_dump (`VersionEdit::DebugString`, `Version::DebugString`, the
//! `DumpManifestHandler` summary), dump_live_files, list_live_files_metadata,
//! checkconsistency; and the offline readers idump and approxsize use.
//!
//! The MANIFEST is replayed by the engine's replay (`shale_engine::version::manifest::replay_file`,
//! the one recovery uses), which hands every edit to this module as read: the dump needs
//! what recovery forgets, the order column families were created in (it numbers the
//! versions) and every edit as written.
//!
//! Fields newer than RocksDB 7.8.3's MANIFEST (epoch numbers, tail sizes, ...) slot into
//! [`edit_debug_string`] where 11.x prints them, once the engine decodes them.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale_format::fs::default_fs;
use shale_format::key::{make_internal_key, parse_internal_key, ValueType, MAX_SEQUENCE_NUMBER};
use shale_format::table::{Table, TableReaderOptions};
use shale_format::version::edit::{FileMetaData, VersionEdit};
use shale_format::wal::{LogReader, WalRecoveryMode};

use super::fmt::{ikey_debug, slice_to_string, unique_id_strings, Failure, Res};
use super::wal::dump_wal_file;
use super::{Out, Parsed};

/// One column family as the replay leaves it.
pub struct CfState {
    pub id: u32,
    pub name: String,
    pub log_number: u64,
    /// file number -> (level, metadata)
    pub files: BTreeMap<u64, (u32, FileMetaData)>,
}

/// The result of replaying a MANIFEST.
pub struct Replayed {
    pub edits: Vec<VersionEdit>,
    /// Live column families in creation order.
    pub cfs: Vec<CfState>,
    pub created: usize,
    pub next_file_number: u64,
    pub last_sequence: u64,
    pub prev_log_number: u64,
    pub max_column_family: u32,
    pub min_log_number_to_keep: u64,
}

impl Replayed {
    pub fn cf(&self, name: &str) -> Res<&CfState> {
        self.cfs
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| Failure::new(format!("Invalid argument: Column family not found: {name}")))
    }

    /// The files of `cf` by level, each level in RocksDB's order (L0 newest first, others
    /// by smallest key).
    pub fn levels(&self, cf: &CfState, num_levels: usize) -> Vec<Vec<FileMetaData>> {
        let mut levels: Vec<Vec<FileMetaData>> = vec![Vec::new(); num_levels];
        for (level, f) in cf.files.values() {
            let l = *level as usize;
            if l >= levels.len() {
                levels.resize(l + 1, Vec::new());
            }
            levels[l].push(f.clone());
        }
        let icmp = shale_format::key::bytewise_internal_comparator();
        for (l, files) in levels.iter_mut().enumerate() {
            if l == 0 {
                files.sort_by(|a, b| {
                    b.largest_seqno
                        .cmp(&a.largest_seqno)
                        .then(b.smallest_seqno.cmp(&a.smallest_seqno))
                        .then(b.number.cmp(&a.number))
                });
            } else {
                files.sort_by(|a, b| match icmp.compare(&a.smallest, &b.smallest) {
                    Ordering::Equal => a.number.cmp(&b.number),
                    o => o,
                });
            }
        }
        levels
    }
}

/// Reads CURRENT and names the MANIFEST it points to.
pub fn current_manifest(db: &Path) -> Res<PathBuf> {
    let fs = default_fs();
    let name = shale_engine::version::manifest::read_current(&*fs, db).map_err(Failure::db)?;
    Ok(db.join(name.trim_end()))
}

/// Replays the MANIFEST at `path` through the engine's replay (the one of recovery), keeping
/// what the dump prints besides the state: every edit as read, and the order the live
/// column families were created in (it numbers the versions).
pub fn replay(path: &Path) -> Res<Replayed> {
    let fs = default_fs();
    let number = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(shale_engine::version::manifest::parse_descriptor_file_name)
        .unwrap_or(0);
    let mut edits = Vec::new();
    let m =
        shale_engine::version::manifest::replay_file(&*fs, path, number, &mut |e, _| edits.push(e.clone()))
            .map_err(Failure::db)?;
    let mut order = vec![0u32];
    order.extend(edits.iter().filter(|e| e.column_family_add.is_some()).map(|e| e.column_family));
    let created = order.len();
    let cfs = order
        .iter()
        .filter_map(|id| {
            let cf = m.column_families.get(id)?;
            Some(CfState {
                id: *id,
                name: cf.name.clone(),
                log_number: cf.log_number,
                files: cf.files.iter().map(|(level, f)| (f.number, (*level, f.clone()))).collect(),
            })
        })
        .collect();
    Ok(Replayed {
        edits,
        cfs,
        created,
        // RocksDB's VersionSet continues numbering one past the last recorded next file number.
        next_file_number: m.next_file_number + 1,
        last_sequence: m.last_sequence,
        prev_log_number: m.prev_log_number,
        max_column_family: m.max_column_family,
        min_log_number_to_keep: m.min_log_number_to_keep,
    })
}

// ---- text forms ----------------------------------------------------------------------

/// `VersionEdit::DebugString(hex)` as RocksDB 11.8.1 prints it (7.8.3 lacked
/// PersistUserDefinedTimestamps, epoch_number, tail size and the timestamps flag).
pub fn edit_debug_string(e: &VersionEdit, hex: bool) -> Vec<u8> {
    let mut r: Vec<u8> = b"VersionEdit {".to_vec();
    let line = |r: &mut Vec<u8>, s: String| r.extend(s.into_bytes());
    if let Some(id) = &e.db_id {
        line(&mut r, format!("\n  DB ID: {id}"));
    }
    if let Some(c) = &e.comparator {
        line(&mut r, format!("\n  Comparator: {c}"));
    }
    if let Some(b) = e.persist_user_defined_timestamps {
        line(&mut r, format!("\n  PersistUserDefinedTimestamps: {b}"));
    }
    if let Some(n) = e.log_number {
        line(&mut r, format!("\n  LogNumber: {n}"));
    }
    if let Some(n) = e.prev_log_number {
        line(&mut r, format!("\n  PrevLogNumber: {n}"));
    }
    if let Some(n) = e.next_file_number {
        line(&mut r, format!("\n  NextFileNumber: {n}"));
    }
    if let Some(n) = e.max_column_family {
        line(&mut r, format!("\n  MaxColumnFamily: {n}"));
    }
    if let Some(n) = e.min_log_number_to_keep {
        line(&mut r, format!("\n  MinLogNumberToKeep: {n}"));
    }
    if let Some(n) = e.last_sequence {
        line(&mut r, format!("\n  LastSeq: {n}"));
    }
    for (level, k) in &e.compact_cursors {
        line(&mut r, format!("\n  CompactCursor: {level} "));
        r.extend(ikey_debug(k, hex));
    }
    for (level, n) in &e.deleted_files {
        line(&mut r, format!("\n  DeleteFile: {level} {n}"));
    }
    for (level, f) in &e.new_files {
        line(&mut r, format!("\n  AddFile: {level} {} {} ", f.number, f.file_size));
        r.extend(ikey_debug(&f.smallest, hex));
        r.extend_from_slice(b" .. ");
        r.extend(ikey_debug(&f.largest, hex));
        if f.oldest_blob_file_number != 0 {
            line(&mut r, format!(" blob_file:{}", f.oldest_blob_file_number));
        }
        line(&mut r, format!(" oldest_ancester_time:{}", f.oldest_ancester_time));
        line(&mut r, format!(" file_creation_time:{}", f.file_creation_time));
        line(&mut r, format!(" epoch_number:{}", f.epoch_number));
        line(&mut r, format!(" file_checksum:{}", super::fmt::to_hex(&f.file_checksum)));
        line(&mut r, format!(" file_checksum_func_name: {}", f.file_checksum_func_name));
        if f.temperature != 0 {
            line(&mut r, format!(" temperature: {}", f.temperature));
        }
        if let Some(id) = f.unique_id {
            let (i, p) = unique_id_strings(id);
            line(&mut r, format!(" unique_id(internal): {i} public_unique_id: {p}"));
        }
        line(&mut r, format!(" tail size: {}", f.tail_size));
        line(&mut r, format!(" User-defined timestamps persisted: {}", f.user_defined_timestamps_persisted));
        if !f.file_open_metadata.is_empty() {
            line(&mut r, format!(" file_open_metadata_size: {}", f.file_open_metadata.len()));
        }
    }
    for w in &e.wal_additions {
        match w.synced_size {
            Some(s) => {
                line(&mut r, format!("\n  WalAddition: log_number: {} synced_size_in_bytes: {s}", w.number))
            }
            None => {
                line(&mut r, format!("\n  WalAddition: log_number: {} synced_size_in_bytes: 0", w.number))
            }
        }
    }
    if let Some(n) = e.wal_deletion {
        line(&mut r, format!("\n  WalDeletion: log_number: {n}"));
    }
    line(&mut r, format!("\n  ColumnFamily: {}", e.column_family));
    if let Some(name) = &e.column_family_add {
        line(&mut r, format!("\n  ColumnFamilyAdd: {name}"));
    }
    if e.is_column_family_drop {
        line(&mut r, "\n  ColumnFamilyDrop".to_string());
    }
    if e.is_in_atomic_group {
        line(&mut r, format!("\n  AtomicGroup: {} entries remains", e.remaining_entries));
    }
    if let Some(ts) = &e.full_history_ts_low {
        r.extend_from_slice(b"\n FullHistoryTsLow: ");
        r.extend(slice_to_string(ts, hex));
    }
    if let Some(n) = e.last_compacted_manifest_file_size {
        line(&mut r, format!("\n  LastCompactedManifestFileSize: {n}"));
    }
    r.extend_from_slice(b"\n}\n");
    r
}

/// RocksDB's JSONWriter (logging/event_logger.h) as `VersionEdit::DebugJSON` uses it:
/// `"key": value` pairs joined by `, `; strings quoted as they are (no escaping), numbers
/// and booleans (`1`/`0`) bare.
struct Json {
    s: Vec<u8>,
    first: bool,
}

impl Json {
    fn new() -> Json {
        Json { s: b"{".to_vec(), first: true }
    }

    fn key(&mut self, k: &str) {
        if !self.first {
            self.s.extend_from_slice(b", ");
        }
        self.s.extend(format!("\"{k}\": ").into_bytes());
        self.first = false;
    }

    fn num(&mut self, k: &str, v: impl std::fmt::Display) {
        self.key(k);
        self.s.extend(v.to_string().into_bytes());
    }

    fn str(&mut self, k: &str, v: &[u8]) {
        self.key(k);
        self.s.push(b'"');
        self.s.extend_from_slice(v);
        self.s.push(b'"');
    }

    /// `"k": [{...}, {...}]`, each object's pairs written by `f`.
    fn array<T>(&mut self, k: &str, items: &[T], f: impl Fn(&mut Json, &T)) {
        self.key(k);
        self.s.push(b'[');
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                self.s.extend_from_slice(b", ");
            }
            self.s.push(b'{');
            self.first = true;
            f(self, it);
            self.s.push(b'}');
        }
        self.s.push(b']');
        self.first = false;
    }
}

/// `VersionEdit::DebugJSON(edit_num, hex)` as RocksDB 11.8.1 writes it (one line per edit
/// in `manifest_dump --json`).
pub fn edit_debug_json(e: &VersionEdit, n: usize, hex: bool) -> Vec<u8> {
    let mut j = Json::new();
    j.num("EditNumber", n);
    if let Some(id) = &e.db_id {
        j.str("DB ID", id.as_bytes());
    }
    if let Some(c) = &e.comparator {
        j.str("Comparator", c.as_bytes());
    }
    if let Some(v) = e.log_number {
        j.num("LogNumber", v);
    }
    if let Some(v) = e.prev_log_number {
        j.num("PrevLogNumber", v);
    }
    if let Some(v) = e.next_file_number {
        j.num("NextFileNumber", v);
    }
    if let Some(v) = e.max_column_family {
        j.num("MaxColumnFamily", v);
    }
    if let Some(v) = e.min_log_number_to_keep {
        j.num("MinLogNumberToKeep", v);
    }
    if let Some(v) = e.last_sequence {
        j.num("LastSeq", v);
    }
    if !e.deleted_files.is_empty() {
        j.array("DeletedFiles", &e.deleted_files, |j, (level, n)| {
            j.num("Level", level);
            j.num("FileNumber", n);
        });
    }
    if !e.new_files.is_empty() {
        j.array("AddedFiles", &e.new_files, |j, (level, f)| {
            j.num("Level", level);
            j.num("FileNumber", f.number);
            j.num("FileSize", f.file_size);
            j.str("SmallestIKey", &ikey_debug(&f.smallest, hex));
            j.str("LargestIKey", &ikey_debug(&f.largest, hex));
            j.num("OldestAncesterTime", f.oldest_ancester_time);
            j.num("FileCreationTime", f.file_creation_time);
            j.num("EpochNumber", f.epoch_number);
            j.str("FileChecksum", super::fmt::to_hex(&f.file_checksum).as_bytes());
            j.str("FileChecksumFuncName", f.file_checksum_func_name.as_bytes());
            if f.temperature != 0 {
                j.str("temperature", f.temperature.to_string().as_bytes());
            }
            if f.oldest_blob_file_number != 0 {
                j.num("OldestBlobFile", f.oldest_blob_file_number);
            }
            if f.temperature != 0 {
                j.num("Temperature", f.temperature);
            }
            j.num("TailSize", f.tail_size);
            j.num("UserDefinedTimestampsPersisted", u8::from(f.user_defined_timestamps_persisted));
            if !f.file_open_metadata.is_empty() {
                j.num("FileOpenMetadataSize", f.file_open_metadata.len());
            }
        });
    }
    if !e.wal_additions.is_empty() {
        j.array("WalAdditions", &e.wal_additions, |j, w| {
            j.num("LogNumber", w.number);
            j.num("SyncedSizeInBytes", w.synced_size.unwrap_or(0));
        });
    }
    if let Some(n) = e.wal_deletion {
        j.key("WalDeletion");
        j.s.extend(format!("{{\"LogNumber\": {n}}}").into_bytes());
    }
    j.num("ColumnFamily", e.column_family);
    if let Some(name) = &e.column_family_add {
        j.str("ColumnFamilyAdd", name.as_bytes());
    }
    if e.is_column_family_drop {
        // RocksDB writes the edit's column family name, which a drop record does not carry.
        j.str("ColumnFamilyDrop", b"");
    }
    if e.is_in_atomic_group {
        j.num("AtomicGroup", e.remaining_entries);
    }
    if let Some(ts) = &e.full_history_ts_low {
        j.str("FullHistoryTsLow", &slice_to_string(ts, hex));
    }
    if let Some(n) = e.last_compacted_manifest_file_size {
        j.num("LastCompactedManifestFileSize", n);
    }
    j.s.extend_from_slice(b"}\n");
    j.s
}

/// `Version::DebugString(hex)` of one column family, with `num_levels` levels.
fn version_debug_string(r: &Replayed, cf: &CfState, version: usize, hex: bool, num_levels: usize) -> Vec<u8> {
    let mut s = Vec::new();
    for (level, files) in r.levels(cf, num_levels).iter().enumerate() {
        s.extend(format!("--- level {level} --- version# {version} ---\n").into_bytes());
        for f in files {
            s.extend(
                format!(" {}:{}[{} .. {}][", f.number, f.file_size, f.smallest_seqno, f.largest_seqno)
                    .into_bytes(),
            );
            s.extend(ikey_debug(&f.smallest, hex));
            s.extend_from_slice(b" .. ");
            s.extend(ikey_debug(&f.largest, hex));
            s.push(b']');
            if f.oldest_blob_file_number != 0 {
                s.extend(format!(" blob_file:{}", f.oldest_blob_file_number).into_bytes());
            }
            s.push(b'\n');
        }
    }
    s
}

/// The number of levels each column family is dumped with: ldb passes its column family
/// descriptors to the dump (with `--db`, those of the latest OPTIONS file, or, when there is
/// none and the database has several families, ldb's defaults: 7 levels); a family without
/// a descriptor is dumped with the 64 levels `DumpManifestFile` forces.
pub type LevelsOf = BTreeMap<String, usize>;

/// What [`LevelsOf`] ldb derives from its command line.
pub fn levels_of(p: &Parsed) -> LevelsOf {
    let mut m = LevelsOf::new();
    let Some(db) = p.opt("db") else {
        return m;
    };
    let try_load = !p.flag("create_if_missing") && p.bool_opt("try_load_options", true).unwrap_or(true);
    if try_load {
        if let Ok(Some((_, f))) =
            shale_format::options_file::latest_options_file(&*default_fs(), Path::new(db))
        {
            for cf in &f.cfs {
                let n = cf.option("num_levels").and_then(|v| v.parse().ok()).unwrap_or(7);
                m.insert(cf.name.clone(), n);
            }
            return m;
        }
    }
    if let Ok(cfs) = shale::DB::list_cf(&shale::Options::default(), db) {
        if cfs.len() > 1 {
            for c in cfs {
                m.insert(c, 7);
            }
        }
    }
    m
}

/// The summary DumpManifestHandler prints after the edits (RocksDB 11.8.1's, with the note
/// on the number of levels after each column family).
pub fn summary(r: &Replayed, hex: bool, levels: &LevelsOf) -> Vec<u8> {
    let mut s = Vec::new();
    for (i, cf) in r.cfs.iter().enumerate() {
        s.extend(
            format!("--------------- Column family \"{}\"  (ID {}) --------------\n", cf.name, cf.id)
                .into_bytes(),
        );
        s.extend(format!("log number: {}\n", cf.log_number).into_bytes());
        s.extend(b"comparator: leveldb.BytewiseComparator\n");
        let n = levels.get(&cf.name).copied().unwrap_or(64);
        s.extend(version_debug_string(r, cf, r.created + i, hex, n));
        s.extend(
            format!(
                "By default, manifest file dump prints LSM trees as if {n} levels were configured, which is not \
                 necessarily true for the column family (CF) this manifest is associated with. Please consult \
                 other DB files, such as the OPTIONS file, to confirm.\n"
            )
            .into_bytes(),
        );
    }
    s.extend(
        format!(
            "next_file_number {} last_sequence {}  prev_log_number {} max_column_family {} min_log_number_to_keep {}\n",
            r.next_file_number, r.last_sequence, r.prev_log_number, r.max_column_family, r.min_log_number_to_keep
        )
        .into_bytes(),
    );
    s
}

fn w(out: &mut Out<'_>, b: &[u8]) -> Res<()> {
    out.write_all(b).map_err(Failure::io)
}

/// Finds the single MANIFEST of `db` as ldb's manifest_dump does.
fn find_manifest(db: &str) -> Res<PathBuf> {
    let entries = std::fs::read_dir(db).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Failure::new(format!("NotFound: : Failed to list the content of {db}"))
        }
        _ => Failure::new(format!("IO error: {e}: Failed to list the content of {db}")),
    })?;
    let mut found: Option<String> = None;
    for e in entries {
        let name = e.map_err(Failure::io)?.file_name().to_string_lossy().into_owned();
        if let Some(super::fmt::DbFile::Manifest(_)) = super::fmt::parse_db_file(&name) {
            if found.is_some() {
                return Err(Failure::new("Multiple MANIFEST files found; use --path to select one"));
            }
            found = Some(name);
        }
    }
    let Some(name) = found else {
        return Err(Failure::new(format!("No MANIFEST found in {db}")));
    };
    let sep = if db.ends_with('/') { "" } else { "/" };
    Ok(PathBuf::from(format!("{db}{sep}{name}")))
}

pub fn manifest_dump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["verbose", "json", "path"])?;
    let verbose = p.flag("verbose");
    let hex = p.flag("hex") || p.flag("key_hex");
    let json = p.flag("json");
    let path = match p.opt("path") {
        Some(path) => PathBuf::from(path),
        None => {
            find_manifest(p.opt("db").ok_or_else(|| Failure::plain("Either db or path must be specified."))?)?
        }
    };
    let shown = path.display().to_string();
    if verbose {
        w(out, format!("Processing Manifest file {shown}\n").as_bytes())?;
    }
    let r = match replay(&path) {
        Ok(r) => r,
        Err(f) => {
            // ldb prints the error and carries on.
            eprintln!("Error in processing file {shown} {}", f.msg);
            return Ok(());
        }
    };
    if json {
        for (n, e) in r.edits.iter().enumerate() {
            w(out, &edit_debug_json(e, n, hex))?;
        }
    } else if verbose {
        for e in &r.edits {
            w(out, &edit_debug_string(e, hex))?;
        }
    }
    w(out, &summary(&r, hex, &levels_of(p)))?;
    if verbose {
        w(out, format!("Processing Manifest file {shown} done\n").as_bytes())?;
    }
    Ok(())
}

fn db_arg(p: &Parsed) -> Res<String> {
    super::db_cmds::db_path(p)
}

fn table_path(db: &str, number: u64) -> String {
    format!("{db}/{number:06}.sst")
}

pub fn dump_live_files(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["decode_blob_index", "dump_uncompressed_blobs"])?;
    let db = db_arg(p)?;
    drop(super::db_cmds::open_read_only(p)?);
    let manifest = current_manifest(Path::new(&db))?;
    let r = replay(&manifest)?;
    let hex = p.flag("hex");
    let levels = levels_of(p);
    let manifest_name = manifest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    w(out, b"Manifest File\n==============================\n")?;
    w(out, format!("{db}/{manifest_name}\n").as_bytes())?;
    // ldb dumps the MANIFEST here without --hex.
    w(out, &summary(&r, false, &levels))?;
    w(out, b"\n")?;
    for cf in &r.cfs {
        w(out, format!("Column family name: {}\n==============================\n", cf.name).as_bytes())?;
        w(out, b"\nSST Files\n==============================\n")?;
        for (level, files) in r.levels(cf, 7).iter().enumerate() {
            for f in files {
                let path = table_path(&db, f.number);
                w(out, format!("{path} level:{level}\n------------------------------\n").as_bytes())?;
                crate::sst_dump::dump_sst_for_ldb(&path, hex, out)?;
                w(out, b"\n")?;
            }
        }
        w(out, b"Blob Files\n==============================\n")?;
    }
    w(out, b"\nWrite Ahead Log Files\n==============================\n")?;
    let mut wals: Vec<u64> = Vec::new();
    for e in std::fs::read_dir(&db).map_err(Failure::io)? {
        let name = e.map_err(Failure::io)?.file_name().to_string_lossy().into_owned();
        if let Some(super::fmt::DbFile::Wal(n)) = super::fmt::parse_db_file(&name) {
            wals.push(n);
        }
    }
    wals.sort_unstable();
    for n in wals {
        let path = format!("{db}/{n:06}.log");
        if !super::wal::has_record(&path) {
            continue;
        }
        w(out, format!("{path}\n").as_bytes())?;
        dump_wal_file(&path, true, true, out)?;
    }
    Ok(())
}

pub fn list_live_files_metadata(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["sort_by_filename"])?;
    let db = db_arg(p)?;
    drop(super::db_cmds::open_read_only(p)?);
    let r = replay(&current_manifest(Path::new(&db))?)?;
    if p.flag("sort_by_filename") {
        w(out, b"Live SST and Blob Files:\n")?;
        let mut all: Vec<(String, u32, &str)> = Vec::new();
        for cf in &r.cfs {
            for (level, f) in cf.files.values() {
                all.push((table_path(&db, f.number), *level, &cf.name));
            }
        }
        all.sort();
        for (path, level, cf) in all {
            w(out, format!("{path} : level {level}, column family '{cf}'\n").as_bytes())?;
        }
    } else {
        for cf in &r.cfs {
            w(out, format!("===== Column Family: {} =====\n", cf.name).as_bytes())?;
            w(out, b"Live SST Files:\n")?;
            for (level, files) in r.levels(cf, 7).iter().enumerate() {
                w(out, format!("---------- level {level} ----------\n").as_bytes())?;
                for n in files.iter().map(|f| table_path(&db, f.number)) {
                    w(out, format!("{n}\n").as_bytes())?;
                }
            }
            w(out, b"Live Blob Files:\n")?;
        }
    }
    w(out, b"------------------------------\n")
}

/// What opening with paranoid checks finds wrong with the live tables, in ldb's words.
pub fn check_files(db: &str) -> Res<()> {
    let manifest = current_manifest(Path::new(db))?;
    let r = replay(&manifest)?;
    let mshown = format!(
        "{db}/{}",
        manifest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    );
    // RocksDB 11.8.1's words (VersionEditHandler's file checks while loading the MANIFEST).
    let tail = format!("  The file {mshown} may be corrupted.");
    for cf in &r.cfs {
        for (_, f) in cf.files.values() {
            let path = table_path(db, f.number);
            let actual = match std::fs::metadata(&path) {
                Ok(m) => m.len(),
                Err(_) => {
                    return Err(Failure::new(format!(
                        "Corruption: Corruption: IO error: No such file or directory: While open a file for \
                         random read: {path}: No such file or directory{tail}"
                    )))
                }
            };
            if actual != f.file_size {
                return Err(Failure::new(format!(
                    "Corruption: Sst file size mismatch between expected {} and file system {actual} sstable: \
                     {path}{tail}",
                    f.file_size
                )));
            }
            open_table(&path, f.file_size)
                .map_err(|e| Failure::new(format!("Corruption: {}{tail}", e.msg)))?;
        }
    }
    Ok(())
}

pub fn checkconsistency(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let db = db_arg(p)?;
    super::db_cmds::missing_db(&db, true)?;
    check_files(&db)?;
    drop(super::db_cmds::open_read_only(p)?);
    w(out, b"OK\n")
}

pub fn open_table(path: &str, size: u64) -> Res<Arc<Table>> {
    let fs = default_fs();
    let file = fs.new_random_access_file(Path::new(path)).map_err(Failure::db)?;
    let opts =
        TableReaderOptions::standalone(shale_format::key::bytewise_internal_comparator(), path.to_string());
    Table::open(file, size, opts).map_err(Failure::db)
}

/// Every internal entry of column family `cf_name` as the database's internal iterator
/// shows it: the live tables' entries and the entries of the WALs not yet flushed (newest
/// version of each key only, as the flush at open leaves them), ordered by internal key.
pub fn internal_entries(db: &Path, cf_name: &str) -> Res<Vec<(Vec<u8>, Vec<u8>)>> {
    let r = replay(&current_manifest(db)?)?;
    let cf = r.cf(cf_name)?;
    let mut all: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    // Range tombstones (begin, end, sequence): RocksDB 11's internal iterator does not show
    // them, and skips every point entry one of them covers with a newer sequence number.
    let mut tombstones: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
    let dbs = db.display().to_string();
    for (_, f) in cf.files.values() {
        let t = open_table(&table_path(&dbs, f.number), f.file_size)?;
        for (start, end) in t.range_tombstones() {
            if let Ok(pk) = parse_internal_key(start) {
                tombstones.push((pk.user_key.to_vec(), end.clone(), pk.sequence));
            }
        }
        let mut it = t.iter(false);
        it.seek_to_first();
        while it.valid() {
            all.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().map_err(Failure::db)?;
    }
    // Unflushed WAL entries: newest per user key.
    let mut newest: BTreeMap<Vec<u8>, (u64, u8, Vec<u8>)> = BTreeMap::new();
    let mut wals: Vec<u64> = Vec::new();
    for e in std::fs::read_dir(db).map_err(Failure::io)? {
        let name = e.map_err(Failure::io)?.file_name().to_string_lossy().into_owned();
        if let Some(super::fmt::DbFile::Wal(n)) = super::fmt::parse_db_file(&name) {
            if n >= cf.log_number {
                wals.push(n);
            }
        }
    }
    wals.sort_unstable();
    let fs = default_fs();
    for n in wals {
        let path = db.join(format!("{n:06}.log"));
        let file = fs.new_sequential_file(&path).map_err(Failure::db)?;
        let mut reader = LogReader::new(
            file,
            path.display().to_string(),
            n,
            WalRecoveryMode::TolerateCorruptedTailRecords,
        );
        let mut rec = Vec::new();
        while reader.read_record(&mut rec).map_err(Failure::db)? {
            if rec.len() < 12 {
                continue;
            }
            let batch = shale::WriteBatch::from_data(&rec);
            let mut seq = batch.sequence();
            batch
                .for_each(&mut |e| {
                    if e.cf_id == cf.id && e.value_type == ValueType::RangeDeletion && seq > f_max_seq(cf) {
                        tombstones.push((e.key.to_vec(), e.value.to_vec(), seq));
                    } else if e.cf_id == cf.id && e.value_type != ValueType::RangeDeletion {
                        let keep = newest.get(e.key).is_none_or(|(s, _, _)| *s < seq);
                        if keep && seq > f_max_seq(cf) {
                            newest.insert(e.key.to_vec(), (seq, e.value_type as u8, e.value.to_vec()));
                        }
                    }
                    seq += 1;
                    Ok(())
                })
                .map_err(Failure::db)?;
        }
    }
    for (k, (seq, t, v)) in newest {
        let vt = ValueType::from_u8(t).unwrap_or(ValueType::Value);
        all.push((make_internal_key(&k, seq, vt), v));
    }
    all.retain(|(ikey, _)| match parse_internal_key(ikey) {
        Ok(pk) => !tombstones
            .iter()
            .any(|(b, e, s)| *s > pk.sequence && b.as_slice() <= pk.user_key && pk.user_key < e.as_slice()),
        Err(_) => true,
    });
    let icmp = shale_format::key::bytewise_internal_comparator();
    all.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    Ok(all)
}

/// The highest sequence number already in the column family's tables (WAL entries at or
/// below it were flushed).
fn f_max_seq(cf: &CfState) -> u64 {
    cf.files.values().map(|(_, f)| f.largest_seqno).max().unwrap_or(0)
}

/// RocksDB's GetApproximateSizes over the files of `cf_name` (memtables not included, as
/// ldb asks).
/// RocksDB 11's seek key for a user key: the highest sequence number and its
/// kValueTypeForSeek, kTypeValuePreferredSeqno (0x18). It sorts before a range tombstone
/// whose end is the same user key at the highest sequence number, where the engine's seek
/// type (0xF) sorts with it, which changes which side of a file's end the key falls.
fn seek_key_11(user_key: &[u8]) -> Vec<u8> {
    let mut k = user_key.to_vec();
    k.extend_from_slice(&((MAX_SEQUENCE_NUMBER << 8) | 0x18).to_le_bytes());
    k
}

pub fn approximate_size(db: &Path, cf_name: &str, from: &[u8], to: &[u8]) -> Res<u64> {
    let r = replay(&current_manifest(db)?)?;
    let cf = r.cf(cf_name)?;
    let dbs = db.display().to_string();
    let start = seek_key_11(from);
    let end = seek_key_11(to);
    let icmp = shale_format::key::bytewise_internal_comparator();
    // RocksDB 11's VersionSet::ApproximateSize, file by file (with no error margin, its
    // level-by-level walk adds up to the same), and BlockBasedTable's offsets, which
    // scale a data-block offset to the whole file.
    let mut total = 0u64;
    for (_, f) in cf.files.values() {
        if icmp.compare(&f.largest, &start) != Ordering::Greater
            || icmp.compare(&f.smallest, &end) == Ordering::Greater
        {
            continue;
        }
        let t = open_table(&table_path(&dbs, f.number), f.file_size)?;
        let data_size = t.properties().data_size;
        let scaled = |off: u64| ((off as f64 / data_size as f64) * f.file_size as f64) as u64;
        let offset_of = |key: &[u8]| -> u64 {
            if icmp.compare(&f.largest, key) != Ordering::Greater {
                f.file_size
            } else if icmp.compare(&f.smallest, key) == Ordering::Greater {
                0
            } else if data_size == 0 {
                f.file_size / 2
            } else {
                scaled(t.approximate_offset_of(key))
            }
        };
        total += if icmp.compare(&f.smallest, &start) != Ordering::Less {
            offset_of(&end)
        } else if icmp.compare(&f.largest, &end) == Ordering::Less {
            f.file_size.saturating_sub(offset_of(&start))
        } else if data_size == 0 {
            f.file_size
        } else {
            let a = t.approximate_offset_of(&start);
            let b = t.approximate_offset_of(&end);
            scaled(b.saturating_sub(a))
        };
    }
    Ok(total)
}

/// ldb's `list_file_range_deletes` (Version::TablesRangeTombstoneSummary): per table of the
/// family, level by level in the version's order, `=== file : <path> ===` and its range
/// tombstones as the fragmented tombstone iterator yields them (non-overlapping pieces in
/// key order, each piece's sequence numbers newest first), at most `--max_keys` (1000) in
/// all.
pub fn list_file_range_deletes(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["max_keys"])?;
    let db = db_arg(p)?;
    let mut left = super::db_cmds::max_keys(p, false)?.map(|n| n as i64).unwrap_or(1000);
    if p.opt("max_keys").is_some_and(|v| v.trim_start().starts_with('-')) {
        left = -1;
    }
    drop(super::db_cmds::open_read_only(p)?);
    let r = replay(&current_manifest(Path::new(&db))?)?;
    let cf = r.cf(&super::db_cmds::cf_name(p))?;
    let mut s: Vec<u8> = Vec::new();
    if left > 0 {
        'files: for files in r.levels(cf, 7) {
            for f in files {
                let path = table_path(&db, f.number);
                s.extend(format!("=== file : {path} ===\n").into_bytes());
                let t = open_table(&path, f.file_size)?;
                let mut ts: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
                for (start, end) in t.range_tombstones() {
                    if let Ok(pk) = parse_internal_key(start) {
                        ts.push((pk.user_key.to_vec(), end.clone(), pk.sequence));
                    }
                }
                let mut bounds: Vec<&[u8]> =
                    ts.iter().flat_map(|(b, e, _)| [b.as_slice(), e.as_slice()]).collect();
                bounds.sort();
                bounds.dedup();
                for w in bounds.windows(2) {
                    let (b, e) = (w[0], w[1]);
                    let mut seqs: Vec<u64> = ts
                        .iter()
                        .filter(|(tb, te, _)| tb.as_slice() <= b && e <= te.as_slice())
                        .map(|t| t.2)
                        .collect();
                    seqs.sort_unstable_by(|x, y| y.cmp(x));
                    seqs.dedup();
                    for seq in seqs {
                        if left <= 0 {
                            break 'files;
                        }
                        s.extend(
                            format!(
                                "start: {} end: {} seq: {seq}\n",
                                super::fmt::to_hex(b),
                                super::fmt::to_hex(e)
                            )
                            .into_bytes(),
                        );
                        left -= 1;
                    }
                }
                if left <= 0 {
                    break 'files;
                }
            }
        }
        if left <= 0 {
            s.extend_from_slice(b"(results may not be complete)\n");
        }
    }
    s.push(b'\n');
    w(out, &s)
}

/// ldb's `unsafe_remove_sst_file <number>` (RocksDB 11.8.1's OfflineManifestWriter): with the
/// database closed, recovers the MANIFEST, finds the file in some level of some family, and
/// starts a new MANIFEST (numbered as RocksDB numbers it: one past the last recorded next
/// file number) holding the current state and an edit deleting the file; CURRENT then names
/// it. The old MANIFEST stays, as RocksDB leaves it (the next open deletes it). The table
/// file itself is not deleted. Success is reported on stderr, as ldb reports it.
pub fn unsafe_remove_sst_file(p: &Parsed, _out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [n] = p.params.as_slice() else {
        return Err(Failure::new("SST file number must be specified"));
    };
    let digits = n.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits != n.len() {
        return Err(Failure::new(format!("Failed to parse SST file number {n}")));
    }
    let number: u64 = n.parse().map_err(|_| Failure::new(format!("Failed to parse SST file number {n}")))?;
    let db = db_arg(p)?;
    let fail = |f: Failure| Failure::new(format!("failed to unsafely remove SST file: {}", f.msg));
    super::db_cmds::missing_db(&db, true).map_err(fail)?;
    let fs = default_fs();
    let dir = Path::new(&db);
    let rec = shale_engine::version::manifest::recover(&*fs, dir).map_err(|e| fail(Failure::db(e)))?;
    let found = rec
        .column_families
        .iter()
        .find_map(|(id, cf)| cf.files.iter().find(|(_, f)| f.number == number).map(|(l, _)| (*id, *l)));
    let Some((cf_id, level)) = found else {
        return Err(Failure::new(
            "failed to unsafely remove SST file: NotFound: File not present in any level",
        ));
    };
    let edit =
        VersionEdit { column_family: cf_id, deleted_files: vec![(level, number)], ..VersionEdit::default() };
    new_manifest(dir, rec, edit).map_err(|e| fail(Failure::db(e)))?;
    eprintln!("unsafely removed SST file");
    Ok(())
}

/// What RocksDB's LogAndApply does on a VersionSet just recovered offline: starts a new
/// MANIFEST, numbered one past the last recorded next file number, holding the state
/// (`state`) and then `edit` with the next file number, previous log number and last
/// sequence; CURRENT then names it. The old MANIFEST stays (the next open deletes it).
pub fn new_manifest(
    dir: &Path,
    mut state: shale_engine::version::manifest::RecoveredManifest,
    mut edit: VersionEdit,
) -> shale::Result<()> {
    let fs = default_fs();
    let manifest_number = (state.next_file_number + 1).max(state.manifest_number + 1);
    let next = manifest_number + 1;
    state.next_file_number = next;
    edit.prev_log_number = Some(state.prev_log_number);
    edit.next_file_number = Some(next);
    edit.last_sequence = Some(state.last_sequence);
    let mut records = state.snapshot();
    records.push(edit);
    shale_engine::version::manifest::ManifestWriter::create(&*fs, dir, manifest_number, &records)?;
    shale_engine::version::manifest::set_current_file(&*fs, dir, manifest_number, manifest_number)
}

/// ldb's `file_checksum_dump`: `<file number>, <checksum function>, <checksum>` for every
/// live table and every blob file the MANIFEST adds (RocksDB's `FileChecksumRetriever`
/// keeps each blob file addition of a family not dropped; a blob file without a checksum
/// shows as `Unknown` and an empty checksum), then `Print SST file checksum information
/// finished `. `--hex` prints the checksums as `0x...`. Like RocksDB 11.8.1, it reads the
/// MANIFEST of `--db` whatever `--path` says.
///
/// RocksDB prints the files in the order of the `std::unordered_map` they pass through
/// (FileChecksumListImpl): [`unordered_map_order`] gives libstdc++'s order.
pub fn file_checksum_dump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    // `--path` is accepted and not used, as in RocksDB 11.8.1 (`--path=` is a flag there).
    p.check_known(&["path"])?;
    let db = db_arg(p)?;
    super::db_cmds::missing_db(&db, true)?;
    let r = replay(&current_manifest(Path::new(&db))?)?;
    // (number, function, checksum)
    let mut files: Vec<(u64, String, Vec<u8>)> = Vec::new();
    for cf in &r.cfs {
        for level in r.levels(cf, 7) {
            files.extend(level.into_iter().map(|f| (f.number, f.file_checksum_func_name, f.file_checksum)));
        }
    }
    // Family ids are never reused: a family not live now was dropped.
    let live: std::collections::HashSet<u32> = r.cfs.iter().map(|c| c.id).collect();
    for e in &r.edits {
        if !live.contains(&e.column_family) {
            continue;
        }
        for b in &e.blob_file_additions {
            if files.iter().any(|(n, _, _)| *n == b.number) {
                continue;
            }
            let func = if b.checksum_method.is_empty() {
                "Unknown".to_string()
            } else {
                String::from_utf8_lossy(&b.checksum_method).into_owned()
            };
            files.push((b.number, func, b.checksum_value.clone()));
        }
    }
    let numbers: Vec<u64> = files.iter().map(|f| f.0).collect();
    let hex = p.flag("hex");
    for i in unordered_map_order(&numbers) {
        let (number, func, sum) = &files[i];
        let mut line = format!("{number}, {func}, ").into_bytes();
        if hex {
            line.extend(super::fmt::string_to_hex(sum).into_bytes());
        } else {
            line.extend_from_slice(sum);
        }
        line.push(b'\n');
        w(out, &line)?;
    }
    w(out, b"Print SST file checksum information finished \n")
}

/// The order a libstdc++ `std::unordered_map<uint64_t, _>` iterates its keys in after they
/// were inserted in the order given (duplicates keep their first place): identity hash,
/// buckets grown by the prime rehash policy (13, 29, 59, 127, 257, ... buckets: at least
/// twice the old count, the next prime of libstdc++'s table; the table skips some primes
/// above 257, where Shale takes the next prime), each new key put at the front of its
/// bucket's run or, in an empty bucket, at the front of the list. Returns indices into
/// `keys`.
pub fn unordered_map_order(keys: &[u64]) -> Vec<usize> {
    fn next_prime(n: u64) -> u64 {
        let mut c = n.max(2);
        while (2..).take_while(|d| d * d <= c).any(|d| c.is_multiple_of(d)) {
            c += 1;
        }
        c
    }
    // The list as node indices; a bucket's nodes are contiguous in it.
    let mut list: Vec<usize> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut nb: u64 = 1;
    let mut next_resize: u64 = 0;
    for (i, &k) in keys.iter().enumerate() {
        if !seen.insert(k) {
            continue;
        }
        let n_elt = list.len() as u64;
        if n_elt + 1 > next_resize {
            let min_bkts = (n_elt + 1).max(if next_resize == 0 { 11 } else { 0 });
            if min_bkts >= nb {
                let want = (min_bkts + 1).max(nb * 2);
                const FAST: [u64; 14] = [2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13];
                nb = if want < 14 { FAST[want as usize] } else { next_prime(want) };
                next_resize = nb;
                // Rehash: the nodes in list order, each put as a new one is.
                for node in std::mem::take(&mut list) {
                    put(&mut list, keys, nb, node);
                }
            } else {
                next_resize = nb;
            }
        }
        put(&mut list, keys, nb, i);
    }
    list
}

/// Puts node `i` at the front of its bucket's run, or at the front of the list when its
/// bucket is empty.
fn put(list: &mut Vec<usize>, keys: &[u64], nb: u64, i: usize) {
    let b = keys[i] % nb;
    let pos = list.iter().position(|&x| keys[x] % nb == b).unwrap_or(0);
    list.insert(pos, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_unique_id_matches_rocksdb() {
        // From `ldb manifest_dump --verbose` (RocksDB 7.8.3) on a database it wrote.
        let (i, p) = unique_id_strings([1644502778550930825, 15754328274583837313]);
        assert_eq!(i, "{1644502778550930825,15754328274583837313}");
        assert_eq!(p, "3A1DCB9AFF83F6E7-439FAE957544FFFD");
    }

    #[test]
    fn unordered_map_order_is_libstdcxx() {
        // 13 buckets: 14 and 1 share bucket 1, the later goes first in its run; a key in
        // an empty bucket goes to the front of the list.
        let keys = [1u64, 2, 14, 3];
        let order: Vec<u64> = unordered_map_order(&keys).into_iter().map(|i| keys[i]).collect();
        assert_eq!(order, vec![3, 2, 14, 1]);
    }
}
