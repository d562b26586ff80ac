//! Block-cache entry statistics (RocksDB's `CacheEntryStatsCollector` and
//! `InternalStats::CacheEntryRoleStats`): how many entries of each role the cache holds and
//! their bytes, gathered by walking the cache.
//!
//! One collector per cache, shared by every database using it (RocksDB keeps it in the
//! cache). A walk takes no database lock, only the collector's own `working` mutex (one walk
//! at a time) and, to copy the result out, the short `saved` mutex: readers of the last result
//! never wait for a walk in progress. A walk is skipped, and the last result returned, while
//! that result is younger than `max(min_interval_seconds, min_interval_factor x the last walk's
//! duration)`: 10 s and 10x for a property asked in the foreground
//! (`rocksdb.block-cache-entry-stats`), 180 s and 500x in the background
//! (`rocksdb.fast-block-cache-entry-stats`, the periodic stats dump). `rocksdb.stats` and
//! `rocksdb.cfstats` only print the saved result (if under a day old) and never walk.
//!
//! Each cache entry carries its role (`cache::role`): data blocks; index and filter blocks
//! with `cache_index_and_filter_blocks`; write-buffer reservations of a `WriteBufferManager`
//! made with the cache; misc (row-cache rows, the collector's own entry). Roles Shale never
//! caches are printed with zero counts in the map form, as RocksDB prints them.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

/// RocksDB's `CacheEntryRole` names, camel case (text form) and hyphenated (map keys).
pub const ROLES: [(&str, &str); 14] = [
    ("DataBlock", "data-block"),
    ("FilterBlock", "filter-block"),
    ("FilterMetaBlock", "filter-meta-block"),
    ("DeprecatedFilterBlock", "deprecated-filter-block"),
    ("IndexBlock", "index-block"),
    ("OtherBlock", "other-block"),
    ("WriteBuffer", "write-buffer"),
    ("CompressionDictionaryBuildingBuffer", "compression-dictionary-building-buffer"),
    ("FilterConstruction", "filter-construction"),
    ("BlockBasedTableReader", "block-based-table-reader"),
    ("FileMetadata", "file-metadata"),
    ("BlobValue", "blob-value"),
    ("BlobCache", "blob-cache"),
    ("Misc", "misc"),
];

/// The role index of data blocks.
pub const DATA_BLOCK: usize = 0;

fn now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// RocksDB's `BytesToHumanString`: KB at least, two decimals.
fn human(bytes: u64) -> String {
    let names = ["KB", "MB", "GB", "TB"];
    let mut size = bytes as f64 / 1024.0;
    let mut i = 0;
    while i < 3 && size >= 1024.0 {
        size /= 1024.0;
        i += 1;
    }
    format!("{size:.2} {}", names[i])
}

/// A double as C++'s `ostream <<` prints it (`%g`, six significant digits).
fn g6(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            "inf".into()
        } else {
            "0".into()
        };
    }
    let exp = x.abs().log10().floor() as i32;
    let strip = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-5..6).contains(&exp) {
        let m = x / 10f64.powi(exp);
        let m = strip(format!("{m:.5}"));
        format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        strip(format!("{x:.*}", (5 - exp).max(0) as usize))
    }
}

/// One collection's result (RocksDB's `CacheEntryRoleStats`).
#[derive(Clone, Debug, Default)]
pub struct EntryStats {
    pub cache_id: String,
    pub capacity: u64,
    pub usage: u64,
    pub occupancy: u64,
    pub collection_count: u64,
    pub copies_of_last_collection: u64,
    pub last_start_micros: u64,
    pub last_end_micros: u64,
    pub counts: [u64; 14],
    pub bytes: [u64; 14],
}

impl EntryStats {
    fn last_duration_micros(&self) -> u64 {
        self.last_end_micros.saturating_sub(self.last_start_micros)
    }

    /// The text RocksDB prints (`rocksdb.block-cache-entry-stats`, and in `rocksdb.stats`).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Block cache {} capacity: {} seed: 0 usage: {} table_size: {} occupancy: {} collections: {} \
             last_copies: {} last_secs: {} secs_since: {}",
            self.cache_id,
            human(self.capacity),
            human(self.usage),
            self.occupancy,
            self.occupancy,
            self.collection_count,
            self.copies_of_last_collection,
            g6(self.last_duration_micros() as f64 / 1e6),
            now_micros().saturating_sub(self.last_end_micros) / 1_000_000
        );
        s.push_str("Block cache entry stats(count,size,portion):");
        for (i, (camel, _)) in ROLES.iter().enumerate() {
            if self.counts[i] > 0 {
                let pct = 100.0 * self.bytes[i] as f64 / self.capacity as f64;
                let _ = write!(s, " {camel}({},{},{}%)", self.counts[i], human(self.bytes[i]), g6(pct));
            }
        }
        s.push('\n');
        s
    }

    /// The map RocksDB's `GetMapProperty` gives (`CacheEntryRoleStats::ToMap`).
    pub fn to_map(&self) -> std::collections::BTreeMap<String, String> {
        let mut m = std::collections::BTreeMap::new();
        m.insert("id".to_string(), self.cache_id.clone());
        m.insert("capacity".to_string(), self.capacity.to_string());
        m.insert(
            "secs_for_last_collection".to_string(),
            format!("{:.6}", self.last_duration_micros() as f64 / 1e6),
        );
        m.insert(
            "secs_since_last_collection".to_string(),
            (now_micros().saturating_sub(self.last_end_micros) / 1_000_000).to_string(),
        );
        for (i, (_, hyphen)) in ROLES.iter().enumerate() {
            m.insert(format!("count.{hyphen}"), self.counts[i].to_string());
            m.insert(format!("bytes.{hyphen}"), self.bytes[i].to_string());
            m.insert(
                format!("percent.{hyphen}"),
                format!("{:.6}", 100.0 * self.bytes[i] as f64 / self.capacity as f64),
            );
        }
        m
    }
}

