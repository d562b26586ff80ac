//! Model test of the write rules against raft-engine 0.4.2's memtable, written from its
//! source (`src/memtable.rs`: `MemTable::append`/`prepare_append`, `compact_to`,
//! `put`/`delete`, `MemTableAccessor::apply_append_writes`):
//!
//! - a batch's items apply in order; every item first creates its region's table
//!   (`get_or_insert`), a Clean removes it;
//! - append at `a` of n entries, table holding `first..=last`: `a < first` panics
//!   ("attempt to overwrite compacted entries"), `a > last + 1` panics ("memtable has a
//!   hole"), otherwise entries from `a` on are cut and the new ones pushed; a table without
//!   entries takes any `a` (its first index becomes `a`);
//! - compact to `i`: nothing without entries or when `i <= first`; otherwise the first
//!   `min(i - first, len)` entries go and the first index becomes `i`;
//! - put replaces, delete removes a key.
//!
//! Where raft-engine panics (after writing the batch), shale-raftlog refuses the whole
//! batch with InvalidArgument and changes nothing: the model does the same. One known
//! difference is left out of the comparison: raft-engine's `raft_groups()` also lists a
//! table an item created or emptied (until a reopen after its files are purged), where
//! shale-raftlog lists the groups holding entries or keys; so the model's regions are
//! compared, and counted, only when they hold something.
//!
//! proptest draws batches of appends (placed relative to the region's state at that point
//! of the batch: next, overlapping, fresh, with a hole, below the first index), compactions
//! (below, within and past the entries), puts, deletes and Cleans across four regions; the
//! engine runs them with purges (which rewrite) and reopens, and after every batch and
//! every reopen its state must equal the model's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use proptest::prelude::*;
use shale_raftlog::env::{FileSystem, MemFileSystem};
use shale_raftlog::{Command, Config, Engine, Error, FilePipeLog, LogBatch, ReadableSize};

/// One region's table, as raft-engine's `MemTable` (entries by value).
#[derive(Clone, Debug, Default, PartialEq)]
struct Table {
    first_index: u64,
    entries: VecDeque<Vec<u8>>,
    kvs: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Table {
    fn span(&self) -> Option<(u64, u64)> {
        if self.entries.is_empty() {
            None
        } else {
            Some((self.first_index, self.first_index + self.entries.len() as u64 - 1))
        }
    }

    /// `MemTable::append` with `prepare_append(a, allow_hole = false, allow_overwrite =
    /// false)`; Err where raft-engine panics.
    fn append(&mut self, a: u64, entries: &[Vec<u8>]) -> Result<(), String> {
        if entries.is_empty() {
            return Ok(());
        }
        match self.span() {
            Some((first, _)) if a < first => return Err(format!("overwrite compacted: {a} < {first}")),
            Some((_, last)) if last + 1 < a => return Err(format!("hole: {a} > {last} + 1")),
            Some((first, last)) => {
                if a != last + 1 {
                    self.entries.truncate((a - first) as usize);
                }
            }
            None => self.first_index = a,
        }
        self.entries.extend(entries.iter().cloned());
        Ok(())
    }

    /// `MemTable::compact_to`.
    fn compact_to(&mut self, index: u64) {
        if self.entries.is_empty() || index <= self.first_index {
            return;
        }
        let count = ((index - self.first_index) as usize).min(self.entries.len());
        self.first_index = index;
        self.entries.drain(..count);
    }
}

/// Every region's table (`MemTableAccessor`).
#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    tables: BTreeMap<u64, Table>,
}

/// A concrete item of a batch.
#[derive(Clone, Debug)]
enum Item {
    Append { region: u64, at: u64, entries: Vec<Vec<u8>> },
    Compact { region: u64, index: u64 },
    Put { region: u64, key: Vec<u8>, value: Vec<u8> },
    Del { region: u64, key: Vec<u8> },
    Clean { region: u64 },
}

impl Model {
    /// One item, as `apply_append_writes` applies it.
    fn apply(&mut self, item: &Item) -> Result<(), String> {
        match item {
            Item::Append { region, at, entries } => {
                self.tables.entry(*region).or_default().append(*at, entries)
            }
            Item::Compact { region, index } => {
                self.tables.entry(*region).or_default().compact_to(*index);
                Ok(())
            }
            Item::Put { region, key, value } => {
                self.tables.entry(*region).or_default().kvs.insert(key.clone(), value.clone());
                Ok(())
            }
            Item::Del { region, key } => {
                self.tables.entry(*region).or_default().kvs.remove(key);
                Ok(())
            }
            Item::Clean { region } => {
                self.tables.remove(region);
                Ok(())
            }
        }
    }

