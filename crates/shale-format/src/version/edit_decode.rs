//! Decoding of version edits (the layout is drawn in edit.rs). Every malformed input is an
//! error, never a panic: known tags are parsed, unknown tags with the safe-ignore bit are
//! skipped, other unknown tags are Corruption.

use crate::coding::{decode_varint64, Decoder};
use crate::error::{Error, Result};
use crate::version::edit::*;

/// The custom fields closing a blob file record, up to the end marker 0.
fn skip_blob_custom_fields(d: &mut Decoder<'_>, what: &str) -> Result<()> {
    loop {
        let tag = d.varint32().ok_or_else(|| bad(format!("{what}: Error decoding custom field tag")))?;
        if tag == 0 {
            return Ok(());
        }
        if tag & FIELD_NON_SAFE_IGNORE_MASK != 0 {
            return Err(bad(format!("{what}: Forward incompatible custom field encountered")));
        }
        d.length_prefixed().ok_or_else(|| bad(format!("{what}: Error decoding custom field value")))?;
    }
}

impl VersionEdit {
    /// Parses one MANIFEST record.
    pub fn decode(src: &[u8]) -> Result<VersionEdit> {
        let mut edit = VersionEdit::default();
        let mut d = Decoder::new(src);
        while !d.is_empty() {
            let tag = d.varint32().ok_or_else(|| bad("invalid tag"))?;
            edit.decode_field(tag, &mut d)?;
        }
        Ok(edit)
    }

    fn decode_field(&mut self, tag: u32, d: &mut Decoder<'_>) -> Result<()> {
        match tag {
            TAG_DB_ID => self.db_id = Some(string(d, "db id")?),
            TAG_COMPARATOR => self.comparator = Some(string(d, "comparator name")?),
            TAG_LOG_NUMBER => self.log_number = Some(d.varint64().ok_or_else(|| bad("log number"))?),
            TAG_PREV_LOG_NUMBER => {
                self.prev_log_number = Some(d.varint64().ok_or_else(|| bad("previous log number"))?)
            }
            TAG_NEXT_FILE_NUMBER => {
                self.next_file_number = Some(d.varint64().ok_or_else(|| bad("next file number"))?)
            }
            TAG_MAX_COLUMN_FAMILY => {
                self.max_column_family = Some(d.varint32().ok_or_else(|| bad("max column family"))?)
            }
            TAG_MIN_LOG_NUMBER_TO_KEEP => {
                self.min_log_number_to_keep = Some(d.varint64().ok_or_else(|| bad("min log number to keep"))?)
            }
            TAG_LAST_SEQUENCE => {
                self.last_sequence = Some(d.varint64().ok_or_else(|| bad("last sequence number"))?)
            }
            TAG_COMPACT_CURSOR => {
                let level = d.varint32();
                let key = d.length_prefixed().filter(|k| valid_internal_key(k));
                let (Some(level), Some(key)) = (level, key) else { return Err(bad("compaction cursor")) };
                self.compact_cursors.push((level, key.to_vec()));
            }
            TAG_DELETED_FILE => {
                let (Some(level), Some(number)) = (d.varint32(), d.varint64()) else {
                    return Err(bad("deleted file"));
                };
                self.deleted_files.push((level, number));
            }
            TAG_NEW_FILE | TAG_NEW_FILE2 | TAG_NEW_FILE3 => {
                let f = decode_old_new_file(tag, d).ok_or_else(|| {
                    bad(match tag {
                        TAG_NEW_FILE => "new-file entry",
                        TAG_NEW_FILE2 => "new-file2 entry",
                        _ => "new-file3 entry",
                    })
                })?;
                self.new_files.push(f);
            }
            TAG_NEW_FILE4 => self.decode_new_file4(d)?,
            TAG_BLOB_FILE_ADDITION | TAG_BLOB_FILE_ADDITION_OLD => {
                let (Some(number), Some(total_blob_count), Some(total_blob_bytes)) =
                    (d.varint64(), d.varint64(), d.varint64())
                else {
                    return Err(bad("BlobFileAddition: Error decoding blob file number, count or bytes"));
                };
                let method = d
                    .length_prefixed()
                    .ok_or_else(|| bad("BlobFileAddition: Error decoding checksum method"))?;
                let value = d
                    .length_prefixed()
                    .ok_or_else(|| bad("BlobFileAddition: Error decoding checksum value"))?;
                skip_blob_custom_fields(d, "BlobFileAddition")?;
                self.blob_file_additions.push(BlobFileAddition {
                    number,
                    total_blob_count,
                    total_blob_bytes,
                    checksum_method: method.to_vec(),
                    checksum_value: value.to_vec(),
                });
            }
            TAG_BLOB_FILE_GARBAGE | TAG_BLOB_FILE_GARBAGE_OLD => {
                let (Some(number), Some(garbage_blob_count), Some(garbage_blob_bytes)) =
                    (d.varint64(), d.varint64(), d.varint64())
                else {
                    return Err(bad("BlobFileGarbage: Error decoding blob file number, count or bytes"));
                };
                skip_blob_custom_fields(d, "BlobFileGarbage")?;
                self.blob_file_garbages.push(BlobFileGarbage {
                    number,
                    garbage_blob_count,
                    garbage_blob_bytes,
                });
            }
            TAG_WAL_ADDITION => self.wal_additions.push(decode_wal_addition(d)?),
            TAG_WAL_ADDITION2 => {
                let mut body = Decoder::new(
                    d.length_prefixed().ok_or_else(|| bad("WalAddition not prefixed by length"))?,
                );
                self.wal_additions.push(decode_wal_addition(&mut body)?);
            }
            TAG_WAL_DELETION => self.wal_deletion = Some(decode_wal_deletion(d)?),
            TAG_WAL_DELETION2 => {
                let mut body = Decoder::new(
                    d.length_prefixed().ok_or_else(|| bad("WalDeletion not prefixed by length"))?,
                );
                self.wal_deletion = Some(decode_wal_deletion(&mut body)?);
            }
            TAG_COLUMN_FAMILY => {
                self.column_family = d.varint32().ok_or_else(|| bad("set column family id"))?
            }
            TAG_COLUMN_FAMILY_ADD => self.column_family_add = Some(string(d, "column family add")?),
            TAG_COLUMN_FAMILY_DROP => self.is_column_family_drop = true,
            TAG_IN_ATOMIC_GROUP => {
                self.is_in_atomic_group = true;
                self.remaining_entries = d.varint32().ok_or_else(|| bad("remaining entries"))?;
            }
            TAG_FULL_HISTORY_TS_LOW => {
                let ts = d.length_prefixed().ok_or_else(|| bad("full_history_ts_low"))?;
                if ts.is_empty() {
                    return Err(bad("full_history_ts_low: empty"));
                }
                self.full_history_ts_low = Some(ts.to_vec());
            }
            TAG_PERSIST_USER_DEFINED_TIMESTAMPS => {
                let v = d.length_prefixed().ok_or_else(|| bad("persist_user_defined_timestamps"))?;
                if v.len() != 1 {
                    return Err(bad("persist_user_defined_timestamps field wrong size"));
                }
                self.persist_user_defined_timestamps = Some(v[0] == 1);
            }
            TAG_SUBCOMPACTION_PROGRESS => {
                let v =
                    d.length_prefixed().ok_or_else(|| bad("SubcompactionProgress not prefixed by length"))?;
                self.subcompaction_progress = Some(v.to_vec());
            }
            TAG_LAST_COMPACTED_MANIFEST_FILE_SIZE => {
                let v = d.length_prefixed().ok_or_else(|| bad("last compacted manifest file size"))?;
                let (size, _) = decode_varint64(v).ok_or_else(|| bad("last compacted manifest file size"))?;
                self.last_compacted_manifest_file_size = Some(size);
            }
            _ if tag & TAG_SAFE_IGNORE_MASK != 0 => {
                let len = d.varint32().ok_or_else(|| bad("safely ignoreable tag length error"))?;
                d.bytes(len as usize).ok_or_else(|| bad("safely ignoreable tag length error"))?;
            }
            _ => return Err(bad(format!("unknown tag {tag}"))),
        }
        Ok(())
    }

