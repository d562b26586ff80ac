//! ldb's commands that open the database: get, put, batchput, delete, singledelete,
//! deleterange, scan, dump, idump, compact, approxsize, get_property, list_column_families,
//! create_column_family, drop_column_family, repair.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use shale::{IteratorMode, Options, ReadOptions, WriteBatch, DB};

use super::fmt::{hex_to_string, ikey_debug, slice_to_string, string_to_hex, Failure, Res};
use super::manifest::{self, internal_entries};
use super::{Out, Parsed};

/// Key and value encodings of a command (`--hex`, `--key_hex`, `--value_hex`).
pub struct Hex {
    pub key: bool,
    pub value: bool,
}

impl Hex {
    pub fn of(p: &Parsed) -> Hex {
        let all = p.flag("hex");
        Hex { key: all || p.flag("key_hex"), value: all || p.flag("value_hex") }
    }

    pub fn key_in(&self, s: &str) -> Res<Vec<u8>> {
        if self.key {
            hex_to_string(s)
        } else {
            Ok(s.as_bytes().to_vec())
        }
    }

    pub fn value_in(&self, s: &str) -> Res<Vec<u8>> {
        if self.value {
            hex_to_string(s)
        } else {
            Ok(s.as_bytes().to_vec())
        }
    }

    pub fn key_out(&self, b: &[u8]) -> Vec<u8> {
        if self.key {
            string_to_hex(b).into_bytes()
        } else {
            b.to_vec()
        }
    }

    pub fn value_out(&self, b: &[u8]) -> Vec<u8> {
        if self.value {
            string_to_hex(b).into_bytes()
        } else {
            b.to_vec()
        }
    }
}

pub fn db_path(p: &Parsed) -> Res<String> {
    match p.opt("db") {
        Some(d) if !d.is_empty() => Ok(d.to_string()),
        _ => Err(Failure::plain("Either db or path must be specified.")),
    }
}

/// The options ldb opens with (RocksDB 11.8.1's `LDBCommand::PrepareOptions`): when the
/// OPTIONS file is loaded (`try_load_options`), the default family's section and the DB
/// options, every one through the facade's option table (`Options::load_latest`, as
/// RocksDB's `LoadLatestOptions`), with the function-valued options ldb can name; then
/// create_if_missing from the flag and ldb's overrides of the base options
/// ([`cf_overrides`]).
pub(crate) fn options(p: &Parsed) -> Res<Options> {
    let mut o = match load_options_file(p)? {
        Some(l) => l.main,
        None => Options::default(),
    };
    o.create_if_missing(p.flag("create_if_missing"));
    cf_overrides(p, &mut o)?;
    Ok(o)
}

/// RocksDB 11.8.1's `LDBCommand::OverrideBaseCFOptions` as far as Shale's ldb takes its
/// flags: `force_consistency_checks` unless `--disable_consistency_checks`, blob files and
/// their garbage collection off (ldb's `--enable_blob_files` and
/// `--enable_blob_garbage_collection`, which Shale's ldb does not take, default false), and
/// `--auto_compaction=<true|false>` (case-insensitive; ldb aborts on another value). ldb
/// applies them to its base options and to the family `--column_family` names.
fn cf_overrides(p: &Parsed, o: &mut Options) -> Res<()> {
    o.set_force_consistency_checks(!p.flag("disable_consistency_checks"));
    o.set_enable_blob_files(false);
    o.set_enable_blob_gc(false);
    if let Some(v) = p.opt("auto_compaction") {
        match v.to_ascii_lowercase().as_str() {
            "true" => o.set_disable_auto_compactions(false),
            "false" => o.set_disable_auto_compactions(true),
            _ => return Err(Failure::new("Invalid value for boolean argument")),
        }
    }
    Ok(())
}

/// A database's OPTIONS file as ldb loads it.
struct Loaded {
    /// The DB options with the default family's.
    main: Options,
    /// Each family's section, by name.
    cfs: Vec<shale::ColumnFamilyDescriptor>,
}

/// The latest OPTIONS file, loaded when `try_load_options` says and `--create_if_missing`
/// is not given (None otherwise, or without a file: RocksDB's ldb passes NotFound over).
/// Every DB and CF option goes through the facade's option table; the function-valued
/// ones RocksDB's registry builds from their names (comparator, merge operator, prefix
/// extractor) are set by [`apply_function_options`]; a `wal_dir` that does not exist is
/// replaced by the database's directory, with ldb's warning.
fn load_options_file(p: &Parsed) -> Res<Option<Loaded>> {
    if p.flag("create_if_missing") {
        return Ok(None);
    }
    let Some(file) = loaded_options(p)? else {
        return Ok(None);
    };
    let path = db_path(p)?;
    let failed = |e: shale::Error| {
        Failure::new(format!(
            "{e}\nThis tool was built with version {}. If your db is in a different version, \
             please try again with option --ignore_unknown_options.",
            shale_format::options_file::WRITTEN_ROCKSDB_VERSION
        ))
    };
    let env = shale::Env::new().map_err(failed)?;
    // RocksDB's LoadLatestOptions without a cache: each table factory its own block cache
    // (BlockBasedTableOptions' default, 32 MiB).
    let cache = shale::Cache::new_lru_cache(32 << 20);
    let (mut main, descs) = match Options::load_latest(&path, env, p.flag("ignore_unknown_options"), cache) {
        Ok(l) => l,
        Err(e) if e.kind() == shale::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(failed(e)),
    };
    let wal_dir = file.db_options.iter().find(|(k, _)| k == "wal_dir").map(|(_, v)| v.as_str());
    let missing_wal_dir = wal_dir.is_some_and(|w| !w.is_empty() && !Path::new(w).exists());
    if missing_wal_dir {
        eprintln!("wal_dir loaded from the option file doesn't exist. Ignore it.");
    }
    let fix = |o: &mut Options, section: Option<&shale_format::options_file::CfSection>| -> Res<()> {
        if missing_wal_dir {
            o.set_wal_dir(&path);
        }
        match section {
            Some(cf) => apply_function_options(o, cf),
            None => {
                o.set_merge_operator_object(shale::merge_operators::stringappend(":"));
                Ok(())
            }
        }
    };
    fix(&mut main, file.cf("default"))?;
    let mut cfs = Vec::with_capacity(descs.len());
    for d in descs {
        let mut o = d.options().clone();
        fix(&mut o, file.cf(d.name()))?;
        cfs.push(shale::ColumnFamilyDescriptor::new(d.name().to_string(), o));
    }
    Ok(Some(Loaded { main, cfs }))
}

