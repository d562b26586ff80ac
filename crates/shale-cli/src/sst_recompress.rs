//! `shale sst_dump --command=recompress`: RocksDB 11.8.1's
//! `SstFileDumper::ShowAllCompressionSizes` (table/sst_file_dumper.cc). For each compression
//! type (`--compression_types`, else every codec Shale supports) and level
//! (`--compression_level_from..=--compression_level_to`, else the codec's default, 32767)
//! the table's entries are written again into a table in memory (block-based, format
//! version 7, `--block_size`/`--set_block_size`, default 16384; XXH3 checksums), which is
//! then read back; one line per level gives:
//!
//! ```text
//! Cx level: L Cx size: <data blocks with trailers> Uncx size: <data blocks uncompressed>
//!   Ratio: uncx/cx Write usec: W Read usec: R Cx count: N (p%) Not cx for ratio: N (p%)
//!   Not cx otherwise: N (p%)
//! ```
//!
//! The counts are RocksDB's NUMBER_BLOCK_COMPRESSED and NUMBER_BLOCK_COMPRESSION_REJECTED
//! tickers of the writing, index block included (it is compressed too), which Shale reads
//! off the table written: a block stored compressed was compressed; one stored raw under a
//! codec was rejected (its compressed form was not under 7/8 of the raw size). Sizes are
//! those of Shale's codecs; libraries other than RocksDB's may compress a block to a few
//! bytes more or less.

use std::sync::Arc;
use std::time::Instant;

use shale_format::fs::{FileSystem, MemFileSystem};
use shale_format::table::block::{Block, IndexFormat};
use shale_format::table::builder::{TableBuilder, TableBuilderOptions};
use shale_format::table::format::{read_block_with, read_exact_at, ChecksumType};
use shale_format::table::{CompressionType, Table};

use crate::ldb::fmt::{Failure, Res};

/// What recompress is asked to do.
#[derive(Clone, Debug)]
pub struct Opts {
    /// None: every supported codec.
    pub types: Option<Vec<u8>>,
    pub block_size: usize,
    pub level_from: i32,
    pub level_to: i32,
    pub threads: u32,
    pub compression: shale_format::table::builder::CompressionOpts,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            types: None,
            block_size: 16384,
            level_from: 32767,
            level_to: 32767,
            threads: 1,
            compression: Default::default(),
        }
    }
}

/// `OptionsHelper::compression_type_string_map`: the names `--compression_types` takes.
pub fn type_from_name(name: &str) -> Option<u8> {
    Some(match name {
        "kNoCompression" => 0,
        "kSnappyCompression" => 1,
        "kZlibCompression" => 2,
        "kBZip2Compression" => 3,
        "kLZ4Compression" => 4,
        "kLZ4HCCompression" => 5,
        "kXpressCompression" => 6,
        "kZSTD" => 7,
        "kZSTDNotFinalCompression" => 0x40,
        "kDisableCompressionOption" => 0xff,
        _ => return None,
    })
}

/// `GetStringFromCompressionType`, else `CompressionTypeToString`.
fn type_name(t: u8) -> String {
    match t {
        0 => "kNoCompression".into(),
        1 => "kSnappyCompression".into(),
        2 => "kZlibCompression".into(),
        3 => "kBZip2Compression".into(),
        4 => "kLZ4Compression".into(),
        5 => "kLZ4HCCompression".into(),
        6 => "kXpressCompression".into(),
        7 => "kZSTD".into(),
        0x40 => "kZSTDNotFinalCompression".into(),
        0xff => "kDisableCompressionOption".into(),
        0x80..=0xfe => format!("Custom{t:02X}"),
        _ => format!("Reserved{t:02X}"),
    }
}

/// Prints the table of sizes for `table`, as `ShowAllCompressionSizes`.
pub fn show_all(table: &Arc<Table>, o: &Opts, out: &mut Vec<u8>) -> Res<()> {
    let all: Vec<u8> =
        (0u8..=7).filter(|&t| CompressionType::from_u8(t).is_some_and(|c| c.is_supported())).collect();
    let types = o.types.clone().unwrap_or(all);
    for t in types {
        let name = type_name(t);
        let codec = CompressionType::from_u8(t).filter(|c| t <= 7 && c.is_supported());
        let Some(codec) = codec else {
            out.extend(format!("Unsupported compression type: {name}.\n").into_bytes());
            continue;
        };
        out.extend(
            format!("Compression: {name:<24} Block Size: {}  Threads: {}\n", o.block_size, o.threads)
                .into_bytes(),
        );
        let mut level = o.level_from;
        while level <= o.level_to {
            out.extend(format!("Cx level: {level}").into_bytes());
            let mut c = o.compression.clone();
            c.level = level;
            show_one(table, codec, c, o.block_size, out).map_err(Failure::db)?;
            level += 1;
        }
    }
    Ok(())
}

