//! Blob file and blob index encodings, as RocksDB's `db/blob/blob_log_format.h` and
//! `db/blob/blob_index.h` (docs/blob-format.md).
//!
//! A blob file `NNNNNN.blob`:
//!
//! ```text
//! header (30 bytes)
//! +--------------+---------+---------+-------+-------------+-------------------+
//! | magic number | version |  cf id  | flags | compression | expiration range  |
//! | fixed32      | fixed32 | fixed32 | u8    | u8          | fixed64 | fixed64 |
//! +--------------+---------+---------+-------+-------------+-------------------+
//!   magic 2395959 (0x00248f37), version 1, flags bit 0 = has_ttl
//!
//! record (32-byte header, then key and value), repeated
//! +------------+--------------+------------+------------+----------+-----+-------+
//! | key length | value length | expiration | header CRC | blob CRC | key | value |
//! | fixed64    | fixed64      | fixed64    | fixed32    | fixed32  |     |       |
//! +------------+--------------+------------+------------+----------+-----+-------+
//!   header CRC = mask(crc32c(first 24 bytes)); blob CRC = mask(crc32c(key | value));
//!   value is the compressed value when the file's compression is not none
//!   (RocksDB's block encoding: Snappy raw, LZ4/ZSTD/zlib with a varint32 size prefix)
//!
//! footer (32 bytes), present when the file was closed properly
//! +--------------+------------+-------------------+------------+
//! | magic number | blob count | expiration range  | footer CRC |
//! | fixed32      | fixed64    | fixed64 | fixed64 | fixed32    |
//! +--------------+------------+-------------------+------------+
//!   footer CRC = mask(crc32c(first 28 bytes))
//! ```
//!
//! A blob index (the value of an SST entry of type `kTypeBlobIndex` 0x11):
//!
//! ```text
//! type u8 = 1 (kBlob) | file number varint64 | offset varint64 | size varint64 | compression u8
//! type u8 = 2 (kBlobTTL) | expiration varint64 | then as kBlob
//! type u8 = 0 (kInlinedTTL) | expiration varint64 | value          (stacked BlobDB only)
//! ```
//! `offset` points at the value (not the record): the record starts
//! `offset - key length - 32`; `size` is the stored (compressed) value length.

use crate::coding::{decode_fixed32, decode_fixed64, put_fixed32, put_fixed64, put_varint64, Decoder};
use crate::error::{Error, Result};
use shale_base::checksum::{mask_crc, unmask_crc};

pub const BLOB_MAGIC: u32 = 2_395_959;
pub const BLOB_VERSION: u32 = 1;
pub const HEADER_SIZE: usize = 30;
pub const FOOTER_SIZE: usize = 32;
pub const RECORD_HEADER_SIZE: usize = 32;

/// The blob file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobHeader {
    pub column_family_id: u32,
    /// RocksDB's compression type byte.
    pub compression: u8,
    pub has_ttl: bool,
    pub expiration_range: (u64, u64),
}

impl BlobHeader {
    pub fn encode(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(HEADER_SIZE);
        put_fixed32(&mut d, BLOB_MAGIC);
        put_fixed32(&mut d, BLOB_VERSION);
        put_fixed32(&mut d, self.column_family_id);
        d.push(u8::from(self.has_ttl));
        d.push(self.compression);
        put_fixed64(&mut d, self.expiration_range.0);
        put_fixed64(&mut d, self.expiration_range.1);
        d
    }

    /// Decodes 30 bytes; the error text is RocksDB's, without the file name.
    pub fn decode(src: &[u8]) -> Result<BlobHeader> {
        let bad = |what: &str| Error::corruption(format!("Error while decoding blob log header: {what}"));
        if src.len() != HEADER_SIZE {
            return Err(bad("Unexpected blob file header size"));
        }
        if decode_fixed32(src) != BLOB_MAGIC {
            return Err(bad("Magic number mismatch"));
        }
        if decode_fixed32(&src[4..]) != BLOB_VERSION {
            return Err(bad("Unknown header version"));
        }
        Ok(BlobHeader {
            column_family_id: decode_fixed32(&src[8..]),
            has_ttl: src[12] & 1 == 1,
            compression: src[13],
            expiration_range: (decode_fixed64(&src[14..]), decode_fixed64(&src[22..])),
        })
    }
}

/// The blob file footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobFooter {
    pub blob_count: u64,
    pub expiration_range: (u64, u64),
}

