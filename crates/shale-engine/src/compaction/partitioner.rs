//! RocksDB's SST partitioners (`rocksdb/sst_partitioner.h`, `db/compaction/sst_partitioner.cc`):
//! a family's `sst_partitioner_factory` makes, for each compaction whose output level is not
//! 0, a partitioner that asks for a new output table between two user keys, and that may
//! forbid moving a file down unchanged when the file spans a boundary.
//!
//! RocksDB 11.8.1 builds in one factory, `SstPartitionerFixedPrefixFactory` (option `length`):
//! a boundary lies between two keys whose first `length` bytes differ (a key shorter than
//! `length` is its own prefix), so no output table holds two prefixes.

/// A family's SST partitioner factory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SstPartitionerFactory {
    /// RocksDB's `SstPartitionerFixedPrefixFactory(length)`.
    FixedPrefix { length: usize },
}

impl SstPartitionerFactory {
    /// RocksDB's class name (`kClassName()`, the `id` in options strings and OPTIONS files).
    pub fn name(&self) -> &'static str {
        match self {
            SstPartitionerFactory::FixedPrefix { .. } => "SstPartitionerFixedPrefixFactory",
        }
    }

    /// RocksDB's `ShouldPartition` (kRequired = true): the table holding `prev` (the last user
    /// key written to it) ends before `current`.
    pub fn should_partition(&self, prev: &[u8], current: &[u8]) -> bool {
        match self {
            SstPartitionerFactory::FixedPrefix { length } => {
                prev[..prev.len().min(*length)] != current[..current.len().min(*length)]
            }
        }
    }

    /// RocksDB's `CanDoTrivialMove`: a file spanning `[smallest, largest]` (user keys) may move
    /// down unchanged only when no boundary lies between its ends.
    pub fn can_do_trivial_move(&self, smallest: &[u8], largest: &[u8]) -> bool {
        !self.should_partition(smallest, largest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_prefix_cuts_where_the_prefix_changes() {
        let p = SstPartitionerFactory::FixedPrefix { length: 3 };
        assert!(!p.should_partition(b"abc1", b"abc2"));
        assert!(p.should_partition(b"abc9", b"abd0"));
        // A shorter key is its own prefix, as RocksDB's truncated Slice compare.
        assert!(p.should_partition(b"ab", b"abc"));
        assert!(!p.should_partition(b"ab", b"ab"));
        assert!(p.can_do_trivial_move(b"abc0", b"abcz"));
        assert!(!p.can_do_trivial_move(b"abc0", b"abd0"));
        // length 0 (the factory RocksDB's registry makes without options): never cuts.
        let z = SstPartitionerFactory::FixedPrefix { length: 0 };
        assert!(!z.should_partition(b"a", b"b"));
    }
}
