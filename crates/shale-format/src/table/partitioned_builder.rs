//! Writes partitioned (two-level) indexes and partitioned filters as RocksDB 11.8.1 does
//! (`PartitionedIndexBuilder` in index_builder.cc, `PartitionedFilterBlockBuilder` in
//! partitioned_filter_block.cc); the layout they produce is drawn in `partitioned.rs` and
//! docs/sst.md:
//!
//! ```text
//! file : data block* | filter partition* | top-level filter index | index partition*
//!        | top-level index | compression dict? | range-del? | properties | metaindex | footer
//! index partition   : index block (separator -> data block handle), cut when the
//!                     partition reaches metadata_block_size (RocksDB's flush-by-size policy
//!                     on the partition's index block, 10% deviation), never before the
//!                     table's last data block
//! top-level index   : index block, key = partition's last separator -> partition handle
//! filter partition  : full filter, cut when its entries reach what a filter of
//!                     ceil(metadata_block_size * 90%) bytes holds ("keys per partition",
//!                     one less with a prefix extractor)
//! top-level filter  : index block, key = last user key of the partition + seqno 0 +
//!                     type deletion (decoupled, RocksDB 10.6+'s default) -> partition handle
//! ```
//! Index partitions and both top levels are compressed as index blocks are (the top-level
//! filter index and the filter partitions never are); all use the table's index encoding
//! (user keys unless some separator needs its sequence number, handles delta-encoded from
//! format_version 4).

use crate::key::user_key;
use crate::slice_transform::SliceTransformRef;

use super::block::BlockBuilder;
use super::filter::FilterBuilder;
use super::format::BlockHandle;

/// RocksDB's default `block_size_deviation` (percent), as for data blocks.
#[cfg(test)]
const BLOCK_SIZE_DEVIATION: usize = 10;

/// The size below which a block is not cut early (RocksDB's `block_size_deviation_limit_`,
/// `deviation` in percent; 0: never cut early).
pub(super) fn deviation_limit(block_size: usize, deviation: usize) -> usize {
    (block_size * (100 - deviation.min(100))).div_ceil(100)
}

/// One index partition: its entries with internal-key separators and with user keys
/// (the table decides which one is written once every separator is known).
struct IndexPartition {
    with_seq: BlockBuilder,
    user_keys: BlockBuilder,
    /// The last separator added: the partition's key in the top level.
    key: Vec<u8>,
    last_handle: Option<BlockHandle>,
}

impl IndexPartition {
    fn new(restart_interval: usize, delta: bool, uniform_cv_threshold: f64) -> Self {
        IndexPartition {
            with_seq: BlockBuilder::new_index(restart_interval, delta)
                .with_uniform_cv_threshold(uniform_cv_threshold, false),
            user_keys: BlockBuilder::new_index(restart_interval, delta)
                .with_uniform_cv_threshold(uniform_cv_threshold, true),
            key: Vec::new(),
            last_handle: None,
        }
    }
}

/// Builds the partitions of a partitioned index (RocksDB's `PartitionedIndexBuilder`).
pub(super) struct PartitionedIndexBuilder {
    restart_interval: usize,
    /// RocksDB's `uniform_cv_threshold` for the partitions (not the top level, as RocksDB's).
    uniform_cv_threshold: f64,
    delta: bool,
    metadata_block_size: usize,
    deviation_limit: usize,
    done: Vec<IndexPartition>,
    cur: IndexPartition,
    /// Coupled filters: the filter asked for the partition to be cut at the next entry.
    cut_requested: bool,
    /// Coupled filters: a partition was cut (or the last entry added), so the filter cuts
    /// its partition before its next key (RocksDB's `ShouldCutFilterBlock`).
    cut_filter: bool,
}

/// A finished index partition: its key for the top level and its block contents.
pub(super) struct FinishedPartition {
    pub key: Vec<u8>,
    pub raw: Vec<u8>,
}

impl PartitionedIndexBuilder {
    /// An upper bound on the bytes the partitions and the top level come to (RocksDB's
    /// `PartitionedIndexBuilder::CurrentIndexSizeEstimate`): each partition's larger form
    /// (with or without sequences, not yet decided), and a top-level entry per partition.
    pub(super) fn size_estimate(&self) -> usize {
        self.done
            .iter()
            .chain(std::iter::once(&self.cur))
            .map(|p| {
                p.with_seq.current_size_estimate().max(p.user_keys.current_size_estimate())
                    + p.key.len()
                    + crate::table::format::BLOCK_TRAILER_SIZE
                    + 2 * crate::table::format::MAX_HANDLE_LEN
            })
            .sum()
    }