    fn decode_new_file4(&mut self, d: &mut Decoder<'_>) -> Result<()> {
        let (level, mut f) = decode_file_head(d, true, false).ok_or_else(|| bad("new-file4 entry"))?;
        loop {
            let field = d.varint32().ok_or_else(|| bad("new-file4 custom field"))?;
            if field == FIELD_TERMINATE {
                break;
            }
            let v = d
                .length_prefixed()
                .ok_or_else(|| bad("new-file4 custom field length prefixed slice error"))?;
            let varint = |what: &str| decode_varint64(v).map(|(x, _)| x).ok_or_else(|| bad(what));
            match field {
                FIELD_PATH_ID => {
                    if v.len() != 1 {
                        return Err(bad("path_id field wrong size"));
                    }
                    if v[0] as u32 > MAX_PATH_ID {
                        return Err(bad("path_id wrong value"));
                    }
                    f.path_id = v[0] as u32;
                }
                FIELD_OLDEST_ANCESTER_TIME => {
                    f.oldest_ancester_time = varint("invalid oldest ancester time")?
                }
                FIELD_FILE_CREATION_TIME => f.file_creation_time = varint("invalid file creation time")?,
                FIELD_FILE_CHECKSUM => f.file_checksum = v.to_vec(),
                FIELD_FILE_CHECKSUM_FUNC_NAME => {
                    f.file_checksum_func_name = String::from_utf8_lossy(v).into_owned()
                }
                FIELD_NEED_COMPACTION => {
                    if v.len() != 1 {
                        return Err(bad("need_compaction field wrong size"));
                    }
                    f.marked_for_compaction = v[0] == 1;
                }
                FIELD_MIN_LOG_NUMBER_TO_KEEP_HACK => {
                    let n =
                        Decoder::new(v).fixed64().ok_or_else(|| bad("deleted log number malformatted"))?;
                    self.min_log_number_to_keep = Some(n);
                }
                FIELD_OLDEST_BLOB_FILE_NUMBER => {
                    f.oldest_blob_file_number = varint("invalid oldest blob file number")?
                }
                FIELD_TEMPERATURE => {
                    if v.len() != 1 {
                        return Err(bad("temperature field wrong size"));
                    }
                    if v[0] <= MAX_KNOWN_TEMPERATURE {
                        f.temperature = v[0];
                    }
                }
                FIELD_UNIQUE_ID => {
                    let mut u = Decoder::new(v);
                    match (u.fixed64(), u.fixed64(), u.is_empty()) {
                        (Some(a), Some(b), true) => f.unique_id = Some([a, b]).filter(|id| *id != [0, 0]),
                        _ => return Err(bad("invalid unique id")),
                    }
                }
                FIELD_EPOCH_NUMBER => f.epoch_number = varint("invalid epoch number")?,
                FIELD_COMPENSATED_RANGE_DELETION_SIZE => {
                    f.compensated_range_deletion_size = varint("Invalid compensated range deletion size")?
                }
                FIELD_TAIL_SIZE => f.tail_size = varint("invalid tail start offset")?,
                FIELD_USER_DEFINED_TIMESTAMPS_PERSISTED => {
                    if v.len() != 1 {
                        return Err(bad("user-defined timestamps persisted field wrong size"));
                    }
                    f.user_defined_timestamps_persisted = v[0] == 1;
                }
                FIELD_MIN_TIMESTAMP => f.min_timestamp = v.to_vec(),
                FIELD_MAX_TIMESTAMP => f.max_timestamp = v.to_vec(),
                FIELD_FILE_OPEN_METADATA => f.file_open_metadata = v.to_vec(),
                _ if field & FIELD_NON_SAFE_IGNORE_MASK != 0 => {
                    return Err(bad(format!("new-file4 custom field {field} not supported")))
                }
                _ => {} // a field from a newer writer that may be ignored
            }
        }
        self.new_files.push((level, f));
        Ok(())
    }
}

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::corruption(format!("VersionEdit: {msg}"))
}

