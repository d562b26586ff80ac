//! RocksDB 11's compaction progress records (db/version_edit.{h,cc}: SubcompactionProgress,
//! SubcompactionProgressPerLevel), the payload of the version-edit tag 8202 that
//! `DB::OpenAndCompact(allow_resumption = true)` writes to `COMPACTION_PROGRESS-<time>` in
//! its output directory (a log file in the MANIFEST's framing, one edit per record). Shale
//! reads them for `ldb compaction_progress_dump`; its engine writes none (it has no
//! OpenAndCompact). The format's doc is docs/compaction-progress.md.
//!
//! ```text
//! version edit:  ... | varint32 8202 | varint32 n | progress (n bytes) | ...
//!
//! progress:      { varint32 tag | varint32 len | value } ... | varint32 1 (end)
//!   tag 2  next internal key to compact   value = internal key (user key | seq<<8|type fixed64)
//!   tag 3  processed input records        value = varint64
//!   tag 4  output level progress          value = per-level progress
//!   tag 5  proximal output level progress value = per-level progress
//!   other  tag & (1<<16): skipped; else NotSupported "unsupported critical custom field"
//!
//! per-level:     { varint32 tag | varint32 len | value } ... | varint32 1 (end)
//!   tag 3  processed output records       value = varint64
//!   tag 2  output files (new since the last record)
//!          value = varint32 count | count x ( varint32 len | varint32 103 | NewFile4 body )
//!                  (a MANIFEST NewFile4 entry, level written as -1)
//!   other  tag & (1<<16): skipped; else NotSupported
//! ```

use crate::coding::{decode_varint64, put_length_prefixed_slice, put_varint32, put_varint64, Decoder};
use crate::error::{Error, Result};
use crate::version::edit::{FileMetaData, VersionEdit, TAG_NEW_FILE4};

const END: u32 = 1;
const NEXT_KEY: u32 = 2;
const INPUT_RECORDS: u32 = 3;
const OUTPUT_LEVEL: u32 = 4;
const PROXIMAL_OUTPUT_LEVEL: u32 = 5;
const LEVEL_OUTPUT_FILES: u32 = 2;
const LEVEL_OUTPUT_RECORDS: u32 = 3;
const SAFE_IGNORE: u32 = 1 << 16;

/// The progress of one output level of a subcompaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelProgress {
    pub num_processed_output_records: u64,
    /// The output files this record adds (RocksDB persists only the new ones each time).
    pub output_files: Vec<FileMetaData>,
}

/// One persisted snapshot of a subcompaction's progress.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubcompactionProgress {
    /// Empty: none recorded.
    pub next_internal_key_to_compact: Vec<u8>,
    pub num_processed_input_records: u64,
    pub output_level: LevelProgress,
    pub proximal_output_level: LevelProgress,
}

fn corrupt(what: &str, msg: &str) -> Error {
    Error::corruption(format!("{what}: {msg}"))
}

fn critical() -> Error {
    Error::not_supported("SubcompactionProgress: unsupported critical custom field")
}

impl LevelProgress {
    fn decode(src: &[u8]) -> Result<LevelProgress> {
        const W: &str = "SubcompactionProgressPerLevel";
        let mut p = LevelProgress::default();
        let mut d = Decoder::new(src);
        loop {
            let tag = d.varint32().ok_or_else(|| corrupt(W, "tag error"))?;
            if tag == END {
                return Ok(p);
            }
            let v = d.length_prefixed().ok_or_else(|| corrupt(W, "field length prefixed slice error"))?;
            match tag {
                LEVEL_OUTPUT_RECORDS => {
                    p.num_processed_output_records = decode_varint64(v)
                        .map(|(n, _)| n)
                        .ok_or_else(|| corrupt(W, "invalid num_processed_output_records_"))?;
                }
                LEVEL_OUTPUT_FILES => p.output_files = decode_files(v)?,
                _ if tag & SAFE_IGNORE != 0 => {}
                _ => return Err(critical()),
            }
        }
    }

    fn encode(&self, dst: &mut Vec<u8>) {
        if self.num_processed_output_records > 0 {
            let mut n = Vec::new();
            put_varint64(&mut n, self.num_processed_output_records);
            put_varint32(dst, LEVEL_OUTPUT_RECORDS);
            put_length_prefixed_slice(dst, &n);
        }
        if !self.output_files.is_empty() {
            let mut files = Vec::new();
            put_varint32(&mut files, self.output_files.len() as u32);
            for f in &self.output_files {
                // A one-file edit is `varint32 103 | body`; the level is written as -1.
                let edit = VersionEdit { new_files: vec![(u32::MAX, f.clone())], ..VersionEdit::default() };
                let mut one = Vec::new();
                edit.encode(&mut one);
                put_length_prefixed_slice(&mut files, &one);
            }
            put_varint32(dst, LEVEL_OUTPUT_FILES);
            put_length_prefixed_slice(dst, &files);
        }
        put_varint32(dst, END);
    }

