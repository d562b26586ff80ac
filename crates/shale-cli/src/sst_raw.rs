//! `shale sst_dump --command=raw`: RocksDB 11.8.1's `BlockBasedTable::DumpTable`
//! (table/block_based/block_based_table_reader.cc), the text written to `<file>_dump.txt`:
//!
//! ```text
//! Footer Details:            metaindex and index handles (hex, offset, size), magic, format version
//! Block Checksum Type Legend: the five kinds, and the file's
//! Metaindex Details:         the metaindex block's checksum line, then the properties,
//!                            compression dictionary, filter and range deletion blocks'
//! Table Properties:          TableProperties::ToString("\n  ", ": ")
//! Index Details:             the index block's checksum line, each entry (HEX user key:
//!                            handle [and length-prefixed first key], offset, size; ASCII
//!                            key); of a partitioned index, every partition's entries
//! Range deletions:           (when any) each tombstone as a key/value pair
//! Data Block # i @ <handle>  each data block: checksum line, every entry (HEX, ASCII)
//! Data Block Summary:        count, min, max and average block size
//! ```
//!
//! A checksum line shows the block's stored checksum less its context modifier
//! (format_version >= 6), the block's offset, size and compression type byte.
//! "Filter Details" is never printed: sst_dump opens tables without a filter policy, so
//! RocksDB loads no filter reader either.

use std::fmt::Write as _;
use std::sync::Arc;

use shale_format::key::parse_internal_key;
use shale_format::table::block::{Block, IndexFormat};
use shale_format::table::format::{
    checksum_modifier, read_block_with, read_block_with_dict, read_exact_at, read_footer, BlockHandle,
    Footer, BLOCK_BASED_TABLE_MAGIC, BLOCK_TRAILER_SIZE, LEGACY_BLOCK_BASED_TABLE_MAGIC,
};
use shale_format::table::properties::names;
use shale_format::table::Table;

use crate::ldb::fmt::{to_hex, Failure, Res};

const PROPERTIES_BLOCK: &[u8] = b"rocksdb.properties";
const COMPRESSION_DICT_BLOCK: &[u8] = b"rocksdb.compression_dict";
const RANGE_DEL_BLOCK: &[u8] = b"rocksdb.range_del";

