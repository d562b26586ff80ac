//! Constants and checksums of the log format.
//!
//! ```text
//! offset 0      4        6      7               11
//!        | crc  | length | type | payload ...           legacy header (HEADER_SIZE = 7)
//!        | crc  | length | type | log number | payload  recyclable header (11)
//! types  : 0 zero (preallocated) | 1 full | 2 first | 3 middle | 4 last
//!          | 5..=8 the same, recyclable | 9 set compression type (refused)
//!          | 10, 11 user-defined timestamp sizes (RocksDB 8+) | 130, 131 predecessor WAL
//!          info (RocksDB 9+) | other types >= 128 skipped, < 128 corruption
//! crc    = mask(crc32c(type byte | [log number] | payload)), fixed32 little-endian
//! length = payload bytes, fixed16 little-endian (a fragment never crosses a 32 KiB block)
//! mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8   (wrapping)
//! ```

/// Logs are cut into blocks of this size; no physical record crosses a block boundary.
pub const BLOCK_SIZE: usize = 32768;
/// crc (4) + length (2) + type (1).
pub const HEADER_SIZE: usize = 7;
/// The recyclable header adds the low 32 bits of the log number.
pub const RECYCLABLE_HEADER_SIZE: usize = 11;

/// Physical record types (db/log_format.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// Preallocated, never-written space.
    Zero = 0,
    Full = 1,
    First = 2,
    Middle = 3,
    Last = 4,
    RecyclableFull = 5,
    RecyclableFirst = 6,
    RecyclableMiddle = 7,
    RecyclableLast = 8,
}

/// The largest record type byte RocksDB 7.8.3 knows (9 = SetCompressionType, which Shale
/// does not write and reports as unsupported when read).
pub const MAX_RECORD_TYPE: u8 = 9;

/// RocksDB 8.x+: the user-defined timestamp sizes of column families (payload: per column
/// family `id fixed32 | timestamp size fixed16`); 11 is its recyclable form. Written before
/// the first batch that touches a column family with timestamps.
pub const USER_DEFINED_TIMESTAMP_SIZE: u8 = 10;
pub const RECYCLABLE_USER_DEFINED_TIMESTAMP_SIZE: u8 = 11;
/// RocksDB 9.x+ (`track_and_verify_wals`): the previous WAL's number, size and last
/// sequence number (payload: three fixed64); 131 is its recyclable form.
pub const PREDECESSOR_WAL_INFO: u8 = 130;
pub const RECYCLABLE_PREDECESSOR_WAL_INFO: u8 = 131;
/// Unknown record types with this bit set are skipped, as RocksDB does.
pub const RECORD_TYPE_SAFE_IGNORE_MASK: u8 = 1 << 7;

/// True for the record types whose header carries the log number (11 bytes).
pub fn is_recyclable_type(ty: u8) -> bool {
    (5..=8).contains(&ty)
        || ty == RECYCLABLE_USER_DEFINED_TIMESTAMP_SIZE
        || ty == RECYCLABLE_PREDECESSOR_WAL_INFO
}

/// The byte value RocksDB writes for a WAL compression-type record.
pub const SET_COMPRESSION_TYPE: u8 = 9;

impl RecordType {
    pub fn from_u8(b: u8) -> Option<RecordType> {
        Some(match b {
            0 => RecordType::Zero,
            1 => RecordType::Full,
            2 => RecordType::First,
            3 => RecordType::Middle,
            4 => RecordType::Last,
            5 => RecordType::RecyclableFull,
            6 => RecordType::RecyclableFirst,
            7 => RecordType::RecyclableMiddle,
            8 => RecordType::RecyclableLast,
            _ => return None,
        })
    }

    /// True for types 5..=8, whose header carries a log number.
    pub fn is_recyclable(self) -> bool {
        (self as u8) >= RecordType::RecyclableFull as u8
    }

    /// The header size of a record of this type.
    pub fn header_size(self) -> usize {
        if self.is_recyclable() {
            RECYCLABLE_HEADER_SIZE
        } else {
            HEADER_SIZE
        }
    }
}

pub use shale_base::checksum::{mask_crc, unmask_crc};

/// RocksDB 9+'s `PredecessorWALInfo` (`track_and_verify_wals`): what a new WAL records of
/// the WAL before it, as the payload of a type 130 (131 recyclable) record written right
/// after the compression-type record, never split across blocks:
///
/// ```text
/// offset 0             8              16                      24
///        | log number  | size in bytes | last sequence recorded |   three fixed64 LE
/// ```
/// The size is every byte the previous writer appended (RocksDB's `GetFileSize` of its
/// `WritableFileWriter`); the last sequence is the largest starting sequence number of the
/// write batches it holds (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PredecessorWalInfo {
    pub log_number: u64,
    pub size_bytes: u64,
    pub last_seqno_recorded: u64,
}

