//! Universal compaction in a database: sorted runs settle in the bottom levels (the first
//! compaction writes the last level, later ones the level above the next older run);
//! `compact_range` takes every level into the last one whatever range it is given; a
//! single-level family (allowed under universal and FIFO, as in RocksDB) keeps every run in
//! level 0; a leveled database reopened under universal (and back) keeps its data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{
    DBCompactionStyle, DBCompressionType, FifoCompactOptions, Options, UniversalCompactOptions,
    WaitForCompactOptions, DB,
};

fn universal(num_levels: i32) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_num_levels(num_levels);
    o.set_compaction_style(DBCompactionStyle::Universal);
    o.set_level_zero_file_num_compaction_trigger(4);
    let u = UniversalCompactOptions::default();
    o.set_universal_compaction_options(&u);
    o
}

fn write_table(db: &DB, t: u32, keys: u32) {
    for i in 0..keys {
        db.put(format!("k{:06}", (i * 7919 + t) % 5000), format!("t{t}-{i}")).unwrap();
    }
    db.flush().unwrap();
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

fn levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().iter().map(|f| f.level).collect();
    l.sort();
    l
}

fn expected(tables: u32, keys: u32) -> std::collections::BTreeMap<String, String> {
    expected_of(&(0..tables).map(|t| (t, keys)).collect::<Vec<_>>())
}

/// What tables `(t, keys)` written in order hold together.
fn expected_of(spec: &[(u32, u32)]) -> std::collections::BTreeMap<String, String> {
    let mut m = std::collections::BTreeMap::new();
    for &(t, keys) in spec {
        for i in 0..keys {
            m.insert(format!("k{:06}", (i * 7919 + t) % 5000), format!("t{t}-{i}"));
        }
    }
    m
}

fn check(db: &DB, m: &std::collections::BTreeMap<String, String>) {
    let got: Vec<(String, String)> = db
        .iterator(shale::IteratorMode::Start)
        .map(|r| {
            let (k, v) = r.unwrap();
            (String::from_utf8(k.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())
        })
        .collect();
    let want: Vec<(String, String)> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got, want);
}

#[test]
fn runs_settle_in_the_bottom_levels() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&universal(7), dir.path()).unwrap();
    for t in 0..4 {
        write_table(&db, t, 400);
    }
    wait(&db);
    assert_eq!(levels(&db), vec![6], "four runs: the first compaction writes the last level");
    // Small new runs merge above the big one (size ratio), into level 5.
    for t in 4..7 {
        write_table(&db, t, 20);
    }
    wait(&db);
    let l = levels(&db);
    assert!(l.contains(&6) && l.iter().all(|&x| x == 5 || x == 6), "levels {l:?}");
    let spec: Vec<(u32, u32)> = (0..7).map(|t| (t, if t < 4 { 400 } else { 20 })).collect();
    check(&db, &expected_of(&spec));
    db.compact_range(Some("k000100"), Some("k000200"));
    assert_eq!(levels(&db), vec![6], "compact_range takes everything into the last level");
}

#[test]
fn a_single_level_keeps_every_run_in_level_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&universal(1), dir.path()).unwrap();
    for t in 0..9 {
        write_table(&db, t, 300);
        wait(&db);
    }
    let l = levels(&db);
    assert!(l.iter().all(|&x| x == 0), "levels {l:?}");
    assert!(l.len() < 9, "runs were merged: {l:?}");
    check(&db, &expected(9, 300));
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(levels(&db), vec![0]);
    check(&db, &expected(9, 300));
    drop(db);

    let dir = tempfile::tempdir().unwrap();
    let mut o = universal(1);
    o.set_compaction_style(DBCompactionStyle::Fifo);
    let mut f = FifoCompactOptions::default();
    f.set_allow_compaction(true);
    o.set_fifo_compaction_options(&f);
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 0..6 {
        write_table(&db, t, 300);
        wait(&db);
    }
    check(&db, &expected(6, 300));
    assert!(levels(&db).iter().all(|&x| x == 0));
    drop(db);
    // The leveled style still needs two levels: RocksDB's SanitizeCfOptions raises
    // num_levels 1 to 2 (issue 33: Shale refused it), and a manual compaction moves the
    // data to level 1.
    let mut o = universal(1);
    o.set_compaction_style(DBCompactionStyle::Level);
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    write_table(&db, 0, 300);
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(levels(&db), vec![1]);
    check(&db, &expected(1, 300));
}

#[test]
fn leveled_to_universal_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut lev = Options::default();
    lev.create_if_missing(true);
    lev.set_compression_type(DBCompressionType::None);
    lev.set_write_buffer_size(16 << 10);
    lev.set_max_bytes_for_level_base(32 << 10);
    lev.set_target_file_size_base(8 << 10);
    {
        let db = DB::open(&lev, dir.path()).unwrap();
        for t in 0..6 {
            write_table(&db, t, 500);
        }
        wait(&db);
        assert!(levels(&db).iter().any(|&l| l > 0));
    }
    {
        let db = DB::open(&universal(7), dir.path()).unwrap();
        check(&db, &expected(6, 500));
        for t in 6..10 {
            write_table(&db, t, 500);
        }
        wait(&db);
        check(&db, &expected(10, 500));
    }
    let db = DB::open(&lev, dir.path()).unwrap();
    check(&db, &expected(10, 500));
    write_table(&db, 10, 500);
    wait(&db);
    check(&db, &expected(11, 500));
}
