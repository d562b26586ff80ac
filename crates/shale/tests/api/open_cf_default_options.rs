//! `open_cf` and the other name-taking opens give the named families `Options::default()`,
//! as rust-rocksdb 0.25's do; the default family gets the DB's options only when no family is
//! named. The option observed here is a merge operator: a merge into a family without one is
//! refused.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing
use shale::{ColumnFamilyDescriptor, MergeOperands, Options, DB};
use std::time::Duration;

fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in operands {
        v.extend_from_slice(op);
    }
    Some(v)
}

fn with_merge() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_merge_operator_associative("concat", concat);
    o
}

/// Whether a merge into family `name` is accepted (it has a merge operator).
fn merges(db: &DB, name: &str) -> bool {
    let cf = db.cf_handle(name).expect("family is open");
    db.merge_cf(cf, b"k", b"x").is_ok()
}

#[test]
fn named_families_and_unnamed_default_get_default_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_cf(&with_merge(), dir.path(), ["a"]).unwrap();
    assert!(!merges(&db, "a"), "a family named in open_cf must not get the DB's merge operator");
    assert!(!merges(&db, "default"), "the unnamed default family must get Options::default()");
}

#[test]
fn named_default_family_gets_default_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_cf(&with_merge(), dir.path(), ["default", "a"]).unwrap();
    assert!(!merges(&db, "default"));
    assert!(!merges(&db, "a"));
}

#[test]
fn no_names_gives_the_default_family_the_db_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_cf(&with_merge(), dir.path(), Vec::<String>::new()).unwrap();
    assert!(merges(&db, "default"));
    drop(db);
    let db = DB::open(&with_merge(), dir.path()).unwrap();
    db.merge(b"k", b"y").unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"xy"[..]));
}

#[test]
fn descriptors_give_their_own_options() {
    let dir = tempfile::tempdir().unwrap();
    let o = with_merge();
    let db = DB::open_cf_descriptors(&o, dir.path(), [ColumnFamilyDescriptor::new("a", o.clone())]).unwrap();
    assert!(merges(&db, "a"));
    assert!(!merges(&db, "default"), "an unnamed default family gets Options::default()");
}

#[test]
fn ttl_open_gives_named_families_default_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_cf_with_ttl(&with_merge(), dir.path(), ["a"], Duration::from_secs(3600)).unwrap();
    assert!(!merges(&db, "a"));
    assert!(!merges(&db, "default"));
    drop(db);
    let db =
        DB::open_cf_with_ttl(&with_merge(), dir.path(), ["default", "a"], Duration::from_secs(3600)).unwrap();
    assert!(!merges(&db, "a"));
}

#[test]
fn read_only_and_secondary_opens_give_named_families_default_options() {
    let dir = tempfile::tempdir().unwrap();
    let o = with_merge();
    let descs = ["default", "a"].map(|n| ColumnFamilyDescriptor::new(n, o.clone()));
    let db = DB::open_cf_descriptors(&o, dir.path(), descs).unwrap();
    db.merge_cf(db.cf_handle("a").unwrap(), b"k", b"x").unwrap();
    db.flush_cf(db.cf_handle("a").unwrap()).unwrap();
    drop(db);
    // Reading a merge operand needs the family's merge operator, which open_cf does not give.
    let ro = DB::open_cf_for_read_only(&o, dir.path(), ["a"], false).unwrap();
    assert!(ro.get_cf(ro.cf_handle("a").unwrap(), b"k").is_err());
    drop(ro);
    let ro = DB::open_cf_with_opts_for_read_only(&o, dir.path(), [("a", o.clone())], false).unwrap();
    assert_eq!(ro.get_cf(ro.cf_handle("a").unwrap(), b"k").unwrap().as_deref(), Some(&b"x"[..]));
    drop(ro);
    let sec_dir = tempfile::tempdir().unwrap();
    let sec = DB::open_cf_as_secondary(&o, dir.path(), sec_dir.path(), ["a"]).unwrap();
    assert!(sec.get_cf(sec.cf_handle("a").unwrap(), b"k").is_err());
}
