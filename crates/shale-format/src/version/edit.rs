//! Version edits: the records of the MANIFEST, in RocksDB 7.8.3's encoding.
//!
//! A record is a sequence of fields, each `tag varint32 | value`, in the order below
//! (the order RocksDB 7.8.3 writes them; a reader accepts any order):
//!
//! ```text
//! tag    name                 value
//! 8193   DbId                 length-prefixed string
//! 1      Comparator           length-prefixed string
//! 2      LogNumber            varint64
//! 9      PrevLogNumber        varint64
//! 3      NextFileNumber       varint64
//! 203    MaxColumnFamily      varint32
//! 10     MinLogNumberToKeep   varint64
//! 4      LastSequence         varint64
//! 5      CompactCursor        level varint32 | length-prefixed internal key      (repeated)
//! 6      DeletedFile          level varint32 | file number varint64            (repeated)
//! 103    NewFile4             see below                                         (repeated)
//! 8199   WalAddition2         length-prefixed { number varint64 | [2 | synced size varint64] | 1 }
//! 8200   WalDeletion2         length-prefixed { number varint64 }
//! 200    ColumnFamily         varint32 (only when not 0)
//! 201    ColumnFamilyAdd      length-prefixed name
//! 202    ColumnFamilyDrop     (no value)
//! 300    InAtomicGroup        remaining entries varint32
//! 8198   FullHistoryTsLow     length-prefixed bytes
//! 8201   PersistUserDefinedTimestamps  length-prefixed 1 byte (RocksDB 8.x+; kept, written back)
//! 8203   LastCompactedManifestFileSize length-prefixed varint64 (RocksDB 10.x+; kept, written back)
//! ```
//!
//! Read but never written: NewFile 7, NewFile2 100, NewFile3 102 (older file records),
//! WalAddition 8196 and WalDeletion 8197 (unprefixed forms). SubcompactionProgress 8202
//! (RocksDB 11's resumable compaction) is checked for its length and dropped: it describes
//! output files of a compaction that Shale does not resume. Any other tag with bit 1 << 13
//! set is followed by a varint32 length and is skipped; any other tag without it is
//! Corruption.
//!
//! Blob files (BlobDB), written after the NewFile4 records (8194 and 8195 are their old
//! tags, read only):
//!
//! ```text
//! 400  BlobFileAddition  number varint64 | total blob count varint64 | total blob bytes varint64
//!                        | checksum method (length-prefixed) | checksum value (length-prefixed)
//!                        | custom fields { tag varint32 | length-prefixed }* | 0 (end) varint32
//! 401  BlobFileGarbage   number varint64 | garbage blob count varint64 | garbage blob bytes varint64
//!                        | custom fields | 0 (end) varint32
//! ```
//! A custom field tag with bit 1 << 6 set is Corruption; others are skipped.
//!
//! NewFile4:
//!
//! ```text
//! level varint32 | number varint64 | file size varint64 | smallest (length-prefixed internal key)
//! | largest (length-prefixed internal key) | smallest seqno varint64 | largest seqno varint64
//! | custom fields: { field tag varint32 | length-prefixed value }*  | 1 (terminate) varint32
//!
//! field tag  value (inside the length prefix)          written
//! 5          oldest ancester time, varint64            always
//! 6          file creation time, varint64              always
//! 13         epoch number, varint64                    != 0 (RocksDB 8.x+ writes it always)
//! 7          file checksum, raw bytes                  always
//! 8          checksum function name                    always ("Unknown" when none)
//! 65         path id, 1 byte                           path id != 0
//! 9          temperature, 1 byte                       temperature != 0
//! 2          need compaction, 1 byte = 1               marked for compaction
//! 3          min log number to keep, fixed64           first file of an edit that has tag 10
//! 4          oldest blob file number, varint64         != 0
//! 12         unique id, fixed64 | fixed64              id != (0, 0)
//! 14         compensated range-deletion size, varint64 != 0
//! 15         tail size, varint64                       != 0
//! 16         user-defined timestamps persisted, 1 byte = 0   when false
//! 10, 11     min / max timestamp, raw bytes            non-empty
//! 17         file open metadata, raw bytes             non-empty
//! ```
//! Fields 13 to 17 come from RocksDB 8.x to 11.x; Shale keeps them with the file and writes
//! them back, so RocksDB reopens a MANIFEST that Shale rewrote with the same metadata.
//! An unknown field tag with bit 1 << 6 set is Corruption; other unknown fields are skipped.

