//! `writable_file_max_buffer_size`: a database whose files buffer nothing (0) or 4 KiB
//! writes, flushes, compacts and reads back the same data as with RocksDB's default, and
//! its OPTIONS file records the size under RocksDB's name.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, DB};

#[test]
fn small_and_zero_buffers_keep_the_data() {
    for max in [0u64, 4096] {
        let tmp = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_writable_file_max_buffer_size(max);
        {
            let db = DB::open(&o, tmp.path()).unwrap();
            for round in 0..3u32 {
                for i in 0..500u32 {
                    db.put(format!("k{i:05}"), format!("v{round}-{i}-{}", "x".repeat(50))).unwrap();
                }
                db.flush().unwrap();
            }
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
            db.put(b"wal-only", b"w").unwrap();
        }
        let db = DB::open(&o, tmp.path()).unwrap();
        for i in (0..500u32).step_by(37) {
            let want = format!("v2-{i}-{}", "x".repeat(50));
            assert_eq!(db.get(format!("k{i:05}")).unwrap().as_deref(), Some(want.as_bytes()), "max {max}");
        }
        assert_eq!(db.get(b"wal-only").unwrap().as_deref(), Some(&b"w"[..]));
        drop(db);
        let options = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.starts_with("OPTIONS-"))
            .unwrap();
        let text = std::fs::read_to_string(tmp.path().join(options)).unwrap();
        assert!(text.contains(&format!("writable_file_max_buffer_size={max}\n")), "{text}");
    }
}
