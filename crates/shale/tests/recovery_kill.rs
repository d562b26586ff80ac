//! Recovery after kill -9: a child process writes with `sync = true` and reports each
//! acknowledged write on stdout; the parent kills it with SIGKILL mid-stream, reopens the
//! database and checks that every acknowledged write is there with its value.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shale::{Options, WriteBatch, WriteOptions, DB};

const CHILD_ENV: &str = "SHALE_RECOVERY_CHILD_DB";

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 * 1024); // flushes happen while the child writes
    o
}

/// Runs only inside the child: writes until killed.
#[test]
fn child_writer() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    let start: u64 = std::env::var("SHALE_RECOVERY_START").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let db = DB::open(&opts(), &path).unwrap();
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    for i in start.. {
        if i.is_multiple_of(10) {
            let mut b = WriteBatch::default();
            b.put(format!("k{i:08}"), format!("v{i}"));
            b.put(format!("b{i:08}"), format!("batch{i}"));
            db.write_opt(b, &wo).unwrap();
        } else {
            db.put_opt(format!("k{i:08}"), format!("v{i}").repeat(1 + (i % 5) as usize), &wo).unwrap();
        }
        println!("ack {i}");
    }
}

fn expected_value(i: u64) -> String {
    if i.is_multiple_of(10) {
        format!("v{i}")
    } else {
        format!("v{i}").repeat(1 + (i % 5) as usize)
    }
}

#[test]
fn acknowledged_sync_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let exe = std::env::current_exe().unwrap();
    let mut next = 0u64;
    for round in 0..3 {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .env("SHALE_RECOVERY_START", next.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let mut acked: Vec<u64> = Vec::new();
        let want = 300 + round * 200;
        let deadline = Instant::now() + Duration::from_secs(60);
        for line in BufReader::new(out).lines() {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("ack ") {
                acked.push(n.trim().parse().unwrap());
            }
            if acked.len() >= want || Instant::now() > deadline {
                break;
            }
        }
        // SIGKILL: no destructor, no flush, no close.
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(acked.len() >= 50, "child acknowledged only {} writes", acked.len());

        let db = DB::open(&opts(), &path).unwrap();
        for &i in &acked {
            let k = format!("k{i:08}");
            assert_eq!(
                db.get(&k).unwrap().map(|v| String::from_utf8(v).unwrap()),
                Some(expected_value(i)),
                "round {round}: acknowledged write {k} lost"
            );
            if i.is_multiple_of(10) {
                assert_eq!(db.get(format!("b{i:08}")).unwrap(), Some(format!("batch{i}").into_bytes()));
            }
        }
        // Batches are all or nothing even for the unacknowledged tail.
        let mut it = db.raw_iterator();
        it.seek(b"b");
        while let Some(k) = it.key() {
            if !k.starts_with(b"b") {
                break;
            }
            let i: u64 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
            assert!(db.get(format!("k{i:08}")).unwrap().is_some(), "half a batch at {i}");
            it.next();
        }
        drop(it);
        next = acked.last().copied().unwrap_or(next) + 1_000;
        drop(db);
    }
}

const DIRECT_CHILD_ENV: &str = "SHALE_RECOVERY_DIRECT_CHILD_DB";

/// Blob direct write (RocksDB 11.8.1's `enable_blob_direct_write`, two partitions):
/// values of 100 bytes or more go to blob files as they are written.
fn direct_opts() -> Options {
    let mut o = opts();
    o.set_enable_blob_files(true);
    o.set_enable_blob_direct_write(true);
    o.set_blob_direct_write_partitions(2);
    o.set_min_blob_size(100);
    o.set_allow_concurrent_memtable_write(false);
    o
}

fn direct_value(i: u64) -> Vec<u8> {
    if i.is_multiple_of(3) {
        format!("s{i}").into_bytes()
    } else {
        format!("{i:0>400}").into_bytes()
    }
}

/// Runs only inside the child: writes with blob direct write until killed.
#[test]
fn direct_write_child_writer() {
    let Ok(path) = std::env::var(DIRECT_CHILD_ENV) else { return };
    let db = DB::open(&direct_opts(), &path).unwrap();
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    for i in 0u64.. {
        db.put_opt(format!("k{i:08}"), direct_value(i), &wo).unwrap();
        println!("ack {i}");
    }
}

/// After kill -9 with blob direct write, as RocksDB 11.8.1's v1 recovers: every
/// acknowledged write kept inline reads back; a blob-backed one reads back when a flush had
/// added its blob file to the MANIFEST, else fails with `Corruption: Invalid blob file
/// number` (the WAL's blob index names a file no Version holds).
#[test]
fn direct_write_after_kill_9_loses_only_unflushed_blob_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(&exe)
        .args(["--exact", "direct_write_child_writer", "--nocapture", "--test-threads=1"])
        .env(DIRECT_CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut acked: Vec<u64> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for line in BufReader::new(out).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("ack ") {
            acked.push(n.trim().parse().unwrap());
        }
        if acked.len() >= 3000 || Instant::now() > deadline {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(acked.len() >= 50, "child acknowledged only {} writes", acked.len());
    let blob_files = std::fs::read_dir(&path)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".blob"))
        .count();
    assert!(blob_files > 0, "blob files written while the child ran");

    let db = DB::open(&direct_opts(), &path).unwrap();
    let (mut blob_back, mut lost) = (0, 0);
    for &i in &acked {
        let k = format!("k{i:08}");
        match db.get(&k) {
            Ok(v) => {
                assert_eq!(v, Some(direct_value(i)), "acknowledged write {k}");
                if !i.is_multiple_of(3) {
                    blob_back += 1;
                }
            }
            Err(e) => {
                assert!(!i.is_multiple_of(3), "inline value {k} lost: {e}");
                assert_eq!(e.to_string(), "Corruption: Invalid blob file number", "{k}");
                lost += 1;
            }
        }
    }
    // The memtable holds blob indexes, so the 64 KiB write buffer fills slowly: the first
    // writes were flushed (their blob files added) and read back.
    assert!(blob_back > 0, "{blob_back} blob values read back, {lost} lost");
}
