//! Compaction filters and factories: Keep / Remove / Change on the newest version of a key,
//! a removed value never lets an older version show again, versions a snapshot sees are
//! left alone, and a factory makes one filter per compaction with the context's
//! full / manual flags.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::ffi::{CStr, CString};
use std::sync::{Arc, Mutex};

use shale::compaction_filter::CompactionFilter;
use shale::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use shale::{CompactionDecision, Options, DB};

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o
}

fn filter(_level: u32, _key: &[u8], value: &[u8]) -> CompactionDecision {
    match value {
        b"remove" => CompactionDecision::Remove,
        b"change" => CompactionDecision::Change(b"changed"),
        _ => CompactionDecision::Keep,
    }
}

#[test]
fn removed_values_hide_older_versions_and_snapshots_are_respected() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_compaction_filter("by-value", filter);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"a", b"old").unwrap();
    db.put(b"b", b"kept").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.put(b"a", b"remove").unwrap();
    db.put(b"c", b"change").unwrap();
    let snap = db.snapshot();
    db.put(b"d", b"remove").unwrap(); // newer than the snapshot
    db.put(b"e", b"remove").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // Seen by the snapshot: untouched.
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"remove"[..]));
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"change"[..]));
    assert_eq!(db.get(b"d").unwrap(), None);
    assert_eq!(snap.get(b"a").unwrap().as_deref(), Some(&b"remove"[..]));
    drop(snap);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // `a`'s removal does not bring back "old".
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"kept"[..]));
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"changed"[..]));
    let keys: Vec<Vec<u8>> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
}

struct Prefixed;

impl CompactionFilter for Prefixed {
    fn filter(&mut self, _level: u32, key: &[u8], _value: &[u8]) -> CompactionDecision {
        if key.starts_with(b"tmp") {
            CompactionDecision::Remove
        } else {
            CompactionDecision::Keep
        }
    }

    fn name(&self) -> &CStr {
        c"prefixed"
    }
}

struct Factory {
    seen: Arc<Mutex<Vec<(bool, bool)>>>,
    name: CString,
}

impl CompactionFilterFactory for Factory {
    type Filter = Prefixed;

    fn create(&mut self, context: CompactionFilterContext) -> Prefixed {
        self.seen.lock().unwrap().push((context.is_full_compaction, context.is_manual_compaction));
        Prefixed
    }

    fn name(&self) -> &CStr {
        &self.name
    }
}

#[test]
fn a_factory_makes_a_filter_per_compaction_with_its_context() {
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut o = opts();
    o.set_compaction_filter_factory(Factory {
        seen: seen.clone(),
        name: CString::new("tmp-factory").unwrap(),
    });
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"tmp1", b"x").unwrap();
    db.put(b"keep", b"y").unwrap();
    db.flush().unwrap();
    db.put(b"tmp2", b"z").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get(b"tmp1").unwrap(), None);
    assert_eq!(db.get(b"tmp2").unwrap(), None);
    assert_eq!(db.get(b"keep").unwrap().as_deref(), Some(&b"y"[..]));
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the factory was asked");
    assert!(seen.iter().all(|&(_, manual)| manual), "{seen:?}");
    assert_eq!(seen[0], (true, true), "the first compaction took every file: {seen:?}");
    drop(db);
    let options_file = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(options_file).unwrap();
    assert!(text.contains("compaction_filter_factory=tmp-factory"), "{text}");
}