/// ldb's `IsTryLoadOptions`: `--try_load_options[=true|false]`, by default on when `--db`
/// is given without the flags `--create_if_missing` and `--ttl` (RocksDB 11.8.1's ldb).
fn try_load_options(p: &Parsed) -> Res<bool> {
    let flag = |n: &str| p.flags.iter().any(|f| f == n);
    let default = p.opt("db").is_some() && !flag("create_if_missing") && !flag("ttl");
    p.bool_opt("try_load_options", default)
}

/// When the OPTIONS file is loaded (`try_load_options`), the database's latest one (None
/// otherwise, or without a file).
fn loaded_options(p: &Parsed) -> Res<Option<shale_format::options_file::OptionsFile>> {
    if !try_load_options(p)? {
        return Ok(None);
    }
    let path = db_path(p)?;
    // RocksDB's LoadLatestOptions finds nothing (NotFound, which ldb passes over) where
    // there is no database: the open then fails in its own words.
    if !Path::new(&path).is_dir() {
        return Ok(None);
    }
    let fs = shale_format::fs::default_fs();
    // RocksDB's parser: an option the file has and RocksDB 11.8.1 does not know fails the
    // load, unless --ignore_unknown_options and the file is from a newer RocksDB.
    let loaded = shale_format::options_file::latest_options_file(&*fs, Path::new(&path)).and_then(|f| {
        if let Some((_, file)) = &f {
            file.check_unknown_options(p.flag("ignore_unknown_options"))?;
        }
        Ok(f)
    });
    match loaded {
        Ok(f) => Ok(f.map(|(_, f)| f)),
        Err(e) => Err(Failure::new(format!(
            "{e}\nThis tool was built with version {}. If your db is in a different version, \
             please try again with option --ignore_unknown_options.",
            shale_format::options_file::WRITTEN_ROCKSDB_VERSION
        ))),
    }
}

