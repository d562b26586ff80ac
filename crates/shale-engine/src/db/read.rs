//! Point reads (the public read and write methods of `DB` are `read_api.rs`).
//!
//! A point read walks the sources newest first — active memtable, immutable memtables,
//! level-0 files newest first, then one file per deeper level — and stops at the first
//! entry for the key. Range tombstones met on the way (in those sources) hide any older
//! entry they cover.

use std::sync::Arc;

use crate::merge::MergeOperatorCore;

use super::cf::{CfHandle, SuperVersion};
use super::DbInner;
use crate::config::ReadSettings;
use crate::error::{Error, Result};
use crate::key::{lookup_key, parse_internal_key, user_key, SequenceNumber, ValueType};
use crate::merge::no_merge_operator;
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker};
use crate::version::FileMetaData;
use shale_format::perf::{self, Field, PerfTimer};

/// Where a point lookup stands after one entry.
enum Lookup {
    Continue,
    Done(Option<Vec<u8>>),
}

/// A point lookup's merge state: the operands met so far, newest first (RocksDB's
/// `MergeContext`), resolved by the family's merge operator when the walk meets a base
/// value, a deletion or a covering range tombstone, or runs out of entries.
struct MergeLookup<'a> {
    op: Option<&'a dyn MergeOperatorCore>,
    /// The database's statistics (a failed merge is counted there).
    stats: Option<&'a Statistics>,
    key: &'a [u8],
    operands: Vec<Vec<u8>>,
    /// Resolves a blob index base (BlobDB).
    blob: BlobSource<'a>,
    /// A column-aware read (`get_entity`): the result is an encoded entity whenever the
    /// base is one; other results are plain values.
    entity: bool,
}

/// What a point lookup needs to read a value from a blob file, made into a `BlobFetcher`
/// only when the lookup meets a blob index: the fetcher holds references on the database's
/// blob file cache and the family's blob cache, and taking them at every read would write
/// the caches' reference counts, one cache line all reader threads share, at every Get.
struct BlobSource<'a> {
    cache: &'a Arc<crate::blob::BlobFileCache>,
    cf_id: u32,
    value_cache: &'a Option<Arc<crate::cache::BlockCache>>,
    fill_cache: bool,
    no_io: bool,
}

impl BlobSource<'_> {
    fn fetch(&self, user_key: &[u8], index_bytes: &[u8]) -> Result<Vec<u8>> {
        let fetcher = crate::blob::BlobFetcher {
            cache: Arc::clone(self.cache),
            cf_id: self.cf_id,
            value_cache: self.value_cache.clone(),
            fill_cache: self.fill_cache,
            no_io: self.no_io,
        };
        fetcher.fetch(user_key, index_bytes)
    }
}

