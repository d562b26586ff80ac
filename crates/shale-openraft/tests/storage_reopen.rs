//! Scenario: the adapter's state survives closing and reopening the engines, checked against
//! an in-memory model (openraft's suite never reopens a store).
//!
//! Random appends (with overwrites of the tail, as a follower does on a conflict), truncations,
//! purges, vote and committed saves, state-machine applies, snapshot builds and installs;
//! after every few steps both engines are closed and reopened, and the log state, every entry,
//! the vote, the committed id, the applied state and the current snapshot must equal the
//! model's. Several seeds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;

use openraft::storage::{RaftLogReader, RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{CommittedLeaderId, Entry, EntryPayload, LogId, Membership, RaftSnapshotBuilder, Vote};
use rand::{Rng, SeedableRng};
use shale_openraft::{open_storage, NodeId, Request, ShaleLogStore, ShaleStateMachine, TypeConfig};

fn lid(term: u64, index: u64) -> LogId<NodeId> {
    LogId::new(CommittedLeaderId::new(term, 0), index)
}

fn entry(term: u64, index: u64, rng: &mut impl Rng) -> Entry<TypeConfig> {
    let payload = match rng.gen_range(0..10) {
        0 => EntryPayload::Blank,
        1 => EntryPayload::Membership(Membership::new(vec![[1u64, 2, 3].into_iter().collect()], None)),
        _ => EntryPayload::Normal(Request::Set {
            key: format!("k{}", rng.gen_range(0..50)),
            value: format!("v{index}"),
        }),
    };
    Entry { log_id: lid(term, index), payload }
}

struct Model {
    log: BTreeMap<u64, LogId<NodeId>>,
    purged: Option<LogId<NodeId>>,
    vote: Option<Vote<NodeId>>,
    committed: Option<LogId<NodeId>>,
    term: u64,
}

async fn check(log: &mut ShaleLogStore, m: &Model) {
    let st = log.get_log_state().await.expect("log state");
    assert_eq!(st.last_purged_log_id, m.purged);
    let last = m.log.values().next_back().copied().or(m.purged);
    assert_eq!(st.last_log_id, last);
    let got: Vec<LogId<NodeId>> =
        log.try_get_log_entries(0..).await.expect("entries").iter().map(|e| e.log_id).collect();
    let want: Vec<LogId<NodeId>> = m.log.values().copied().collect();
    assert_eq!(got, want);
    assert_eq!(log.read_vote().await.expect("vote"), m.vote);
    assert_eq!(log.read_committed().await.expect("committed"), m.committed);
}

async fn run(seed: u64, dir: &std::path::Path) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (mut log, mut sm): (ShaleLogStore, ShaleStateMachine) = open_storage(dir, 7).expect("open");
    let mut m = Model { log: BTreeMap::new(), purged: None, vote: None, committed: None, term: 1 };
    let mut sm_model: BTreeMap<String, String> = BTreeMap::new();
    let mut applied: Option<LogId<NodeId>> = None;
    let mut snapshot_meta = None;
    for step in 0..200 {
        match rng.gen_range(0..10) {
            0..=4 => {
                // Append, sometimes overwriting the tail with a newer term.
                let next =
                    m.log.keys().next_back().map(|i| i + 1).or(m.purged.map(|p| p.index + 1)).unwrap_or(0);
                let low = m.purged.map(|p| p.index + 1).unwrap_or(0);
                let from = if next > low && rng.gen_bool(0.2) {
                    m.term += 1;
                    rng.gen_range(low..next)
                } else {
                    next
                };
                let n = rng.gen_range(1..20);
                let entries: Vec<_> = (from..from + n).map(|i| entry(m.term, i, &mut rng)).collect();
                m.log.retain(|&i, _| i < from);
                for e in &entries {
                    m.log.insert(e.log_id.index, e.log_id);
                }
                log.blocking_append(entries).await.expect("append");
            }
            5 => {
                if let Some((&first, _)) = m.log.iter().next() {
                    let last = *m.log.keys().next_back().expect("last");
                    let at = rng.gen_range(first..=last);
                    let id = m.log[&at];
                    log.truncate(id).await.expect("truncate");
                    m.log.retain(|&i, _| i < at);
                }
            }
            6 => {
                if let Some((&first, _)) = m.log.iter().next() {
                    let last = *m.log.keys().next_back().expect("last");
                    let at = rng.gen_range(first..=last);
                    let id = m.log[&at];
                    log.purge(id).await.expect("purge");
                    m.log.retain(|&i, _| i > at);
                    m.purged = Some(id);
                }
            }
            7 => {
                let v = Vote::new(m.term, rng.gen_range(0..3));
                log.save_vote(&v).await.expect("vote");
                m.vote = Some(v);
                let c = m.log.values().next().copied();
                log.save_committed(c).await.expect("committed");
                m.committed = c;
            }
            8 => {
                // Apply the next entries of the log to the state machine.
                let from = applied.map(|a| a.index + 1).unwrap_or(0);
                let entries = log.try_get_log_entries(from..from + 10).await.expect("read for apply");
                for e in &entries {
                    if let EntryPayload::Normal(Request::Set { key, value }) = &e.payload {
                        sm_model.insert(key.clone(), value.clone());
                    }
                }
                if let Some(e) = entries.last() {
                    applied = Some(e.log_id);
                }
                sm.apply(entries).await.expect("apply");
            }
            _ => {
                if rng.gen_bool(0.5) {
                    let s = sm.get_snapshot_builder().await.build_snapshot().await.expect("build");
                    assert_eq!(s.meta.last_log_id, applied);
                    snapshot_meta = Some(s.meta);
                } else if let Some(s) = sm.get_current_snapshot().await.expect("current") {
                    // Install the current snapshot into a fresh state machine and compare.
                    let other = tempfile::tempdir().expect("dir");
                    let mut sm2 = ShaleStateMachine::open(other.path()).expect("open");
                    sm2.apply([entry(1, 0, &mut rng)]).await.expect("apply junk");
                    sm2.install_snapshot(&s.meta, s.snapshot).await.expect("install");
                    assert_eq!(sm2.applied_state().await.expect("applied").0, s.meta.last_log_id);
                    let snap_meta = sm2.get_current_snapshot().await.expect("current").expect("some").meta;
                    assert_eq!(Some(snap_meta), snapshot_meta);
                    let junk_gone = sm2.get(b"k0").expect("get");
                    assert_eq!(junk_gone.is_some(), snapshot_has_k0(&sm).await);
                }
            }
        }
        if step % 17 == 16 {
            drop(log);
            drop(sm);
            (log, sm) = open_storage(dir, 7).expect("reopen");
        }
        check(&mut log, &m).await;
        assert_eq!(sm.applied_state().await.expect("applied").0, applied, "seed {seed} step {step}");
        let kv: BTreeMap<String, String> = sm
            .scan()
            .expect("scan")
            .into_iter()
            .map(|(k, v)| (String::from_utf8(k).expect("utf8"), String::from_utf8(v).expect("utf8")))
            .collect();
        assert_eq!(kv, sm_model, "seed {seed} step {step}");
        let cur = sm.get_current_snapshot().await.expect("current").map(|s| s.meta);
        assert_eq!(cur, snapshot_meta, "seed {seed} step {step}");
    }
}

/// Whether the current snapshot of `sm` holds key k0.
async fn snapshot_has_k0(sm: &ShaleStateMachine) -> bool {
    let mut sm = sm.clone();
    let s = sm.get_current_snapshot().await.expect("current").expect("some");
    let mut found = false;
    shale_openraft::snapshot_format::decode(s.snapshot.get_ref(), |k, _| found |= k == b"k0")
        .expect("decode");
    found
}

#[test]
fn storage_survives_reopen() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for seed in 0..4 {
        let dir = tempfile::tempdir().expect("dir");
        rt.block_on(run(seed, dir.path()));
    }
}
