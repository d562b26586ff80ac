//! The block-based table's framing: block handles, the per-block trailer and the footer.
//!
//! ```text
//! block handle   : offset varint64 | size varint64            (at most 20 bytes)
//! block on disk  : contents (size bytes) | type u8 | checksum fixed32
//!                  checksum covers contents + type byte; CRC32C is masked
//! footer (v1..5) : checksum type u8
//!                  | metaindex handle | index handle | zero padding   (40 bytes in all)
//!                  | format_version fixed32 | magic fixed64 0x88e241b785f4cff7   = 53 bytes
//! footer (v6, 7) : checksum type u8
//!                  | extended magic 3e 00 7a 00
//!                  | footer checksum fixed32       (over all 53 bytes with this field zeroed,
//!                                                   plus the context modifier of the footer offset)
//!                  | base context checksum fixed32 (random, never 0)
//!                  | metaindex size fixed32        (the metaindex block ends right before the footer)
//!                  | 16 reserved bytes (ignored) | 8 reserved bytes (must be 0)
//!                  | format_version fixed32 | magic fixed64 0x88e241b785f4cff7   = 53 bytes
//! legacy footer  : metaindex handle | index handle | zero padding (40 bytes)
//!                  | magic fixed64 0xdb4775248b80fb57                              = 48 bytes
//! ```
//! A legacy footer means format_version 0 with CRC32C checksums.
//!
//! From format_version 6 on, every block checksum (and the footer's) has a "context
//! modifier" added (wrapping): `base ^ (low32(offset) + high32(offset))`, where `base` is the
//! footer's base context checksum and `offset` the block's offset in the file. A block copied
//! to another file (another base) or another offset therefore fails its checksum. The index
//! block's handle is no longer in the footer: the metaindex names it ("rocksdb.index").

use crate::coding::{decode_fixed32, decode_fixed64, put_fixed32, put_fixed64, put_varint64, Decoder};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;

use super::compression::uncompress_with_dict;
pub use super::compression::CompressionType;

/// Size of the trailer after every block: compression type (1) + checksum (4).
pub const BLOCK_TRAILER_SIZE: usize = 5;
pub const BLOCK_BASED_TABLE_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
pub const LEGACY_BLOCK_BASED_TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Longest encoding of a block handle (two varint64s).
pub const MAX_HANDLE_LEN: usize = 20;
pub const FOOTER_LEN: usize = 1 + 2 * MAX_HANDLE_LEN + 4 + 8;
pub const LEGACY_FOOTER_LEN: usize = 2 * MAX_HANDLE_LEN + 8;
/// The newest format_version Shale reads and writes.
pub const MAX_FORMAT_VERSION: u32 = 7;
/// Part of a format_version >= 6 footer, where older footers start the metaindex handle.
pub const EXTENDED_MAGIC: [u8; 4] = [0x3e, 0x00, 0x7a, 0x00];

/// True when blocks of this format_version carry context checksums (and the index handle
/// lives in the metaindex, not the footer).
pub fn uses_context_checksum(format_version: u32) -> bool {
    format_version >= 6
}

/// RocksDB's `ChecksumModifierForContext`: what is added to a block checksum at `offset`
/// in a file whose footer holds `base` (0 = no context, format_version < 6).
pub fn checksum_modifier(base: u32, offset: u64) -> u32 {
    if base == 0 {
        return 0;
    }
    base ^ (offset as u32).wrapping_add((offset >> 32) as u32)
}

/// How a table's blocks are checksummed: the kind its footer names and, for
/// format_version >= 6, the base context checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockChecksum {
    pub kind: ChecksumType,
    pub base_context: u32,
}

impl From<ChecksumType> for BlockChecksum {
    fn from(kind: ChecksumType) -> Self {
        BlockChecksum { kind, base_context: 0 }
    }
}

impl BlockChecksum {
    /// The checksum stored in the trailer of a block at `offset`.
    pub fn compute(&self, offset: u64, data: &[u8], last_byte: u8) -> u32 {
        block_checksum(self.kind, data, last_byte).wrapping_add(checksum_modifier(self.base_context, offset))
    }
}