impl MergeLookup<'_> {
    /// One entry of the key visible at the read's snapshot, newest first; `max_cov` is the
    /// newest covering range tombstone met so far (entries older than it are deleted).
    /// `found` is the entry's user key (with its own timestamp in a family with timestamps),
    /// which a blob record repeats.
    fn visit(
        &mut self,
        found: &[u8],
        seq: SequenceNumber,
        t: ValueType,
        value: &[u8],
        max_cov: SequenceNumber,
    ) -> Result<Lookup> {
        if seq < max_cov {
            return self.finish_plain(None).map(Lookup::Done);
        }
        match t {
            ValueType::Value => self.finish_plain(Some(value)).map(Lookup::Done),
            ValueType::BlobIndex => {
                let v = self.blob.fetch(found, value)?;
                if self.operands.is_empty() && !self.entity {
                    // The value read is the result: handed on, not copied again.
                    return Ok(Lookup::Done(Some(v)));
                }
                self.finish_plain(Some(&v)).map(Lookup::Done)
            }
            // A column-unaware read sees the default column; a column-aware one
            // (`get_entity`) gets the entity, with operands merged onto that column.
            // Columns stored in blob files are read as RocksDB's GetContext reads them: a
            // column-unaware read without operands fetches the default column only; a
            // column-aware one, or a merge onto the entity, fetches them all.
            ValueType::WideColumnEntity => {
                let blob = &self.blob;
                if !self.entity && self.operands.is_empty() {
                    let default =
                        crate::wide_columns::default_column_resolved(value, |i| blob.fetch(found, i))?;
                    return Ok(Lookup::Done(Some(default)));
                }
                let resolved = crate::wide_columns::resolve_blob_columns(value, |i| blob.fetch(found, i))?;
                let value = resolved.as_deref().unwrap_or(value);
                let default = crate::wide_columns::default_column_value(value)?;
                if !self.entity {
                    return self.finish(Some(default)).map(Lookup::Done);
                }
                let had_operands = !self.operands.is_empty();
                let merged = self.finish(Some(default))?.unwrap_or_default();
                let out = if had_operands {
                    crate::wide_columns::with_default_column(value, &merged)?
                } else {
                    value.to_vec()
                };
                Ok(Lookup::Done(Some(out)))
            }
            ValueType::Deletion | ValueType::SingleDeletion | ValueType::RangeDeletion => {
                self.finish_plain(None).map(Lookup::Done)
            }
            ValueType::Merge => {
                if self.op.is_none() {
                    return Err(no_merge_operator());
                }
                self.operands.push(value.to_vec());
                Ok(Lookup::Continue)
            }
        }
    }

    /// `finish` onto a plain base (or none); a column-aware read gets the value as an
    /// entity of one default column, as RocksDB's GetEntity returns a plain value.
    fn finish_plain(&mut self, base: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let r = self.finish(base)?;
        if !self.entity {
            return Ok(r);
        }
        r.map(|v| crate::wide_columns::serialize(&[(&[], &v)])).transpose()
    }

    /// The value: `base` with the operands merged onto it, if any.
    fn finish(&mut self, base: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        if self.operands.is_empty() {
            return Ok(base.map(<[u8]>::to_vec));
        }
        let Some(op) = self.op else { return Err(no_merge_operator()) };
        let mut operands = std::mem::take(&mut self.operands);
        operands.reverse();
        op.full_merge(self.key, base, operands, self.stats).map(Some)
    }
}

pub use crate::iter::ts_unsupported;

/// Checks a read's timestamps against the family (RocksDB's `FailIfTsMismatchCf` and
/// `FailIfReadCollapsedHistory`); returns the read timestamp of a family with timestamps.
pub fn check_read_timestamp<'r>(cf: &CfHandle, ro: &'r ReadSettings) -> Result<Option<&'r [u8]>> {
    let ts_sz = cf.icmp.timestamp_size();
    if ts_sz == 0 {
        if ro.timestamp.is_some() || ro.iter_start_ts.is_some() {
            return Err(Error::invalid_argument(format!(
                "Timestamp is not supported by column family {}: it has no user-defined timestamps",
                cf.name
            )));
        }
        return Ok(None);
    }
    let Some(ts) = ro.timestamp.as_deref() else {
        return Err(Error::invalid_argument(format!(
            "column family {} has {ts_sz}-byte user-defined timestamps: ReadOptions::set_timestamp is required",
            cf.name
        )));
    };
    let ucmp = cf.icmp.user_comparator();
    for (what, t) in [("read timestamp", Some(ts)), ("iter_start_ts", ro.iter_start_ts.as_deref())] {
        if let Some(t) = t {
            if t.len() != ts_sz {
                return Err(Error::invalid_argument(format!(
                    "Timestamp size mismatch: {what} has {} bytes, column family {} expects {ts_sz}",
                    t.len(),
                    cf.name
                )));
            }
        }
    }
    if let Some(start) = ro.iter_start_ts.as_deref() {
        if ucmp.compare_timestamp(start, ts).is_gt() {
            return Err(Error::invalid_argument("iter_start_ts is newer than the read timestamp"));
        }
    }
    let low = cf.full_history_ts_low();
    if !low.is_empty() && ucmp.compare_timestamp(ts, &low).is_lt() {
        return Err(Error::invalid_argument(format!(
            "Read timestamp: {} is smaller than full_history_ts_low: {} which has been collapsed",
            hex(ts),
            hex(&low)
        )));
    }
    Ok(Some(ts))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

impl DbInner {
    /// A point read, counted as RocksDB's `DBImpl::Get` counts one: `rocksdb.db.get.micros`,
    /// keys read, bytes read (found values) and `rocksdb.bytes.per.read` (0 for a miss).
    pub fn get_impl(&self, cf: &CfHandle, key: &[u8], ro: &ReadSettings) -> Result<Option<Vec<u8>>> {
        let stats = self.config.statistics.as_deref();
        let started = stats.and_then(Statistics::timer_start);
        let r = self.get_uncounted(cf, key, ro);
        let found = match &r {
            Ok(Some(v)) => v.len() as u64,
            _ => 0,
        };
        if found != 0 {
            perf::count(Field::GetReadBytes, found);
        }
        if let Some(s) = stats {
            s.record_get(started, found);
        }
        r
    }

