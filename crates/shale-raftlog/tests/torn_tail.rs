//! A torn last batch (the tail of the newest file cut off mid-batch, as a crash during a
//! write leaves it) in each recovery mode: AbsoluteConsistency refuses, naming file and
//! offset; the tolerant modes cut the damage off on disk, so later opens (when that file is
//! no longer the newest) still succeed with the same content; stale repair files go away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale_raftlog::{Config, Engine, LogBatch, RecoveryMode};

fn write_some(cfg: &Config) -> Vec<String> {
    let e = Engine::open(cfg.clone()).unwrap();
    for i in 0..20u64 {
        let mut b = LogBatch::default();
        b.add_raw_entries(1, i + 1, &[vec![i as u8; 100 + i as usize]]).unwrap();
        b.put(2, format!("k{i}").into_bytes(), vec![b'v'; 10]).unwrap();
        e.write(&mut b, true).unwrap();
    }
    drop(e);
    let mut names: Vec<String> = std::fs::read_dir(&cfg.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".raftlog"))
        .collect();
    names.sort();
    names
}

#[test]
fn torn_tail_in_each_mode() {
    for mode in [
        RecoveryMode::AbsoluteConsistency,
        RecoveryMode::TolerateTailCorruption,
        RecoveryMode::TolerateAnyCorruption,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cfg =
            Config { dir: dir.path().to_str().unwrap().to_owned(), recovery_mode: mode, ..Config::default() };
        let names = write_some(&cfg);
        let last = dir.path().join(names.last().unwrap());
        let len = std::fs::metadata(&last).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&last).unwrap().set_len(len - 5).unwrap();
        std::fs::write(dir.path().join("0000000000000001.raftlog.tmp"), b"leftover").unwrap();
        match mode {
            RecoveryMode::AbsoluteConsistency => {
                let err = Engine::open(cfg.clone()).err().expect("refused");
                let msg = err.to_string();
                assert!(
                    msg.starts_with("Corruption:")
                        && msg.contains(names.last().unwrap())
                        && msg.contains("offset"),
                    "{msg}"
                );
            }
            _ => {
                for round in 0..2 {
                    let e = Engine::open(cfg.clone()).unwrap();
                    // The last batch (entry 20, key k19) is gone, everything before it is there.
                    // Round 1 also sees what round 0 wrote after recovering.
                    assert_eq!(e.last_index(1), Some(19 + round), "{mode:?} round {round}");
                    assert_eq!(e.get_raw_entry(1, 19).unwrap(), Some(vec![18u8; 118]));
                    assert_eq!(e.get(2, b"k18"), Some(vec![b'v'; 10]));
                    assert_eq!(e.get(2, b"k19"), None);
                    let mut b = LogBatch::default();
                    b.add_raw_entries(1, 20 + round, &[b"after".to_vec()]).unwrap();
                    e.write(&mut b, true).unwrap();
                }
                assert!(
                    !dir.path().join("0000000000000001.raftlog.tmp").exists(),
                    "stale repair file removed"
                );
            }
        }
    }
}
