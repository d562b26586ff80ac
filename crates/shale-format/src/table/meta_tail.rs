//! The tail shared by RocksDB's PlainTable and CuckooTable files: blocks written raw (no
//! compression byte, no checksum), a properties block and a metaindex block in the
//! block-based table's block format, and a footer carrying the table's magic number.
//!
//! ```text
//! file      : data | meta block* | properties block | metaindex block | footer
//!             (no block has a trailer: these formats have no block checksums)
//! properties: block format, restart interval "infinite" (the block-based table's properties
//!             block; docs/sst.md), names sorted
//! metaindex : block format, restart interval 1: name -> block handle (varint64 offset,
//!             varint64 size); always "rocksdb.properties", plain tables may add
//!             "PlainTableIndexBlock" and "PlainTableBloomBlock"
//! footer, format_version 0 (plain tables: RocksDB writes these):
//!             metaindex handle | index handle (0, 0) | zero padding   (40 bytes in all)
//!             | legacy magic fixed64                                  = 48 bytes
//!             legacy plain magic 0x4f3418eb7a8f13b8 stands for plain 0x8242229663bf9564
//! footer, format_version >= 1 (cuckoo tables: format_version 1):
//!             checksum type u8 (0, none)
//!             | metaindex handle | index handle (0, 0) | zero padding   (40 bytes in all)
//!             | format_version fixed32 | magic fixed64                 = 53 bytes
//!             cuckoo magic 0x926789d0c5f17873
//! ```
//! The table-format dispatch (`table/any.rs`) reads the last 8 bytes of a table file and
//! picks the reader by magic number.

use std::collections::HashMap;

use crate::coding::{decode_fixed32, decode_fixed64, put_fixed32, put_fixed64, Decoder};
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};

use super::block::{Block, BlockBuilder};
use super::format::{read_exact_at, BlockHandle, FOOTER_LEN, LEGACY_FOOTER_LEN, MAX_HANDLE_LEN};
use super::properties::{TableProperties, PROPERTIES_BLOCK};

/// RocksDB's `kPlainTableMagicNumber` (the first 64 bits of sha1("rocksdb.table.plain")).
pub const PLAIN_TABLE_MAGIC: u64 = 0x8242_2296_63bf_9564;
/// RocksDB's `kLegacyPlainTableMagicNumber`: a plain table with a format_version 0 footer.
pub const LEGACY_PLAIN_TABLE_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
/// RocksDB's `kCuckooTableMagicNumber` (sha1("rocksdb.table.cuckoo")).
pub const CUCKOO_TABLE_MAGIC: u64 = 0x9267_89d0_c5f1_7873;

/// A footer of a table without block checksums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawFooter {
    /// The table's magic number (a legacy one up-converted).
    pub magic: u64,
    pub format_version: u32,
    pub metaindex_handle: BlockHandle,
    /// Where the footer starts in the file.
    pub footer_offset: u64,
}

/// Encodes a footer for `magic` (`format_version` 0: the 48-byte legacy form with the
/// legacy magic; else the 53-byte form with checksum type "none").
pub fn encode_footer(magic: u64, format_version: u32, metaindex: BlockHandle) -> Vec<u8> {
    let mut out = Vec::with_capacity(FOOTER_LEN);
    if format_version == 0 {
        metaindex.encode_to(&mut out);
        BlockHandle::new(0, 0).encode_to(&mut out);
        out.resize(2 * MAX_HANDLE_LEN, 0);
        let legacy = if magic == PLAIN_TABLE_MAGIC { LEGACY_PLAIN_TABLE_MAGIC } else { magic };
        put_fixed64(&mut out, legacy);
        return out;
    }
    out.push(0); // kNoChecksum
    metaindex.encode_to(&mut out);
    BlockHandle::new(0, 0).encode_to(&mut out);
    out.resize(1 + 2 * MAX_HANDLE_LEN, 0);
    put_fixed32(&mut out, format_version);
    put_fixed64(&mut out, magic);
    out
}

