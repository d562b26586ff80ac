//! Writes seed corpora for the fuzz targets into `<out>/<target>/`, from files the engine's
//! own writers produce, and (with `--from-db DIR`, repeatable) from the files of a database
//! directory written by RocksDB (e.g. by `db_bench`): its WALs, MANIFEST records, SSTs
//! and their data blocks. Run by `gen_seeds.sh`.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::coding::{put_fixed32, put_length_prefixed_slice, put_varint32};
use shale::fs::{read_file, FileSystem, MemFileSystem};
use shale::key::{bytewise_internal_comparator, make_internal_key, ValueType};
use shale::table::block::{Block, BlockBuilder};
use shale::table::compression::compress;
use shale::table::format::{block_checksum, read_block_with, read_footer, BlockHandle, ChecksumType};
use shale::table::{CompressionType, TableBuilder, TableBuilderOptions};
use shale_engine::version::{FileMetaData, VersionEdit, WalAddition};
use shale::wal::format::record_crc;
use shale::wal::{LogReader, LogWriter, WalRecoveryMode};
use shale::WriteBatch;
use shale_fuzz::block_input::*;
use shale_fuzz::{BytesFile, BytesSeqFile};

/// Files larger than this are not used as seeds.
const MAX_SEED: usize = 48 * 1024;

struct Out {
    dir: PathBuf,
    n: usize,
}

impl Out {
    fn put(&mut self, target: &str, name: &str, data: &[u8]) {
        if data.len() > MAX_SEED {
            return;
        }
        let d = self.dir.join(target);
        fs::create_dir_all(&d).expect("mkdir");
        self.n += 1;
        fs::write(d.join(format!("{name}-{:03}", self.n)), data).expect("write seed");
    }
}

fn with_flag(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![flags];
    v.extend_from_slice(body);
    v
}

/// `contents | type | checksum` as a table stores a block, behind the block target's flags.
fn stored(flags: u8, ck: ChecksumType, t: CompressionType, contents: &[u8]) -> Vec<u8> {
    let mut v = vec![flags | WITH_TRAILER, ck as u8];
    v.extend_from_slice(contents);
    v.push(t as u8);
    put_fixed32(&mut v, block_checksum(ck, contents, t as u8));
    v
}

fn engine_blocks(out: &mut Out) {
    let ikeys: Vec<Vec<u8>> = (0..40u64)
        .map(|i| make_internal_key(format!("key{:04}", i * 7).as_bytes(), 100 - i, ValueType::Value))
        .collect();
    for ri in [1, 4, 16] {
        let mut b = BlockBuilder::new(ri);
        for (i, k) in ikeys.iter().enumerate() {
            b.add(k, format!("value{i}").as_bytes());
        }
        let data = b.finish().to_vec();
        out.put("block", "data", &with_flag(KIND_DATA, &data));
        out.put("block", "meta", &with_flag(KIND_META, &data));
        for (ck, t) in [
            (ChecksumType::Crc32c, CompressionType::None),
            (ChecksumType::None, CompressionType::Snappy),
            (ChecksumType::None, CompressionType::Zlib),
            (ChecksumType::None, CompressionType::Lz4),
            (ChecksumType::None, CompressionType::Zstd),
            (ChecksumType::Xxh3, CompressionType::Lz4),
            (ChecksumType::XxHash64, CompressionType::Zstd),
        ] {
            let c = compress(t, None, &data).expect("compress");
            out.put("block", "stored", &stored(KIND_DATA, ck, t, &c));
        }
        for delta in [false, true] {
            let mut ib = BlockBuilder::new_index(ri, delta);
            let mut prev: Option<BlockHandle> = None;
            for (i, k) in ikeys.iter().enumerate() {
                let off = prev.map_or(0, |p| p.offset + p.size + 5);
                let h = BlockHandle::new(off, 4000 + i as u64);
                ib.add_index(&k[..k.len() - 8], h, prev);
                prev = Some(h);
            }
            let flags = KIND_INDEX | INDEX_USER_KEY | if delta { INDEX_DELTA } else { 0 };
            out.put("block", "index", &with_flag(flags, ib.finish()));
        }
    }
    let mut build = vec![KIND_BUILD, 3];
    for i in 0..12u8 {
        let k = format!("k{}", i * 3);
        build.push(k.len() as u8);
        build.extend_from_slice(k.as_bytes());
        build.push(2);
        build.extend_from_slice(&[i, i]);
    }
    out.put("block", "build", &build);
    out.put("block", "build-delta", &{
        let mut b = build.clone();
        b[0] |= INDEX_DELTA;
        b
    });
}

fn log_file(records: &[Vec<u8>], log_number: u64) -> Vec<u8> {
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/d")).expect("mkdir");
    let path = Path::new("/d/x.log");
    let mut w = LogWriter::new(fs.new_writable_file(path).expect("create"), log_number);
    for r in records {
        w.add_record(r).expect("append");
    }
    w.flush().expect("flush");
    read_file(&fs, path).expect("read")
}

