//! SST ingestion (RocksDB's `ExternalSstFileIngestionJob`): external files written by an
//! SstFileWriter (Shale's or RocksDB's) become tables of a column family in one MANIFEST
//! record.
//!
//! 1. Without any lock: open each file, check it is an external file
//!    ("rocksdb.external_sst_file.version") of this comparator and family, and take its key
//!    range (range tombstones included). Copy it into the database directory under a new
//!    file number (a pending output), or hard-link it with `move_files`; sync the copies and
//!    the directory.
//! 2. With write leadership (no write runs) and the DB mutex: if a memtable of the family
//!    overlaps a file, flush it first (`allow_blocking_flush`, else InvalidArgument) and
//!    wait. Choose the sequence number: 0 when nothing in the family overlaps the files, no
//!    snapshot exists (with `snapshot_consistency`) and the files are disjoint; otherwise
//!    the next sequence number (refused without `allow_global_seqno`), one per file when
//!    files overlap each other (later files newer). Choose each file's level: the lowest
//!    one reachable from level 0 without crossing a level or a running compaction's output
//!    whose range overlaps it (files overlapping each other go to level 0).
//! 3. One VersionEdit with every file, through `log_and_apply`: all files or none, also
//!    across a crash (staged files no MANIFEST names are removed at the next open).
//!
//! With user-defined timestamps, keys are compared without them (RocksDB's `start_ukey`
//! and `limit_ukey`: the smallest key with the maximum timestamp, the largest with the
//! minimum), and any overlap is refused as RocksDB 11.8.1 refuses it: files overlapping each
//! other (NotSupported), a memtable holding a key of a file's range (InvalidArgument, even
//! with `allow_blocking_flush`), a level or running compaction's output overlapping a file
//! (InvalidArgument). A global sequence number cannot order the versions of a key there:
//! reads take the version of highest sequence number first, whatever its timestamp, so an
//! ingested k@3 above a k@5 would hide it. A level overlaps a file where it holds a key of
//! the file's range, as RocksDB's `OverlapWithLevelIterator` decides: the tables whose range
//! overlaps are read with the DB mutex released. A file falling in a gap between the keys
//! of a table goes to the level above it (Shale places it above the first level whose
//! ranges overlap it; RocksDB may go past such a level).
//!
//! The files keep sequence number 0 in their keys; the number chosen is their largest
//! seqno in the MANIFEST, which `table/reader.rs` applies as the global seqno, so a moved
//! file is never rewritten (RocksDB's `write_global_seqno = false`, the default). With
//! `write_global_seqno` the number is also written into the file's
//! "rocksdb.external_sst_file.global_seqno" property in place (8 bytes at the offset the
//! properties block gives, the block's checksum left as it was, as RocksDB leaves it), the
//! file synced, with the DB mutex released (see `install_ingested`).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::{filename, DbInner, DbState};
use crate::config::IngestSettings;
use crate::error::{Error, ErrorKind, Result};
use crate::key::{make_internal_key, parse_internal_key, user_key, ValueType, MAX_SEQUENCE_NUMBER};
use crate::table::properties::{names, UNKNOWN_COLUMN_FAMILY};
use crate::table::reader::TableReaderOptions;
use crate::version::edit::{FileMetaData, VersionEdit};

/// RocksDB's refusal of a file overlapping the levels of a family with timestamps.
const OVERLAP_WITH_DB_TS: &str = "Column family enables user-defined timestamps, please make sure the key range (without timestamp) of external file does not overlap with key range (without timestamp) in the db";

/// Smallest user key and its type, largest and its type, whether the largest is a range
/// tombstone's exclusive end.
type Bounds = (Vec<u8>, ValueType, Vec<u8>, ValueType, bool);