    /// The keys of one `multi_get` call, counted as RocksDB's `MultiGet` counts them: calls,
    /// keys read and found, bytes read, `rocksdb.db.multiget.micros`, `rocksdb.bytes.per.multiget`.
    pub fn multi_get_impl<'k>(
        &self,
        keys: impl Iterator<Item = (Result<Arc<CfHandle>>, &'k [u8])>,
        ro: &ReadSettings,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let stats = self.config.statistics.as_deref();
        let _t = StopWatch::new(stats, Histogram::DbMultiget);
        // One SuperVersion per family for the whole call, taken at the family's first key
        // (RocksDB's MultiGet references each family's SuperVersion once). The sequence is
        // the call's snapshot (`with_pinned_read` registers one when the caller gave none),
        // so flushes and compactions meanwhile keep every version it sees.
        let mut svs: Vec<(u32, Arc<SuperVersion>, MemFingers)> = Vec::new();
        let mut keys: Vec<PendingKey<'_>> = keys.map(|(h, k)| (Some(h), k)).collect();
        let mut slots: Vec<Option<Result<Option<Vec<u8>>>>> = (0..keys.len()).map(|_| None).collect();
        for i in batch_order(&keys) {
            let (h, k) = &mut keys[i];
            let Some(h) = h.take() else { continue };
            let batched = h.as_ref().is_ok_and(|h| batches_memtable_lookups(h));
            let r = h.and_then(|h| {
                let i = match svs.iter().position(|(id, _, _)| *id == h.id) {
                    Some(i) => i,
                    None => {
                        svs.push((h.id, h.super_version(), Vec::new()));
                        svs.len() - 1
                    }
                };
                let (_, sv, fingers) = &mut svs[i];
                self.get_in(&h, k, ro, false, Some(sv), batched.then_some(fingers))
            });
            slots[i] = Some(r);
        }
        let out: Vec<Result<Option<Vec<u8>>>> = slots
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::corruption("multi_get: a key was not looked up"))))
            .collect();
        if let Some(s) = stats {
            let found: Vec<u64> =
                out.iter().filter_map(|r| r.as_ref().ok()?.as_ref().map(|v| v.len() as u64)).collect();
            let bytes: u64 = found.iter().sum();
            perf::count(Field::MultigetReadBytes, bytes);
            s.record_tick(Ticker::NumberMultigetCalls, 1);
            s.record_tick(Ticker::NumberMultigetKeysRead, out.len() as u64);
            s.record_tick(Ticker::NumberMultigetKeysFound, found.len() as u64);
            s.record_tick(Ticker::NumberMultigetBytesRead, bytes);
            s.record_in_histogram(Histogram::BytesPerMultiget, bytes);
        }
        out
    }

    fn get_uncounted(&self, cf: &CfHandle, key: &[u8], ro: &ReadSettings) -> Result<Option<Vec<u8>>> {
        self.get_maybe_entity(cf, key, ro, false)
    }

    /// A point read; `entity`: column-aware (RocksDB's GetEntity), the result encoded as an
    /// entity (`wide_columns.rs`), a plain value as one default column.
    pub fn get_maybe_entity(
        &self,
        cf: &CfHandle,
        key: &[u8],
        ro: &ReadSettings,
        entity: bool,
    ) -> Result<Option<Vec<u8>>> {
        self.get_in(cf, key, ro, entity, None, None)
    }

    /// `get_maybe_entity` in `pinned`, the family's SuperVersion a multi-get took for all
    /// its keys of the family; `None`: the family's current one.
    fn get_in(
        &self,
        cf: &CfHandle,
        key: &[u8],
        ro: &ReadSettings,
        entity: bool,
        pinned: Option<&Arc<SuperVersion>>,
        fingers: Option<&mut MemFingers>,
    ) -> Result<Option<Vec<u8>>> {
        // A halted database (a panic or a poisoned lock, `halt.rs`) serves no read.
        self.check_halted()?;
        if cf.is_dropped() {
            return Err(Error::new(
                crate::ErrorKind::ColumnFamilyDropped,
                format!("column family {}", cf.name),
            ));
        }
        let ts = check_read_timestamp(cf, ro)?;
        let snapshot_timer = PerfTimer::new(Field::GetSnapshotTime);
        let local;
        let sv: &SuperVersion = match pinned {
            Some(sv) => sv,
            None => {
                local = cf.local_super_version();
                &local
            }
        };
        let seq = ro.snapshot.unwrap_or_else(|| self.last_sequence());
        drop(snapshot_timer);
        let found = match ts {
            // The lookup key carries the read timestamp: the newest version at or before it
            // is the first entry of the key at or after it.
            Some(ts) => self.get_from(cf, sv, &[key, ts].concat(), seq, ro, entity, None)?,
            None => self.get_from(cf, sv, key, seq, ro, entity, fingers)?,
        };
        match found {
            // A TTL database's GetEntity is the base database's (RocksDB's DBWithTTL does not
            // override it; StackableDB passes it on): a stored plain value comes back as the
            // default column with its write-time suffix, an entity (written by put_entity,
            // which bypasses the suffix too) as it is.
            Some(v) if !entity && cf.config().ttl_db.is_some() => super::ttl::strip(v).map(Some),
            other => Ok(other),
        }
    }

    // The read's parts, each its own: a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    fn get_from(
        &self,
        cf: &CfHandle,
        sv: &SuperVersion,
        key: &[u8],
        seq: SequenceNumber,
        ro: &ReadSettings,
        entity: bool,
        mut fingers: Option<&mut MemFingers>,
    ) -> Result<Option<Vec<u8>>> {
        use crate::config::ReadTier;
        let stats = self.config.statistics.as_deref();
        let reads = ro.block_reads();
        let mut max_cov = 0;
        let blob = BlobSource {
            cache: &self.blob_cache,
            cf_id: cf.id,
            value_cache: &cf.config().blob_cache,
            fill_cache: ro.fill_cache,
            no_io: reads.no_io,
        };
        let mut merge =
            MergeLookup { op: cf.config().callbacks.merge(), stats, key, operands: Vec::new(), blob, entity };
        let with_ts = cf.icmp.timestamp_size() > 0;
        // With timestamps the lookup key ends with the read timestamp.
        let read_ts = &key[key.len().saturating_sub(cf.icmp.timestamp_size())..];
        let mem_timer = PerfTimer::new(Field::GetFromMemtableTime);
        // RocksDB's `skip_memtable`: the persisted tier after a write without the WAL.
        let skip_memtables = ro.read_tier == ReadTier::Persisted
            && self.unpersisted.load(std::sync::atomic::Ordering::Relaxed);
        let memtables = std::iter::once(&sv.mem).chain(sv.imm.iter()).filter(|_| !skip_memtables);
        for mem in memtables {
            perf::count(Field::GetFromMemtableCount, 1);
            if with_ts && mem.num_range_deletes() > 0 && !ro.ignore_range_deletions {
                // A tombstone counts at or below the snapshot and the read timestamp (the
                // lookup key's), over every timestamp of its keys (RocksDB's
                // `MaxCoveringTombstoneSeqnum` with `SetMaxVisibleSeqAndTimestamp`).
                let tombstones = crate::iter::FragmentedTombstones::new(
                    cf.icmp.user_comparator().clone(),
                    crate::iter::range_del::from_table_entries(&mem.range_tombstones())?,
                );
                max_cov = max_cov.max(tombstones.max_covering_seq_at(key, seq, read_ts));
            } else if !ro.ignore_range_deletions {
                max_cov = max_cov.max(mem.max_covering_tombstone_seq(key, seq));
            }
            let mut done: Option<Result<Option<Vec<u8>>>> = None;
            // Corruption when a memtable entry's checks fail (RocksDB's SaveValue).
            let mut visit = |found: &[u8], s, t, v: &[u8]| {
                // With timestamps an older version may have a newer sequence than the
                // snapshot (written later with an older timestamp): not visible, go on.
                if with_ts && s > seq {
                    return true;
                }
                // With timestamps the entry's own key (its version's timestamp) is the one
                // a blob record repeats; merge operands of every visible version are
                // collected on down to a base (RocksDB's `MemTable::Get` / `SaveValue`).
                let found = if with_ts { found } else { key };
                match merge.visit(found, s, t, v, max_cov) {
                    Ok(Lookup::Continue) => true,
                    Ok(Lookup::Done(r)) => {
                        done = Some(Ok(r));
                        false
                    }
                    Err(e) => {
                        done = Some(Err(e));
                        false
                    }
                }
            };
            // The memtable's Bloom (RocksDB's `MemTable::Get`; its batched `MultiGet` checks
            // it only without range deletions to consider); range tombstones are counted above.
            let no_range_del = ro.ignore_range_deletions || mem.num_range_deletes() == 0;
            match fingers.as_deref_mut() {
                Some(_) if no_range_del && !mem.get_may_contain(key) => {}
                Some(fingers) => {
                    mem.try_for_each_version_batched(key, seq, finger_of(fingers, mem.id()), |s, t, v| {
                        visit(key, s, t, v)
                    })?
                }
                None if !mem.get_may_contain(key) => {}
                None => mem.try_for_each_version_keyed(key, seq, visit)?,
            }
            if let Some(r) = done {
                record_tick(stats, Ticker::MemtableHit, 1);
                return r;
            }
        }
        record_tick(stats, Ticker::MemtableMiss, 1);
        drop(mem_timer);
        if ro.read_tier == ReadTier::Memtable {
            return merge.finish_plain(None);
        }
        let _files_timer = PerfTimer::new(Field::GetFromOutputFilesTime);
        // RocksDB's `GetContext::sample_`: one read in 1024 counts for 1024 in each file it
        // met that gave no final value, whatever `read_triggered_compaction_threshold` is (as
        // RocksDB's, so turning it on by `set_options` acts on the reads made before).
        let sampled = crate::read_sample::sample_read();
        let collapsible = |f: &FileMetaData| {
            if sampled {
                f.sampled.add_collapsible(crate::read_sample::FILE_READ_SAMPLE_RATE);
            }
        };
        let lookup = if with_ts { crate::key::lookup_key_ts(key, seq) } else { lookup_key(key, seq) };
        let icmp = &cf.icmp;
        let version = &sv.current;
        for level in 0..version.num_levels() {
            let candidates = version.files_for_key(level, &lookup);
            for f in candidates {
                // With timestamps a file whose smallest key is a newer version than the read
                // timestamp may still hold older ones: compare without timestamps.
                if icmp.compare_user_without_ts(key, user_key(&f.smallest)).is_lt()
                    || icmp.compare_user_without_ts(key, user_key(&f.largest)).is_gt()
                {
                    continue;
                }
                let entry = self.table_cache.get_for_point_read(cf, f, Some(level), &reads)?;
                if !entry.tombstones.is_empty() && !ro.ignore_range_deletions {
                    max_cov = max_cov.max(entry.tombstones.max_covering_seq_at(key, seq, read_ts));
                }
                let Some((ik, v)) = self.table_cache.row_get(f, &entry, &lookup, reads)? else {
                    // RocksDB's kNotFound: the file held nothing of the key.
                    collapsible(f);
                    continue;
                };
                {
                    let hit = match level {
                        0 => Ticker::GetHitL0,
                        1 => Ticker::GetHitL1,
                        _ => Ticker::GetHitL2AndUp,
                    };
                    record_tick(stats, hit, 1);
                    let p = parse_internal_key(&ik)?;
                    // With timestamps the entry found may be a version written after the
                    // snapshot (an older timestamp, a newer sequence): walk on as for operands.
                    let hidden = with_ts && p.sequence > seq;
                    // A plain value with no operands before it and no covering tombstone is
                    // the answer as the table returned it: `visit` would copy it once more.
                    if !hidden
                        && p.value_type == ValueType::Value
                        && p.sequence >= max_cov
                        && merge.operands.is_empty()
                        && !merge.entity
                    {
                        return Ok(Some(v));
                    }
                    if !hidden && (p.value_type != ValueType::Merge || p.sequence < max_cov) {
                        if let Lookup::Done(r) =
                            merge.visit(p.user_key, p.sequence, p.value_type, &v, max_cov)?
                        {
                            // RocksDB's kDeleted: a deletion, or a version a range
                            // tombstone covers, ended the read.
                            let deleted =
                                matches!(p.value_type, ValueType::Deletion | ValueType::SingleDeletion)
                                    || p.sequence < max_cov;
                            if deleted {
                                collapsible(f);
                            }
                            return Ok(r);
                        }
                        collapsible(f);
                        continue;
                    }
                    // Merge operands (or a hidden version): walk this table's entries of the key.
                    let mut it = entry.table.iter(reads);
                    it.seek(&lookup);
                    while it.valid() {
                        let p = parse_internal_key(it.key())?;
                        let other_key = if with_ts {
                            icmp.compare_user_without_ts(p.user_key, key).is_ne()
                        } else {
                            icmp.compare_user(p.user_key, key).is_ne()
                        };
                        if other_key {
                            break;
                        }
                        if p.sequence <= seq {
                            if let Lookup::Done(r) =
                                merge.visit(p.user_key, p.sequence, p.value_type, it.value(), max_cov)?
                            {
                                return Ok(r);
                            }
                        }
                        it.next();
                    }
                    it.status()?;
                    // RocksDB's kMerge (or kNotFound): the read goes on past this file.
                    collapsible(f);
                }
            }
        }
        merge.finish_plain(None)
    }
}