/// The payload size of a predecessor-WAL record.
pub const PREDECESSOR_WAL_INFO_SIZE: usize = 24;

impl PredecessorWalInfo {
    /// The record's payload.
    pub fn encode(&self) -> [u8; PREDECESSOR_WAL_INFO_SIZE] {
        let mut out = [0u8; PREDECESSOR_WAL_INFO_SIZE];
        out[..8].copy_from_slice(&self.log_number.to_le_bytes());
        out[8..16].copy_from_slice(&self.size_bytes.to_le_bytes());
        out[16..].copy_from_slice(&self.last_seqno_recorded.to_le_bytes());
        out
    }

    /// Reads a payload as RocksDB's `DecodeFrom`: three fixed64, bytes after them ignored;
    /// None when fewer than 24 bytes.
    pub fn decode(payload: &[u8]) -> Option<PredecessorWalInfo> {
        let field = |i: usize| -> Option<u64> {
            let b: [u8; 8] = payload.get(i * 8..i * 8 + 8)?.try_into().ok()?;
            Some(u64::from_le_bytes(b))
        };
        Some(PredecessorWalInfo {
            log_number: field(0)?,
            size_bytes: field(1)?,
            last_seqno_recorded: field(2)?,
        })
    }
}

/// The (unmasked) CRC of each single type byte 0..=MAX_RECORD_TYPE, so a record's checksum
/// is one `crc32c_append` over its payload.
pub fn type_crcs() -> [u32; MAX_RECORD_TYPE as usize + 1] {
    let mut out = [0u32; MAX_RECORD_TYPE as usize + 1];
    for (t, slot) in out.iter_mut().enumerate() {
        *slot = crc32c::crc32c(&[t as u8]);
    }
    out
}

/// The stored (masked) checksum of a record: type byte, then the log number for a
/// recyclable type, then the payload.
pub fn record_crc(record_type: u8, log_number: Option<u32>, payload: &[u8]) -> u32 {
    let mut crc = crc32c::crc32c(&[record_type]);
    if let Some(n) = log_number {
        crc = crc32c::crc32c_append(crc, &n.to_le_bytes());
    }
    mask_crc(crc32c::crc32c_append(crc, payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_known_vectors() {
        // The iSCSI test vectors RocksDB's crc32c_test also uses.
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c::crc32c(&[0xffu8; 32]), 0x62a8_ab43);
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c::crc32c(&ascending), 0x46dd_794e);
    }

    #[test]
    fn type_crcs_extend_like_one_pass() {
        let crcs = type_crcs();
        let payload = b"hello world";
        for t in 0..=MAX_RECORD_TYPE {
            let mut whole = vec![t];
            whole.extend_from_slice(payload);
            assert_eq!(crc32c::crc32c_append(crcs[t as usize], payload), crc32c::crc32c(&whole));
        }
        let mut whole = vec![5u8];
        whole.extend_from_slice(&7u32.to_le_bytes());
        whole.extend_from_slice(payload);
        assert_eq!(record_crc(5, Some(7), payload), mask_crc(crc32c::crc32c(&whole)));
    }

    #[test]
    fn record_types_decode() {
        for b in 0..=8u8 {
            assert_eq!(RecordType::from_u8(b).map(|t| t as u8), Some(b));
        }
        assert_eq!(RecordType::from_u8(9), None);
        assert!(RecordType::RecyclableLast.is_recyclable());
        assert!(!RecordType::Last.is_recyclable());
        assert_eq!(RecordType::RecyclableFirst.header_size(), 11);
        assert_eq!(RecordType::Full.header_size(), 7);
    }

    #[test]
    fn predecessor_info_round_trips_and_short_payloads_fail() {
        let i = PredecessorWalInfo { log_number: 7, size_bytes: 1234, last_seqno_recorded: 99 };
        let e = i.encode();
        assert_eq!(&e[..8], &7u64.to_le_bytes());
        assert_eq!(PredecessorWalInfo::decode(&e), Some(i));
        let mut longer = e.to_vec();
        longer.push(1);
        assert_eq!(PredecessorWalInfo::decode(&longer), Some(i));
        assert_eq!(PredecessorWalInfo::decode(&e[..23]), None);
    }
}
