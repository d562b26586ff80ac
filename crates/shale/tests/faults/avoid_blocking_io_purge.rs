//! `set_avoid_unnecessary_blocking_io(true)`: obsolete tables are deleted by a background
//! thread, never by the user thread whose call made them obsolete (here a manual
//! `compact_range` and a column-family drop); without the option that thread deletes them
//! itself (which shows the check can fail). The tables do go, and the data stays readable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use crate::util;
use families::open_cf_all;

use std::path::Path;
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use shale::fs::default_fs;
use shale::Options;

/// The real file system, remembering which thread removed each table.
struct Recording {
    removed: Mutex<Vec<(String, ThreadId)>>,
}

impl util::FsHooks for Recording {
    fn before_remove(&self, path: &Path) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".sst") {
            self.removed.lock().unwrap().push((name, std::thread::current().id()));
        }
    }
}

/// (tables removed on the test's thread, tables removed in all) after a compaction and a
/// family drop, waiting up to 60 s for background purges.
fn scenario(avoid: bool) -> (usize, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let fs = util::HookedFs::new(default_fs(), Recording { removed: Mutex::new(Vec::new()) });
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_disable_auto_compactions(true);
    o.set_avoid_unnecessary_blocking_io(avoid);
    o.set_file_system(fs.clone());
    let mut db = open_cf_all(&o, tmp.path(), ["cf1"]).unwrap();
    for round in 0..3u32 {
        for i in 0..200u32 {
            db.put(format!("k{i:04}"), format!("v{round}")).unwrap();
            db.put_cf(db.cf_handle("cf1").unwrap(), format!("k{i:04}"), b"x").unwrap();
        }
        db.flush().unwrap();
        db.flush_cf(db.cf_handle("cf1").unwrap()).unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.drop_cf("cf1").unwrap();
    // 3 default-family inputs and 3 of cf1's tables become obsolete.
    let t = Instant::now();
    while fs.hooks.removed.lock().unwrap().len() < 6 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(db.get(b"k0007").unwrap().as_deref(), Some(&b"v2"[..]));
    let me = std::thread::current().id();
    let removed = fs.hooks.removed.lock().unwrap().clone();
    (removed.iter().filter(|(_, t)| *t == me).count(), removed.len())
}

#[test]
fn obsolete_tables_are_deleted_off_the_user_thread() {
    let (on_me, all) = scenario(true);
    assert_eq!(all, 6, "the background purge did not delete the obsolete tables");
    assert_eq!(on_me, 0, "{on_me} tables deleted by the user thread");
    let (on_me, all) = scenario(false);
    assert_eq!(all, 6);
    assert!(on_me > 0, "without the option the user thread deletes them itself");
}
