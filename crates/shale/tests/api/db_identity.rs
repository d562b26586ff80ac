//! The database's id (`get_db_identity`), as RocksDB keeps it: with `write_dbid_to_manifest`
//! (the default) every MANIFEST records it, so a checkpoint (which copies no IDENTITY file)
//! has the source's id, a lost IDENTITY file comes back with the same id, and the MANIFEST's
//! id wins over an IDENTITY file that says otherwise; with `write_dbid_to_manifest(false)`
//! only the IDENTITY file holds it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::checkpoint::Checkpoint;
use shale::{Options, DB};

fn opts(write_dbid: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_dbid_to_manifest(write_dbid);
    o
}

fn id_of(path: &Path, o: &Options) -> Vec<u8> {
    let db = DB::open(o, path).unwrap();
    db.get_db_identity().unwrap()
}

#[test]
fn the_manifest_keeps_the_db_id() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let o = opts(true);
    let id = {
        let db = DB::open(&o, &path).unwrap();
        db.put(b"k", b"v").unwrap();
        let id = db.get_db_identity().unwrap();
        assert_eq!(id.len(), 36, "a UUID: {}", String::from_utf8_lossy(&id));
        // A checkpoint has no IDENTITY file of its own: its id comes from the MANIFEST.
        Checkpoint::new(&db).unwrap().create_checkpoint(tmp.path().join("ckpt")).unwrap();
        id
    };
    assert_eq!(id_of(&tmp.path().join("ckpt"), &o), id);
    // Reopening keeps it, and so does losing the IDENTITY file.
    assert_eq!(id_of(&path, &o), id);
    std::fs::remove_file(path.join("IDENTITY")).unwrap();
    assert_eq!(id_of(&path, &o), id);
    assert_eq!(std::fs::read(path.join("IDENTITY")).unwrap(), [&id[..], b"\n"].concat());
    // An IDENTITY file that disagrees is rewritten from the MANIFEST.
    std::fs::write(path.join("IDENTITY"), b"someone-else\n").unwrap();
    assert_eq!(id_of(&path, &o), id);
    assert_eq!(std::fs::read(path.join("IDENTITY")).unwrap(), [&id[..], b"\n"].concat());
}

#[test]
fn without_write_dbid_to_manifest_only_identity_holds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let o = opts(false);
    let id = {
        let db = DB::open(&o, &path).unwrap();
        db.put(b"k", b"v").unwrap();
        Checkpoint::new(&db).unwrap().create_checkpoint(tmp.path().join("ckpt")).unwrap();
        db.get_db_identity().unwrap()
    };
    assert_eq!(id_of(&path, &o), id);
    // The checkpoint gets an id of its own, as with RocksDB.
    let ckpt_id = id_of(&tmp.path().join("ckpt"), &o);
    assert_ne!(ckpt_id, id);
    assert_eq!(ckpt_id.len(), 36);
    // A changed IDENTITY file is believed: no MANIFEST id overrides it.
    std::fs::write(path.join("IDENTITY"), b"someone-else\n").unwrap();
    assert_eq!(id_of(&path, &o), b"someone-else");
    // Switching write_dbid_to_manifest on records the IDENTITY file's id from then on.
    assert_eq!(id_of(&path, &opts(true)), b"someone-else");
    std::fs::remove_file(path.join("IDENTITY")).unwrap();
    assert_eq!(id_of(&path, &opts(true)), b"someone-else");
}