/// The magic number in the last 8 bytes of a table file of `file_size` bytes.
pub fn read_magic(file: &dyn RandomAccessFile, file_size: u64, file_name: &str) -> Result<u64> {
    if file_size < LEGACY_FOOTER_LEN as u64 {
        return Err(Error::corruption(format!(
            "file is too short ({file_size} bytes) to be an sstable: {file_name} offset 0"
        )));
    }
    let mut b = [0u8; 8];
    read_exact_at(file, file_size - 8, &mut b, file_name)?;
    Ok(decode_fixed64(&b))
}

/// Reads the footer of a plain or cuckoo table.
pub fn read_raw_footer(file: &dyn RandomAccessFile, file_size: u64, file_name: &str) -> Result<RawFooter> {
    let magic = read_magic(file, file_size, file_name)?;
    let bad = |what: &str, at: u64| Error::corruption(format!("{what} in {file_name} offset {at}"));
    if magic == LEGACY_PLAIN_TABLE_MAGIC {
        let at = file_size - LEGACY_FOOTER_LEN as u64;
        let mut buf = vec![0u8; LEGACY_FOOTER_LEN];
        read_exact_at(file, at, &mut buf, file_name)?;
        let mut d = Decoder::new(&buf);
        let metaindex_handle =
            BlockHandle::decode_from(&mut d).ok_or_else(|| bad("bad metaindex handle in footer", at))?;
        return Ok(RawFooter {
            magic: PLAIN_TABLE_MAGIC,
            format_version: 0,
            metaindex_handle,
            footer_offset: at,
        });
    }
    if magic != PLAIN_TABLE_MAGIC && magic != CUCKOO_TABLE_MAGIC {
        return Err(Error::corruption(format!(
            "Bad table magic number: found {magic:#x}, not a plain or cuckoo table: {file_name} offset {}",
            file_size - 8
        )));
    }
    if file_size < FOOTER_LEN as u64 {
        return Err(Error::corruption(format!("Input is too short to be an SST file: {file_name} offset 0")));
    }
    let at = file_size - FOOTER_LEN as u64;
    let mut buf = vec![0u8; FOOTER_LEN];
    read_exact_at(file, at, &mut buf, file_name)?;
    let format_version = decode_fixed32(&buf[FOOTER_LEN - 12..]);
    if buf[0] != 0 {
        return Err(bad(&format!("checksum type {} in a table without checksums", buf[0]), at));
    }
    let mut d = Decoder::new(&buf[1..]);
    let metaindex_handle =
        BlockHandle::decode_from(&mut d).ok_or_else(|| bad("bad metaindex handle in footer", at))?;
    Ok(RawFooter { magic, format_version, metaindex_handle, footer_offset: at })
}

/// Reads `handle`'s bytes (no trailer), checking that they lie before `limit`.
pub fn read_raw_block(
    file: &dyn RandomAccessFile,
    handle: BlockHandle,
    limit: u64,
    file_name: &str,
) -> Result<Vec<u8>> {
    let end = handle.offset.checked_add(handle.size);
    if end.is_none_or(|e| e > limit) || handle.size > (1 << 31) {
        return Err(Error::corruption(format!(
            "block handle (offset {}, size {}) past the end of the data in {file_name} offset {}",
            handle.offset, handle.size, handle.offset
        )));
    }
    let mut buf = vec![0u8; handle.size as usize];
    read_exact_at(file, handle.offset, &mut buf, file_name)?;
    Ok(buf)
}

/// What the tail of a plain or cuckoo table says: its footer, its metaindex and its properties.
pub struct RawTail {
    pub footer: RawFooter,
    pub meta: HashMap<String, BlockHandle>,
    pub props: TableProperties,
}

