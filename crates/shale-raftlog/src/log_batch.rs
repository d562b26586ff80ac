//! The log batch: what one `Engine::write` appends (raft-engine 0.4.2's `log_batch.rs`
//! format, byte for byte).
//!
//! A batch in a log file:
//! ```text
//! +--------------------------------------------------------------------------+
//! | header (16 bytes)                                                        |
//! |   u64 big-endian: (batch length << 8) | compression type (0 none, 1 LZ4) |
//! |   u64 big-endian: footer offset (from the header's first byte, >= 16)    |
//! +--------------------------------------------------------------------------+
//! | entries blob (absent when the batch holds no entries)                    |
//! |   none: entry bytes back to back                                         |
//! |   LZ4 : u32le uncompressed length | LZ4 block of the entry bytes         |
//! |   u32le CRC32 of the blob bytes above                                    |
//! +--------------------------------------------------------------------------+
//! | item footer                                                              |
//! |   varint item count                                                      |
//! |   items...                                                               |
//! |   u32le CRC32 of count and items (XOR the file signature in V2 files)    |
//! +--------------------------------------------------------------------------+
//! ```
//! An item:
//! ```text
//! varint raft group id | type u8 | content
//!   type 1 entries : varint count | varint first index (if count > 0)
//!                    | count x varint end offset of the entry in the uncompressed blob
//!                      (cumulative over the whole batch; entry i spans [end(i-1), end(i)))
//!   type 2 command : u8 1 = Clean | u8 2 = Compact, varint index
//!   type 3 kv      : u8 op (1 put, 2 delete) | varint key len | key
//!                    | put only: varint value len | value
//! ```
//! Varints are LEB128 (7 bits a byte, low group first). Entries of one item have
//! consecutive indexes: only the first is stored. The blob is compressed when
//! `batch_compression_threshold > 0` and the uncompressed blob is at least that long.
//!
//! Recovery reads the header, seeks to the footer and decodes only the items; the entries
//! blob is read (and its checksum verified) when an entry is fetched, and for the last
//! batch of each file during recovery.

use shale_base::coding::{decode_varint64, put_varint64};

use crate::format::FileId;
use crate::util::{crc32, lz4_compress_to, lz4_decompress};
use crate::{Error, Result};

pub(crate) const LOG_BATCH_HEADER_LEN: usize = 16;
pub(crate) const LOG_BATCH_CHECKSUM_LEN: usize = 4;

const TYPE_ENTRIES: u8 = 0x01;
const TYPE_COMMAND: u8 = 0x02;
const TYPE_KV: u8 = 0x03;

const CMD_CLEAN: u8 = 0x01;
const CMD_COMPACT: u8 = 0x02;

/// The largest entries blob one batch may carry (raft-engine's limit).
pub(crate) const MAX_LOG_ENTRIES_SIZE_PER_BATCH: usize = i32::MAX as usize;

/// Keys starting with this prefix are reserved (raft-engine's atomic-group markers).
pub(crate) const INTERNAL_KEY_PREFIX: &[u8] = b"__";

/// Converts raft entries to and from bytes, and tells their index: raft-engine's
/// `MessageExt`, tied to rust-protobuf 2 as there.
#[cfg(feature = "protobuf")]
pub trait MessageExt: Send + Sync {
    type Entry: protobuf::Message + Clone + PartialEq;

    fn index(e: &Self::Entry) -> u64;
}

/// Converts raft entries to and from bytes, and tells their index. Without the `protobuf`
/// feature the entry type brings its own codec (prost, hand-written, ...).
#[cfg(not(feature = "protobuf"))]
pub trait MessageExt: Send + Sync {
    type Entry: Clone + PartialEq;

    fn index(e: &Self::Entry) -> u64;
    fn encode(e: &Self::Entry, buf: &mut Vec<u8>) -> Result<()>;
    fn decode(bytes: &[u8]) -> Result<Self::Entry>;
}

