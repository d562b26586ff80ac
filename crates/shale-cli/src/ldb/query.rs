//! ldb's `query`: the interactive shell (`DBQuerierCommand`). Reads one command per line
//! from stdin and answers on stdout, in RocksDB 11.8.1's words:
//!
//! ```text
//! help                                  the four commands' synopses
//! get <key> [--read_timestamp=<ts>]     `key ==> value`, or `get key status: NotFound: `
//! put <key> [<write_ts>] <value>        `put key => value succeeded`
//! delete <key> [<write_ts>]             `delete key succeeded`
//! count [--from=<k>] [--to=<k>]         the number of keys in [from, to)
//! ```
//!
//! A line is split at every single space, as ldb splits it; a token `--name=value` is an
//! option, `--name` a flag (any flag makes the line a `Bad command`). Keys and values are
//! hex with `--hex`/`--key_hex`/`--value_hex`. Shale's column families have no user-defined
//! timestamps, so a timestamp given to one fails as RocksDB fails on such a family, and the
//! shell goes on (as it does on NotFound and InvalidArgument; any other failure ends it).

use std::io::BufRead;

use shale::{ErrorKind, IteratorMode, ReadOptions, DB};

use super::db_cmds::{cf, cf_name, open, timestamp_parses, ttl_end, Hex};
use super::fmt::{Failure, Res};
use super::{Out, Parsed};

const HELP: &str = "get <key> [--read_timestamp=<uint64_ts>]\n\
                    put <key> [<write_timestamp>] <value>\n\
                    delete <key> [<write_timestamp>]\n\
                    count [--from=<start_key>] [--to=<end_key>] [--read_timestamp=<uint64_ts>]\n";

fn w(out: &mut Out<'_>, b: &[u8]) -> Res<()> {
    out.write_all(b).map_err(Failure::io)
}

fn line(out: &mut Out<'_>, parts: &[&[u8]]) -> Res<()> {
    for p in parts {
        w(out, p)?;
    }
    w(out, b"\n")
}

/// What one line of the shell is made of.
struct Tokens {
    tokens: Vec<String>,
    options: Vec<(String, String)>,
    flags: usize,
}

/// ldb's line split and `ParseSingleParam`.
fn split(l: &str) -> Tokens {
    let mut t = Tokens { tokens: Vec::new(), options: Vec::new(), flags: 0 };
    for tok in l.split(' ') {
        if let Some(rest) = tok.strip_prefix("--") {
            match rest.split_once('=') {
                Some((k, v)) => {
                    // A repeated option keeps the last value (a map in ldb).
                    t.options.retain(|(o, _)| o != k);
                    t.options.push((k.to_string(), v.to_string()));
                }
                None => t.flags += 1,
            }
        } else {
            t.tokens.push(tok.to_string());
        }
    }
    t
}

/// RocksDB's error for a timestamp given to a family without user-defined timestamps.
fn no_ts(cf: &str) -> String {
    format!("cannot call this method on column family {cf} that does not enable timestamp")
}

const BAD_TS: &str = "Invalid argument: user provided timestamp is not a valid uint64 value.";

/// Whether the shell goes on after a failed status (RocksDB: OK, NotFound, InvalidArgument).
fn goes_on(e: &shale::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::InvalidArgument)
}

pub fn query(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl"])?;
    // --ttl: a TTL database (DBQuerierCommand's OpenDB): puts carry their write time and
    // gets strip it; the shell then ends with ldb's --ttl failure.
    let h = Hex::of(p);
    let db = open(p)?;
    let cfname = cf_name(p);
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if input.read_until(b'\n', &mut raw).map_err(Failure::io)? == 0 {
            break;
        }
        if raw.last() == Some(&b'\n') {
            raw.pop();
        }
        let l = String::from_utf8_lossy(&raw).into_owned();
        if let Some(e) = one(&db, p, &h, &cfname, &l, out)? {
            if !goes_on(&e) {
                return Err(Failure::db(e));
            }
        }
        out.flush().map_err(Failure::io)?;
    }
    ttl_end(p)
}