/// One file being ingested.
struct Ingested {
    source: PathBuf,
    number: u64,
    size: u64,
    /// Smallest / largest user keys (the largest may be a range tombstone's exclusive end).
    smallest: Vec<u8>,
    largest: Vec<u8>,
    /// Internal-key types of the bounds (a range tombstone end is a sentinel).
    smallest_type: ValueType,
    largest_is_sentinel: bool,
    largest_type: ValueType,
    file_creation_time: u64,
    creation_time: u64,
    /// What the MANIFEST records (`TableProperties::tail_size`).
    tail_size: u64,
    /// The unique id its properties give (RocksDB's ingestion job; none when they lack an id).
    unique_id: Option<[u64; 2]>,
    /// The temperature recorded for it: kUnknown (0) when linked, the family's write
    /// temperature when copied (RocksDB's `ExternalSstFileIngestionJob::Prepare`).
    temperature: u8,
    /// The MANIFEST's whole-file checksum and its function's name: with the CRC32C
    /// `file_checksum_gen_factory`, read from the file as placed in the database (RocksDB's
    /// `GenerateOneFileChecksum` in `Prepare`); else empty and "Unknown".
    file_checksum: Vec<u8>,
    file_checksum_func_name: String,
    /// Whether its keys carry their timestamps (the table's
    /// "rocksdb.user.defined.timestamps.persisted", false when the family gained
    /// timestamps since the file's comparator): recorded in the MANIFEST, and without them
    /// the boundaries are kept padded (`FileMetaData::stripped_ts_size`).
    ts_persisted: bool,
    /// The file's "rocksdb.external_sst_file.global_seqno" property (0 when it has none).
    original_seqno: u64,
    /// With `write_global_seqno`: where that property's value lies in the file.
    global_seqno_offset: Option<u64>,
}

impl DbInner {
    pub fn ingest_external_files(
        &self,
        h: &Arc<CfHandle>,
        opts: &IngestSettings,
        paths: &[PathBuf],
    ) -> Result<()> {
        if opts.ingest_behind {
            // RocksDB 11.8.1's checks and messages (its second one prints `%s` as is).
            if h.icmp.timestamp_size() > 0 {
                return Err(Error::not_supported(
                    "Column family with user-defined timestamps enabled doesn't support ingest behind.",
                ));
            }
            if !h.config().ingest_behind {
                return Err(Error::invalid_argument(
                    "Can't ingest_behind file in ColumnFamily %s with cf_allow_ingest_behind=false",
                ));
            }
        }
        if paths.is_empty() {
            return Err(Error::invalid_argument("The list of files is empty"));
        }
        // Held shared until the files are installed: no iterator's range conversion adds to
        // the family's memtable meanwhile (RocksDB's per-family `ingest_sst_lock_`).
        let _ingest = h.ingest_lock.read();
        let mut files = Vec::with_capacity(paths.len());
        for p in paths {
            files.push(self.inspect_external_file(h, p, opts.write_global_seqno)?);
        }
        // Stage copies (or links) under new numbers.
        let mut staged: Vec<u64> = Vec::new();
        let dir = h.table_dir(&self.path, 0).to_path_buf();
        // A copy is written at the family's temperature: the last level's when the files
        // must go there (ingestion behind), else the default write temperature.
        let engine = h.config();
        let copy_temperature =
            if opts.ingest_behind { engine.last_level_temperature } else { engine.default_write_temperature };
        let r = self.stage_files(&dir, &mut files, &mut staged, opts.move_files, copy_temperature);
        let r = r.and_then(|_| self.exclusive_write(|| self.install_ingested(h, opts, &files)));
        for n in &staged {
            self.versions.release_output(*n);
        }
        match &r {
            Ok(()) => {
                if opts.move_files {
                    for f in &files {
                        let _ = self.fs.remove_file(&f.source);
                    }
                }
                self.info_log.log(format_args!(
                    "[{}] Ingested {} external file(s): {}",
                    h.name,
                    files.len(),
                    files.iter().map(|f| format!("#{}", f.number)).collect::<Vec<_>>().join(" ")
                ));
            }
            // A failed MANIFEST write may still have named the files: the next open
            // removes them if it did not. Otherwise they were never installed.
            Err(e) if e.kind() != ErrorKind::IOError => {
                for n in &staged {
                    let _ = self.fs.remove_file(&filename::table_file(&dir, *n));
                }
            }
            Err(_) => {}
        }
        r
    }

