//! RocksDB's `CompactOnDeletionCollector` (utilities/table_properties_collectors): while a
//! table is written it watches the entries added, and marks the table "needs compaction"
//! when some sliding window of `window_size` consecutive entries held at least
//! `deletion_trigger` deletions, or (with `0 < deletion_ratio <= 1`) when the whole table's
//! deletions reach that ratio. The compaction picker then compacts marked tables
//! (`compaction/picker.rs`). It writes no table property, as RocksDB's.
//!
//! The window is RocksDB's ring of 128 buckets of `ceil(window_size / 128)` entries each: the
//! count covers the current bucket and the 127 before it.

use crate::options_file::cpp_ostream_double;

const NUM_BUCKETS: usize = 128;

/// The factory `Options::add_compact_on_deletion_collector_factory` adds (its settings).
#[derive(Clone, Debug, PartialEq)]
pub struct CompactOnDeletionCollectorFactory {
    pub window_size: usize,
    pub deletion_trigger: usize,
    pub deletion_ratio: f64,
    pub min_file_size: u64,
}

impl CompactOnDeletionCollectorFactory {
    /// RocksDB's `ToString()`, printed in the LOG's `Options.table_properties_collectors`.
    pub fn description(&self) -> String {
        format!(
            "CompactOnDeletionCollector (Sliding window size = {} Deletion trigger = {} Deletion ratio = {})",
            self.window_size,
            self.deletion_trigger,
            cpp_ostream_double(self.deletion_ratio)
        )
    }

    pub fn new_collector(&self) -> CompactOnDeletionCollector {
        CompactOnDeletionCollector {
            bucket_size: self.window_size.div_ceil(NUM_BUCKETS),
            current_bucket: 0,
            keys_in_current_bucket: 0,
            deletions_in_window: 0,
            deletions_in_buckets: [0; NUM_BUCKETS],
            deletion_trigger: self.deletion_trigger,
            deletion_ratio: self.deletion_ratio,
            ratio_enabled: self.deletion_ratio > 0.0 && self.deletion_ratio <= 1.0,
            min_file_size: self.min_file_size,
            cur_file_size: 0,
            max_deletions_in_window: 0,
            total_entries: 0,
            deletion_entries: 0,
            need_compaction: false,
        }
    }
}

/// A table properties collector factory RocksDB 11.8.1 can name in options (its registry's
/// `TablePropertiesCollectorFactory`s, `table_properties_collectors` in options strings and
/// OPTIONS files).
#[derive(Clone, Debug, PartialEq)]
pub enum CollectorFactory {
    /// `CompactOnDeletionCollector`.
    CompactOnDeletion(CompactOnDeletionCollectorFactory),
    /// `CompactForTieringCollector` (`compaction_trigger_ratio`): RocksDB makes a collector
    /// only for a table written with a last-level sequence threshold, which exists only with
    /// `preclude_last_level_data_seconds` above 0; Shale keeps that option at RocksDB's
    /// default 0, so, as RocksDB's factory then does, it makes none and the table is only
    /// named in `rocksdb.property.collectors`.
    CompactForTiering { compaction_trigger_ratio: f64 },
}