#[cfg(feature = "protobuf")]
pub(crate) fn encode_entry<M: MessageExt>(e: &M::Entry, buf: &mut Vec<u8>) -> Result<()> {
    use protobuf::Message;
    e.write_to_vec(buf)?;
    Ok(())
}

#[cfg(feature = "protobuf")]
pub(crate) fn decode_entry<M: MessageExt>(bytes: &[u8]) -> Result<M::Entry> {
    Ok(<M::Entry as protobuf::Message>::parse_from_bytes(bytes)?)
}

#[cfg(not(feature = "protobuf"))]
pub(crate) fn encode_entry<M: MessageExt>(e: &M::Entry, buf: &mut Vec<u8>) -> Result<()> {
    M::encode(e, buf)
}

#[cfg(not(feature = "protobuf"))]
pub(crate) fn decode_entry<M: MessageExt>(bytes: &[u8]) -> Result<M::Entry> {
    M::decode(bytes)
}

/// How the entries blob of a batch is stored.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum CompressionType {
    None = 0,
    Lz4 = 1,
}

impl CompressionType {
    pub fn from_u8(t: u8) -> Result<CompressionType> {
        match t {
            0 => Ok(CompressionType::None),
            1 => Ok(CompressionType::Lz4),
            _ => Err(Error::corruption(format!("Unrecognized compression type: {t}"))),
        }
    }
}

/// A command on a raft group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Removes the group: its entries and keys.
    Clean,
    /// Removes the group's entries below `index`.
    Compact { index: u64 },
}

impl Command {
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match *self {
            Command::Clean => buf.push(CMD_CLEAN),
            Command::Compact { index } => {
                buf.push(CMD_COMPACT);
                put_varint64(buf, index);
            }
        }
    }

    fn decode(r: &mut Reader) -> Result<Command> {
        match r.u8()? {
            CMD_CLEAN => Ok(Command::Clean),
            CMD_COMPACT => Ok(Command::Compact { index: r.varint()? }),
            t => Err(Error::corruption(format!("Unrecognized command type: {t}"))),
        }
    }
}

/// The operation of a key-value item.
#[repr(u8)]
#[derive(Debug, PartialEq, Eq, Copy, Clone)]
pub enum OpType {
    Put = 1,
    Del = 2,
}

/// What an item carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogItemContent {
    /// Entries with consecutive indexes from `first_index`; `ends[i]` is the end offset of
    /// entry i in the batch's uncompressed entries blob, `start` the offset of the first.
    Entries {
        first_index: u64,
        start: u32,
        ends: Vec<u32>,
    },
    Command(Command),
    Kv {
        op: OpType,
        key: Vec<u8>,
        value: Option<Vec<u8>>,
    },
}

/// One item of a batch: a raft group and what happens to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogItem {
    pub raft_group_id: u64,
    pub content: LogItemContent,
}

/// A cursor over bytes that fails with Corruption instead of panicking.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    fn u8(&mut self) -> Result<u8> {
        let (&b, rest) =
            self.buf.split_first().ok_or_else(|| Error::corruption("unexpected end of log items"))?;
        self.buf = rest;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        let (v, n) = decode_varint64(self.buf).ok_or_else(|| Error::corruption("bad varint in log items"))?;
        self.buf = &self.buf[n..];
        Ok(v)
    }

    fn bytes(&mut self, n: u64) -> Result<&'a [u8]> {
        if n > self.buf.len() as u64 {
            return Err(Error::corruption(format!(
                "log item length {n} exceeds the {} bytes left",
                self.buf.len()
            )));
        }
        let (head, rest) = self.buf.split_at(n as usize);
        self.buf = rest;
        Ok(head)
    }
}

