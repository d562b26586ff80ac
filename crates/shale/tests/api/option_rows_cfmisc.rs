//! Column-family options that had no row (helper cfmisc, issue 33), each shown acting as
//! RocksDB 11.8.1's:
//! - `memtable_op_scan_flush_trigger`: an iterator step that passes that many hidden entries
//!   of the active memtable marks it for flush; the next write switches it (the active
//!   memtable then holds that write only). Off (0), nothing happens;
//! - `memtable_avg_op_scan_flush_trigger`: the same for the average per `next` between two
//!   positioning calls, once the window's count reaches the first option;
//! - `verify_output_flags`: a compaction reads its outputs back as the flags say, and a
//!   data block that reads back damaged fails it with Corruption; without the flags the
//!   same compaction succeeds;
//! - `memtable_batch_lookup_optimization`: a multi_get's keys are searched in the memtable
//!   from the previous key's path: the same results, far fewer user-key comparisons.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use shale::fs::{FileSystemRef, RandomAccessFile};
use shale::{Cache, ErrorKind, IteratorMode, Options, DB};

use crate::util::{self, FsHooks, HookedFs};

fn base() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o
}

fn active_entries(db: &DB) -> u64 {
    util::int_prop(db, "rocksdb.num-entries-active-mem-table")
}

/// 200 keys put and then deleted in the active memtable: a scan from the first key passes
/// 400 hidden entries in one step (200 deletions, 200 puts they hide).
fn put_and_delete(db: &DB) {
    for i in 0..200u32 {
        db.put(format!("k{i:04}"), "v").unwrap();
    }
    for i in 0..200u32 {
        db.delete(format!("k{i:04}")).unwrap();
    }
    db.put("z", "live").unwrap();
}

/// Two writes after the scan: RocksDB's write path notes the marked memtable on the first
/// and switches it at the next (`PreprocessWrite`), as Shale's.
fn two_writes(db: &DB) {
    db.put("after1", "x").unwrap();
    db.put("after2", "y").unwrap();
}

#[test]
fn memtable_op_scan_flush_trigger_marks_the_active_memtable() {
    // Off: the scan changes nothing.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir.path()).unwrap();
    put_and_delete(&db);
    let all: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 1);
    two_writes(&db);
    assert_eq!(active_entries(&db), 403, "no switch without the option");
    drop(db);

    // On: the scan's one step passes 400 >= 300 hidden memtable entries.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base().get_options_from_string("memtable_op_scan_flush_trigger=300").unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    assert!(util::latest_options_text(path).contains("  memtable_op_scan_flush_trigger=300\n"));
    put_and_delete(&db);
    // Below the trigger: a seek past half the keys passes 200 hidden entries.
    let mut it = db.raw_iterator();
    it.seek(b"k0100");
    assert_eq!(it.key(), Some(&b"z"[..]));
    drop(it);
    two_writes(&db);
    assert_eq!(active_entries(&db), 403, "200 hidden entries are below the trigger");
    let all: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 3, "z, after1, after2");
    two_writes(&db);
    assert_eq!(active_entries(&db), 1, "marked by the scan, switched at the second write after it");
    util::wait_until(60, "the marked memtable flushed", || {
        util::int_prop(&db, "rocksdb.num-files-at-level0") == 1
    });
    assert_eq!(db.get("k0005").unwrap(), None);
    assert_eq!(db.get("z").unwrap(), Some(b"live".to_vec()));

    // set_options turns it off for iterators made from then on.
    db.set_options(&[("memtable_op_scan_flush_trigger", "0")]).unwrap();
    assert!(util::latest_options_text(path).contains("  memtable_op_scan_flush_trigger=0\n"));
    put_and_delete(&db);
    let before = active_entries(&db);
    let _: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
    two_writes(&db);
    assert_eq!(active_entries(&db), before + 2, "off again after set_options");
}

/// Keys `a0000..` live, each followed by a key put twice and then deleted: every `next`
/// passes 3 hidden entries (a deletion and the 2 puts it hides).
fn interleaved(db: &DB, n: u32) {
    for i in 0..n {
        db.put(format!("a{i:04}"), "live").unwrap();
        db.put(format!("a{i:04}x"), "1").unwrap();
        db.put(format!("a{i:04}x"), "2").unwrap();
        db.delete(format!("a{i:04}x")).unwrap();
    }
}

