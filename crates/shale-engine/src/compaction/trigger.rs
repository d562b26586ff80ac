//! How often a quiet database looks at its families' time-based compactions (`ttl`,
//! periodic compaction, FIFO temperature ages, delayed bottommost files): RocksDB 11.8.1's periodic task
//! `kTriggerCompaction`, every `DBImpl::ComputeTriggerCompactionPeriod` seconds. Writes,
//! flushes and compactions run the picker anyway; this check is what finds tables that only
//! aged.

use crate::config::{CfConfig, DbConfig};

/// RocksDB's `GetMinTimeBasedCompactionInterval`: the shortest of a family's time-based
/// compaction intervals (`periodic_compaction_seconds`, `ttl`, FIFO's first
/// `file_temperature_age_thresholds` age, `bottommost_file_compaction_delay`), 0 when it has
/// none.
pub fn min_time_based_interval(cf: &CfConfig) -> u64 {
    let first_age = cf.fifo_temperature_ages.first().map_or(0, |&(age, _)| age);
    [cf.age_periodic, cf.ttl, first_age, u64::from(cf.bottommost_file_compaction_delay)]
        .into_iter()
        .filter(|&s| s > 0)
        .min()
        // RocksDB takes sentinel values near u64::MAX as "off".
        .filter(|&s| s <= u64::MAX / 2)
        .unwrap_or(0)
}

/// The DB options the trigger period depends on (the values in force: all three change
/// through `set_db_options`).
#[derive(Clone, Copy, Debug)]
pub struct TriggerSettings {
    pub max_compaction_trigger_wakeup_seconds: u64,
    pub stats_dump_period_sec: u32,
    pub stats_persist_period_sec: u32,
}

impl TriggerSettings {
    pub fn of(db: &DbConfig) -> TriggerSettings {
        TriggerSettings {
            max_compaction_trigger_wakeup_seconds: db.max_compaction_trigger_wakeup_seconds,
            stats_dump_period_sec: db.stats_dump_period_sec,
            stats_persist_period_sec: db.stats_persist_period_sec,
        }
    }
}

/// RocksDB's `ComputeTriggerCompactionPeriod`: `max_compaction_trigger_wakeup_seconds`, no
/// longer than the stats dump and persist periods (the database wakes for them anyway) nor a
/// fifth of the shortest time-based interval of the families, and at least 1 second.
pub fn trigger_period<'a>(db: &TriggerSettings, cfs: impl Iterator<Item = &'a CfConfig>) -> u64 {
    let mut period = db.max_compaction_trigger_wakeup_seconds;
    if db.stats_dump_period_sec > 0 {
        period = period.min(u64::from(db.stats_dump_period_sec));
    }
    if db.stats_persist_period_sec > 0 {
        period = period.min(u64::from(db.stats_persist_period_sec));
    }
    let shortest = cfs.map(min_time_based_interval).filter(|&s| s > 0).min().unwrap_or(u64::MAX);
    period.min(shortest / 5).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_is_rocksdb_11s() {
        let cf = |periodic: u64, ttl: u64| CfConfig { age_periodic: periodic, ttl, ..CfConfig::default() };
        let db = DbConfig::default();
        // Defaults: 43200, capped by the 600-second stats periods.
        assert_eq!(trigger_period(&TriggerSettings::of(&db), [cf(0, 0)].iter()), 600);
        let quiet = DbConfig { stats_dump_period_sec: 0, stats_persist_period_sec: 0, ..DbConfig::default() };
        assert_eq!(trigger_period(&TriggerSettings::of(&quiet), [cf(0, 0)].iter()), 43_200);
        // RocksDB's 30-day ttl: a fifth of it is longer than 43200.
        assert_eq!(trigger_period(&TriggerSettings::of(&quiet), [cf(0, 30 * 86_400)].iter()), 43_200);
        let short = DbConfig { max_compaction_trigger_wakeup_seconds: 5, ..quiet.clone() };
        assert_eq!(trigger_period(&TriggerSettings::of(&short), [cf(0, 30 * 86_400)].iter()), 5);
        // A fifth of the shortest interval of any family.
        assert_eq!(
            trigger_period(&TriggerSettings::of(&quiet), [cf(0, 0), cf(3600, 0), cf(0, 7200)].iter()),
            720
        );
        // At least one second.
        let zero = DbConfig { max_compaction_trigger_wakeup_seconds: 0, ..quiet.clone() };
        assert_eq!(trigger_period(&TriggerSettings::of(&zero), [cf(0, 0)].iter()), 1);
        assert_eq!(trigger_period(&TriggerSettings::of(&DbConfig::default()), [cf(1, 0)].iter()), 1);
        // FIFO's first temperature age counts too (RocksDB 11.8.1's case 7: 1000 -> 200).
        let fifo = CfConfig { fifo_temperature_ages: vec![(1000, 8), (5000, 12)], ..CfConfig::default() };
        assert_eq!(trigger_period(&TriggerSettings::of(&quiet), [fifo].iter()), 200);
    }
}