/// Where a block lives in the file; `size` excludes the 5-byte trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    pub fn new(offset: u64, size: u64) -> Self {
        BlockHandle { offset, size }
    }

    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    pub fn encoded(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(MAX_HANDLE_LEN);
        self.encode_to(&mut v);
        v
    }

    /// Decodes a handle from the front of `d`.
    pub fn decode_from(d: &mut Decoder<'_>) -> Option<BlockHandle> {
        let offset = d.varint64()?;
        let size = d.varint64()?;
        Some(BlockHandle { offset, size })
    }

    /// Decodes a handle that must be the whole of `src`'s prefix; Corruption otherwise.
    pub fn decode(src: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode_from(&mut Decoder::new(src)).ok_or_else(|| Error::corruption("bad block handle"))
    }
}

/// The checksum kinds a footer may name (RocksDB's `ChecksumType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ChecksumType {
    None = 0,
    Crc32c = 1,
    XxHash = 2,
    XxHash64 = 3,
    Xxh3 = 4,
}

impl ChecksumType {
    pub fn from_u8(b: u8) -> Option<ChecksumType> {
        Some(match b {
            0 => ChecksumType::None,
            1 => ChecksumType::Crc32c,
            2 => ChecksumType::XxHash,
            3 => ChecksumType::XxHash64,
            4 => ChecksumType::Xxh3,
            _ => return None,
        })
    }
}

pub use shale_base::checksum::{mask_crc, unmask_crc};

/// The checksum stored in a block trailer: computed over `data` followed by `last_byte`
/// (the compression type).
pub fn block_checksum(kind: ChecksumType, data: &[u8], last_byte: u8) -> u32 {
    match kind {
        ChecksumType::None => 0,
        ChecksumType::Crc32c => {
            let crc = crc32c::crc32c_append(crc32c::crc32c(data), &[last_byte]);
            mask_crc(crc)
        }
        ChecksumType::XxHash => {
            let mut h = xxhash_rust::xxh32::Xxh32::new(0);
            h.update(data);
            h.update(&[last_byte]);
            h.digest()
        }
        ChecksumType::XxHash64 => {
            let mut h = xxhash_rust::xxh64::Xxh64::new(0);
            h.update(data);
            h.update(&[last_byte]);
            h.digest() as u32
        }
        ChecksumType::Xxh3 => {
            // XXH3 of the contents only, with the type byte folded in by a multiply-xor.
            let v = xxhash_rust::xxh3::xxh3_64(data) as u32;
            v ^ (last_byte as u32).wrapping_mul(0x6b90_83d9)
        }
    }
}

/// The table footer: where the metaindex and index blocks are, and how blocks are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    pub checksum: ChecksumType,
    pub metaindex_handle: BlockHandle,
    pub index_handle: BlockHandle,
    /// 0 for a legacy footer.
    pub format_version: u32,
    /// format_version >= 6: the base of every block's context checksum (never 0); 0 before.
    pub base_context_checksum: u32,
}

impl Footer {
    /// How this table's blocks are checksummed.
    pub fn block_checksum(&self) -> BlockChecksum {
        BlockChecksum { kind: self.checksum, base_context: self.base_context_checksum }
    }

    /// Encodes a format_version >= 1 footer (53 bytes) that starts at `footer_offset` in the
    /// file. For format_version >= 6 the metaindex block must end right before the footer
    /// and `base_context_checksum` must not be 0; the index handle is not stored.
    pub fn encode(&self, footer_offset: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        out.push(self.checksum as u8);
        if uses_context_checksum(self.format_version) {
            out.extend_from_slice(&EXTENDED_MAGIC);
            put_fixed32(&mut out, 0); // the footer checksum, filled in below
            put_fixed32(&mut out, self.base_context_checksum);
            put_fixed32(&mut out, self.metaindex_handle.size as u32);
            out.resize(1 + 2 * MAX_HANDLE_LEN, 0);
            put_fixed32(&mut out, self.format_version);
            put_fixed64(&mut out, BLOCK_BASED_TABLE_MAGIC);
            let sum = footer_checksum(self.checksum, &out)
                .wrapping_add(checksum_modifier(self.base_context_checksum, footer_offset));
            out[5..9].copy_from_slice(&sum.to_le_bytes());
            return out;
        }
        self.metaindex_handle.encode_to(&mut out);
        self.index_handle.encode_to(&mut out);
        out.resize(1 + 2 * MAX_HANDLE_LEN, 0);
        put_fixed32(&mut out, self.format_version);
        put_fixed64(&mut out, BLOCK_BASED_TABLE_MAGIC);
        out
    }

