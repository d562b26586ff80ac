//! The info LOG's `EVENT_LOG_v1` lines match RocksDB 11.8.1's: the same small workload
//! (puts that fill write buffers, a flush, a full manual compaction, reopens that recover
//! WALs) run through Shale and through RocksDB 11.8.1's `db_bench` and `ldb`; the event
//! lines of both LOGs (the current and the old ones) are parsed as JSON and, per event
//! name, the sequences of keys and value types must be the same (values, such as times and
//! sizes, are masked). Compaction input keys `files_L<n>` compare as one `files_L*` key,
//! as which levels a compaction reads is not the point here.
//!
//! Skips (printing why) without RocksDB 11.8.1's tools unless `SHALE_REQUIRE_ROCKSDB_11` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use shale::{DBCompressionType, Options, DB};
use tools::*;

/// A JSON value's shape: its type, and for objects the keys in order with their shapes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    Number,
    String,
    Bool,
    Null,
    Array,
    Object(Vec<(String, Shape)>),
}

/// A small JSON parser (enough for event lines): the shape of the value at `s[*i..]`.
fn parse(s: &[u8], i: &mut usize) -> Result<Shape, String> {
    skip_ws(s, i);
    let err = |what: &str, at: usize| format!("{what} at offset {at} of {:?}", String::from_utf8_lossy(s));
    match s.get(*i) {
        Some(b'{') => {
            *i += 1;
            let mut fields = Vec::new();
            skip_ws(s, i);
            if s.get(*i) == Some(&b'}') {
                *i += 1;
                return Ok(Shape::Object(fields));
            }
            loop {
                skip_ws(s, i);
                let key = parse_string(s, i).ok_or_else(|| err("expected a key", *i))?;
                skip_ws(s, i);
                if s.get(*i) != Some(&b':') {
                    return Err(err("expected ':'", *i));
                }
                *i += 1;
                let v = parse(s, i)?;
                fields.push((key, v));
                skip_ws(s, i);
                match s.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b'}') => {
                        *i += 1;
                        return Ok(Shape::Object(fields));
                    }
                    _ => return Err(err("expected ',' or '}'", *i)),
                }
            }
        }
        Some(b'[') => {
            *i += 1;
            skip_ws(s, i);
            if s.get(*i) == Some(&b']') {
                *i += 1;
                return Ok(Shape::Array);
            }
            loop {
                parse(s, i)?;
                skip_ws(s, i);
                match s.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b']') => {
                        *i += 1;
                        return Ok(Shape::Array);
                    }
                    _ => return Err(err("expected ',' or ']'", *i)),
                }
            }
        }
        Some(b'"') => parse_string(s, i).map(|_| Shape::String).ok_or_else(|| err("bad string", *i)),
        Some(b't') if s[*i..].starts_with(b"true") => {
            *i += 4;
            Ok(Shape::Bool)
        }
        Some(b'f') if s[*i..].starts_with(b"false") => {
            *i += 5;
            Ok(Shape::Bool)
        }
        Some(b'n') if s[*i..].starts_with(b"null") => {
            *i += 4;
            Ok(Shape::Null)
        }
        Some(c) if *c == b'-' || c.is_ascii_digit() => {
            let start = *i;
            while s.get(*i).is_some_and(|c| c.is_ascii_digit() || b"-+.eE".contains(c)) {
                *i += 1;
            }
            std::str::from_utf8(&s[start..*i])
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .map(|_| Shape::Number)
                .ok_or_else(|| err("bad number", start))
        }
        _ => Err(err("unexpected character", *i)),
    }
}

fn skip_ws(s: &[u8], i: &mut usize) {
    while s.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
        *i += 1;
    }
}

fn parse_string(s: &[u8], i: &mut usize) -> Option<String> {
    if s.get(*i) != Some(&b'"') {
        return None;
    }
    *i += 1;
    let mut out = Vec::new();
    loop {
        match *s.get(*i)? {
            b'"' => {
                *i += 1;
                return String::from_utf8(out).ok();
            }
            b'\\' => {
                let c = *s.get(*i + 1)?;
                match c {
                    b'u' => {
                        s.get(*i + 2..*i + 6)?;
                        out.push(b'?');
                        *i += 6;
                        continue;
                    }
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    _ => out.push(c),
                }
                *i += 2;
            }
            c if c < 0x20 => return None, // unescaped control character: not JSON
            c => {
                out.push(c);
                *i += 1;
            }
        }
    }
}

/// The event's name and shape, `files_L<n>` keys folded into one `files_L*`.
fn event_shape(json: &str) -> (String, Shape) {
    let mut i = 0;
    let shape = parse(json.as_bytes(), &mut i).unwrap_or_else(|e| panic!("not JSON: {e}"));
    skip_ws(json.as_bytes(), &mut i);
    assert_eq!(i, json.len(), "trailing text after the JSON object: {json}");
    let Shape::Object(fields) = shape else { panic!("not an object: {json}") };
    let name = {
        // The value of "event", read from the text (shapes keep no values).
        let at = json.find(r#""event": ""#).unwrap_or_else(|| panic!("no event name: {json}"));
        let rest = &json[at + r#""event": ""#.len()..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    let mut folded: Vec<(String, Shape)> = Vec::new();
    for (k, v) in fields {
        let k = if k.starts_with("files_L") && k[7..].bytes().all(|b| b.is_ascii_digit()) {
            "files_L*".to_string()
        } else {
            k
        };
        if folded.last().is_some_and(|(lk, _)| *lk == k && k == "files_L*") {
            continue;
        }
        folded.push((k, v));
    }
    (name, Shape::Object(folded))
}

/// Per event name, the distinct shapes of the EVENT_LOG_v1 lines in `dir`'s LOG files.
fn events(dir: &Path) -> BTreeMap<String, BTreeSet<Shape>> {
    let mut out: BTreeMap<String, BTreeSet<Shape>> = BTreeMap::new();
    let mut logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("LOG"))
        .collect();
    logs.sort();
    for log in logs {
        let text = std::fs::read_to_string(&log).unwrap();
        for line in text.lines() {
            if let Some(at) = line.find("EVENT_LOG_v1 ") {
                let (name, shape) = event_shape(&line[at + "EVENT_LOG_v1 ".len()..]);
                out.entry(name).or_default().insert(shape);
            }
        }
    }
    out
}

fn shale_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 * 1024);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(DBCompressionType::None);
    o
}

