//! rust-rocksdb's `SstFileWriter`: writes a table for ingestion (`DB::ingest_external_file`),
//! in RocksDB's external-file layout, in the format of the options' table factory as
//! RocksDB's (block-based below; a PlainTable file carries the same two properties; a
//! CuckooTable file neither, as RocksDB's cuckoo builder runs no property collector).
//!
//! ```text
//! a block-based table (docs/sst.md) whose every key carries sequence number 0:
//!   data blocks   user_key | seq 0 | type (Value, Deletion, Merge), strictly ascending user keys
//!   range-del     begin_key | seq 0 | RangeDeletion -> end_key   (any order, begin < end)
//!   properties    the usual ones, with column family "" and id "unknown", plus
//!                 "rocksdb.external_sst_file.version"      = fixed32 2
//!                 "rocksdb.external_sst_file.global_seqno" = fixed64 0
//! ```
//! The sequence number the keys really have is given at ingestion (the global seqno, kept
//! as the file's largest seqno in the MANIFEST; `table/reader.rs` applies it when reading),
//! so the file itself never changes after `finish`. Keys out of comparator order, an
//! inverted range, or `finish` with nothing added give InvalidArgument, as RocksDB's.
//! The table options (block size, compression, filter, format_version) are the `Options`'.
//! With a comparator with user-defined timestamps, keys go in with `put_with_ts` /
//! `delete_with_ts` as `key | ts` (plain `put` is InvalidArgument, as RocksDB's), ordered by
//! that comparator: several versions of a key, newest first (docs/timestamps.md).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::coding::{put_fixed32, put_fixed64};
use crate::error::{Error, Result};
use crate::key::{make_internal_key, InternalKeyComparator, ValueType};
use crate::options::Options;
use crate::table::any::AnyTableBuilder;
use crate::table::builder::TableBuilderOptions;

use crate::table::properties::names::{EXTERNAL_SST_GLOBAL_SEQNO, EXTERNAL_SST_VERSION};

/// RocksDB's `kUnknownColumnFamily` (i32::MAX), the family id of a file written without a
/// column family; RocksDB's ingestion refuses any other id that is not the target's.
pub(crate) const EXTERNAL_FILE_CF_ID: u32 = crate::table::properties::UNKNOWN_COLUMN_FAMILY as u32;

/// The file being written.
struct Open {
    path: PathBuf,
    builder: AnyTableBuilder,
    icmp: InternalKeyComparator,
    last_user_key: Option<Vec<u8>>,
    entries: u64,
}

/// Writes a sorted table file for ingestion, as rust-rocksdb's `SstFileWriter`.
pub struct SstFileWriter<'a> {
    opts: &'a Options,
    // `open` takes `&self` in rust-rocksdb's API.
    open: Mutex<Option<Open>>,
    file_size: u64,
}

/// Table-builder options for an external file written with `o`.
fn builder_options(o: &Options) -> TableBuilderOptions {
    let mut b = TableBuilderOptions::new(InternalKeyComparator::new(o.comparator.clone()));
    b.block_size = o.table.block_size;
    b.block_restart_interval = o.table.block_restart_interval;
    b.index_block_restart_interval = o.table.sanitized_index_block_restart_interval();
    b.index_shortening = o.table.index_shortening;
    b.compression = o.compression.to_table();
    b.compression_opts = o.compression_opts.clone();
    b.builtin_compression_manager = o.builtin_compression_manager;
    b.filter_bits_per_key = o.table.bloom_bits_per_key;
    b.filter_rounding = o.table.optimize_filters_for_memory.then(|| o.table.filter_rounding.clone());
    b.filter_ribbon_before_level = o.table.ribbon_bloom_before_level;
    b.filter_internal = o.table.filter_internal;
    b.whole_key_filtering = o.table.whole_key_filtering;
    b.partitioned_index = o.table.partitioned_index;
    b.hash_index = o.table.hash_index;
    b.first_key_index = o.table.first_key_index;
    // RocksDB turns partitioned filters off without a partitioned index.
    b.partition_filters = o.table.partitioned_index && o.table.partition_filters;
    b.metadata_block_size = o.table.metadata_block_size;
    b.decouple_partitioned_filters = o.table.decouple_partitioned_filters;
    b.checksum = o.table.checksum;
    o.table.apply_layout(&mut b);
    b.sample_for_compression = o.sample_for_compression;
    b.prefix_extractor = o.prefix_extractor.clone();
    b.format_version = o.table.format_version;
    b.column_family_id = EXTERNAL_FILE_CF_ID;
    if o.table.data_block_index_type == crate::DataBlockIndexType::BinaryAndHash {
        b.data_block_hash_ratio = Some(o.table.data_block_hash_ratio);
    }
    b.column_family_name = String::new();
    // `persist_user_defined_timestamps=false`: keys written without their timestamps and
    // "rocksdb.user.defined.timestamps.persisted" = 0, as RocksDB's table builder does
    // with the writer's options.
    b.strip_timestamps = !o.persist_user_defined_timestamps;
    // RocksDB's SstFileWriter builds with the options' table factory.
    b.table_format = o.table_format.clone();
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    b.creation_time = now;
    b.file_creation_time = now;
    b.oldest_key_time = now;
    b
}

