//! Block compression in RocksDB's encodings (format_version >= 2).
//!
//! ```text
//! Snappy : raw snappy block (it carries its own uncompressed length)
//! Zlib   : varint32 uncompressed size | deflate stream (raw: no zlib header, for
//!          RocksDB's default and every negative window_bits)
//! LZ4    : varint32 uncompressed size | LZ4 block
//! LZ4HC  : varint32 uncompressed size | LZ4 block (same format as LZ4, written by liblz4's
//!          high-compression LZ4_compress_HC; read by the LZ4 decoder)
//! ZSTD   : varint32 uncompressed size | zstd frame
//! BZip2  : varint32 uncompressed size | bzip2 stream ("BZh9" header, block size 9)
//! ```
//!
//! LZ4HC compresses as RocksDB's `LZ4HC_Compress`: liblz4 (the `lz4-sys` crate) at the
//! level of `compression_opts.level`, RocksDB's default level (None here) being liblz4's
//! default (0, which liblz4 takes as level 9). With a compression dictionary it uses an HC
//! stream: `LZ4_loadDictHC` then `LZ4_compress_HC_continue`, as RocksDB does.
//!
//! Every LZ4 and LZ4HC block is read by liblz4's safe decoder (see `lz4_decode`).
//!
//! Why liblz4 and not pure Rust for the high-compression mode and the accelerated fast
//! mode: no well-kept pure-Rust crate does LZ4 HC (`lz4_flex`, used for LZ4's default fast
//! mode, has neither HC levels nor an acceleration factor), and liblz4 is the very library
//! RocksDB 11.8.1 and raft-engine 0.4.2 call, so the blocks Shale writes at a given level are
//! byte for byte theirs (a hand-written HC compressor would write other, equally valid,
//! blocks). [`lz4hc_compress`] and [`lz4_compress_fast`] give that pair to other crates
//! (shale-raftlog's `compression_level`, the KV engine's LZ4/LZ4HC levels).
//! Zlib compresses as RocksDB's `BuiltinZlibCompressorV2`: zlib's `deflateInit2` with
//! `compression_opts.window_bits`, `level`, memLevel 8 and `strategy`, and
//! `deflateSetDictionary` with the table's dictionary, through zlib-rs (pure Rust; flate2's
//! default miniz_oxide backend has neither window bits, strategies nor dictionaries). Zlib
//! blocks are read with flate2 (no dictionary) or zlib-rs (with one).
//!
//! The compression type byte itself lives in the block trailer (see `format.rs`).

use std::io::{Read, Write};

use crate::coding::{decode_varint32, put_varint32};
use crate::error::{Error, Result};

/// RocksDB's `CompressionType` byte values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CompressionType {
    None = 0,
    Snappy = 1,
    Zlib = 2,
    BZip2 = 3,
    Lz4 = 4,
    Lz4hc = 5,
    Xpress = 6,
    Zstd = 7,
}

impl CompressionType {
    pub fn from_u8(b: u8) -> Option<CompressionType> {
        Some(match b {
            0 => CompressionType::None,
            1 => CompressionType::Snappy,
            2 => CompressionType::Zlib,
            3 => CompressionType::BZip2,
            4 => CompressionType::Lz4,
            5 => CompressionType::Lz4hc,
            6 => CompressionType::Xpress,
            7 | 0x40 => CompressionType::Zstd, // 0x40 = ZSTDNotFinal, same encoding
            _ => return None,
        })
    }

    /// RocksDB's name for the type, as written in the "rocksdb.compression" property.
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "NoCompression",
            CompressionType::Snappy => "Snappy",
            CompressionType::Zlib => "Zlib",
            CompressionType::BZip2 => "BZip2",
            CompressionType::Lz4 => "LZ4",
            CompressionType::Lz4hc => "LZ4HC",
            CompressionType::Xpress => "Xpress",
            CompressionType::Zstd => "ZSTD",
        }
    }

    pub fn from_name(name: &str) -> Option<CompressionType> {
        [
            CompressionType::None,
            CompressionType::Snappy,
            CompressionType::Zlib,
            CompressionType::BZip2,
            CompressionType::Lz4,
            CompressionType::Lz4hc,
            CompressionType::Xpress,
            CompressionType::Zstd,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }

    /// True for the codecs Shale can compress and decompress.
    pub fn is_supported(self) -> bool {
        !matches!(self, CompressionType::Xpress)
    }
}

/// Largest uncompressed block size Shale accepts from a size prefix (guards allocations
/// driven by corrupt data).
const MAX_UNCOMPRESSED: usize = 1 << 30;

fn unsupported(t: CompressionType) -> Error {
    Error::not_supported(format!("compression type {} is not supported by Shale", t.name()))
}

fn bad(t: CompressionType, what: impl std::fmt::Display) -> Error {
    Error::corruption(format!("Corrupted compressed block contents ({}): {what}", t.name()))
}

/// A raw Snappy block of `raw`, built with this thread's encoder and output buffer: a
/// fresh `snap::raw::Encoder` per block (and `compress_vec`'s zeroed output) zeroed about
/// 40 KiB for each 4 KiB block, the encoder's 32 KiB hash table allocated zeroed each time
/// (callgrind, `overwrite` on 200,000 keys: calloc and memset 5.6% of all instructions).
/// The encoder clears the part of its table a block uses itself, as RocksDB's snappy
/// clears its working memory's table.
fn snappy_compress(raw: &[u8]) -> std::result::Result<Vec<u8>, snap::Error> {
    thread_local! {
        static SNAPPY: std::cell::RefCell<(snap::raw::Encoder, Vec<u8>)> =
            std::cell::RefCell::new((snap::raw::Encoder::new(), Vec::new()));
    }
    SNAPPY.with(|cell| {
        // A compression on this thread re-entered from inside this one (not done today)
        // gets an encoder of its own rather than a borrow error.
        let Ok(mut pair) = cell.try_borrow_mut() else {
            return snap::raw::Encoder::new().compress_vec(raw);
        };
        let (encoder, buf) = &mut *pair;
        let max = snap::raw::max_compress_len(raw.len());
        if max == 0 {
            return Err(snap::Error::TooBig { given: raw.len() as u64, max: u32::MAX as u64 });
        }
        if buf.len() < max {
            buf.resize(max, 0);
        }
        let n = encoder.compress(raw, &mut buf[..max])?;
        // Big blocks (a blob, a huge value) do not keep a large buffer alive on the thread.
        let out = buf[..n].to_vec();
        if buf.len() > SNAPPY_SCRATCH_KEEP {
            *buf = Vec::new();
        }
        Ok(out)
    })
}

/// The largest Snappy output buffer a thread keeps between blocks.
const SNAPPY_SCRATCH_KEEP: usize = 1 << 20;

/// Compresses `raw` in `t`'s block encoding. `level` None means the codec default
/// (zlib 6, zstd 3).
pub fn compress(t: CompressionType, level: Option<i32>, raw: &[u8]) -> Result<Vec<u8>> {
    if raw.len() > u32::MAX as usize {
        return Err(Error::invalid_argument("block too large to compress"));
    }
    // Snappy gives its own output, exactly sized: nothing is allocated here for it.
    let mut out = Vec::with_capacity(if t == CompressionType::Snappy { 0 } else { raw.len() / 2 + 16 });
    match t {
        CompressionType::None => out.extend_from_slice(raw),
        CompressionType::Snappy => out = snappy_compress(raw).map_err(|e| bad(t, e))?,
        CompressionType::Zlib => {
            if !level.is_none_or(|l| (-1..=9).contains(&l)) {
                return Err(Error::invalid_argument(format!("zlib cannot compress at level {level:?}")));
            }
            out = zlib_default_block(raw, level)?
        }
        CompressionType::Lz4 | CompressionType::Lz4hc => {
            put_varint32(&mut out, raw.len() as u32);
            out.extend_from_slice(&lz4_block(t, level, raw, None)?);
        }
        CompressionType::Zstd => {
            put_varint32(&mut out, raw.len() as u32);
            let body =
                zstd::bulk::compress(raw, level.unwrap_or(3)).map_err(|e| Error::io("zstd compress", e))?;
            out.extend_from_slice(&body);
        }
        CompressionType::BZip2 => {
            put_varint32(&mut out, raw.len() as u32);
            // RocksDB's BZip2_Compress uses block size 9 (900 kB), work factor 30.
            let mut enc = bzip2_codec::write::BzEncoder::new(out, bzip2_codec::Compression::best());
            enc.write_all(raw).map_err(|e| Error::io("bzip2 compress", e))?;
            out = enc.finish().map_err(|e| Error::io("bzip2 compress", e))?;
        }
        CompressionType::Xpress => return Err(unsupported(t)),
    }
    Ok(out)
}

