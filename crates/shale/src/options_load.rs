//! `Options::load_latest`: the options of a database's latest OPTIONS file (`options_file.rs`)
//! as rust-rocksdb's `Options` and column family descriptors, as RocksDB's
//! `LoadLatestOptions`.
//!
//! Each `name=value` of the file goes through its row's setter in the option table
//! (`options_table.rs`; so what a setter refuses is refused here too). The options RocksDB
//! 11.8.1 marks `kDeprecated` (7.8.3's `max_write_buffer_number_to_maintain`,
//! `access_hint_on_compaction_start`, ...) have rows that take any value and change nothing,
//! as its parser. A value a row does not build is accepted only when it is RocksDB's default
//! (RocksDB 11.8.1's, `options_file/rocksdb_11_defaults.ini`, the version Shale's OPTIONS
//! files name, or 7.8.3's, `options_file/rocksdb_defaults.ini`, for files older RocksDBs
//! wrote): then it changes nothing. Any other value is NotSupported naming it, except an
//! enum value no RocksDB has, InvalidArgument as RocksDB 11.8.1's enum parser answers. A
//! name neither version knows (a newer RocksDB's option, or none at all) is an
//! InvalidArgument in RocksDB 11.8.1's words (`Extra option not recognized: <name>`), skipped
//! only with `ignore_unknown_options` in a file a RocksDB newer than 11.8 wrote, as RocksDB's
//! parser does. Struct values (`{a=1;b=2;}`) are compared field by field. The table section
//! builds BlockBasedTable (with the given cache as block cache), PlainTable or CuckooTable
//! options.
//!
//! Function-valued options (`comparator`, `merge_operator`, `compaction_filter`,
//! `compaction_filter_factory`, `prefix_extractor`, ...) are not rebuilt from the names the
//! file holds: the caller sets them on the descriptors' options, as with RocksDB, whose
//! LoadLatestOptions leaves them null unless the name is registered. `memtable_factory` is
//! rebuilt for the factories Shale has (skip list, HashSkipList, HashLinkList, vector), which
//! RocksDB registers built in; a factory (or `filter_policy`) RocksDB's registry cannot build
//! leaves the value as it was, as RocksDB's NotSupported under `ignore_unsupported_options`.

use crate::options_file::{self, CfSection, OptionsFile};
use crate::options_table::{bad_value, boolean, number};
use crate::options_table::{find, Kind, Mutable, Section};
use crate::{BlockBasedOptions, Cache, ColumnFamilyDescriptor, Env, Error, Options, Result};

/// Options whose values name code (objects the caller supplies); never applied from a file.
const FUNCTION_VALUED: &[&str] = &[
    "comparator",
    "merge_operator",
    "compaction_filter",
    "compaction_filter_factory",
    "prefix_extractor",
    "memtable_insert_with_hint_prefix_extractor",
    "sst_partitioner_factory",
    "table_properties_collectors",
    "compaction_thread_limiter",
    "blob_cache",
    "table_factory",
    "env",
    "file_system",
    "statistics",
    "rate_limiter",
    "sst_file_manager",
    "info_log",
    "listeners",
    "row_cache",
    "wal_filter",
];

/// Whether two option values are the same value: as text, as numbers or as booleans.
fn same_value(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x == y;
    }
    let as_bool = |s: &str| match s {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    };
    matches!((as_bool(a), as_bool(b)), (Some(x), Some(y)) if x == y)
}

/// What applying a file's options needs: RocksDB's defaults (11.8.1's, then 7.8.3's) and
/// whether unknown options are skipped.
struct Loader {
    defaults: [OptionsFile; 2],
    ignore_unknown: bool,
}

