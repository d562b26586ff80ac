//! Wide-column entities: RocksDB's value type `kTypeWideColumnEntity` (0x16), the value of a
//! `PutEntity` (db/wide/wide_column_serialization.h of RocksDB 11.8.1).
//!
//! ```text
//! version 1 (what RocksDB's PutEntity writes, and Shale):
//!   version=1 varint32 | n varint32
//!   | n x ( name_size varint32 | name bytes | value_size varint32 )
//!   | value_0 bytes | ... | value_{n-1} bytes                 (exactly to the end)
//! version 2 (RocksDB writes it when column values go to blob files):
//!   version=2 varint32 | n varint32
//!   | name_sizes_bytes varint32 | value_sizes_bytes varint32 | names_bytes varint32
//!   | n x type byte        (0x1 inline value, 0x11 blob index)
//!   | n x name_size varint32   (name_sizes_bytes in all)
//!   | n x value_size varint32  (value_sizes_bytes in all)
//!   | names, concatenated      (names_bytes in all)
//!   | values, concatenated     (exactly to the end)
//! ```
//! Names are strictly ascending (bytewise); the default column has the empty name, so it is
//! the first when present. A read that is not column-aware (Get, an iterator's `value()`)
//! sees the default column's value, or an empty value when the entity has none, as RocksDB's.
//! A column whose value is a blob reference (version 2, type 0x11) holds a blob index
//! (`blob/format.rs`); readers resolve it through their blob fetcher before the entity
//! leaves the read path (`resolve_blob_columns`, `default_column_resolved`), as RocksDB's
//! `WideColumnSerialization::ResolveEntityBlobColumns` / `ResolveDefaultColumnBlobReference`.
//! The functions here that take no fetcher refuse a blob column with RocksDB's Corruption.

use crate::coding::{put_length_prefixed_slice, put_varint32, Decoder};
use crate::error::{Error, Result};

/// RocksDB's `kTypeValue` and `kTypeBlobIndex` as column types of a version-2 entity.
const COLUMN_INLINE: u8 = 0x1;
const COLUMN_BLOB: u8 = 0x11;

/// An entity's columns as owned (name, value) pairs, sorted by name.
pub type WideColumns = Vec<(Vec<u8>, Vec<u8>)>;

/// One decoded column: its name, its stored value, and whether that value is a blob index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column<'a> {
    pub name: &'a [u8],
    pub value: &'a [u8],
    pub blob: bool,
}

/// Sorts `columns` by name and encodes them (version 1). Duplicate names are refused, as
/// RocksDB's `WriteBatch::PutEntity` refuses them ("Wide columns out of order").
pub fn serialize(columns: &[(&[u8], &[u8])]) -> Result<Vec<u8>> {
    let mut sorted: Vec<(&[u8], &[u8])> = columns.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(Error::corruption("Wide columns out of order"));
    }
    let len_of = |n: usize, what: &str| {
        u32::try_from(n).map_err(|_| Error::invalid_argument(format!("Wide column {what} too long")))
    };
    let mut out = Vec::new();
    put_varint32(&mut out, 1);
    put_varint32(&mut out, len_of(sorted.len(), "count")?);
    for (name, value) in &sorted {
        len_of(name.len(), "name")?;
        put_length_prefixed_slice(&mut out, name);
        put_varint32(&mut out, len_of(value.len(), "value")?);
    }
    for (_, value) in &sorted {
        out.extend_from_slice(value);
    }
    Ok(out)
}

fn bad(what: &str) -> Error {
    Error::corruption(what)
}

