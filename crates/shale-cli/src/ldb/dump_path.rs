//! `ldb dump --path=<file>` (RocksDB 11.8.1's `DBDumperCommand` without `--db`): one
//! database file dumped by its name's type, as ldb picks it (the name, not the contents):
//!
//! ```text
//! <n>.log       DumpWalFiles: header and values on (as dump_wal --header --print_value)
//! <n>.sst       DumpSstFile: Process/format lines, every entry, then the properties as
//!               name=value lines (--from/--to, --decode_blob_index)
//! MANIFEST-<n>  DumpManifestFile: the summary, with the 64 levels ldb forces
//! <n>.blob      BlobDumpTool: header, footer, every record, summary
//! ```
//! Any other name ldb recognises (CURRENT, IDENTITY, LOCK, LOG, OPTIONS-<n>, ...) fails
//! with `File type not supported`; one it does not, with `Can't parse file type`.

use shale_format::blob::format::{
    BlobFooter, BlobHeader, RecordHeader, FOOTER_SIZE, HEADER_SIZE, RECORD_HEADER_SIZE,
};

use super::fmt::{to_hex, Failure, Res};
use super::{Out, Parsed};

enum Kind {
    Wal,
    Table,
    Manifest,
    Blob,
    Other,
}

/// RocksDB's `ParseFileName`, as far as the dump needs it.
fn kind(name: &str) -> Option<Kind> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return digits(n).then_some(Kind::Manifest);
    }
    if matches!(name, "CURRENT" | "IDENTITY" | "LOCK" | "LOG") || name.starts_with("LOG.old.") {
        return Some(Kind::Other);
    }
    if let Some(n) = name.strip_prefix("OPTIONS-").or_else(|| name.strip_prefix("METADB-")) {
        return digits(n).then_some(Kind::Other);
    }
    let (num, ext) = name.split_once('.')?;
    if !digits(num) {
        return None;
    }
    match ext {
        "log" => Some(Kind::Wal),
        "sst" | "ldb" => Some(Kind::Table),
        "blob" => Some(Kind::Blob),
        "dbtmp" => Some(Kind::Other),
        _ => None,
    }
}

pub fn dump_path(p: &Parsed, path: &str, out: &mut Out<'_>) -> Res<()> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let hex = p.flag("hex") || p.flag("key_hex");
    match kind(name) {
        None => Err(Failure::new(format!("Can't parse file type: {path}"))),
        Some(Kind::Other) => Err(Failure::new(format!("File type not supported: {path}"))),
        Some(Kind::Wal) => super::wal::dump_wal_path(path, out),
        Some(Kind::Table) => {
            let key = |o: &str| -> Res<Option<Vec<u8>>> {
                match p.opt(o) {
                    Some(v) if !v.is_empty() => {
                        Ok(Some(if hex { super::fmt::hex_to_string(v)? } else { v.as_bytes().to_vec() }))
                    }
                    _ => Ok(None),
                }
            };
            let (from, to) = (key("from")?, key("to")?);
            if path.len() <= 4 || !path.ends_with(".sst") {
                return out.write_all(b"Invalid sst file name.\n").map_err(Failure::io);
            }
            crate::sst_dump::dump_sst_for_ldb_with(path, hex, from, to, p.flag("decode_blob_index"), out)
        }
        Some(Kind::Manifest) => {
            let r = match super::manifest::replay(std::path::Path::new(path)) {
                Ok(r) => r,
                Err(f) => {
                    out.flush().map_err(Failure::io)?;
                    eprintln!("Error in processing file {path} {}", f.msg);
                    return Ok(());
                }
            };
            out.write_all(&super::manifest::summary(&r, hex, &Default::default())).map_err(Failure::io)
        }
        Some(Kind::Blob) => {
            let key_hex = hex;
            let value_hex = p.flag("hex") || p.flag("value_hex");
            if let Err(f) = dump_blob(path, key_hex, value_hex, p.flag("dump_uncompressed_blobs"), out) {
                out.flush().map_err(Failure::io)?;
                eprintln!("Failed: {}", f.msg);
            }
            Ok(())
        }
    }
}

/// RocksDB's `GetStringFromCompressionType` (options' names).
fn compression_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "kNoCompression",
        1 => "kSnappyCompression",
        2 => "kZlibCompression",
        3 => "kBZip2Compression",
        4 => "kLZ4Compression",
        5 => "kLZ4HCCompression",
        6 => "kXpressCompression",
        7 => "kZSTD",
        0xff => "kDisableCompressionOption",
        _ => return None,
    })
}

fn range(r: (u64, u64)) -> String {
    if r == (0, 0) {
        "nil".to_string()
    } else {
        format!("({}, {})", r.0, r.1)
    }
}