/// The file's value with RocksDB's escapes (`\:`) undone.
fn unescape(v: &str) -> String {
    let mut out = String::new();
    let mut it = v.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A struct value's field (`{id=X;delimiter=\:;}`), or the value itself as `id`.
fn struct_field(v: &str, field: &str) -> Option<String> {
    let Some(body) = v.strip_prefix('{').and_then(|b| b.strip_suffix('}')) else {
        return (field == "id").then(|| unescape(v));
    };
    // Fields end at an unescaped ';'.
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut esc = false;
    for c in body.chars() {
        if esc {
            cur.push('\\');
            cur.push(c);
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if c == ';' {
            fields.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        fields.push(cur);
    }
    fields.iter().find_map(|f| f.split_once('=').filter(|(k, _)| *k == field).map(|(_, v)| unescape(v)))
}

/// The comparator, merge operator and prefix extractor a family's section names. As
/// RocksDB's LoadLatestOptions (ConfigOptions' `ignore_unsupported_options`), a name with no
/// built-in object is passed over: an unknown comparator leaves the default (the open then
/// fails on the MANIFEST's name, as RocksDB's), an unknown merge operator leaves none (so ldb's
/// StringAppendOperator ':'), an unknown prefix extractor none.
fn apply_function_options(o: &mut Options, cf: &shale_format::options_file::CfSection) -> Res<()> {
    if let Some(v) = cf.option("comparator") {
        match v {
            "rocksdb.ReverseBytewiseComparator" => {
                o.set_comparator_object(std::sync::Arc::new(shale::ReverseBytewiseComparator))
            }
            other => {
                if let Some(c) = shale::U64TsComparator::by_name(other) {
                    o.set_comparator_object(std::sync::Arc::new(c));
                }
            }
        }
    }
    match cf.option("merge_operator").and_then(|v| struct_field(v, "id")) {
        None => o.set_merge_operator_object(shale::merge_operators::stringappend(":")),
        Some(id) if id.is_empty() || id == "nullptr" => {
            o.set_merge_operator_object(shale::merge_operators::stringappend(":"))
        }
        Some(id) if id == "StringAppendOperator" || id == "stringappend" => {
            let v = cf.option("merge_operator").unwrap_or_default();
            let delim = struct_field(v, "delimiter").unwrap_or_else(|| ",".to_string());
            o.set_merge_operator_object(shale::merge_operators::stringappend(&delim));
        }
        Some(id) => o.set_merge_operator_object(
            shale::merge_operators::by_name(&id).unwrap_or_else(|| shale::merge_operators::stringappend(":")),
        ),
    }
    if let Some(v) = cf.option("prefix_extractor") {
        let id = struct_field(v, "id").unwrap_or_default();
        let len = |s: &str| s.parse::<usize>().ok();
        let t = if let Some(n) = id.strip_prefix("rocksdb.FixedPrefix.").and_then(len) {
            Some(shale::SliceTransform::create_fixed_prefix(n))
        } else if let Some(n) = id.strip_prefix("rocksdb.CappedPrefix.").and_then(len) {
            Some(shale::SliceTransform::create_capped_prefix(n))
        } else if id == "rocksdb.Noop" {
            Some(shale::SliceTransform::create_noop())
        } else {
            None
        };
        if let Some(t) = t {
            o.set_prefix_extractor(t);
        }
    }
    Ok(())
}

/// Opens the database with all its column families for writing, as ldb's OpenDB.
pub fn open(p: &Parsed) -> Res<DB> {
    open_with(p, false)
}

/// Opens the database read-only, as ldb does for its read-only commands (get, scan, idump,
/// approxsize, get_property, checkconsistency, dump_live_files, list_live_files_metadata):
/// no file is written, so no WAL is flushed and no new MANIFEST is started.
pub fn open_read_only(p: &Parsed) -> Res<DB> {
    open_with(p, true)
}

/// RocksDB's error for a database without a CURRENT file: reading it (read-only opens,
/// ListColumnFamilies) fails with an IO error; DB::Open checks it first.
pub fn missing_db(path: &str, read_only: bool) -> Res<()> {
    if Path::new(path).join("CURRENT").exists() {
        return Ok(());
    }
    let sep = if path.ends_with('/') { "" } else { "/" };
    Err(Failure::new(if read_only {
        format!(
            "IO error: No such file or directory: While opening a file for sequentially reading: \
             {path}{sep}CURRENT: No such file or directory"
        )
    } else {
        format!("Invalid argument: {path}{sep}CURRENT: does not exist (create_if_missing is false)")
    }))
}

fn open_with(p: &Parsed, read_only: bool) -> Res<DB> {
    open_opts(p, read_only, &|_| {}, &|_| {})
}

/// Opens the database as [`open`] does, with a command's own changes of the options
/// (RocksDB's subclasses of `LDBCommand`): `base` changes ldb's base options only
/// (`OverrideBaseOptions`: the DB options, and the families' when no OPTIONS file gave
/// them), `cf` those and the family `--column_family` names (`OverrideBaseCFOptions`).
pub(crate) fn open_opts(
    p: &Parsed,
    read_only: bool,
    base: &dyn Fn(&mut Options),
    cf: &dyn Fn(&mut Options),
) -> Res<DB> {
    let path = db_path(p)?;
    let loaded = load_options_file(p)?;
    let mut o = match &loaded {
        Some(l) => l.main.clone(),
        None => Options::default(),
    };
    o.create_if_missing(p.flag("create_if_missing"));
    cf_overrides(p, &mut o)?;
    base(&mut o);
    cf(&mut o);
    // RocksDB's words for a database that is not there (DBImplReadOnly reads CURRENT; DB::Open
    // checks it first).
    if !p.flag("create_if_missing") {
        missing_db(&path, read_only)?;
    }
    let cfs = match DB::list_cf(&o, &path) {
        Ok(c) => c,
        Err(e) if p.flag("create_if_missing") && !Path::new(&path).join("CURRENT").exists() => {
            let _ = e;
            vec!["default".to_string()]
        }
        Err(e) => return Err(Failure::db(e)),
    };
    // ldb's OpenDB: without an OPTIONS file loaded, a database of one family gets
    // StringAppendOperator with ':' (several families get none).
    if cfs.len() <= 1 && loaded.is_none() {
        o.set_merge_operator_object(shale::merge_operators::stringappend(":"));
    }
    let mut descs = crate::families::descriptors(&o, cfs);
    // An OPTIONS file loaded: each family gets its own section's options; only the one
    // `--column_family` names gets ldb's overrides (RocksDB's PrepareOptions).
    if let Some(l) = &loaded {
        let selected = cf_name(p);
        for d in descs.iter_mut() {
            if let Some(from_file) = l.cfs.iter().find(|c| c.name() == d.name()) {
                let mut co = from_file.options().clone();
                if d.name() == selected {
                    cf_overrides(p, &mut co)?;
                    cf(&mut co);
                }
                *d = shale::ColumnFamilyDescriptor::new(d.name().to_string(), co);
            }
        }
    }
    // --ttl: ldb's OpenDB opens a DBWithTTL (TTL 0: nothing expires), whose writes carry
    // their write time. Read-only, the stored values are read as they are and the commands
    // strip the write time as DBWithTTL's Get does (`strip_ttl`).
    let db = if read_only {
        DB::open_cf_descriptors_read_only(&o, &path, descs, false)
    } else if p.flag("ttl") {
        DB::open_cf_descriptors_with_ttl(&o, &path, descs, Duration::ZERO)
    } else {
        DB::open_cf_descriptors(&o, &path, descs)
    }
    .map_err(Failure::db)?;
    // ldb's OpenDB fails when --column_family names no family of the database.
    let name = cf_name(p);
    if db.cf_handle(&name).is_none() {
        return Err(Failure::new(format!("Non-existing column family {name}")));
    }
    Ok(db)
}

/// RocksDB 11.8.1's ldb with --ttl: its OpenDB records this failure (the family name it
/// checks is always set) and still opens the database and runs the command, so a command
/// that succeeds ends with it (exit status 1) and one that fails with its own failure.
pub(crate) fn ttl_failure() -> Failure {
    Failure::new("ldb doesn't support TTL DB with multiple column families")
}

/// The end of a command that succeeded: with --ttl, [`ttl_failure`].
pub(crate) fn ttl_end(p: &Parsed) -> Res<()> {
    if p.flag("ttl") {
        Err(ttl_failure())
    } else {
        Ok(())
    }
}

/// The user's value of a value stored in a TTL database (RocksDB's DBWithTTLImpl::Get:
/// `SanityCheckTimestamp`, then `StripTS`); the error text is the Status's.
pub(crate) fn strip_ttl(mut v: Vec<u8>) -> Result<Vec<u8>, String> {
    let Some(cut) = v.len().checked_sub(4) else {
        return Err("Corruption: Error: value's length less than timestamp's".to_string());
    };
    let t = i32::from_le_bytes([v[cut], v[cut + 1], v[cut + 2], v[cut + 3]]);
    // DBWithTTLImpl::kMinTimestamp.
    if t < 1_368_146_402 {
        return Err("Corruption: Error: Timestamp < ttl feature release time!".to_string());
    }
    v.truncate(cut);
    Ok(v)
}

pub(crate) fn cf_name(p: &Parsed) -> String {
    p.opt("column_family").unwrap_or("default").to_string()
}

pub fn cf<'a>(db: &'a DB, p: &Parsed) -> Res<&'a shale::ColumnFamily> {
    let name = cf_name(p);
    db.cf_handle(&name).ok_or_else(|| Failure::new(format!("Non-existing column family {name}")))
}

fn w(out: &mut Out<'_>, b: &[u8]) -> Res<()> {
    out.write_all(b).map_err(Failure::io)
}

fn ok(out: &mut Out<'_>) -> Res<()> {
    w(out, b"OK\n")
}

const HEX: &[&str] = &["hex", "key_hex", "value_hex"];

pub fn get(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl"])?;
    let h = Hex::of(p);
    let [key] = p.params.as_slice() else {
        return Err(Failure::new("<key> must be specified for the get command"));
    };
    let key = h.key_in(key)?;
    let db = open_read_only(p)?;
    // RocksDB 11 prints "Key not found" and succeeds (7.8.3 failed with
    // "Get failed: NotFound: " and exit status 1).
    let found = db.get_cf(cf(&db, p)?, &key).map_err(|e| Failure::new(format!("Get failed: {e}")))?;
    let found = match found {
        Some(v) if p.flag("ttl") => Some(strip_ttl(v).map_err(|e| Failure::new(format!("Get failed: {e}")))?),
        other => other,
    };
    match found {
        Some(v) => {
            w(out, &h.value_out(&v))?;
            w(out, b"\n")?;
        }
        None => w(out, b"Key not found\n")?,
    }
    ttl_end(p)
}

pub fn put(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl"])?;
    let h = Hex::of(p);
    let [key, value] = p.params.as_slice() else {
        return Err(Failure::new("<key> and <value> must be specified for the put command"));
    };
    let (k, v) = (h.key_in(key)?, h.value_in(value)?);
    // --ttl: a TTL database's put (the value gets its write time).
    let db = open(p)?;
    db.put_cf(cf(&db, p)?, k, v).map_err(Failure::db)?;
    ok(out)?;
    ttl_end(p)
}

pub fn batchput(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl"])?;
    let h = Hex::of(p);
    if p.params.len() < 2 {
        return Err(Failure::new("At least one <key> <value> pair must be specified batchput."));
    }
    if !p.params.len().is_multiple_of(2) {
        return Err(Failure::new("Equal number of <key>s and <value>s must be specified for batchput."));
    }
    let db = open(p)?;
    let c = cf(&db, p)?;
    let mut b = WriteBatch::new();
    for kv in p.params.chunks(2) {
        b.put_cf(c, h.key_in(&kv[0])?, h.value_in(&kv[1])?);
    }
    // --ttl: a TTL database's write (each value gets its write time).
    db.write(b).map_err(Failure::db)?;
    ok(out)?;
    ttl_end(p)
}

pub fn delete(p: &Parsed, out: &mut Out<'_>, single: bool) -> Res<()> {
    p.check_known(HEX)?;
    let h = Hex::of(p);
    let [key] = p.params.as_slice() else {
        return Err(Failure::new("KEY must be specified for the delete command"));
    };
    let k = h.key_in(key)?;
    let db = open(p)?;
    let c = cf(&db, p)?;
    if single {
        db.single_delete_cf(c, k).map_err(Failure::db)?;
    } else {
        db.delete_cf(c, k).map_err(Failure::db)?;
    }
    ok(out)
}

pub fn deleterange(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(HEX)?;
    let h = Hex::of(p);
    let [b, e] = p.params.as_slice() else {
        return Err(Failure::new("begin and end keys must be specified for the delete command"));
    };
    let (b, e) = (h.key_in(b)?, h.key_in(e)?);
    let db = open(p)?;
    db.delete_range_cf(cf(&db, p)?, b, e).map_err(Failure::db)?;
    ok(out)
}

/// `--from`/`--to` decoded with the key encoding.
/// The optional `--from` and `--to` keys.
type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

fn range(p: &Parsed, h: &Hex) -> Res<KeyRange> {
    let f = p.opt("from").map(|s| h.key_in(s)).transpose()?;
    let t = p.opt("to").map(|s| h.key_in(s)).transpose()?;
    Ok((f, t))
}

/// `--max_keys` as scan, dump and idump read it: `std::stoi` (leading digits; a negative
/// value means no limit), with ldb's messages. idump's parser ends its message with a period.
pub(crate) fn max_keys(p: &Parsed, period: bool) -> Res<Option<u64>> {
    let Some(v) = p.opt("max_keys") else {
        return Ok(None);
    };
    let t = v.trim_start();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    if end == 0 {
        let dot = if period { "." } else { "" };
        return Err(Failure::new(format!("max_keys has an invalid value{dot}")));
    }
    let n: i64 = match digits[..end].parse::<i64>() {
        Ok(n) if n <= i32::MAX as i64 + i64::from(neg) => n,
        _ => return Err(Failure::new("max_keys has a value out-of-range")),
    };
    Ok(if neg { None } else { Some(n as u64) })
}

pub fn scan(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "max_keys", "no_value", "ttl", "timestamp", "start_time", "end_time"])?;
    // --ttl: the database is a TTL one (values end with their write time, which is cut
    // off and, with --timestamp, printed first); --timestamp alone changes nothing.
    // RocksDB 11.8.1's ldb opens the TTL database, runs the command, then fails with
    // "ldb doesn't support TTL DB with multiple column families" (its check of the family
    // name, always set, fails without stopping the open): the same here.
    let ttl = p.flag("ttl");
    let stamp = ttl && p.flag("timestamp");
    let time_opt = |name: &str, default: i32| -> Res<i32> {
        match p.opt(name) {
            Some(v) => v.trim().parse().map_err(|_| Failure::new(format!("{name} has an invalid value"))),
            None => Ok(default),
        }
    };
    // DBWithTTLImpl's kMinTimestamp and kMaxTimestamp.
    let (ttl_start, ttl_end) = (time_opt("start_time", 1_368_146_402)?, time_opt("end_time", i32::MAX)?);
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    let max = max_keys(p, false)?;
    let no_value = p.flag("no_value");
    let db = open_read_only(p)?;
    let c = cf(&db, p)?;
    let mut ro = ReadOptions::default();
    if let Some(t) = &to {
        ro.set_iterate_upper_bound(t.clone());
    }
    if ttl && ttl_end < ttl_start {
        out.flush().map_err(Failure::io)?;
        eprintln!("Error: End time can't be less than start time");
        return Err(ttl_failure());
    }
    if stamp {
        w(
            out,
            format!("Scanning key-values from {} to {}\n", local_time(ttl_start), local_time(ttl_end))
                .as_bytes(),
        )?;
    }
    let mut n = 0u64;
    let mut it = db.raw_iterator_cf_opt(c, ro);
    match &from {
        Some(f) => it.seek(f),
        None => it.seek_to_first(),
    }
    while let (Some(k), Some(v)) = (it.key(), it.value()) {
        if max.is_some_and(|m| n >= m) {
            break;
        }
        let (k, owned) = (k.to_vec(), v.to_vec());
        // A wide-column entity with more than its default column prints its columns
        // (11.8.1's PrintKeyValueOrWideColumns; not for a TTL database).
        let columns = if ttl { None } else { it.columns().transpose().map_err(Failure::db)? };
        let shown_columns = columns.filter(|c| super::entity_cmds::shows_columns(c));
        // Stepped here: the entries the TTL window skips below go on to the next.
        it.next();
        let mut v: &[u8] = &owned;
        let mut line = Vec::new();
        if ttl {
            let Some(cut) = v.len().checked_sub(4) else {
                return Err(Failure::new("Corruption: Error: value's length less than timestamp's"));
            };
            let raw = i32::from_le_bytes([v[cut], v[cut + 1], v[cut + 2], v[cut + 3]]);
            v = &v[..cut];
            if raw < ttl_start || raw >= ttl_end {
                continue;
            }
            if stamp {
                line.extend(format!("{} ", local_time(raw)).into_bytes());
            }
        }
        n += 1;
        line.extend(h.key_out(&k));
        if !no_value {
            // RocksDB 11's PrintKeyValue: " ==> " (7.8.3 printed " : ").
            line.extend_from_slice(b" ==> ");
            match &shown_columns {
                Some(c) => line.extend(super::fmt::dump_columns(c, h.value)),
                None => line.extend(h.value_out(v)),
            }
        }
        line.push(b'\n');
        w(out, &line)?;
    }
    it.status().map_err(Failure::db)?;
    if ttl {
        return Err(ttl_failure());
    }
    Ok(())
}

