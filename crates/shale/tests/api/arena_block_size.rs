//! `arena_block_size` acts: the memtable's arena takes blocks of the set size, which a
//! write buffer manager is charged by; and the OPTIONS file records the sanitized size.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, WriteBufferManager, DB};

/// The manager's usage after 40 entries of about 250 bytes (10 KiB: one block).
fn charged_with(arena_block_size: Option<usize>) -> (usize, String) {
    let dir = tempfile::tempdir().unwrap();
    let wbm = WriteBufferManager::new_write_buffer_manager(1 << 30, false);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 20);
    o.set_write_buffer_manager(&wbm);
    if let Some(n) = arena_block_size {
        o.set_arena_block_size(n);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..40u32 {
        db.put(format!("k{i:04}"), [7u8; 200]).unwrap();
    }
    let usage = wbm.get_usage();
    drop(db);
    let options_file = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    (usage, std::fs::read_to_string(options_file).unwrap())
}

#[test]
fn arena_blocks_have_the_set_size() {
    // Default: 64 MiB / 8, at most 1 MiB.
    let (usage, file) = charged_with(None);
    assert_eq!(usage, 1 << 20, "one 1 MiB block");
    assert!(file.contains("arena_block_size=1048576\n"), "{file}");

    let (usage, file) = charged_with(Some(64 << 10));
    assert_eq!(usage, 64 << 10, "one 64 KiB block");
    assert!(file.contains("arena_block_size=65536\n"), "{file}");

    // Rounded up to a multiple of 4 KiB, as RocksDB sanitizes it.
    let (usage, file) = charged_with(Some(50_000));
    assert_eq!(usage, 53_248);
    assert!(file.contains("arena_block_size=53248\n"), "{file}");
}
