//! ldb's wide-column commands: `put_entity`, `get_entity`, `multi_get_entity`
//! (RocksDB 11.8.1's PutEntityCommand, GetEntityCommand, MultiGetEntityCommand), and the
//! columns text they and `scan` print (`WideColumnsHelper::DumpWideColumns`):
//!
//! ```text
//! columns = column (' ' column)*        column = name ':' value
//! with --value_hex/--hex: a non-empty name or value is 0x + upper-case hex; empty stays empty
//! ```

use shale::ReadOptions;

use super::db_cmds::{cf, open, open_read_only, print_multi_results, ttl_end, Hex};
use super::fmt::{dump_columns, Failure, Res};
use super::{Out, Parsed};

/// True when `scan` prints the columns instead of the value (`PrintKeyValueOrWideColumns`):
/// some column other than the default one.
pub fn shows_columns(columns: &[(Vec<u8>, Vec<u8>)]) -> bool {
    !(columns.is_empty() || (columns.len() == 1 && columns[0].0.is_empty()))
}

/// `std::getline` splitting on ':' as RocksDB's `StringSplit`: no piece after a trailing ':'.
fn split_colon(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut v: Vec<&str> = s.split(':').collect();
    if s.ends_with(':') {
        v.pop();
    }
    v
}

pub fn put_entity(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl"])?;
    let h = Hex::of(p);
    if p.params.len() < 2 {
        return Err(Failure::new(
            "<key> and at least one column <column_name>:<column_value> must be specified for the put_entity command",
        ));
    }
    let key = h.key_in(&p.params[0])?;
    let mut columns: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for c in &p.params[1..] {
        let [name, value] = split_colon(c)[..] else {
            return Err(Failure::new(
                "wide column format needs to be <column_name>:<column_value> (did you mean put <key> <value>?)",
            ));
        };
        columns.push((h.value_in(name)?, h.value_in(value)?));
    }
    // --ttl: a TTL database, whose PutEntity is the base database's (DBWithTTL does not
    // override it): the entity is written with no write time.
    let db = open(p)?;
    let refs: Vec<(&[u8], &[u8])> = columns.iter().map(|(n, v)| (n.as_slice(), v.as_slice())).collect();
    db.put_entity_cf(cf(&db, p)?, key, &refs, &shale::WriteOptions::default()).map_err(Failure::db)?;
    out.write_all(b"OK\n").map_err(Failure::io)?;
    ttl_end(p)
}

/// Shale's families have no user-defined timestamps: RocksDB's words for a timestamp given.
fn check_read_timestamp(p: &Parsed, what: &str) -> Res<()> {
    if p.opt("read_timestamp").is_some_and(|t| !t.is_empty()) {
        return Err(Failure::new(format!(
            "{what} failed: Invalid argument: column family does not enable user-defined timestamps \
             while --read_timestamp is provided."
        )));
    }
    Ok(())
}

pub fn get_entity(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["ttl", "read_timestamp"])?;
    let h = Hex::of(p);
    let [key] = p.params.as_slice() else {
        return Err(Failure::new("<key> must be specified for the get_entity command"));
    };
    let key = h.key_in(key)?;
    // --ttl: DBWithTTL's GetEntity is the base database's: a plain value is the default
    // column with its write time, as stored.
    let db = open_read_only(p)?;
    let c = cf(&db, p)?;
    check_read_timestamp(p, "GetEntity")?;
    match db.get_entity_cf_opt(c, &key, &ReadOptions::default()) {
        Ok(Some(cols)) => {
            let mut line = dump_columns(&cols, h.value);
            line.push(b'\n');
            out.write_all(&line).map_err(Failure::io)?;
            ttl_end(p)
        }
        Ok(None) => Err(Failure::new("GetEntity failed: NotFound: ")),
        Err(e) => Err(Failure::new(format!("GetEntity failed: {e}"))),
    }
}

pub fn multi_get_entity(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["read_timestamp"])?;
    let h = Hex::of(p);
    if p.params.is_empty() {
        return Err(Failure::new("At least one <key> must be specified for the multi_get_entity command"));
    }
    let keys = p.params.iter().map(|k| h.key_in(k)).collect::<Res<Vec<_>>>()?;
    let db = open_read_only(p)?;
    let c = cf(&db, p)?;
    check_read_timestamp(p, "MultiGetEntity")?;
    // One consistent view for the whole call, as RocksDB's MultiGetEntity.
    let snap = db.snapshot();
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    print_multi_results(
        out,
        keys.iter().map(|k| {
            (
                h.key_out(k),
                db.get_entity_cf_opt(c, k, &ro).map(|o| o.map(|cols| dump_columns(&cols, h.value))),
            )
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_text() {
        let cols = vec![(b"".to_vec(), b"new".to_vec()), (b"z".to_vec(), b"zz".to_vec())];
        assert_eq!(dump_columns(&cols, false), b":new z:zz");
        assert_eq!(dump_columns(&cols, true), b":0x6E6577 0x7A:0x7A7A");
        assert_eq!(dump_columns(&[(b"a".to_vec(), Vec::new())], true), b"0x61:");
        assert!(!shows_columns(&cols[..1]));
        assert!(shows_columns(&cols));
    }

    #[test]
    fn getline_split() {
        assert_eq!(split_colon(":d"), ["", "d"]);
        assert_eq!(split_colon("a:"), ["a"]);
        assert_eq!(split_colon("a::"), ["a", ""]);
        assert_eq!(split_colon("a:b:c").len(), 3);
        assert!(split_colon("").is_empty());
    }
}