/// RocksDB's `TimeToHumanString`: `strftime("%c")` of the local time, in the C locale
/// (`Fri May 10 00:40:02 2013`).
fn local_time(t: i32) -> String {
    let raw: libc::time_t = t.into();
    // SAFETY: `libc::tm` is a plain C struct of integers (and a pointer that may be null),
    // for which all-zero bytes are a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r writes the broken-down time into `tm`, which we own; it reads
    // only `raw`.
    let ok = unsafe { !libc::localtime_r(&raw, &mut tm).is_null() };
    if !ok {
        return String::new();
    }
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS.get(tm.tm_wday as usize).unwrap_or(&"?"),
        MONTHS.get(tm.tm_mon as usize).unwrap_or(&"?"),
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        i64::from(tm.tm_year) + 1900
    )
}

/// ldb's `dump`: `key ==> value` lines and `Keys in range: N`; `--count_only` prints the
/// count and the value-size histogram (RocksDB's HistogramImpl text) instead of the keys;
/// `--count_delim[=<c>]` prints, per run of keys sharing the prefix before `c` (`.` by
/// default), `prefix => count:N\tsize:B` (B: key and value bytes).
pub fn dump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[
        "from",
        "to",
        "max_keys",
        "count_only",
        "count_delim",
        "ttl",
        "path",
        "timestamp",
        "stats",
        "decode_blob_index",
        "dump_uncompressed_blobs",
        "start_time",
        "end_time",
        "bucket",
    ])?;
    // With --path and no --db, the file is dumped (with both, ldb dumps the database).
    if let Some(path) = p.opt("path").filter(|_| p.opt("db").is_none()) {
        return super::dump_path::dump_path(p, path, out);
    }
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    let max = max_keys(p, false)?;
    let count_only = p.flag("count_only");
    let delim: Option<u8> = match p.opt("count_delim") {
        Some(d) => Some(d.bytes().next().unwrap_or(0)),
        None => p.flags.iter().any(|f| f == "count_delim").then_some(b'.'),
    };
    // --ttl (DBDumperCommand over a DBWithTTL's TtlIterator): values without their write
    // time, only those written in [--start_time, --end_time), with --timestamp each one's
    // write time first, and with --bucket the counts per bucket of write times.
    let ttl = p.flag("ttl");
    let int_opt = |name: &str, default: i32| -> Res<i32> {
        match p.opt(name) {
            Some(v) => v.trim().parse().map_err(|_| Failure::new(format!("{name} has an invalid value"))),
            None => Ok(default),
        }
    };
    // DBWithTTLImpl's kMinTimestamp and kMaxTimestamp.
    let (from_time, until_time) = (int_opt("start_time", 1_368_146_402)?, int_opt("end_time", i32::MAX)?);
    let db = open_read_only(p)?;
    let c = cf(&db, p)?;
    if p.flag("stats") {
        // ldb prints the default family's "rocksdb.stats" first.
        if let Some(stats) = db.property_value("rocksdb.stats").map_err(Failure::db)? {
            w(out, format!("{stats}\n").as_bytes())?;
        }
    }
    if until_time < from_time {
        out.flush().map_err(Failure::io)?;
        eprintln!("Error: End time can't be less than start time");
        return ttl_end(p);
    }
    let time_range = until_time.wrapping_sub(from_time);
    let bucket = match p.opt("bucket").map(|b| b.trim().parse::<i32>()) {
        Some(Ok(b)) if b > 0 => b,
        Some(Err(_)) => return Err(Failure::new("bucket has an invalid value")),
        _ => time_range,
    };
    let buckets = if bucket >= time_range { 1 } else { (time_range - 1) / bucket + 1 };
    // Counts by bucket, only those met kept (RocksDB's vector of every bucket, printed
    // all the same).
    let mut bucket_counts: std::collections::BTreeMap<i32, u64> = std::collections::BTreeMap::new();
    if ttl && !count_only && p.flag("timestamp") && delim.is_none() {
        w(
            out,
            format!("Dumping key-values from {} to {}\n", local_time(from_time), local_time(until_time))
                .as_bytes(),
        )?;
    }
    let mode = match &from {
        Some(f) => IteratorMode::From(f, shale::Direction::Forward),
        None => IteratorMode::Start,
    };
    let mut n = 0u64;
    let mut hist = crate::bench::histogram::Histogram::default();
    // --count_delim: the current run's prefix, count and bytes.
    let mut run: Option<(Vec<u8>, u64, u64)> = None;
    let mut it = db.raw_iterator_cf_opt(c, ReadOptions::default());
    match mode {
        IteratorMode::From(f, _) => it.seek(f),
        _ => it.seek_to_first(),
    }
    while let (Some(k), Some(v)) = (it.key(), it.value()) {
        let (k, mut v) = (k.to_vec(), v.to_vec());
        // An entity with more than its default column prints its columns (11.8.1's
        // PrintKeyValueOrWideColumns; not through a TTL database's iterator).
        let columns = if ttl { None } else { it.columns().transpose().map_err(Failure::db)? };
        let shown_columns = columns.filter(|c| super::entity_cmds::shows_columns(c));
        it.next();
        if to.as_deref().is_some_and(|t| k.as_slice() >= t) {
            break;
        }
        if max.is_some_and(|m| n >= m) {
            break;
        }
        let mut line = Vec::new();
        if ttl {
            let Some(cut) = v.len().checked_sub(4) else {
                return Err(Failure::new("Corruption: Error: value's length less than timestamp's"));
            };
            let raw = i32::from_le_bytes([v[cut], v[cut + 1], v[cut + 2], v[cut + 3]]);
            v.truncate(cut);
            if raw < from_time || raw >= until_time {
                continue;
            }
            if buckets > 1 {
                *bucket_counts.entry(raw.wrapping_sub(from_time) / bucket).or_default() += 1;
            }
            if p.flag("timestamp") {
                line.extend(format!("{} ", local_time(raw)).into_bytes());
            }
        }
        n += 1;
        if let Some(d) = delim {
            let end = k.iter().position(|&b| b == d || b == 0).unwrap_or(k.len());
            let prefix = k[..end].to_vec();
            let size = (k.len() + v.len()) as u64;
            match &mut run {
                Some((p0, cnt, bytes)) if !p0.is_empty() && *p0 != prefix => {
                    let mut line = p0.clone();
                    line.extend(format!(" => count:{cnt}\tsize:{bytes}\n").into_bytes());
                    w(out, &line)?;
                    run = Some((prefix, 1, size));
                }
                Some((p0, cnt, bytes)) => {
                    *p0 = prefix;
                    *cnt += 1;
                    *bytes += size;
                }
                None => run = Some((prefix, 1, size)),
            }
        }
        if count_only {
            hist.add(v.len() as u64);
        }
        if !count_only && delim.is_none() {
            line.extend(h.key_out(&k));
            line.extend_from_slice(b" ==> ");
            match &shown_columns {
                Some(c) => line.extend(super::fmt::dump_columns(c, h.value)),
                None => line.extend(h.value_out(&v)),
            }
            line.push(b'\n');
            w(out, &line)?;
        }
    }
    it.status().map_err(Failure::db)?;
    if ttl && buckets > 1 {
        // RocksDB's PrintBucketCounts: the last bucket ends at --end_time.
        let mut at = from_time;
        for i in 0..buckets {
            let until = if i + 1 == buckets { until_time } else { at.wrapping_add(bucket) };
            let cnt = bucket_counts.get(&i).copied().unwrap_or(0);
            w(
                out,
                format!("Keys in range {} to {} : {cnt}\n", local_time(at), local_time(until)).as_bytes(),
            )?;
            at = at.wrapping_add(bucket);
        }
    } else if delim.is_some() {
        let (p0, cnt, bytes) = run.unwrap_or_default();
        let mut line = p0;
        line.extend(format!(" => count:{cnt}\tsize:{bytes}\n").into_bytes());
        w(out, &line)?;
    } else {
        w(out, format!("Keys in range: {n}\n").as_bytes())?;
    }
    if count_only {
        w(out, format!("Value size distribution: \n{}\n", hist.render()).as_bytes())?;
    }
    ttl_end(p)
}

