//! The corruption matrix for blob files (BlobDB): every blob file of a database damaged each
//! way (a bit flipped in the header, in a record header, in a key, in a value and in the
//! footer; cut in half; a 4 KiB page zeroed; deleted). The database still opens (blob files
//! are opened when first read, as RocksDB's). Then every key is read with `get` and
//! `multi_get` and the database is scanned both ways: each answer is the model's or a
//! Corruption naming the damaged blob file — never a wrong value — and the damage is
//! found (at least one read fails). Keys whose values stay in the table always read right.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shale::{ErrorKind, IteratorMode, Options, DB};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(200);
    o.set_blob_file_size(12 << 10);
    o.set_compression_type(shale::DBCompressionType::None);
    o
}

fn build(dir: &Path) -> Map {
    let db = DB::open(&options(), dir).unwrap();
    let mut m = Map::new();
    for i in 0..120u32 {
        let k = format!("key{i:04}").into_bytes();
        let v = if i.is_multiple_of(4) {
            format!("small {i}").into_bytes()
        } else {
            format!("{i:0>400}").into_bytes()
        };
        db.put(&k, &v).unwrap();
        m.insert(k, v);
    }
    db.flush().unwrap();
    m
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Flip(u64),
    Truncate,
    ZeroPage,
    Delete,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn apply(path: &Path, d: Damage) {
    match d {
        Damage::Flip(at) => {
            let mut b = std::fs::read(path).unwrap();
            b[at as usize] ^= 0x10;
            std::fs::write(path, b).unwrap();
        }
        Damage::Truncate => {
            let b = std::fs::read(path).unwrap();
            std::fs::write(path, &b[..b.len() / 2]).unwrap();
        }
        Damage::ZeroPage => {
            let mut b = std::fs::read(path).unwrap();
            let start = 4096.min(b.len() / 2);
            let end = (start + 4096).min(b.len());
            b[start..end].fill(0);
            std::fs::write(path, b).unwrap();
        }
        Damage::Delete => std::fs::remove_file(path).unwrap(),
    }
}

/// An error a read may give: Corruption (or, for a deleted file, an IO error) naming `file`.
fn check_err(e: &shale::Error, file: &str, ctx: &str) {
    assert!(
        matches!(e.kind(), ErrorKind::Corruption | ErrorKind::IOError) && e.to_string().contains(file),
        "{ctx}: unexpected error {e}"
    );
}

/// Reads everything; returns how many reads failed.
fn check_reads(db: &DB, model: &Map, file: &str, ctx: &str) -> usize {
    let mut failed = 0;
    for (k, v) in model {
        match db.get(k) {
            Ok(got) => assert_eq!(got.as_ref(), Some(v), "{ctx}: get {:?}", String::from_utf8_lossy(k)),
            Err(e) => {
                check_err(&e, file, ctx);
                assert!(v.len() >= 200, "{ctx}: a value kept in the table failed to read: {e}");
                failed += 1;
            }
        }
    }
    let keys: Vec<&Vec<u8>> = model.keys().collect();
    for (r, k) in db.multi_get(&keys).into_iter().zip(&keys) {
        match r {
            Ok(got) => assert_eq!(got.as_ref(), model.get(*k), "{ctx}: multi_get"),
            Err(e) => check_err(&e, file, ctx),
        }
    }
    for mode in [IteratorMode::Start, IteratorMode::End] {
        let mut want: Vec<(&Vec<u8>, &Vec<u8>)> = model.iter().collect();
        if matches!(mode, IteratorMode::End) {
            want.reverse();
        }
        let mut n = 0;
        for r in db.iterator(mode) {
            match r {
                Ok((k, v)) => {
                    assert_eq!((&k.to_vec(), &v.to_vec()), want[n], "{ctx}: scan entry {n}");
                    n += 1;
                }
                Err(e) => {
                    check_err(&e, file, ctx);
                    failed += 1;
                    break;
                }
            }
        }
    }
    failed
}

fn blob_paths(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "blob"))
        .collect();
    v.sort();
    v
}

#[test]
fn blob_file_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let model = build(&base);
    let blobs = blob_paths(&base);
    assert!(blobs.len() >= 2, "several blob files: {blobs:?}");
    let mut cells = 0;
    for (n, blob) in blobs.iter().enumerate() {
        let name = blob.file_name().unwrap().to_string_lossy().into_owned();
        let len = std::fs::metadata(blob).unwrap().len();
        // Header 30 bytes; the first record's header, then its key (7 bytes), then its value.
        let damages = [
            Damage::Flip(5),
            Damage::Flip(30 + 10),
            Damage::Flip(30 + 32 + 3),
            Damage::Flip(30 + 32 + 7 + 100),
            Damage::Flip(len - 10),
            Damage::Truncate,
            Damage::ZeroPage,
            Damage::Delete,
        ];
        for d in damages {
            let ctx = format!("{name} {d:?}");
            let work = tmp.path().join(format!("cell-{n}-{cells}"));
            copy_dir(&base, &work);
            apply(&work.join(&name), d);
            let db = DB::open(&options(), &work).unwrap_or_else(|e| panic!("{ctx}: open failed: {e}"));
            let failed = check_reads(&db, &model, &name, &ctx);
            assert!(failed > 0, "{ctx}: the damage went unnoticed");
            drop(db);
            std::fs::remove_dir_all(&work).unwrap();
            cells += 1;
        }
    }
    eprintln!("{cells} cells");
}