    /// Decodes the footer from the file's tail: `tail` is the last up-to-53 bytes and starts
    /// at `tail_offset` in the file (format_version >= 6 footers are checked against it).
    /// For format_version >= 6, `index_handle` is left null: the metaindex names the index.
    pub fn decode(tail: &[u8], tail_offset: u64, file_name: &str) -> Result<Footer> {
        if tail.len() < LEGACY_FOOTER_LEN {
            return Err(Error::corruption(format!(
                "file is too short ({} bytes) to be an sstable: {file_name}",
                tail.len()
            )));
        }
        let magic = decode_fixed64(&tail[tail.len() - 8..]);
        let bad_handles = || Error::corruption(format!("bad block handle in footer of {file_name}"));
        if magic == LEGACY_BLOCK_BASED_TABLE_MAGIC {
            let part = &tail[tail.len() - LEGACY_FOOTER_LEN..];
            let mut d = Decoder::new(part);
            let metaindex_handle = BlockHandle::decode_from(&mut d).ok_or_else(bad_handles)?;
            let index_handle = BlockHandle::decode_from(&mut d).ok_or_else(bad_handles)?;
            return Ok(Footer {
                checksum: ChecksumType::Crc32c,
                metaindex_handle,
                index_handle,
                format_version: 0,
                base_context_checksum: 0,
            });
        }
        if magic != BLOCK_BASED_TABLE_MAGIC {
            return Err(Error::corruption(format!(
                "Bad table magic number: found {magic:#x}, not a block-based table: {file_name}"
            )));
        }
        if tail.len() < FOOTER_LEN {
            return Err(Error::corruption(format!("Input is too short to be an SST file: {file_name}")));
        }
        let footer_offset = tail_offset + (tail.len() - FOOTER_LEN) as u64;
        let part = &tail[tail.len() - FOOTER_LEN..];
        let format_version = decode_fixed32(&part[FOOTER_LEN - 12..]);
        if format_version == 0 || format_version > MAX_FORMAT_VERSION {
            return Err(Error::not_supported(format!(
                "unsupported format_version {format_version} in {file_name} (Shale reads 0..={MAX_FORMAT_VERSION})"
            )));
        }
        let checksum = ChecksumType::from_u8(part[0]).ok_or_else(|| {
            Error::corruption(format!("Corrupt or unsupported checksum type {} in {file_name}", part[0]))
        })?;
        if uses_context_checksum(format_version) {
            return Self::decode_v6(part, footer_offset, checksum, format_version, file_name);
        }
        let mut d = Decoder::new(&part[1..]);
        let metaindex_handle = BlockHandle::decode_from(&mut d).ok_or_else(bad_handles)?;
        let index_handle = BlockHandle::decode_from(&mut d).ok_or_else(bad_handles)?;
        Ok(Footer { checksum, metaindex_handle, index_handle, format_version, base_context_checksum: 0 })
    }

    /// The format_version >= 6 part of [`Footer::decode`]: `part` is the 53-byte footer at
    /// `footer_offset`.
    fn decode_v6(
        part: &[u8],
        footer_offset: u64,
        checksum: ChecksumType,
        format_version: u32,
        file_name: &str,
    ) -> Result<Footer> {
        if part[1..5] != EXTENDED_MAGIC {
            return Err(Error::corruption(format!(
                "Bad extended magic number: 0x{:02X}{:02X}{:02X}{:02X} in {file_name} offset {footer_offset}",
                part[1], part[2], part[3], part[4]
            )));
        }
        let stored = decode_fixed32(&part[5..]);
        let base_context_checksum = decode_fixed32(&part[9..]);
        if base_context_checksum == 0 {
            return Err(Error::corruption(format!(
                "Invalid base context checksum in {file_name} offset {footer_offset}"
            )));
        }
        if checksum != ChecksumType::None {
            let mut copy = part.to_vec();
            copy[5..9].fill(0);
            let computed = footer_checksum(checksum, &copy)
                .wrapping_add(checksum_modifier(base_context_checksum, footer_offset));
            if computed != stored {
                return Err(Error::corruption(format!(
                    "Footer at {footer_offset} checksum mismatch in {file_name}"
                )));
            }
        }
        if decode_fixed64(&part[33..41]) != 0 {
            return Err(Error::not_supported(format!(
                "File uses a future feature not supported in this version: {file_name}"
            )));
        }
        let metaindex_size = u64::from(decode_fixed32(&part[13..]));
        let metaindex_end = footer_offset.checked_sub(BLOCK_TRAILER_SIZE as u64).ok_or_else(|| {
            Error::corruption(format!(
                "footer at {footer_offset} leaves no room for a metaindex: {file_name}"
            ))
        })?;
        let metaindex_offset = metaindex_end.checked_sub(metaindex_size).ok_or_else(|| {
            Error::corruption(format!(
                "metaindex size {metaindex_size} larger than the file in {file_name} offset {footer_offset}"
            ))
        })?;
        Ok(Footer {
            checksum,
            metaindex_handle: BlockHandle::new(metaindex_offset, metaindex_size),
            index_handle: BlockHandle::default(),
            format_version,
            base_context_checksum,
        })
    }
}