fn engine_wals(out: &mut Out) {
    let mut batches = Vec::new();
    for i in 0..6u64 {
        let mut b = WriteBatch::new();
        b.put(format!("key{i}"), format!("value{i}"));
        b.delete(format!("gone{i}"));
        b.merge(b"m", b"+1");
        b.single_delete(b"sd");
        b.delete_range(b"a", b"b");
        b.put_log_data(b"blob");
        b.set_sequence(1 + i * 10);
        batches.push(b.data().to_vec());
    }
    // Column-family records: tag 0x5 (CF put) and 0x4 (CF delete) for family 1.
    let mut cf = WriteBatch::new();
    cf.put(b"x", b"y");
    let mut rep = cf.data().to_vec();
    rep.push(0x5);
    put_varint32(&mut rep, 1);
    put_length_prefixed_slice(&mut rep, b"cfkey");
    put_length_prefixed_slice(&mut rep, b"cfval");
    rep.push(0x4);
    put_varint32(&mut rep, 1);
    put_length_prefixed_slice(&mut rep, b"cfgone");
    rep[8..12].copy_from_slice(&3u32.to_le_bytes());
    batches.push(rep);
    let file = log_file(&batches, 7);
    out.put("wal_record", "wal", &with_flag(7, &file));
    // A record that spans blocks (FIRST, MIDDLE, LAST).
    let mut big = WriteBatch::new();
    big.put(b"big", vec![b'v'; 40_000]);
    let file = log_file(&[batches[0].clone(), big.data().to_vec(), batches[1].clone()], 7);
    out.put("wal_record", "wal-span", &with_flag(7, &file));
    // Recyclable records (types 5..=8 carry the log number), crafted by hand.
    let mut rec = Vec::new();
    for (t, payload) in [(5u8, &batches[0]), (5u8, &batches[1])] {
        rec.extend_from_slice(&record_crc(t, Some(7), payload).to_le_bytes());
        rec.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        rec.push(t);
        rec.extend_from_slice(&7u32.to_le_bytes());
        rec.extend_from_slice(payload);
    }
    out.put("wal_record", "recyclable", &with_flag(7, &rec));
}

fn key(k: &str, seq: u64) -> Vec<u8> {
    make_internal_key(k.as_bytes(), seq, ValueType::Value)
}

fn engine_edits() -> Vec<VersionEdit> {
    let file = |n: u64| FileMetaData {
        number: n,
        file_size: 1000 + n,
        smallest: key("a", n),
        largest: key("z", n + 1),
        smallest_seqno: n,
        largest_seqno: n + 1,
        file_checksum: vec![1, 2, 3, 4],
        file_checksum_func_name: "crc32c".into(),
        unique_id: Some([n, n + 1]),
        temperature: 4,
        marked_for_compaction: n % 2 == 0,
        oldest_blob_file_number: 0,
        ..FileMetaData::default()
    };
    vec![
        VersionEdit {
            db_id: Some("fuzz-db-id".into()),
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(4),
            next_file_number: Some(5),
            last_sequence: Some(0),
            ..VersionEdit::default()
        },
        VersionEdit {
            log_number: Some(9),
            prev_log_number: Some(0),
            next_file_number: Some(12),
            last_sequence: Some(300),
            min_log_number_to_keep: Some(8),
            new_files: vec![(0, file(10)), (1, file(11))],
            compact_cursors: vec![(1, key("m", 5))],
            wal_additions: vec![WalAddition { number: 9, synced_size: Some(4096) }],
            ..VersionEdit::default()
        },
        VersionEdit {
            column_family: 1,
            column_family_add: Some("cf1".into()),
            max_column_family: Some(1),
            comparator: Some("leveldb.BytewiseComparator".into()),
            ..VersionEdit::default()
        },
        VersionEdit {
            deleted_files: vec![(0, 10)],
            new_files: vec![(2, file(12))],
            wal_deletion: Some(9),
            is_in_atomic_group: true,
            remaining_entries: 1,
            ..VersionEdit::default()
        },
        VersionEdit {
            column_family: 1,
            is_column_family_drop: true,
            is_in_atomic_group: true,
            ..VersionEdit::default()
        },
        VersionEdit { full_history_ts_low: Some(vec![0; 8]), ..VersionEdit::default() },
    ]
}

fn manifest_seeds(out: &mut Out, records: &[Vec<u8>], name: &str) {
    let mut multi = vec![1u8];
    for r in records {
        out.put("manifest_record", name, &with_flag(0, r));
        put_length_prefixed_slice(&mut multi, r);
    }
    out.put("manifest_record", &format!("{name}-log"), &multi);
}