/// Runs one line; returns the engine's failure, if any.
fn one(db: &DB, p: &Parsed, h: &Hex, cfname: &str, l: &str, out: &mut Out<'_>) -> Res<Option<shale::Error>> {
    let t = split(l);
    if t.tokens.is_empty() || t.flags > 0 {
        w(out, b"Bad command\n")?;
        return Ok(None);
    }
    let c = cf(db, p)?;
    let cmd = t.tokens[0].as_str();
    let n = t.tokens.len();
    match cmd {
        "help" => w(out, HELP.as_bytes())?,
        // ldb reads tokens[1] without a check (undefined behaviour for a bare `delete` or
        // `put`); Shale says the arguments are invalid.
        "delete" | "put" if t.options.is_empty() => {
            return write(db, c, h, cfname, &t.tokens, cmd == "put", out);
        }
        "get" if n == 2 => {
            let key = h.key_in(&t.tokens[1])?;
            let mut ts = false;
            for (k, v) in &t.options {
                if k != "read_timestamp" {
                    w(out, b"get gets invalid arguments\n")?;
                    return Ok(None);
                }
                if !timestamp_parses(v) {
                    line(out, &[b"get gets invalid argument: ", BAD_TS.as_bytes()])?;
                    return Ok(None);
                }
                ts = true;
            }
            let r = if ts { Err(shale::Error::invalid_argument(no_ts(cfname))) } else { db.get_cf(c, &key) };
            let mut msg = b"get ".to_vec();
            msg.extend(h.key_out(&key));
            if ts {
                msg.extend_from_slice(b" read_timestamp: ");
            }
            match r {
                Ok(Some(v)) => {
                    let mut l = h.key_out(&key);
                    l.extend_from_slice(b" ==> ");
                    l.extend(h.value_out(&v));
                    line(out, &[&l])?;
                }
                Ok(None) => line(out, &[&msg, b" status: NotFound: "])?,
                Err(e) => {
                    line(out, &[&msg, b" status: ", e.to_string().as_bytes()])?;
                    return Ok(Some(e));
                }
            }
        }
        "count" => {
            let (mut from, mut to) = (Vec::new(), Vec::new());
            let mut ts = false;
            for (k, v) in &t.options {
                match k.as_str() {
                    "from" => from = h.key_in(v)?,
                    "to" => to = h.key_in(v)?,
                    "read_timestamp" => {
                        if !timestamp_parses(v) {
                            line(out, &[b"count gets invalid argument: ", BAD_TS.as_bytes()])?;
                            return Ok(None);
                        }
                        ts = true;
                    }
                    _ => {
                        w(out, b"count gets invalid arguments\n")?;
                        return Ok(None);
                    }
                }
            }
            let r = if ts {
                Err(shale::Error::invalid_argument(no_ts(cfname)))
            } else {
                count(db, c, &from, &to)
            };
            match r {
                Ok(n) => w(out, format!("{n}\n").as_bytes())?,
                Err(e) => {
                    let mut msg = b"scan from ".to_vec();
                    msg.extend(h.key_out(&from));
                    if ts {
                        msg.extend_from_slice(b" read_timestamp: ");
                    }
                    msg.extend_from_slice(b" to ");
                    msg.extend(h.key_out(&to));
                    line(out, &[&msg, b" failed: ", e.to_string().as_bytes()])?;
                }
            }
        }
        _ => line(out, &[b"Unknown command ", l.as_bytes()])?,
    }
    Ok(None)
}

/// Prints `<msg> succeeded` or `<msg> failed: <status>`.
/// `put <key> [<write_ts>] <value>` and `delete <key> [<write_ts>]`: ldb's messages, with a
/// write timestamp refused as ldb refuses it for a family without timestamps.
fn write(
    db: &DB,
    c: &shale::ColumnFamily,
    h: &Hex,
    cfname: &str,
    tokens: &[String],
    put: bool,
    out: &mut Out<'_>,
) -> Res<Option<shale::Error>> {
    let (name, args): (&[u8], usize) = if put { (b"put", 3) } else { (b"delete", 2) };
    let n = tokens.len();
    if !(args..=args + 1).contains(&n) {
        line(out, &[name, b" gets invalid arguments"])?;
        return Ok(None);
    }
    let key = h.key_in(&tokens[1])?;
    let value = if put { Some(h.value_in(&tokens[n - 1])?) } else { None };
    let mut msg = name.to_vec();
    msg.push(b' ');
    msg.extend(h.key_out(&key));
    let r = if n == args + 1 {
        if !timestamp_parses(&tokens[2]) {
            line(out, &[name, b" gets invalid argument: ", BAD_TS.as_bytes()])?;
            return Ok(None);
        }
        msg.extend_from_slice(b" write_ts: ");
        Err(shale::Error::invalid_argument(no_ts(cfname)))
    } else if let Some(v) = &value {
        db.put_cf(c, &key, v)
    } else {
        db.delete_cf(c, &key)
    };
    if let Some(v) = &value {
        msg.extend_from_slice(b" => ");
        msg.extend(h.value_out(v));
    }
    finish(out, msg, r)
}

fn finish(out: &mut Out<'_>, msg: Vec<u8>, r: shale::Result<()>) -> Res<Option<shale::Error>> {
    match r {
        Ok(()) => {
            line(out, &[&msg, b" succeeded"])?;
            Ok(None)
        }
        Err(e) => {
            line(out, &[&msg, b" failed: ", e.to_string().as_bytes()])?;
            Ok(Some(e))
        }
    }
}

/// The number of keys in [from, to) (an empty bound is no bound).
fn count(db: &DB, c: &shale::ColumnFamily, from: &[u8], to: &[u8]) -> shale::Result<u64> {
    let mut ro = ReadOptions::default();
    if !to.is_empty() {
        ro.set_iterate_upper_bound(to.to_vec());
    }
    let mode = if from.is_empty() {
        IteratorMode::Start
    } else {
        IteratorMode::From(from, shale::Direction::Forward)
    };
    let mut n = 0u64;
    for item in db.iterator_cf_opt(c, ro, mode) {
        item?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_as_ldb_splits_them() {
        let t = split("get  a --read_timestamp=5 --x");
        assert_eq!(t.tokens, vec!["get", "", "a"]);
        assert_eq!(t.options, vec![("read_timestamp".to_string(), "5".to_string())]);
        assert_eq!(t.flags, 1);
        assert_eq!(split("").tokens, vec![""]);
    }
}
