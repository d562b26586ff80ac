//! `recycle_log_file_num` and kill -9: a child process writes with `sync = true` while small
//! memtables flush and WALs are reused (overwriting files full of older records); it is
//! killed mid-stream, and the reopened database holds every acknowledged write, each key
//! at its last acknowledged value or the one in flight, never an older one.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shale::{Options, WriteOptions, DB};

const CHILD_ENV: &str = "SHALE_RECYCLE_KILL_CHILD_DB";
const KEYS: u64 = 300;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 * 1024);
    o.set_recycle_log_file_num(4);
    o
}

fn value(i: u64) -> String {
    format!("{i:08}-").repeat(1 + (i % 7) as usize)
}

/// Runs only inside the child: overwrites KEYS keys round and round until killed.
#[test]
fn recycle_kill_child_writer() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    let start: u64 = std::env::var("SHALE_RECYCLE_KILL_START").unwrap().parse().unwrap();
    let db = DB::open(&opts(), &path).unwrap();
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    for i in start.. {
        db.put_opt(format!("k{:04}", i % KEYS), value(i), &wo).unwrap();
        println!("ack {i}");
    }
}

#[test]
fn acknowledged_writes_survive_kill_9_with_reused_wals() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let exe = std::env::current_exe().unwrap();
    let mut next = 0u64;
    for round in 0..3 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "wal_recycle_kill::recycle_kill_child_writer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .env("SHALE_RECYCLE_KILL_START", next.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let mut last = None;
        let mut acked = 0usize;
        let deadline = Instant::now() + Duration::from_secs(120);
        let log = path.join("LOG");
        for line in BufReader::new(out).lines() {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("ack ") {
                last = Some(n.trim().parse::<u64>().unwrap());
                acked += 1;
            }
            // Kill once WALs were reused and some writes went into a reused file.
            if acked >= 1000 && acked.is_multiple_of(200) {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.matches("from recycle list").count() >= 2 {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "round {round}: no WAL reuse after {acked} writes");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let last = last.expect("the child acknowledged nothing");
        let db = DB::open(&opts(), &path).unwrap();
        // Key k holds the value of its last acknowledged write, or of the one write after
        // `last` that may have reached the WAL before the kill.
        for i in last.saturating_sub(KEYS - 1)..=last {
            let k = format!("k{:04}", i % KEYS);
            let got = db.get(&k).unwrap().map(|v| String::from_utf8(v).unwrap());
            let in_flight = last + 1;
            let ok = got.as_deref() == Some(value(i).as_str())
                || (in_flight % KEYS == i % KEYS && got.as_deref() == Some(value(in_flight).as_str()));
            assert!(ok, "round {round}: {k} holds {got:?}, acknowledged {}", value(i));
        }
        next = last + 2;
        drop(db);
    }
}