/// RocksDB's default `compression_opts.max_compressed_bytes_per_kb` (7/8 of 1024).
pub const DEFAULT_MAX_COMPRESSED_BYTES_PER_KB: u32 = 896;

/// RocksDB 11.8.1 keeps a compressed block (its size prefix included) only when it is at
/// most `max_compressed_bytes_per_kb` (896 by default) per 1024 raw bytes: the output
/// buffer `BlockBasedTableBuilder::CompressAndVerifyBlock` gives the compressor.
pub fn max_compressed_size(raw: usize) -> usize {
    max_compressed_size_per_kb(raw, DEFAULT_MAX_COMPRESSED_BYTES_PER_KB)
}

/// [`max_compressed_size`] for a given `max_compressed_bytes_per_kb`.
pub fn max_compressed_size_per_kb(raw: usize, per_kb: u32) -> usize {
    ((u64::from(per_kb) * raw as u64) >> 10) as usize
}

/// Whether a block compressed to `compressed` bytes is kept ([`max_compressed_size`]).
pub fn good_compression_ratio(compressed: usize, raw: usize) -> bool {
    compressed <= max_compressed_size(raw)
}

/// ZSTD into `out` (which holds the size prefix already) as RocksDB 11.8.1's
/// `BuiltinZSTDCompressorV2`: `ZSTD_compress2` into a buffer of what is left of
/// [`max_compressed_size`], so a block rejected there (`dstSize_tooSmall`, which libzstd can
/// report on a block whose unbounded output would have fitted) is rejected here too.
/// Returns false when rejected. With `opts.checksum` (RocksDB's `compression_opts.checksum`,
/// `ZSTD_c_checksumFlag`) the frame ends with the 4-byte checksum of its content, which
/// every ZSTD decoder (RocksDB's, Shale's) verifies.
fn zstd_bounded(
    c: &mut zstd::bulk::Compressor<'_>,
    opts: &CodecOpts,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> Result<bool> {
    if opts.checksum {
        c.include_checksum(true).map_err(|e| Error::io("zstd compress", e))?;
    }
    let room = opts.max_compressed_size(raw.len()).saturating_sub(out.len());
    if room == 0 {
        return Ok(false);
    }
    let mut buf = vec![0u8; room];
    match c.compress_to_buffer(raw, &mut buf[..]) {
        Ok(n) => {
            out.extend_from_slice(&buf[..n.min(room)]);
            Ok(true)
        }
        Err(e) if e.to_string().contains("too small") => Ok(false),
        Err(e) => Err(Error::io("zstd compress", e)),
    }
}

/// Compresses a block for writing: returns the bytes to store and the type to record,
/// falling back to `(raw, None)` when compression does not pay.
pub fn compress_block(
    t: CompressionType,
    level: Option<i32>,
    raw: &[u8],
) -> Result<(Vec<u8>, CompressionType)> {
    compress_block_opts(t, &CodecOpts { level, ..CodecOpts::default() }, raw, &[])
}

/// The settings of a table's codec beyond its type: RocksDB's `compression_opts.level`
/// (None: the codec's default, RocksDB's `kDefaultCompressionLevel`), zlib's
/// `window_bits` and `strategy` (the other codecs have neither), the largest compressed
/// size kept per KiB (`max_compressed_bytes_per_kb`, already capped at 1023 as RocksDB's
/// table builder does; a value of 0 or less turns compression off before a codec is
/// chosen, in the table builder) and ZSTD's frame checksum (`checksum`; ZSTD only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodecOpts {
    pub level: Option<i32>,
    pub window_bits: i32,
    pub strategy: i32,
    pub max_compressed_bytes_per_kb: u32,
    pub checksum: bool,
}

impl Default for CodecOpts {
    /// RocksDB's `CompressionOptions` defaults: the codec's level, window bits -14 (raw
    /// deflate, 16 KiB window), strategy 0 (Z_DEFAULT_STRATEGY), 896 bytes per KiB, no
    /// ZSTD checksum.
    fn default() -> Self {
        CodecOpts {
            level: None,
            window_bits: -14,
            strategy: 0,
            max_compressed_bytes_per_kb: DEFAULT_MAX_COMPRESSED_BYTES_PER_KB,
            checksum: false,
        }
    }
}

impl CodecOpts {
    /// The most bytes (size prefix included) a block of `raw` bytes is kept compressed in.
    pub fn max_compressed_size(&self, raw: usize) -> usize {
        max_compressed_size_per_kb(raw, self.max_compressed_bytes_per_kb)
    }

    /// Whether a block compressed to `compressed` bytes is kept.
    pub fn keeps(&self, compressed: usize, raw: usize) -> bool {
        compressed <= self.max_compressed_size(raw)
    }
}

/// What zlib made of a block ([`zlib_block`]).
enum Zlib {
    /// The size prefix and the deflate stream.
    Kept(Vec<u8>),
    /// The stream did not fit the room given (RocksDB's "compression rejected").
    Rejected,
    /// zlib refused the settings (`deflateInit2` or `deflateSetDictionary` failed:
    /// RocksDB's "compression bypassed"); the block is stored uncompressed.
    Bypassed,
}

/// zlib's `deflateInit2` parameter check (zlib 1.3, which zlib-rs follows): level -1
/// (Z_DEFAULT_COMPRESSION, 6) or 0..=9; window bits -15..=-9 (raw deflate), 8..=15 (zlib
/// header) or 25..=31 (gzip header); strategy 0..=4; memLevel is RocksDB's fixed 8.
/// zlib-rs panics on settings zlib would refuse, so they are checked here first.
fn zlib_config(opts: &CodecOpts) -> Option<zlib_rs::DeflateConfig> {
    let level = opts.level.unwrap_or(-1);
    let w = opts.window_bits;
    let window_ok = (-15..=-9).contains(&w) || (8..=15).contains(&w) || (25..=31).contains(&w);
    if !(-1..=9).contains(&level) || !window_ok {
        return None;
    }
    let strategy = zlib_rs::Strategy::try_from(opts.strategy).ok()?;
    Some(zlib_rs::DeflateConfig {
        level,
        method: zlib_rs::Method::Deflated,
        window_bits: w,
        mem_level: 8,
        strategy,
    })
}

/// RocksDB 11.8.1's `BuiltinZlibCompressorV2::CompressBlock`: the varint32 size prefix,
/// then one `deflate(Z_FINISH)` of `raw` by a stream made with `deflateInit2(level,
/// Z_DEFLATED, window_bits, 8, strategy)` (and `deflateSetDictionary(dict)` when a
/// dictionary is given) into at most `room` bytes, prefix included. A negative
/// `window_bits` writes raw deflate, which is what RocksDB's reader (raw inflate, window
/// bits -14) reads; a positive one writes the zlib or gzip header exactly as RocksDB does,
/// blocks its own reader then refuses.
fn zlib_block(raw: &[u8], opts: &CodecOpts, dict: &[u8], room: usize) -> Zlib {
    let Some(config) = zlib_config(opts) else { return Zlib::Bypassed };
    let mut out = Vec::with_capacity(room.min(raw.len() + 64));
    put_varint32(&mut out, raw.len() as u32);
    if room <= out.len() || raw.len() > u32::MAX as usize {
        return Zlib::Bypassed;
    }
    let mut z = zlib_rs::Deflate::new_with_config(config);
    if !dict.is_empty() && z.set_dictionary(dict).is_err() {
        return Zlib::Bypassed;
    }
    let at = out.len();
    out.resize(room, 0);
    match z.compress(raw, &mut out[at..], zlib_rs::DeflateFlush::Finish) {
        Ok(zlib_rs::Status::StreamEnd) => {
            let n = at + z.total_out() as usize;
            out.truncate(n);
            Zlib::Kept(out)
        }
        _ => Zlib::Rejected,
    }
}

/// A zlib block at RocksDB's default window bits (-14) and strategy, without a dictionary:
/// the varint32 size prefix and a raw deflate stream from flate2's backend, as Shale wrote
/// zlib blocks before the other settings were built. It is kept for these defaults because
/// its output size matches zlib's on the golden tables (`sst_dump --command=recompress`
/// counts compressed blocks as RocksDB's zlib does), where zlib-rs's stream differs by a
/// few bytes; any other setting goes through [`zlib_block`].
fn zlib_default_block(raw: &[u8], level: Option<i32>) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len() / 2 + 16);
    put_varint32(&mut out, raw.len() as u32);
    let lvl = match level {
        Some(l) if (0..=9).contains(&l) => flate2::Compression::new(l as u32),
        _ => flate2::Compression::default(),
    };
    let mut enc = flate2::write::DeflateEncoder::new(out, lvl);
    enc.write_all(raw).map_err(|e| Error::io("zlib compress", e))?;
    enc.finish().map_err(|e| Error::io("zlib compress", e))
}

