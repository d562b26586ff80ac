//! `DB::repair`: rebuild a database's MANIFEST from the files in its directory, as
//! RocksDB's RepairDB (db/repair.cc) does, for a database whose MANIFEST or CURRENT is lost
//! or damaged.
//!
//! Steps:
//! 1. take LOCK; list the directory: tables (`*.sst`), blob files (`*.blob`), WALs
//!    (`*.log`), MANIFESTs;
//! 2. open every table, verifying its blocks' checksums and reading every entry: its key
//!    range, sequence range, column family (from its properties) and the oldest blob file
//!    its blob indexes name. A table that does not read back whole is moved to `lost/`, as
//!    RocksDB archives it;
//! 3. read every blob file whole (header, every record's header and blob CRC, footer and
//!    its count): its column family (from the header), blob count and bytes. One that does
//!    not read back whole is moved to `lost/` (reads of the values it held then fail with
//!    Corruption naming it). RocksDB's repair leaves blob files out of the new MANIFEST;
//!    Shale adds them back, without garbage counts (garbage found later by compactions is
//!    counted from then on);
//! 4. move the old MANIFESTs to `lost/`, write a new MANIFEST holding every good table at
//!    level 0 and every good blob file in its column family, each column family's log
//!    number 0 (so that every WAL left in the directory is replayed), the last sequence the
//!    highest in any table, and point CURRENT at it (synced, renamed, directory synced);
//! 5. open the database with all its column families, which replays the WALs, flush every
//!    column family so the WALs' contents are in tables, and close.
//!
//! Unlike RocksDB, step 5 goes through the engine's own recovery rather than a private WAL
//! converter: the same code path that replays WALs at every open. Steps 1 to 4 are here
//! (`RepairSettings::repair`); step 5 is the facade's `DB::repair` (`repair_api.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::db::filename::{parse_file_name, table_file, FileType};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::key::{
    make_internal_key, parse_internal_key, InternalKeyComparator, ValueType, MAX_SEQUENCE_NUMBER,
};
use crate::table::{Table, TableReaderOptions};
use crate::version::edit::{BlobFileAddition, FileMetaData, VersionEdit};
use crate::version::manifest::{set_current_file, ManifestWriter};

/// A table found in the directory, read back whole.
struct Found {
    cf_id: u32,
    cf_name: String,
    meta: FileMetaData,
}

