//! rust-rocksdb's `WriteBatch` and `WriteBatchWithTransaction`, over the engine's `Batch`
//! (`shale_engine::batch`, which draws RocksDB's encoding).
//!
//! The wrapper names column families by handle (`AsColumnFamilyRef`) where the engine names
//! them by id, and adds rust-rocksdb's `iterate` / `iterate_cf` callbacks. It holds the
//! engine's batch and nothing else, so a write hands it to the engine by move
//! ([`WriteBatchWithTransaction::into_engine`]), without a copy.

use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::key::{SequenceNumber, ValueType};
pub use shale_engine::batch::{
    one_record_capacity, tag, Batch, BatchEntry, Marker, Record, WalRecord, HEADER_SIZE,
};

/// Receives the default-column-family puts and deletes of
/// [`WriteBatchWithTransaction::iterate`], as rust-rocksdb's trait of the same name.
pub trait WriteBatchIterator {
    fn put(&mut self, key: &[u8], value: &[u8]);
    fn delete(&mut self, key: &[u8]);
}

/// Receives the puts, deletes and merges of every column family, with the family's id, as
/// rust-rocksdb's `WriteBatchIteratorCf`.
pub trait WriteBatchIteratorCf {
    fn put_cf(&mut self, cf_id: u32, key: &[u8], value: &[u8]);
    fn delete_cf(&mut self, cf_id: u32, key: &[u8]);
    fn merge_cf(&mut self, cf_id: u32, key: &[u8], value: &[u8]);
}

/// An atomic group of writes, encoded the way RocksDB writes it to the WAL.
/// `TRANSACTION` is rust-rocksdb's marker of a batch for a transaction database; both kinds
/// encode the same.
#[derive(Clone, Debug, Default)]
pub struct WriteBatchWithTransaction<const TRANSACTION: bool> {
    pub(crate) b: Batch,
}

/// A plain batch, as rust-rocksdb's `WriteBatch`.
pub type WriteBatch = WriteBatchWithTransaction<false>;

impl<const T: bool> WriteBatchWithTransaction<T> {
    /// An empty batch: a zero header.
    pub fn new() -> Self {
        Self { b: Batch::new() }
    }

    /// An empty batch with room for `capacity_bytes` bytes of records.
    pub fn with_capacity_bytes(capacity_bytes: usize) -> Self {
        Self { b: Batch::with_capacity_bytes(capacity_bytes) }
    }

    /// A batch over bytes from [`data`](Self::data) or a WAL record. Nothing is checked
    /// here; a malformed batch fails when it is iterated or applied.
    pub fn from_data(data: &[u8]) -> Self {
        Self { b: Batch::from_data(data) }
    }

    /// The engine's batch (a write hands it over by move).
    #[inline]
    pub(crate) fn into_engine(self) -> Batch {
        self.b
    }

    /// The engine's batch, to read.
    #[inline]
    pub(crate) fn engine(&self) -> &Batch {
        &self.b
    }

    /// The same records as a batch of the other kind.
    pub(crate) fn into_kind<const U: bool>(self) -> WriteBatchWithTransaction<U> {
        WriteBatchWithTransaction { b: self.b }
    }

