//! The database's sequence-number-to-time mapping (RocksDB's `DBImpl::seqno_to_time_mapping_`
//! and its `kRecordSeqnoTime` periodic task), kept while some family has
//! `preserve_internal_time_seconds` or `preclude_last_level_data_seconds` set
//! (`CfConfig::seqno_time_seconds`, the larger of the two, is what "the setting" means below).
//!
//! - Settings over the families (RocksDB's `MinAndMaxPreserveSeconds`): the smallest and the
//!   largest setting above 0. A sample is taken every `ceil(min / 100)` seconds of the
//!   database's clock (checked by the flush threads each time they wake, at least every
//!   second), from open on, and at once when that period changes (`Sampling`); the mapping
//!   keeps `min(1000, max * 100 / min)` pairs over `max` seconds.
//! - A sample is (the last sequence number, at least 1; now in seconds). Samples that add
//!   nothing are merged (`SeqnoToTimeMapping::append`).
//! - Opening a new database (last sequence 0) with the feature on allocates sequence numbers
//!   1..=100 at once (recorded in the MANIFEST) and maps them evenly over the `max` seconds
//!   before now (RocksDB's `PrepopulateSeqnoToTimeMapping`), so that data written from the
//!   start has times to compare with.
//! - Each family with the feature on holds a copy (RocksDB keeps it in the SuperVersion),
//!   renewed at each sample and when its options change; a flush writes the part for its
//!   memtables' sequence range into the table (`rocksdb.seqno.time.map`, at most 100
//!   pairs). A compaction reads its inputs' mappings (`compaction_seqno_time`), keeps the
//!   sequence numbers of entries newer than now minus the setting, and writes each output's
//!   part. A read-only or secondary database keeps no mapping.
//!
//! `preclude_last_level_data_seconds` also gives a compaction the oldest sequence number
//! kept out of the last level (`compaction_seqno_time`; the placement itself is
//! `compaction/proximal.rs`).
//!
//! The lock is a leaf: no other lock is taken under it, and nothing under it does I/O.

use std::sync::Arc;

use super::DbInner;
use crate::config::{RealClock, SystemClock};
use crate::table::seqno_time::{SeqnoToTimeMapping, MAX_ENTRIES, MAX_PAIRS_PER_CF, MAX_PAIRS_PER_SST};

/// The database's mapping and when it last sampled.
#[derive(Default)]
pub struct SeqnoTime {
    pub mapping: SeqnoToTimeMapping,
    /// The clock's seconds at the last scheduled sample (None: none yet).
    last_sample: Option<u64>,
    /// The sampling period registered (None: sampling off).
    cadence: Option<u64>,
    /// The families' settings as the last registration found them (`preserve_settings`):
    /// the periodic check reads this instead of walking every family's configuration each
    /// time a flush thread wakes. Registrations (open, a family created, dropped or its
    /// options set) refresh it.
    settings: Option<(u64, u64)>,
}

/// What `DbInner::compaction_seqno_time` gives a compaction.
pub struct CompactionTimes {
    /// The inputs' mappings merged (None: the feature is off).
    pub mapping: Option<Arc<SeqnoToTimeMapping>>,
    /// Entries from this sequence number on keep it at the bottommost level (MAX: off).
    pub preserve_time_min_seqno: u64,
    /// RocksDB's `preclude_last_level_min_seqno`: entries from this sequence number on are
    /// kept out of the last level (MAX: `preclude_last_level_data_seconds` is 0).
    pub preclude_min_seqno: u64,
}

/// Why `DbInner::record_seqno_time` runs.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum Sampling {
    Periodic,
    Register,
    ConfigChange,
}

/// RocksDB's `MinAndMaxPreserveSeconds` over some families' settings: (min, max), None when
/// no family has the feature on.
pub fn preserve_range(settings: impl IntoIterator<Item = u64>) -> Option<(u64, u64)> {
    settings.into_iter().filter(|&s| s > 0).fold(None, |acc, s| match acc {
        None => Some((s, s)),
        Some((lo, hi)) => Some((lo.min(s), hi.max(s))),
    })
}

/// RocksDB's `GetRecodingCadence`: seconds between samples.
fn cadence(min: u64) -> u64 {
    min.div_ceil(MAX_PAIRS_PER_CF)
}

impl DbInner {
    /// The database clock's seconds (the Env's clock; the system clock by default).
    pub fn clock_seconds(&self) -> u64 {
        let micros = match &self.config.stats_history_clock {
            Some(c) => c.now_micros(),
            None => RealClock.now_micros(),
        };
        micros / 1_000_000
    }