#[test]
fn memtable_avg_op_scan_flush_trigger_judges_the_window_between_seeks() {
    let run = |avg: u32| -> (u64, u64) {
        let dir = tempfile::tempdir().unwrap();
        let mut o = base();
        o.create_if_missing(true);
        let db = DB::open(&o, dir.path()).unwrap();
        // No step passes 1000; the window passes 3 x 600 = 1800 over 601 steps.
        db.set_options(&[
            ("memtable_op_scan_flush_trigger", "1000"),
            ("memtable_avg_op_scan_flush_trigger", &avg.to_string()),
        ])
        .unwrap();
        interleaved(&db, 600);
        let mut it = db.raw_iterator();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        assert_eq!(n, 600);
        // The window is judged at the next positioning call.
        it.seek_to_first();
        drop(it);
        let before = active_entries(&db);
        two_writes(&db);
        (before, active_entries(&db))
    };
    let (before, after) = run(0);
    assert_eq!(after, before + 2, "no average trigger: no switch");
    let (before, after) = run(4);
    assert_eq!(after, before + 2, "3 per step is below an average of 4");
    let (_, after) = run(2);
    assert_eq!(after, 1, "3 per step reaches an average of 2: switched");
}

/// A file system that, once armed, damages the first byte read at offset 0 (the first data
/// block) from table files numbered at least `from`: the compaction's outputs.
#[derive(Default)]
struct DamageOutputs {
    from: AtomicU64,
    damaged: Arc<AtomicU64>,
}

struct DamagedFile {
    inner: Arc<dyn RandomAccessFile>,
    damaged: Arc<AtomicU64>,
}

impl RandomAccessFile for DamagedFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> shale::Result<usize> {
        let n = self.inner.read_at(offset, buf)?;
        if offset == 0 && n > 0 {
            buf[0] ^= 0x5a;
            self.damaged.fetch_add(1, Ordering::Relaxed);
        }
        Ok(n)
    }
    fn size(&self) -> shale::Result<u64> {
        self.inner.size()
    }
}

impl FsHooks for DamageOutputs {
    fn random_access(&self, path: &Path, file: Arc<dyn RandomAccessFile>) -> Arc<dyn RandomAccessFile> {
        let from = self.from.load(Ordering::Relaxed);
        let number = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".sst"))
            .and_then(|n| n.parse::<u64>().ok());
        match number {
            Some(num) if from > 0 && num >= from => {
                Arc::new(DamagedFile { inner: file, damaged: Arc::clone(&self.damaged) })
            }
            _ => file,
        }
    }
}

/// Two overlapping tables compacted into one, with `flags` as `verify_output_flags`: the
/// compaction's result and how many damaged reads it made.
fn compact_with_damaged_outputs(flags: &str) -> (shale::Result<()>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let hooks = DamageOutputs::default();
    let damaged = Arc::clone(&hooks.damaged);
    let fs = HookedFs::new(shale::fs::default_fs(), hooks);
    let mut o = base().get_options_from_string(format!("verify_output_flags={flags}")).unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_file_system(Arc::clone(&fs) as FileSystemRef);
    let db = DB::open(&o, dir.path()).unwrap();
    assert!(util::latest_options_text(dir.path()).contains(&format!("  verify_output_flags={flags}\n")));
    for round in 0..2 {
        for i in 0..300u32 {
            db.put(format!("k{i:04}"), util::value(u64::from(i + round), 100)).unwrap();
        }
        db.flush().unwrap();
    }
    assert_eq!(db.live_files().unwrap().len(), 2);
    // The compaction's outputs are numbered after every file made so far.
    fs.hooks.from.store(max_file_number(dir.path()) + 1, Ordering::Relaxed);
    let cf = db.cf_handle("default").unwrap();
    let r = db.try_compact_range_cf_opt::<&[u8], &[u8]>(&cf, None, None, &shale::CompactOptions::default());
    (r, damaged.load(Ordering::Relaxed))
}