/// [`compress_block`] with all of the codec's settings and, when `dict` is not empty, the
/// table's compression dictionary (ZSTD's dictionary, LZ4's history, zlib's preset
/// dictionary; Snappy and BZip2 have none and compress as usual).
pub fn compress_block_opts(
    t: CompressionType,
    opts: &CodecOpts,
    raw: &[u8],
    dict: &[u8],
) -> Result<(Vec<u8>, CompressionType)> {
    if t == CompressionType::Zlib
        && opts.window_bits == -14
        && opts.strategy == 0
        && dict.is_empty()
        && opts.level.is_none_or(|l| (-1..=9).contains(&l))
    {
        let b = zlib_default_block(raw, opts.level)?;
        return Ok(if opts.keeps(b.len(), raw.len()) {
            (b, t)
        } else {
            (raw.to_vec(), CompressionType::None)
        });
    }
    if t == CompressionType::Zlib {
        return Ok(match zlib_block(raw, opts, dict, opts.max_compressed_size(raw.len())) {
            Zlib::Kept(b) => (b, t),
            Zlib::Rejected | Zlib::Bypassed => (raw.to_vec(), CompressionType::None),
        });
    }
    if !dict.is_empty() {
        return compress_with_dict_opts(t, opts, raw, dict);
    }
    let level = opts.level;
    if t == CompressionType::None {
        return Ok((raw.to_vec(), CompressionType::None));
    }
    if t == CompressionType::Zstd && raw.len() <= u32::MAX as usize {
        let mut out = Vec::with_capacity(raw.len() / 2 + 16);
        put_varint32(&mut out, raw.len() as u32);
        let mut c =
            zstd::bulk::Compressor::new(level.unwrap_or(3)).map_err(|e| Error::io("zstd compress", e))?;
        return Ok(if zstd_bounded(&mut c, opts, raw, &mut out)? {
            (out, t)
        } else {
            (raw.to_vec(), CompressionType::None)
        });
    }
    let c = compress(t, level, raw)?;
    if opts.keeps(c.len(), raw.len()) {
        Ok((c, t))
    } else {
        Ok((raw.to_vec(), CompressionType::None))
    }
}

/// A blob's compression (helper cfblob, issue 33): RocksDB 11.8.1's BlobFileBuilder
/// compresses every blob with its `blob_compression_opts` through
/// `LegacyForceBuiltinCompression`, and keeps the result whatever its size (its blob index
/// names the file's one codec). So here: the codec's level, zlib's window bits and strategy
/// and ZSTD's frame checksum of `opts`, no size limit (`max_compressed_bytes_per_kb` is the
/// table builder's, not read). InvalidArgument when the codec refuses the settings.
pub fn compress_forced(t: CompressionType, opts: &CodecOpts, raw: &[u8]) -> Result<Vec<u8>> {
    match t {
        CompressionType::Zstd if opts.checksum => {
            if raw.len() > u32::MAX as usize {
                return Err(Error::invalid_argument("block too large to compress"));
            }
            let mut out = Vec::with_capacity(raw.len() / 2 + 16);
            put_varint32(&mut out, raw.len() as u32);
            let mut c = zstd::bulk::Compressor::new(opts.level.unwrap_or(3))
                .map_err(|e| Error::io("zstd compress", e))?;
            c.include_checksum(true).map_err(|e| Error::io("zstd compress", e))?;
            out.extend_from_slice(&c.compress(raw).map_err(|e| Error::io("zstd compress", e))?);
            Ok(out)
        }
        CompressionType::Zlib if opts.window_bits != -14 || opts.strategy != 0 => {
            // deflate's worst case is a few bytes per 16 KiB stored block over the input.
            let room = raw.len() + raw.len() / 64 + 64;
            match zlib_block(raw, opts, &[], room) {
                Zlib::Kept(b) => Ok(b),
                Zlib::Rejected | Zlib::Bypassed => Err(Error::invalid_argument(format!(
                    "zlib cannot compress with level {:?}, window_bits {}, strategy {}",
                    opts.level, opts.window_bits, opts.strategy
                ))),
            }
        }
        _ => compress(t, opts.level, raw),
    }
}

/// The most bytes `len` compressed bytes of codec `t` can expand to, so that a corrupt size
/// prefix cannot make the reader allocate far more than the data could ever fill:
/// Snappy copies emit at most 64 bytes per 2-3 input bytes; an LZ4 match grows by 255 per
/// length byte; deflate's limit is 1032:1; a ZSTD block has a 3-byte header and at most
/// 128 KiB of output.
fn max_expansion(t: CompressionType, len: usize) -> usize {
    let bound = match t {
        CompressionType::Snappy => len.saturating_mul(32),
        CompressionType::Lz4 | CompressionType::Lz4hc => len.saturating_mul(255),
        CompressionType::Zlib => len.saturating_mul(1032),
        CompressionType::Zstd => (len / 3 + 1).saturating_mul(128 << 10),
        // Runs of one byte compress by ~2^21 in bzip2's RLE stages: no tighter bound.
        CompressionType::BZip2 => MAX_UNCOMPRESSED,
        _ => len,
    };
    bound.saturating_add(64).min(MAX_UNCOMPRESSED)
}

fn check_size(t: CompressionType, n: usize, compressed_len: usize) -> Result<()> {
    if n > max_expansion(t, compressed_len) {
        return Err(bad(t, format!("uncompressed size {n} too large for {compressed_len} compressed bytes")));
    }
    Ok(())
}

fn size_prefix(t: CompressionType, data: &[u8]) -> Result<(usize, &[u8])> {
    let (n, used) = decode_varint32(data).ok_or_else(|| bad(t, "bad uncompressed size prefix"))?;
    let n = n as usize;
    let body = &data[used..];
    check_size(t, n, body.len())?;
    Ok((n, body))
}

/// Decompresses a block stored with type `t`.
pub fn uncompress(t: CompressionType, data: &[u8]) -> Result<Vec<u8>> {
    uncompress_with_dict(t, data, &[])
}

/// Decompresses a data block of a table that has a compression dictionary (RocksDB's
/// `compression_opts.max_dict_bytes > 0`; the dictionary is the table's
/// `rocksdb.compression_dict` meta block). LZ4, ZSTD and zlib use it; Snappy and BZip2
/// have none. An empty `dict` means no dictionary.
pub fn uncompress_with_dict(t: CompressionType, data: &[u8], dict: &[u8]) -> Result<Vec<u8>> {
    if !dict.is_empty() {
        match t {
            CompressionType::Lz4 | CompressionType::Lz4hc => {
                let (n, body) = size_prefix(t, data)?;
                return lz4_decode::decompress(body, n, dict).map_err(|e| bad(t, e));
            }
            CompressionType::Zstd => {
                let (n, body) = size_prefix(t, data)?;
                let mut d = zstd::bulk::Decompressor::with_dictionary(dict).map_err(|e| bad(t, e))?;
                let out = d.decompress(body, n).map_err(|e| bad(t, e))?;
                if out.len() != n {
                    return Err(bad(t, format!("expected {n} bytes, got {}", out.len())));
                }
                return Ok(out);
            }
            CompressionType::Zlib => {
                let (n, body) = size_prefix(t, data)?;
                return zlib_inflate_with_dict(body, n, dict);
            }
            _ => {}
        }
    }
    match t {
        CompressionType::None => Ok(data.to_vec()),
        CompressionType::Snappy => {
            // Our own decoder (`snappy.rs`): no zero-fill of the output first.
            let n = crate::snappy::decompress_len(data).map_err(|e| bad(t, e))?;
            check_size(t, n, data.len())?;
            crate::snappy::decompress_into(data, n, crate::block_buf::take(n)).map_err(|e| bad(t, e))
        }
        CompressionType::Zlib => {
            let (n, body) = size_prefix(t, data)?;
            let mut out = Vec::with_capacity(n);
            let mut dec = flate2::read::DeflateDecoder::new(body).take(n as u64 + 1);
            dec.read_to_end(&mut out).map_err(|e| bad(t, e))?;
            if out.len() != n {
                return Err(bad(t, format!("expected {n} bytes, got {}", out.len())));
            }
            Ok(out)
        }
        CompressionType::Lz4 | CompressionType::Lz4hc => {
            let (n, body) = size_prefix(t, data)?;
            lz4_decode::decompress(body, n, &[]).map_err(|e| bad(t, e))
        }
        CompressionType::Zstd => {
            let (n, body) = size_prefix(t, data)?;
            let out = zstd::bulk::decompress(body, n).map_err(|e| bad(t, e))?;
            if out.len() != n {
                return Err(bad(t, format!("expected {n} bytes, got {}", out.len())));
            }
            Ok(out)
        }
        CompressionType::BZip2 => {
            let (n, body) = size_prefix(t, data)?;
            // bzip2 has no useful expansion bound, so the output grows as it is read (never
            // past n + 1 bytes) rather than being allocated from the prefix up front.
            let mut out = Vec::with_capacity(n.min(body.len().saturating_mul(8)));
            let mut dec = bzip2_codec::read::BzDecoder::new(body).take(n as u64 + 1);
            dec.read_to_end(&mut out).map_err(|e| bad(t, e))?;
            if out.len() != n {
                return Err(bad(t, format!("expected {n} bytes, got {}", out.len())));
            }
            Ok(out)
        }
        CompressionType::Xpress => Err(unsupported(t)),
    }
}