impl CollectorFactory {
    /// RocksDB's `Name()` (the `id`, and the names in `rocksdb.property.collectors`).
    pub fn name(&self) -> &'static str {
        match self {
            CollectorFactory::CompactOnDeletion(_) => "CompactOnDeletionCollector",
            CollectorFactory::CompactForTiering { .. } => "CompactForTieringCollector",
        }
    }

    /// RocksDB's `ToString()` (the LOG's `Options.table_properties_collectors`).
    pub fn description(&self) -> String {
        match self {
            CollectorFactory::CompactOnDeletion(f) => f.description(),
            // RocksDB ends it with std::endl.
            CollectorFactory::CompactForTiering { compaction_trigger_ratio } => format!(
                "CompactForTieringCollector, compaction trigger ratio:{}\n",
                cpp_ostream_double(*compaction_trigger_ratio)
            ),
        }
    }

    /// The element as RocksDB 11.8.1 serialises it in an OPTIONS file: `{id=<name>;` and the
    /// registered options in its order, numbers by `std::to_string`, then `}`.
    pub fn options_text(&self) -> String {
        match self {
            CollectorFactory::CompactOnDeletion(f) => format!(
                "{{id=CompactOnDeletionCollector;min_file_size={};deletion_ratio={:.6};deletion_trigger={};window_size={};}}",
                f.min_file_size, f.deletion_ratio, f.deletion_trigger, f.window_size
            ),
            CollectorFactory::CompactForTiering { compaction_trigger_ratio } => {
                format!("{{id=CompactForTieringCollector;compaction_trigger_ratio={compaction_trigger_ratio:.6};}}")
            }
        }
    }

    /// RocksDB's `TablePropertiesCollectorFactory::CreateFromString` for a registered `id`
    /// with its `fields` (`name=value`): the factory its registry makes (all settings 0, a
    /// disabled collector) with the fields set over it. None: an id RocksDB 11.8.1 does not
    /// register. Err names a field that is not the factory's or a value that does not parse.
    pub fn from_fields(id: &str, fields: &[(&str, &str)]) -> Result<Option<Self>, String> {
        fn num<T: std::str::FromStr>(k: &str, v: &str) -> Result<T, String> {
            v.trim().parse().map_err(|_| format!("invalid value `{v}` for {k}"))
        }
        match id {
            "CompactOnDeletionCollector" => {
                let mut f = CompactOnDeletionCollectorFactory {
                    window_size: 0,
                    deletion_trigger: 0,
                    deletion_ratio: 0.0,
                    min_file_size: 0,
                };
                for &(k, v) in fields {
                    match k {
                        "window_size" => f.window_size = num(k, v)?,
                        "deletion_trigger" => f.deletion_trigger = num(k, v)?,
                        "deletion_ratio" => f.deletion_ratio = num(k, v)?,
                        "min_file_size" => f.min_file_size = num(k, v)?,
                        _ => return Err(format!("Could not find option: {k}")),
                    }
                }
                Ok(Some(CollectorFactory::CompactOnDeletion(f)))
            }
            "CompactForTieringCollector" => {
                let mut ratio = 0.0;
                for &(k, v) in fields {
                    match k {
                        "compaction_trigger_ratio" => ratio = num(k, v)?,
                        _ => return Err(format!("Could not find option: {k}")),
                    }
                }
                Ok(Some(CollectorFactory::CompactForTiering { compaction_trigger_ratio: ratio }))
            }
            _ => Ok(None),
        }
    }

    /// The collector for one new table (None: this factory makes none, see the variants).
    pub fn new_collector(&self) -> Option<CompactOnDeletionCollector> {
        match self {
            CollectorFactory::CompactOnDeletion(f) => Some(f.new_collector()),
            CollectorFactory::CompactForTiering { .. } => None,
        }
    }
}

/// RocksDB's `rocksdb.property.collectors` value: `[name,name,...]`, one per factory.
pub fn property_collectors_names(factories: &[CollectorFactory]) -> String {
    let names: Vec<&str> = factories.iter().map(CollectorFactory::name).collect();
    format!("[{}]", names.join(","))
}

/// One table's collector.
pub struct CompactOnDeletionCollector {
    bucket_size: usize,
    current_bucket: usize,
    keys_in_current_bucket: usize,
    deletions_in_window: usize,
    deletions_in_buckets: [usize; NUM_BUCKETS],
    deletion_trigger: usize,
    deletion_ratio: f64,
    ratio_enabled: bool,
    min_file_size: u64,
    cur_file_size: u64,
    max_deletions_in_window: usize,
    total_entries: u64,
    deletion_entries: u64,
    need_compaction: bool,
}

