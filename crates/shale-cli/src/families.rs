//! Opening a database with every column family given the tool's options.
//!
//! RocksDB's tools (ldb, db_bench, db_stress) give each family the options they built;
//! rust-rocksdb's `open_cf` (and so Shale's) gives named families `Options::default()`.
//! The tools therefore open with explicit descriptors.

use shale::{ColumnFamilyDescriptor, Options, DEFAULT_COLUMN_FAMILY_NAME};

/// One descriptor with `o` per name, plus "default" (also with `o`) when the names lack it.
pub(crate) fn descriptors<I, N>(o: &Options, names: I) -> Vec<ColumnFamilyDescriptor>
where
    I: IntoIterator<Item = N>,
    N: AsRef<str>,
{
    let mut v: Vec<ColumnFamilyDescriptor> =
        names.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), o.clone())).collect();
    if !v.iter().any(|d| d.name() == DEFAULT_COLUMN_FAMILY_NAME) {
        v.insert(0, ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, o.clone()));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_default_once() {
        let o = Options::default();
        let names: Vec<String> = descriptors(&o, ["a", "b"]).iter().map(|d| d.name().to_string()).collect();
        assert_eq!(names, ["default", "a", "b"]);
        let names: Vec<String> =
            descriptors(&o, ["a", "default"]).iter().map(|d| d.name().to_string()).collect();
        assert_eq!(names, ["a", "default"]);
    }
}