pub fn idump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "max_keys", "count_only", "input_key_hex", "decode_blob_index"])?;
    let h = Hex::of(p);
    // idump reads --from/--to as hex with --input_key_hex (ldb's InternalDumpCommand).
    let input_hex = Hex { key: p.flag("input_key_hex"), value: false };
    let (from, to) = range(p, &input_hex)?;
    let max = max_keys(p, true)?;
    let count_only = p.flag("count_only");
    let path = db_path(p)?;
    // ldb opens the database; opening checks the files as it does.
    drop(open_read_only(p)?);
    let entries = internal_entries(Path::new(&path), &cf_name(p))?;
    let mut n = 0u64;
    for (ikey, value) in entries {
        let uk = shale_format::key::user_key(&ikey);
        if from.as_deref().is_some_and(|f| uk < f) {
            continue;
        }
        if to.as_deref().is_some_and(|t| uk >= t) {
            break;
        }
        n += 1;
        if !count_only {
            let mut line = ikey_debug(&ikey, h.key);
            line.extend_from_slice(b" => ");
            if shale_format::key::trailer(&ikey) & 0xff
                == shale_format::key::ValueType::WideColumnEntity as u64
            {
                // ldb prints an entity's columns, or a line on stderr when they do not decode.
                match shale_format::wide_columns::owned_columns(&value) {
                    Ok(c) => line.extend(super::fmt::dump_columns(&c, h.value)),
                    Err(_) => {
                        out.flush().map_err(Failure::io)?;
                        let key = ikey_debug(&ikey, h.key);
                        eprintln!("{} => error deserializing wide columns", String::from_utf8_lossy(&key));
                        continue;
                    }
                }
            } else {
                line.extend(slice_to_string(&value, h.value));
            }
            line.push(b'\n');
            w(out, &line)?;
        }
        if max.is_some_and(|m| n >= m) {
            break;
        }
    }
    w(out, format!("Internal keys in range: {n}\n").as_bytes())
}