    /// Opens an external file and takes what ingestion needs from it.
    fn inspect_external_file(&self, h: &Arc<CfHandle>, path: &Path, write_seqno: bool) -> Result<Ingested> {
        let name = path.display().to_string();
        let size = self.fs.file_size(path)?;
        let file = self.fs.new_random_access_file(path)?;
        let ropts = TableReaderOptions {
            timestamps_persisted: true,
            icmp: h.icmp.clone(),
            block_cache: None,
            verify_checksums: true,
            file_name: name.clone(),
            cache_key: crate::cache::block_cache::OffsetableCacheKey::unique(),
            statistics: None,
            // RocksDB's ingestion opens the file with the family's value.
            block_protection_bytes_per_key: h.config().block_protection_bytes_per_key,
        };
        // The family's table factory reads the file, as RocksDB's ingestion does (any
        // format: the reader is picked by the file's magic number).
        let open = |file, ropts| {
            crate::table::any::AnyTable::open_for_cf(
                file,
                size,
                ropts,
                crate::key::MAX_SEQUENCE_NUMBER,
                h.config().prefix_extractor.clone(),
                &h.config().table_format,
                crate::table::reader::MetaCachePolicy::default(),
            )
        };
        // First opened as holding no timestamps, whose reader accepts the family's
        // comparator name with or without `.u64ts` (RocksDB's reader checks no name: its
        // validation below does); opened again as it is found to be.
        let ucmp = h.icmp.user_comparator().clone();
        let mut table =
            match open(file.clone(), TableReaderOptions { timestamps_persisted: false, ..ropts.clone() }) {
                Ok(t) => t,
                // A file of an unrelated comparator: RocksDB's reader checks no name, its
                // SanityCheckTableProperties refuses it with ValidateUserDefinedTimestampsOptions'
                // words ("<family's>: does not match existing comparator <file's>"), logged.
                Err(e) => {
                    let Some(theirs) = crate::table::reader::mismatched_table_comparator(&e) else {
                        return Err(e);
                    };
                    let persist = h.config().persist_user_defined_timestamps;
                    let Err(e) = super::timestamps::validate_udt_options(&*ucmp, theirs, persist, true)
                    else {
                        return Err(e);
                    };
                    self.info_log.log_at(
                        crate::config::LogLevel::Warn,
                        format_args!(
                            "ValidateUserDefinedTimestampsOptions failed for external file {name}: {e}"
                        ),
                    );
                    return Err(e);
                }
            };
        // RocksDB's SanityCheckTableProperties: the file's comparator and timestamps flag
        // against the family's (`ValidateUserDefinedTimestampsOptions`, its texts); a file
        // without timestamps going into a family that gained them is read with the minimum
        // one, as is one written with `persist_user_defined_timestamps=false`.
        let mut ts_persisted =
            table.properties().raw_u64(crate::table::properties::names::USER_DEFINED_TIMESTAMPS_PERSISTED)
                != Some(0);
        let checked = super::timestamps::validate_udt_options(
            &*ucmp,
            &table.properties().comparator_name,
            h.config().persist_user_defined_timestamps,
            ts_persisted,
        );
        match checked {
            Ok(mark_no_udt) => ts_persisted &= !mark_no_udt,
            Err(e) => {
                self.info_log.log_at(
                    crate::config::LogLevel::Warn,
                    format_args!("ValidateUserDefinedTimestampsOptions failed for external file {name}: {e}"),
                );
                return Err(e);
            }
        }
        let ts_sz = h.icmp.timestamp_size();
        if ts_persisted {
            table = open(file, ropts)?;
        }
        let props = table.properties();
        if !props.user_collected.contains_key(names::EXTERNAL_SST_VERSION) {
            return Err(Error::corruption(format!("External file version not found: {name}")));
        }
        // RocksDB's SanityCheckTableProperties: a version 2 file carries a global seqno
        // property; `write_global_seqno` needs where its value lies in the file.
        let version = props.user_collected.get(names::EXTERNAL_SST_VERSION).filter(|v| v.len() == 4);
        let version_2 = version.is_some_and(|v| v.as_slice() == 2u32.to_le_bytes());
        let original_seqno = props
            .user_collected
            .get(names::EXTERNAL_SST_GLOBAL_SEQNO)
            .filter(|v| v.len() == 8)
            .map_or(0, |v| crate::coding::decode_fixed64(v));
        let global_seqno_offset = if write_seqno && version_2 {
            let file = self.fs.new_random_access_file(path)?;
            match crate::table::reader::external_global_seqno_offset(file.as_ref(), size, &name)? {
                Some(o) => Some(o),
                None => return Err(Error::corruption("Was not able to find file global seqno field")),
            }
        } else {
            None
        };
        if props.column_family_id != UNKNOWN_COLUMN_FAMILY
            && props.column_family_id != crate::table::properties::UNKNOWN_COLUMN_FAMILY
            && props.column_family_id != h.id as u64
        {
            return Err(Error::invalid_argument(format!(
                "External file column family id don't match: {name} has {}, {} is {}",
                props.column_family_id, h.name, h.id
            )));
        }
        let cmp = h.icmp.clone();
        let mut bounds: Option<Bounds> = None;
        let mut widen = |k: &[u8], t: ValueType, sentinel: bool| {
            match &mut bounds {
                None => bounds = Some((k.to_vec(), t, k.to_vec(), t, sentinel)),
                Some((lo, lt, hi, ht, hs)) => {
                    if cmp.compare_user(k, lo) == Ordering::Less {
                        *lo = k.to_vec();
                        *lt = t;
                    }
                    if cmp.compare_user(k, hi) == Ordering::Greater {
                        *hi = k.to_vec();
                        *ht = t;
                        *hs = sentinel;
                    }
                }
            };
        };
        let mut it = table.iter(false);
        for first in [true, false] {
            if first {
                it.seek_to_first();
            } else {
                it.seek_to_last();
            }
            if it.valid() {
                let p = parse_internal_key(it.key())?;
                if p.sequence != 0 {
                    return Err(Error::corruption(format!(
                        "{name}: external file key with sequence number {} (must be 0)",
                        p.sequence
                    )));
                }
                widen(p.user_key, p.value_type, false);
            }
        }
        it.status()?;
        for (start, end) in table.range_tombstones() {
            widen(user_key(start), ValueType::RangeDeletion, false);
            widen(end, ValueType::RangeDeletion, true);
        }
        let Some((mut smallest, smallest_type, mut largest, largest_type, largest_is_sentinel)) = bounds
        else {
            return Err(Error::invalid_argument(format!("File contain no entries: {name}")));
        };
        if ts_sz > 0 && !ts_persisted {
            // RocksDB pads a range deletion's boundary with the maximum timestamp, any other
            // with the minimum (the reader gave the minimum).
            for (k, range_del) in [
                (&mut smallest, smallest_type == ValueType::RangeDeletion),
                (&mut largest, largest_is_sentinel || largest_type == ValueType::RangeDeletion),
            ] {
                if range_del {
                    let n = k.len().saturating_sub(ts_sz);
                    k[n..].fill(0xff);
                }
            }
        }
        Ok(Ingested {
            source: path.to_path_buf(),
            number: 0,
            size,
            smallest,
            largest,
            smallest_type,
            largest_is_sentinel,
            largest_type,
            file_creation_time: props.file_creation_time,
            creation_time: props.creation_time,
            tail_size: props.tail_size(size),
            unique_id: crate::table::unique_id::internal_unique_id(
                &props.db_id,
                &props.db_session_id,
                props.orig_file_number,
                false,
            ),
            temperature: 0,
            file_checksum: Vec::new(),
            file_checksum_func_name: crate::file_checksum::UNKNOWN_FUNC_NAME.to_string(),
            ts_persisted,
            original_seqno,
            global_seqno_offset,
        })
    }