fn show_one(
    table: &Arc<Table>,
    codec: CompressionType,
    c: shale_format::table::builder::CompressionOpts,
    block_size: usize,
    out: &mut Vec<u8>,
) -> shale::Result<()> {
    let fs = MemFileSystem::new();
    let path = std::path::Path::new("/recompress/test_file_name");
    fs.create_dir_all(std::path::Path::new("/recompress"))?;
    let start = Instant::now();
    let mut opts = TableBuilderOptions::new(shale_format::key::bytewise_internal_comparator());
    opts.block_size = block_size;
    opts.compression = codec;
    opts.compression_opts = c;
    opts.format_version = 7;
    opts.checksum = ChecksumType::Xxh3;
    let mut b = TableBuilder::new(opts, fs.new_writable_file(path)?);
    let mut it = table.iter(false);
    it.seek_to_first();
    while it.valid() {
        b.add(it.key(), it.value())?;
        it.next();
    }
    it.status()?;
    drop(it);
    let built = b.finish()?;
    let write_us = start.elapsed().as_micros();
    let start = Instant::now();
    let file = fs.new_random_access_file(path)?;
    let ropts = shale_format::table::TableReaderOptions {
        verify_checksums: false,
        ..shale_format::table::TableReaderOptions::standalone(
            shale_format::key::bytewise_internal_comparator(),
            "test_file_name",
        )
    };
    let t = Table::open(file.clone(), built.file_size, ropts)?;
    let mut it = t.iter(false);
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    it.status()?;
    drop(it);
    let read_us = start.elapsed().as_micros();

    // The blocks as written: each data block's stored type and uncompressed size, and the
    // index block's stored type.
    let footer = *t.footer();
    let p = t.properties();
    let checksum = footer.block_checksum();
    let index =
        Arc::new(Block::new(read_block_with(file.as_ref(), footer.index_handle, checksum, false, "")?)?);
    let fmt = IndexFormat {
        key_is_user_key: p.index_key_is_user_key != 0,
        value_delta_encoded: p.index_value_is_delta_encoded != 0,
        has_first_key: false,
        ..Default::default()
    };
    let stored_type = |h: shale_format::table::BlockHandle| -> shale::Result<u8> {
        let mut b = [0u8; 1];
        read_exact_at(file.as_ref(), h.offset + h.size, &mut b, "test_file_name")?;
        Ok(b[0])
    };
    let (mut compressed, mut rejected, mut uncompressed) = (0u64, 0u64, 0u64);
    let mut count = |ty: u8| {
        if ty != 0 {
            compressed += 1;
        } else if codec != CompressionType::None {
            rejected += 1;
        }
    };
    let mut ii = index.index_iter(&shale_format::key::bytewise_internal_comparator(), fmt);
    ii.seek_to_first();
    while ii.valid() {
        let h = ii.handle();
        count(stored_type(h)?);
        uncompressed += read_block_with(file.as_ref(), h, checksum, false, "")?.len() as u64;
        ii.next();
    }
    ii.status()?;
    count(stored_type(footer.index_handle)?);

    let mut num_blocks = p.num_data_blocks;
    if compressed + rejected > num_blocks {
        num_blocks = compressed + rejected;
    }
    let for_ratio = num_blocks - compressed - rejected;
    let pct = |n: u64| if num_blocks == 0 { 0.0 } else { n as f64 / num_blocks as f64 * 100.0 };
    let ratio = uncompressed as f64 / p.data_size as f64;
    let ratio = if ratio.is_nan() {
        "-nan".to_string()
    } else if ratio.is_infinite() {
        "inf".to_string()
    } else {
        format!("{ratio:.6}")
    };
    out.extend(
        format!(
            " Cx size: {:>10} Uncx size: {:>10} Ratio: {:>10} Write usec: {:>10}  Read usec: {:>10}  \
             Cx count: {:>6} ({:>5.1}%) Not cx for ratio: {:>6} ({:>5.1}%) Not cx otherwise: {:>6} ({:>5.1}%)\n",
            p.data_size,
            uncompressed,
            ratio,
            write_us,
            read_us,
            compressed,
            pct(compressed),
            for_ratio,
            pct(for_ratio),
            rejected,
            pct(rejected)
        )
        .into_bytes(),
    );
    Ok(())
}