/// RocksDB's `ComputeBuiltinChecksum` over a whole buffer (the footer's checksum): the
/// block checksum of all but the last byte, extended by the last byte.
fn footer_checksum(kind: ChecksumType, data: &[u8]) -> u32 {
    match data.split_last() {
        Some((&last, rest)) => block_checksum(kind, rest, last),
        None => 0,
    }
}

/// Reads the footer of a table file of `file_size` bytes.
pub fn read_footer(file: &dyn RandomAccessFile, file_size: u64, file_name: &str) -> Result<Footer> {
    let n = (FOOTER_LEN as u64).min(file_size) as usize;
    let mut buf = vec![0u8; n];
    read_exact_at(file, file_size - n as u64, &mut buf, file_name)?;
    Footer::decode(&buf, file_size - n as u64, file_name)
}

/// Reads exactly `buf.len()` bytes at `offset`, failing with Corruption on a short read.
pub fn read_exact_at(
    file: &dyn RandomAccessFile,
    offset: u64,
    buf: &mut [u8],
    file_name: &str,
) -> Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let n = file.read_at(offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            return Err(Error::corruption(format!(
                "truncated block read from {file_name} offset {offset}, expected {} bytes, got {done}",
                buf.len()
            )));
        }
        done += n;
    }
    Ok(())
}

/// Reads the block at `handle` with its trailer, checks the CRC32C checksum (when
/// `verify_checksum`) and returns the uncompressed contents.
pub fn read_block(
    file: &dyn RandomAccessFile,
    handle: BlockHandle,
    verify_checksum: bool,
    file_name: &str,
) -> Result<Vec<u8>> {
    read_block_with(file, handle, ChecksumType::Crc32c, verify_checksum, file_name)
}

/// [`read_block`] for a file whose footer names `checksum` (a kind, or a kind with a base
/// context checksum for format_version >= 6).
pub fn read_block_with(
    file: &dyn RandomAccessFile,
    handle: BlockHandle,
    checksum: impl Into<BlockChecksum>,
    verify_checksum: bool,
    file_name: &str,
) -> Result<Vec<u8>> {
    read_block_with_dict(file, handle, checksum, verify_checksum, file_name, &[])
}