impl Loader {
    /// An option Shale has not applied: accepted at RocksDB's default, NotSupported
    /// otherwise, and unknown names as `ignore_unknown_options` says.
    /// `defaults`: the option's default in RocksDB 11.8.1 and 7.8.3 (those that have it).
    fn not_applied(&self, section: &str, defaults: &[&str], name: &str, v: &str) -> Result<()> {
        let Some(&d) = defaults.first() else {
            // An option RocksDB knows but does not write by default: unset only.
            if options_file::REGISTERED_NOT_WRITTEN.contains(&name) {
                return match v {
                    "" | "nullptr" => Ok(()),
                    _ => Err(not_supported(section, name, v, "nullptr")),
                };
            }
            return self.unknown(name);
        };
        let is_struct = |s: &str| s.starts_with('{') && s.ends_with('}');
        if is_struct(v) && defaults.iter().all(|d| is_struct(d)) {
            let mut known = Vec::new();
            for d in defaults {
                known.extend(crate::options_table::struct_fields(name, d)?);
            }
            for (k, x) in crate::options_table::struct_fields(name, v)? {
                let mut field_defaults =
                    known.iter().filter(|(dk, _)| *dk == k).map(|(_, dx)| *dx).peekable();
                match field_defaults.peek() {
                    None => self.unknown(&format!("{name}.{k}"))?,
                    Some(&dx) => {
                        if !field_defaults.any(|dx| same_value(x, dx)) {
                            return Err(not_supported(section, &format!("{name}.{k}"), x, dx));
                        }
                    }
                }
            }
            return Ok(());
        }
        if defaults.iter().any(|d| same_value(v, d)) {
            Ok(())
        } else {
            Err(not_supported(section, name, v, d))
        }
    }

    /// RocksDB 11.8.1's refusal of an unknown option (`Extra option not recognized` for an
    /// option, `Unrecognized option` for a struct's field), unless it is skipped.
    fn unknown(&self, name: &str) -> Result<()> {
        if self.ignore_unknown {
            return Ok(());
        }
        if name.contains('.') {
            Err(Error::invalid_argument(format!("Unrecognized option: {name}")))
        } else {
            Err(Error::invalid_argument(format!("Extra option not recognized: {name}")))
        }
    }

    /// A struct value without the fields no RocksDB default of it has, when unknown options
    /// are skipped (a newer RocksDB's fields); otherwise the value as it is.
    fn known_fields_only(&self, name: &str, v: &str, defaults: &[&str]) -> Result<String> {
        let is_struct = |s: &str| s.starts_with('{') && s.ends_with('}');
        if !self.ignore_unknown || !is_struct(v) || defaults.is_empty() {
            return Ok(v.to_string());
        }
        let mut known = Vec::new();
        for d in defaults {
            known.extend(crate::options_table::struct_fields(name, d)?.into_iter().map(|(k, _)| k));
        }
        let mut out = String::from("{");
        for (k, x) in crate::options_table::struct_fields(name, v)? {
            if known.contains(&k) {
                out.push_str(&format!("{k}={x};"));
            }
        }
        out.push('}');
        Ok(out)
    }

    fn db_defaults(&self, name: &str) -> Vec<&str> {
        self.defaults.iter().filter_map(|d| d.db_option(name)).collect()
    }

    fn cf_defaults(&self, name: &str) -> Vec<&str> {
        self.defaults.iter().filter_map(|d| d.cfs.first().and_then(|c| c.option(name))).collect()
    }

    fn table_defaults(&self, name: &str) -> Vec<&str> {
        self.defaults.iter().filter_map(|d| d.cfs.first().and_then(|c| c.table_option(name))).collect()
    }

    fn db_option(&self, o: &mut Options, name: &str, v: &str) -> Result<()> {
        let applied = match find(Section::Db, name) {
            Some(r) => enum_mapped(r, v, r.set(o, v)?)?,
            None => false,
        };
        if !applied && !FUNCTION_VALUED.contains(&name) {
            self.not_applied("DBOptions", &self.db_defaults(name), name, v)?;
        }
        Ok(())
    }