fn shale_workload(dir: &Path) {
    let value = vec![b'v'; 100];
    {
        let db = DB::open(&shale_options(), dir).unwrap();
        for i in 0..2000u32 {
            db.put(format!("{i:016}"), &value).unwrap();
        }
        db.flush().unwrap();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        // Left in the WAL for the next open to recover.
        for i in 0..100u32 {
            db.put(format!("x{i:015}"), &value).unwrap();
        }
    }
    {
        let db = DB::open(&shale_options(), dir).unwrap();
        db.put(b"k", b"v").unwrap();
    }
    drop(DB::open(&shale_options(), dir).unwrap());
}

fn rocksdb_workload(dir: &Path) {
    db_bench_run(
        dir,
        "fillseq,compact",
        2000,
        &[
            "--write_buffer_size=65536",
            "--disable_auto_compactions=1",
            "--compression_type=none",
            "--key_size=16",
            "--value_size=100",
        ],
    );
    let db = format!("--db={}", dir.display());
    // Reopens: the first recovers the WAL left by db_bench, the second the put's WAL.
    run_tool("ldb", &args(&[&db, "put", "k", "v"]));
    run_tool("ldb", &args(&[&db, "put", "k2", "v"]));
    run_tool("ldb", &args(&[&db, "get", "k"]));
}

fn show(s: &Shape) -> String {
    match s {
        Shape::Object(f) => {
            let inner: Vec<String> = f.iter().map(|(k, v)| format!("{k}: {}", show(v))).collect();
            format!("{{{}}}", inner.join(", "))
        }
        other => format!("{other:?}").to_lowercase(),
    }
}

#[test]
fn event_lines_have_rocksdb_11_keys_and_types() {
    if !use_rocksdb_11("event_lines_have_rocksdb_11_keys_and_types") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (sdir, rdir) = (tmp.path().join("shale"), tmp.path().join("rocksdb"));
    shale_workload(&sdir);
    rocksdb_workload(&rdir);
    let (ours, theirs) = (events(&sdir), events(&rdir));
    eprintln!("Shale's events: {:?}", ours.iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>());
    eprintln!("RocksDB's events: {:?}", theirs.iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>());
    if std::env::var_os("EVENT_LOG_KEEP").is_some() {
        let keep = tmp.keep();
        eprintln!("kept {}", keep.display());
        return;
    }
    for name in [
        "flush_started",
        "table_file_creation",
        "flush_finished",
        "compaction_started",
        "compaction_finished",
        "table_file_deletion",
        "recovery_started",
        "recovery_finished",
    ] {
        assert!(theirs.contains_key(name), "RocksDB's LOG has no {name} event: {:?}", theirs.keys());
        assert!(ours.contains_key(name), "Shale's LOG has no {name} event: {:?}", ours.keys());
    }
    for (name, want) in &theirs {
        let Some(got) = ours.get(name) else {
            eprintln!("event {name}: only in RocksDB's LOG (the workloads differ there)");
            continue;
        };
        let show_all = |s: &BTreeSet<Shape>| s.iter().map(show).collect::<Vec<_>>().join("\n  ");
        assert_eq!(got, want, "event {name}:\nShale:\n  {}\nRocksDB:\n  {}", show_all(got), show_all(want));
    }
    let only_ours: Vec<&String> = ours.keys().filter(|n| !theirs.contains_key(*n)).collect();
    assert!(only_ours.is_empty(), "events in Shale's LOG but not in RocksDB's: {only_ours:?}");
}

#[test]
fn shapes_fold_levels_and_see_types() {
    let (name, shape) = event_shape(
        r#"{"time_micros": 1, "job": 2, "event": "x", "files_L0": [1, 2], "files_L1": [], "s": "a\"b", "o": {"k": -1.5}}"#,
    );
    assert_eq!(name, "x");
    let want = Shape::Object(vec![
        ("time_micros".into(), Shape::Number),
        ("job".into(), Shape::Number),
        ("event".into(), Shape::String),
        ("files_L*".into(), Shape::Array),
        ("s".into(), Shape::String),
        ("o".into(), Shape::Object(vec![("k".into(), Shape::Number)])),
    ]);
    assert_eq!(shape, want);
    // A different key order is a different shape.
    let (_, other) = event_shape(r#"{"job": 2, "time_micros": 1, "event": "x"}"#);
    assert_ne!(other, want);
    assert!(parse(b"{\"a\": \"x\ny\"}", &mut 0).is_err(), "an unescaped newline is not JSON");
}