/// `read_block_with` for a data block, decompressed with the table's compression
/// dictionary (empty when the table has none).
pub fn read_block_with_dict(
    file: &dyn RandomAccessFile,
    handle: BlockHandle,
    checksum: impl Into<BlockChecksum>,
    verify_checksum: bool,
    file_name: &str,
    dict: &[u8],
) -> Result<Vec<u8>> {
    let size = usize::try_from(handle.size).ok().filter(|&s| s <= (1usize << 31)).ok_or_else(|| {
        Error::corruption(format!(
            "block size {} too large in {file_name} offset {}",
            handle.size, handle.offset
        ))
    })?;
    let checksum: BlockChecksum = checksum.into();
    let len = size + BLOCK_TRAILER_SIZE;
    let verify = (verify_checksum && checksum.kind != ChecksumType::None).then_some(checksum);
    // The perf context's block reads, as RocksDB's BlockFetcher counts every block read
    // from a file (data, index, filter, meta), trailer included.
    crate::perf::count(crate::perf::Field::BlockReadCount, 1);
    crate::perf::count(crate::perf::Field::BlockReadByte, len as u64);
    // A block up to SCRATCH_MAX is read into this thread's scratch buffer, which is kept:
    // a compressed block is uncompressed from there, so no buffer is allocated and
    // zero-filled for the raw bytes of each read (a profile of readrandom with Snappy put
    // the zero-filling of read buffers among its largest costs); an uncompressed one is
    // copied out at its exact size. Larger blocks get a buffer of their own.
    const SCRATCH_MAX: usize = 256 << 10;
    // A file that holds the bytes in memory already (a mapping, a direct read's aligned
    // buffer) lends them: checked and uncompressed where they lie, not copied first.
    let mut lent: Option<Result<Vec<u8>>> = None;
    let mut timer = Some(crate::perf::PerfTimer::new(crate::perf::Field::BlockReadTime));
    let was_lent = file.read_lent(handle.offset, len, &mut |raw| {
        drop(timer.take());
        lent = Some(if raw.len() < len {
            Err(Error::corruption(format!(
                "truncated block read from {file_name} offset {}, expected {len} bytes, got {}",
                handle.offset,
                raw.len()
            )))
        } else {
            decode_raw_block(handle, verify, file_name, dict, &raw[..len], false)
                .map(|b| b.unwrap_or_default())
        });
    })?;
    drop(timer);
    if was_lent {
        if let Some(r) = lent {
            return r;
        }
    }
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if len <= SCRATCH_MAX {
        let done = SCRATCH.with(|cell| {
            let Ok(mut scratch) = cell.try_borrow_mut() else { return None };
            if scratch.len() < len {
                scratch.resize(len, 0);
            }
            Some(finish_block(file, handle, verify, file_name, dict, &mut scratch[..len], false))
        });
        if let Some(r) = done {
            // Not `keep_raw`: always the contents.
            return r.map(|b| b.unwrap_or_default());
        }
    }
    let mut buf = vec![0u8; len];
    match finish_block(file, handle, verify, file_name, dict, &mut buf, true)? {
        Some(b) => Ok(b),
        None => {
            buf.truncate(size);
            Ok(buf)
        }
    }
}

/// Reads the block at `handle` with its trailer into `buf` (exactly that long), checks its
/// checksum (when `verify` gives one) and uncompresses it. Returns the contents, or None when the block is stored
/// uncompressed and `keep_raw` (the caller then takes `buf[..handle.size]` as it is).
fn finish_block(
    file: &dyn RandomAccessFile,
    handle: BlockHandle,
    verify: Option<BlockChecksum>,
    file_name: &str,
    dict: &[u8],
    buf: &mut [u8],
    keep_raw: bool,
) -> Result<Option<Vec<u8>>> {
    {
        let _p = crate::perf::PerfTimer::new(crate::perf::Field::BlockReadTime);
        read_exact_at(file, handle.offset, buf, file_name)?;
    }
    decode_raw_block(handle, verify, file_name, dict, buf, keep_raw)
}

/// Checks and uncompresses a block read with its trailer (`raw`, exactly
/// `handle.size + BLOCK_TRAILER_SIZE` long) from wherever it was read: the file or a
/// readahead buffer (`prefetch.rs`). Returns the contents, or None when the block is
/// stored uncompressed and `keep_raw`.
pub(crate) fn decode_raw_block(
    handle: BlockHandle,
    verify: Option<BlockChecksum>,
    file_name: &str,
    dict: &[u8],
    buf: &[u8],
    keep_raw: bool,
) -> Result<Option<Vec<u8>>> {
    let size = buf.len() - BLOCK_TRAILER_SIZE;
    let type_byte = buf[size];
    if let Some(checksum) = verify {
        let stored = decode_fixed32(&buf[size + 1..]);
        let actual = checksum.compute(handle.offset, &buf[..size], type_byte);
        if stored != actual {
            return Err(Error::corruption(format!(
                "block checksum mismatch: stored = {stored}, computed = {actual}, type = {} in {file_name} offset {} size {}",
                checksum.kind as u8, handle.offset, handle.size
            )));
        }
    }
    let ctype = CompressionType::from_u8(type_byte).ok_or_else(|| {
        Error::corruption(format!(
            "unknown block compression type {type_byte} in {file_name} offset {}",
            handle.offset
        ))
    })?;
    if ctype == CompressionType::None {
        if keep_raw {
            return Ok(None);
        }
        // Into a buffer a dropped block gave back, if this thread has one (`block_buf`).
        let mut out = shale_base::block_buf::take(size);
        out.extend_from_slice(&buf[..size]);
        return Ok(Some(out));
    }
    uncompress_with_dict(ctype, &buf[..size], dict).map(Some).map_err(|e| {
        Error::new(e.kind(), format!("{} in {file_name} offset {}", strip_prefix(&e), handle.offset))
    })
}