use crate::coding::{put_fixed64, put_length_prefixed_slice, put_varint32, put_varint64};
use crate::key::MAX_SEQUENCE_NUMBER;

pub const TAG_COMPARATOR: u32 = 1;
pub const TAG_LOG_NUMBER: u32 = 2;
pub const TAG_NEXT_FILE_NUMBER: u32 = 3;
pub const TAG_LAST_SEQUENCE: u32 = 4;
pub const TAG_COMPACT_CURSOR: u32 = 5;
pub const TAG_DELETED_FILE: u32 = 6;
pub const TAG_NEW_FILE: u32 = 7;
pub const TAG_PREV_LOG_NUMBER: u32 = 9;
pub const TAG_MIN_LOG_NUMBER_TO_KEEP: u32 = 10;
pub const TAG_NEW_FILE2: u32 = 100;
pub const TAG_NEW_FILE3: u32 = 102;
pub const TAG_NEW_FILE4: u32 = 103;
pub const TAG_COLUMN_FAMILY: u32 = 200;
pub const TAG_COLUMN_FAMILY_ADD: u32 = 201;
pub const TAG_COLUMN_FAMILY_DROP: u32 = 202;
pub const TAG_MAX_COLUMN_FAMILY: u32 = 203;
pub const TAG_IN_ATOMIC_GROUP: u32 = 300;
pub const TAG_BLOB_FILE_ADDITION: u32 = 400;
pub const TAG_BLOB_FILE_GARBAGE: u32 = 401;
/// Tags with this bit set may be skipped by a reader that does not know them.
pub const TAG_SAFE_IGNORE_MASK: u32 = 1 << 13;
pub const TAG_DB_ID: u32 = TAG_SAFE_IGNORE_MASK + 1;
pub const TAG_BLOB_FILE_ADDITION_OLD: u32 = TAG_SAFE_IGNORE_MASK + 2;
pub const TAG_BLOB_FILE_GARBAGE_OLD: u32 = TAG_SAFE_IGNORE_MASK + 3;
pub const TAG_WAL_ADDITION: u32 = TAG_SAFE_IGNORE_MASK + 4;
pub const TAG_WAL_DELETION: u32 = TAG_SAFE_IGNORE_MASK + 5;
pub const TAG_FULL_HISTORY_TS_LOW: u32 = TAG_SAFE_IGNORE_MASK + 6;
pub const TAG_WAL_ADDITION2: u32 = TAG_SAFE_IGNORE_MASK + 7;
pub const TAG_WAL_DELETION2: u32 = TAG_SAFE_IGNORE_MASK + 8;
pub const TAG_PERSIST_USER_DEFINED_TIMESTAMPS: u32 = TAG_SAFE_IGNORE_MASK + 9;
pub const TAG_SUBCOMPACTION_PROGRESS: u32 = TAG_SAFE_IGNORE_MASK + 10;
pub const TAG_LAST_COMPACTED_MANIFEST_FILE_SIZE: u32 = TAG_SAFE_IGNORE_MASK + 11;

pub const FIELD_TERMINATE: u32 = 1;
pub const FIELD_NEED_COMPACTION: u32 = 2;
pub const FIELD_MIN_LOG_NUMBER_TO_KEEP_HACK: u32 = 3;
pub const FIELD_OLDEST_BLOB_FILE_NUMBER: u32 = 4;
pub const FIELD_OLDEST_ANCESTER_TIME: u32 = 5;
pub const FIELD_FILE_CREATION_TIME: u32 = 6;
pub const FIELD_FILE_CHECKSUM: u32 = 7;
pub const FIELD_FILE_CHECKSUM_FUNC_NAME: u32 = 8;
pub const FIELD_TEMPERATURE: u32 = 9;
pub const FIELD_MIN_TIMESTAMP: u32 = 10;
pub const FIELD_MAX_TIMESTAMP: u32 = 11;
pub const FIELD_UNIQUE_ID: u32 = 12;
pub const FIELD_EPOCH_NUMBER: u32 = 13;
pub const FIELD_COMPENSATED_RANGE_DELETION_SIZE: u32 = 14;
pub const FIELD_TAIL_SIZE: u32 = 15;
pub const FIELD_USER_DEFINED_TIMESTAMPS_PERSISTED: u32 = 16;
pub const FIELD_FILE_OPEN_METADATA: u32 = 17;
/// Custom fields with this bit set must be understood, or the record is refused.
pub const FIELD_NON_SAFE_IGNORE_MASK: u32 = 1 << 6;
pub const FIELD_PATH_ID: u32 = FIELD_NON_SAFE_IGNORE_MASK + 1;