    /// Copies (or links) the files into `dir`, the family's first table path.
    fn stage_files(
        &self,
        dir: &std::path::Path,
        files: &mut [Ingested],
        staged: &mut Vec<u64>,
        move_files: bool,
        copy_temperature: u8,
    ) -> Result<()> {
        for f in files.iter_mut() {
            let number = self.versions.new_output_number();
            staged.push(number);
            f.number = number;
            let dst = filename::table_file(dir, number);
            let mut linked = false;
            if move_files {
                match self.fs.link_file(&f.source, &dst) {
                    // The writer of the file may not have synced it.
                    Ok(()) => {
                        self.fs.sync_file(&dst)?;
                        linked = true;
                    }
                    Err(e) if e.kind() == ErrorKind::NotSupported => {}
                    Err(e) => return Err(e),
                }
            }
            if !linked {
                crate::fs::copy_file(&*self.fs, &f.source, &dst, Some(f.size))?;
                f.temperature = copy_temperature;
            }
        }
        self.fs.sync_dir(dir)?;
        // RocksDB's Prepare, after the directory sync: with a checksum factory, each file
        // as the database holds it is read whole for its checksum (Shale never rewrites an
        // ingested file: its global sequence number is kept in the MANIFEST only).
        if self.config.file_checksum_crc32c {
            for f in files.iter_mut() {
                let path = filename::table_file(dir, f.number);
                f.file_checksum = crate::file_checksum::file_checksum_of(&*self.fs, &path, 0)?;
                f.file_checksum_func_name = crate::file_checksum::CRC32C_FUNC_NAME.to_string();
            }
        }
        Ok(())
    }