    /// `deviation`: RocksDB's `block_size_deviation`, which cuts index partitions as it
    /// cuts data blocks.
    pub(super) fn new(
        restart_interval: usize,
        delta: bool,
        metadata_block_size: usize,
        deviation: usize,
    ) -> Self {
        PartitionedIndexBuilder {
            restart_interval,
            uniform_cv_threshold: -1.0,
            delta,
            metadata_block_size,
            deviation_limit: deviation_limit(metadata_block_size, deviation),
            done: Vec::new(),
            cur: IndexPartition::new(restart_interval, delta, -1.0),
            cut_requested: false,
            cut_filter: false,
        }
    }

    /// RocksDB's `uniform_cv_threshold` for every index partition (see
    /// `BlockBuilder::with_uniform_cv_threshold`).
    pub(super) fn with_uniform_cv_threshold(mut self, threshold: f64) -> Self {
        self.uniform_cv_threshold = threshold;
        self.cur = IndexPartition::new(self.restart_interval, self.delta, threshold);
        self
    }

    /// The next entry's block does not follow the last one (padding before it): its handle
    /// is stored whole (RocksDB's `skip_delta_encoding`).
    pub(super) fn forget_last_handle(&mut self) {
        self.cur.last_handle = None;
    }

    /// Coupled filters: cut the index partition at the next data block (RocksDB's
    /// `RequestPartitionCut`).
    fn request_cut(&mut self) {
        self.cut_requested = true;
    }

    /// Coupled filters: whether the filter cuts now (cleared once asked).
    fn take_cut_filter(&mut self) -> bool {
        std::mem::take(&mut self.cut_filter)
    }

    /// The key of the partition being built (its last separator): a coupled filter
    /// partition's key.
    fn partition_key(&self) -> &[u8] {
        &self.cur.key
    }

    /// Adds the entry of one data block: `last_key` its last key, `sep` the separator the
    /// table chose, `has_next` whether another data block follows. `seq_before`: the
    /// table's separators carried sequence numbers before this entry; `seq_after`: they do
    /// now. As RocksDB, the partition is cut before the entry when adding it would pass
    /// `metadata_block_size`, and never for the last data block.
    pub(super) fn add(
        &mut self,
        last_key: &[u8],
        sep: &[u8],
        has_next: bool,
        seq_before: bool,
        seq_after: bool,
        handle: BlockHandle,
    ) {
        if has_next
            && !self.cur.with_seq.is_empty()
            && (self.cut_requested || self.should_cut(last_key, handle, seq_before))
        {
            let full = std::mem::replace(
                &mut self.cur,
                IndexPartition::new(self.restart_interval, self.delta, self.uniform_cv_threshold),
            );
            self.done.push(full);
            self.cut_filter = true;
            self.cut_requested = false;
        }
        let prev = self.cur.last_handle;
        self.cur.with_seq.add_index(sep, handle, prev);
        if !seq_after {
            self.cur.user_keys.add_index(user_key(sep), handle, prev);
        }
        self.cur.key.clear();
        self.cur.key.extend_from_slice(sep);
        self.cur.last_handle = Some(handle);
        if !has_next {
            self.cut_filter = true;
        }
    }

    /// RocksDB's `FlushBlockBySizePolicy::Update` on the partition's index block (the one
    /// the table would write as things stand), with the data block's unshortened last key
    /// and full handle.
    fn should_cut(&self, last_key: &[u8], handle: BlockHandle, seq: bool) -> bool {
        if self.cur.with_seq.is_empty() {
            return false;
        }
        let b = if seq { &self.cur.with_seq } else { &self.cur.user_keys };
        let cur = b.current_size_estimate();
        cur >= self.metadata_block_size
            || (self.deviation_limit > 0
                && b.estimate_size_after(last_key, &handle.encoded()) > self.metadata_block_size
                && cur > self.deviation_limit)
    }

    /// The partitions, in order (none for a table without data blocks); `seq`: whether
    /// separators keep their sequence numbers.
    pub(super) fn finish(mut self, seq: bool) -> Vec<FinishedPartition> {
        if !self.cur.with_seq.is_empty() {
            let last = std::mem::replace(&mut self.cur, IndexPartition::new(1, false, -1.0));
            self.done.push(last);
        }
        self.done
            .into_iter()
            .map(|mut p| {
                let raw = if seq { p.with_seq.finish().to_vec() } else { p.user_keys.finish().to_vec() };
                FinishedPartition { key: std::mem::take(&mut p.key), raw }
            })
            .collect()
    }
}