/// Raw inflate of a zlib block written with a preset dictionary, as RocksDB's
/// `Zlib_DecompressBlock` (`inflateSetDictionary`, one inflate into the `n`-byte output).
/// The window is 15 bits (RocksDB's reader takes 14): a superset, the dictionary's last 32
/// KiB being the history every raw stream of window bits -9..=-15 may refer to.
fn zlib_inflate_with_dict(body: &[u8], n: usize, dict: &[u8]) -> Result<Vec<u8>> {
    let t = CompressionType::Zlib;
    let mut z = zlib_rs::Inflate::new(false, 15);
    z.set_dictionary(dict).map_err(|e| bad(t, format!("zlib dictionary: {}", e.as_str())))?;
    let mut out = vec![0u8; n];
    match z.decompress(body, &mut out, zlib_rs::InflateFlush::Finish) {
        Ok(zlib_rs::Status::StreamEnd) if z.total_out() as usize == n => Ok(out),
        Ok(_) => Err(bad(t, format!("size mismatch: expected {n} bytes, got {}", z.total_out()))),
        Err(e) => Err(bad(t, format!("zlib inflate: {}", e.as_str()))),
    }
}

/// RocksDB's WAL compression (`ZSTDStreamingCompress`, util/compression.cc): each logical
/// record is one ZSTD frame with the content checksum, at ZSTD's default level; the frame is
/// then cut into log fragments like any record (`wal/writer.rs`).
pub struct WalCompressor {
    cctx: zstd::bulk::Compressor<'static>,
}

impl WalCompressor {
    pub fn new() -> Result<WalCompressor> {
        let mut cctx = zstd::bulk::Compressor::new(zstd::DEFAULT_COMPRESSION_LEVEL)
            .map_err(|e| Error::io("zstd WAL compressor", e))?;
        cctx.include_checksum(true).map_err(|e| Error::io("zstd WAL compressor", e))?;
        Ok(WalCompressor { cctx })
    }

    /// One ZSTD frame holding `raw` (an empty record stays empty, as RocksDB's).
    pub fn compress_record(&mut self, raw: &[u8]) -> Result<Vec<u8>> {
        if raw.is_empty() {
            return Ok(Vec::new());
        }
        self.cctx.compress(raw).map_err(|e| Error::io("zstd WAL compress", e))
    }
}

/// Decompresses a WAL record written by [`WalCompressor`] or RocksDB (one or more ZSTD frames,
/// streamed: the frames need not carry their content size). `limit` bounds the output.
pub fn uncompress_wal_record(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let t = CompressionType::Zstd;
    let dec = zstd::stream::read::Decoder::with_buffer(data).map_err(|e| bad(t, e))?;
    let mut out = Vec::new();
    dec.take(limit as u64 + 1).read_to_end(&mut out).map_err(|e| bad(t, e))?;
    if out.len() > limit {
        return Err(bad(t, format!("WAL record larger than {limit} bytes")));
    }
    Ok(out)
}

/// Compresses a data block of a table with a compression dictionary (RocksDB's
/// `compression_opts.max_dict_bytes > 0`): ZSTD with the dictionary (raw content or trained),
/// LZ4 with the dictionary as history; codecs without dictionaries compress as usual.
/// Falls back to `(raw, None)` when compression does not pay, as [`compress_block`].
pub fn compress_block_with_dict(
    t: CompressionType,
    level: Option<i32>,
    raw: &[u8],
    dict: &[u8],
) -> Result<(Vec<u8>, CompressionType)> {
    compress_with_dict_opts(t, &CodecOpts { level, ..CodecOpts::default() }, raw, dict)
}

/// [`compress_block_with_dict`] with all of the codec's settings.
fn compress_with_dict_opts(
    t: CompressionType,
    opts: &CodecOpts,
    raw: &[u8],
    dict: &[u8],
) -> Result<(Vec<u8>, CompressionType)> {
    let level = opts.level;
    if t == CompressionType::Zlib {
        return compress_block_opts(t, opts, raw, dict);
    }
    if dict.is_empty() || !matches!(t, CompressionType::Zstd | CompressionType::Lz4 | CompressionType::Lz4hc)
    {
        return compress_block_opts(t, opts, raw, &[]);
    }
    if raw.len() > u32::MAX as usize {
        return Err(Error::invalid_argument("block too large to compress"));
    }
    let mut out = Vec::with_capacity(raw.len() / 2 + 16);
    put_varint32(&mut out, raw.len() as u32);
    if t == CompressionType::Zstd {
        let mut c = zstd::bulk::Compressor::with_dictionary(level.unwrap_or(3), dict)
            .map_err(|e| Error::io("zstd compress", e))?;
        if !zstd_bounded(&mut c, opts, raw, &mut out)? {
            return Ok((raw.to_vec(), CompressionType::None));
        }
    } else {
        out.extend_from_slice(&lz4_block(t, level, raw, Some(dict))?);
    }
    if opts.keeps(out.len(), raw.len()) {
        Ok((out, t))
    } else {
        Ok((raw.to_vec(), CompressionType::None))
    }
}

/// ZSTD's dictionary trainer (`ZDICT_trainFromBuffer`, as RocksDB's `ZSTD_TrainDictionary`)
/// over `samples`, for a dictionary of at most `max_dict_bytes`. None when training fails
/// (too few or too small samples); RocksDB then uses the raw samples.
pub fn zstd_train_dictionary(samples: &[&[u8]], max_dict_bytes: usize) -> Option<Vec<u8>> {
    zstd::dict::from_samples(samples, max_dict_bytes).ok()
}

/// The LZ4 block (no size prefix) of `raw` for LZ4 or LZ4HC at `level` (None: the codec's
/// default), as RocksDB 11.8's unified LZ4 levels: a positive level selects the high
/// compression compressor (liblz4's LZ4HC), a negative one the fast compressor with that
/// acceleration, for either type; LZ4's default is the fast compressor at -1 (lz4_flex,
/// pure Rust, measured as fast as liblz4's), LZ4HC's is level 9. Every variant writes the
/// same block format, read by the one LZ4 decompressor.
fn lz4_block(t: CompressionType, level: Option<i32>, raw: &[u8], dict: Option<&[u8]>) -> Result<Vec<u8>> {
    let level = level.unwrap_or(if t == CompressionType::Lz4hc { 9 } else { -1 });
    // (LZ4HC's level 0 is liblz4's default HC level, as before 11.8.)
    if level > 0 || (level == 0 && t == CompressionType::Lz4hc) {
        return lz4hc::compress(raw, Some(level), dict);
    }
    if level < -1 && dict.is_none() {
        return lz4hc::compress_fast(raw, level.saturating_neg());
    }
    Ok(match dict {
        Some(d) => lz4_flex::block::compress_with_dict(raw, d),
        None => lz4_flex::block::compress(raw),
    })
}

/// The LZ4 block (raw block format, no size prefix; any LZ4 decoder reads it) of `input`
/// from liblz4's high-compression compressor (`LZ4_compress_HC`) at `level`, clamped as
/// liblz4 does: below 1 is its default level 9, above 12 is 12. Levels as liblz4 1.10
/// defines them: 1-2 a two-table "mid" matcher, 3-9 hash chains searched 4, 8, ..., 256
/// deep, 10-12 the optimal parser (96, 512 and 16384 attempts). Fails only for inputs of
/// 2 GiB and more.
pub fn lz4hc_compress(input: &[u8], level: i32) -> Result<Vec<u8>> {
    lz4hc::compress(input, Some(level), None)
}