/// `BlobDumpTool::Run` with the key shown, the blob (or, with `--dump_uncompressed_blobs`,
/// the uncompressed blob) shown, and the summary. What is printed before an error stays
/// printed, as RocksDB's tool writes as it goes.
fn dump_blob(path: &str, key_hex: bool, value_hex: bool, uncompressed: bool, out: &mut Out<'_>) -> Res<()> {
    let data = std::fs::read(path).map_err(|e| match e.kind() {
        // RocksDB's FileExists: NotFound without a message.
        std::io::ErrorKind::NotFound => Failure::new("NotFound: "),
        _ => Failure::io(e),
    })?;
    if data.is_empty() {
        return Err(Failure::new("Corruption: File is empty."));
    }
    let short = || Failure::new("Corruption: Reach the end of the file unexpectedly.");
    let w = |out: &mut Out<'_>, s: String| out.write_all(s.as_bytes()).map_err(Failure::io);
    let header = BlobHeader::decode(data.get(..HEADER_SIZE).ok_or_else(short)?).map_err(Failure::db)?;
    let cname = compression_name(header.compression)
        .map(str::to_string)
        .unwrap_or_else(|| format!("Unrecongnized compression type ({})", header.compression));
    w(
        out,
        format!(
            "Blob log header:\n  Version          : 1\n  Column Family ID : {}\n  Compression      : {cname}\n  \
             Expiration range : {}\n",
            header.column_family_id,
            range(header.expiration_range)
        ),
    )?;
    let size = data.len();
    let footer_offset = if size < HEADER_SIZE + FOOTER_SIZE {
        w(out, "No blob log footer.\n".to_string())?;
        size
    } else {
        match BlobFooter::decode(&data[size - FOOTER_SIZE..]) {
            Ok(f) => {
                w(
                    out,
                    format!(
                        "Blob log footer:\n  Blob count       : {}\n  Expiration Range : {}\n",
                        f.blob_count,
                        range(f.expiration_range)
                    ),
                )?;
                size - FOOTER_SIZE
            }
            Err(_) => {
                w(out, "No blob log footer.\n".to_string())?;
                size
            }
        }
    };
    let codec = shale_format::table::CompressionType::from_u8(header.compression);
    let show = |b: &[u8], hex: bool| -> Vec<u8> {
        let mut v = if hex { to_hex(b).into_bytes() } else { b.to_vec() };
        // fprintf("%s"): a C string ends at its first NUL byte.
        if !hex {
            if let Some(i) = v.iter().position(|&c| c == 0) {
                v.truncate(i);
            }
        }
        v.push(b'\n');
        v
    };
    let (mut records, mut keys, mut blobs, mut raw) = (0u64, 0u64, 0u64, 0u64);
    let mut offset = HEADER_SIZE;
    let mut err: Option<Failure> = None;
    while offset < footer_offset {
        w(out, format!("Read record with offset 0x{offset:x} ({offset}):\n"))?;
        let Some(h) = data.get(offset..offset + RECORD_HEADER_SIZE) else {
            err = Some(short());
            break;
        };
        let h = match RecordHeader::decode(h) {
            Ok(h) => h,
            Err(e) => {
                err = Some(Failure::db(e));
                break;
            }
        };
        w(
            out,
            format!(
                "  key size   : {}\n  value size : {}\n  expiration : {}\n",
                h.key_size, h.value_size, h.expiration
            ),
        )?;
        offset += RECORD_HEADER_SIZE;
        let end = usize::try_from(h.key_size.saturating_add(h.value_size))
            .ok()
            .and_then(|n| offset.checked_add(n))
            .filter(|&e| e <= data.len());
        let Some(end) = end else {
            err = Some(short());
            break;
        };
        let ks = h.key_size as usize;
        let (key, value) = (&data[offset..offset + ks], &data[offset + ks..end]);
        let mut uncompressed_value: Vec<u8> = Vec::new();
        if header.compression != 0 {
            let Some(c) = codec.filter(|c| c.is_supported()) else {
                err = Some(Failure::new("Not implemented: Unsupported compression type"));
                break;
            };
            match shale_format::table::compression::uncompress(c, value) {
                Ok(v) => uncompressed_value = v,
                Err(e) => {
                    err = Some(Failure::db(e));
                    break;
                }
            }
        }
        out.write_all(b"  key        : ").map_err(Failure::io)?;
        out.write_all(&show(key, key_hex)).map_err(Failure::io)?;
        if uncompressed {
            out.write_all(b"  raw blob   : ").map_err(Failure::io)?;
            out.write_all(&show(&uncompressed_value, value_hex)).map_err(Failure::io)?;
        } else {
            out.write_all(b"  blob       : ").map_err(Failure::io)?;
            out.write_all(&show(value, value_hex)).map_err(Failure::io)?;
        }
        offset = end;
        records += 1;
        keys += h.key_size;
        blobs += h.value_size;
        raw += uncompressed_value.len() as u64;
    }
    w(
        out,
        format!(
            "Summary:\n  total records: {records}\n  total key size: {keys}\n  total blob size: {blobs}\n"
        ),
    )?;
    if header.compression != 0 {
        w(out, format!("  total raw blob size: {raw}\n"))?;
    }
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