/// Reads footer, metaindex and properties of a plain or cuckoo table.
pub fn read_raw_tail(file: &dyn RandomAccessFile, file_size: u64, file_name: &str) -> Result<RawTail> {
    let footer = read_raw_footer(file, file_size, file_name)?;
    let in_block = |e: Error, h: BlockHandle| {
        Error::corruption(format!(
            "{} in {file_name} block at offset {}",
            super::format::strip_prefix(&e),
            h.offset
        ))
    };
    let mh = footer.metaindex_handle;
    let raw = read_raw_block(file, mh, footer.footer_offset, file_name)?;
    let metaindex = std::sync::Arc::new(Block::new(raw).map_err(|e| in_block(e, mh))?);
    let mut meta = HashMap::new();
    for (k, v) in metaindex.entries().map_err(|e| in_block(e, mh))? {
        let h = BlockHandle::decode(&v).map_err(|e| in_block(e, mh))?;
        meta.insert(String::from_utf8_lossy(&k).into_owned(), h);
    }
    let ph = *meta.get(PROPERTIES_BLOCK).ok_or_else(|| {
        Error::corruption(format!(
            "{file_name}: no \"{PROPERTIES_BLOCK}\" block in the metaindex at offset {}",
            mh.offset
        ))
    })?;
    let raw = read_raw_block(file, ph, mh.offset, file_name)?;
    let props = TableProperties::decode(raw).map_err(|e| in_block(e, ph))?;
    Ok(RawTail { footer, meta, props })
}

/// Writes the properties block, the metaindex (with `meta` and the properties) and the
/// footer at `offset`; returns the offset after the footer.
pub fn write_raw_tail(
    file: &mut dyn WritableFile,
    mut offset: u64,
    props: &TableProperties,
    mut meta: Vec<(String, BlockHandle)>,
    magic: u64,
    format_version: u32,
) -> Result<u64> {
    let pb = props.encode();
    file.append(&pb)?;
    meta.push((PROPERTIES_BLOCK.to_string(), BlockHandle::new(offset, pb.len() as u64)));
    offset += pb.len() as u64;
    meta.sort_by(|a, b| a.0.cmp(&b.0));
    let mut mb = BlockBuilder::new(1);
    for (k, h) in &meta {
        mb.add(k.as_bytes(), &h.encoded());
    }
    let m = mb.finish().to_vec();
    file.append(&m)?;
    let mh = BlockHandle::new(offset, m.len() as u64);
    offset += m.len() as u64;
    let f = encode_footer(magic, format_version, mh);
    file.append(&f)?;
    Ok(offset + f.len() as u64)
}

/// A table file held in memory, for unit tests.
#[cfg(test)]
pub struct BytesFile(pub Vec<u8>);

#[cfg(test)]
impl RandomAccessFile for BytesFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = (offset as usize).min(self.0.len());
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }
    fn size(&self) -> Result<u64> {
        Ok(self.0.len() as u64)
    }
}

/// A writable file appending to a shared buffer, for unit tests.
#[cfg(test)]
#[derive(Clone, Default)]
pub struct SharedBuf(pub std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);

#[cfg(test)]
impl WritableFile for SharedBuf {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.lock().len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footers_round_trip_and_legacy_plain_magic_is_written() {
        let h = BlockHandle::new(1234, 56);
        let f0 = encode_footer(PLAIN_TABLE_MAGIC, 0, h);
        assert_eq!(f0.len(), LEGACY_FOOTER_LEN);
        assert_eq!(decode_fixed64(&f0[40..]), LEGACY_PLAIN_TABLE_MAGIC);
        let f1 = encode_footer(CUCKOO_TABLE_MAGIC, 1, h);
        assert_eq!(f1.len(), FOOTER_LEN);
        assert_eq!(decode_fixed32(&f1[41..]), 1);
        for (f, magic, v) in [(f0, PLAIN_TABLE_MAGIC, 0), (f1, CUCKOO_TABLE_MAGIC, 1)] {
            let mut file = vec![7u8; 100];
            file.extend_from_slice(&f);
            let got = read_raw_footer(&BytesFile(file), 100 + f.len() as u64, "t.sst").unwrap();
            assert_eq!(got.magic, magic);
            assert_eq!(got.format_version, v);
            assert_eq!(got.metaindex_handle, h);
        }
    }
}