/// The LZ4 block (raw block format, no size prefix) of `input` from liblz4's fast
/// compressor (`LZ4_compress_fast`) with `acceleration`, clamped as liblz4 does: below 1
/// is 1 (the default: LZ4's best ratio in fast mode), above 65537 is 65537; each step up
/// trades some ratio for speed (raft-engine's `compression_level`, RocksDB's negative LZ4
/// levels). Fails only for inputs of 2 GiB and more.
pub fn lz4_compress_fast(input: &[u8], acceleration: i32) -> Result<Vec<u8>> {
    lz4hc::compress_fast(input, acceleration)
}

/// LZ4 blocks decoded by liblz4 (`LZ4_decompress_safe_usingDict`, as RocksDB's
/// `LZ4_Uncompress`) into `Vec` capacity that is not zeroed first.
///
/// Why not `lz4_flex` (which still compresses LZ4's default fast mode): its decoder writes
/// into an initialised `&mut [u8]`, so every data block read from a table cost a zero-fill
/// of its uncompressed size before the decoding wrote each byte again, and its decoding
/// loop runs about twice liblz4's instructions. callgrind, through the Python module: a
/// point get whose 4 KiB data block is not cached spent 13.8k instructions decoding the
/// block with lz4_flex (3.2k of them the zero-fill), 4.5k with liblz4.
/// liblz4 is linked already (LZ4HC), and its safe decoder never reads past the input nor
/// writes past the capacity it is given, and refuses (negative result) a malformed block.
mod lz4_decode {
    use std::os::raw::{c_char, c_int};

    // liblz4 1.10 (lz4.h), built and linked by lz4-sys, which does not declare it.
    extern "C" {
        fn LZ4_decompress_safe_usingDict(
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
            dict_start: *const c_char,
            dict_size: c_int,
        ) -> c_int;
    }

    /// The `n` bytes the LZ4 block `body` decodes to, with `dict` (may be empty) as the
    /// history before its first byte. An error (its text) when the block is malformed,
    /// reaches before its history, or decodes to other than `n` bytes.
    pub(super) fn decompress(body: &[u8], n: usize, dict: &[u8]) -> Result<Vec<u8>, String> {
        let src_size = c_int::try_from(body.len()).map_err(|_| "block too large for LZ4".to_string())?;
        let capacity = c_int::try_from(n).map_err(|_| format!("uncompressed size {n} too large for LZ4"))?;
        let dict_size =
            c_int::try_from(dict.len()).map_err(|_| "dictionary too large for LZ4".to_string())?;
        let mut out: Vec<u8> = Vec::with_capacity(n);
        // SAFETY: `body` is readable for src_size bytes and `dict` for dict_size bytes (a
        // dangling but aligned pointer with size 0 when empty, which liblz4 never reads);
        // `out` has room for `capacity` (= n) bytes. liblz4's safe decoder reads only within
        // the input, writes only within [dst, dst + dst_capacity), and reads back only bytes
        // it has written or the dictionary (a copy reaching further back is refused); it
        // returns how many bytes it wrote from dst on, or a negative number on error.
        let got = unsafe {
            LZ4_decompress_safe_usingDict(
                body.as_ptr().cast::<c_char>(),
                out.as_mut_ptr().cast::<c_char>(),
                src_size,
                capacity,
                dict.as_ptr().cast::<c_char>(),
                dict_size,
            )
        };
        if got < 0 {
            return Err(format!("malformed block (liblz4 error at input byte {})", -(i64::from(got)) - 1));
        }
        if got != capacity {
            return Err(format!("expected {n} bytes, got {got}"));
        }
        // SAFETY: liblz4 wrote every byte of [0, got) and got == n <= capacity.
        unsafe { out.set_len(n) };
        Ok(out)
    }
}

/// LZ4HC through liblz4 (`lz4-sys`), as RocksDB's `LZ4HC_Compress`.
mod lz4hc {
    use std::os::raw::{c_char, c_int, c_void};

    use crate::error::{Error, Result};

    // lz4-sys declares LZ4_compress_HC but not the HC stream functions; liblz4, which it
    // builds and links (lz4hc.c included), exports them. Signatures from lz4hc.h 1.10.
    extern "C" {
        fn LZ4_createStreamHC() -> *mut c_void;
        fn LZ4_freeStreamHC(stream: *mut c_void) -> c_int;
        fn LZ4_resetStreamHC_fast(stream: *mut c_void, level: c_int);
        fn LZ4_loadDictHC(stream: *mut c_void, dict: *const c_char, dict_size: c_int) -> c_int;
        fn LZ4_compress_HC_continue(
            stream: *mut c_void,
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
        ) -> c_int;
    }

    /// Frees an HC stream when dropped.
    struct Stream(*mut c_void);

    impl Drop for Stream {
        fn drop(&mut self) {
            // SAFETY: self.0 came from LZ4_createStreamHC, is non-null, and is freed once.
            unsafe {
                LZ4_freeStreamHC(self.0);
            }
        }
    }

    /// The LZ4 block of `raw` (no size prefix) from liblz4's fast compressor with
    /// `acceleration` (RocksDB's negative LZ4 levels).
    pub(super) fn compress_fast(raw: &[u8], acceleration: i32) -> Result<Vec<u8>> {
        let too_large = || Error::invalid_argument("block too large for LZ4");
        let src_len = c_int::try_from(raw.len()).map_err(|_| too_large())?;
        // SAFETY: LZ4_compressBound only computes a size from its argument.
        let bound = unsafe { lz4_sys::LZ4_compressBound(src_len) };
        if bound <= 0 {
            return Err(too_large());
        }
        let mut out = vec![0u8; bound as usize];
        // SAFETY: raw is valid for src_len bytes, out is writable for bound bytes, and
        // liblz4 writes at most its dst_capacity argument (bound) into it.
        let written = unsafe {
            lz4_sys::LZ4_compress_fast(
                raw.as_ptr().cast::<c_char>(),
                out.as_mut_ptr().cast::<c_char>(),
                src_len,
                bound,
                acceleration,
            )
        };
        if written <= 0 {
            return Err(too_large());
        }
        out.truncate(written as usize);
        Ok(out)
    }