impl CompactOnDeletionCollector {
    /// An entry was added; `is_delete` for Delete and SingleDelete, `file_size` the table's
    /// size so far.
    pub fn add(&mut self, is_delete: bool, file_size: u64) {
        if (self.bucket_size == 0 && !self.ratio_enabled) || self.need_compaction {
            return;
        }
        if self.ratio_enabled {
            self.total_entries += 1;
            self.deletion_entries += u64::from(is_delete);
            self.cur_file_size = file_size;
        }
        if self.bucket_size > 0 {
            if self.keys_in_current_bucket == self.bucket_size {
                self.current_bucket = (self.current_bucket + 1) % NUM_BUCKETS;
                self.deletions_in_window -= self.deletions_in_buckets[self.current_bucket];
                self.deletions_in_buckets[self.current_bucket] = 0;
                self.keys_in_current_bucket = 0;
            }
            self.keys_in_current_bucket += 1;
            if is_delete {
                self.deletions_in_window += 1;
                self.deletions_in_buckets[self.current_bucket] += 1;
                self.max_deletions_in_window = self.max_deletions_in_window.max(self.deletions_in_window);
            }
            if self.max_deletions_in_window >= self.deletion_trigger && file_size >= self.min_file_size {
                self.need_compaction = true;
            }
        }
    }

    /// Whether the finished table is marked for compaction.
    pub fn finish(&mut self) -> bool {
        if !self.need_compaction
            && self.ratio_enabled
            && self.total_entries > 0
            && self.cur_file_size >= self.min_file_size
        {
            self.need_compaction =
                self.deletion_entries as f64 / self.total_entries as f64 >= self.deletion_ratio;
        }
        self.need_compaction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(window: usize, trigger: usize, ratio: f64) -> CompactOnDeletionCollectorFactory {
        CompactOnDeletionCollectorFactory {
            window_size: window,
            deletion_trigger: trigger,
            deletion_ratio: ratio,
            min_file_size: 0,
        }
    }

    #[test]
    fn options_text_is_rocksdbs() {
        // What RocksDB 11.8.1's ldb wrote back for these two factories.
        let d = CollectorFactory::from_fields(
            "CompactOnDeletionCollector",
            &[("window_size", "100"), ("deletion_trigger", "10")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            d.options_text(),
            "{id=CompactOnDeletionCollector;min_file_size=0;deletion_ratio=0.000000;deletion_trigger=10;window_size=100;}"
        );
        let t = CollectorFactory::from_fields(
            "CompactForTieringCollector",
            &[("compaction_trigger_ratio", "0.3")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.options_text(), "{id=CompactForTieringCollector;compaction_trigger_ratio=0.300000;}");
        assert_eq!(t.description(), "CompactForTieringCollector, compaction trigger ratio:0.3\n");
        assert!(t.new_collector().is_none());
        assert_eq!(
            property_collectors_names(&[d, t]),
            "[CompactOnDeletionCollector,CompactForTieringCollector]"
        );
        assert!(CollectorFactory::from_fields("Nope", &[]).unwrap().is_none());
        assert!(CollectorFactory::from_fields("CompactOnDeletionCollector", &[("x", "1")]).is_err());
        assert!(CollectorFactory::from_fields("CompactOnDeletionCollector", &[("window_size", "z")]).is_err());
    }

    #[test]
    fn description_is_rocksdbs() {
        assert_eq!(
            factory(5, 10, 0.5).description(),
            "CompactOnDeletionCollector (Sliding window size = 5 Deletion trigger = 10 Deletion ratio = 0.5)"
        );
    }

    #[test]
    fn window_trigger() {
        // 128 entries per window (one per bucket): 10 deletions spread over 300 entries, never 10 in a
        // window of 128, do not mark; 10 in a row do.
        let f = factory(128, 10, 0.0);
        let mut c = f.new_collector();
        for i in 0..300 {
            c.add(i % 30 == 0, i);
        }
        assert!(!c.finish());
        let mut c = f.new_collector();
        for i in 0..300 {
            c.add((100..110).contains(&i), i);
        }
        assert!(c.finish());
        // A deletion leaves the window after 128 entries.
        let mut c = f.new_collector();
        for i in 0..400u64 {
            c.add(i < 9 || (200..201).contains(&i), i);
        }
        assert!(!c.finish());
    }

    #[test]
    fn ratio() {
        let f = factory(0, 0, 0.5);
        let mut c = f.new_collector();
        for i in 0..100 {
            c.add(i % 2 == 0, i);
        }
        assert!(c.finish());
        let mut c = f.new_collector();
        for i in 0..100 {
            c.add(i % 3 == 0, i);
        }
        assert!(!c.finish());
        // Ratio out of (0, 1] is off.
        let mut c = factory(0, 0, 1.5).new_collector();
        c.add(true, 1);
        assert!(!c.finish());
    }
}