/// The dump of the table at `path` (already opened as `table`), as RocksDB writes it.
pub fn dump_table(path: &str, table: &Table, show_seq_type: bool) -> Res<Vec<u8>> {
    let fs = shale_format::fs::default_fs();
    let file = fs.new_random_access_file(std::path::Path::new(path)).map_err(Failure::db)?;
    let size = std::fs::metadata(path).map_err(Failure::io)?.len();
    let stored = read_footer(file.as_ref(), size, path).map_err(Failure::db)?;
    let footer = *table.footer();
    let mut o: Vec<u8> = Vec::new();
    let s = |o: &mut Vec<u8>, t: &str| o.extend_from_slice(t.as_bytes());

    s(&mut o, "Footer Details:\n--------------------------------------\n");
    let handle = |h: &BlockHandle| format!("{} offset: {} size: {}", to_hex(&h.encoded()), h.offset, h.size);
    s(&mut o, &format!("  metaindex handle: {}\n  ", handle(&stored.metaindex_handle)));
    s(&mut o, &format!("index handle: {}\n  ", handle(&stored.index_handle)));
    let legacy = stored.format_version == 0;
    let magic = if legacy { LEGACY_BLOCK_BASED_TABLE_MAGIC } else { BLOCK_BASED_TABLE_MAGIC };
    s(&mut o, &format!("table_magic_number: {magic}\n  "));
    if !legacy {
        s(&mut o, &format!("format version: {}\n", stored.format_version));
    }
    s(&mut o, "\n");

    s(&mut o, "Block Checksum Type Legend:\n--------------------------------------\n");
    s(&mut o, "  0 = kNoChecksum\n  1 = kCRC32c\n  2 = kxxHash\n  3 = kxxHash64\n  4 = kXXH3\n");
    s(&mut o, &format!("  (This file uses checksum type: {})\n\n", footer.checksum as u8));

    s(&mut o, "Metaindex Details:\n--------------------------------------\n");
    let checksum = footer.block_checksum();
    let meta = read_block_with(file.as_ref(), footer.metaindex_handle, checksum, false, path)
        .and_then(Block::new)
        .map_err(Failure::db)?;
    let meta = Arc::new(meta).entries().map_err(Failure::db)?;
    checksum_line(&mut o, file.as_ref(), &footer, footer.metaindex_handle, "Metaindex block", path);
    let mut dict: Vec<u8> = Vec::new();
    for (k, v) in &meta {
        let h = match BlockHandle::decode(v) {
            Ok(h) => h,
            Err(e) => {
                let k = String::from_utf8_lossy(k);
                s(&mut o, &format!("  Skip the block with type {k} due to error: {}\n\n", e));
                continue;
            }
        };
        let what = if k == PROPERTIES_BLOCK {
            ("Properties block handle", "Properties block")
        } else if k == COMPRESSION_DICT_BLOCK {
            dict = read_block_with(file.as_ref(), h, checksum, false, path).map_err(Failure::db)?;
            ("Compression dictionary block handle", "Compression dictionary block")
        } else if k.windows(15).any(|w| w == b"filter.rocksdb.") {
            ("Filter block handle", "Filter block")
        } else if k == RANGE_DEL_BLOCK {
            ("Range deletion block handle", "Range deletion block")
        } else {
            continue;
        };
        s(&mut o, &format!("  {}: {}\n", what.0, to_hex(v)));
        checksum_line(&mut o, file.as_ref(), &footer, h, what.1, path);
    }
    s(&mut o, "\n");

    let p = table.properties();
    s(&mut o, "Table Properties:\n--------------------------------------\n  ");
    o.extend(crate::sst_dump::properties_to_string(p, "\n  ", ": "));
    s(&mut o, "\n");

    // Index Details.
    s(&mut o, "Index Details:\n--------------------------------------\n");
    checksum_line(&mut o, file.as_ref(), &footer, footer.index_handle, "Index block", path);
    let index_type = p.user_collected.get(names::INDEX_TYPE).filter(|v| v.len() == 4);
    let has_first_key = index_type.is_some_and(|v| v.as_slice() == 3u32.to_le_bytes());
    let partitioned = index_type.is_some_and(|v| v.as_slice() == 2u32.to_le_bytes());
    let fmt = IndexFormat {
        key_is_user_key: p.index_key_is_user_key != 0,
        value_delta_encoded: p.index_value_is_delta_encoded != 0,
        has_first_key,
        ..Default::default()
    };
    let read_index = |h: BlockHandle| {
        read_block_with(file.as_ref(), h, checksum, false, path).and_then(Block::new).map(Arc::new)
    };
    let index = read_index(footer.index_handle).map_err(Failure::db)?;
    // A partitioned index (kTwoLevelIndexSearch) is dumped as RocksDB's
    // `PartitionedIndexIterator` walks it: the entries of every partition the top level
    // names, in order (the top level's own entries are not shown).
    let blocks = if partitioned {
        let mut parts = Vec::new();
        let top_fmt = IndexFormat { has_first_key: false, ..fmt };
        let mut it = index.index_iter(&icmp_bytewise(), top_fmt);
        it.seek_to_first();
        while it.valid() {
            parts.push(read_index(it.handle()).map_err(Failure::db)?);
            it.next();
        }
        it.status().map_err(Failure::db)?;
        parts
    } else {
        vec![index]
    };
    let icmp = icmp_bytewise();
    let mut handles: Vec<BlockHandle> = Vec::new();
    s(&mut o, "  Block key hex dump: Data block handle\n  Block key ascii\n\n");
    for block in &blocks {
        let mut it = block.index_iter(&icmp, fmt);
        it.seek_to_first();
        while it.valid() {
            let key = it.key();
            let user_key = if fmt.key_is_user_key { key } else { &key[..key.len().saturating_sub(8)] };
            let h = it.handle();
            // `IndexValue::ToString(hex, have_first_key)`: the full handle, then the
            // length-prefixed first internal key.
            let mut value = h.encoded();
            if has_first_key {
                let first = it.first_internal_key().ok_or_else(|| {
                    Failure::new(format!("Corruption: {path}: bad first key in an index entry"))
                })?;
                shale_format::coding::put_length_prefixed_slice(&mut value, first);
            }
            s(
                &mut o,
                &format!(
                    "  HEX    {}: {} offset {} size {}\n",
                    to_hex(user_key),
                    to_hex(&value),
                    h.offset,
                    h.size
                ),
            );
            s(&mut o, "  ASCII  ");
            for &b in user_key {
                o.push(b);
                o.push(b' ');
            }
            s(&mut o, "\n  ------\n");
            handles.push(h);
            it.next();
        }
        it.status().map_err(Failure::db)?;
    }
    s(&mut o, "\n");

    if !dict.is_empty() {
        s(&mut o, "Compression Dictionary:\n--------------------------------------\n");
        s(&mut o, &format!("  size (bytes): {}\n\n  HEX    {}\n\n", dict.len(), to_hex(&dict)));
    }

    let tombstones = table.range_tombstones();
    if !tombstones.is_empty() {
        s(&mut o, "Range deletions:\n--------------------------------------\n");
        for (k, v) in tombstones {
            key_value(&mut o, k, v, show_seq_type);
        }
        s(&mut o, "\n");
    }

    let (mut min, mut max, mut sum) = (u64::MAX, 0u64, 0u64);
    for (i, h) in handles.iter().enumerate() {
        min = min.min(h.size);
        max = max.max(h.size);
        sum += h.size;
        s(&mut o, &format!("Data Block # {} @ {}\n", i + 1, to_hex(&h.encoded())));
        checksum_line(&mut o, file.as_ref(), &footer, *h, "Data block", path);
        s(&mut o, "--------------------------------------\n");
        let entries = read_block_with_dict(file.as_ref(), *h, checksum, false, path, &dict)
            .and_then(Block::new)
            .and_then(|b| Arc::new(b).entries());
        match entries {
            Ok(entries) => {
                for (k, v) in entries {
                    key_value(&mut o, &k, &v, show_seq_type);
                }
            }
            Err(_) => {
                s(&mut o, "Error reading the block - Skipped \n\n");
                continue;
            }
        }
        s(&mut o, "\n");
    }
    if !handles.is_empty() {
        let n = handles.len() as u64;
        s(&mut o, "Data Block Summary:\n--------------------------------------\n");
        s(
            &mut o,
            &format!("  # data blocks: {n}\n  min data block size: {min}\n  max data block size: {max}\n"),
        );
        s(&mut o, &format!("  avg data block size: {:.6}\n", sum as f64 / n as f64));
    }
    Ok(o)
}