    fn cf_option(&self, o: &mut Options, name: &str, v: &str) -> Result<()> {
        let applied = match find(Section::Cf, name) {
            // A mutable struct option keeps the fields RocksDB 11.8.1 or 7.8.3 has.
            Some(r) if r.kind == Kind::Struct && r.mutable == Mutable::Yes => {
                let v = self.known_fields_only(name, v, &self.cf_defaults(name))?;
                r.set(o, &v)?
            }
            Some(r) => enum_mapped(r, v, r.set(o, v)?)?,
            None => false,
        };
        if !applied && !FUNCTION_VALUED.contains(&name) {
            self.not_applied("CFOptions", &self.cf_defaults(name), name, v)?;
        }
        Ok(())
    }

    fn table_option(&self, t: &mut BlockBasedOptions, name: &str, v: &str) -> Result<()> {
        if !apply_table(t, name, v)? && !FUNCTION_VALUED.contains(&name) {
            self.not_applied("TableOptions/BlockBasedTable", &self.table_defaults(name), name, v)?;
        }
        Ok(())
    }

    fn family(&self, db: &Options, cf: &CfSection, cache: &Cache) -> Result<Options> {
        let mut o = db.clone();
        for (k, v) in &cf.options {
            self.cf_option(&mut o, k, v)?;
        }
        match cf.table_factory.as_str() {
            "" | "BlockBasedTable" => {
                let mut t = BlockBasedOptions::default();
                t.set_block_cache(cache);
                for (k, v) in &cf.table_options {
                    self.table_option(&mut t, k, v)?;
                }
                o.set_block_based_table_factory(&t);
            }
            "PlainTable" => {
                let mut p = crate::PlainTableFactoryOptions {
                    user_key_length: 0,
                    bloom_bits_per_key: 10,
                    hash_table_ratio: 0.75,
                    index_sparseness: 16,
                    huge_page_tlb_size: 0,
                    encoding_type: crate::KeyEncodingType::Plain,
                    full_scan_mode: false,
                    store_index_in_file: false,
                };
                for (k, v) in &cf.table_options {
                    match k.as_str() {
                        "user_key_len" => p.user_key_length = number(k, v)?,
                        "bloom_bits_per_key" => p.bloom_bits_per_key = number(k, v)?,
                        "hash_table_ratio" => p.hash_table_ratio = number(k, v)?,
                        "index_sparseness" => p.index_sparseness = number(k, v)?,
                        "huge_page_tlb_size" => p.huge_page_tlb_size = number(k, v)?,
                        "encoding_type" => {
                            p.encoding_type = match v.as_str() {
                                "kPlain" => crate::KeyEncodingType::Plain,
                                "kPrefix" => crate::KeyEncodingType::Prefix,
                                _ => return Err(bad_value(k, v)),
                            }
                        }
                        "full_scan_mode" => p.full_scan_mode = boolean(k, v)?,
                        "store_index_in_file" => p.store_index_in_file = boolean(k, v)?,
                        _ => self.unknown(k)?,
                    }
                }
                o.set_plain_table_factory(&p);
            }
            "CuckooTable" => {
                let mut c = crate::CuckooTableOptions::default();
                for (k, v) in &cf.table_options {
                    match k.as_str() {
                        "hash_table_ratio" => c.set_hash_ratio(number(k, v)?),
                        "max_search_depth" => c.set_max_search_depth(number(k, v)?),
                        "cuckoo_block_size" => c.set_cuckoo_block_size(number(k, v)?),
                        "identity_as_first_hash" => c.set_identity_as_first_hash(boolean(k, v)?),
                        "use_module_hash" => c.set_use_module_hash(boolean(k, v)?),
                        _ => self.unknown(k)?,
                    }
                }
                o.set_cuckoo_table_factory(&c);
            }
            other => {
                return Err(Error::not_supported(format!(
                    "load_latest: table factory {other} of column family \"{}\" is not supported by Shale",
                    cf.name
                )))
            }
        }
        refused(&o, &format!("column family \"{}\"", cf.name))?;
        Ok(o)
    }
}

fn not_supported(section: &str, name: &str, v: &str, default: &str) -> Error {
    Error::not_supported(format!(
        "load_latest: option {section}::{name}={v} is not supported by Shale (only RocksDB's default {default})"
    ))
}

