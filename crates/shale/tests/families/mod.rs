//! Shared by the test files that open every family with one `Options`: rust-rocksdb's
//! `DB::open_cf` gives named families `Options::default()`, so these tests name them in
//! descriptors instead.
#![allow(dead_code)]

use shale::{Options, DB};

/// Opens with every family, "default" included, given `o` (`DB::open_cf` gives them
/// `Options::default()`, as rust-rocksdb's does).
pub fn open_cf_all<P, I, N>(o: &Options, path: P, names: I) -> shale::Result<DB>
where
    P: AsRef<std::path::Path>,
    I: IntoIterator<Item = N>,
    N: AsRef<str>,
{
    let mut d: Vec<shale::ColumnFamilyDescriptor> =
        names.into_iter().map(|n| shale::ColumnFamilyDescriptor::new(n.as_ref(), o.clone())).collect();
    if !d.iter().any(|d| d.name() == "default") {
        d.insert(0, shale::ColumnFamilyDescriptor::new("default", o.clone()));
    }
    DB::open_cf_descriptors(o, path, d)
}