    /// The LZ4 block of `raw` (no size prefix) at `level` (None: liblz4's default, 9), with
    /// `dict` as history when given.
    pub(super) fn compress(raw: &[u8], level: Option<i32>, dict: Option<&[u8]>) -> Result<Vec<u8>> {
        let too_large = || Error::invalid_argument("block too large for LZ4HC");
        let src_len = c_int::try_from(raw.len()).map_err(|_| too_large())?;
        // SAFETY: LZ4_compressBound only computes a size from its argument.
        let bound = unsafe { lz4_sys::LZ4_compressBound(src_len) };
        if bound <= 0 {
            return Err(too_large());
        }
        let mut out = vec![0u8; bound as usize];
        let level = level.unwrap_or(0);
        let written = match dict {
            None => {
                // SAFETY: raw is valid for src_len bytes, out is writable for bound bytes,
                // and liblz4 writes at most dst_capacity bytes into it.
                unsafe {
                    lz4_sys::LZ4_compress_HC(
                        raw.as_ptr().cast::<c_char>(),
                        out.as_mut_ptr().cast::<c_char>(),
                        src_len,
                        bound,
                        level,
                    )
                }
            }
            Some(dict) => {
                // liblz4 keeps at most the last 64 KiB of a dictionary.
                let dict = &dict[dict.len().saturating_sub(64 << 10)..];
                // SAFETY: creating a stream has no preconditions; null is checked below.
                let stream = Stream(unsafe { LZ4_createStreamHC() });
                if stream.0.is_null() {
                    return Err(Error::io(
                        "LZ4HC compress",
                        std::io::Error::new(std::io::ErrorKind::OutOfMemory, "LZ4_createStreamHC failed"),
                    ));
                }
                // SAFETY: stream.0 is a live stream made by LZ4_createStreamHC (which the
                // fast reset requires); dict is valid for its length (<= 64 KiB, fits
                // c_int) and outlives the compression below, which refers to it; raw and
                // out are valid for src_len and bound bytes.
                unsafe {
                    LZ4_resetStreamHC_fast(stream.0, level);
                    LZ4_loadDictHC(stream.0, dict.as_ptr().cast::<c_char>(), dict.len() as c_int);
                    LZ4_compress_HC_continue(
                        stream.0,
                        raw.as_ptr().cast::<c_char>(),
                        out.as_mut_ptr().cast::<c_char>(),
                        src_len,
                        bound,
                    )
                }
            }
        };
        if written <= 0 && !raw.is_empty() {
            return Err(Error::io(
                "LZ4HC compress",
                std::io::Error::other(format!("liblz4 returned {written} for {} bytes", raw.len())),
            ));
        }
        out.truncate(written.max(0) as usize);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Snappy blocks come from one encoder per thread: each block, large or small, after
    /// larger or smaller ones, is the block a fresh encoder writes, and reads back.
    #[test]
    fn snappy_blocks_from_the_thread_encoder_are_a_fresh_encoders() {
        let block = |n: usize, seed: u32| -> Vec<u8> {
            (0..n as u32).map(|i| ((i.wrapping_mul(seed) >> 3) % 23) as u8 + b'a').collect()
        };
        for (n, seed) in [(4096, 7), (100, 3), (3 << 20, 11), (70_000, 5), (0, 1), (4000, 13), (17, 2)] {
            let raw = block(n, seed);
            let ours = compress(CompressionType::Snappy, None, &raw).unwrap();
            let fresh = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            assert_eq!(ours, fresh, "{n} bytes");
            assert_eq!(uncompress(CompressionType::Snappy, &ours).unwrap(), raw, "{n} bytes");
        }
    }

    /// helper cfblob: a blob's compression takes every codec setting and no size limit.
    #[test]
    fn forced_compression_takes_the_codec_settings() {
        let raw: Vec<u8> = (0..4000u32).map(|i| (i % 7) as u8 + b'a').collect();
        let plain = compress_forced(CompressionType::Zstd, &CodecOpts::default(), &raw).unwrap();
        let summed = compress_forced(
            CompressionType::Zstd,
            &CodecOpts { checksum: true, ..CodecOpts::default() },
            &raw,
        )
        .unwrap();
        assert_eq!(summed.len(), plain.len() + 4, "ZSTD's frame checksum");
        assert_eq!(uncompress(CompressionType::Zstd, &summed).unwrap(), raw);
        // Kept whatever its size: a 3-byte value grows.
        let tiny = compress_forced(CompressionType::Zstd, &CodecOpts::default(), b"abc").unwrap();
        assert!(tiny.len() > 3);
        assert_eq!(uncompress(CompressionType::Zstd, &tiny).unwrap(), b"abc");
        // zlib with a strategy other than the default: raw deflate still, read back.
        let z = CodecOpts { strategy: 1, level: Some(1), ..CodecOpts::default() };
        let zb = compress_forced(CompressionType::Zlib, &z, &raw).unwrap();
        assert_eq!(uncompress(CompressionType::Zlib, &zb).unwrap(), raw);
        let bad = CodecOpts { window_bits: 3, strategy: 1, ..CodecOpts::default() };
        let e = compress_forced(CompressionType::Zlib, &bad, &raw).unwrap_err();
        assert!(e.to_string().contains("window_bits 3"), "{e}");
    }

    const ALL: [CompressionType; 7] = [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Zlib,
        CompressionType::BZip2,
        CompressionType::Lz4,
        CompressionType::Lz4hc,
        CompressionType::Zstd,
    ];

    #[test]
    fn every_codec_round_trips() {
        let raw: Vec<u8> =
            (0..20_000u32).flat_map(|i| format!("key{:06}value{}", i % 700, i % 13).into_bytes()).collect();
        for t in ALL {
            let c = compress(t, None, &raw).unwrap();
            if t != CompressionType::None {
                assert!(good_compression_ratio(c.len(), raw.len()), "{t:?}");
            }
            assert_eq!(uncompress(t, &c).unwrap(), raw, "{t:?}");
            assert_eq!(uncompress(t, &compress(t, None, b"").unwrap()).unwrap(), b"", "{t:?}");
            assert_eq!(CompressionType::from_name(t.name()), Some(t));
        }
    }

    #[test]
    fn max_compressed_bytes_per_kb_bounds_what_is_kept() {
        // About 2:1 with every codec: kept at the default 896 and at 600 per KiB, stored
        // raw at 300 per KiB (the compressed size is over the bound).
        let mut x = 0x9e37_79b9u64;
        let raw: Vec<u8> = (0..8192u32)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 2 == 0 {
                    b'a' + (x % 16) as u8
                } else {
                    b'a'
                }
            })
            .collect();
        for t in ALL.into_iter().filter(|t| *t != CompressionType::None) {
            let at = |per_kb| {
                let o = CodecOpts { max_compressed_bytes_per_kb: per_kb, ..CodecOpts::default() };
                let (b, ct) = compress_block_opts(t, &o, &raw, &[]).unwrap();
                assert!(ct == CompressionType::None || b.len() <= o.max_compressed_size(raw.len()));
                (b, ct)
            };
            let (b, ct) = at(896);
            assert_eq!(ct, t, "{t:?} pays 2:1 at 896");
            assert_eq!(uncompress(t, &b).unwrap(), raw);
            let ratio_kb = (b.len() * 1024).div_ceil(raw.len()) as u32;
            assert_eq!(at(ratio_kb + 1).1, t, "{t:?} {ratio_kb}");
            let (b, ct) = at(ratio_kb.saturating_sub(40));
            assert_eq!((ct, &b[..]), (CompressionType::None, &raw[..]), "{t:?} {ratio_kb}");
            // With a dictionary too.
            let o = CodecOpts { max_compressed_bytes_per_kb: 100, ..CodecOpts::default() };
            assert_eq!(compress_with_dict_opts(t, &o, &raw, &raw[..512]).unwrap().1, CompressionType::None);
        }
    }

    #[test]
    fn zstd_checksum_adds_the_frame_checksum() {
        let raw: Vec<u8> =
            (0..4000u32).flat_map(|i| format!("k{:05}v{}", i % 500, i % 7).into_bytes()).collect();
        let plain = compress_block_opts(CompressionType::Zstd, &CodecOpts::default(), &raw, &[]).unwrap().0;
        let o = CodecOpts { checksum: true, ..CodecOpts::default() };
        let (sum, t) = compress_block_opts(CompressionType::Zstd, &o, &raw, &[]).unwrap();
        assert_eq!(t, CompressionType::Zstd);
        // Four bytes more: the XXH64-based content checksum; the frame header's descriptor
        // byte (after the varint prefix and the 4-byte magic) has its checksum bit (0x04) set.
        assert_eq!(sum.len(), plain.len() + 4);
        let prefix = decode_varint32(&sum).unwrap().1;
        assert_eq!(sum[prefix + 4] & 0x04, 0x04);
        assert_eq!(plain[prefix + 4] & 0x04, 0);
        assert_eq!(uncompress(t, &sum).unwrap(), raw);
        // A flipped content byte the decoder would otherwise accept fails the checksum.
        let mut bad = sum.clone();
        let at = bad.len() - 1;
        bad[at] ^= 0xff;
        assert!(uncompress(t, &bad).is_err());
        // With a dictionary as well.
        let (d, _) = compress_with_dict_opts(CompressionType::Zstd, &o, &raw, &raw[..1000]).unwrap();
        let (dn, _) =
            compress_with_dict_opts(CompressionType::Zstd, &CodecOpts::default(), &raw, &raw[..1000])
                .unwrap();
        assert_eq!(d.len(), dn.len() + 4);
        assert_eq!(uncompress_with_dict(CompressionType::Zstd, &d, &raw[..1000]).unwrap(), raw);
    }

    #[test]
    fn incompressible_data_is_stored_raw() {
        let mut x = 0x1234_5678u64;
        let raw: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for t in ALL {
            let (stored, ty) = compress_block(t, None, &raw).unwrap();
            assert_eq!(ty, CompressionType::None, "{t:?}");
            assert_eq!(stored, raw);
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let raw = b"hello hello hello hello hello hello hello hello".repeat(20);
        for t in ALL.into_iter().skip(1) {
            let c = compress(t, None, &raw).unwrap();
            for cut in [0, 1, c.len() / 2, c.len() - 1] {
                let _ = uncompress(t, &c[..cut]);
            }
            let mut flipped = c.clone();
            for i in 0..flipped.len() {
                flipped[i] ^= 0x55;
                if let Ok(v) = uncompress(t, &flipped) {
                    assert!(v.len() <= MAX_UNCOMPRESSED);
                }
                flipped[i] ^= 0x55;
            }
        }
        assert_eq!(
            uncompress(CompressionType::Xpress, b"x").unwrap_err().kind(),
            crate::ErrorKind::NotSupported
        );
        // A bzip2 block whose size prefix promises more than the stream holds is corrupt.
        let mut short = compress(CompressionType::BZip2, None, b"abcabcabc").unwrap();
        short[0] += 1;
        assert_eq!(
            uncompress(CompressionType::BZip2, &short).unwrap_err().kind(),
            crate::ErrorKind::Corruption
        );
        assert!(compress(CompressionType::Xpress, None, b"x").unwrap_err().to_string().contains("Xpress"));
    }

    #[test]
    fn size_prefix_is_bounded_by_the_codec_expansion() {
        // The most compressible input still decodes under the bound...
        let zeros = vec![0u8; 4 << 20];
        for t in ALL.into_iter().skip(1) {
            let c = compress(t, None, &zeros).unwrap();
            assert_eq!(uncompress(t, &c).unwrap(), zeros, "{t:?}");
        }
        // ...while a 1 GiB prefix on a few bytes is refused before any allocation.
        for t in [CompressionType::Lz4, CompressionType::Zlib, CompressionType::Zstd] {
            let mut data = Vec::new();
            crate::coding::put_varint32(&mut data, 1 << 30);
            data.extend_from_slice(&[0u8; 10]);
            let e = uncompress(t, &data).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Corruption, "{t:?}");
            assert!(e.to_string().contains("too large"), "{e}");
        }
        let mut snappy = Vec::new();
        crate::coding::put_varint32(&mut snappy, 1 << 29);
        snappy.extend_from_slice(&[0u8; 10]);
        assert!(uncompress(CompressionType::Snappy, &snappy).unwrap_err().to_string().contains("too large"));
    }

    #[test]
    fn dictionary_decompression() {
        let dict: Vec<u8> = b"common prefix of every value; ".repeat(40);
        let raw: Vec<u8> = b"common prefix of every value; then something else".repeat(3);
        let mut z = Vec::new();
        put_varint32(&mut z, raw.len() as u32);
        z.extend(zstd::bulk::Compressor::with_dictionary(3, &dict).unwrap().compress(&raw).unwrap());
        assert_eq!(uncompress_with_dict(CompressionType::Zstd, &z, &dict).unwrap(), raw);
        let mut l = Vec::new();
        put_varint32(&mut l, raw.len() as u32);
        l.extend(lz4_flex::block::compress_with_dict(&raw, &dict));
        assert_eq!(uncompress_with_dict(CompressionType::Lz4, &l, &dict).unwrap(), raw);
        // Without the dictionary the LZ4 block refers to bytes it does not have.
        assert!(uncompress(CompressionType::Lz4, &l).is_err());
        // LZ4HC with a dictionary (LZ4_loadDictHC + LZ4_compress_HC_continue) reads back
        // with it, and only with it.
        let (h, ty) = compress_block_with_dict(CompressionType::Lz4hc, None, &raw, &dict).unwrap();
        assert_eq!(ty, CompressionType::Lz4hc);
        assert_eq!(uncompress_with_dict(CompressionType::Lz4hc, &h, &dict).unwrap(), raw);
        assert!(uncompress(CompressionType::Lz4hc, &h).map_or(true, |v| v != raw));
        // zlib with a preset dictionary (deflateSetDictionary / inflateSetDictionary).
        let (zl, ty) = compress_block_with_dict(CompressionType::Zlib, None, &raw, &dict).unwrap();
        assert_eq!(ty, CompressionType::Zlib);
        assert_eq!(uncompress_with_dict(CompressionType::Zlib, &zl, &dict).unwrap(), raw);
        let (plain, _) = compress_block(CompressionType::Zlib, None, &raw).unwrap();
        assert!(zl.len() < plain.len(), "the dictionary pays: {} vs {}", zl.len(), plain.len());
        assert!(uncompress(CompressionType::Zlib, &zl).map_or(true, |v| v != raw));
        let e = uncompress_with_dict(CompressionType::Zlib, b"\x01x", &dict).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
    }

    #[test]
    fn zlib_window_bits_strategy_and_level_as_deflate_init2() {
        let raw: Vec<u8> =
            (0..3000u32).flat_map(|i| format!("key{:06}value{}", i % 300, i % 11).into_bytes()).collect();
        let block = |window_bits, strategy, level| {
            compress_block_opts(
                CompressionType::Zlib,
                &CodecOpts { level, window_bits, strategy, ..CodecOpts::default() },
                &raw,
                &[],
            )
            .unwrap()
        };
        // Raw deflate at every window size and strategy: read back by the unchanged reader.
        let mut sizes = Vec::new();
        for w in -15..=-9 {
            for st in 0..=4 {
                let (b, t) = block(w, st, None);
                assert_eq!(t, CompressionType::Zlib, "window_bits {w} strategy {st}");
                assert_eq!(uncompress(t, &b).unwrap(), raw, "window_bits {w} strategy {st}");
                sizes.push((w, st, b.len()));
            }
        }
        // The strategies write different streams (Huffman only: no matches, much larger).
        let at = |w, st| sizes.iter().find(|x| x.0 == w && x.1 == st).map(|x| x.2).unwrap();
        assert!(at(-14, 2) > 2 * at(-14, 0), "{sizes:?}");
        assert_ne!(block(-14, 4, None).0, block(-14, 0, None).0);
        assert_ne!(block(-9, 0, None).0, block(-15, 0, None).0);
        // Positive window bits: a zlib header (CMF 0x78 for a 32 KiB window), 24+: gzip,
        // as RocksDB writes them.
        let (z, t) = block(15, 0, None);
        assert_eq!((t, z[3]), (CompressionType::Zlib, 0x78));
        let (g, _) = block(31, 0, None);
        assert_eq!(&g[3..5], &[0x1f, 0x8b]);
        // RocksDB's reader inflates raw deflate only: such blocks are corrupt to it and to Shale.
        for b in [&z, &g] {
            assert_eq!(uncompress(t, b).unwrap_err().kind(), crate::ErrorKind::Corruption);
        }
        // Settings deflateInit2 refuses: the block is stored uncompressed ("bypassed").
        for (w, st, level) in
            [(-8, 0, None), (-16, 0, None), (16, 0, None), (-14, 5, None), (-14, 0, Some(10))]
        {
            assert_eq!(block(w, st, level), (raw.clone(), CompressionType::None), "{w} {st} {level:?}");
        }
        // Levels 0..=9 and -1 (zlib's default, 6).
        assert_eq!(block(-14, 0, Some(-1)), block(-14, 0, Some(6)));
        assert_eq!(block(-14, 0, None), block(-14, 0, Some(6)));
        // Level 0 stores: larger than 7/8 of the block, so rejected.
        assert_eq!(block(-14, 0, Some(0)).1, CompressionType::None);
    }

    #[test]
    fn lz4hc_is_real_high_compression() {
        // Text with long-range repeats: LZ4HC's optimal parsing finds more of them.
        let mut x = 7u32;
        let raw: Vec<u8> = (0..4000u32)
            .flat_map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                format!("user{:05}|{}|field{}|", (x >> 16) % 900, i % 17, (x >> 8) % 37).into_bytes()
            })
            .collect();
        let fast = compress(CompressionType::Lz4, None, &raw).unwrap();
        let hc = compress(CompressionType::Lz4hc, None, &raw).unwrap();
        assert!(hc.len() < fast.len(), "LZ4HC {} bytes, LZ4 {} bytes", hc.len(), fast.len());
        assert_eq!(uncompress(CompressionType::Lz4hc, &hc).unwrap(), raw);
        // The formats are one: LZ4's decoder reads LZ4HC's blocks.
        assert_eq!(uncompress(CompressionType::Lz4, &hc).unwrap(), raw);
        // Levels are honoured: level 12 is at least as small as level 1.
        let l1 = compress(CompressionType::Lz4hc, Some(1), &raw).unwrap();
        let l12 = compress(CompressionType::Lz4hc, Some(12), &raw).unwrap();
        assert!(l12.len() <= l1.len(), "{} > {}", l12.len(), l1.len());
        assert_eq!(uncompress(CompressionType::Lz4hc, &l12).unwrap(), raw);
        // RocksDB 11.8's unified levels: a positive LZ4 level is LZ4HC's compressor, a
        // negative one (either type) the fast compressor with that acceleration.
        assert_eq!(compress(CompressionType::Lz4, Some(9), &raw).unwrap(), hc);
        let accel = compress(CompressionType::Lz4, Some(-40), &raw).unwrap();
        assert!(accel.len() > fast.len(), "acceleration 40: {} bytes, 1: {}", accel.len(), fast.len());
        assert_eq!(compress(CompressionType::Lz4hc, Some(-40), &raw).unwrap(), accel);
        assert_eq!(uncompress(CompressionType::Lz4, &accel).unwrap(), raw);
    }

    /// Text-like records with repeats near and far: what HC's deeper search pays on.
    fn records(n: u32) -> Vec<u8> {
        let mut x = 11u32;
        (0..n)
            .flat_map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                format!(
                    "{{\"user\":{},\"seq\":{i},\"tag\":\"t{}\",\"ok\":true}}\n",
                    (x >> 16) % 500,
                    (x >> 8) % 29
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn lz4hc_api_round_trips_through_lz4_flex() {
        let raw = records(3000);
        for level in 1..=12 {
            let c = lz4hc_compress(&raw, level).unwrap();
            let mut out = vec![0u8; raw.len()];
            let n = lz4_flex::block::decompress_into(&c, &mut out).unwrap();
            assert_eq!(&out[..n], &raw[..], "level {level}");
        }
        for accel in [1, 2, 17, 65537] {
            let c = lz4_compress_fast(&raw, accel).unwrap();
            assert_eq!(lz4_flex::block::decompress(&c, raw.len()).unwrap(), raw, "acceleration {accel}");
        }
        // An empty input is one empty-literals token, as liblz4 writes it.
        assert_eq!(lz4hc_compress(b"", 9).unwrap(), vec![0]);
        assert_eq!(lz4_compress_fast(b"", 1).unwrap(), vec![0]);
        assert_eq!(lz4_flex::block::decompress(&[0], 0).unwrap(), b"");
        // Short and incompressible inputs round trip too.
        let mut x = 0x9e37_79b9u32;
        let noise: Vec<u8> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for input in [&b"a"[..], b"abcabcabcabcab", &noise[..]] {
            let c = lz4hc_compress(input, 12).unwrap();
            assert_eq!(lz4_flex::block::decompress(&c, input.len()).unwrap(), input);
        }
    }

    #[test]
    fn lz4hc_levels_as_liblz4_documents_them() {
        let raw = records(4000);
        let fast = lz4_compress_fast(&raw, 1).unwrap();
        let size = |l: i32| lz4hc_compress(&raw, l).unwrap().len();
        let sizes: Vec<usize> = (1..=12).map(size).collect();
        // Every HC level beats the fast mode on compressible data.
        for (i, s) in sizes.iter().enumerate() {
            assert!(*s < fast.len(), "level {}: {s} bytes, fast mode {}", i + 1, fast.len());
        }
        // Levels 1-2 share one matcher (the same parameters in liblz4's table), so do their outputs.
        assert_eq!(lz4hc_compress(&raw, 1).unwrap(), lz4hc_compress(&raw, 2).unwrap());
        // Deeper hash-chain search (3..=9) and then the optimal parser (10..=12) never lose.
        for l in 3..12 {
            assert!(
                sizes[l] <= sizes[l - 1],
                "level {} ({}) > level {} ({})",
                l + 1,
                sizes[l],
                l,
                sizes[l - 1]
            );
        }
        assert!(sizes[11] < sizes[2], "level 12 {} not below level 3 {}", sizes[11], sizes[2]);
        // Out-of-range levels are clamped as liblz4 clamps them: below 1 is the default 9,
        // above 12 is 12.
        let l9 = lz4hc_compress(&raw, 9).unwrap();
        let l12 = lz4hc_compress(&raw, 12).unwrap();
        for l in [0, -1, i32::MIN] {
            assert_eq!(lz4hc_compress(&raw, l).unwrap(), l9, "level {l}");
        }
        for l in [13, 100, i32::MAX] {
            assert_eq!(lz4hc_compress(&raw, l).unwrap(), l12, "level {l}");
        }
    }

    #[test]
    fn lz4_acceleration_trades_ratio_and_is_clamped() {
        let raw = records(4000);
        let a1 = lz4_compress_fast(&raw, 1).unwrap();
        let a64 = lz4_compress_fast(&raw, 64).unwrap();
        assert!(a64.len() > a1.len(), "acceleration 64: {} bytes, 1: {}", a64.len(), a1.len());
        // Below 1 is the default (1); above 65537 is 65537.
        for a in [0, -5, i32::MIN] {
            assert_eq!(lz4_compress_fast(&raw, a).unwrap(), a1, "acceleration {a}");
        }
        let max = lz4_compress_fast(&raw, 65537).unwrap();
        assert_eq!(lz4_compress_fast(&raw, i32::MAX).unwrap(), max);
        // The table codec path uses the same compressor for negative LZ4 levels.
        let mut prefixed = Vec::new();
        put_varint32(&mut prefixed, raw.len() as u32);
        prefixed.extend_from_slice(&a64);
        assert_eq!(compress(CompressionType::Lz4, Some(-64), &raw).unwrap(), prefixed);
    }

    /// Pieces repeated a few times each: matches of every offset and length class.
    fn lz4_compressible() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        proptest::collection::vec((proptest::collection::vec(any::<u8>(), 1..60), 1usize..40), 0..40)
            .prop_map(|parts| {
                let mut v = Vec::new();
                for (piece, times) in parts {
                    for _ in 0..times {
                        v.extend_from_slice(&piece);
                    }
                }
                v
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// liblz4's decoder reads what lz4_flex and liblz4 (fast and HC) write, with and
        /// without a dictionary.
        #[test]
        fn lz4_blocks_decode_to_what_was_compressed(
            raw in lz4_compressible(),
            dict in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        ) {
            for block in [lz4_flex::block::compress(&raw), lz4hc_compress(&raw, 9).unwrap(), lz4_compress_fast(&raw, 4).unwrap()] {
                proptest::prop_assert_eq!(lz4_decode::decompress(&block, raw.len(), &[]).unwrap(), raw.clone());
            }
            let mut whole = dict.clone();
            whole.extend_from_slice(&raw);
            let with_dict = lz4_flex::block::compress_with_dict(&raw, &dict);
            proptest::prop_assert_eq!(lz4_decode::decompress(&with_dict, raw.len(), &dict).unwrap(), raw.clone());
            // The size prefix must match what the block holds, one byte short or long.
            proptest::prop_assert!(lz4_decode::decompress(&with_dict, raw.len() + 1, &dict).is_err());
            if !raw.is_empty() {
                proptest::prop_assert!(lz4_decode::decompress(&with_dict, raw.len() - 1, &dict).is_err());
            }
        }

        /// A damaged or cut block is refused, or decodes to the bytes lz4_flex's decoder
        /// makes of it when that accepts it too (the format leaves no choice in what an
        /// accepted block means); a cut block never decodes to the full length.
        #[test]
        fn damaged_lz4_blocks_are_refused_or_decoded_as_lz4_flex_does(
            raw in lz4_compressible(),
            flips in proptest::collection::vec((proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>()), 0..4),
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            truncate in proptest::prelude::any::<bool>(),
        ) {
            let mut block = lz4_flex::block::compress(&raw);
            for (at, b) in flips {
                let i = at.index(block.len());
                block[i] = b;
            }
            let ours = if truncate {
                let short = &block[..cut.index(block.len())];
                let r = lz4_decode::decompress(short, raw.len(), &[]);
                proptest::prop_assert!(r.is_err() || raw.is_empty(), "a cut block decoded");
                r
            } else {
                lz4_decode::decompress(&block, raw.len(), &[])
            };
            if let (Ok(a), Ok(b)) = (&ours, lz4_flex::block::decompress(&block, raw.len())) {
                if !truncate {
                    proptest::prop_assert_eq!(a, &b);
                }
            }
        }

        /// Arbitrary bytes never make the decoder write past its output or panic: either
        /// refused or exactly the length asked for.
        #[test]
        fn arbitrary_bytes_as_lz4_blocks(
            block in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            n in 0usize..2000,
        ) {
            if let Ok(v) = lz4_decode::decompress(&block, n, &[]) {
                proptest::prop_assert_eq!(v.len(), n);
            }
        }
    }

    #[test]
    fn lz4_decode_errors_name_the_problem() {
        // A literal run announced longer than the input holds.
        let e = uncompress(CompressionType::Lz4, &[20, 0xf0, 7]).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        assert!(e.to_string().contains("malformed block"), "{e}");
        // A well-formed block of 5 bytes under a prefix claiming 6.
        let mut l = vec![6];
        l.extend(lz4_flex::block::compress(b"hello"));
        let e = uncompress(CompressionType::Lz4, &l).unwrap_err();
        assert!(
            e.to_string().contains("malformed block") || e.to_string().contains("expected 6 bytes"),
            "{e}"
        );
        // A match reaching before the output's start (and no dictionary).
        let mut far = vec![12];
        far.extend([0x14, b'a', 0x40, 0x00, 0x10, b'b', b'c', b'd', b'e', b'f']);
        assert!(uncompress(CompressionType::Lz4, &far).is_err());
        // Empty input to empty output: one token with no literals.
        assert_eq!(uncompress(CompressionType::Lz4, &[0, 0]).unwrap(), b"");
    }
}