    /// The number of counted records (the header's count).
    pub fn len(&self) -> usize {
        self.b.len()
    }

    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }

    /// Size of the encoded batch, header included.
    pub fn size_in_bytes(&self) -> usize {
        self.b.size_in_bytes()
    }

    /// The encoded batch.
    pub fn data(&self) -> &[u8] {
        self.b.data()
    }

    /// The header's count (0 for a batch shorter than its header).
    pub fn count(&self) -> u32 {
        self.b.count()
    }

    /// The sequence number of the first record (0 for a batch shorter than its header).
    pub fn sequence(&self) -> SequenceNumber {
        self.b.sequence()
    }

    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        self.b.set_sequence(seq)
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.b.put(key, value)
    }

    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, key: K, value: V) {
        self.b.put_cf(cf.cf_id(), key, value)
    }

    /// A wide-column entity (RocksDB's `WriteBatch::PutEntity`; rust-rocksdb 0.25 has no such
    /// method): `columns` as (name, value) pairs in any order, sorted and encoded as
    /// `wide_columns.rs` draws it. The default column (empty name) is what `get` returns.
    /// Duplicate names are refused, as RocksDB refuses them.
    pub fn put_entity_cf<K: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        columns: &[(&[u8], &[u8])],
    ) -> Result<()> {
        self.b.put_entity_cf(cf.cf_id(), key, columns)
    }

    /// `put_entity_cf` in the default column family.
    pub fn put_entity<K: AsRef<[u8]>>(&mut self, key: K, columns: &[(&[u8], &[u8])]) -> Result<()> {
        self.b.put_entity(key, columns)
    }

    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.b.merge(key, value)
    }

    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) {
        self.b.merge_cf(cf.cf_id(), key, value)
    }

    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.b.delete(key)
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, key: K) {
        self.b.delete_cf(cf.cf_id(), key)
    }

    pub fn single_delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.b.single_delete(key)
    }

    pub fn single_delete_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, key: K) {
        self.b.single_delete_cf(cf.cf_id(), key)
    }

    /// Deletes the keys in `[from, to)`.
    pub fn delete_range<K: AsRef<[u8]>>(&mut self, from: K, to: K) {
        self.b.delete_range(from, to)
    }

    pub fn delete_range_cf<K: AsRef<[u8]>>(&mut self, cf: &impl AsColumnFamilyRef, from: K, to: K) {
        self.b.delete_range_cf(cf.cf_id(), from, to)
    }

    /// Adds a blob that is written to the WAL but not applied or counted.
    pub fn put_log_data<V: AsRef<[u8]>>(&mut self, log_data: V) {
        self.b.put_log_data(log_data)
    }

    /// Removes every record (and resets the sequence number).
    pub fn clear(&mut self) {
        self.b.clear()
    }

    /// Appends `other`'s records to this batch and adds its count.
    pub fn append(&mut self, other: &Self) {
        self.b.append(&other.b)
    }

    /// Whether the batch holds a Merge record.
    pub fn has_merge(&self) -> bool {
        self.b.has_merge()
    }

    /// Calls `f` with each counted record in order (LogData and Noop are skipped), then
    /// checks the header's count. Stops at the first error from `f` or from decoding.
    pub fn for_each(&self, f: &mut dyn FnMut(BatchEntry<'_>) -> Result<()>) -> Result<()> {
        self.b.for_each(f)
    }

    /// A put of `key` at timestamp `ts` into a family with user-defined timestamps: the
    /// record's key is `key | ts`, as RocksDB encodes it (docs/timestamps.md). Writing the
    /// batch fails with InvalidArgument if the family has no timestamps or another size.
    pub fn put_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
    ) {
        self.b.put_cf_with_ts(cf.cf_id(), key, ts, value)
    }

    /// A deletion of `key` at timestamp `ts`: see `put_cf_with_ts`.
    pub fn delete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
    ) {
        self.b.delete_cf_with_ts(cf.cf_id(), key, ts)
    }

    /// A merge operand for `key` at timestamp `ts` (RocksDB's `WriteBatch::Merge(cf, key, ts,
    /// value)`; rust-rocksdb 0.25 has no such method, a Shale extension): see
    /// `put_cf_with_ts`. Its read merges the operands of every version visible at the read
    /// timestamp down to a base (docs/timestamps.md).
    pub fn merge_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
    ) {
        self.b.merge_cf_with_ts(cf.cf_id(), key, ts, value)
    }

    /// Deletes the keys in `[from, to)` at timestamp `ts` (RocksDB's `WriteBatch::DeleteRange(cf,
    /// begin, end, ts)`; rust-rocksdb 0.25 has no such method, a Shale extension): both ends
    /// carry `ts`; see `put_cf_with_ts`.
    pub fn delete_range_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        ts: S,
    ) {
        self.b.delete_range_cf_with_ts(cf.cf_id(), from, to, ts)
    }

    /// Hands the default column family's puts and deletes to `callbacks`, as rust-rocksdb
    /// (through RocksDB's C API) does: default-CF single deletes and merges and LogData are
    /// passed over, and iteration ends quietly at the first record that handler cannot
    /// take (another column family, a range deletion, a Noop) or at a decoding error.
    pub fn iterate<I: WriteBatchIterator>(&self, callbacks: &mut I) {
        for r in self.b.records() {
            let e = match r {
                Ok(Record::Entry(e)) => e,
                Ok(Record::LogData) => continue,
                Ok(Record::Noop) | Ok(Record::Marker(_)) | Err(_) => return,
            };
            if e.cf_id != 0 {
                return;
            }
            match e.value_type {
                ValueType::Value => callbacks.put(e.key, e.value),
                ValueType::Deletion => callbacks.delete(e.key),
                ValueType::SingleDeletion
                | ValueType::Merge
                | ValueType::BlobIndex
                | ValueType::WideColumnEntity => {}
                ValueType::RangeDeletion => return,
            }
        }
    }

    /// Hands every column family's puts, deletes and merges to `callbacks`, as
    /// rust-rocksdb's `iterate_cf`; single deletes, range deletions and LogData are passed
    /// over, and iteration ends quietly at a record it cannot decode.
    pub fn iterate_cf<I: WriteBatchIteratorCf>(&self, callbacks: &mut I) {
        for r in self.b.records() {
            let e = match r {
                Ok(Record::Entry(e)) => e,
                Ok(Record::LogData) | Ok(Record::Noop) | Ok(Record::Marker(_)) => continue,
                Err(_) => return,
            };
            match e.value_type {
                ValueType::Value => callbacks.put_cf(e.cf_id, e.key, e.value),
                ValueType::Deletion => callbacks.delete_cf(e.cf_id, e.key),
                ValueType::Merge => callbacks.merge_cf(e.cf_id, e.key, e.value),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Cf(u32);

    impl AsColumnFamilyRef for Cf {
        fn cf_id(&self) -> u32 {
            self.0
        }
    }

    #[derive(Default)]
    struct Collect {
        puts: Vec<(Vec<u8>, Vec<u8>)>,
        dels: Vec<Vec<u8>>,
    }

    impl WriteBatchIterator for Collect {
        fn put(&mut self, key: &[u8], value: &[u8]) {
            self.puts.push((key.to_vec(), value.to_vec()));
        }
        fn delete(&mut self, key: &[u8]) {
            self.dels.push(key.to_vec());
        }
    }

    #[derive(Default)]
    struct CollectCf(Vec<(char, u32, Vec<u8>)>);

    impl WriteBatchIteratorCf for CollectCf {
        fn put_cf(&mut self, cf_id: u32, key: &[u8], _: &[u8]) {
            self.0.push(('p', cf_id, key.to_vec()));
        }
        fn delete_cf(&mut self, cf_id: u32, key: &[u8]) {
            self.0.push(('d', cf_id, key.to_vec()));
        }
        fn merge_cf(&mut self, cf_id: u32, key: &[u8], _: &[u8]) {
            self.0.push(('m', cf_id, key.to_vec()));
        }
    }

    #[test]
    fn iterate_like_rust_rocksdb() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.single_delete(b"ignored");
        b.merge(b"ignored too", b"x");
        b.put_log_data(b"blob");
        b.delete(b"b");
        b.put_cf(&Cf(1), b"stops here", b"");
        b.put(b"never", b"seen");
        let mut c = Collect::default();
        b.iterate(&mut c);
        assert_eq!(c.puts, vec![(b"a".to_vec(), b"1".to_vec())]);
        assert_eq!(c.dels, vec![b"b".to_vec()]);
        // A malformed batch yields nothing and does not panic.
        let mut c = Collect::default();
        WriteBatch::from_data(&[1, 2, 3]).iterate(&mut c);
        assert!(c.puts.is_empty() && c.dels.is_empty());
    }

    #[test]
    fn iterate_cf_sees_every_family_and_names_it_by_id() {
        let mut b = WriteBatch::new();
        b.put_cf(&Cf(2), b"p", b"1");
        b.single_delete(b"passed over");
        b.delete_range_cf(&Cf(2), b"a", b"b");
        b.delete_cf(&Cf(7), b"d");
        b.merge(b"m", b"+");
        let mut c = CollectCf::default();
        b.iterate_cf(&mut c);
        assert_eq!(c.0, vec![('p', 2, b"p".to_vec()), ('d', 7, b"d".to_vec()), ('m', 0, b"m".to_vec())]);
    }

    #[test]
    fn the_wrapper_hands_the_engine_the_same_bytes() {
        let mut b = WriteBatchWithTransaction::<true>::default();
        b.put_cf(&Cf(3), b"k", b"v");
        b.delete(b"x");
        let mut e = Batch::new();
        e.put_cf(3, b"k", b"v");
        e.delete(b"x");
        assert_eq!(b.data(), e.data());
        let plain: WriteBatch = b.into_kind();
        assert_eq!(plain.into_engine().data(), e.data());
    }
}