impl DbInner {
    /// A manual flush flushes every immutable memtable of its families, however few
    /// (`min_write_buffer_number_to_merge` holds back background flushes only).
    pub fn force_flushes(&self, targets: &[(u32, u64)]) {
        let mut st = self.lock_state();
        for (id, _) in targets {
            if let Some(cf) = st.cfs.get_mut(id) {
                if !cf.imm.is_empty() {
                    cf.force_flush = true;
                    self.schedule_flush(&mut st, *id);
                }
            }
        }
    }

    /// Switches the non-empty memtable of family `only` (of every family when None) and
    /// (with `wait`) waits until the memtables switched so far are flushed.
    pub fn flush_memtables(&self, wait: bool, only: Option<u32>) -> Result<()> {
        self.check_writable()?;
        let targets = self.switch_for_flush(only)?;
        self.force_flushes(&targets);
        if !wait {
            return Ok(());
        }
        self.wait_for_flushes(&targets)
    }
}

// ---- helper cfmisc (issue 33): `memtable_batch_lookup_optimization` ----

/// A multi_get's key, its family taken out when it is looked up.
type PendingKey<'k> = (Option<Result<Arc<CfHandle>>>, &'k [u8]);

/// The search paths of one multi_get's sorted keys of a family, one per memtable (by id).
type MemFingers = Vec<(u64, crate::memtable::skiplist::Finger)>;