/// `DumpBlockChecksumInfo`: the stored checksum (less the context modifier), offset, size
/// and compression type of the block at `h`.
fn checksum_line(
    o: &mut Vec<u8>,
    file: &dyn shale_format::fs::RandomAccessFile,
    footer: &Footer,
    h: BlockHandle,
    name: &str,
    path: &str,
) {
    let mut line = String::new();
    let Ok(size) = usize::try_from(h.size) else { return };
    let mut buf = vec![0u8; size.saturating_add(BLOCK_TRAILER_SIZE)];
    match read_exact_at(file, h.offset, &mut buf, path) {
        Ok(()) => {
            let t = buf[size];
            let stored = u32::from_le_bytes([buf[size + 1], buf[size + 2], buf[size + 3], buf[size + 4]]);
            let actual = stored.wrapping_sub(checksum_modifier(footer.base_context_checksum, h.offset));
            let _ = writeln!(
                line,
                "  {name} checksum type: {}  checksum value: 0x{actual:x}  offset: {}  size: {size}  compression type: {t}",
                footer.checksum as u8, h.offset
            );
        }
        Err(e) => {
            let _ = writeln!(line, "  ERROR: Failed to read {name} checksum info - {e}");
        }
    }
    o.extend_from_slice(line.as_bytes());
}

/// `DumpKeyValue`: `HEX` and `ASCII` lines of an entry (NUL bytes shown as `\0`).
fn key_value(o: &mut Vec<u8>, key: &[u8], value: &[u8], show_seq_type: bool) {
    let Ok(p) = parse_internal_key(key) else {
        o.extend_from_slice(b"Error parsing internal key - Skipped \n");
        return;
    };
    let line = if show_seq_type {
        format!(
            "  HEX    {}  seq: {}  type: {} : {}\n",
            to_hex(p.user_key),
            p.sequence,
            p.value_type as u8,
            to_hex(value)
        )
    } else {
        format!("  HEX    {}: {}\n", to_hex(p.user_key), to_hex(value))
    };
    o.extend_from_slice(line.as_bytes());
    o.extend_from_slice(b"  ASCII  ");
    let spaced = |o: &mut Vec<u8>, b: &[u8]| {
        for &c in b {
            if c == 0 {
                o.extend_from_slice(b"\\0");
            } else {
                o.push(c);
            }
            o.push(b' ');
        }
    };
    spaced(o, p.user_key);
    o.extend_from_slice(b": ");
    spaced(o, value);
    o.extend_from_slice(b"\n  ------\n");
}

/// The bytewise internal key comparator sst_dump reads index blocks with.
fn icmp_bytewise() -> shale_format::key::InternalKeyComparator {
    shale_format::key::bytewise_internal_comparator()
}
