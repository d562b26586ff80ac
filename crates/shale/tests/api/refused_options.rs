//! Nothing of rust-rocksdb's API is accepted and then ignored: an Options setter of a feature another issue builds makes `open` fail
//! naming it, and the calls of those features return NotSupported — while the same setters
//! at the value Shale behaves as open normally.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{ErrorKind, Options, WriteBatch, DB};

fn not_supported<T: std::fmt::Debug>(r: shale::Result<T>, mention: &str) {
    let e = r.expect_err("must be refused");
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains(mention), "error should name {mention:?}: {e}");
}

#[test]
fn refused_settings_fail_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    // At the value Shale behaves as, these open.
    o.set_ttl(0);
    o.set_atomic_flush(false);
    o.set_enable_blob_files(false);
    o.set_use_adaptive_mutex(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();

    let mut b = WriteBatch::default();
    b.put(b"a", b"1");
    b.put_cf_with_ts(db.cf_handle("default").unwrap(), b"a", [0u8; 8], b"1");
    // A timestamp in a family without user-defined timestamps: RocksDB's InvalidArgument.
    let e = db.write(b).expect_err("the family has no timestamps");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("timestamps"), "{e}");
    // Nothing of the refused batch was applied.
    assert_eq!(db.get(b"a").unwrap(), None);
    // A merge into a family without a merge operator: RocksDB's NotSupported from
    // DBImpl::Merge, InvalidArgument for a batch holding one.
    not_supported(db.merge(b"k", b"x"), "merge_operator");
    let mut b = WriteBatch::default();
    b.merge(b"k", b"x");
    let e = db.write(b).expect_err("no merge operator");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("merge_operator"), "{e}");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);

    // RocksDB's ValidateOptions: in-place updates need allow_concurrent_memtable_write off.
    let mut o = Options::default();
    o.set_inplace_update_support(true);
    invalid(DB::open(&o, dir.path()), "inplace_update_support");
}

fn invalid<T: std::fmt::Debug>(r: shale::Result<T>, mention: &str) {
    let e = r.expect_err("must be refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains(mention), "error should name {mention:?}: {e}");
}

/// The last value set wins, as with RocksDB's setters: an option set to a refused value and
/// then back to one Shale behaves as opens, and one set the other way round is refused.
#[test]
fn the_last_value_set_wins() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_inplace_update_support(true);
    o.set_inplace_update_support(false);
    let mut t = shale::BlockBasedOptions::default();
    t.set_cache_index_and_filter_blocks(true);
    t.set_cache_index_and_filter_blocks(false);
    t.set_format_version(9);
    t.set_format_version(6);
    t.set_ribbon_filter(10.0);
    t.set_bloom_filter(10.0, false);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);

    let mut o = Options::default();
    o.set_inplace_update_support(false);
    o.set_inplace_update_support(true);
    invalid(DB::open(&o, dir.path()), "inplace_update_support");
}