    /// The families' settings in force: (min, max) of those above 0. A read-only or
    /// secondary database takes none (RocksDB sanitizes them to 0 there).
    fn preserve_settings(&self) -> Option<(u64, u64)> {
        if self.mode != super::readonly::DbMode::ReadWrite {
            return None;
        }
        let handles: Vec<Arc<super::cf::CfHandle>> = self.handles.read().iter().flatten().cloned().collect();
        preserve_range(
            handles
                .iter()
                .filter(|h| !h.dropped.load(std::sync::atomic::Ordering::Acquire))
                .map(|h| h.config().seqno_time_seconds()),
        )
    }

    /// How long a flush thread may sleep before the next periodic sample is due (None:
    /// sampling off, nothing due). With a clock of the caller's, which moves when a test says
    /// and notifies nobody, 50 ms.
    pub fn seqno_time_wait(&self) -> Option<std::time::Duration> {
        let g = self.seqno_time.lock();
        let every = g.cadence?;
        if self.config.stats_history_clock.is_some() {
            return Some(std::time::Duration::from_millis(50));
        }
        let now = self.clock_seconds();
        let due = g.last_sample.map_or(now, |t| t.saturating_add(every));
        // Whole seconds from a floor of now: never early, at most a second late.
        Some(std::time::Duration::from_secs(due.saturating_sub(now).max(1)))
    }

    /// The mapping's sampling, by `when`:
    /// - `Periodic` (RocksDB's `RecordSeqnoToTimeMapping`): a sample when one is due, a
    ///   cadence after the last;
    /// - `Register` (at open; RocksDB's `RegisterRecordSeqnoTimeWorker`): the limits follow
    ///   the families' settings, and a sample is taken when the cadence changed (the task's
    ///   `run_immediately`);
    /// - `ConfigChange` (a family created or its options set; RocksDB's
    ///   `InstallSuperVersionForConfigChange` then `RegisterRecordSeqnoTimeWorker`): first a
    ///   sample when the newest known time is more than `cadence + 3 + cadence / 100` seconds
    ///   old (`EnsureSeqnoToTimeMapping`), then as `Register`.
    ///
    /// Every family with the feature on then gets a copy; the others none. With the feature
    /// off everywhere the mapping is emptied and sampling stops.
    pub fn record_seqno_time(&self, when: Sampling) {
        let settings = if when == Sampling::Periodic {
            let g = self.seqno_time.lock();
            // Nothing registered (the feature off everywhere, the usual case): no work.
            if g.cadence.is_none() {
                return;
            }
            g.settings
        } else {
            let s = self.preserve_settings();
            self.seqno_time.lock().settings = s;
            s
        };
        let Some((min, max)) = settings else {
            let mut g = self.seqno_time.lock();
            if !g.mapping.is_empty() || g.cadence.is_some() {
                g.mapping.set_capacity(0).set_max_time_span(u64::MAX);
                g.cadence = None;
                g.last_sample = None;
                drop(g);
                for h in self.handles.read().iter().flatten() {
                    *h.seqno_time.lock() = None;
                }
            }
            return;
        };
        let now = self.clock_seconds();
        let every = cadence(min);
        let copy = {
            let mut g = self.seqno_time.lock();
            let mut sampled = false;
            if when == Sampling::ConfigChange {
                let last = if g.mapping.is_empty() {
                    g.mapping.set_capacity(MAX_ENTRIES);
                    0
                } else {
                    g.mapping.proximal_time_before_seqno(u64::MAX)
                };
                let wait = every + 3 + every / 100;
                if now >= wait && last <= now - wait {
                    g.mapping.append(self.last_sequence().max(1), now);
                    sampled = true;
                }
            }
            if when != Sampling::Periodic {
                let cap = MAX_ENTRIES.min((max as u128 * MAX_PAIRS_PER_CF as u128 / min as u128) as u64);
                g.mapping.set_capacity(cap).set_max_time_span(max);
            }
            let due = match (when, g.cadence) {
                // Not registered yet (before open's registration): nothing runs.
                (Sampling::Periodic, None) => return,
                (Sampling::Periodic, Some(_)) => g.last_sample.is_none_or(|t| now >= t.saturating_add(every)),
                (_, registered) => registered != Some(every),
            };
            g.cadence = Some(every);
            if due {
                g.mapping.append(self.last_sequence().max(1), now);
                g.last_sample = Some(now);
            } else if !sampled && when == Sampling::Periodic {
                return;
            }
            Arc::new(g.mapping.clone())
        };
        for h in self.handles.read().iter().flatten() {
            let on = h.config().seqno_time_seconds() > 0;
            *h.seqno_time.lock() = on.then(|| copy.clone());
        }
    }

