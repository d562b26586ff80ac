//! rust-rocksdb's column family descriptor: a family's name, options and TTL, given to
//! `DB::open_cf_descriptors` and returned by `Options::load_latest`. The options layer
//! builds it; the database (`db/`) reads it.

use std::time::Duration;

use crate::options::Options;

/// A column family's name and options, for `DB::open_cf_descriptors`.
#[derive(Clone)]
pub struct ColumnFamilyDescriptor {
    pub(crate) name: String,
    pub(crate) options: Options,
}

impl ColumnFamilyDescriptor {
    pub fn new<S: Into<String>>(name: S, options: Options) -> Self {
        ColumnFamilyDescriptor { name: name.into(), options }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The family's options (for a descriptor from `Options::load_latest`: the options its
    /// OPTIONS file records). rust-rocksdb's forks used by bindings (rocksdict) expose them;
    /// a binding reopening a database with its saved per-family options needs them.
    pub fn options(&self) -> &Options {
        &self.options
    }
}

/// A column family's TTL, as rust-rocksdb's `ColumnFamilyTtl`, used by
/// `open_cf_descriptors_with_ttl` (`db/ttl.rs`). As rust-rocksdb 0.25 documents, the TTL
/// applies only to a database opened with TTL: a plain open takes the descriptor and opens
/// the family without one (RocksDB has no TTL outside `DBWithTTL`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColumnFamilyTtl {
    #[default]
    Disabled,
    Duration(Duration),
    SameAsDb,
}

impl ColumnFamilyDescriptor {
    pub fn new_with_ttl<S: Into<String>>(name: S, options: Options, ttl: ColumnFamilyTtl) -> Self {
        let mut d = ColumnFamilyDescriptor::new(name, options);
        d.set_ttl(ttl);
        d
    }

    pub fn set_ttl(&mut self, ttl: ColumnFamilyTtl) {
        self.options.cf_ttl = ttl;
    }

    pub fn ttl(&self) -> ColumnFamilyTtl {
        self.options.cf_ttl
    }
}