impl LogItem {
    fn encode(&self, buf: &mut Vec<u8>) {
        put_varint64(buf, self.raft_group_id);
        match &self.content {
            LogItemContent::Entries { first_index, ends, .. } => {
                buf.push(TYPE_ENTRIES);
                put_varint64(buf, ends.len() as u64);
                if !ends.is_empty() {
                    put_varint64(buf, *first_index);
                }
                for &e in ends {
                    put_varint64(buf, e as u64);
                }
            }
            LogItemContent::Command(c) => {
                buf.push(TYPE_COMMAND);
                c.encode(buf);
            }
            LogItemContent::Kv { op, key, value } => {
                buf.push(TYPE_KV);
                buf.push(*op as u8);
                put_varint64(buf, key.len() as u64);
                buf.extend_from_slice(key);
                if *op == OpType::Put {
                    let v = value.as_deref().unwrap_or(&[]);
                    put_varint64(buf, v.len() as u64);
                    buf.extend_from_slice(v);
                }
            }
        }
    }

    /// Decodes one item; `entries_size` is the blob offset where its entries start, moved
    /// to where they end.
    fn decode(r: &mut Reader, entries_size: &mut u32) -> Result<LogItem> {
        let raft_group_id = r.varint()?;
        let content = match r.u8()? {
            TYPE_ENTRIES => {
                let count = r.varint()?;
                let first_index = if count > 0 { r.varint()? } else { 0 };
                if count > r.buf.len() as u64 {
                    return Err(Error::corruption(format!("entry count {count} exceeds the item bytes")));
                }
                if first_index.checked_add(count).is_none() {
                    return Err(Error::corruption(format!(
                        "entry indexes overflow: {first_index} + {count}"
                    )));
                }
                let start = *entries_size;
                let mut ends = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    let end = r.varint()?;
                    if end < *entries_size as u64 || end > u32::MAX as u64 {
                        return Err(Error::corruption(format!(
                            "entry end offset {end} before the previous one ({entries_size})"
                        )));
                    }
                    *entries_size = end as u32;
                    ends.push(end as u32);
                }
                LogItemContent::Entries { first_index, start, ends }
            }
            TYPE_COMMAND => LogItemContent::Command(Command::decode(r)?),
            TYPE_KV => {
                let op = match r.u8()? {
                    1 => OpType::Put,
                    2 => OpType::Del,
                    t => return Err(Error::corruption(format!("Unrecognized op type: {t}"))),
                };
                let klen = r.varint()?;
                let key = r.bytes(klen)?.to_vec();
                let value = if op == OpType::Put {
                    let vlen = r.varint()?;
                    Some(r.bytes(vlen)?.to_vec())
                } else {
                    None
                };
                LogItemContent::Kv { op, key, value }
            }
            t => return Err(Error::corruption(format!("Unrecognized log item type: {t}"))),
        };
        Ok(LogItem { raft_group_id, content })
    }
}

/// The decoded header of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    /// Length of the whole batch, header included.
    pub len: usize,
    pub compression: CompressionType,
    /// Offset of the item footer from the start of the header.
    pub footer_offset: usize,
}