/// The top level of a partitioned index or filter: `(key, handle)` per partition, keys
/// internal (`seq`) or user keys.
pub(super) fn top_level_block(
    entries: &[(Vec<u8>, BlockHandle)],
    seq: bool,
    restart_interval: usize,
    delta: bool,
) -> Vec<u8> {
    let mut b = BlockBuilder::new_index(restart_interval, delta);
    let mut prev = None;
    for (k, h) in entries {
        let key = if seq { k.as_slice() } else { user_key(k) };
        b.add_index(key, *h, prev);
        prev = Some(*h);
    }
    b.finish().to_vec()
}

/// A finished filter partition: its key in the top-level filter index (an internal key)
/// and its filter bytes.
pub(super) type FilterPartition = (Vec<u8>, Vec<u8>);

/// Builds a partitioned filter (RocksDB's `PartitionedFilterBlockBuilder`): decoupled from
/// the index partitions (`decouple_partitioned_filters`, its default), or coupled: the
/// filter asks the index to cut when it is full and cuts when the index did, keyed by the
/// index partition's key.
pub(super) struct PartitionedFilterBuilder {
    decoupled: bool,
    bits: FilterBuilder,
    keys_per_partition: usize,
    prefix: Option<SliceTransformRef>,
    whole_key: bool,
    /// User-defined timestamp size: partition keys get the minimum timestamp.
    ts_sz: usize,
    filters: Vec<FilterPartition>,
    added_in_built: usize,
    /// The first partition that failed `detect_filter_construct_corruption`'s checks
    /// (`FilterBuilder::finish_checked`); `finish` returns it.
    error: Option<crate::Error>,
}

impl PartitionedFilterBuilder {
    pub(super) fn new(
        bits: FilterBuilder,
        metadata_block_size: usize,
        prefix: Option<SliceTransformRef>,
        whole_key: bool,
        ts_sz: usize,
        decoupled: bool,
        deviation: usize,
    ) -> Self {
        // The partition size is the lower bound of the deviation, as RocksDB's
        // CreateFilterBlockBuilder.
        let partition_size = deviation_limit(metadata_block_size, deviation).max(1);
        let mut kpp = bits.approximate_num_entries(partition_size);
        if kpp < 1 {
            let mut larger = (partition_size + 4).max(16);
            loop {
                kpp = bits.approximate_num_entries(larger);
                if kpp >= 1 {
                    break;
                }
                larger += larger / 4;
                if larger > 100_000 {
                    kpp = partition_size;
                    break;
                }
            }
        }
        if kpp > 1 && prefix.is_some() {
            // The next partition's first prefix is added after the check.
            kpp -= 1;
        }
        PartitionedFilterBuilder {
            decoupled,
            bits,
            keys_per_partition: kpp,
            prefix,
            whole_key,
            ts_sz,
            filters: Vec::new(),
            added_in_built: 0,
            error: None,
        }
    }

    /// An upper bound on the filter partitions and their top-level index (RocksDB's
    /// `PartitionedFilterBlockBuilder::CurrentFilterSizeEstimate`): those finished, the one
    /// being filled, a top-level entry per partition.
    pub(super) fn size_estimate(&self) -> usize {
        let top = |k: &[u8]| {
            k.len() + crate::table::format::BLOCK_TRAILER_SIZE + 2 * crate::table::format::MAX_HANDLE_LEN
        };
        self.filters.iter().map(|(k, f)| f.len() + top(k)).sum::<usize>()
            + self.bits.size_estimate()
            + top(&[0u8; 16])
    }

