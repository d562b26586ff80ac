//! Writes the OPTIONS-NNNNNN file (RocksDB's INI format) describing the open database, as
//! RocksDB does at open and after each column-family change; keeps the newest two.

use std::sync::Arc;

use super::cf::CfHandle;
use super::filename::{self, FileType};
use super::DbInner;
use crate::error::Result;
use crate::options_file::{self, CfSection, OptionsFile};
use crate::options_table::{self, Section};
use shale_base::lock_rank::{Rank, Ranked};

/// RocksDB 11.8.1's PlainTable options, in the order it writes them.
const PLAIN_TABLE_ORDER: &[&str] = &[
    "store_index_in_file",
    "encoding_type",
    "huge_page_tlb_size",
    "hash_table_ratio",
    "full_scan_mode",
    "bloom_bits_per_key",
    "index_sparseness",
    "user_key_len",
];

/// RocksDB 11.8.1's CuckooTable options, in the order it writes them.
const CUCKOO_TABLE_ORDER: &[&str] = &[
    "use_module_hash",
    "identity_as_first_hash",
    "max_search_depth",
    "cuckoo_block_size",
    "hash_table_ratio",
];

/// RocksDB 11.8.1's default family section.
fn defaults_cf() -> &'static CfSection {
    match OptionsFile::rocksdb_11_defaults_ref().cfs.first() {
        Some(c) => c,
        // The parser requires a "default" section; the embedded text has one (tested).
        None => unreachable!("RocksDB 11.8.1 defaults without a default family"),
    }
}

/// Sets `name` to `value` in a list taken from RocksDB 11.8.1's defaults. Every name Shale
/// sets is one 11.8.1 writes (`options_file_lists_what_rocksdb_11_writes` checks it), so this
/// replaces a value in place and never changes the order.
fn put(list: &mut Vec<(String, String)>, name: &str, value: impl ToString) {
    options_file::set_option(list, name, &value.to_string());
}

/// The `[DBOptions]` list: RocksDB 11.8.1's options in its order, with Shale's value (the
/// option table's getter, `options_table.rs`) for each option Shale keeps; the others keep
/// RocksDB's default, which is what Shale behaves as.
fn db_options(o: &crate::Options) -> Vec<(String, String)> {
    let mut l = OptionsFile::rocksdb_11_defaults_ref().db_options.clone();
    for r in options_table::rows(Section::Db) {
        if let Some(v) = r.get(o) {
            // An empty string option RocksDB does not write (daily_offpeak_time_utc).
            if v.is_empty() && !l.iter().any(|(k, _)| k == r.name) {
                continue;
            }
            put(&mut l, r.name, v);
        }
    }
    l
}

/// A `[CFOptions]` list (see [`db_options`]).
fn cf_options(c: &crate::Options) -> Vec<(String, String)> {
    let mut l = defaults_cf().options.clone();
    for r in options_table::rows(Section::Cf) {
        if let Some(v) = r.get(c) {
            // An empty vector option RocksDB does not write (compression_per_level).
            if v.is_empty() && !l.iter().any(|(k, _)| k == r.name) {
                continue;
            }
            // Not in the defaults (written only when set): where RocksDB 11.8.1 writes it.
            if r.name == "table_properties_collectors" && !l.iter().any(|(k, _)| k == r.name) {
                let at = l.iter().position(|(k, _)| k == "memtable_factory").map_or(l.len(), |i| i + 1);
                l.insert(at, (r.name.to_string(), v));
                continue;
            }
            put(&mut l, r.name, v);
        }
    }
    l
}