    /// A whole batch; all or nothing (see the module comment).
    fn apply_batch(&mut self, items: &[Item]) -> Result<(), String> {
        let mut next = self.clone();
        for item in items {
            next.apply(item)?;
        }
        *self = next;
        Ok(())
    }
}

/// Where an append goes, relative to its region's state at that point of the batch.
#[derive(Clone, Debug)]
enum At {
    Next,
    /// Overwrites the last k entries (k clamped to what is there).
    Overlap(u64),
    /// A region without entries: this index; one with entries: the next one.
    Fresh(u64),
    /// k past the next index (a hole when the region holds entries).
    Hole(u64),
    /// k below the first index (overwriting compacted entries when it holds entries).
    Below(u64),
}

/// Where a compaction goes, relative to the region's first index.
#[derive(Clone, Debug)]
enum To {
    /// first + k (k may pass the last entry).
    Within(u64),
    /// Exactly one past the last entry: every entry goes.
    PastLast,
    Absolute(u64),
}

#[derive(Clone, Debug)]
enum Gen {
    Append { region: u64, at: At, n: usize, size: usize },
    Compact { region: u64, to: To },
    Put { region: u64, key: u8, size: usize },
    Del { region: u64, key: u8 },
    Clean { region: u64 },
}

fn gen_item() -> impl Strategy<Value = Gen> {
    let region = 1..=4u64;
    let at = prop_oneof![
        6 => Just(At::Next),
        2 => (1..4u64).prop_map(At::Overlap),
        2 => (1..40u64).prop_map(At::Fresh),
        1 => (1..4u64).prop_map(At::Hole),
        1 => (1..4u64).prop_map(At::Below),
    ];
    let to = prop_oneof![
        3 => (0..12u64).prop_map(To::Within),
        2 => Just(To::PastLast),
        1 => (0..60u64).prop_map(To::Absolute),
    ];
    prop_oneof![
        8 => (region.clone(), at, 1..6usize, 1..700usize)
            .prop_map(|(region, at, n, size)| Gen::Append { region, at, n, size }),
        4 => (region.clone(), to).prop_map(|(region, to)| Gen::Compact { region, to }),
        3 => (region.clone(), 0..4u8, 1..300usize).prop_map(|(region, key, size)| Gen::Put { region, key, size }),
        2 => (region.clone(), 0..4u8).prop_map(|(region, key)| Gen::Del { region, key }),
        1 => region.prop_map(|region| Gen::Clean { region }),
    ]
}

/// An entry's bytes: which write it came from, then filler (compressible, so batches
/// above the threshold go LZ4-compressed).
fn entry(region: u64, index: u64, write: u64, size: usize) -> Vec<u8> {
    let mut e = format!("r{region}i{index}w{write}:").into_bytes();
    e.extend((0..size).map(|j| b'a' + ((j / 7 + write as usize) % 26) as u8));
    e
}

/// Turns drawn items into concrete ones, placing each against the state the batch's
/// earlier items leave (`scratch` starts as the model and takes each item that applies).
fn resolve(model: &Model, gens: &[Gen], write: u64) -> Vec<Item> {
    let mut scratch = model.clone();
    let mut items = Vec::new();
    for g in gens {
        let item = match g {
            Gen::Append { region, at, n, size } => {
                let span = scratch.tables.get(region).and_then(Table::span);
                let a = match (at, span) {
                    (At::Next, Some((_, l))) => l + 1,
                    (At::Overlap(k), Some((f, l))) => (l + 1).saturating_sub(*k).max(f),
                    (At::Fresh(i), None) => *i,
                    (At::Fresh(_), Some((_, l))) => l + 1,
                    (At::Hole(k), Some((_, l))) => l + 1 + k,
                    (At::Below(k), Some((f, _))) => f.saturating_sub(*k).max(1),
                    (At::Hole(k) | At::Below(k) | At::Overlap(k), None) => 10 + k,
                    (At::Next, None) => 1,
                };
                let entries = (0..*n as u64).map(|i| entry(*region, a + i, write, *size)).collect();
                Item::Append { region: *region, at: a, entries }
            }
            Gen::Compact { region, to } => {
                let span = scratch.tables.get(region).and_then(Table::span);
                let index = match (to, span) {
                    (To::Within(k), Some((f, _))) => f + k,
                    (To::PastLast, Some((_, l))) => l + 1,
                    (To::Absolute(i), _) => *i,
                    (_, None) => 5,
                };
                Item::Compact { region: *region, index }
            }
            Gen::Put { region, key, size } => Item::Put {
                region: *region,
                key: vec![b'k', *key],
                value: format!("w{write}")
                    .into_bytes()
                    .into_iter()
                    .chain(std::iter::repeat_n(b'v', *size))
                    .collect(),
            },
            Gen::Del { region, key } => Item::Del { region: *region, key: vec![b'k', *key] },
            Gen::Clean { region } => Item::Clean { region: *region },
        };
        let _ = scratch.apply(&item);
        items.push(item);
    }
    items
}