impl BatchHeader {
    /// Decodes and checks a batch header (the first 16 bytes of `buf`).
    pub fn decode(buf: &[u8]) -> Result<BatchHeader> {
        if buf.len() < LOG_BATCH_HEADER_LEN {
            return Err(Error::corruption(format!("Log batch header too short: {}", buf.len())));
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(&buf[..8]);
        let len_and_type = u64::from_be_bytes(a);
        a.copy_from_slice(&buf[8..16]);
        let footer = u64::from_be_bytes(a);
        let compression = CompressionType::from_u8(len_and_type as u8)?;
        let len = len_and_type >> 8;
        if footer > len {
            return Err(Error::corruption("Log item offset exceeds log batch length"));
        }
        if footer < LOG_BATCH_HEADER_LEN as u64 {
            return Err(Error::corruption("Log item offset is smaller than log batch header length"));
        }
        // The footer holds at least a count byte and a checksum.
        if len - footer < 1 + LOG_BATCH_CHECKSUM_LEN as u64 {
            return Err(Error::corruption(format!("Log item footer too short: {}", len - footer)));
        }
        Ok(BatchHeader { len: len as usize, compression, footer_offset: footer as usize })
    }

    /// Length of the entries blob (checksum included); 0 when the batch has no entries.
    pub fn entries_len(&self) -> usize {
        self.footer_offset - LOG_BATCH_HEADER_LEN
    }
}

/// Verifies `CRC32(body) (^ signature) == u32le trailer` and returns the body.
fn verify_checksum(buf: &[u8], signature: Option<u32>) -> Result<&[u8]> {
    if buf.len() <= LOG_BATCH_CHECKSUM_LEN {
        return Err(Error::corruption(format!("Content too short {}", buf.len())));
    }
    let (body, tail) = buf.split_at(buf.len() - LOG_BATCH_CHECKSUM_LEN);
    let actual = crc32(body);
    let mut expected = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    if let Some(s) = signature {
        expected ^= s;
    }
    if actual != expected {
        return Err(Error::corruption(format!("Checksum expected {expected} but got {actual}")));
    }
    Ok(body)
}

/// Decodes an item footer (count, items, checksum), verifying the checksum.
pub fn decode_items(footer: &[u8], signature: Option<u32>) -> Result<Vec<LogItem>> {
    let body = verify_checksum(footer, signature)?;
    let mut r = Reader::new(body);
    let count = r.varint()?;
    if count > body.len() as u64 {
        return Err(Error::corruption(format!("log item count {count} exceeds the footer bytes")));
    }
    let mut items = Vec::with_capacity(count as usize);
    let mut entries_size = 0u32;
    for _ in 0..count {
        items.push(LogItem::decode(&mut r, &mut entries_size)?);
    }
    if !r.buf.is_empty() {
        return Err(Error::corruption(format!("{} bytes left after the last log item", r.buf.len())));
    }
    Ok(items)
}

/// Verifies and decompresses an entries blob (as stored, checksum included).
pub fn decode_entries_block(blob: &[u8], compression: CompressionType) -> Result<Vec<u8>> {
    if blob.is_empty() {
        return Ok(Vec::new());
    }
    let body = verify_checksum(blob, None)?;
    match compression {
        CompressionType::None => Ok(body.to_vec()),
        CompressionType::Lz4 => lz4_decompress(body),
    }
}

/// The signature XORed into a V2 batch's footer checksum: the file seq's low 32 bits.
pub fn signature_of(id: FileId, version: crate::format::Version) -> Option<u32> {
    if version.has_log_signing() {
        Some(id.seq as u32)
    } else {
        None
    }
}

/// A batch of writes to many raft groups, applied atomically by `Engine::write`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LogBatch {
    pub(crate) items: Vec<LogItem>,
    /// Uncompressed entry bytes of every entries item, back to back.
    pub(crate) entries: Vec<u8>,
    item_size: usize,
}

/// A batch encoded for one file.
pub(crate) struct EncodedBatch {
    pub bytes: Vec<u8>,
    pub header: BatchHeader,
    /// Offset in `bytes` of the footer's checksum (patched with the file signature).
    footer_crc_at: usize,
    footer_crc: u32,
}

impl EncodedBatch {
    /// Patches the footer checksum for a file with `signature`.
    pub fn sign(&mut self, signature: Option<u32>) {
        let c = self.footer_crc ^ signature.unwrap_or(0);
        self.bytes[self.footer_crc_at..self.footer_crc_at + 4].copy_from_slice(&c.to_le_bytes());
    }
}

