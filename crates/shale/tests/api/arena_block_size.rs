//! `arena_block_size` acts: the memtable's arena takes blocks of the set size, which a
//! write buffer manager is charged by; and the OPTIONS file records the sanitized size.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, WriteBufferManager, DB};

/// The manager's usage after 40 entries of about 250 bytes (10 KiB: one block).
fn charged_with(arena_block_size: Option<usize>) -> (usize, String) {
    charged_with_huge(arena_block_size, 0)
}

/// As `charged_with`, with `memtable_huge_page_size` set to `huge`.
fn charged_with_huge(arena_block_size: Option<usize>, huge: usize) -> (usize, String) {
    let dir = tempfile::tempdir().unwrap();
    let wbm = WriteBufferManager::new_write_buffer_manager(1 << 30, false);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 20);
    o.set_write_buffer_manager(&wbm);
    if let Some(n) = arena_block_size {
        o.set_arena_block_size(n);
    }
    if huge > 0 {
        o.set_memtable_huge_page_size(huge);
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

/// The arena's first block is 4 KiB (the memtable of an idle family among thousands costs
/// little); the 40 entries outgrow it, and the next block has the set size.
const FIRST_BLOCK: usize = 4096;

#[test]
fn arena_blocks_have_the_set_size() {
    // Default: 64 MiB / 8, at most 1 MiB.
    let (usage, file) = charged_with(None);
    assert_eq!(usage, FIRST_BLOCK + (1 << 20), "the first block, then one 1 MiB block");
    assert!(file.contains("arena_block_size=1048576\n"), "{file}");

    let (usage, file) = charged_with(Some(64 << 10));
    assert_eq!(usage, FIRST_BLOCK + (64 << 10), "the first block, then one 64 KiB block");
    assert!(file.contains("arena_block_size=65536\n"), "{file}");

    // Rounded up to a multiple of 4 KiB, as RocksDB sanitizes it.
    let (usage, file) = charged_with(Some(50_000));
    assert_eq!(usage, FIRST_BLOCK + 53_248);
    assert!(file.contains("arena_block_size=53248\n"), "{file}");
}

/// `memtable_huge_page_size`: the memtable's blocks are 2 MiB huge pages when the system has
/// free ones (the manager is charged the huge block), and ordinary blocks of the set size
/// when it has none (RocksDB's fallback); the OPTIONS file records the option either way.
#[test]
fn memtable_huge_page_size_takes_huge_pages_or_falls_back() {
    let free_huge_pages = std::fs::read_to_string("/proc/meminfo")
        .map(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("HugePages_Free:").map(|v| v.trim().parse::<u64>().unwrap()))
                .unwrap_or(0)
        })
        .unwrap_or(0);
    let (usage, file) = charged_with_huge(Some(64 << 10), 2 << 20);
    assert!(file.contains("memtable_huge_page_size=2097152\n"), "{file}");
    if free_huge_pages == 0 || !cfg!(target_os = "linux") {
        assert_eq!(usage, 64 << 10, "no huge pages free: one ordinary 64 KiB block");
    } else {
        assert_eq!(usage, 2 << 20, "{free_huge_pages} huge pages free: one 2 MiB huge block");
    }
}