    /// Step 2 and 3 of the module comment; the caller holds write leadership.
    fn install_ingested(&self, h: &Arc<CfHandle>, opts: &IngestSettings, files: &[Ingested]) -> Result<()> {
        let id = h.id;
        let cmp = &h.icmp;
        let with_ts = cmp.timestamp_size() > 0;
        // Keys are compared without their timestamps (RocksDB's `sstableKeyCompare`): a file
        // holding another version of a level's boundary key overlaps that level.
        let overlap = |a: &Ingested, lo: &[u8], hi: &[u8]| {
            cmp.compare_user_without_ts(&a.smallest, hi) != Ordering::Greater
                && cmp.compare_user_without_ts(lo, &a.largest) != Ordering::Greater
        };
        let mut sorted: Vec<&Ingested> = files.iter().collect();
        sorted.sort_by(|a, b| cmp.compare_user_without_ts(&a.smallest, &b.smallest));
        let files_overlap = sorted.windows(2).any(|w| overlap(w[1], &w[0].smallest, &w[0].largest));
        let behind = opts.ingest_behind;
        if behind && files_overlap {
            return Err(Error::not_supported(
                "Files with overlapping ranges cannot be ingested with ingestion behind mode.",
            ));
        }
        if with_ts && files_overlap {
            return Err(Error::not_supported(
                "Files with overlapping ranges cannot be ingested to column family with user-defined timestamp enabled.",
            ));
        }
        // What each file's global seqno property holds (`write_global_seqno` rewrites it).
        let mut written: Vec<u64> = files.iter().map(|f| f.original_seqno).collect();
        let mut checksums: Vec<Option<Vec<u8>>> = vec![None; files.len()];
        let mut st = self.lock_state();
        let (placements, need_seqno, last) = loop {
            // Memtables that overlap the files are flushed first.
            'check: loop {
                if let Some(e) = st.errors.stop_error() {
                    return Err(e);
                }
                let cf =
                    st.cfs.get(&id).ok_or_else(|| Error::invalid_argument("Column family was dropped"))?;
                let mem_overlaps = files.iter().any(|f| self.memtable_overlaps(h, &cf.mem, f));
                let imm_overlaps =
                    cf.imm.iter().any(|(m, _)| files.iter().any(|f| self.memtable_overlaps(h, m, f)));
                if !mem_overlaps && !imm_overlaps {
                    if !with_ts {
                        break;
                    }
                    // With timestamps a level overlaps a file only where it holds a key of the
                    // file's range (RocksDB's `OverlapWithLevelIterator`): the tables whose range
                    // overlaps are read without the DB mutex (the Version held keeps them), and
                    // the check starts again if the Version changed meanwhile.
                    let v = cf.current.clone();
                    let mut candidates: Vec<(usize, Arc<FileMetaData>)> = Vec::new();
                    for (i, f) in files.iter().enumerate() {
                        for l in 0..v.num_levels() {
                            for m in v.files(l) {
                                if overlap(f, user_key(&m.smallest), user_key(&m.largest)) {
                                    candidates.push((i, m.clone()));
                                }
                            }
                        }
                    }
                    if candidates.is_empty() {
                        break;
                    }
                    let holds = super::unlocked(&mut st, || self.tables_hold_keys_of(h, files, &candidates))?;
                    if holds {
                        return Err(Error::invalid_argument(OVERLAP_WITH_DB_TS));
                    }
                    let unchanged = st.cfs.get(&id).is_some_and(|c| Arc::ptr_eq(&c.current, &v));
                    if unchanged {
                        break 'check;
                    }
                    continue 'check;
                }
                if with_ts {
                    return Err(Error::invalid_argument(
                        "Column family enables user-defined timestamps, please make sure the key range (without timestamp) of external file does not overlap with key range in the memtables.",
                    ));
                }
                if !opts.allow_blocking_flush {
                    return Err(Error::invalid_argument("External file requires flush"));
                }
                if mem_overlaps {
                    self.switch_memtables(&mut st, &[id], false)?;
                }
                let target = st.cfs.get(&id).map_or(0, |c| c.mems_switched);
                while st.cfs.get(&id).is_some_and(|c| c.mems_flushed < target) {
                    if let Some(e) = st.errors.stop_error() {
                        return Err(e);
                    }
                    if self.shutting_down.load(std::sync::atomic::Ordering::Acquire) {
                        return Err(Error::shutdown("Database shutdown"));
                    }
                    self.done_cv.wait_for(&mut st, std::time::Duration::from_millis(100));
                }
            }
            let cf = st.cfs.get(&id).ok_or_else(|| Error::invalid_argument("Column family was dropped"))?;
            let v = cf.current.clone();
            let level_overlaps = |f: &Ingested, level: usize| {
                v.files(level).iter().any(|m| overlap(f, user_key(&m.smallest), user_key(&m.largest)))
            };
            let compaction_overlaps = |f: &Ingested, level: usize| {
                cf.running.iter().any(|r| r.output_level == level && overlap(f, &r.smallest, &r.largest))
            };
            // With timestamps the levels' keys were checked above; a running compaction's
            // output range still counts by its range, as RocksDB's `RangeOverlapWithCompaction`.
            let overlap_with_db = files.iter().any(|f| {
                (0..v.num_levels()).any(|l| (!with_ts && level_overlaps(f, l)) || compaction_overlaps(f, l))
            });
            if with_ts && overlap_with_db {
                return Err(Error::invalid_argument(OVERLAP_WITH_DB_TS));
            }
            if behind {
                // RocksDB's CheckLevelForIngestedBehindFile: each file fits in the last level, and
                // no level above holds a file at sequence number 0 (it would sort below them).
                let last = v.num_levels() - 1;
                if files.iter().any(|f| level_overlaps(f, last) || compaction_overlaps(f, last)) {
                    return Err(Error::invalid_argument(
                        "Can't ingest_behind file as it doesn't fit at the last level!",
                    ));
                }
                if (0..last).any(|l| v.files(l).iter().any(|m| m.smallest_seqno == 0)) {
                    return Err(Error::invalid_argument(
                        "Can't ingest_behind file as despite cf_allow_ingest_behind=true there are files with 0 seqno in database at upper levels!",
                    ));
                }
            }
            let snapshots = opts.snapshot_consistency && !self.snapshot_list()?.is_empty();
            let last = self.versions.last_sequence();
            let need_seqno = !behind && (overlap_with_db || snapshots || files_overlap);
            if need_seqno && !opts.allow_global_seqno {
                return Err(Error::invalid_argument("Global seqno is required, but disabled"));
            }
            let placements: Vec<(usize, u64)> = files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    if behind {
                        (v.num_levels() - 1, 0)
                    } else if files_overlap {
                        (0, last + 1 + i as u64)
                    } else {
                        let mut target = 0;
                        for l in 0..v.num_levels() {
                            if level_overlaps(f, l) || compaction_overlaps(f, l) {
                                break;
                            }
                            target = l;
                        }
                        (target, if need_seqno { last + 1 } else { 0 })
                    }
                })
                .collect();

            // `write_global_seqno` (RocksDB's `AssignGlobalSeqnoForIngestedFile`): each file
            // whose property differs from its number gets it written in place and synced,
            // with the DB mutex released (write leadership keeps the sequence and the
            // memtables still); the plan is made again if the family's Version or its
            // snapshots changed meanwhile.
            let todo: Vec<(usize, u64)> = placements
                .iter()
                .enumerate()
                .filter(|(i, (_, seqno))| opts.write_global_seqno && *seqno != written[*i])
                .map(|(i, (_, seqno))| (i, *seqno))
                .collect();
            if todo.is_empty() {
                break (placements, need_seqno, last);
            }
            let had_snapshots = snapshots;
            super::unlocked(&mut st, || self.write_global_seqnos(h, files, &todo, &mut checksums))?;
            for &(i, seqno) in &todo {
                written[i] = seqno;
            }
            let same_version = st.cfs.get(&id).is_some_and(|c| Arc::ptr_eq(&c.current, &v));
            let same_snapshots =
                (opts.snapshot_consistency && !self.snapshot_list()?.is_empty()) == had_snapshots;
            if same_version && same_snapshots {
                break (placements, need_seqno, last);
            }
        };
        let mut edit = VersionEdit { column_family: id, ..Default::default() };
        for (i, f) in files.iter().enumerate() {
            let (level, seqno) = placements[i];
            let largest = if f.largest_is_sentinel {
                make_internal_key(&f.largest, MAX_SEQUENCE_NUMBER, ValueType::RangeDeletion)
            } else {
                make_internal_key(&f.largest, seqno, f.largest_type)
            };
            edit.new_files.push((
                level as u32,
                FileMetaData {
                    number: f.number,
                    file_size: f.size,
                    smallest: make_internal_key(&f.smallest, seqno, f.smallest_type),
                    largest,
                    smallest_seqno: seqno,
                    largest_seqno: seqno,
                    file_creation_time: f.file_creation_time,
                    oldest_ancester_time: f.creation_time,
                    file_checksum: checksums[i].clone().unwrap_or_else(|| f.file_checksum.clone()),
                    file_checksum_func_name: f.file_checksum_func_name.clone(),
                    tail_size: f.tail_size,
                    unique_id: f.unique_id,
                    // RocksDB's kReservedEpochNumberForFileIngestedBehind.
                    epoch_number: if behind { 1 } else { 0 },
                    temperature: f.temperature,
                    user_defined_timestamps_persisted: f.ts_persisted,
                    stripped_ts_size: if f.ts_persisted { 0 } else { h.icmp.timestamp_size() },
                    ..Default::default()
                },
            ));
        }
        if need_seqno {
            let n = if files_overlap { files.len() as u64 } else { 1 };
            self.versions.set_last_sequence(last + n);
            // Range conversions by iterators reading below the assigned sequence are
            // refused from now on (RocksDB's `BumpIngestSeqnoBarrier`).
            if let Some(c) = st.cfs.get(&id) {
                c.mem.bump_ingest_barrier(last + n);
            }
        }
        self.log_and_apply(&mut st, vec![edit], |_| {})?;
        self.purge_after_ingest(&mut st);
        Ok(())
    }

    /// `write_global_seqno`: writes each number of `todo` (file index, sequence number) into
    /// that file's global seqno property as the database holds it, in place, and syncs it
    /// (RocksDB's `AssignGlobalSeqnoForIngestedFile`); with the CRC32C checksum factory the
    /// file is then read again for the MANIFEST's checksum (`GenerateChecksumForIngestedFile`).
    /// A file system without random writes leaves the file as it is, as RocksDB's does.
    /// Called without the DB mutex.
    fn write_global_seqnos(
        &self,
        h: &Arc<CfHandle>,
        files: &[Ingested],
        todo: &[(usize, u64)],
        checksums: &mut [Option<Vec<u8>>],
    ) -> Result<()> {
        let dir = h.table_dir(&self.path, 0);
        for &(i, seqno) in todo {
            let Some(f) = files.get(i) else { continue };
            let Some(offset) = f.global_seqno_offset else {
                return Err(Error::invalid_argument(
                    "Trying to set global seqno for a file that don't have a global seqno field",
                ));
            };
            let path = filename::table_file(dir, f.number);
            match self.fs.write_at_synced(&path, offset, &seqno.to_le_bytes()) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotSupported => continue,
                Err(e) => {
                    self.info_log.log_at(
                        crate::config::LogLevel::Warn,
                        format_args!("Failed to write global seqno to {}: {e}", path.display()),
                    );
                    return Err(e);
                }
            }
            if self.config.file_checksum_crc32c {
                checksums[i] = Some(crate::file_checksum::file_checksum_of(&*self.fs, &path, 0)?);
            }
        }
        Ok(())
    }

    fn purge_after_ingest(&self, st: &mut MutexGuard<'_, DbState>) {
        self.done_cv.notify_all();
        self.purge_obsolete_files(st);
    }

    /// True when one of the `candidates` tables (each with the index of its file in
    /// `files`) holds a key of that file's range, compared without timestamps. Call without
    /// the DB mutex.
    fn tables_hold_keys_of(
        &self,
        h: &CfHandle,
        files: &[Ingested],
        candidates: &[(usize, Arc<FileMetaData>)],
    ) -> Result<bool> {
        let cmp = &h.icmp;
        let max_ts = vec![0xff; cmp.timestamp_size()];
        for (i, t) in candidates {
            let Some(f) = files.get(*i) else { continue };
            let start = [cmp.strip_ts(&f.smallest), &max_ts[..]].concat();
            let e = self.table_cache.get(h, t)?;
            let mut it = e.table.iter(false);
            it.seek(&make_internal_key(&start, MAX_SEQUENCE_NUMBER, crate::key::VALUE_TYPE_FOR_SEEK));
            if it.valid() && cmp.compare_user_without_ts(user_key(it.key()), &f.largest) != Ordering::Greater
            {
                return Ok(true);
            }
            it.status()?;
        }
        Ok(false)
    }

    /// True when memtable `m` holds a key (or range tombstone) within `f`'s range. With
    /// user-defined timestamps keys are compared without them, as RocksDB's
    /// `RangesOverlapWithMemtables` on the file's `start_ukey` (smallest key with the maximum
    /// timestamp) and `limit_ukey` (largest with the minimum): a memtable holding any version
    /// of a key the file's range holds overlaps it.
    fn memtable_overlaps(&self, h: &CfHandle, m: &Arc<crate::memtable::MemTable>, f: &Ingested) -> bool {
        if m.is_empty() {
            return false;
        }
        let cmp = &h.icmp;
        let ts_sz = cmp.timestamp_size();
        let start = if ts_sz > 0 {
            [cmp.strip_ts(&f.smallest), &vec![0xff; ts_sz][..]].concat()
        } else {
            f.smallest.clone()
        };
        for (t_start, t_end) in m.range_tombstones() {
            if cmp.compare_user_without_ts(user_key(&t_start), &f.largest) != Ordering::Greater
                && cmp.compare_user(&start, &t_end) == Ordering::Less
            {
                return true;
            }
        }
        let mut it = m.iter();
        it.seek(&make_internal_key(&start, MAX_SEQUENCE_NUMBER, crate::key::VALUE_TYPE_FOR_SEEK));
        it.valid() && cmp.compare_user_without_ts(user_key(it.key()), &f.largest) != Ordering::Greater
    }
}