impl BlobFooter {
    pub fn encode(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(FOOTER_SIZE);
        put_fixed32(&mut d, BLOB_MAGIC);
        put_fixed64(&mut d, self.blob_count);
        put_fixed64(&mut d, self.expiration_range.0);
        put_fixed64(&mut d, self.expiration_range.1);
        let crc = mask_crc(crc32c::crc32c(&d));
        put_fixed32(&mut d, crc);
        d
    }

    pub fn decode(src: &[u8]) -> Result<BlobFooter> {
        let bad = |what: &str| Error::corruption(format!("Error while decoding blob log footer: {what}"));
        if src.len() != FOOTER_SIZE {
            return Err(bad("Unexpected blob file footer size"));
        }
        if decode_fixed32(src) != BLOB_MAGIC {
            return Err(bad("Magic number mismatch"));
        }
        let crc = decode_fixed32(&src[28..]);
        if crc32c::crc32c(&src[..28]) != unmask_crc(crc) {
            return Err(bad("CRC mismatch"));
        }
        Ok(BlobFooter {
            blob_count: decode_fixed64(&src[4..]),
            expiration_range: (decode_fixed64(&src[12..]), decode_fixed64(&src[20..])),
        })
    }
}

/// A record's 32-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    pub key_size: u64,
    pub value_size: u64,
    pub expiration: u64,
    pub blob_crc: u32,
}

/// The masked CRC32C of a record's key and value.
pub fn blob_crc(key: &[u8], value: &[u8]) -> u32 {
    mask_crc(crc32c::crc32c_append(crc32c::crc32c(key), value))
}

impl RecordHeader {
    /// The header of a record holding `key` and `value` (stored bytes).
    pub fn encode(key: &[u8], value: &[u8], expiration: u64) -> Vec<u8> {
        Self::encode_array(key, value, expiration).to_vec()
    }

    /// As [`RecordHeader::encode`], on the stack: a writer appends it, then the key and the
    /// value, without copying them into one record first (RocksDB's `BlobLogWriter`).
    pub fn encode_array(key: &[u8], value: &[u8], expiration: u64) -> [u8; RECORD_HEADER_SIZE] {
        let mut d = [0u8; RECORD_HEADER_SIZE];
        d[..8].copy_from_slice(&(key.len() as u64).to_le_bytes());
        d[8..16].copy_from_slice(&(value.len() as u64).to_le_bytes());
        d[16..24].copy_from_slice(&expiration.to_le_bytes());
        let hcrc = mask_crc(crc32c::crc32c(&d[..24]));
        d[24..28].copy_from_slice(&hcrc.to_le_bytes());
        d[28..32].copy_from_slice(&blob_crc(key, value).to_le_bytes());
        d
    }

    pub fn decode(src: &[u8]) -> Result<RecordHeader> {
        let bad = |what: &str| Error::corruption(format!("Error while decoding blob record: {what}"));
        if src.len() != RECORD_HEADER_SIZE {
            return Err(bad("Unexpected blob record header size"));
        }
        if crc32c::crc32c(&src[..24]) != unmask_crc(decode_fixed32(&src[24..])) {
            return Err(bad("Header CRC mismatch"));
        }
        Ok(RecordHeader {
            key_size: decode_fixed64(src),
            value_size: decode_fixed64(&src[8..]),
            expiration: decode_fixed64(&src[16..]),
            blob_crc: decode_fixed32(&src[28..]),
        })
    }
}

/// A decoded blob index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobIndex {
    pub file_number: u64,
    /// Offset of the value in the blob file.
    pub offset: u64,
    /// Stored (possibly compressed) value size.
    pub size: u64,
    /// RocksDB's compression type byte.
    pub compression: u8,
    /// kBlobTTL's expiration (None for kBlob).
    pub expiration: Option<u64>,
}

const TYPE_INLINED_TTL: u8 = 0;
const TYPE_BLOB: u8 = 1;
const TYPE_BLOB_TTL: u8 = 2;

impl BlobIndex {
    pub fn encode(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(32);
        match self.expiration {
            Some(e) => {
                d.push(TYPE_BLOB_TTL);
                put_varint64(&mut d, e);
            }
            None => d.push(TYPE_BLOB),
        }
        put_varint64(&mut d, self.file_number);
        put_varint64(&mut d, self.offset);
        put_varint64(&mut d, self.size);
        d.push(self.compression);
        d
    }