fn batch_of(items: &[Item]) -> LogBatch {
    let mut b = LogBatch::default();
    for item in items {
        match item {
            Item::Append { region, at, entries } => b.add_raw_entries(*region, *at, entries).unwrap(),
            Item::Compact { region, index } => b.add_command(*region, Command::Compact { index: *index }),
            Item::Put { region, key, value } => b.put(*region, key.clone(), value.clone()).unwrap(),
            Item::Del { region, key } => b.delete(*region, key.clone()),
            Item::Clean { region } => b.add_command(*region, Command::Clean),
        }
    }
    b
}

fn config() -> Config {
    Config {
        dir: "/raft".to_owned(),
        target_file_size: ReadableSize(4096),
        purge_threshold: ReadableSize(16 * 1024),
        purge_rewrite_threshold: Some(ReadableSize(8 * 1024)),
        purge_rewrite_garbage_ratio: 0.3,
        batch_compression_threshold: ReadableSize(1024),
        compression_level: Some(2),
        recovery_threads: 2,
        ..Config::default()
    }
}

type MemEngine = Engine<MemFileSystem, FilePipeLog<MemFileSystem>>;

/// The engine's state equals the model's (regions that hold something).
fn check<F: FileSystem>(e: &Engine<F, FilePipeLog<F>>, m: &Model, ctx: &str) -> Result<(), TestCaseError> {
    let held: Vec<u64> = m
        .tables
        .iter()
        .filter(|(_, t)| !t.entries.is_empty() || !t.kvs.is_empty())
        .map(|(id, _)| *id)
        .collect();
    prop_assert_eq!(e.raft_groups(), held, "{}: raft groups", ctx);
    for region in 1..=4u64 {
        let t = m.tables.get(&region).cloned().unwrap_or_default();
        let span = t.span();
        prop_assert_eq!(e.first_index(region), span.map(|s| s.0), "{}: region {} first index", ctx, region);
        prop_assert_eq!(e.last_index(region), span.map(|s| s.1), "{}: region {} last index", ctx, region);
        if let Some((first, last)) = span {
            let mut got = Vec::new();
            e.fetch_raw_entries_to(region, first, last + 1, None, &mut got).unwrap();
            let want: Vec<Vec<u8>> = t.entries.iter().cloned().collect();
            prop_assert!(got == want, "{}: region {} entries {}..={} differ", ctx, region, first, last);
            prop_assert_eq!(e.get_raw_entry(region, first - 1).unwrap(), None);
            prop_assert_eq!(e.get_raw_entry(region, last + 1).unwrap(), None);
        }
        let mut kvs = BTreeMap::new();
        e.scan_raw_messages(region, None, None, false, |k, v| {
            kvs.insert(k.to_vec(), v.to_vec());
            true
        })
        .unwrap();
        prop_assert_eq!(&kvs, &t.kvs, "{}: region {} keys", ctx, region);
    }
    Ok(())
}

fn open(fs: &Arc<MemFileSystem>) -> MemEngine {
    Engine::open_with_file_system(config(), fs.clone()).unwrap()
}

