//! Universal compaction's `incremental` (RocksDB 11.8.1's EXPERIMENTAL
//! `compaction_options_universal.incremental`): a size-amplification compaction takes a
//! window of the last two runs' files of about `max_compaction_bytes`
//! (`PickIncrementalForReduceSizeAmp`) instead of both runs whole; outputs below level 0 are
//! cut at `target_file_size_base` (RocksDB's `MaxFileSizeForLevel`), so a run has files to
//! choose from. The option is kept in the OPTIONS file and changes with `set_options`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::Path;

use shale::{Cache, DBCompactionStyle, DBCompressionType, Env, Options, WaitForCompactOptions, DB};

const MAX_COMPACTION_BYTES: u64 = 128 << 10;

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_compaction_style(DBCompactionStyle::Universal);
    o.set_level_zero_file_num_compaction_trigger(4);
    o.set_target_file_size_base(8 << 10);
    o.set_max_compaction_bytes(MAX_COMPACTION_BYTES);
    o
}

/// Table `t`: 1000 keys spread over the key space, 100-byte values.
fn write_table(db: &DB, t: u32, m: &mut BTreeMap<String, String>) {
    for i in 0..1000u32 {
        let k = format!("k{:06}", (i * 7919 + t * 131) % 50_000);
        let v = format!("{t:04}-{i:04}-{}", "x".repeat(90));
        db.put(&k, &v).unwrap();
        m.insert(k, v);
    }
    db.flush().unwrap();
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

/// One compaction started: its input levels with their file counts, and its input bytes.
type Started = (BTreeMap<u32, usize>, u64);

/// Per compaction started (the LOG's EVENT_LOG_v1 `compaction_started`), in order.
fn compactions(dir: &Path) -> Vec<Started> {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    log.lines()
        .filter(|l| l.contains("\"compaction_started\""))
        .map(|l| {
            let mut levels = BTreeMap::new();
            for part in l.split("\"files_L").skip(1) {
                let level: u32 = part[..part.find('"').unwrap()].parse().unwrap();
                let list = &part[part.find('[').unwrap() + 1..part.find(']').unwrap()];
                let n = list.split(',').filter(|s| !s.trim().is_empty()).count();
                levels.insert(level, n);
            }
            let bytes = l.split("\"input_data_size\": ").nth(1).unwrap();
            let bytes: u64 = bytes[..bytes.find(|c: char| !c.is_ascii_digit()).unwrap()].parse().unwrap();
            (levels, bytes)
        })
        .collect()
}

/// Runs in level 6 (tables 0-3) and level 5 (tables 4-6), then size amplification made due
/// (`max_size_amplification_percent` 50, a trigger of 2) with `incremental` as given and one
/// more table; returns the compactions after that point and how many files level 6 held.
fn run(incremental: bool) -> (Vec<Started>, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&options(), &dir).unwrap();
    let mut m = BTreeMap::new();
    for t in 0..7 {
        write_table(&db, t, &mut m);
        wait(&db);
    }
    let files_at = |db: &DB, level: i32| db.live_files().unwrap().iter().filter(|f| f.level == level).count();
    let l6 = files_at(&db, 6);
    assert!(
        l6 > 8 && files_at(&db, 5) > 4,
        "runs in levels 5 and 6 of many files: {:?}",
        db.live_files().unwrap().iter().map(|f| f.level).collect::<Vec<_>>()
    );
    let before = compactions(&dir).len();
    db.set_options(&[
        ("level0_file_num_compaction_trigger", "2"),
        (
            "compaction_options_universal",
            &format!("{{max_size_amplification_percent=50;incremental={incremental}}}"),
        ),
    ])
    .unwrap();
    write_table(&db, 7, &mut m);
    wait(&db);
    // Every key reads back as last written.
    let got: BTreeMap<String, String> = db
        .iterator(shale::IteratorMode::Start)
        .map(|r| {
            let (k, v) = r.unwrap();
            (String::from_utf8(k.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())
        })
        .collect();
    assert!(got == m, "{} keys read, {} written", got.len(), m.len());
    drop(db);
    let all = compactions(&dir);
    (all[before..].to_vec(), l6)
}

#[test]
fn incremental_size_amplification_compacts_a_window_under_max_compaction_bytes() {
    let (full, l6) = run(false);
    // Without it: the size-amplification compaction takes every run whole.
    let first = &full[0];
    assert_eq!(first.0.get(&6), Some(&l6), "{full:?}");
    assert!(first.1 > MAX_COMPACTION_BYTES, "{full:?}");

    let (incr, l6) = run(true);
    // With it: compactions of part of levels 5 and 6, each under max_compaction_bytes.
    let partial: Vec<_> =
        incr.iter().filter(|(levels, _)| levels.contains_key(&5) && levels.contains_key(&6)).collect();
    assert!(!partial.is_empty(), "{incr:?}");
    for (levels, bytes) in &partial {
        assert!(levels[&6] < l6, "a part of level 6: {incr:?}");
        assert!(!levels.contains_key(&0), "level 0 is never split: {incr:?}");
        assert!(*bytes <= MAX_COMPACTION_BYTES, "{bytes} input bytes: {incr:?}");
    }
}

/// The OPTIONS file keeps `incremental=true`, and a database reopened from it (RocksDB's
/// LoadLatestOptions path) has it; `set_options` turns it off and on.
#[test]
fn incremental_in_the_options_file_and_set_options() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = options().get_options_from_string("compaction_options_universal={incremental=true}").unwrap();
    let db = DB::open(&o, &dir).unwrap();
    let options_file = |dir: &Path| {
        let name = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("OPTIONS-"))
            .max()
            .unwrap();
        std::fs::read_to_string(dir.join(name)).unwrap()
    };
    let universal_line = |text: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with("compaction_options_universal="))
            .unwrap()
            .to_string()
    };
    assert!(universal_line(&options_file(&dir)).contains("incremental=true"), "{}", options_file(&dir));
    db.set_options(&[("compaction_options_universal", "{incremental=false}")]).unwrap();
    assert!(universal_line(&options_file(&dir)).contains("incremental=false"));
    db.set_options(&[("compaction_options_universal", "{incremental=true}")]).unwrap();
    let line = universal_line(&options_file(&dir));
    assert!(line.contains("incremental=true"), "{line}");
    drop(db);
    // Read back from the file: a database opened with the loaded options writes it again.
    let (mut loaded, _) =
        Options::load_latest(&dir, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    loaded.create_if_missing(true);
    let other = tmp.path().join("other");
    drop(DB::open(&loaded, &other).unwrap());
    assert!(universal_line(&options_file(&other)).contains("incremental=true"));
}