fn not_open() -> Error {
    Error::invalid_argument("File is not opened")
}

/// RocksDB's message for a key written with the wrong timestamp size.
fn ts_mismatch(given: usize, want: usize) -> Error {
    Error::invalid_argument(format!(
        "Timestamp size mismatch: {given}-byte timestamp, the comparator's is {want}"
    ))
}

impl<'a> SstFileWriter<'a> {
    pub fn create(opts: &'a Options) -> Self {
        SstFileWriter { opts, open: Mutex::new(None), file_size: 0 }
    }

    /// Creates (or truncates) the file at `path`; a file opened before is abandoned.
    pub fn open<P: AsRef<Path>>(&'a self, path: P) -> Result<()> {
        let path = path.as_ref().to_path_buf();
        let fs = self.opts.fs.clone().unwrap_or_else(crate::fs::default_fs);
        let file = fs.new_writable_file(&path)?;
        let bo = builder_options(self.opts);
        let icmp = bo.icmp.clone();
        let mut builder = AnyTableBuilder::new(bo, file);
        // RocksDB's SstFileWriterPropertiesCollector; its cuckoo builder runs no collector,
        // so a cuckoo file has neither property (and RocksDB's ingestion refuses it:
        // "External file version not found").
        if !matches!(self.opts.table_format, crate::table::TableFormat::Cuckoo(_)) {
            let mut v = Vec::new();
            put_fixed32(&mut v, 2);
            builder.set_user_property(EXTERNAL_SST_VERSION, v);
            let mut s = Vec::new();
            put_fixed64(&mut s, 0);
            builder.set_user_property(EXTERNAL_SST_GLOBAL_SEQNO, s);
        }
        *self.lock_open()? = Some(Open { path, builder, icmp, last_user_key: None, entries: 0 });
        Ok(())
    }