/// A spinner on stderr while `f` runs, when stderr is a terminal.
pub fn with_progress<T>(what: &str, f: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return f();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    let r = f();
    bar.finish_and_clear();
    r
}

pub fn compact(p: &Parsed, _out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "ttl"])?;
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    // --ttl: the database opens as a DBWithTTL (TTL 0: its compaction filter drops nothing);
    // CompactorCommand sets its own success, so no --ttl failure follows (`ttl_end`).
    let db = open(p)?;
    let c = cf(&db, p)?;
    // ldb's CompactorCommand compacts with kForceOptimized: the last level's tables are
    // rewritten too (sequence numbers zeroed, obsolete entries dropped).
    let mut cro = shale::CompactOptions::default();
    cro.set_bottommost_level_compaction(shale::BottommostLevelCompaction::ForceOptimized);
    with_progress("compacting", || db.try_compact_range_cf_opt(c, from.as_deref(), to.as_deref(), &cro))
        .map_err(Failure::db)
}

pub fn approxsize(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to"])?;
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    let Some(from) = from else {
        return Err(Failure::new("from must be specified for approxsize command"));
    };
    let Some(to) = to else {
        return Err(Failure::new("to must be specified for approxsize command"));
    };
    let path = db_path(p)?;
    drop(open_read_only(p)?);
    let size = manifest::approximate_size(Path::new(&path), &cf_name(p), &from, &to)?;
    w(out, format!("{size}\n").as_bytes())
}