/// The checksum function name RocksDB records for a file without a checksum.
pub const UNKNOWN_CHECKSUM_FUNC_NAME: &str = "Unknown";
/// The highest temperature RocksDB 11 knows (kIce; 7.8.3 stopped at kCold 0x0C); higher
/// values read as unknown (0).
pub(super) const MAX_KNOWN_TEMPERATURE: u8 = 0x10;
/// Path ids above this are refused, as RocksDB does.
pub(super) const MAX_PATH_ID: u32 = 3;

/// What the MANIFEST records about one table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMetaData {
    pub number: u64,
    pub path_id: u32,
    pub file_size: u64,
    /// Smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// Largest internal key in the file.
    pub largest: Vec<u8>,
    pub smallest_seqno: u64,
    pub largest_seqno: u64,
    pub marked_for_compaction: bool,
    /// 0 = none (BlobDB only).
    pub oldest_blob_file_number: u64,
    pub oldest_ancester_time: u64,
    pub file_creation_time: u64,
    pub file_checksum: Vec<u8>,
    pub file_checksum_func_name: String,
    /// RocksDB's `Temperature`: 0 unknown, 4 hot, 8 warm, 10 cool, 12 cold, 16 ice.
    pub temperature: u8,
    /// The SST's internal unique id, when known.
    pub unique_id: Option<[u64; 2]>,
    /// RocksDB 8+'s order of files by age (0 = unknown: RocksDB then derives it).
    pub epoch_number: u64,
    /// Extra size RocksDB's compaction picker counts for the file's range deletions.
    pub compensated_range_deletion_size: u64,
    /// Bytes after the data blocks (RocksDB 8+ prefetches them at open).
    pub tail_size: u64,
    /// False when user-defined timestamps were stripped from the file's keys.
    pub user_defined_timestamps_persisted: bool,
    pub min_timestamp: Vec<u8>,
    pub max_timestamp: Vec<u8>,
    /// RocksDB 11's opaque per-file open metadata.
    pub file_open_metadata: Vec<u8>,
    /// The file's open reader, kept here while the database's table cache is unbounded
    /// (`max_open_files = -1`), as RocksDB's `FileDescriptor::pinned_reader`. Not recorded.
    pub pinned_reader: PinnedReader,
    /// The timestamp size the MANIFEST leaves out of `smallest` and `largest` (RocksDB's
    /// `EncodeFileBoundaries`): a file of a family with timestamps whose keys hold none
    /// (`user_defined_timestamps_persisted` false) keeps its boundaries here with the
    /// minimum timestamp (the maximum one on a range tombstone's end sentinel) and records
    /// them without. Set by the engine, which knows the family's comparator; not recorded.
    pub stripped_ts_size: usize,
    /// Sampled read counts (RocksDB's `FileSampledStats`). Not recorded.
    pub sampled: FileSampledStats,
    /// The counts of the table's properties the compaction picker weighs, loaded once,
    /// outside the DB mutex, when a Version holding the file is built (RocksDB's
    /// `num_entries` ... `raw_value_size` with `init_stats_from_file`). Not recorded.
    pub table_stats: TableStatsSlot,
}

/// The counts of a table's properties RocksDB keeps in its `FileMetaData`
/// (`MaybeInitializeFileMetaData`), and its `rocksdb.newest.key.time` (0: unknown), which
/// FIFO's temperature change reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableStats {
    pub num_entries: u64,
    pub num_deletions: u64,
    pub num_range_deletions: u64,
    pub raw_key_size: u64,
    pub raw_value_size: u64,
    pub newest_key_time: u64,
}