/// NotSupported naming the first option a setter recorded as refused.
fn refused(o: &Options, what: &str) -> Result<()> {
    match o.unsupported.first() {
        Some(name) => Err(Error::not_supported(format!(
            "load_latest: option {name} of {what} is not supported by Shale"
        ))),
        None => Ok(()),
    }
}

/// Builds the options of an OPTIONS file (see the module comment).
pub(crate) fn from_file(
    file: &OptionsFile,
    env: &Env,
    ignore_unknown_options: bool,
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
    // RocksDB's parser skips unknown options only in a file a newer RocksDB wrote.
    let loader = Loader {
        defaults: [OptionsFile::rocksdb_11_defaults(), OptionsFile::rocksdb_defaults()],
        ignore_unknown: ignore_unknown_options && file.is_from_newer_version(),
    };
    // Unknown options (struct fields too) in RocksDB 11.8.1's words, before any is applied.
    file.check_unknown_options(ignore_unknown_options)?;
    let mut db = Options::default();
    db.set_env(env);
    for (k, v) in &file.db_options {
        loader.db_option(&mut db, k, v)?;
    }
    refused(&db, "DBOptions")?;
    let mut descs = Vec::with_capacity(file.cfs.len());
    let mut main = None;
    for cf in &file.cfs {
        let o = loader.family(&db, cf, cache)?;
        if cf.name == "default" {
            main = Some(o.clone());
        }
        descs.push(ColumnFamilyDescriptor::new(cf.name.clone(), o));
    }
    // The parser requires a "default" section; its options are the returned ones.
    let main = main.ok_or_else(|| Error::corruption("OPTIONS file without a default column family"))?;
    Ok((main, descs))
}

/// The latest OPTIONS file of `path`, built (NotFound when there is none).
pub(crate) fn load_latest(
    path: &std::path::Path,
    env: &Env,
    ignore_unknown_options: bool,
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
    let fs = env.fs.clone().unwrap_or_else(crate::fs::default_fs);
    match options_file::latest_options_file(&*fs, path)? {
        Some((_, file)) => from_file(&file, env, ignore_unknown_options, cache),
        None => Err(Error::not_found(format!("There is no options file in: {}", path.display()))),
    }
}

/// `load_latest` of the OPTIONS file numbered `number` (what RocksDB's `OpenAndCompact`
/// loads: the file the primary names in its CompactionServiceInput).
pub(crate) fn load_numbered(
    path: &std::path::Path,
    number: u64,
    env: &Env,
    ignore_unknown_options: bool,
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
    let fs = env.fs.clone().unwrap_or_else(crate::fs::default_fs);
    let file = options_file::read_options_file(&*fs, path, number)?;
    from_file(&file, env, ignore_unknown_options, cache)
}

/// Applies one BlockBasedTable entry by its row in the option table; false when Shale has
/// none for it (or does not apply the value).
pub(crate) fn apply_table(t: &mut BlockBasedOptions, name: &str, v: &str) -> Result<bool> {
    match find(Section::Table, name) {
        Some(r) => enum_mapped(r, v, r.set_table(t, v)?),
        None => Ok(false),
    }
}

/// Values of RocksDB 11.8.1's enum options that Shale's rows do not apply (then accepted at
/// RocksDB's default only, by `not_applied`): none now.
const ENUM_VALUES_NOT_BUILT: &[(&str, &str)] = &[];

/// An enum option's value that names none of RocksDB 11.8.1's values for it: InvalidArgument,
/// as its `OptionTypeInfo::Enum` parser ("No mapping for enum ", name), whatever the file's
/// version.
fn enum_mapped(r: &crate::options_table::OptionRow, v: &str, applied: bool) -> Result<bool> {
    if !applied && r.kind == Kind::Enum && !ENUM_VALUES_NOT_BUILT.contains(&(r.name, v)) {
        // compaction_style is parsed by ParseOptionHelper (OptionType::kCompactionStyle).
        let what = if r.name == "compaction_style" { "Error parsing:" } else { "No mapping for enum " };
        return Err(Error::invalid_argument(format!("{what}: {}", r.name)));
    }
    Ok(applied)
}
