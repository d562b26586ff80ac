//! Recovery index files (`Config::recovery_index_files`): a random workload with rotation,
//! rewrites and purges, reopened with the option on and off, reads as the model says;
//! the index files are what recovery reads (a damaged footer in a sealed log file goes
//! unseen with them, and is refused without); damaged, stale and orphaned index files are
//! ignored or removed, never trusted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::path::Path;

use shale_raftlog::{Config, Engine, RecoveryMode};
use util::{batch_of, check, small_config, Model, Workload};

fn names(dir: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

fn cfg(dir: &Path, index: bool) -> Config {
    Config {
        recovery_index_files: index,
        recovery_mode: RecoveryMode::AbsoluteConsistency,
        ..small_config(dir.to_str().unwrap())
    }
}

fn reopen_and_check(dir: &Path, index: bool, m: &Model, ctx: &str) {
    let e = Engine::open(cfg(dir, index)).unwrap();
    check(&e, m, ctx);
}

#[test]
fn index_files_recover_the_same_state_and_bad_ones_are_not_trusted() {
    for seed in [1u64, 2, 3] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut m = Model::default();
        let mut w = Workload::new(seed, 6);
        for round in 0..4 {
            let e = Engine::open(cfg(dir, true)).unwrap();
            for i in 0..300 {
                let op = w.next(&m);
                e.write(&mut batch_of(&op), i % 50 == 0).unwrap();
                m.apply(&op);
                if i % 100 == 99 {
                    e.purge_expired_files().unwrap();
                }
            }
            e.sync().unwrap();
            check(&e, &m, &format!("seed {seed} round {round} live"));
            drop(e);
            // Every sealed log file but the newest (the last active one) has its index.
            let logs = names(dir, ".raftlog");
            let rewrites = names(dir, ".rewrite");
            let idx = names(dir, ".idx");
            assert!(
                logs.len() >= 2 && !idx.is_empty(),
                "seed {seed}: the workload rotates files: {logs:?} {idx:?}"
            );
            for l in
                logs[..logs.len() - 1].iter().chain(rewrites.iter().take(rewrites.len().saturating_sub(1)))
            {
                assert!(
                    idx.contains(&format!("{l}.idx")),
                    "seed {seed} round {round}: no index for {l}: {idx:?}"
                );
            }
            for i in &idx {
                let log = i.strip_suffix(".idx").unwrap();
                assert!(dir.join(log).exists(), "seed {seed}: index {i} outlived its log file");
            }
            reopen_and_check(dir, true, &m, &format!("seed {seed} round {round} index on"));
            reopen_and_check(dir, false, &m, &format!("seed {seed} round {round} index off"));
        }
        // After a reopen with the option on, the previously active file is indexed too.
        reopen_and_check(dir, true, &m, "indexing the last file");
        let logs = names(dir, ".raftlog");
        let idx = names(dir, ".idx");
        let sealed_with_batches: Vec<&String> =
            logs.iter().filter(|l| std::fs::metadata(dir.join(l)).unwrap().len() > 69).collect();
        for l in &sealed_with_batches {
            assert!(idx.contains(&format!("{l}.idx")), "seed {seed}: {l} not indexed after reopen");
        }

        // The index is what recovery reads: damage to the first batch footer of a sealed
        // log file (one of several batches, so not the last footer, which the index is
        // checked against) is not seen with it, and refused without it.
        let hdr = 69usize; // V2 file header
        let first_batch = |b: &[u8]| {
            let len_type = u64::from_be_bytes(b[hdr..hdr + 8].try_into().unwrap());
            let footer = u64::from_be_bytes(b[hdr + 8..hdr + 16].try_into().unwrap());
            ((len_type >> 8) as usize, footer as usize)
        };
        let (victim_name, mut bytes) = sealed_with_batches
            .iter()
            .map(|n| (n.to_string(), std::fs::read(dir.join(n)).unwrap()))
            .find(|(_, b)| hdr + first_batch(b).0 < b.len())
            .expect("a sealed file with two batches");
        let victim = dir.join(&victim_name);
        let at = hdr + first_batch(&bytes).1;
        bytes[at] ^= 0x40;
        std::fs::write(&victim, &bytes).unwrap();
        let refused = Engine::open(cfg(dir, false));
        assert!(refused.is_err(), "seed {seed}: a damaged footer is refused when scanning");
        let msg = refused.err().unwrap().to_string();
        assert!(msg.contains(&victim_name), "seed {seed}: the error names the file: {msg}");
        reopen_and_check(dir, true, &m, &format!("seed {seed}: footer damage behind a good index"));
        bytes[at] ^= 0x40;
        std::fs::write(&victim, &bytes).unwrap();
        let idx_path = dir.join(format!("{victim_name}.idx"));
        let good_idx = std::fs::read(&idx_path).unwrap();

        // A damaged index: scanned instead (and rewritten).
        let mut bad = good_idx.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        std::fs::write(&idx_path, &bad).unwrap();
        reopen_and_check(dir, true, &m, &format!("seed {seed}: damaged index"));
        assert_eq!(std::fs::read(&idx_path).unwrap(), good_idx, "seed {seed}: index rewritten by the scan");
        // A truncated one.
        std::fs::write(&idx_path, &good_idx[..good_idx.len() - 9]).unwrap();
        reopen_and_check(dir, true, &m, &format!("seed {seed}: truncated index"));
        // Another file's index under this name (checksum good, content stale).
        let other_name = sealed_with_batches.iter().find(|n| n.as_str() != victim_name).unwrap();
        let other = dir.join(format!("{other_name}.idx"));
        std::fs::copy(&other, &idx_path).unwrap();
        reopen_and_check(dir, true, &m, &format!("seed {seed}: another file's index"));
        assert_eq!(std::fs::read(&idx_path).unwrap(), good_idx, "seed {seed}: stale index replaced");
        // An orphan goes away.
        let orphan = dir.join("0000000000009999.raftlog.idx");
        std::fs::write(&orphan, b"left over").unwrap();
        reopen_and_check(dir, true, &m, &format!("seed {seed}: orphan"));
        assert!(!orphan.exists(), "seed {seed}: orphaned index removed");
    }
}