fn scan_table(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    icmp: &InternalKeyComparator,
) -> Result<Option<Found>> {
    let path = table_file(dir, number);
    let size = fs.file_size(&path)?;
    let file = fs.new_random_access_file(&path)?;
    let opts = TableReaderOptions::standalone(icmp.clone(), path.display().to_string());
    let mut table = Table::open(file.clone(), size, opts.clone())?;
    // RocksDB's Repairer takes `user_defined_timestamps_persisted` from the table's
    // property; a table without timestamps of a family with them is read with the minimum
    // one (and recorded without it, `FileMetaData::stripped_ts_size`).
    let persisted =
        table.properties().raw_u64(crate::table::properties::names::USER_DEFINED_TIMESTAMPS_PERSISTED)
            != Some(0);
    if !persisted && icmp.timestamp_size() > 0 {
        table = Table::open(file, size, TableReaderOptions { timestamps_persisted: false, ..opts })?;
    }
    // RocksDB's Repairer records the unique id the table's properties give.
    let p = table.properties();
    let unique_id =
        crate::table::unique_id::internal_unique_id(&p.db_id, &p.db_session_id, p.orig_file_number, false);
    let mut meta = FileMetaData {
        number,
        file_size: size,
        unique_id,
        user_defined_timestamps_persisted: persisted,
        stripped_ts_size: if persisted { 0 } else { icmp.timestamp_size() },
        ..FileMetaData::default()
    };
    let mut smallest: Option<Vec<u8>> = None;
    let mut largest: Option<Vec<u8>> = None;
    let note = |ikey: &[u8],
                meta: &mut FileMetaData,
                smallest: &mut Option<Vec<u8>>,
                largest: &mut Option<Vec<u8>>|
     -> Result<()> {
        let p = parse_internal_key(ikey)?;
        meta.smallest_seqno = meta.smallest_seqno.min(p.sequence);
        meta.largest_seqno = meta.largest_seqno.max(p.sequence);
        if smallest.as_deref().is_none_or(|s| icmp.compare(ikey, s).is_lt()) {
            *smallest = Some(ikey.to_vec());
        }
        if largest.as_deref().is_none_or(|l| icmp.compare(ikey, l).is_gt()) {
            *largest = Some(ikey.to_vec());
        }
        Ok(())
    };
    let mut it = table.iter(false);
    it.seek_to_first();
    while it.valid() {
        note(it.key(), &mut meta, &mut smallest, &mut largest)?;
        let vt = parse_internal_key(it.key())?.value_type;
        if vt == ValueType::BlobIndex {
            let n = crate::blob::BlobIndex::decode(it.value())?.file_number;
            if meta.oldest_blob_file_number == 0 || n < meta.oldest_blob_file_number {
                meta.oldest_blob_file_number = n;
            }
        } else if vt == ValueType::WideColumnEntity {
            crate::version::link_entity_blob_files(&mut meta, it.value())?;
        }
        it.next();
    }
    it.status()?;
    for (start, end) in table.range_tombstones() {
        note(start, &mut meta, &mut smallest, &mut largest)?;
        // The end of a range tombstone bounds the file with the maximal sequence number,
        // as RocksDB's sentinel key.
        let end_key = make_internal_key(end, MAX_SEQUENCE_NUMBER, ValueType::RangeDeletion);
        if largest.as_deref().is_none_or(|l| icmp.compare(&end_key, l).is_gt()) {
            largest = Some(end_key);
        }
    }
    let (Some(s), Some(l)) = (smallest, largest) else {
        return Ok(None); // an empty table holds nothing to recover
    };
    meta.smallest = s;
    meta.largest = l;
    let props = table.properties();
    meta.file_creation_time = props.file_creation_time;
    meta.oldest_ancester_time = props.creation_time;
    meta.tail_size = props.tail_size(size);
    let cf_id = if props.column_family_id == crate::table::properties::UNKNOWN_COLUMN_FAMILY {
        0
    } else {
        props.column_family_id as u32
    };
    let cf_name = if props.column_family_name.is_empty() && cf_id == 0 {
        crate::db::DEFAULT_COLUMN_FAMILY_NAME.to_string()
    } else {
        props.column_family_name.clone()
    };
    Ok(Some(Found { cf_id, cf_name, meta }))
}