fn string(d: &mut Decoder<'_>, what: &str) -> Result<String> {
    let s = d.length_prefixed().ok_or_else(|| bad(what))?;
    Ok(String::from_utf8_lossy(s).into_owned())
}

/// Reads `level | number | [path id] | size | smallest | largest | [seqnos]`.
fn decode_file_head(d: &mut Decoder<'_>, seqnos: bool, path: bool) -> Option<(u32, FileMetaData)> {
    let mut f = FileMetaData::default();
    let level = d.varint32()?;
    f.number = d.varint64()?;
    if path {
        // RocksDB keeps only path ids 0..=3 (two bits beside the file number); a larger
        // one could not be written back.
        f.path_id = d.varint32().filter(|&p| p <= MAX_PATH_ID)?;
    }
    f.file_size = d.varint64()?;
    f.smallest = d.length_prefixed().filter(|k| valid_internal_key(k))?.to_vec();
    f.largest = d.length_prefixed().filter(|k| valid_internal_key(k))?.to_vec();
    if seqnos {
        f.smallest_seqno = d.varint64()?;
        f.largest_seqno = d.varint64()?;
    }
    Some((level, f))
}

fn decode_old_new_file(tag: u32, d: &mut Decoder<'_>) -> Option<(u32, FileMetaData)> {
    match tag {
        TAG_NEW_FILE => decode_file_head(d, false, false),
        TAG_NEW_FILE2 => decode_file_head(d, true, false),
        _ => decode_file_head(d, true, true),
    }
}

fn decode_wal_addition(d: &mut Decoder<'_>) -> Result<WalAddition> {
    let err = |m: &str| Error::corruption(format!("WalAddition: {m}"));
    let number = d.varint64().ok_or_else(|| err("Error decoding WAL log number"))?;
    let mut wal = WalAddition { number, synced_size: None };
    loop {
        match d.varint32().ok_or_else(|| err("Error decoding tag"))? {
            1 => return Ok(wal),
            2 => wal.synced_size = Some(d.varint64().ok_or_else(|| err("Error decoding WAL file size"))?),
            t => return Err(err(&format!("Unknown tag {t}"))),
        }
    }
}

fn decode_wal_deletion(d: &mut Decoder<'_>) -> Result<u64> {
    d.varint64().ok_or_else(|| Error::corruption("WalDeletion: Error decoding WAL log number"))
}