    /// Decodes a blob index. The inlined-TTL form of the stacked BlobDB is NotSupported.
    pub fn decode(src: &[u8]) -> Result<BlobIndex> {
        let bad = |what: &str| Error::corruption(format!("Error while decoding blob index: {what}"));
        let mut d = Decoder::new(src);
        let t = d.u8().ok_or_else(|| bad("empty blob index"))?;
        let expiration = match t {
            TYPE_BLOB => None,
            TYPE_BLOB_TTL => Some(d.varint64().ok_or_else(|| bad("Corrupted expiration"))?),
            TYPE_INLINED_TTL => {
                return Err(Error::not_supported(
                    "inlined TTL blob indexes (stacked BlobDB) are not supported",
                ))
            }
            _ => return Err(bad(&format!("Unknown blob index type: {t}"))),
        };
        let (Some(file_number), Some(offset), Some(size)) = (d.varint64(), d.varint64(), d.varint64()) else {
            return Err(bad("Corrupted blob offset"));
        };
        let rest = d.remaining();
        if rest.len() != 1 {
            return Err(bad("Corrupted blob offset"));
        }
        if file_number == 0 {
            return Err(bad("Invalid blob file number 0"));
        }
        Ok(BlobIndex { file_number, offset, size, compression: rest[0], expiration })
    }
}

/// RocksDB's `IsValidBlobOffset`: the value `[offset, offset + size)` lies after the header
/// and its record's header and key, and before the footer.
pub fn valid_blob_offset(offset: u64, key_size: u64, value_size: u64, file_size: u64) -> bool {
    let min_prefix = (HEADER_SIZE + RECORD_HEADER_SIZE) as u64;
    if offset < min_prefix || offset - min_prefix < key_size || file_size < FOOTER_SIZE as u64 {
        return false;
    }
    let max_end = file_size - FOOTER_SIZE as u64;
    value_size <= max_end && offset <= max_end - value_size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_footer_record_round_trip() {
        let h = BlobHeader { column_family_id: 7, compression: 4, has_ttl: false, expiration_range: (0, 0) };
        let e = h.encode();
        assert_eq!(e.len(), HEADER_SIZE);
        assert_eq!(BlobHeader::decode(&e).unwrap(), h);
        let mut bad = e.clone();
        bad[0] ^= 1;
        assert!(BlobHeader::decode(&bad).unwrap_err().to_string().contains("Magic number mismatch"));

        let f = BlobFooter { blob_count: 12, expiration_range: (0, 0) };
        let e = f.encode();
        assert_eq!(e.len(), FOOTER_SIZE);
        assert_eq!(BlobFooter::decode(&e).unwrap(), f);
        let mut bad = e.clone();
        bad[5] ^= 1;
        assert!(BlobFooter::decode(&bad).unwrap_err().to_string().contains("CRC mismatch"));

        let r = RecordHeader::encode(b"key", b"value", 0);
        let d = RecordHeader::decode(&r).unwrap();
        assert_eq!((d.key_size, d.value_size, d.blob_crc), (3, 5, blob_crc(b"key", b"value")));
        let mut bad = r.clone();
        bad[3] ^= 1;
        assert!(RecordHeader::decode(&bad).unwrap_err().to_string().contains("Header CRC mismatch"));
    }

    #[test]
    fn blob_index_round_trip_and_errors() {
        let i = BlobIndex { file_number: 9, offset: 100, size: 4096, compression: 0, expiration: None };
        assert_eq!(BlobIndex::decode(&i.encode()).unwrap(), i);
        let t = BlobIndex { expiration: Some(55), ..i };
        assert_eq!(BlobIndex::decode(&t.encode()).unwrap(), t);
        assert!(BlobIndex::decode(&[]).is_err());
        assert!(BlobIndex::decode(&[9]).unwrap_err().to_string().contains("Unknown blob index type"));
        let mut long = i.encode();
        long.push(0);
        assert!(BlobIndex::decode(&long).is_err());
        assert_eq!(BlobIndex::decode(&[0, 1, b'x']).unwrap_err().kind(), crate::ErrorKind::NotSupported);
    }

    #[test]
    fn offsets_are_checked() {
        assert!(valid_blob_offset(65, 3, 10, 65 + 10 + 32));
        assert!(!valid_blob_offset(64, 3, 10, 200));
        assert!(!valid_blob_offset(65, 3, 11, 65 + 10 + 32));
        assert!(!valid_blob_offset(65, 3, 10, 10));
    }
}