/// A file's [`TableStats`], set once (RocksDB's `init_stats_from_file`): empty until the
/// engine tried; `Some(None)` when the table's properties could not be read (the file then
/// counts by its size alone, as in RocksDB). A clone copies it (as RocksDB's copy of the
/// metadata does: the table is the same); like [`PinnedReader`] it is no part of what the
/// MANIFEST records and compares equal to any other.
#[derive(Default)]
pub struct TableStatsSlot(std::sync::OnceLock<Option<TableStats>>);

impl TableStatsSlot {
    /// `None`: not tried yet; `Some(None)`: tried, unknown.
    #[inline]
    pub fn get(&self) -> Option<Option<TableStats>> {
        self.0.get().copied()
    }

    /// Sets the stats unless they were set already.
    pub fn set(&self, stats: Option<TableStats>) {
        let _ = self.0.set(stats);
    }
}

impl Clone for TableStatsSlot {
    fn clone(&self) -> Self {
        let slot = TableStatsSlot::default();
        if let Some(s) = self.get() {
            slot.set(s);
        }
        slot
    }
}

impl PartialEq for TableStatsSlot {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for TableStatsSlot {}

impl std::fmt::Debug for TableStatsSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TableStatsSlot({:?})", self.get())
    }
}

/// RocksDB's `FileSampledStats`: the reads a file served, estimated by sampling, that
/// `read_triggered_compaction_threshold` weighs against the file's size. Counted only
/// while that option is on (the read path skips it otherwise). A clone copies the counts
/// (as RocksDB's copy does); like [`PinnedReader`] it is no part of what the MANIFEST
/// records and compares equal to any other.
#[derive(Default)]
pub struct FileSampledStats {
    /// Sampled reads where the file gave no final value: not found, a deletion, or merge
    /// operands (RocksDB's `num_collapsible_entry_reads_sampled`).
    pub collapsible_reads: std::sync::atomic::AtomicU64,
}

impl FileSampledStats {
    /// Adds `n` estimated collapsible reads.
    #[inline]
    pub fn add_collapsible(&self, n: u64) {
        self.collapsible_reads.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// The estimated collapsible reads so far.
    #[inline]
    pub fn collapsible(&self) -> u64 {
        self.collapsible_reads.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Clone for FileSampledStats {
    fn clone(&self) -> Self {
        FileSampledStats { collapsible_reads: std::sync::atomic::AtomicU64::new(self.collapsible()) }
    }
}

impl PartialEq for FileSampledStats {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for FileSampledStats {}

impl std::fmt::Debug for FileSampledStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileSampledStats({})", self.collapsible())
    }
}

/// A slot for an open table reader, set once (RocksDB's `FileDescriptor::pinned_reader`):
/// a point read takes the reader from the file's metadata by reference, without a table
/// cache lookup and without touching a reference count shared by every reader thread.
/// The reader's type belongs to the crate that opens tables, so it is stored as `Any`.
/// The slot is no part of what the MANIFEST records: it compares equal to any other, and
/// a clone starts empty (a copy of the metadata opens or finds its reader again).
#[derive(Default)]
pub struct PinnedReader(std::sync::OnceLock<std::sync::Arc<dyn std::any::Any + Send + Sync>>);

impl PinnedReader {
    /// The pinned reader, if one was pinned and it is a `T`.
    #[inline]
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.get()?.downcast_ref::<T>()
    }

    /// Whether a reader is pinned.
    #[inline]
    pub fn is_pinned(&self) -> bool {
        self.0.get().is_some()
    }

    /// Pins `reader` unless a reader is pinned already (then that one stays).
    pub fn pin(&self, reader: std::sync::Arc<dyn std::any::Any + Send + Sync>) {
        let _ = self.0.set(reader);
    }
}

impl Clone for PinnedReader {
    fn clone(&self) -> Self {
        PinnedReader::default()
    }
}

impl PartialEq for PinnedReader {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PinnedReader {}

impl std::fmt::Debug for PinnedReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "PinnedReader(pinned)" } else { "PinnedReader(none)" })
    }
}