/// Encodes `columns` (sorted by name, no duplicates) as version 2; a column with `blob`
/// set has its blob index as `value` (type 0x11), the others are inline (0x1). RocksDB's
/// `WideColumnSerialization::SerializeV2`, which flush and compaction use when they move
/// column values to blob files. Out-of-order or duplicate names are refused as RocksDB's
/// `ValidateColumnOrder` refuses them, sizes beyond 32 bits with its InvalidArgument.
pub fn serialize_v2(columns: &[Column<'_>]) -> Result<Vec<u8>> {
    let len_of = |n: usize, what: &str| {
        u32::try_from(n).map_err(|_| Error::invalid_argument(format!("Wide column {what} too long")))
    };
    len_of(columns.len(), "count").map_err(|_| Error::invalid_argument("Too many wide columns"))?;
    for w in columns.windows(2) {
        if w[0].name >= w[1].name {
            return Err(Error::corruption("Wide columns out of order"));
        }
    }
    let (mut name_sizes, mut value_sizes) = (Vec::new(), Vec::new());
    let (mut names_bytes, mut values_bytes) = (0usize, 0usize);
    for c in columns {
        put_varint32(&mut name_sizes, len_of(c.name.len(), "name")?);
        put_varint32(&mut value_sizes, len_of(c.value.len(), "value")?);
        names_bytes += c.name.len();
        values_bytes += c.value.len();
    }
    let too_large = |what: &str| Error::invalid_argument(format!("Wide column {what} too large"));
    let name_sizes_len = u32::try_from(name_sizes.len()).map_err(|_| too_large("metadata"))?;
    let value_sizes_len = u32::try_from(value_sizes.len()).map_err(|_| too_large("metadata"))?;
    let names_len =
        u32::try_from(names_bytes).map_err(|_| Error::invalid_argument("Wide column names too large"))?;
    u32::try_from(values_bytes).map_err(|_| Error::invalid_argument("Wide column values too large"))?;
    let mut out = Vec::with_capacity(
        16 + columns.len() + name_sizes.len() + value_sizes.len() + names_bytes + values_bytes,
    );
    put_varint32(&mut out, 2);
    put_varint32(&mut out, columns.len() as u32);
    put_varint32(&mut out, name_sizes_len);
    put_varint32(&mut out, value_sizes_len);
    put_varint32(&mut out, names_len);
    out.extend(columns.iter().map(|c| if c.blob { COLUMN_BLOB } else { COLUMN_INLINE }));
    out.extend_from_slice(&name_sizes);
    out.extend_from_slice(&value_sizes);
    for c in columns {
        out.extend_from_slice(c.name);
    }
    for c in columns {
        out.extend_from_slice(c.value);
    }
    Ok(out)
}

/// Flush and compaction with blob files: `add` is offered each column value of an entity
/// that has no blob column yet and returns the value's blob index when it went to a blob
/// file (RocksDB's `BlobFileBuilder::Add`, which applies `min_blob_size`). The entity
/// written instead, version 2 with those columns as blob indexes; None when the entity is
/// kept as it is (nothing extracted, or it already has blob columns: RocksDB's
/// `ExtractLargeColumnValuesIfNeeded` leaves those to blob garbage collection).
pub fn extract_large_columns(
    entity: &[u8],
    mut add: impl FnMut(&[u8]) -> Result<Option<Vec<u8>>>,
) -> Result<Option<Vec<u8>>> {
    let columns = deserialize(entity)?;
    if columns.iter().any(|c| c.blob) {
        return Ok(None);
    }
    let mut indexes = Vec::with_capacity(columns.len());
    for c in &columns {
        indexes.push(add(c.value)?);
    }
    if indexes.iter().all(Option::is_none) {
        return Ok(None);
    }
    let out: Vec<Column<'_>> = columns
        .iter()
        .zip(&indexes)
        .map(|(c, i)| match i {
            Some(index) => Column { name: c.name, value: index, blob: true },
            None => *c,
        })
        .collect();
    serialize_v2(&out).map(Some)
}

/// What blob garbage collection does with one blob column (see `relocate_blob_columns`).
pub enum Relocation {
    /// The column stays where it is.
    Keep,
    /// The value moved to a new blob file: its new blob index.
    Blob(Vec<u8>),
    /// The value was read and no longer qualifies for a blob file: it goes inline.
    Inline(Vec<u8>),
}

/// Blob garbage collection of an entity: `relocate` is given each blob column's blob index
/// and says what became of it. The entity written instead (version 2 while a blob column
/// remains, else version 1, as RocksDB's `SerializeEntityAfterGC`); None when every column
/// was kept.
pub fn relocate_blob_columns(
    entity: &[u8],
    mut relocate: impl FnMut(&[u8]) -> Result<Relocation>,
) -> Result<Option<Vec<u8>>> {
    let columns = deserialize(entity)?;
    let mut moves = Vec::with_capacity(columns.len());
    for c in &columns {
        moves.push(if c.blob { relocate(c.value)? } else { Relocation::Keep });
    }
    if moves.iter().all(|m| matches!(m, Relocation::Keep)) {
        return Ok(None);
    }
    let out: Vec<Column<'_>> = columns
        .iter()
        .zip(&moves)
        .map(|(c, m)| match m {
            Relocation::Keep => *c,
            Relocation::Blob(index) => Column { name: c.name, value: index, blob: true },
            Relocation::Inline(value) => Column { name: c.name, value, blob: false },
        })
        .collect();
    if out.iter().any(|c| c.blob) {
        serialize_v2(&out).map(Some)
    } else {
        let pairs: Vec<(&[u8], &[u8])> = out.iter().map(|c| (c.name, c.value)).collect();
        serialize(&pairs).map(Some)
    }
}

/// Decodes an entity (version 1 or 2); the whole input must be one entity.
pub fn deserialize(entity: &[u8]) -> Result<Vec<Column<'_>>> {
    let mut d = Decoder::new(entity);
    let version = d.varint32().ok_or_else(|| bad("Error decoding wide column version"))?;
    if version > 2 {
        return Err(bad("Corrupt or unsupported wide column version"));
    }
    let n = d.varint32().ok_or_else(|| bad("Error decoding number of wide columns"))? as usize;
    let columns = if version < 2 { decode_v1(d, n)? } else { decode_v2(d, n)? };
    for w in columns.windows(2) {
        if w[0].name >= w[1].name {
            return Err(bad("Wide columns out of order"));
        }
    }
    Ok(columns)
}