/// What a walk needs from the cache: its identity, capacity and usage, and its entries.
pub trait Walkable {
    fn id(&self) -> String;
    fn capacity(&self) -> u64;
    fn usage(&self) -> u64;
    /// Calls `f(role, charge)` for every entry.
    fn for_each_entry(&self, f: &mut dyn FnMut(usize, u64));
}

/// A hook run in the middle of every walk (tests make walks slow or look for held locks).
pub type ScanHook = Arc<dyn Fn() + Send + Sync>;

/// The collector (see the module comment).
#[derive(Default)]
pub struct Collector {
    working: Mutex<EntryStats>,
    saved: Mutex<EntryStats>,
    hook: Mutex<Option<ScanHook>>,
}

impl Collector {
    /// Walks the cache unless the last result is young enough, then saves the result.
    pub fn collect(&self, cache: &dyn Walkable, min_interval_seconds: u64, min_interval_factor: u64) {
        let mut w = self.working.lock();
        let mut max_age = min_interval_seconds * 1_000_000;
        if w.last_end_micros > w.last_start_micros && min_interval_factor > 0 {
            max_age = max_age.max(min_interval_factor * w.last_duration_micros());
        }
        let start = now_micros();
        if start.saturating_sub(w.last_end_micros) > max_age {
            w.last_start_micros = start;
            w.collection_count += 1;
            w.copies_of_last_collection = 0;
            w.cache_id = cache.id();
            w.capacity = cache.capacity();
            w.usage = cache.usage();
            w.counts = [0; 14];
            w.bytes = [0; 14];
            let mut n = 0;
            let hook = self.hook.lock().clone();
            cache.for_each_entry(&mut |role, charge| {
                w.counts[role] += 1;
                w.bytes[role] += charge;
                n += 1;
            });
            if let Some(h) = hook {
                h();
            }
            w.occupancy = n;
            w.last_end_micros = now_micros().max(start + 1);
        } else {
            w.copies_of_last_collection += 1;
        }
        *self.saved.lock() = w.clone();
    }

    /// The last saved result, whatever its age; never waits for a walk.
    pub fn last(&self) -> EntryStats {
        self.saved.lock().clone()
    }

    pub fn set_hook(&self, hook: Option<ScanHook>) {
        *self.hook.lock() = hook;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake(u64);

    impl Walkable for Fake {
        fn id(&self) -> String {
            "Fake@1#2".into()
        }
        fn capacity(&self) -> u64 {
            1 << 20
        }
        fn usage(&self) -> u64 {
            self.0 * 1000
        }
        fn for_each_entry(&self, f: &mut dyn FnMut(usize, u64)) {
            for _ in 0..self.0 {
                f(DATA_BLOCK, 1000);
            }
        }
    }

    #[test]
    fn formats_as_rocksdb() {
        assert_eq!(human(0), "0.00 KB");
        assert_eq!(human(1536), "1.50 KB");
        assert_eq!(human(3 << 20), "3.00 MB");
        assert_eq!(g6(0.0), "0");
        assert_eq!(g6(12.5), "12.5");
        assert_eq!(g6(100.0), "100");
        assert_eq!(g6(0.0953674), "0.0953674");
        assert_eq!(g6(1.0 / 3.0), "0.333333");
        assert_eq!(g6(1234567.0), "1.23457e+06");
        assert_eq!(g6(0.0000012), "1.2e-06");
    }

    #[test]
    fn collects_then_reuses_a_young_result() {
        let c = Collector::default();
        c.collect(&Fake(3), 10, 10);
        let s = c.last();
        assert_eq!((s.counts[DATA_BLOCK], s.bytes[DATA_BLOCK], s.collection_count), (3, 3000, 1));
        // Younger than 10 s: not walked again.
        c.collect(&Fake(5), 10, 10);
        let s = c.last();
        assert_eq!((s.counts[DATA_BLOCK], s.collection_count, s.copies_of_last_collection), (3, 1, 1));
        // No floor and no factor: walked again.
        std::thread::sleep(std::time::Duration::from_millis(2));
        c.collect(&Fake(5), 0, 0);
        assert_eq!(c.last().counts[DATA_BLOCK], 5);
        let text = c.last().to_text();
        assert!(text.starts_with("Block cache Fake@1#2 capacity: 1.00 MB seed: 0 usage: 4.88 KB"), "{text}");
        assert!(
            text.ends_with("Block cache entry stats(count,size,portion): DataBlock(5,4.88 KB,0.476837%)\n"),
            "{text}"
        );
        let m = c.last().to_map();
        assert_eq!(m["count.data-block"], "5");
        assert_eq!(m["bytes.data-block"], "5000");
        assert_eq!(m["percent.data-block"], "0.476837");
        assert_eq!(m["count.index-block"], "0");
        assert_eq!(m.len(), 4 + 3 * 14);
    }
}