impl Default for FileMetaData {
    fn default() -> Self {
        FileMetaData {
            number: 0,
            path_id: 0,
            file_size: 0,
            smallest: Vec::new(),
            largest: Vec::new(),
            smallest_seqno: MAX_SEQUENCE_NUMBER,
            largest_seqno: 0,
            marked_for_compaction: false,
            oldest_blob_file_number: 0,
            oldest_ancester_time: 0,
            file_creation_time: 0,
            file_checksum: Vec::new(),
            file_checksum_func_name: UNKNOWN_CHECKSUM_FUNC_NAME.to_string(),
            temperature: 0,
            unique_id: None,
            epoch_number: 0,
            compensated_range_deletion_size: 0,
            tail_size: 0,
            user_defined_timestamps_persisted: true,
            min_timestamp: Vec::new(),
            max_timestamp: Vec::new(),
            file_open_metadata: Vec::new(),
            pinned_reader: PinnedReader::default(),
            stripped_ts_size: 0,
            sampled: FileSampledStats::default(),
            table_stats: TableStatsSlot::default(),
        }
    }
}

/// A new blob file (RocksDB's `BlobFileAddition`, tag 400).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlobFileAddition {
    pub number: u64,
    pub total_blob_count: u64,
    /// Record headers, keys and (stored) values of all its blobs.
    pub total_blob_bytes: u64,
    pub checksum_method: Vec<u8>,
    pub checksum_value: Vec<u8>,
}

/// Blobs of a blob file no longer referenced (RocksDB's `BlobFileGarbage`, tag 401);
/// counts add up over edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileGarbage {
    pub number: u64,
    pub garbage_blob_count: u64,
    pub garbage_blob_bytes: u64,
}

/// A WAL recorded as live (RocksDB's `WalAddition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalAddition {
    pub number: u64,
    pub synced_size: Option<u64>,
}

/// One change to the state of the database, as stored in one MANIFEST record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    pub comparator: Option<String>,
    pub log_number: Option<u64>,
    pub prev_log_number: Option<u64>,
    pub next_file_number: Option<u64>,
    pub last_sequence: Option<u64>,
    pub max_column_family: Option<u32>,
    pub min_log_number_to_keep: Option<u64>,
    pub column_family: u32,
    pub column_family_add: Option<String>,
    pub is_column_family_drop: bool,
    /// (level, file number); written sorted and without duplicates, as RocksDB's set is.
    pub deleted_files: Vec<(u32, u64)>,
    pub new_files: Vec<(u32, FileMetaData)>,
    pub db_id: Option<String>,
    pub is_in_atomic_group: bool,
    pub remaining_entries: u32,
    /// Round-robin compaction cursors: (level, internal key).
    pub compact_cursors: Vec<(u32, Vec<u8>)>,
    pub wal_additions: Vec<WalAddition>,
    /// WALs below this number are no longer live.
    pub wal_deletion: Option<u64>,
    pub full_history_ts_low: Option<Vec<u8>>,
    /// RocksDB 8+: whether the column family keeps user-defined timestamps in its files.
    pub persist_user_defined_timestamps: Option<bool>,
    /// RocksDB 11: a compaction progress record's payload, as stored (tag 8202; only in a
    /// `COMPACTION_PROGRESS-` file, decoded by `version::progress`).
    pub subcompaction_progress: Option<Vec<u8>>,
    /// RocksDB 10+: the MANIFEST's size after its last rewrite.
    pub last_compacted_manifest_file_size: Option<u64>,
    pub blob_file_additions: Vec<BlobFileAddition>,
    pub blob_file_garbages: Vec<BlobFileGarbage>,
}

fn put_tag_u64(dst: &mut Vec<u8>, tag: u32, v: u64) {
    put_varint32(dst, tag);
    put_varint64(dst, v);
}

fn put_field(dst: &mut Vec<u8>, field: u32, value: &[u8]) {
    put_varint32(dst, field);
    put_length_prefixed_slice(dst, value);
}

fn varint64_bytes(v: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(10);
    put_varint64(&mut b, v);
    b
}

/// True for an internal key RocksDB accepts in a file record: 8+ bytes and a value type
/// that may appear in a table (RocksDB's `IsExtendedValueType`).
pub(super) fn valid_internal_key(k: &[u8]) -> bool {
    k.len() >= 8 && matches!(k[k.len() - 8], 0x0 | 0x1 | 0x2 | 0x7 | 0xF | 0x11 | 0x14 | 0x16)
}