/// A family's table section: its factory's options in RocksDB 11.8.1's order.
fn table_options(c: &crate::Options) -> Vec<(String, String)> {
    let ordered = |order: &[&str], values: Vec<(&str, String)>| -> Vec<(String, String)> {
        order
            .iter()
            .filter_map(|k| values.iter().find(|(n, _)| n == k).map(|(n, v)| (n.to_string(), v.clone())))
            .collect()
    };
    match &c.table_format {
        crate::table::TableFormat::Plain(p) => ordered(
            PLAIN_TABLE_ORDER,
            vec![
                ("user_key_len", p.user_key_len.to_string()),
                ("bloom_bits_per_key", p.bloom_bits_per_key.to_string()),
                ("hash_table_ratio", format!("{:.6}", p.hash_table_ratio)),
                ("index_sparseness", p.index_sparseness.to_string()),
                ("huge_page_tlb_size", p.huge_page_tlb_size.to_string()),
                (
                    "encoding_type",
                    match p.encoding {
                        crate::table::plain::PlainEncoding::Plain => "kPlain",
                        crate::table::plain::PlainEncoding::Prefix => "kPrefix",
                    }
                    .to_string(),
                ),
                ("full_scan_mode", p.full_scan_mode.to_string()),
                ("store_index_in_file", p.store_index_in_file.to_string()),
            ],
        ),
        crate::table::TableFormat::Cuckoo(k) => ordered(
            CUCKOO_TABLE_ORDER,
            vec![
                ("hash_table_ratio", format!("{:.6}", k.hash_table_ratio)),
                ("max_search_depth", k.max_search_depth.to_string()),
                ("cuckoo_block_size", k.cuckoo_block_size.to_string()),
                ("identity_as_first_hash", k.identity_as_first_hash.to_string()),
                ("use_module_hash", k.use_module_hash.to_string()),
            ],
        ),
        crate::table::TableFormat::BlockBased => block_based_options(&c.table),
    }
}

/// The `[TableOptions/BlockBasedTable]` list (see [`db_options`]).
fn block_based_options(t: &crate::BlockBasedOptions) -> Vec<(String, String)> {
    let mut l = defaults_cf().table_options.clone();
    for r in options_table::rows(Section::Table) {
        if let Some(v) = r.get_table(t) {
            put(&mut l, r.name, v);
        }
    }
    l
}

/// The OPTIONS file describing `db` and its families `cfs` (name, options): what RocksDB
/// 11.8.1 writes (`rocksdb_version=11.8.1`, its options in its order).
pub(crate) fn options_file_of(db: &crate::Options, cfs: &[(&str, &crate::Options)]) -> OptionsFile {
    OptionsFile {
        rocksdb_version: options_file::WRITTEN_ROCKSDB_VERSION.to_string(),
        options_file_version: "1.1".to_string(),
        db_options: db_options(db),
        cfs: cfs
            .iter()
            .map(|(name, c)| CfSection {
                name: name.to_string(),
                options: cf_options(c),
                table_factory: c.table_format.factory_name().to_string(),
                table_options: table_options(c),
            })
            .collect(),
    }
}

/// The rust-rocksdb facade's hooks (`layer_hooks.rs`): they hold the DB-wide `Options` the
/// database was opened with and read each family's from its settings' record.
pub(crate) struct RocksOptionsHooks {
    /// The DB-wide options in force: the open's, then as `set_db_options` changed them.
    /// Rank `DB_OPTIONS`, a leaf: held only to copy or replace the options.
    db: Ranked<parking_lot::Mutex<crate::Options>>,
}

/// See `RocksOptionsHooks::db`.
const DB_OPTIONS: Rank = Rank::new(99, "db_options (the facade's DB-wide options in force)");

impl RocksOptionsHooks {
    pub(crate) fn new(db: crate::Options) -> RocksOptionsHooks {
        RocksOptionsHooks { db: Ranked::new(DB_OPTIONS, parking_lot::Mutex::new(db)) }
    }

    /// A copy of the DB-wide options in force.
    pub(crate) fn db_options(&self) -> crate::Options {
        self.db.lock().clone()
    }

    /// Replaces the DB-wide options in force (`set_db_options`, once applied).
    pub(crate) fn set_db_options(&self, db: crate::Options) {
        **self.db.lock() = db;
    }
}

impl super::layer_hooks::LayerHooks for RocksOptionsHooks {
    fn write_options_file(&self, inner: &DbInner) -> Result<()> {
        write_options_file(inner, &self.db_options())
    }

    fn log_cf_options(&self, inner: &DbInner, h: &CfHandle) -> Result<()> {
        let o = super::dyn_options::cf_options(h)?;
        super::dyn_options::log_cf_options(&inner.info_log, &h.name, o, h.block_cache().as_ref());
        Ok(())
    }

    fn set_db_options(&self, inner: &Arc<DbInner>, pairs: &[(&str, &str)]) -> Result<()> {
        super::dyn_options::apply_db_options(inner, self, pairs)
    }
}