fn run(batches: Vec<Vec<Gen>>, reopen_every: usize) -> Result<(), TestCaseError> {
    let fs = Arc::new(MemFileSystem::new());
    let mut e = open(&fs);
    let mut m = Model::default();
    for (n, gens) in batches.iter().enumerate() {
        let items = resolve(&m, gens, n as u64);
        let want = m.apply_batch(&items);
        let mut b = batch_of(&items);
        let got = e.write(&mut b, n % 5 == 0);
        match (&want, &got) {
            (Ok(()), Ok(_)) => {}
            (Err(_), Err(Error::InvalidArgument(msg))) => {
                prop_assert!(
                    msg.contains("hole") || msg.contains("overwrite compacted"),
                    "batch {}: {}",
                    n,
                    msg
                );
            }
            _ => prop_assert!(
                false,
                "batch {}: model {:?}, engine {:?}; items {:?}",
                n,
                want,
                got.map(|_| ()),
                items
            ),
        }
        let ctx = format!("batch {n}");
        check(&e, &m, &ctx)?;
        if n % 4 == 3 {
            // Purges rewrite live data into the rewrite queue; a group it asks to compact
            // is left as is (the model has no say in it).
            e.purge_expired_files().unwrap();
            check(&e, &m, &format!("{ctx} after purge"))?;
        }
        if n % reopen_every == reopen_every - 1 {
            drop(e);
            e = open(&fs);
            check(&e, &m, &format!("{ctx} after reopen"))?;
        }
    }
    drop(e);
    let e = open(&fs);
    check(&e, &m, "final reopen")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn engine_follows_raft_engine_memtable_rules(
        batches in prop::collection::vec(prop::collection::vec(gen_item(), 1..7), 1..45),
        reopen_every in 5..15usize,
    ) {
        run(batches, reopen_every)?;
    }
}

fn region_state(e: &MemEngine, region: u64) -> (Option<u64>, Option<u64>) {
    (e.first_index(region), e.last_index(region))
}

/// The case, by hand: a batch that compacts a region past its last entry and then
/// appends after a gap (raft-engine accepts it: the table is empty once compacted), and
/// the same after a Clean; the two cases raft-engine panics on are refused, leaving the
/// state as it was.
#[test]
fn compact_then_append_in_one_batch() {
    let fs = Arc::new(MemFileSystem::new());
    let e = open(&fs);
    let ents = |from: u64, n: u64| (from..from + n).map(|i| entry(1, i, 0, 100)).collect::<Vec<_>>();
    let mut b = LogBatch::default();
    b.add_raw_entries(1, 1, &ents(1, 10)).unwrap();
    e.write(&mut b, false).unwrap();
    // Compact past the last entry (to 20), then append from 15: accepted.
    let mut b = LogBatch::default();
    b.add_command(1, Command::Compact { index: 20 });
    b.add_raw_entries(1, 15, &ents(15, 3)).unwrap();
    e.write(&mut b, false).unwrap();
    assert_eq!(region_state(&e, 1), (Some(15), Some(17)));
    // Clean, then append at 100 in the same batch: accepted.
    let mut b = LogBatch::default();
    b.add_command(1, Command::Clean);
    b.add_raw_entries(1, 100, &ents(100, 2)).unwrap();
    e.write(&mut b, false).unwrap();
    assert_eq!(region_state(&e, 1), (Some(100), Some(101)));
    // A hole and an overwrite of compacted entries are refused, nothing applied (not
    // even the batch's Put before them).
    for (at, what) in [(103, "hole"), (99, "overwrite compacted")] {
        let mut b = LogBatch::default();
        b.put(1, b"k".to_vec(), b"v".to_vec()).unwrap();
        b.add_raw_entries(1, at, &ents(at, 1)).unwrap();
        match e.write(&mut b, false) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains(what), "{m}"),
            r => panic!("append at {at}: {:?}", r.map(|_| ())),
        }
        assert_eq!(region_state(&e, 1), (Some(100), Some(101)));
        assert_eq!(e.get(1, b"k"), None);
    }
    // A compaction within the entries, then an append just past them: accepted; then one
    // below the new first index in the same batch as a compaction is refused.
    let mut b = LogBatch::default();
    b.add_command(1, Command::Compact { index: 101 });
    b.add_raw_entries(1, 102, &ents(102, 1)).unwrap();
    e.write(&mut b, false).unwrap();
    assert_eq!(region_state(&e, 1), (Some(101), Some(102)));
    let mut b = LogBatch::default();
    b.add_command(1, Command::Compact { index: 102 });
    b.add_raw_entries(1, 101, &ents(101, 1)).unwrap();
    assert!(matches!(e.write(&mut b, false), Err(Error::InvalidArgument(_))));
    drop(e);
    let e = open(&fs);
    assert_eq!(region_state(&e, 1), (Some(101), Some(102)));
    assert_eq!(e.get_raw_entry(1, 102).unwrap(), Some(entry(1, 102, 0, 100)));
}