    /// RocksDB's `SubcompactionProgressPerLevel::ToString` after decoding (nothing counted
    /// as persisted yet).
    pub fn debug_string(&self) -> String {
        format!(
            "SubcompactionProgressPerLevel{{ num_processed_output_records={}, output_files_count={}, \
             last_persisted_output_files_count=0 }}",
            self.num_processed_output_records,
            self.output_files.len()
        )
    }
}

fn decode_files(src: &[u8]) -> Result<Vec<FileMetaData>> {
    const W: &str = "SubcompactionProgressPerLevel";
    let mut d = Decoder::new(src);
    let count = d.varint32().ok_or_else(|| corrupt(W, "new output file count"))?;
    let mut files = Vec::new();
    for _ in 0..count {
        let one = d.length_prefixed().ok_or_else(|| corrupt(W, "output file metadata"))?;
        let mut t = Decoder::new(one);
        if t.varint32() != Some(TAG_NEW_FILE4) {
            return Err(corrupt(W, "expected kNewFile4 tag"));
        }
        let edit = VersionEdit::decode(one).map_err(|e| {
            let text = e.to_string();
            let msg = text.strip_prefix("Corruption: VersionEdit: ").unwrap_or(&text);
            corrupt(W, msg)
        })?;
        match <[(u32, FileMetaData); 1]>::try_from(edit.new_files) {
            Ok([(_, f)]) => files.push(f),
            Err(_) => return Err(corrupt(W, "output file metadata")),
        }
    }
    Ok(files)
}

impl SubcompactionProgress {
    /// Parses the payload of a version edit's tag 8202.
    pub fn decode(src: &[u8]) -> Result<SubcompactionProgress> {
        const W: &str = "SubcompactionProgress";
        let mut p = SubcompactionProgress::default();
        let mut d = Decoder::new(src);
        loop {
            let tag = d.varint32().ok_or_else(|| corrupt(W, "custom field tag error"))?;
            if tag == END {
                return Ok(p);
            }
            let v =
                d.length_prefixed().ok_or_else(|| corrupt(W, "custom field length prefixed slice error"))?;
            match tag {
                NEXT_KEY => p.next_internal_key_to_compact = v.to_vec(),
                INPUT_RECORDS => {
                    p.num_processed_input_records = decode_varint64(v)
                        .map(|(n, _)| n)
                        .ok_or_else(|| corrupt(W, "invalid num_processed_input_records"))?;
                }
                OUTPUT_LEVEL => p.output_level = LevelProgress::decode(v)?,
                PROXIMAL_OUTPUT_LEVEL => p.proximal_output_level = LevelProgress::decode(v)?,
                _ if tag & SAFE_IGNORE != 0 => {}
                _ => return Err(critical()),
            }
        }
    }

    /// The payload as RocksDB's `SubcompactionProgress::EncodeTo` writes it (every file of
    /// each level counted as new).
    pub fn encode(&self) -> Vec<u8> {
        let mut dst = Vec::new();
        if !self.next_internal_key_to_compact.is_empty() {
            put_varint32(&mut dst, NEXT_KEY);
            put_length_prefixed_slice(&mut dst, &self.next_internal_key_to_compact);
        }
        let mut n = Vec::new();
        put_varint64(&mut n, self.num_processed_input_records);
        put_varint32(&mut dst, INPUT_RECORDS);
        put_length_prefixed_slice(&mut dst, &n);
        for (tag, level) in
            [(OUTPUT_LEVEL, &self.output_level), (PROXIMAL_OUTPUT_LEVEL, &self.proximal_output_level)]
        {
            if !level.output_files.is_empty() {
                let mut b = Vec::new();
                level.encode(&mut b);
                put_varint32(&mut dst, tag);
                put_length_prefixed_slice(&mut dst, &b);
            }
        }
        put_varint32(&mut dst, END);
        dst
    }

    /// RocksDB 11.8.1's `SubcompactionProgress::ToString`.
    pub fn debug_string(&self) -> String {
        let mut s = String::from("SubcompactionProgress{ next_internal_key_to_compact=");
        let k = &self.next_internal_key_to_compact;
        if !k.is_empty() {
            match parse_key(k) {
                Some((user_key, seq, ty)) => {
                    s.push_str("user_key(hex)=");
                    s.push_str(&hex(user_key));
                    s.push_str(", seq=");
                    if seq == crate::key::MAX_SEQUENCE_NUMBER {
                        s.push_str("kMaxSequenceNumber");
                    } else {
                        s.push_str(&seq.to_string());
                    }
                    s.push_str(", type=");
                    if ty == VALUE_TYPE_FOR_SEEK {
                        s.push_str("kValueTypeForSeek");
                    } else {
                        s.push_str(&ty.to_string());
                    }
                }
                None => {
                    s.push_str("raw=");
                    s.push_str(&hex(k));
                }
            }
        }
        s.push_str(&format!(
            ", num_processed_input_records={}, output_level_progress={}, proximal_output_level_progress={} }}",
            self.num_processed_input_records,
            self.output_level.debug_string(),
            self.proximal_output_level.debug_string()
        ));
        s
    }
}