pub fn get_property(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [name] = p.params.as_slice() else {
        return Err(Failure::new("property name must be specified"));
    };
    let db = open_read_only(p)?;
    match db.property_value_cf(cf(&db, p)?, name).map_err(Failure::db)? {
        Some(v) => w(out, format!("{name}: {v}\n").as_bytes()),
        None => Err(Failure::new(format!("failed to get property: {name}"))),
    }
}

pub fn list_column_families(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let path = db_path(p)?;
    // ldb prints a failure here on stderr and still succeeds.
    let names = match missing_db(&path, true)
        .and_then(|()| DB::list_cf(&Options::default(), &path).map_err(Failure::db))
    {
        Ok(n) => n,
        Err(f) => {
            eprintln!("Error in processing db {path} {}", f.msg);
            return Ok(());
        }
    };
    w(out, format!("Column families in {path}: \n{{{}}}\n", names.join(", ")).as_bytes())
}

pub fn create_column_family(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [name] = p.params.as_slice() else {
        return Err(Failure::new("new column family name must be specified"));
    };
    let mut db = open(p)?;
    if db.cf_handle(name).is_some() {
        return Err(Failure::new(
            "Fail to create new column family: Invalid argument: Column family already exists",
        ));
    }
    db.create_cf(name, &Options::default())
        .map_err(|e| Failure::new(format!("Fail to create new column family: {e}")))?;
    ok(out)
}

pub fn drop_column_family(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [name] = p.params.as_slice() else {
        return Err(Failure::new("The name of column family to drop must be specified"));
    };
    let mut db = open(p)?;
    if db.cf_handle(name).is_none() {
        return Err(Failure::new(format!("Column family: {name} doesn't exist in db.")));
    }
    db.drop_cf(name).map_err(|e| Failure::new(format!("Fail to drop column family: {e}")))?;
    ok(out)
}