/// Writes an OPTIONS file describing the open families (as RocksDB does after each change),
/// with `db` the DB-wide options.
fn write_options_file(inner: &DbInner, db: &crate::Options) -> Result<()> {
    let number = inner.versions.new_file_number();
    let cfs: Vec<Arc<CfHandle>> = inner.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
    let named = cfs
        .iter()
        .map(|h| Ok((h.name.as_str(), super::dyn_options::cf_options(h)?)))
        .collect::<Result<Vec<(&str, &crate::Options)>>>()?;
    let file = options_file_of(db, &named);
    report_unknown_options(inner);
    options_file::write_options_file(&*inner.fs, &inner.path, number, &file)?;
    // Keep only the newest two OPTIONS files, as RocksDB does.
    let mut olds: Vec<u64> = inner
        .fs
        .children(&inner.path)?
        .iter()
        .filter_map(|n| match filename::parse_file_name(n) {
            Some(FileType::Options(k)) if !n.ends_with(".dbtmp") => Some(k),
            _ => None,
        })
        .collect();
    olds.sort_unstable();
    if olds.len() > 2 {
        for k in &olds[..olds.len() - 2] {
            let _ = inner.fs.remove_file(&inner.path.join(options_file::options_file_name(*k)));
        }
    }
    Ok(())
}

