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
        _ => Err(Failure::new("--db must be specified")),
    }
}

/// The options ldb opens with: create_if_missing from the flag; with --try_load_options the
/// latest OPTIONS file is read and must parse (unknown options are an error unless
/// --ignore_unknown_options).
fn options(p: &Parsed) -> Res<Options> {
    let mut o = Options::default();
    o.create_if_missing(p.flag("create_if_missing"));
    if p.bool_opt("try_load_options", false)? {
        let path = db_path(p)?;
        let fs = shale::fs::default_fs();
        match shale::options_file::latest_options_file(&*fs, Path::new(&path)) {
            Ok(_) => {}
            Err(e) if p.flag("ignore_unknown_options") && e.kind() == shale::ErrorKind::InvalidArgument => {}
            Err(e) => return Err(Failure::db(e)),
        }
    }
    Ok(o)
}

/// Opens the database with all its column families, as ldb's OpenDB.
pub fn open(p: &Parsed) -> Res<DB> {
    let path = db_path(p)?;
    let o = options(p)?;
    let cfs = match DB::list_cf(&o, &path) {
        Ok(c) => c,
        Err(e) if p.flag("create_if_missing") && !Path::new(&path).join("CURRENT").exists() => {
            let _ = e;
            vec!["default".to_string()]
        }
        Err(e) => return Err(Failure::db(e)),
    };
    DB::open_cf(&o, &path, cfs).map_err(Failure::db)
}

fn cf_name(p: &Parsed) -> String {
    p.opt("column_family").unwrap_or("default").to_string()
}

pub fn cf<'a>(db: &'a DB, p: &Parsed) -> Res<&'a shale::ColumnFamily> {
    let name = cf_name(p);
    db.cf_handle(&name)
        .ok_or_else(|| Failure::new(format!("Invalid argument: Column family not found: {name}")))
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
    let db = open(p)?;
    match db.get_cf(cf(&db, p)?, &key).map_err(Failure::db)? {
        Some(v) => {
            w(out, &h.value_out(&v))?;
            w(out, b"\n")
        }
        None => Err(Failure::new("Get failed: NotFound: ")),
    }
}

pub fn put(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl"])?;
    let h = Hex::of(p);
    let [key, value] = p.params.as_slice() else {
        return Err(Failure::new("<key> and <value> must be specified for the put command"));
    };
    let (k, v) = (h.key_in(key)?, h.value_in(value)?);
    let db = open(p)?;
    db.put_cf(cf(&db, p)?, k, v).map_err(Failure::db)?;
    ok(out)
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
    db.write(b).map_err(Failure::db)?;
    ok(out)
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

fn max_keys(p: &Parsed) -> Res<Option<u64>> {
    match p.int_opt("max_keys")? {
        None => Ok(None),
        Some(n) if n < 0 => Err(Failure::new("max_keys must be non-negative")),
        Some(n) => Ok(Some(n as u64)),
    }
}

pub fn scan(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "max_keys", "no_value", "ttl", "timestamp", "start_time", "end_time"])?;
    if p.opt("timestamp").is_some() || p.flag("ttl") {
        return Err(Failure::new(
            "Not implemented: scan --timestamp/--ttl (TTL databases are not supported)",
        ));
    }
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    let max = max_keys(p)?;
    let no_value = p.flag("no_value");
    let db = open(p)?;
    let c = cf(&db, p)?;
    let mut ro = ReadOptions::default();
    if let Some(t) = &to {
        ro.set_iterate_upper_bound(t.clone());
    }
    let mode = match &from {
        Some(f) => IteratorMode::From(f, shale::Direction::Forward),
        None => IteratorMode::Start,
    };
    for (n, item) in db.iterator_cf_opt(c, ro, mode).enumerate() {
        if max.is_some_and(|m| n as u64 >= m) {
            break;
        }
        let (k, v) = item.map_err(Failure::db)?;
        let mut line = h.key_out(&k);
        if !no_value {
            line.extend_from_slice(b" : ");
            line.extend(h.value_out(&v));
        }
        line.push(b'\n');
        w(out, &line)?;
    }
    Ok(())
}

pub fn dump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "max_keys", "count_only", "ttl", "path", "timestamp"])?;
    if p.opt("path").is_some() {
        return Err(Failure::new("Not implemented: dump --path (use sst_dump or dump_wal)"));
    }
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    let max = max_keys(p)?;
    let count_only = p.flag("count_only");
    if count_only {
        return Err(Failure::new("Not implemented: dump --count_only (value size histogram)"));
    }
    let db = open(p)?;
    let c = cf(&db, p)?;
    let mode = match &from {
        Some(f) => IteratorMode::From(f, shale::Direction::Forward),
        None => IteratorMode::Start,
    };
    let mut n = 0u64;
    for item in db.iterator_cf_opt(c, ReadOptions::default(), mode) {
        let (k, v) = item.map_err(Failure::db)?;
        if to.as_deref().is_some_and(|t| k.as_ref() >= t) {
            break;
        }
        if max.is_some_and(|m| n >= m) {
            break;
        }
        n += 1;
        let mut line = h.key_out(&k);
        line.extend_from_slice(b" ==> ");
        line.extend(h.value_out(&v));
        line.push(b'\n');
        w(out, &line)?;
    }
    w(out, format!("Keys in range: {n}\n").as_bytes())
}

pub fn idump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["from", "to", "max_keys", "count_only", "input_key_hex", "decode_blob_index"])?;
    let h = Hex::of(p);
    // idump reads --from/--to as hex with --input_key_hex (ldb's InternalDumpCommand).
    let input_hex = Hex { key: p.flag("input_key_hex"), value: false };
    let (from, to) = range(p, &input_hex)?;
    let max = max_keys(p)?;
    let count_only = p.flag("count_only");
    let path = db_path(p)?;
    // ldb opens the database; opening checks the files as it does.
    drop(open(p)?);
    let entries = internal_entries(Path::new(&path), &cf_name(p))?;
    let mut n = 0u64;
    for (ikey, value) in entries {
        let uk = shale::key::user_key(&ikey);
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
            line.extend(slice_to_string(&value, h.value));
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
    p.check_known(&["from", "to"])?;
    let h = Hex::of(p);
    let (from, to) = range(p, &h)?;
    let db = open(p)?;
    let c = cf(&db, p)?;
    with_progress("compacting", || db.try_compact_range_cf(c, from.as_deref(), to.as_deref()))
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
    drop(open(p)?);
    let size = manifest::approximate_size(Path::new(&path), &cf_name(p), &from, &to)?;
    w(out, format!("{size}\n").as_bytes())
}

pub fn get_property(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [name] = p.params.as_slice() else {
        return Err(Failure::new("property name must be specified"));
    };
    let db = open(p)?;
    match db.property_value_cf(cf(&db, p)?, name).map_err(Failure::db)? {
        Some(v) => w(out, format!("{name}: {v}\n").as_bytes()),
        None => Err(Failure::new(format!("failed to get property: {name}"))),
    }
}

pub fn list_column_families(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let path = db_path(p)?;
    let names = DB::list_cf(&Options::default(), &path).map_err(Failure::db)?;
    w(out, format!("Column families in {path}: \n{{{}}}\n", names.join(", ")).as_bytes())
}

pub fn create_column_family(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [name] = p.params.as_slice() else {
        return Err(Failure::new("new column family name must be specified"));
    };
    let mut db = open(p)?;
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
    with_progress("repairing", || DB::repair(&o, &path)).map_err(Failure::db)?;
    ok(out)
}
