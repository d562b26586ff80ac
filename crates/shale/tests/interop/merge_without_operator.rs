//! Merges into a family without a merge operator are refused before anything is written,
//! with RocksDB 11.8.1's errors: `DB::merge` / `merge_cf` with NotSupported "Provide a
//! merge_operator when opening DB" (`DBImpl::Merge`), a batch holding a merge with
//! InvalidArgument "Merge requires `ColumnFamilyOptions::merge_operator != nullptr`"
//! (`MemTableInserter::MergeCF`). Nothing of a refused write is visible, before or after a
//! reopen, and a family with an operator still takes merges.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{ErrorKind, Options, WriteBatch, DB};
use tools::concat;

#[test]
fn merges_without_an_operator_are_refused_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    let mut with_op = Options::default();
    with_op.set_merge_operator_associative("concat", concat);
    let cfs = vec![
        shale::ColumnFamilyDescriptor::new("default", Options::default()),
        shale::ColumnFamilyDescriptor::new("merging", with_op.clone()),
    ];
    {
        let db = DB::open_cf_descriptors(&o, tmp.path(), cfs).unwrap();
        let e = db.merge(b"k", b"v").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
        assert!(e.to_string().contains("Provide a merge_operator when opening DB"), "{e}");
        let default = db.cf_handle("default").unwrap();
        let e = db.merge_cf(&default, b"k", b"v").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");

        // A batch: one put, then a merge into the family without an operator.
        let merging = db.cf_handle("merging").unwrap();
        let mut b = WriteBatch::default();
        b.put(b"p", b"1");
        b.merge_cf(&merging, b"m", b"a");
        b.merge(b"k", b"v");
        let e = db.write(b).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(
            e.to_string().contains("Merge requires `ColumnFamilyOptions::merge_operator != nullptr`"),
            "{e}"
        );
        assert_eq!(db.get(b"p").unwrap(), None);
        assert_eq!(db.get_cf(&merging, b"m").unwrap(), None);

        // The family with an operator merges.
        db.merge_cf(&merging, b"m", b"a").unwrap();
        db.merge_cf(&merging, b"m", b"b").unwrap();
        assert_eq!(db.get_cf(&merging, b"m").unwrap().as_deref(), Some(&b"ab"[..]));
        db.flush_cf(&default).unwrap();
        db.flush_cf(&merging).unwrap();
    }
    let cfs = vec![
        shale::ColumnFamilyDescriptor::new("default", Options::default()),
        shale::ColumnFamilyDescriptor::new("merging", with_op),
    ];
    let db = DB::open_cf_descriptors(&o, tmp.path(), cfs).unwrap();
    assert_eq!(db.get(b"p").unwrap(), None);
    assert_eq!(db.get(b"k").unwrap(), None);
    let merging = db.cf_handle("merging").unwrap();
    assert_eq!(db.get_cf(&merging, b"m").unwrap().as_deref(), Some(&b"ab"[..]));
}