    /// RocksDB's `PrepopulateSeqnoToTimeMapping`, for a database just created (last sequence
    /// 0) with the feature on: the sequence number to start from (100) and the pairs 1..=100
    /// spread over the `max` seconds before now. The caller records the sequence number in
    /// the MANIFEST.
    pub fn prepopulate_seqno_time(&self) -> Option<u64> {
        let (_, max) = self.preserve_settings()?;
        if self.last_sequence() != 0 {
            return None;
        }
        let now = self.clock_seconds();
        let last = MAX_PAIRS_PER_SST;
        let mut g = self.seqno_time.lock();
        if now > max {
            g.mapping.clear();
            g.mapping.set_capacity(MAX_ENTRIES);
            g.mapping.pre_populate(1, last, now - max, now);
        }
        Some(last)
    }

    /// RocksDB's `CompactionJob::PrepareTimes`: with the family's mapping span above 0
    /// (`CfConfig::seqno_time_seconds`), the inputs' mappings (their table property; one
    /// that cannot be read or decoded is left out, with a line in the info LOG), enforced at
    /// now over the span, and the tiering cut-offs: the oldest sequence number whose write
    /// time must be kept, and (with `preclude_last_level_data_seconds`) the oldest kept out
    /// of the last level (both from the mapping at now minus the setting; 0 when the clock
    /// gives nothing). `(None, MAX, MAX)` with the feature off.
    pub fn compaction_seqno_time(
        &self,
        cf: &super::cf::CfHandle,
        plan: &crate::compaction::picker::CompactionPlan,
    ) -> CompactionTimes {
        let config = cf.config();
        let span = config.seqno_time_seconds();
        if span == 0 {
            return CompactionTimes {
                mapping: None,
                preserve_time_min_seqno: u64::MAX,
                preclude_min_seqno: u64::MAX,
            };
        }
        let mut m = SeqnoToTimeMapping::new();
        m.set_max_time_span(span);
        for (_, f) in plan.all_inputs() {
            let r = self
                .table_cache
                .get(cf, f)
                .and_then(|e| m.decode_from(&e.table.properties().seqno_to_time_mapping));
            if let Err(e) = r {
                self.info_log.log(format_args!("Problem reading or processing seqno-to-time mapping: {e}"));
            }
        }
        let now = self.clock_seconds();
        let (preserve, preclude) = if now == 0 {
            m.enforce(0);
            (0, 0)
        } else {
            m.enforce(now);
            let (p, c) = m.tiering_cutoff_seqnos(
                now,
                config.preserve_internal_time_seconds,
                config.preclude_last_level_data_seconds,
            );
            (p.unwrap_or(u64::MAX), c.unwrap_or(u64::MAX))
        };
        // Limited after the lookup, for its accuracy (as RocksDB's).
        m.set_capacity(MAX_ENTRIES);
        CompactionTimes {
            mapping: Some(Arc::new(m)),
            // RocksDB keeps `preserve <= preclude`.
            preserve_time_min_seqno: preserve.min(preclude),
            preclude_min_seqno: preclude,
        }
    }

    /// Makes `seq` the last sequence number, recorded in the MANIFEST (so that a reopen does
    /// not go back), as RocksDB's prepopulation does before any write.
    pub fn start_sequence_at(&self, seq: u64) -> crate::error::Result<()> {
        let mut st = self.lock_state();
        self.versions.set_last_sequence(seq);
        self.log_and_apply(&mut st, vec![crate::version::edit::VersionEdit::default()], |_| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_combine_as_rocksdbs() {
        assert_eq!(preserve_range([0, 0]), None);
        assert_eq!(preserve_range([0, 3600, 86400]), Some((3600, 86400)));
        assert_eq!(cadence(3600), 36);
        assert_eq!(cadence(50), 1);
        assert_eq!(cadence(101), 2);
    }

    #[test]
    fn a_table_keeps_its_range_and_the_pair_before() {
        let mut m = SeqnoToTimeMapping::new();
        for i in 1..=300u64 {
            m.append(i * 10, 1000 + i);
        }
        let enc = m.encode_for_table(1005, 2000, None);
        let mut d = SeqnoToTimeMapping::new();
        d.decode_from(&enc).unwrap_or_default();
        let pairs: Vec<_> = d.pairs().copied().collect();
        assert_eq!(pairs.len(), 100);
        assert_eq!(pairs.first().map(|p| p.seqno), Some(1000));
        assert_eq!(pairs.last().map(|p| p.seqno), Some(2000));
        assert!(SeqnoToTimeMapping::new().encode_for_table(1, 5, None).is_empty());
    }
}