/// The message of an error without RocksDB's kind prefix.
pub fn strip_prefix(e: &Error) -> String {
    let s = e.to_string();
    match s.find(": ") {
        Some(i) => s[i + 2..].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in memory that lends its bytes (as a mapping does) or only copies them.
    struct Lending {
        bytes: Vec<u8>,
        lends: bool,
    }

    impl RandomAccessFile for Lending {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            let lo = (offset as usize).min(self.bytes.len());
            let n = buf.len().min(self.bytes.len() - lo);
            buf[..n].copy_from_slice(&self.bytes[lo..lo + n]);
            Ok(n)
        }
        fn size(&self) -> Result<u64> {
            Ok(self.bytes.len() as u64)
        }
        fn read_lent(&self, offset: u64, len: usize, f: &mut dyn FnMut(&[u8])) -> Result<bool> {
            if !self.lends {
                return Ok(false);
            }
            let lo = (offset as usize).min(self.bytes.len());
            f(&self.bytes[lo..(lo + len).min(self.bytes.len())]);
            Ok(true)
        }
    }

    /// A block read from a file that lends its bytes is the block read by copying: stored
    /// plain or Snappy-compressed; a flipped byte is a checksum mismatch and a block cut
    /// short by the file's end is a truncated read, both Corruption naming file and offset.
    #[test]
    fn lent_blocks_read_as_copied_ones() {
        let contents: Vec<u8> = (0..3000u32).map(|i| (i % 7 + i / 100) as u8).collect();
        let mut file = vec![0xEEu8; 100];
        let mut handles = Vec::new();
        for ctype in [CompressionType::None, CompressionType::Snappy] {
            let stored = match ctype {
                CompressionType::None => contents.clone(),
                _ => super::super::compression::compress(ctype, None, &contents).unwrap(),
            };
            let h = BlockHandle::new(file.len() as u64, stored.len() as u64);
            let crc = BlockChecksum::from(ChecksumType::Crc32c).compute(h.offset, &stored, ctype as u8);
            file.extend_from_slice(&stored);
            file.push(ctype as u8);
            file.extend_from_slice(&crc.to_le_bytes());
            handles.push(h);
        }
        for lends in [false, true] {
            let f = Lending { bytes: file.clone(), lends };
            for &h in &handles {
                assert_eq!(
                    read_block(&f, h, true, "t.sst").unwrap(),
                    contents,
                    "lends {lends} at {}",
                    h.offset
                );
            }
            let mut bad = file.clone();
            bad[handles[1].offset as usize + 3] ^= 1;
            let e = read_block(&Lending { bytes: bad, lends }, handles[1], true, "t.sst").unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Corruption, "{e}");
            assert!(e.to_string().contains("checksum mismatch") && e.to_string().contains("t.sst"), "{e}");
            let cut = file[..file.len() - 2].to_vec();
            let e = read_block(&Lending { bytes: cut, lends }, handles[1], true, "t.sst").unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Corruption, "{e}");
            let want = format!("truncated block read from t.sst offset {}", handles[1].offset);
            assert!(e.to_string().contains(&want), "{e}");
        }
    }

    #[test]
    fn handle_round_trip() {
        for h in
            [BlockHandle::new(0, 0), BlockHandle::new(1 << 40, 4096), BlockHandle::new(u64::MAX, u64::MAX)]
        {
            let enc = h.encoded();
            assert!(enc.len() <= MAX_HANDLE_LEN);
            assert_eq!(BlockHandle::decode(&enc).unwrap(), h);
            assert!(BlockHandle::decode(&enc[..enc.len() - 1]).is_err());
        }
    }

    #[test]
    fn footer_round_trip_and_refusals() {
        let f = Footer {
            checksum: ChecksumType::Crc32c,
            metaindex_handle: BlockHandle::new(1234, 56),
            index_handle: BlockHandle::new(99, 1000),
            format_version: 5,
            base_context_checksum: 0,
        };
        let enc = f.encode(1295);
        assert_eq!(enc.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&enc, 1295, "x.sst").unwrap(), f);
        let mut v8 = enc.clone();
        v8[FOOTER_LEN - 12] = 8;
        let e = Footer::decode(&v8, 1295, "x.sst").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotSupported);
        assert!(e.to_string().contains("x.sst"));
        let mut bad = enc.clone();
        bad[FOOTER_LEN - 1] ^= 1;
        let e = Footer::decode(&bad, 1295, "y.sst").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        assert!(e.to_string().contains("y.sst"));
        // Legacy footer.
        let mut legacy = Vec::new();
        f.metaindex_handle.encode_to(&mut legacy);
        f.index_handle.encode_to(&mut legacy);
        legacy.resize(40, 0);
        put_fixed64(&mut legacy, LEGACY_BLOCK_BASED_TABLE_MAGIC);
        let l = Footer::decode(&legacy, 0, "z").unwrap();
        assert_eq!((l.format_version, l.index_handle), (0, f.index_handle));
    }

    #[test]
    fn footer_v6_round_trip_checksum_and_offset() {
        for kind in [ChecksumType::Crc32c, ChecksumType::XxHash, ChecksumType::XxHash64, ChecksumType::Xxh3] {
            for fv in [6, 7] {
                // Metaindex of 56 bytes ending 5 bytes (its trailer) before the footer at 1295.
                let f = Footer {
                    checksum: kind,
                    metaindex_handle: BlockHandle::new(1295 - 5 - 56, 56),
                    index_handle: BlockHandle::default(),
                    format_version: fv,
                    base_context_checksum: 0x1234_5678,
                };
                let enc = f.encode(1295);
                assert_eq!(enc.len(), FOOTER_LEN);
                assert_eq!(&enc[1..5], &EXTENDED_MAGIC);
                assert_eq!(Footer::decode(&enc, 1295, "a.sst").unwrap(), f);
                // The same bytes at another offset fail their checksum.
                let e = Footer::decode(&enc, 1296, "a.sst").unwrap_err();
                assert_eq!(e.kind(), crate::ErrorKind::Corruption, "{e}");
                assert!(e.to_string().contains("checksum mismatch"), "{e}");
                // Any flipped bit of the footer is caught.
                for i in 0..FOOTER_LEN {
                    let mut bad = enc.clone();
                    bad[i] ^= 0x10;
                    assert!(Footer::decode(&bad, 1295, "a.sst").is_err(), "flip at {i} with {kind:?}");
                }
            }
        }
        // The checked reserved bytes must be zero (a future feature), even with a good checksum.
        let f = Footer {
            checksum: ChecksumType::None,
            metaindex_handle: BlockHandle::new(100, 10),
            index_handle: BlockHandle::default(),
            format_version: 6,
            base_context_checksum: 7,
        };
        let mut enc = f.encode(115);
        enc[40] = 1;
        assert_eq!(Footer::decode(&enc, 115, "r").unwrap_err().kind(), crate::ErrorKind::NotSupported);
    }

    #[test]
    fn context_modifier_depends_on_base_and_offset() {
        assert_eq!(checksum_modifier(0, 12345), 0);
        let c = BlockChecksum { kind: ChecksumType::Crc32c, base_context: 0xabcd_ef01 };
        let at0 = c.compute(0, b"block", 1);
        assert_ne!(at0, c.compute(4096, b"block", 1));
        assert_ne!(at0, c.compute(1 << 32, b"block", 1));
        let other = BlockChecksum { kind: ChecksumType::Crc32c, base_context: 0xabcd_ef02 };
        assert_ne!(at0, other.compute(0, b"block", 1));
        // Without a base the checksum is the plain block checksum.
        assert_eq!(
            BlockChecksum::from(ChecksumType::Crc32c).compute(77, b"block", 1),
            block_checksum(ChecksumType::Crc32c, b"block", 1)
        );
    }

    #[test]
    fn crc_mask_round_trip() {
        for v in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask_crc(mask_crc(v)), v);
        }
        assert_ne!(
            block_checksum(ChecksumType::Xxh3, b"abc", 0),
            block_checksum(ChecksumType::Xxh3, b"abc", 1)
        );
    }
}
