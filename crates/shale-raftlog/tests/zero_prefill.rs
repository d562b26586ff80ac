//! Zero prefill on the real file system: while the engine runs, the active append file has
//! zeros written past its batches; sealed files end at their last batch; a copy of the
//! directory taken while the engine runs (a crash image: every write synced, the zero tail
//! there) opens in AbsoluteConsistency with everything, and the open cuts the zeros off.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::time::{Duration, Instant};

use shale_raftlog::{Config, Engine, LogBatch, ReadableSize, RecoveryMode};

mod util;
use util::{ends_in_zeros, entry, log_files};

#[test]
fn zero_prefill_ahead_sealed_cut_and_crash_image() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        dir: dir.path().join("db").to_str().unwrap().to_owned(),
        target_file_size: ReadableSize::kb(512),
        prefill_zeros_ahead: ReadableSize::kb(256),
        // Exclusive with the next file zeroed ahead, on by default.
        prefill_next_file: false,
        recovery_mode: RecoveryMode::AbsoluteConsistency,
        ..Config::default()
    };
    let e = Engine::open(cfg.clone()).unwrap();
    let n = 1200u64;
    for i in 1..=n {
        let mut b = LogBatch::default();
        b.add_raw_entries(1 + i % 3, i.div_ceil(3), &[entry(i)]).unwrap();
        e.write(&mut b, true).unwrap();
    }
    let files = log_files(Path::new(&cfg.dir));
    assert!(files.len() >= 2, "rotated: {files:?}");
    // Sealed files end at their last batch.
    for f in &files[..files.len() - 1] {
        assert!(!ends_in_zeros(f), "{} keeps a zero tail", f.display());
    }
    // The active file gets zeros ahead of its batches.
    let active = files.last().unwrap();
    let t0 = Instant::now();
    while !ends_in_zeros(active) {
        assert!(t0.elapsed() < Duration::from_secs(30), "no zeros ahead in {}", active.display());
        std::thread::sleep(Duration::from_millis(10));
    }
    // A crash image: the files as they are now.
    let image = dir.path().join("image");
    std::fs::create_dir(&image).unwrap();
    for f in &files {
        std::fs::copy(f, image.join(f.file_name().unwrap())).unwrap();
    }
    drop(e);
    // Dropped: the active file is cut too.
    for f in log_files(Path::new(&cfg.dir)) {
        assert!(!ends_in_zeros(&f), "{} keeps a zero tail after close", f.display());
    }
    let icfg = Config { dir: image.to_str().unwrap().to_owned(), ..cfg.clone() };
    let e = Engine::open(icfg).unwrap();
    for i in 1..=n {
        assert_eq!(e.get_raw_entry(1 + i % 3, i.div_ceil(3)).unwrap(), Some(entry(i)), "entry of batch {i}");
    }
    drop(e);
    let copied = image.join(active.file_name().unwrap());
    assert!(!ends_in_zeros(&copied), "recovery left the zero tail of {}", copied.display());
}