    /// The open file's state. A panic in an earlier call (a user's comparator, under this
    /// lock) left it half changed: the writer refuses every later call.
    fn lock_open(&self) -> Result<std::sync::MutexGuard<'_, Option<Open>>> {
        self.open.lock().map_err(|_| {
            Error::corruption(
                "SstFileWriter: an earlier call panicked while writing the file; the writer is unusable",
            )
        })
    }

    fn with_open<R>(&self, f: impl FnOnce(&mut Open) -> Result<R>) -> Result<R> {
        let mut g = self.lock_open()?;
        let o = g.as_mut().ok_or_else(not_open)?;
        f(o)
    }

    /// A plain key: refused when the comparator has timestamps.
    fn add(&mut self, key: &[u8], value: &[u8], t: ValueType) -> Result<()> {
        let ts_sz = self.opts.comparator.timestamp_size();
        if ts_sz != 0 {
            return Err(ts_mismatch(0, ts_sz));
        }
        self.add_raw(key, value, t)
    }

    /// `ts` is a timestamp of the comparator's size and, with
    /// `persist_user_defined_timestamps=false` (the file holds keys without timestamps), the
    /// minimum one, as RocksDB's SstFileWriter checks; `which` names the key in the message.
    fn check_ts(&self, ts: &[u8], which: &str) -> Result<()> {
        let ts_sz = self.opts.comparator.timestamp_size();
        if ts_sz == 0 || ts.len() != ts_sz {
            return Err(ts_mismatch(ts.len(), ts_sz));
        }
        if !self.opts.persist_user_defined_timestamps
            && self.opts.comparator.compare_timestamp(ts, &vec![0u8; ts_sz]) != Ordering::Equal
        {
            return Err(Error::invalid_argument(format!(
                "persist_user_defined_timestamps flag is set to false, only minimum timestamp is accepted{which}."
            )));
        }
        Ok(())
    }

    /// `key | ts` under a comparator with timestamps of `ts`'s size (docs/timestamps.md).
    fn add_with_ts(&mut self, key: &[u8], ts: &[u8], value: &[u8], t: ValueType) -> Result<()> {
        self.check_ts(ts, "")?;
        self.add_raw(&[key, ts].concat(), value, t)
    }

    fn add_raw(&mut self, key: &[u8], value: &[u8], t: ValueType) -> Result<()> {
        self.with_open(|o| {
            if let Some(last) = &o.last_user_key {
                if o.icmp.compare_user(key, last) != Ordering::Greater {
                    return Err(Error::invalid_argument("Keys must be added in strict ascending order."));
                }
            }
            let mut ik = make_internal_key(key, 0, t);
            if o.icmp.timestamp_size() > 0 && t == ValueType::Deletion {
                // RocksDB's `DeleteWithTimestamp` writes kTypeDeletionWithTimestamp.
                let n = ik.len() - 8;
                ik[n] = crate::key::DELETION_WITH_TIMESTAMP;
            }
            o.builder.add(&ik, value)?;
            o.last_user_key = Some(key.to_vec());
            o.entries += 1;
            Ok(())
        })
    }

    /// Completes the file (synced). A file with no entry is refused, as RocksDB does.
    pub fn finish(&mut self) -> Result<()> {
        let open = self.lock_open()?.take().ok_or_else(not_open)?;
        if open.entries == 0 {
            let fs = self.opts.fs.clone().unwrap_or_else(crate::fs::default_fs);
            let _ = fs.remove_file(&open.path);
            return Err(Error::invalid_argument("Cannot create sst file with no entries"));
        }
        let r = open.builder.finish()?;
        self.file_size = r.file_size;
        Ok(())
    }

    /// The size of the file written by the last `finish` (0 before).
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> Result<()> {
        self.add(key.as_ref(), value.as_ref(), ValueType::Value)
    }

    pub fn put_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        key: K,
        ts: S,
        value: V,
    ) -> Result<()> {
        self.add_with_ts(key.as_ref(), ts.as_ref(), value.as_ref(), ValueType::Value)
    }

    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> Result<()> {
        self.add(key.as_ref(), value.as_ref(), ValueType::Merge)
    }

    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) -> Result<()> {
        self.add(key.as_ref(), &[], ValueType::Deletion)
    }

    /// Deletes `[begin_key, end_key)`; an empty range adds nothing, an inverted one is
    /// InvalidArgument.
    /// With a comparator with timestamps: InvalidArgument, use `delete_range_with_ts`
    /// (RocksDB's `SstFileWriter::DeleteRange`).
    pub fn delete_range<K: AsRef<[u8]>>(&mut self, begin_key: K, end_key: K) -> Result<()> {
        let ts_sz = self.opts.comparator.timestamp_size();
        if ts_sz != 0 {
            return Err(ts_mismatch(0, ts_sz));
        }
        self.delete_range_raw(begin_key.as_ref(), end_key.as_ref())
    }

    /// Deletes `[begin_key, end_key)` at timestamp `ts` (RocksDB's `SstFileWriter::DeleteRange(
    /// begin, end, ts)`; rust-rocksdb 0.25 has no such method, a Shale extension): both ends
    /// carry `ts`, the range is compared without it (equal ends add nothing, inverted ones
    /// are InvalidArgument). With `persist_user_defined_timestamps=false` only the minimum
    /// timestamp is accepted.
    pub fn delete_range_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        begin_key: K,
        end_key: K,
        ts: S,
    ) -> Result<()> {
        let ts = ts.as_ref();
        // RocksDB checks the start key's first (both carry `ts`).
        self.check_ts(ts, " for start key")?;
        let b = [begin_key.as_ref(), ts].concat();
        let e = [end_key.as_ref(), ts].concat();
        self.delete_range_raw(&b, &e)
    }

    /// RocksDB's `DeleteRangeImpl`: `b` and `e` carry their timestamps, if any.
    fn delete_range_raw(&mut self, b: &[u8], e: &[u8]) -> Result<()> {
        self.with_open(|o| match o.icmp.compare_user_without_ts(b, e) {
            Ordering::Greater => Err(Error::invalid_argument("end key comes before start key")),
            Ordering::Equal => Ok(()),
            Ordering::Less => {
                o.builder.add_range_tombstone(&make_internal_key(b, 0, ValueType::RangeDeletion), e)?;
                o.entries += 1;
                Ok(())
            }
        })
    }

    pub fn delete_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(&mut self, key: K, ts: S) -> Result<()> {
        self.add_with_ts(key.as_ref(), ts.as_ref(), &[], ValueType::Deletion)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::reader::{Table, TableReaderOptions};

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    fn read_back(path: &Path) -> (std::sync::Arc<Table>, Entries) {
        let fs = crate::fs::default_fs();
        let size = fs.file_size(path).expect("size");
        let f = fs.new_random_access_file(path).expect("open");
        let opts = TableReaderOptions::standalone(crate::key::bytewise_internal_comparator(), "x.sst");
        let t = Table::open(f, size, opts).expect("table");
        let mut it = t.iter(false);
        it.seek_to_first();
        let mut out = Vec::new();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        (t, out)
    }

    #[test]
    fn writes_external_layout_with_seqno_zero() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("a.sst");
        let o = Options::default();
        let mut w = SstFileWriter::create(&o);
        w.open(&path).expect("open");
        w.put(b"a", b"1").expect("put");
        w.delete(b"b").expect("delete");
        w.merge(b"c", b"m").expect("merge");
        w.delete_range(b"d", b"f").expect("range");
        w.finish().expect("finish");
        assert_eq!(w.file_size(), std::fs::metadata(&path).expect("stat").len());
        let (t, entries) = read_back(&path);
        let got: Vec<(Vec<u8>, u64, u8)> = entries
            .iter()
            .map(|(k, _)| {
                let tr = crate::key::trailer(k);
                (crate::key::user_key(k).to_vec(), tr >> 8, (tr & 0xff) as u8)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), 0, ValueType::Value as u8),
                (b"b".to_vec(), 0, ValueType::Deletion as u8),
                (b"c".to_vec(), 0, ValueType::Merge as u8)
            ]
        );
        let p = t.properties();
        assert_eq!(
            p.user_collected.get(EXTERNAL_SST_VERSION).map(|v| v.as_slice()),
            Some(&[2u8, 0, 0, 0][..])
        );
        assert_eq!(p.user_collected.get(EXTERNAL_SST_GLOBAL_SEQNO).map(|v| v.len()), Some(8));
        assert_eq!(t.range_tombstones().len(), 1);
        assert_eq!(p.column_family_name, "");
    }

    #[test]
    fn refuses_out_of_order_keys_inverted_ranges_and_empty_files() {
        let dir = tempfile::tempdir().expect("tmp");
        let o = Options::default();
        let mut w = SstFileWriter::create(&o);
        assert_eq!(w.put(b"a", b"1").expect_err("not open").kind(), crate::ErrorKind::InvalidArgument);
        w.open(dir.path().join("a.sst")).expect("open");
        w.put(b"b", b"1").expect("put");
        for bad in [&b"a"[..], &b"b"[..]] {
            let e = w.put(bad, b"2").expect_err("order");
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
            assert!(e
                .to_string()
                .starts_with("Invalid argument: Keys must be added in strict ascending order"));
        }
        let e = w.delete_range(b"k4", b"k2").expect_err("inverted");
        assert!(e.to_string().starts_with("Invalid argument"), "{e}");
        w.finish().expect("finish");

        let mut w = SstFileWriter::create(&o);
        w.open(dir.path().join("empty.sst")).expect("open");
        let e = w.finish().expect_err("empty");
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(!dir.path().join("empty.sst").exists());
    }
}