    pub(super) fn policy_name(&self) -> &'static str {
        self.bits.policy_name()
    }

    /// Adds a point entry's user key (without timestamp); `prev` is the previous entry's
    /// (empty for the first). Called for every entry, repeats included, as RocksDB's
    /// `AddWithPrevKey`.
    /// `index`: the table's partitioned index (coupled filters follow its cuts).
    pub(super) fn add(&mut self, key: &[u8], prev: &[u8], index: &mut PartitionedIndexBuilder) {
        let full = self.bits.num_added() >= self.keys_per_partition;
        let cut = if self.decoupled {
            full
        } else {
            if full {
                index.request_cut();
            }
            index.take_cut_filter()
        };
        let prefix = self.prefix.clone();
        match prefix.as_deref().and_then(|t| t.transform(key)) {
            Some(p) => {
                if cut {
                    self.cut(true, Some(p), prev, index);
                }
                if self.whole_key {
                    self.bits.add_key_and_alt(key, p);
                } else {
                    self.bits.add_key(p);
                }
            }
            None => {
                if cut {
                    self.cut(true, None, prev, index);
                }
                if self.whole_key {
                    self.bits.add_key(key);
                }
            }
        }
    }

    /// RocksDB's `CutAFilterBlock`: closes the partition whose last key is `prev`; with a
    /// next partition, the next partition's first prefix goes into this one and this
    /// one's last prefix into the next (prefix seeks in both directions).
    fn cut(
        &mut self,
        has_next: bool,
        next_prefix: Option<&[u8]>,
        prev: &[u8],
        index: &PartitionedIndexBuilder,
    ) {
        if let Some(p) = next_prefix {
            if self.whole_key {
                self.bits.add_key_and_alt(p, p);
            } else {
                self.bits.add_key(p);
            }
        }
        self.added_in_built += self.bits.num_added();
        let data = match self.bits.finish_checked() {
            Ok(d) => d,
            Err(e) => {
                self.error.get_or_insert(e);
                Vec::new()
            }
        };
        let ikey = if self.decoupled {
            let mut k = prev.to_vec();
            k.resize(prev.len() + self.ts_sz, 0);
            crate::coding::put_fixed64(
                &mut k,
                crate::key::pack_seq_and_type(0, crate::key::ValueType::Deletion),
            );
            k
        } else {
            index.partition_key().to_vec()
        };
        self.filters.push((ikey, data));
        if has_next {
            let prefix = self.prefix.clone();
            if let Some(p) = prefix.as_deref().and_then(|t| t.transform(prev)) {
                self.bits.add_key(p);
            }
        }
    }

    /// No entry was added: RocksDB writes no filter block then.
    pub(super) fn is_empty(&self) -> bool {
        self.bits.num_added() == 0 && self.filters.is_empty()
    }

    /// Closes the last partition (`last` is the table's last user key without timestamp)
    /// and returns every partition with its key, and the number of filter entries (the
    /// "rocksdb.num.filter_entries" property).
    pub(super) fn finish(
        mut self,
        last: &[u8],
        index: &PartitionedIndexBuilder,
    ) -> crate::Result<(Vec<FilterPartition>, u64)> {
        if self.bits.num_added() > 0 {
            self.cut(false, None, last, index);
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok((self.filters, self.added_in_built as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ikey(k: &[u8]) -> Vec<u8> {
        let mut v = k.to_vec();
        crate::coding::put_fixed64(&mut v, crate::key::pack_seq_and_type(1, crate::key::ValueType::Value));
        v
    }

    #[test]
    fn index_partitions_are_cut_at_metadata_block_size() {
        let mut b = PartitionedIndexBuilder::new(1, true, 256, BLOCK_SIZE_DEVIATION);
        let mut off = 0;
        for i in 0..100u32 {
            let k = ikey(format!("key{i:05}").as_bytes());
            let h = BlockHandle::new(off, 4000);
            off += 4005;
            b.add(&k, &k, i < 99, false, false, h);
        }
        let parts = b.finish(false);
        assert!(parts.len() > 3, "{} partitions", parts.len());
        for p in &parts {
            assert!(p.raw.len() <= 256 + 32, "partition of {} bytes", p.raw.len());
        }
        assert_eq!(parts.last().map(|p| p.key.clone()), Some(ikey(b"key00099")));
    }

    #[test]
    fn no_data_blocks_no_partitions() {
        let b = PartitionedIndexBuilder::new(1, true, 4096, BLOCK_SIZE_DEVIATION);
        assert!(b.finish(false).is_empty());
    }

    #[test]
    fn filter_partitions_hold_their_keys_and_are_keyed_by_their_last_key() {
        let mut f = PartitionedFilterBuilder::new(
            FilterBuilder::new(10.0),
            300,
            None,
            true,
            0,
            true,
            BLOCK_SIZE_DEVIATION,
        );
        let mut index = PartitionedIndexBuilder::new(1, true, 300, BLOCK_SIZE_DEVIATION);
        assert!(f.is_empty());
        let keys: Vec<Vec<u8>> = (0..2000u32).map(|i| format!("k{i:06}").into_bytes()).collect();
        let mut prev: &[u8] = &[];
        for k in &keys {
            f.add(k, prev, &mut index);
            prev = k;
        }
        let (parts, entries) = f.finish(prev, &index).unwrap();
        assert_eq!(entries, 2000);
        assert!(parts.len() > 5, "{} partitions", parts.len());
        let mut start = 0;
        for (pkey, data) in &parts {
            let last = &pkey[..pkey.len() - 8];
            let r = crate::table::filter::FilterReader::new(data.clone()).unwrap();
            let end = keys.iter().position(|k| k.as_slice() == last).unwrap();
            for k in &keys[start..=end] {
                assert!(r.may_match(k));
            }
            start = end + 1;
        }
        assert_eq!(start, keys.len());
    }
}