pub fn repair(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["verbose"])?;
    let path = db_path(p)?;
    let o = options(p)?;
    // RepairDB takes the database's lock first: RocksDB's words when the directory is missing.
    if !Path::new(&path).is_dir() {
        let sep = if path.ends_with('/') { "" } else { "/" };
        return Err(Failure::new(format!(
            "IO error: No such file or directory: while open a file for lock: {path}{sep}LOCK: No such file or directory"
        )));
    }
    with_progress("repairing", || DB::repair(&o, &path)).map_err(Failure::db)?;
    ok(out)
}

/// RocksDB's `EncodeUserProvidedTimestamp` check (`std::istringstream >> uint64_t`): leading
/// white space, an optional sign, then at least one digit.
pub(crate) fn timestamp_parses(s: &str) -> bool {
    let t = s.trim_start();
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    t.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// ldb's `multi_get <key>...`: one line per key, `key ==> value` or `Key not found: key`;
/// a key whose read fails is reported on stderr and the command fails after the others.
pub fn multi_get(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["read_timestamp"])?;
    let h = Hex::of(p);
    if p.params.is_empty() {
        return Err(Failure::new("At least one <key> must be specified for multi_get."));
    }
    let keys = p.params.iter().map(|k| h.key_in(k)).collect::<Res<Vec<_>>>()?;
    let db = open_read_only(p)?;
    let c = cf(&db, p)?;
    // Shale's column families have no user-defined timestamps: RocksDB's words for a
    // timestamp given to one.
    if p.opt("read_timestamp").is_some_and(|t| !t.is_empty()) {
        return Err(Failure::new(
            "MultiGet failed: Invalid argument: column family does not enable user-defined timestamps \
             while --read_timestamp is provided.",
        ));
    }
    let results = db.multi_get_cf(keys.iter().map(|k| (c, k.as_slice())));
    print_multi_results(
        out,
        keys.iter().zip(results).map(|(k, r)| (h.key_out(k), r.map(|v| v.map(|v| h.value_out(&v))))),
    )
}

/// ldb's multi_get and multi_get_entity output, per key (shown as printed) and its rendered
/// value: `key ==> value`, `Key not found: key`, or the status on stderr; a key that failed
/// fails the command once every key is printed.
pub(super) fn print_multi_results(
    out: &mut Out<'_>,
    results: impl IntoIterator<Item = (Vec<u8>, shale::Result<Option<Vec<u8>>>)>,
) -> Res<()> {
    let mut failed = false;
    for (shown, r) in results {
        match r {
            Ok(Some(v)) => {
                let mut line = shown;
                line.extend_from_slice(b" ==> ");
                line.extend(v);
                line.push(b'\n');
                w(out, &line)?;
            }
            Ok(None) => {
                let mut line = b"Key not found: ".to_vec();
                line.extend(shown);
                line.push(b'\n');
                w(out, &line)?;
            }
            Err(e) => {
                out.flush().map_err(Failure::io)?;
                eprintln!("Status for key {}: {e}", String::from_utf8_lossy(&shown));
                failed = true;
            }
        }
    }
    if failed {
        return Err(Failure::new("one or more keys had non-okay status"));
    }
    Ok(())
}

/// ldb's `load`: `key ==> value` lines from stdin put into the column family (the lines
/// `dump` and `scan` print), `Keys in range:` lines skipped, others counted as bad.
/// `--disable_wal` writes without the WAL; `--compact` compacts the family afterwards;
/// `--bulk_load` is RocksDB's PrepareForBulkLoad as far as it concerns this load: no
/// automatic compaction and no write stall while the files pile up in level 0.
pub fn load(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "disable_wal", "bulk_load", "compact"])?;
    let h = Hex::of(p);
    // ldb's `DBLoaderCommand::OverrideBaseOptions`: PrepareForBulkLoad on the base options.
    let bulk = p.flag("bulk_load");
    let base = |o: &mut Options| {
        if bulk {
            o.set_disable_auto_compactions(true);
            o.set_level_zero_file_num_compaction_trigger(1 << 30);
            o.set_level_zero_slowdown_writes_trigger(1 << 30);
            o.set_level_zero_stop_writes_trigger(1 << 30);
            o.set_soft_pending_compaction_bytes_limit(0);
            o.set_hard_pending_compaction_bytes_limit(0);
        }
    };
    let db = open_opts(p, false, &base, &|_| {})?;
    let c = cf(&db, p)?;
    let mut wo = shale::WriteOptions::default();
    wo.disable_wal(p.flag("disable_wal"));
    let mut bad_lines = 0u64;
    let mut status: Option<shale::Error> = None;
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::new(stdin.lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = std::io::BufRead::read_until(&mut input, b'\n', &mut line).map_err(Failure::io)?;
        if n == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        match find(&line, b" ==> ") {
            Some(pos) => {
                let (k, v) = (&line[..pos], &line[pos + 5..]);
                let k = if h.key { hex_to_string(&String::from_utf8_lossy(k))? } else { k.to_vec() };
                let v = if h.value { hex_to_string(&String::from_utf8_lossy(v))? } else { v.to_vec() };
                if let Err(e) = db.put_cf_opt(c, k, v, &wo) {
                    status = Some(e);
                    break;
                }
            }
            None if line.starts_with(b"Keys in range:") || line.starts_with(b"Created bg thread 0x") => {}
            None => bad_lines += 1,
        }
    }
    if bad_lines > 0 {
        w(out, format!("Warning: {bad_lines} bad lines ignored.\n").as_bytes())?;
    }
    // RocksDB sets "Load failed: ..." and then, the status still failed, overwrites it
    // with "Compaction failed: ...": that is what ldb prints for a failed put.
    if let Some(e) = status {
        return Err(Failure::new(format!("Compaction failed: {e}")));
    }
    if p.flag("compact") {
        with_progress("compacting", || db.try_compact_range_cf(c, None::<&[u8]>, None::<&[u8]>))
            .map_err(|e| Failure::new(format!("Compaction failed: {e}")))?;
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