fn decode_v1(mut d: Decoder<'_>, n: usize) -> Result<Vec<Column<'_>>> {
    // Each column takes at least two bytes of index: a count beyond that is corrupt (and
    // would otherwise size an allocation from untrusted data).
    if n > d.remaining().len() / 2 {
        return Err(bad("Error decoding wide column name"));
    }
    let mut index = Vec::with_capacity(n);
    for _ in 0..n {
        let name = d.length_prefixed().ok_or_else(|| bad("Error decoding wide column name"))?;
        let size = d.varint32().ok_or_else(|| bad("Error decoding wide column value size"))?;
        index.push((name, size as usize));
    }
    let mut columns = Vec::with_capacity(n);
    for (name, size) in index {
        let value = d.bytes(size).ok_or_else(|| bad("Error decoding wide column value payload"))?;
        columns.push(Column { name, value, blob: false });
    }
    if !d.is_empty() {
        return Err(bad("Unexpected trailing data after wide column entity"));
    }
    Ok(columns)
}

fn decode_v2(mut d: Decoder<'_>, n: usize) -> Result<Vec<Column<'_>>> {
    let name_sizes_bytes =
        d.varint32().ok_or_else(|| bad("Error decoding wide column name sizes bytes"))? as usize;
    let value_sizes_bytes =
        d.varint32().ok_or_else(|| bad("Error decoding wide column value sizes bytes"))? as usize;
    let names_bytes = d.varint32().ok_or_else(|| bad("Error decoding wide column names bytes"))? as usize;
    let types = d.bytes(n).ok_or_else(|| bad("Error decoding wide column types"))?;
    if types.iter().any(|t| *t != COLUMN_INLINE && *t != COLUMN_BLOB) {
        return Err(bad("Unsupported wide column ValueType"));
    }
    let sections = name_sizes_bytes
        .checked_add(value_sizes_bytes)
        .and_then(|s| s.checked_add(names_bytes))
        .ok_or_else(|| bad("Error decoding wide column sections"))?;
    if d.remaining().len() < sections {
        return Err(bad("Error decoding wide column sections"));
    }
    let mut name_sizes = Decoder::new(d.bytes(name_sizes_bytes).unwrap_or_default());
    let mut value_sizes = Decoder::new(d.bytes(value_sizes_bytes).unwrap_or_default());
    let mut names = Decoder::new(d.bytes(names_bytes).unwrap_or_default());
    let mut values = Decoder::new(d.remaining());
    let mut columns = Vec::with_capacity(n);
    for t in types {
        let ns = name_sizes.varint32().ok_or_else(|| bad("Error decoding wide column name size"))?;
        let vs = value_sizes.varint32().ok_or_else(|| bad("Error decoding wide column value size"))?;
        let name = names.bytes(ns as usize).ok_or_else(|| bad("Error decoding wide column name"))?;
        let value =
            values.bytes(vs as usize).ok_or_else(|| bad("Error decoding wide column value payload"))?;
        if *t == COLUMN_BLOB && value.is_empty() {
            return Err(bad("Empty blob index in wide column"));
        }
        columns.push(Column { name, value, blob: *t == COLUMN_BLOB });
    }
    if !name_sizes.is_empty() || !value_sizes.is_empty() || !names.is_empty() || !values.is_empty() {
        return Err(bad("Wide column section size mismatch"));
    }
    Ok(columns)
}

/// The value a column-unaware read returns for an entity: its default column's, or empty.
/// A default column stored in a blob file is refused (see `default_column_resolved`).
pub fn default_column_value(entity: &[u8]) -> Result<&[u8]> {
    let columns = deserialize(entity)?;
    match columns.first() {
        Some(c) if c.name.is_empty() => {
            if c.blob {
                return Err(Error::corruption(
                    "Cannot resolve blob-backed default column without a blob fetcher",
                ));
            }
            Ok(c.value)
        }
        _ => Ok(&[]),
    }
}

/// Whether the entity holds a column whose value is in a blob file.
pub fn has_blob_columns(entity: &[u8]) -> Result<bool> {
    Ok(deserialize(entity)?.iter().any(|c| c.blob))
}

/// The default column's value, or empty, as `default_column_value`; a default column in a
/// blob file is read with `fetch` (given its blob index), and only that column is fetched,
/// as RocksDB's `GetValueOfDefaultColumn` + `ResolveDefaultColumnBlobReference`.
pub fn default_column_resolved(
    entity: &[u8],
    fetch: impl FnOnce(&[u8]) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    let columns = deserialize(entity)?;
    match columns.first() {
        Some(c) if c.name.is_empty() && c.blob => fetch(c.value),
        Some(c) if c.name.is_empty() => Ok(c.value.to_vec()),
        _ => Ok(Vec::new()),
    }
}

/// The entity with every blob column's value read with `fetch` (given the column's blob
/// index) and put inline, encoded as version 1; None when it has no blob column (the
/// entity is used as it is). RocksDB's `ResolveEntityBlobColumns`: what `GetEntity`, an
/// iterator's columns and a merge onto the entity see.
pub fn resolve_blob_columns(
    entity: &[u8],
    mut fetch: impl FnMut(&[u8]) -> Result<Vec<u8>>,
) -> Result<Option<Vec<u8>>> {
    let columns = deserialize(entity)?;
    if !columns.iter().any(|c| c.blob) {
        return Ok(None);
    }
    let mut values = Vec::with_capacity(columns.len());
    for c in &columns {
        values.push(if c.blob { Some(fetch(c.value)?) } else { None });
    }
    let pairs: Vec<(&[u8], &[u8])> =
        columns.iter().zip(&values).map(|(c, v)| (c.name, v.as_deref().unwrap_or(c.value))).collect();
    serialize(&pairs).map(Some)
}

/// Calls `f` with the blob index of each column stored in a blob file (RocksDB's
/// `ForEachBlobFileNumber`, which links a table to the blob files its entities use).
pub fn for_each_blob_index(entity: &[u8], mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    for c in deserialize(entity)? {
        if c.blob {
            f(c.value)?;
        }
    }
    Ok(())
}

/// `entity` with its default column's value replaced by `value` (added when it has none):
/// the result of a merge onto an entity, as RocksDB's `MergeHelper` builds it.
pub fn with_default_column(entity: &[u8], value: &[u8]) -> Result<Vec<u8>> {
    let columns = deserialize(entity)?;
    if columns.iter().any(|c| c.blob) {
        return Err(blob_column_unresolved());
    }
    let mut out: Vec<(&[u8], &[u8])> = vec![(&[], value)];
    out.extend(columns.iter().filter(|c| !c.name.is_empty()).map(|c| (c.name, c.value)));
    serialize(&out)
}

/// The columns of an entity as owned pairs; a column stored in a blob file is refused
/// (resolve it first with `resolve_blob_columns`).
pub fn owned_columns(entity: &[u8]) -> Result<WideColumns> {
    deserialize(entity)?
        .into_iter()
        .map(|c| if c.blob { Err(blob_column_unresolved()) } else { Ok((c.name.to_vec(), c.value.to_vec())) })
        .collect()
}

/// RocksDB's error for a blob column met where no blob fetcher resolves it (the callers of
/// the fetcher-less functions resolve blob columns first).
fn blob_column_unresolved() -> Error {
    Error::corruption("Cannot resolve blob columns in entity without a blob fetcher")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_round_trip_sorted() {
        let e = serialize(&[(b"b", b"2"), (b"", b"d"), (b"a", b"")]).unwrap();
        // version 1, 3 columns, ("",1) ("a",0) ("b",1), then "d" "2"
        assert_eq!(e, b"\x01\x03\x00\x01\x01a\x00\x01b\x01d2");
        let c = deserialize(&e).unwrap();
        let names: Vec<&[u8]> = c.iter().map(|c| c.name).collect();
        assert_eq!(names, [&b""[..], b"a", b"b"]);
        assert_eq!(default_column_value(&e).unwrap(), b"d");
    }

    #[test]
    fn no_default_column_reads_empty() {
        let e = serialize(&[(b"x", b"1")]).unwrap();
        assert_eq!(default_column_value(&e).unwrap(), b"");
        let m = with_default_column(&e, b"m").unwrap();
        assert_eq!(
            owned_columns(&m).unwrap(),
            vec![(b"".to_vec(), b"m".to_vec()), (b"x".to_vec(), b"1".to_vec())]
        );
    }

    #[test]
    fn duplicates_and_damage_refused() {
        assert!(serialize(&[(b"a", b"1"), (b"a", b"2")]).is_err());
        let e = serialize(&[(b"a", b"1")]).unwrap();
        for cut in 0..e.len() {
            assert!(deserialize(&e[..cut]).is_err(), "prefix {cut}");
        }
        let mut long = e.clone();
        long.push(0);
        assert!(deserialize(&long).is_err());
        assert!(deserialize(b"\x03\x00").is_err());
        assert!(deserialize(b"\x01\xff\xff\xff\xff\x0f").is_err());
    }

    #[test]
    fn v2_inline_and_blob() {
        // version 2, 2 columns: "" inline "v", "b" blob index "\x01..."
        let mut e = vec![2, 2, 2, 2, 1, 0x1, 0x11, 0, 1, 1, 3];
        e.extend_from_slice(b"b");
        e.extend_from_slice(b"v\x01\x02\x03");
        let c = deserialize(&e).unwrap();
        assert_eq!(c[0], Column { name: b"", value: b"v", blob: false });
        assert_eq!(c[1], Column { name: b"b", value: b"\x01\x02\x03", blob: true });
        assert_eq!(default_column_value(&e).unwrap(), b"v");
        assert_eq!(owned_columns(&e).unwrap_err().kind(), crate::ErrorKind::Corruption);
        assert!(with_default_column(&e, b"m").is_err());
        let mut bad_type = e.clone();
        bad_type[5] = 0x2;
        assert!(deserialize(&bad_type).is_err());
    }

    /// A version-2 entity: `cols` are (name, value, blob) sorted by name.
    fn v2(cols: &[(&[u8], &[u8], bool)]) -> Vec<u8> {
        let (mut ns, mut vs, mut names, mut values) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (n, v, _) in cols {
            put_varint32(&mut ns, n.len() as u32);
            put_varint32(&mut vs, v.len() as u32);
            names.extend_from_slice(n);
            values.extend_from_slice(v);
        }
        let mut e = Vec::new();
        for x in [2, cols.len(), ns.len(), vs.len(), names.len()] {
            put_varint32(&mut e, x as u32);
        }
        e.extend(cols.iter().map(|c| if c.2 { COLUMN_BLOB } else { COLUMN_INLINE }));
        for part in [ns, vs, names, values] {
            e.extend_from_slice(&part);
        }
        e
    }

    #[test]
    fn v2_blob_columns_resolve() {
        let e = v2(&[(b"", b"#d", true), (b"a", b"inline", false), (b"b", b"#bb", true)]);
        assert!(has_blob_columns(&e).unwrap());
        let fetch = |i: &[u8]| -> Result<Vec<u8>> { Ok([b"value of ", i].concat()) };
        let mut seen = Vec::new();
        let r = resolve_blob_columns(&e, |i| {
            seen.push(i.to_vec());
            fetch(i)
        })
        .unwrap()
        .unwrap();
        assert_eq!(seen, vec![b"#d".to_vec(), b"#bb".to_vec()]);
        assert_eq!(
            owned_columns(&r).unwrap(),
            vec![
                (b"".to_vec(), b"value of #d".to_vec()),
                (b"a".to_vec(), b"inline".to_vec()),
                (b"b".to_vec(), b"value of #bb".to_vec()),
            ]
        );
        assert_eq!(r[0], 1, "resolved entities are version 1");
        // Only the default column is fetched for a column-unaware read.
        let mut n = 0;
        let d = default_column_resolved(&e, |i| {
            n += 1;
            fetch(i)
        })
        .unwrap();
        assert_eq!((d.as_slice(), n), (&b"value of #d"[..], 1));
        assert_eq!(default_column_value(&e).unwrap_err().kind(), crate::ErrorKind::Corruption);
        let mut idx = Vec::new();
        for_each_blob_index(&e, |i| {
            idx.push(i.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(idx, vec![b"#d".to_vec(), b"#bb".to_vec()]);
        // A fetch failure is the read's failure.
        let err = resolve_blob_columns(&e, |_| Err(Error::corruption("gone"))).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Corruption);
    }

    #[test]
    fn serialize_v2_matches_the_layout() {
        let cols = [(&b""[..], &b"#d"[..], true), (b"a", b"inline", false), (b"bb", b"#b", true)];
        let as_columns: Vec<Column<'_>> =
            cols.iter().map(|(n, v, b)| Column { name: n, value: v, blob: *b }).collect();
        let e = serialize_v2(&as_columns).unwrap();
        assert_eq!(e, v2(&cols));
        assert_eq!(deserialize(&e).unwrap(), as_columns);
        // version 2, 3 columns, 3 bytes of name sizes, 3 of value sizes, 3 of names
        assert_eq!(&e[..8], &[2, 3, 3, 3, 3, COLUMN_BLOB, COLUMN_INLINE, COLUMN_BLOB]);
        let none = serialize_v2(&[]).unwrap();
        assert_eq!(none, [2, 0, 0, 0, 0]);
        assert!(deserialize(&none).unwrap().is_empty());
        let dup =
            [Column { name: b"a", value: b"1", blob: false }, Column { name: b"a", value: b"2", blob: true }];
        assert!(serialize_v2(&dup).is_err());
    }

    #[test]
    fn extract_and_relocate_columns() {
        let e = serialize(&[(b"", b"long default"), (b"a", b"s"), (b"b", b"long b value")]).unwrap();
        let mut offered = Vec::new();
        let x = extract_large_columns(&e, |v| {
            offered.push(v.to_vec());
            Ok((v.len() >= 5).then(|| [b"#", v].concat()))
        })
        .unwrap()
        .unwrap();
        assert_eq!(offered.len(), 3);
        assert_eq!(
            deserialize(&x).unwrap(),
            vec![
                Column { name: b"", value: b"#long default", blob: true },
                Column { name: b"a", value: b"s", blob: false },
                Column { name: b"b", value: b"#long b value", blob: true },
            ]
        );
        // Nothing large, or blob columns already there: kept as it is.
        assert_eq!(extract_large_columns(&e, |_| Ok(None)).unwrap(), None);
        assert_eq!(extract_large_columns(&x, |_| panic!("not offered")).unwrap(), None);
        // Relocation: one column moves, one is kept: still version 2.
        let r = relocate_blob_columns(&x, |i| {
            Ok(if i == b"#long default" { Relocation::Blob(b"#new".to_vec()) } else { Relocation::Keep })
        })
        .unwrap()
        .unwrap();
        assert_eq!(r[0], 2);
        let c = deserialize(&r).unwrap();
        assert_eq!((c[0].value, c[0].blob, c[2].value), (&b"#new"[..], true, &b"#long b value"[..]));
        // Every blob column inline again: version 1.
        let r = relocate_blob_columns(&x, |i| Ok(Relocation::Inline(i[1..].to_vec()))).unwrap().unwrap();
        assert_eq!(r, e);
        assert_eq!(relocate_blob_columns(&x, |_| Ok(Relocation::Keep)).unwrap(), None);
        assert_eq!(relocate_blob_columns(&e, |_| panic!("no blob column")).unwrap(), None);
    }

    #[test]
    fn v2_without_blob_columns_or_default() {
        let e = v2(&[(b"a", b"1", false), (b"b", b"#x", true)]);
        // No default column: empty, nothing fetched.
        assert_eq!(default_column_resolved(&e, |_| panic!("no fetch")).unwrap(), b"");
        let inline = v2(&[(b"", b"d", false), (b"a", b"1", false)]);
        assert!(!has_blob_columns(&inline).unwrap());
        assert_eq!(resolve_blob_columns(&inline, |_| panic!("no fetch")).unwrap(), None);
        assert_eq!(default_column_resolved(&inline, |_| panic!("no fetch")).unwrap(), b"d");
        let v1 = serialize(&[(b"", b"d")]).unwrap();
        assert_eq!(resolve_blob_columns(&v1, |_| panic!("no fetch")).unwrap(), None);
    }
}