impl VersionEdit {
    /// Appends this edit's encoding, field for field as RocksDB 7.8.3 writes it.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        if let Some(id) = &self.db_id {
            put_varint32(dst, TAG_DB_ID);
            put_length_prefixed_slice(dst, id.as_bytes());
        }
        if let Some(name) = &self.comparator {
            put_varint32(dst, TAG_COMPARATOR);
            put_length_prefixed_slice(dst, name.as_bytes());
        }
        if let Some(v) = self.log_number {
            put_tag_u64(dst, TAG_LOG_NUMBER, v);
        }
        if let Some(v) = self.prev_log_number {
            put_tag_u64(dst, TAG_PREV_LOG_NUMBER, v);
        }
        if let Some(v) = self.next_file_number {
            put_tag_u64(dst, TAG_NEXT_FILE_NUMBER, v);
        }
        if let Some(v) = self.max_column_family {
            put_varint32(dst, TAG_MAX_COLUMN_FAMILY);
            put_varint32(dst, v);
        }
        if let Some(v) = self.min_log_number_to_keep {
            put_tag_u64(dst, TAG_MIN_LOG_NUMBER_TO_KEEP, v);
        }
        if let Some(v) = self.last_sequence {
            put_tag_u64(dst, TAG_LAST_SEQUENCE, v);
        }
        for (level, key) in &self.compact_cursors {
            put_varint32(dst, TAG_COMPACT_CURSOR);
            put_varint32(dst, *level);
            put_length_prefixed_slice(dst, key);
        }
        let mut deleted = self.deleted_files.clone();
        deleted.sort_unstable();
        deleted.dedup();
        for (level, number) in deleted {
            put_varint32(dst, TAG_DELETED_FILE);
            put_varint32(dst, level);
            put_varint64(dst, number);
        }
        let mut min_log_written = false;
        for (level, f) in &self.new_files {
            self.encode_new_file4(dst, *level, f, &mut min_log_written);
        }
        for b in &self.blob_file_additions {
            put_varint32(dst, TAG_BLOB_FILE_ADDITION);
            put_varint64(dst, b.number);
            put_varint64(dst, b.total_blob_count);
            put_varint64(dst, b.total_blob_bytes);
            put_length_prefixed_slice(dst, &b.checksum_method);
            put_length_prefixed_slice(dst, &b.checksum_value);
            put_varint32(dst, 0);
        }
        for g in &self.blob_file_garbages {
            put_varint32(dst, TAG_BLOB_FILE_GARBAGE);
            put_varint64(dst, g.number);
            put_varint64(dst, g.garbage_blob_count);
            put_varint64(dst, g.garbage_blob_bytes);
            put_varint32(dst, 0);
        }
        for wal in &self.wal_additions {
            let mut body = varint64_bytes(wal.number);
            if let Some(size) = wal.synced_size {
                put_tag_u64(&mut body, 2, size);
            }
            put_varint32(&mut body, 1);
            put_varint32(dst, TAG_WAL_ADDITION2);
            put_length_prefixed_slice(dst, &body);
        }
        if let Some(n) = self.wal_deletion {
            put_varint32(dst, TAG_WAL_DELETION2);
            put_length_prefixed_slice(dst, &varint64_bytes(n));
        }
        if self.column_family != 0 {
            put_varint32(dst, TAG_COLUMN_FAMILY);
            put_varint32(dst, self.column_family);
        }
        if let Some(name) = &self.column_family_add {
            put_varint32(dst, TAG_COLUMN_FAMILY_ADD);
            put_length_prefixed_slice(dst, name.as_bytes());
        }
        if self.is_column_family_drop {
            put_varint32(dst, TAG_COLUMN_FAMILY_DROP);
        }
        if self.is_in_atomic_group {
            put_varint32(dst, TAG_IN_ATOMIC_GROUP);
            put_varint32(dst, self.remaining_entries);
        }
        if let Some(ts) = &self.full_history_ts_low {
            put_varint32(dst, TAG_FULL_HISTORY_TS_LOW);
            put_length_prefixed_slice(dst, ts);
        }
        if let Some(p) = self.persist_user_defined_timestamps {
            put_varint32(dst, TAG_PERSIST_USER_DEFINED_TIMESTAMPS);
            put_length_prefixed_slice(dst, &[u8::from(p)]);
        }
        if let Some(p) = &self.subcompaction_progress {
            put_varint32(dst, TAG_SUBCOMPACTION_PROGRESS);
            put_length_prefixed_slice(dst, p);
        }
        if let Some(size) = self.last_compacted_manifest_file_size {
            put_varint32(dst, TAG_LAST_COMPACTED_MANIFEST_FILE_SIZE);
            put_length_prefixed_slice(dst, &varint64_bytes(size));
        }
    }

    fn encode_new_file4(&self, dst: &mut Vec<u8>, level: u32, f: &FileMetaData, min_log_written: &mut bool) {
        put_varint32(dst, TAG_NEW_FILE4);
        put_varint32(dst, level);
        put_varint64(dst, f.number);
        put_varint64(dst, f.file_size);
        if f.stripped_ts_size > 0 && !f.user_defined_timestamps_persisted {
            put_length_prefixed_slice(dst, &crate::key::strip_ikey_ts(&f.smallest, f.stripped_ts_size));
            put_length_prefixed_slice(dst, &crate::key::strip_ikey_ts(&f.largest, f.stripped_ts_size));
        } else {
            put_length_prefixed_slice(dst, &f.smallest);
            put_length_prefixed_slice(dst, &f.largest);
        }
        put_varint64(dst, f.smallest_seqno);
        put_varint64(dst, f.largest_seqno);
        put_field(dst, FIELD_OLDEST_ANCESTER_TIME, &varint64_bytes(f.oldest_ancester_time));
        put_field(dst, FIELD_FILE_CREATION_TIME, &varint64_bytes(f.file_creation_time));
        if f.epoch_number != 0 {
            put_field(dst, FIELD_EPOCH_NUMBER, &varint64_bytes(f.epoch_number));
        }
        put_field(dst, FIELD_FILE_CHECKSUM, &f.file_checksum);
        put_field(dst, FIELD_FILE_CHECKSUM_FUNC_NAME, f.file_checksum_func_name.as_bytes());
        if f.path_id != 0 {
            put_field(dst, FIELD_PATH_ID, &[f.path_id as u8]);
        }
        if f.temperature != 0 {
            put_field(dst, FIELD_TEMPERATURE, &[f.temperature]);
        }
        if f.marked_for_compaction {
            put_field(dst, FIELD_NEED_COMPACTION, &[1]);
        }
        if let (Some(min_log), false) = (self.min_log_number_to_keep, *min_log_written) {
            let mut v = Vec::with_capacity(8);
            put_fixed64(&mut v, min_log);
            put_field(dst, FIELD_MIN_LOG_NUMBER_TO_KEEP_HACK, &v);
            *min_log_written = true;
        }
        if f.oldest_blob_file_number != 0 {
            put_field(dst, FIELD_OLDEST_BLOB_FILE_NUMBER, &varint64_bytes(f.oldest_blob_file_number));
        }
        if let Some(id) = f.unique_id.filter(|id| *id != [0, 0]) {
            let mut v = Vec::with_capacity(16);
            put_fixed64(&mut v, id[0]);
            put_fixed64(&mut v, id[1]);
            put_field(dst, FIELD_UNIQUE_ID, &v);
        }
        if f.compensated_range_deletion_size != 0 {
            put_field(
                dst,
                FIELD_COMPENSATED_RANGE_DELETION_SIZE,
                &varint64_bytes(f.compensated_range_deletion_size),
            );
        }
        if f.tail_size != 0 {
            put_field(dst, FIELD_TAIL_SIZE, &varint64_bytes(f.tail_size));
        }
        if !f.user_defined_timestamps_persisted {
            put_field(dst, FIELD_USER_DEFINED_TIMESTAMPS_PERSISTED, &[0]);
        }
        if !f.min_timestamp.is_empty() {
            put_field(dst, FIELD_MIN_TIMESTAMP, &f.min_timestamp);
        }
        if !f.max_timestamp.is_empty() {
            put_field(dst, FIELD_MAX_TIMESTAMP, &f.max_timestamp);
        }
        if !f.file_open_metadata.is_empty() {
            put_field(dst, FIELD_FILE_OPEN_METADATA, &f.file_open_metadata);
        }
        put_varint32(dst, FIELD_TERMINATE);
    }

    /// Encodes into a fresh buffer.
    pub fn encoded(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode(&mut v);
        v
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