/// RocksDB 11's kValueTypeForSeek (kTypeValuePreferredSeqno).
const VALUE_TYPE_FOR_SEEK: u8 = 0x18;

/// RocksDB 11's `ParseInternalKey`: 8+ bytes and a type `IsExtendedValueType` accepts.
fn parse_key(k: &[u8]) -> Option<(&[u8], u64, u8)> {
    let split = k.len().checked_sub(8)?;
    let (user_key, tail) = k.split_at(split);
    let packed = Decoder::new(tail).fixed64()?;
    let ty = (packed & 0xff) as u8;
    matches!(ty, 0x0 | 0x1 | 0x2 | 0x7 | 0xF | 0x11 | 0x14 | 0x16 | 0x18 | 0x1A).then_some((
        user_key,
        packed >> 8,
        ty,
    ))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::version::edit::TAG_SUBCOMPACTION_PROGRESS;

    fn sample() -> SubcompactionProgress {
        let mut key = b"key5".to_vec();
        key.extend_from_slice(&((7u64 << 8) | 1).to_le_bytes());
        let f = FileMetaData {
            number: 12,
            file_size: 1000,
            smallest: [b"a".as_slice(), &((1u64 << 8) | 1).to_le_bytes()].concat(),
            largest: [b"k".as_slice(), &((2u64 << 8) | 1).to_le_bytes()].concat(),
            smallest_seqno: 1,
            largest_seqno: 2,
            ..FileMetaData::default()
        };
        SubcompactionProgress {
            next_internal_key_to_compact: key,
            num_processed_input_records: 42,
            output_level: LevelProgress {
                num_processed_output_records: 40,
                output_files: vec![f.clone(), f],
            },
            proximal_output_level: LevelProgress::default(),
        }
    }

    #[test]
    fn round_trips_and_prints_as_rocksdb() {
        let p = sample();
        let back = SubcompactionProgress::decode(&p.encode()).unwrap();
        assert_eq!(back.num_processed_input_records, 42);
        assert_eq!(back.output_level.output_files.len(), 2);
        assert_eq!(back.output_level.output_files[0].number, 12);
        assert_eq!(
            back.debug_string(),
            "SubcompactionProgress{ next_internal_key_to_compact=user_key(hex)=6B657935, seq=7, type=1, \
             num_processed_input_records=42, output_level_progress=SubcompactionProgressPerLevel{ \
             num_processed_output_records=40, output_files_count=2, last_persisted_output_files_count=0 }, \
             proximal_output_level_progress=SubcompactionProgressPerLevel{ num_processed_output_records=0, \
             output_files_count=0, last_persisted_output_files_count=0 } }"
        );
        // Inside a version edit.
        let edit = VersionEdit { subcompaction_progress: Some(p.encode()), ..VersionEdit::default() };
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        let mut d = Decoder::new(&rec);
        assert_eq!(d.varint32(), Some(TAG_SUBCOMPACTION_PROGRESS));
        assert_eq!(VersionEdit::decode(&rec).unwrap().subcompaction_progress, Some(p.encode()));
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let good = sample().encode();
        for cut in 0..good.len() {
            let _ = SubcompactionProgress::decode(&good[..cut]);
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0xFF;
            let _ = SubcompactionProgress::decode(&bad);
        }
        assert!(SubcompactionProgress::decode(&[])
            .unwrap_err()
            .to_string()
            .contains("custom field tag error"));
        // An unknown critical tag.
        let e = SubcompactionProgress::decode(&[9, 0, 1]).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotSupported);
        // An unknown tag that may be ignored.
        let mut ok = Vec::new();
        put_varint32(&mut ok, SAFE_IGNORE | 3);
        put_length_prefixed_slice(&mut ok, b"x");
        put_varint32(&mut ok, END);
        assert!(SubcompactionProgress::decode(&ok).is_ok());
        // A key too short to be an internal key prints raw.
        let p = SubcompactionProgress { next_internal_key_to_compact: b"ab".to_vec(), ..Default::default() };
        assert!(p.debug_string().contains("next_internal_key_to_compact=raw=6162,"));
    }
}