fn engine_tables(out: &mut Out) {
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/d")).expect("mkdir");
    let configs = [
        (CompressionType::None, None, 5, 16),
        (CompressionType::Snappy, Some(10.0), 5, 4),
        (CompressionType::Lz4, Some(10.0), 4, 16),
        (CompressionType::Zstd, None, 2, 1),
        (CompressionType::Zlib, Some(10.0), 3, 16),
    ];
    for (i, (compression, filter, fv, ri)) in configs.into_iter().enumerate() {
        let path = PathBuf::from(format!("/d/{i}.sst"));
        let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
        o.compression = compression;
        o.filter_bits_per_key = filter;
        o.format_version = fv;
        o.block_size = 256;
        o.block_restart_interval = ri;
        let mut b = TableBuilder::new(o, fs.new_writable_file(&path).expect("create"));
        for j in 0..60u64 {
            b.add(
                &key(&format!("k{:05}", j * 13), 1000 - j),
                format!("value-{j}-{}", "x".repeat(j as usize % 9)).as_bytes(),
            )
            .expect("add");
        }
        if i % 2 == 1 {
            b.add_range_tombstone(&key("k00100", 5), b"k00200").expect("tombstone");
        }
        b.finish().expect("finish");
        let bytes = read_file(&fs, &path).expect("read");
        table_seeds(out, &bytes, "engine");
    }
}

/// The whole file as an `sst` seed, and its index and first data blocks as `block` seeds.
fn table_seeds(out: &mut Out, bytes: &[u8], name: &str) {
    out.put("sst", name, &with_flag(0, bytes));
    let file = BytesFile(Arc::new(bytes.to_vec()));
    let Ok(footer) = read_footer(&file, bytes.len() as u64, name) else { return };
    let Ok(index) = read_block_with(&file, footer.index_handle, footer.checksum, true, name) else { return };
    let Ok(iblock) = Block::new(index.clone()) else { return };
    // Index entries: full handles, or delta-encoded (format_version >= 4); try both.
    out.put("block", &format!("{name}-index"), &with_flag(KIND_INDEX, &index));
    out.put("block", &format!("{name}-index-delta"), &with_flag(KIND_INDEX | INDEX_DELTA, &index));
    let iblock = Arc::new(iblock);
    for flags in [0, INDEX_DELTA] {
        let opts = shale::table::block::IndexFormat { value_delta_encoded: flags != 0, ..Default::default() };
        let mut it = iblock.index_iter(bytewise_internal_comparator(), opts);
        it.seek_to_first();
        let mut n = 0;
        while it.valid() && n < 3 {
            let h = it.handle();
            let (start, end) = (h.offset as usize, h.offset as usize + h.size as usize + 5);
            if let Some(raw) = bytes.get(start..end) {
                let mut v = vec![KIND_DATA | WITH_TRAILER, footer.checksum as u8];
                v.extend_from_slice(raw);
                out.put("block", &format!("{name}-stored"), &v);
                if let Ok(c) = read_block_with(&file, h, footer.checksum, true, name) {
                    out.put("block", &format!("{name}-data"), &with_flag(KIND_DATA, &c));
                }
            }
            n += 1;
            it.next();
        }
        if n > 0 {
            break;
        }
    }
}

fn from_db(out: &mut Out, dir: &Path) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(bytes) = fs::read(e.path()) else { continue };
        if name.ends_with(".log") {
            let log_number = name.trim_end_matches(".log").parse::<u64>().unwrap_or(0);
            out.put(
                "wal_record",
                "rocksdb-wal",
                &with_flag(log_number as u8, &bytes[..bytes.len().min(MAX_SEED - 1)]),
            );
        } else if name.starts_with("MANIFEST-") {
            let mut r = LogReader::new(
                Box::new(BytesSeqFile::new(Arc::new(bytes.clone()))),
                name.clone(),
                0,
                WalRecoveryMode::TolerateCorruptedTailRecords,
            );
            let mut records = Vec::new();
            let mut rec = Vec::new();
            while let Ok(true) = r.read_record(&mut rec) {
                records.push(rec.clone());
            }
            manifest_seeds(out, &records, "rocksdb-manifest");
            out.put("wal_record", "rocksdb-manifest-log", &with_flag(0, &bytes));
        } else if name.ends_with(".sst") {
            table_seeds(out, &bytes, "rocksdb-sst");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: gen_seeds <out dir> [--from-db <db dir>]...");
        std::process::exit(2);
    };
    let mut out = Out { dir: PathBuf::from(dir), n: 0 };
    engine_blocks(&mut out);
    engine_wals(&mut out);
    let records: Vec<Vec<u8>> = engine_edits().iter().map(|e| e.encoded()).collect();
    manifest_seeds(&mut out, &records, "engine-manifest");
    engine_tables(&mut out);
    let mut i = 1;
    while i + 1 < args.len() {
        if args[i] == "--from-db" {
            from_db(&mut out, Path::new(&args[i + 1]));
        }
        i += 2;
    }
    println!("wrote {} seeds under {dir}", out.n);
}