/// Reads blob file `number` whole: its column family and its addition (count and bytes of
/// its blobs). Corruption when any part does not decode or check.
fn scan_blob_file(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<(u32, BlobFileAddition)> {
    use crate::blob::format::{
        BlobFooter, BlobHeader, RecordHeader, FOOTER_SIZE, HEADER_SIZE, RECORD_HEADER_SIZE,
    };
    let name = crate::blob::reader::blob_file_name(number);
    let bad = |at: u64, what: String| Error::corruption(format!("blob file {name}, offset {at}: {what}"));
    let data = crate::fs::read_file(fs, &crate::blob::reader::blob_file_path(dir, number))?;
    if data.len() < HEADER_SIZE + FOOTER_SIZE {
        return Err(bad(0, format!("{} bytes: too short for a blob file", data.len())));
    }
    let header = BlobHeader::decode(&data[..HEADER_SIZE]).map_err(|e| bad(0, e.to_string()))?;
    if header.has_ttl {
        return Err(bad(0, "TTL blob file (stacked BlobDB)".into()));
    }
    let end = data.len() - FOOTER_SIZE;
    let footer = BlobFooter::decode(&data[end..]).map_err(|e| bad(end as u64, e.to_string()))?;
    let (mut at, mut count) = (HEADER_SIZE, 0u64);
    while at < end {
        let h_end = at
            .checked_add(RECORD_HEADER_SIZE)
            .filter(|&e| e <= end)
            .ok_or_else(|| bad(at as u64, "truncated blob record header".into()))?;
        let h = RecordHeader::decode(&data[at..h_end]).map_err(|e| bad(at as u64, e.to_string()))?;
        let k_end = usize::try_from(h.key_size).ok().and_then(|k| h_end.checked_add(k)).filter(|&e| e <= end);
        let v_end = k_end
            .and_then(|k| usize::try_from(h.value_size).ok().and_then(|v| k.checked_add(v)))
            .filter(|&e| e <= end);
        let (Some(k_end), Some(v_end)) = (k_end, v_end) else {
            return Err(bad(at as u64, "blob record runs past the footer".into()));
        };
        if crate::blob::format::blob_crc(&data[h_end..k_end], &data[k_end..v_end]) != h.blob_crc {
            return Err(bad(at as u64, "Blob CRC mismatch".into()));
        }
        count += 1;
        at = v_end;
    }
    if count != footer.blob_count {
        return Err(bad(end as u64, format!("{count} blobs, the footer says {}", footer.blob_count)));
    }
    let addition = BlobFileAddition {
        number,
        total_blob_count: count,
        total_blob_bytes: (end - HEADER_SIZE) as u64,
        checksum_method: Vec::new(),
        checksum_value: Vec::new(),
    };
    Ok((header.column_family_id, addition))
}

fn archive(fs: &dyn FileSystem, dir: &Path, name: &str) -> Result<()> {
    let lost = dir.join("lost");
    fs.create_dir_all(&lost)?;
    fs.rename(&dir.join(name), &lost.join(name))
}

/// What a repair reads of the user's options (the facade fills it from its `Options`).
pub struct RepairSettings {
    pub fs: Option<crate::fs::FileSystemRef>,
    pub db_paths: Vec<(std::path::PathBuf, u64)>,
    pub cf_paths: Vec<(std::path::PathBuf, u64)>,
    pub comparator: crate::comparator::ComparatorRef,
    /// Recorded with the comparator, as RocksDB's repairer records its options' flag.
    pub persist_user_defined_timestamps: bool,
}

impl RepairSettings {
    /// Rebuilds the MANIFEST of the database at `path` from its tables and WALs (RocksDB's
    /// RepairDB, rust-rocksdb's `DB::repair`). Tables that cannot be read whole are moved
    /// to `path/lost/`, as are the old MANIFESTs.
    pub fn repair(&self, path: &Path) -> Result<()> {
        let opts = self;
        let dir = path;
        let fs = opts.fs.clone().unwrap_or_else(crate::fs::default_fs);
        if !fs.file_exists(dir) {
            return Err(Error::invalid_argument(format!("{}: does not exist", dir.display())));
        }
        // Where tables are looked for, with the path id a table found there gets: each of
        // `db_paths` (RocksDB's Repairer::FindFiles, which searches the sanitized db_paths,
        // the database directory when none are set), and also each of `cf_paths`, which
        // RocksDB's repairer does not search (its tables there would be lost); the
        // database directory for the rest of the files.
        let mut table_dirs: Vec<(std::path::PathBuf, u32)> = Vec::new();
        if opts.db_paths.is_empty() {
            table_dirs.push((dir.to_path_buf(), 0));
        }
        for (paths, _) in [(&opts.db_paths, 0), (&opts.cf_paths, 1)] {
            for (i, (p, _)) in paths.iter().enumerate() {
                if !table_dirs.iter().any(|(d, _)| d == p) {
                    table_dirs.push((p.clone(), i as u32));
                }
            }
        }
        let icmp = InternalKeyComparator::new(opts.comparator.clone());
        let mut tables = Vec::new();
        let mut blob_numbers = Vec::new();
        let mut manifests = Vec::new();
        let mut max_number = 1u64;
        {
            let _lock = fs.lock_file(&crate::db::filename::lock_file(dir))?;
            for (tdir, path_id) in &table_dirs {
                if tdir == dir || !fs.file_exists(tdir) {
                    continue;
                }
                for name in fs.children(tdir)? {
                    if let Some(FileType::Table(n)) = parse_file_name(&name) {
                        tables.push((n, tdir.clone(), *path_id));
                        max_number = max_number.max(n);
                    }
                }
            }
            let dir_path_id = table_dirs.iter().find(|(d, _)| d == dir).map(|(_, id)| *id);
            for name in fs.children(dir)? {
                match parse_file_name(&name) {
                    Some(FileType::Table(n)) => {
                        max_number = max_number.max(n);
                        if let Some(id) = dir_path_id {
                            tables.push((n, dir.to_path_buf(), id));
                        }
                    }
                    Some(FileType::Blob(n)) => {
                        blob_numbers.push(n);
                        max_number = max_number.max(n);
                    }
                    Some(FileType::Wal(n)) | Some(FileType::Options(n)) | Some(FileType::Temp(n)) => {
                        max_number = max_number.max(n)
                    }
                    Some(FileType::Manifest(n)) => {
                        manifests.push(name.clone());
                        max_number = max_number.max(n);
                    }
                    _ => {}
                }
            }
            tables.sort_unstable();
            let mut found = Vec::new();
            for (n, tdir, path_id) in tables {
                match scan_table(&*fs, &tdir, n, &icmp) {
                    Ok(Some(mut f)) => {
                        f.meta.path_id = path_id;
                        found.push(f);
                    }
                    Ok(None) => {}
                    Err(_) => archive(&*fs, &tdir, &crate::db::filename::table_file_name(n))?,
                }
            }
            blob_numbers.sort_unstable();
            let mut blobs: Vec<(u32, BlobFileAddition)> = Vec::new();
            for n in blob_numbers {
                match scan_blob_file(&*fs, dir, n) {
                    Ok(b) => blobs.push(b),
                    Err(_) => archive(&*fs, dir, &crate::blob::reader::blob_file_name(n))?,
                }
            }
            // Column families by id, with the names the tables record.
            let mut cfs: BTreeMap<u32, String> = BTreeMap::new();
            cfs.insert(0, crate::db::DEFAULT_COLUMN_FAMILY_NAME.to_string());
            for f in &found {
                if f.cf_id != 0 && !f.cf_name.is_empty() {
                    cfs.entry(f.cf_id).or_insert_with(|| f.cf_name.clone());
                }
            }
            let last_sequence = found.iter().map(|f| f.meta.largest_seqno).max().unwrap_or(0);
            let manifest_number = max_number + 1;
            let next_file_number = manifest_number + 2;
            let comparator = opts.comparator.name().to_string();
            let mut edits = Vec::new();
            for (&id, name) in &cfs {
                edits.push(VersionEdit {
                    column_family: id,
                    column_family_add: (id != 0).then(|| name.clone()),
                    comparator: Some(comparator.clone()),
                    persist_user_defined_timestamps: Some(opts.persist_user_defined_timestamps),
                    ..VersionEdit::default()
                });
                let new_files = found
                    .iter()
                    .filter(|f| f.cf_id == id || (!cfs.contains_key(&f.cf_id) && id == 0))
                    .map(|f| (0u32, f.meta.clone()))
                    .collect();
                let blob_file_additions = blobs
                    .iter()
                    .filter(|(cf, _)| *cf == id || (!cfs.contains_key(cf) && id == 0))
                    .map(|(_, b)| b.clone())
                    .collect();
                edits.push(VersionEdit {
                    column_family: id,
                    new_files,
                    blob_file_additions,
                    log_number: Some(0),
                    last_sequence: Some(last_sequence),
                    ..VersionEdit::default()
                });
            }
            edits.push(VersionEdit {
                prev_log_number: Some(0),
                next_file_number: Some(next_file_number),
                max_column_family: Some(cfs.keys().copied().max().unwrap_or(0)),
                last_sequence: Some(last_sequence),
                ..VersionEdit::default()
            });
            for m in &manifests {
                archive(&*fs, dir, m)?;
            }
            drop(ManifestWriter::create(&*fs, dir, manifest_number, &edits)?);
            set_current_file(&*fs, dir, manifest_number, manifest_number + 1)?;
        }
        Ok(())
    }
}
