//! Wide-column entities between RocksDB 11.8.1 and Shale (skipped, with the reason printed,
//! when 11.8.1's tools do not run here; see tools/mod.rs):
//! - 11.8.1's `ldb put_entity` writes entities (with and without a default column, some
//!   overwritten, beside plain values and a deletion); `ldb compact` moves the first ones to
//!   the last level, later ones land in level-0 tables (each ldb open flushes the WAL it
//!   recovers) and the newest stays in the WAL;
//! - Shale reads them: `get` returns the default column (empty when there is none),
//!   `get_entity_cf_opt` the columns, the iterator the same forward and backward, before
//!   and after Shale compacts everything and after a reopen;
//! - 11.8.1 reads back what Shale compacted: `ldb scan` prints what it printed before Shale
//!   touched the database, and `ldb idump` shows the entities still typed 22
//!   (kTypeWideColumnEntity).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{Options, ReadOptions, DB};
use tools::*;

pub(crate) type Cols = Vec<(Vec<u8>, Vec<u8>)>;

fn ldb(dir: &Path, extra: &[&str]) -> String {
    let mut a = vec![format!("--db={}", dir.display())];
    a.extend(extra.iter().map(|s| s.to_string()));
    run_tool("ldb", &a)
}

/// The columns `put_entity key cols...` gives, sorted by name (shared by the
/// `interop_wide_columns_*` files).
pub(crate) fn parse(cols: &[String]) -> Cols {
    let mut v: Cols = cols
        .iter()
        .map(|c| {
            let (n, val) = c.split_once(':').unwrap();
            (n.as_bytes().to_vec(), val.as_bytes().to_vec())
        })
        .collect();
    v.sort();
    v
}

fn check(db: &DB, want: &BTreeMap<Vec<u8>, Cols>, stage: &str) {
    let cf = db.cf_handle("default").unwrap();
    let ro = ReadOptions::default();
    for (k, cols) in want {
        let default = cols.iter().find(|(n, _)| n.is_empty()).map(|(_, v)| v.clone()).unwrap_or_default();
        assert_eq!(db.get(k).unwrap(), Some(default), "{stage}: get {k:?}");
        assert_eq!(
            db.get_entity_cf_opt(cf, k, &ro).unwrap().as_ref(),
            Some(cols),
            "{stage}: get_entity {k:?}"
        );
    }
    assert_eq!(db.get("gone").unwrap(), None, "{stage}");
    let mut it = db.raw_iterator();
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        fwd.push((it.key().unwrap().to_vec(), it.columns().unwrap().unwrap()));
        it.next();
    }
    it.status().unwrap();
    let want_list: Vec<(Vec<u8>, Cols)> = want.iter().map(|(k, c)| (k.clone(), c.clone())).collect();
    assert_eq!(fwd, want_list, "{stage}: forward scan");
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().unwrap().to_vec(), it.columns().unwrap().unwrap()));
        it.prev();
    }
    back.reverse();
    assert_eq!(back, want_list, "{stage}: backward scan");
}

#[test]
fn rocksdb_entities_read_compacted_and_read_back() {
    let test = "interop_wide_columns";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut want: BTreeMap<Vec<u8>, Cols> = BTreeMap::new();
    fn put(dir: &Path, want: &mut BTreeMap<Vec<u8>, Cols>, key: String, cols: Vec<String>, first: bool) {
        let mut args: Vec<&str> = Vec::new();
        if first {
            args.push("--create_if_missing");
        }
        args.push("put_entity");
        args.push(&key);
        args.extend(cols.iter().map(String::as_str));
        ldb(dir, &args);
        want.insert(key.into_bytes(), parse(&cols));
    }
    for i in 0..12 {
        let cols = if i % 2 == 0 {
            vec![format!("c:{i}"), format!(":v{i}"), "b:x".to_string()]
        } else {
            vec![format!("only:{i}")]
        };
        put(&dir, &mut want, format!("e{i:02}"), cols, i == 0);
    }
    ldb(&dir, &["put", "p", "plain"]);
    want.insert(b"p".to_vec(), vec![(Vec::new(), b"plain".to_vec())]);
    ldb(&dir, &["put_entity", "gone", ":soon"]);
    ldb(&dir, &["compact"]);
    ldb(&dir, &["delete", "gone"]);
    for i in (0..12).step_by(3) {
        put(&dir, &mut want, format!("e{i:02}"), vec![format!(":new{i}"), "z:1".to_string()], false);
    }
    // The newest stays in the WAL.
    put(&dir, &mut want, "e05".to_string(), vec![":wal".to_string()], false);
    // (How many tables there are depends on RocksDB's automatic compactions: not asserted.)
    assert!(!wal_files(&dir).is_empty() && !sst_files(&dir).is_empty());
    let before = ldb(&dir, &["scan"]);
    assert!(before.contains("e05 ==> wal\n") && before.contains("e00 ==> :new0 z:1\n"), "{before}");

    let mut o = Options::default();
    o.set_disable_auto_compactions(true);
    {
        let db = DB::open(&o, &dir).unwrap();
        check(&db, &want, "opened");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check(&db, &want, "compacted");
    }
    {
        let db = DB::open(&o, &dir).unwrap();
        check(&db, &want, "reopened");
    }
    assert_eq!(ldb(&dir, &["scan"]), before, "11.8.1's scan of what Shale compacted");
    let idump = ldb(&dir, &["idump"]);
    // Entities stay entities (type 22), and Shale's bottommost compaction zeroes their
    // sequence numbers as 11.8.1's does (e00's newest version was in a level-0 table at
    // seq 16 unless 11.8.1's automatic compaction had rewritten it already).
    assert!(idump.contains("'e00' seq:0, type:22 => :new0 z:1\n"), "{idump}");
    assert!(idump.contains("'e01' seq:0, type:22 => only:1\n"), "{idump}");
    assert!(!idump.contains("'gone'"), "{idump}");
}