fn max_file_number(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let stem = name.split('.').next().unwrap_or("").trim_start_matches("MANIFEST-").to_string();
            stem.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn verify_output_flags_read_compaction_outputs_back() {
    // kVerifyNone: the compaction does not read its output's data blocks.
    let (r, _) = compact_with_damaged_outputs("0");
    assert!(r.is_ok(), "{r:?}");
    // The block checksums alone (kVerifyBlockChecksum | kEnableForLocalCompaction).
    let (r, damaged) = compact_with_damaged_outputs(&(1 | 1 << 10).to_string());
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(damaged > 0, "the output's first data block was read");
    // Re-reading against the written hash (kVerifyIteration | kEnableForLocalCompaction).
    let (r, _) = compact_with_damaged_outputs(&(2 | 1 << 10).to_string());
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    // Enabled for remote compactions only: a local compaction is not checked.
    let (r, _) = compact_with_damaged_outputs(&(3 | 1 << 11).to_string());
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn cfmisc_rows_round_trip_through_the_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let set =
        "memtable_op_scan_flush_trigger=77;memtable_avg_op_scan_flush_trigger=7;verify_output_flags=1027";
    let mut o = base().get_options_from_string(set).unwrap();
    o.create_if_missing(true);
    drop(DB::open(&o, path).unwrap());
    let (again, _) =
        Options::load_latest(path, shale::Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    let db = DB::open(&again, path).unwrap();
    let text = util::latest_options_text(path);
    for kv in set.split(';') {
        assert!(text.contains(&format!("  {kv}\n")), "{kv}: {text}");
    }
    drop(db);
    let e = base().get_options_from_string("verify_output_flags=x").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// A multi_get of `keys` on a database of 20000 keys in its memtable, with
/// `memtable_batch_lookup_optimization` as `on` says: the results and the perf context's
/// user-key comparisons.
fn multi_get_in_memtable(on: bool, keys: &[Vec<u8>]) -> (Vec<Option<Vec<u8>>>, u64) {
    use shale::perf::{set_perf_stats, PerfContext, PerfMetric, PerfStatsLevel};
    let dir = tempfile::tempdir().unwrap();
    let mut o = base().get_options_from_string(format!("memtable_batch_lookup_optimization={on}")).unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, dir.path()).unwrap();
    assert!(util::latest_options_text(dir.path())
        .contains(&format!("  memtable_batch_lookup_optimization={on}\n")));
    for i in (0..20000u32).rev() {
        db.put(format!("k{i:05}"), i.to_string()).unwrap();
    }
    db.delete("k05003").unwrap();
    db.put("k05004", "newer").unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 0, "all in the memtable");
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    let got: Vec<_> = db.multi_get(keys).into_iter().map(|r| r.unwrap()).collect();
    let comparisons = ctx.metric(PerfMetric::UserKeyComparisonCount);
    set_perf_stats(PerfStatsLevel::Disable);
    // Immutable, as RocksDB's: set_options refuses it.
    let e = db.set_options(&[("memtable_batch_lookup_optimization", "true")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    (got, comparisons)
}

#[test]
fn memtable_batch_lookup_optimization_searches_from_the_previous_key() {
    // 2000 neighbouring keys in order: each search starts from the last one's path.
    let sorted: Vec<Vec<u8>> = (5000..7000u32).map(|i| format!("k{i:05}").into_bytes()).collect();
    let (off, off_cmp) = multi_get_in_memtable(false, &sorted);
    let (on, on_cmp) = multi_get_in_memtable(true, &sorted);
    assert_eq!(on, off);
    assert_eq!(on[3], None, "deleted");
    assert_eq!(on[4].as_deref(), Some(&b"newer"[..]));
    assert_eq!(on[10].as_deref(), Some(&b"5010"[..]));
    assert!(on_cmp * 2 < off_cmp, "finger searches: {on_cmp} comparisons, one search per key: {off_cmp}");
    // Any order, duplicates and missing keys: the same results, in the caller's order.
    let mut mixed: Vec<Vec<u8>> = Vec::new();
    for i in 0..600u32 {
        let k = (i * 7919) % 21000;
        mixed.push(format!("k{k:05}").into_bytes());
        if i % 50 == 0 {
            mixed.push(format!("k{k:05}x").into_bytes());
            mixed.push(format!("k{k:05}").into_bytes());
        }
    }
    let (off, _) = multi_get_in_memtable(false, &mixed);
    let (on, _) = multi_get_in_memtable(true, &mixed);
    assert_eq!(on, off);
    for (k, v) in mixed.iter().zip(&on) {
        let i: u32 = std::str::from_utf8(&k[1..6]).unwrap().parse().unwrap();
        let expect = match i {
            _ if k.len() > 6 || i >= 20000 || i == 5003 => None,
            5004 => Some(b"newer".to_vec()),
            _ => Some(i.to_string().into_bytes()),
        };
        assert_eq!(v, &expect, "{}", String::from_utf8_lossy(k));
    }
}
