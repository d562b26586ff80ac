//! `allow_mmap_writes`: the table and blob files the database writes go through a shared
//! writable mapping (seen in /proc/self/maps while they are written; opened read-write),
//! WALs and the MANIFEST do not; tables end at their real size; the data reads back, after
//! a compaction and after a reopen; with direct writes too, RocksDB's NotSupported.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shale::fs::WritableFile;
use shale::{DBCompressionType, ErrorKind, Options, DB};

use crate::util::{self, FsHooks, HookedFs};

/// Counts the files seen mapped read-write while written, by kind.
#[derive(Default, Clone)]
struct MapCounts {
    tables_mapped: Arc<AtomicUsize>,
    tables: Arc<AtomicUsize>,
    others_mapped: Arc<AtomicUsize>,
    others: Arc<AtomicUsize>,
}

/// A writable file that looks, after its first appends, whether the file is mapped.
struct Watch {
    inner: Box<dyn WritableFile>,
    path: String,
    looked: bool,
    mapped: Arc<AtomicUsize>,
}

fn mapped_rw(path: &str) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines().any(|l| l.ends_with(path) && l.split_whitespace().nth(1) == Some("rw-s"))
}

impl WritableFile for Watch {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        self.inner.append(data)?;
        if !self.looked && self.inner.size() > 0 {
            self.looked = true;
            if mapped_rw(&self.path) {
                self.mapped.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn range_sync(&mut self, offset: u64, len: u64) -> shale::Result<()> {
        self.inner.range_sync(offset, len)
    }
}

impl FsHooks for MapCounts {
    fn writable(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        let name = path.file_name().unwrap().to_string_lossy();
        let table = name.ends_with(".sst") || name.ends_with(".blob");
        if !(table || name.ends_with(".log") || name.starts_with("MANIFEST-")) {
            return file;
        }
        let (count, mapped) =
            if table { (&self.tables, &self.tables_mapped) } else { (&self.others, &self.others_mapped) };
        count.fetch_add(1, Ordering::Relaxed);
        Box::new(Watch {
            inner: file,
            path: path.to_string_lossy().into_owned(),
            looked: false,
            mapped: mapped.clone(),
        })
    }
}

#[test]
fn tables_and_blobs_are_written_through_a_mapping() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let counts = MapCounts::default();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(256 << 10);
    o.set_target_file_size_base(300 << 10);
    o.set_allow_mmap_writes(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(250);
    o.set_file_system(HookedFs::new(shale::fs::default_fs(), counts.clone()));
    let mut model = util::Model::new();
    {
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..3u64 {
            for i in 0..3000u64 {
                let k = format!("key{:06}", (i * 7919 + round) % 5000).into_bytes();
                let v = util::value(i + round * 10_000, 100 + (i % 300) as usize);
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        util::wait_for_background(&db);
        util::check_model(&db, &model, "after compaction");
        for f in db.live_files().unwrap() {
            let path = dir.join(f.name.trim_start_matches('/'));
            assert_eq!(std::fs::metadata(&path).unwrap().len(), f.size as u64, "{}", path.display());
        }
    }
    let tables = counts.tables.load(Ordering::Relaxed);
    assert!(tables >= 4, "tables and blob files written: {tables}");
    assert_eq!(counts.tables_mapped.load(Ordering::Relaxed), tables, "every table and blob file mapped");
    assert!(counts.others.load(Ordering::Relaxed) >= 2);
    assert_eq!(counts.others_mapped.load(Ordering::Relaxed), 0, "no WAL or MANIFEST mapped");
    let options =
        util::files_ending(&dir, "").into_iter().filter(|n| n.starts_with("OPTIONS-")).max().unwrap();
    assert!(std::fs::read_to_string(dir.join(options)).unwrap().contains("allow_mmap_writes=true"));
    let db = DB::open(&o, &dir).unwrap();
    util::check_model(&db, &model, "after reopen");
}

#[test]
fn mmap_writes_with_direct_writes_refused_as_rocksdb() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_allow_mmap_writes(true);
    o.set_use_direct_io_for_flush_and_compaction(true);
    let e = DB::open(&o, tmp.path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(
        e.to_string().contains(
            "If memory mapped writes (allow_mmap_writes) are enabled then direct I/O writes \
             (use_direct_io_for_flush_and_compaction) must be disabled."
        ),
        "{e}"
    );
}