/// Notes in the info log the options of the database's previous OPTIONS file that Shale does
/// not know (a newer RocksDB's; RocksDB itself skips them with `ignore_unknown_options`).
/// A missing or unreadable file is not an error here: DB::Open never depended on it.
fn report_unknown_options(inner: &DbInner) {
    let Ok(Some((number, previous))) = options_file::latest_options_file(&*inner.fs, &inner.path) else {
        return;
    };
    let unknown = previous.unknown_options();
    if !unknown.is_empty() {
        inner.info_log.log(format_args!(
            "{} (RocksDB {}) has {} options Shale does not know, ignored: {}",
            options_file::options_file_name(number),
            previous.rocksdb_version,
            unknown.len(),
            unknown.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ribbon policies are written as RocksDB 11.8.1 writes them (its db_bench
    /// `--use_ribbon_filter=1 --bloom_bits=10` OPTIONS file) and read back to the same policy.
    #[test]
    fn ribbon_filter_policy_text_round_trips() {
        let text = |t: &crate::BlockBasedOptions| -> String {
            block_based_options(t).into_iter().find(|(k, _)| k == "filter_policy").unwrap().1
        };
        let mut t = crate::BlockBasedOptions::default();
        t.set_ribbon_filter(10.0);
        assert_eq!(text(&t), "{id=ribbonfilter:10:0;bloom_before_level=0;}");
        t.set_hybrid_ribbon_filter(7.125, -1);
        let written = text(&t);
        assert_eq!(written, "{id=ribbonfilter:7.125:-1;bloom_before_level=-1;}");
        let mut back = crate::BlockBasedOptions::default();
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", &written).unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(7.125), Some(-1)));
        // The explicit option wins over the id's; the short forms are read too.
        let v = "{id=ribbonfilter:9.5:0;bloom_before_level=2;}";
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", v).unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(9.5), Some(2)));
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", "ribbonfilter:10").unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(10.0), Some(0)));
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", "bloomfilter:10:false").unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(10.0), None));
        assert_eq!(text(&back), "bloomfilter:10:false");
        // An id RocksDB's registry cannot build leaves the policy as it was (its NotSupported
        // under `ignore_unsupported_options`).
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", "{id=nosuch:3}").unwrap());
        assert_eq!(text(&back), "bloomfilter:10:false");
    }

    fn names(l: &[(String, String)]) -> Vec<&str> {
        l.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// Shale's file has every option RocksDB 11.8.1 writes, in 11.8.1's order, and nothing else.
    #[test]
    fn options_file_lists_what_rocksdb_11_writes() {
        let rocks = OptionsFile::rocksdb_11_defaults();
        let mut o = crate::Options::default();
        o.create_if_missing(true);
        let ours = options_file_of(&o, &[("default", &o), ("other", &o)]);
        assert_eq!(ours.rocksdb_version, "11.8.1");
        assert_eq!(ours.options_file_version, "1.1");
        assert_eq!(names(&ours.db_options), names(&rocks.db_options));
        let r = &rocks.cfs[0];
        for cf in &ours.cfs {
            assert_eq!(names(&cf.options), names(&r.options), "{}", cf.name);
            assert_eq!(cf.table_factory, "BlockBasedTable");
            assert_eq!(names(&cf.table_options), names(&r.table_options), "{}", cf.name);
        }
        // Struct values list 11.8.1's fields in its order.
        let fields = |v: &str| -> Vec<String> {
            v.trim_matches(|c| c == '{' || c == '}')
                .split(';')
                .filter_map(|f| f.split_once('=').map(|(k, _)| k.to_string()))
                .collect()
        };
        for s in ["compression_opts", "compaction_options_fifo", "compaction_options_universal"] {
            let (a, b) = (ours.cfs[0].option(s).unwrap(), r.option(s).unwrap());
            assert_eq!(fields(a), fields(b), "{s}");
        }
        // Shale's defaults are RocksDB's, and so is the text.
        let differs = |ours: &[(String, String)], rocks: &[(String, String)]| -> Vec<String> {
            ours.iter()
                .zip(rocks)
                .filter(|(a, b)| a.1 != b.1)
                .map(|(a, b)| format!("{}={} (RocksDB {})", a.0, a.1, b.1))
                .collect()
        };
        let d = differs(&ours.db_options, &rocks.db_options);
        let c = differs(&ours.cfs[0].options, &r.options);
        let t = differs(&ours.cfs[0].table_options, &r.table_options);
        println!("DBOptions: {d:#?}\nCFOptions: {c:#?}\nTable: {t:#?}");
        let start = |v: &[String]| -> Vec<String> {
            v.iter().map(|s| s.split('=').next().unwrap_or("").to_string()).collect()
        };
        assert_eq!(start(&d), ["create_if_missing"]);
        assert!(c.is_empty(), "{c:?}");
        assert!(t.is_empty(), "{t:?}");
    }

    /// Values RocksDB sanitizes from others are written as it writes them.
    #[test]
    fn sanitized_values() {
        let mut o = crate::Options::default();
        o.set_write_buffer_size(65536);
        o.set_target_file_size_base(1 << 20);
        let f = options_file_of(&o, &[("default", &o)]);
        let c = &f.cfs[0];
        assert_eq!(c.option("arena_block_size"), Some("8192"));
        let mut set = o.clone();
        set.set_arena_block_size(10_000);
        let f = options_file_of(&set, &[("default", &set)]);
        assert_eq!(f.cfs[0].option("arena_block_size"), Some("12288"), "a set size, rounded up to 4 KiB");
        assert_eq!(c.option("max_compaction_bytes"), Some("26214400"));
        assert_eq!(f.db_option("delayed_write_rate"), Some("16777216"));
        o.set_compaction_style(crate::DBCompactionStyle::Universal);
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].option("ttl"), Some("2592000"));
        assert_eq!(f.cfs[0].option("periodic_compaction_seconds"), Some("2592000"));
    }

    /// The block checksum and index shortening written are the ones the tables get.
    #[test]
    fn checksum_and_index_shortening_are_the_tables_own() {
        let mut o = crate::Options::default();
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_option("checksum"), Some("kXXH3"));
        assert_eq!(f.cfs[0].table_option("index_shortening"), Some("kShortenSeparators"));
        let mut t = crate::BlockBasedOptions::default();
        t.set_checksum_type(crate::ChecksumType::CRC32c);
        t.set_index_shortening(crate::IndexShorteningMode::ShortenSeparatorsAndSuccessor);
        o.set_block_based_table_factory(&t);
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_option("checksum"), Some("kCRC32c"));
        assert_eq!(f.cfs[0].table_option("index_shortening"), Some("kShortenSeparatorsAndSuccessor"));
    }

    /// Plain and cuckoo table sections have 11.8.1's options in its order.
    #[test]
    fn plain_and_cuckoo_sections_in_rocksdb_11_order() {
        let mut o = crate::Options::default();
        o.set_cuckoo_table_factory(&crate::CuckooTableOptions::default());
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_factory, "CuckooTable");
        assert_eq!(names(&f.cfs[0].table_options), CUCKOO_TABLE_ORDER);
        assert_eq!(f.cfs[0].option("table_factory"), Some("CuckooTable"));
        o.set_plain_table_factory(&crate::PlainTableFactoryOptions {
            user_key_length: 16,
            bloom_bits_per_key: 10,
            hash_table_ratio: 0.75,
            index_sparseness: 16,
            huge_page_tlb_size: 0,
            encoding_type: crate::KeyEncodingType::Plain,
            full_scan_mode: false,
            store_index_in_file: false,
        });
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_factory, "PlainTable");
        assert_eq!(names(&f.cfs[0].table_options), PLAIN_TABLE_ORDER);
        assert_eq!(f.cfs[0].table_option("user_key_len"), Some("16"));
    }
}