impl LogBatch {
    pub fn with_capacity(cap: usize) -> LogBatch {
        LogBatch { items: Vec::with_capacity(cap), entries: Vec::new(), item_size: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Bytes this batch would take on disk, uncompressed (raft-engine's estimate).
    pub fn approximate_size(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            LOG_BATCH_HEADER_LEN + self.entries.len() + 2 * LOG_BATCH_CHECKSUM_LEN + 8 + self.item_size
        }
    }

    fn push_item(&mut self, item: LogItem) {
        self.item_size += match &item.content {
            LogItemContent::Entries { ends, .. } => 8 + 1 + 16 + 8 * ends.len(),
            LogItemContent::Command(_) => 8 + 1 + 9,
            LogItemContent::Kv { key, value, .. } => {
                8 + 1 + 17 + key.len() + value.as_ref().map_or(0, |v| v.len())
            }
        };
        self.items.push(item);
    }

    /// Appends raft entries of `region_id` (consecutive indexes), encoded with `M`.
    pub fn add_entries<M: MessageExt>(&mut self, region_id: u64, entries: &[M::Entry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let first_index = M::index(&entries[0]);
        let old_len = self.entries.len();
        let mut ends = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            let index = M::index(e);
            if Some(index) != first_index.checked_add(i as u64) {
                self.entries.truncate(old_len);
                return Err(Error::InvalidArgument(format!(
                    "entries of region {region_id} are not consecutive: index {index} at position {i} after first index {first_index}"
                )));
            }
            if let Err(e) = encode_entry::<M>(e, &mut self.entries) {
                self.entries.truncate(old_len);
                return Err(e);
            }
            if self.entries.len() > MAX_LOG_ENTRIES_SIZE_PER_BATCH {
                self.entries.truncate(old_len);
                return Err(Error::Full);
            }
            ends.push(self.entries.len() as u32);
        }
        self.push_item(LogItem {
            raft_group_id: region_id,
            content: LogItemContent::Entries { first_index, start: old_len as u32, ends },
        });
        Ok(())
    }

    /// Appends already-encoded entries of `region_id` with indexes `first_index`,
    /// `first_index + 1`, ... (the byte-level form of [`LogBatch::add_entries`]).
    pub fn add_raw_entries<B: AsRef<[u8]>>(
        &mut self,
        region_id: u64,
        first_index: u64,
        entries: &[B],
    ) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        if first_index.checked_add(entries.len() as u64).is_none() {
            return Err(Error::InvalidArgument(format!("entry indexes overflow from {first_index}")));
        }
        let total: usize = entries.iter().map(|e| e.as_ref().len()).sum();
        if self.entries.len() + total > MAX_LOG_ENTRIES_SIZE_PER_BATCH {
            return Err(Error::Full);
        }
        let start = self.entries.len() as u32;
        let mut ends = Vec::with_capacity(entries.len());
        for e in entries {
            self.entries.extend_from_slice(e.as_ref());
            ends.push(self.entries.len() as u32);
        }
        self.push_item(LogItem {
            raft_group_id: region_id,
            content: LogItemContent::Entries { first_index, start, ends },
        });
        Ok(())
    }

    pub fn add_command(&mut self, region_id: u64, cmd: Command) {
        self.push_item(LogItem { raft_group_id: region_id, content: LogItemContent::Command(cmd) });
    }

    pub fn delete(&mut self, region_id: u64, key: Vec<u8>) {
        self.push_item(LogItem {
            raft_group_id: region_id,
            content: LogItemContent::Kv { op: OpType::Del, key, value: None },
        });
    }

    /// Puts a key-value pair of `region_id`. Keys starting with `__` are reserved.
    pub fn put(&mut self, region_id: u64, key: Vec<u8>, value: Vec<u8>) -> Result<()> {
        check_user_key(&key)?;
        self.put_unchecked(region_id, key, value);
        Ok(())
    }

    pub(crate) fn put_unchecked(&mut self, region_id: u64, key: Vec<u8>, value: Vec<u8>) {
        self.push_item(LogItem {
            raft_group_id: region_id,
            content: LogItemContent::Kv { op: OpType::Put, key, value: Some(value) },
        });
    }

    /// Puts a protobuf message as the value of `key`.
    #[cfg(feature = "protobuf")]
    pub fn put_message<S: protobuf::Message>(&mut self, region_id: u64, key: Vec<u8>, s: &S) -> Result<()> {
        check_user_key(&key)?;
        let v = s.write_to_bytes()?;
        self.put_unchecked(region_id, key, v);
        Ok(())
    }

    /// Moves everything of `rhs` into this batch, leaving `rhs` empty.
    pub fn merge(&mut self, rhs: &mut LogBatch) -> Result<()> {
        if self.entries.len() + rhs.entries.len() > MAX_LOG_ENTRIES_SIZE_PER_BATCH {
            return Err(Error::Full);
        }
        let shift = self.entries.len() as u32;
        for mut item in rhs.items.drain(..) {
            if let LogItemContent::Entries { start, ends, .. } = &mut item.content {
                *start += shift;
                for e in ends.iter_mut() {
                    *e += shift;
                }
            }
            self.items.push(item);
        }
        self.entries.append(&mut rhs.entries);
        self.item_size += rhs.item_size;
        rhs.item_size = 0;
        Ok(())
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.items.clear();
        self.entries.clear();
        self.item_size = 0;
    }

    /// Encodes the batch; the footer checksum is patched per file by `EncodedBatch::sign`.
    /// `compression_level` is raft-engine's (LZ4 acceleration; None: the default, 1).
    pub(crate) fn encode(
        &self,
        compression_threshold: usize,
        compression_level: Option<usize>,
    ) -> Result<EncodedBatch> {
        let mut buf = Vec::with_capacity(self.approximate_size() + 16);
        buf.resize(LOG_BATCH_HEADER_LEN, 0);
        let mut compression = CompressionType::None;
        if !self.entries.is_empty() {
            if compression_threshold > 0 && self.entries.len() >= compression_threshold {
                lz4_compress_to(&self.entries, &mut buf, compression_level)?;
                compression = CompressionType::Lz4;
            } else {
                buf.extend_from_slice(&self.entries);
            }
            let c = crc32(&buf[LOG_BATCH_HEADER_LEN..]);
            buf.extend_from_slice(&c.to_le_bytes());
        }
        let footer_offset = buf.len();
        put_varint64(&mut buf, self.items.len() as u64);
        for item in &self.items {
            item.encode(&mut buf);
        }
        let footer_crc = crc32(&buf[footer_offset..]);
        let footer_crc_at = buf.len();
        buf.extend_from_slice(&footer_crc.to_le_bytes());
        let len = buf.len();
        buf[..8].copy_from_slice(&(((len as u64) << 8) | compression as u64).to_be_bytes());
        buf[8..16].copy_from_slice(&(footer_offset as u64).to_be_bytes());
        let header = BatchHeader { len, compression, footer_offset };
        Ok(EncodedBatch { bytes: buf, header, footer_crc_at, footer_crc })
    }
}

pub(crate) fn is_internal_key(key: &[u8]) -> bool {
    key.len() > INTERNAL_KEY_PREFIX.len() && key.starts_with(INTERNAL_KEY_PREFIX)
}

fn check_user_key(key: &[u8]) -> Result<()> {
    if is_internal_key(key) {
        return Err(Error::InvalidArgument(format!(
            "key prefix `{INTERNAL_KEY_PREFIX:?}` reserved for internal use"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{LogQueue, Version};

    fn sample() -> LogBatch {
        let mut b = LogBatch::default();
        b.add_raw_entries(7, 10, &[b"aaaa".to_vec(), b"bb".to_vec()]).unwrap();
        b.add_command(7, Command::Compact { index: 5 });
        b.put(8, b"k".to_vec(), b"v".to_vec()).unwrap();
        b.delete(8, b"gone".to_vec());
        b.add_raw_entries(9, 1, &[b"ccc".to_vec()]).unwrap();
        b.add_command(10, Command::Clean);
        b
    }

    fn decode_whole(bytes: &[u8], sig: Option<u32>) -> (BatchHeader, Vec<LogItem>, Vec<u8>) {
        let h = BatchHeader::decode(bytes).unwrap();
        assert_eq!(h.len, bytes.len());
        let items = decode_items(&bytes[h.footer_offset..h.len], sig).unwrap();
        let blob =
            decode_entries_block(&bytes[LOG_BATCH_HEADER_LEN..h.footer_offset], h.compression).unwrap();
        (h, items, blob)
    }

    #[test]
    fn batch_round_trips_plain_and_compressed() {
        let b = sample();
        for threshold in [0usize, 1, 1 << 20] {
            let mut enc = b.encode(threshold, None).unwrap();
            let sig = signature_of(FileId::new(LogQueue::Append, 0x1_0000_0003), Version::V2);
            assert_eq!(sig, Some(3));
            enc.sign(sig);
            let (h, items, blob) = decode_whole(&enc.bytes, sig);
            assert_eq!(
                h.compression,
                if threshold == 1 { CompressionType::Lz4 } else { CompressionType::None }
            );
            assert_eq!(items, b.items);
            assert_eq!(blob, b"aaaabbccc");
            // Unsigned reading of a signed batch fails its checksum (the stale-batch trick).
            assert!(decode_items(&enc.bytes[h.footer_offset..], None).is_err());
        }
    }

    #[test]
    fn exact_bytes_of_a_small_batch() {
        let mut b = LogBatch::default();
        b.add_raw_entries(1, 5, &[b"xy".to_vec()]).unwrap();
        let enc = b.encode(0, None).unwrap();
        let blob_crc = crc32(b"xy").to_le_bytes();
        let mut want = Vec::new();
        want.extend_from_slice(&(32u64 << 8).to_be_bytes());
        want.extend_from_slice(&22u64.to_be_bytes());
        want.extend_from_slice(b"xy");
        want.extend_from_slice(&blob_crc);
        // count 1 | group 1 | type 1 | count 1 | first 5 | end 2
        let items = [1u8, 1, 1, 1, 5, 2];
        want.extend_from_slice(&items);
        want.extend_from_slice(&crc32(&items).to_le_bytes());
        assert_eq!(enc.bytes, want);
    }

    #[test]
    fn merge_shifts_entry_offsets() {
        let mut a = LogBatch::default();
        a.add_raw_entries(1, 1, &[b"12".to_vec()]).unwrap();
        let mut b = sample();
        a.merge(&mut b).unwrap();
        assert!(b.is_empty());
        let (_, items, blob) = decode_whole(&a.encode(0, None).unwrap().bytes, None);
        assert_eq!(blob, b"12aaaabbccc");
        assert_eq!(items[1].content, LogItemContent::Entries { first_index: 10, start: 2, ends: vec![6, 8] });
    }

    #[test]
    fn reserved_keys_are_refused() {
        let mut b = LogBatch::default();
        assert!(matches!(b.put(1, b"__x".to_vec(), vec![]), Err(Error::InvalidArgument(_))));
        b.put(1, b"__".to_vec(), vec![]).unwrap();
    }

    #[test]
    fn corrupt_batches_give_errors_not_panics() {
        let enc = sample().encode(0, None).unwrap();
        let h = BatchHeader::decode(&enc.bytes).unwrap();
        // Flip every byte of the footer in turn: always an error (checksum), never a panic.
        for i in h.footer_offset..h.len {
            let mut bad = enc.bytes.clone();
            bad[i] ^= 0x55;
            assert!(decode_items(&bad[h.footer_offset..h.len], None).is_err());
        }
        // Garbage with a valid checksum: decoded without panicking.
        let mut rng = 12345u64;
        for _ in 0..2000 {
            let n = (rng % 40) as usize;
            let mut body: Vec<u8> = (0..n)
                .map(|_| {
                    rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (rng >> 56) as u8
                })
                .collect();
            let c = crc32(&body);
            body.extend_from_slice(&c.to_le_bytes());
            let _ = decode_items(&body, None);
        }
        // Headers: footer beyond length, footer inside the header, unknown compression.
        let mut hdr = [0u8; 16];
        hdr[..8].copy_from_slice(&(20u64 << 8).to_be_bytes());
        hdr[8..].copy_from_slice(&30u64.to_be_bytes());
        assert!(BatchHeader::decode(&hdr).is_err());
        hdr[8..].copy_from_slice(&8u64.to_be_bytes());
        assert!(BatchHeader::decode(&hdr).is_err());
        hdr[..8].copy_from_slice(&((40u64 << 8) | 9).to_be_bytes());
        hdr[8..].copy_from_slice(&16u64.to_be_bytes());
        assert!(BatchHeader::decode(&hdr).is_err());
        assert!(BatchHeader::decode(&[0u8; 16]).is_err());
    }
}