/// The finger of memtable `id` in `fingers`, made on first use.
fn finger_of(fingers: &mut MemFingers, id: u64) -> &mut crate::memtable::skiplist::Finger {
    let i = match fingers.iter().position(|(m, _)| *m == id) {
        Some(i) => i,
        None => {
            fingers.push((id, Default::default()));
            fingers.len() - 1
        }
    };
    &mut fingers[i].1
}

/// Whether a multi_get looks this family's keys up in its memtables as one sorted batch
/// (RocksDB's `memtable_batch_lookup_optimization`). A family with user-defined timestamps
/// looks each key up alone (its lookup keys carry the read timestamp).
fn batches_memtable_lookups(cf: &CfHandle) -> bool {
    cf.config().memtable_batch_lookup_optimization && cf.icmp.timestamp_size() == 0
}

/// The order a multi_get looks its keys up in: keys of families without the batch
/// optimization first, as given; then each batched family's keys sorted by its comparator
/// (RocksDB's MultiGet sorts a family's keys before its batched memtable lookup). Results
/// are put back in the caller's order. The sort's comparisons are not counted in the perf
/// context (RocksDB's sort calls the comparator, not its counting wrapper).
fn batch_order(keys: &[PendingKey<'_>]) -> Vec<usize> {
    let batched = |i: usize| match &keys[i].0 {
        Some(Ok(h)) if batches_memtable_lookups(h) => Some(h),
        _ => None,
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    if (0..keys.len()).any(|i| batched(i).is_some()) {
        order.sort_by(|&a, &b| match (batched(a), batched(b)) {
            (None, None) => a.cmp(&b),
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(ha), Some(hb)) => ha
                .id
                .cmp(&hb.id)
                .then_with(|| ha.icmp.user_comparator().compare(keys[a].1, keys[b].1))
                .then(a.cmp(&b)),
        });
    }
    order
}
