//! Small shared pieces: [`ReadableSize`] (raft-engine's size type, "128MB" and the like),
//! the CRC32 (IEEE, as raft-engine's `crc32fast`) and the LZ4 block codec of the entries
//! blob.
//!
//! LZ4 layout of a compressed entries blob (raft-engine's `util::lz4`):
//! ```text
//! +------------------------+---------------------------------+
//! | uncompressed len: u32le| LZ4 block (raw block format)    |
//! +------------------------+---------------------------------+
//! ```
//! With `compression_level` unset, `lz4_flex` writes the raw LZ4 block format, which is
//! what liblz4's `LZ4_compress_fast`/`LZ4_decompress_safe` produce and accept (the
//! compressed bytes may differ from liblz4's, the decompressed ones never do). With it set,
//! the level is raft-engine's: the acceleration of liblz4's `LZ4_compress_fast` (not an
//! LZ4HC level), passed as raft-engine passes it (`level as i32`; liblz4 takes below 1 as
//! 1 and caps it at 65537), through shale-base's [`lz4_compress_fast`], the same liblz4
//! call, so the blob is byte for byte raft-engine's. `lz4_flex` reads every variant.
//!
//! [`lz4_compress_fast`]: shale_base::compression::lz4_compress_fast

use std::fmt;
use std::ops::{Div, Mul};
use std::str::FromStr;

use crate::{Error, Result};

const KIB: u64 = 1024;
const MIB: u64 = KIB * 1024;
const GIB: u64 = MIB * 1024;
const TIB: u64 = GIB * 1024;
const PIB: u64 = TIB * 1024;

/// A size in bytes that prints and parses with units ("8KB", "128MB"), as raft-engine's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct ReadableSize(pub u64);

impl ReadableSize {
    pub const fn kb(count: u64) -> ReadableSize {
        ReadableSize(count * KIB)
    }

    pub const fn mb(count: u64) -> ReadableSize {
        ReadableSize(count * MIB)
    }

    pub const fn gb(count: u64) -> ReadableSize {
        ReadableSize(count * GIB)
    }

    pub const fn as_mb(self) -> u64 {
        self.0 / MIB
    }
}

impl Div<u64> for ReadableSize {
    type Output = ReadableSize;
    fn div(self, rhs: u64) -> ReadableSize {
        ReadableSize(self.0 / rhs)
    }
}

impl Div<ReadableSize> for ReadableSize {
    type Output = u64;
    fn div(self, rhs: ReadableSize) -> u64 {
        self.0 / rhs.0
    }
}

impl Mul<u64> for ReadableSize {
    type Output = ReadableSize;
    fn mul(self, rhs: u64) -> ReadableSize {
        ReadableSize(self.0 * rhs)
    }
}

impl fmt::Display for ReadableSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = self.0;
        if size == 0 {
            write!(f, "{size}KiB")
        } else if size.is_multiple_of(PIB) {
            write!(f, "{}PiB", size / PIB)
        } else if size.is_multiple_of(TIB) {
            write!(f, "{}TiB", size / TIB)
        } else if size.is_multiple_of(GIB) {
            write!(f, "{}GiB", size / GIB)
        } else if size.is_multiple_of(MIB) {
            write!(f, "{}MiB", size / MIB)
        } else if size.is_multiple_of(KIB) {
            write!(f, "{}KiB", size / KIB)
        } else {
            write!(f, "{size}B")
        }
    }
}

impl FromStr for ReadableSize {
    type Err = String;

    /// Parses "1024", "1024B", "8KB", "8K", "8KiB", "1.5GB" (binary units, as raft-engine).
    fn from_str(s: &str) -> std::result::Result<ReadableSize, String> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let unit = unit.trim();
        let mult = match unit.to_ascii_uppercase().as_str() {
            "" | "B" => 1,
            "K" | "KB" | "KIB" => KIB,
            "M" | "MB" | "MIB" => MIB,
            "G" | "GB" | "GIB" => GIB,
            "T" | "TB" | "TIB" => TIB,
            "P" | "PB" | "PIB" => PIB,
            _ => return Err(format!("invalid size unit in {s:?}")),
        };
        let n: f64 = num.parse().map_err(|_| format!("invalid size {s:?}"))?;
        if n.is_nan() || n < 0.0 {
            return Err(format!("invalid size {s:?}"));
        }
        Ok(ReadableSize((n * mult as f64) as u64))
    }
}

/// CRC32 (IEEE polynomial), the checksum of raft-engine's entries blob and item footer.
pub fn crc32(data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(data);
    h.finalize()
}

/// Appends `u32le uncompressed len | LZ4 block of src` to `dst`; `level` is raft-engine's
/// `compression_level` (LZ4 acceleration; see the module comment).
pub fn lz4_compress_to(src: &[u8], dst: &mut Vec<u8>, level: Option<usize>) -> Result<()> {
    if src.is_empty() {
        return Ok(());
    }
    if src.len() > i32::MAX as usize {
        return Err(Error::InvalidArgument(format!("Content too long {}", src.len())));
    }
    let compressed = match level {
        None => lz4_flex::block::compress(src),
        // raft-engine's own conversion (`level as i32`), wrapping as it does.
        Some(l) => shale_base::compression::lz4_compress_fast(src, l as i32)?,
    };
    dst.reserve(4 + compressed.len());
    dst.extend_from_slice(&(src.len() as u32).to_le_bytes());
    dst.extend_from_slice(&compressed);
    Ok(())
}

/// Decompresses `u32le uncompressed len | LZ4 block`.
pub fn lz4_decompress(src: &[u8]) -> Result<Vec<u8>> {
    if src.is_empty() {
        return Ok(Vec::new());
    }
    if src.len() <= 4 {
        return Err(Error::Corruption(format!("Content to decompress too short {}", src.len())));
    }
    let len = u32::from_le_bytes([src[0], src[1], src[2], src[3]]) as usize;
    let mut dst = vec![0u8; len];
    match lz4_flex::block::decompress_into(&src[4..], &mut dst) {
        Ok(n) if n == len => Ok(dst),
        Ok(n) => Err(Error::Corruption(format!("Decompressed content length mismatch {n} != {len}"))),
        Err(e) => Err(Error::Corruption(format!("Decompression failed: {e}"))),
    }
}

/// Rounds `offset` up to a multiple of `alignment` (a power of two or any positive value).
pub fn round_up(offset: usize, alignment: usize) -> usize {
    if alignment == 0 {
        return offset;
    }
    offset.div_ceil(alignment) * alignment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_size_parses_and_prints() {
        assert_eq!("8KB".parse::<ReadableSize>().unwrap(), ReadableSize::kb(8));
        assert_eq!("128MB".parse::<ReadableSize>().unwrap(), ReadableSize::mb(128));
        assert_eq!("1.5GiB".parse::<ReadableSize>().unwrap(), ReadableSize(3 * GIB / 2));
        assert_eq!("100".parse::<ReadableSize>().unwrap(), ReadableSize(100));
        assert!("12XB".parse::<ReadableSize>().is_err());
        assert!("".parse::<ReadableSize>().is_err());
        assert_eq!(ReadableSize::mb(128).to_string(), "128MiB");
        assert_eq!(ReadableSize(1000).to_string(), "1000B");
    }

    #[test]
    fn crc32_is_ieee() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn lz4_round_trips_and_rejects_garbage() {
        let mut buf = b"header..".to_vec();
        let body: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let n = buf.len();
        lz4_compress_to(&body, &mut buf, None).unwrap();
        assert!(buf.len() < n + 1000);
        assert_eq!(lz4_decompress(&buf[n..]).unwrap(), body);
        let mut bad = buf[n..].to_vec();
        bad[0] ^= 0x40; // wrong length
        assert!(matches!(lz4_decompress(&bad), Err(Error::Corruption(_))));
        assert!(matches!(lz4_decompress(&[1, 2]), Err(Error::Corruption(_))));
    }

    #[test]
    fn compression_level_is_lz4_acceleration_as_raft_engine_passes_it() {
        let body: Vec<u8> =
            (0..20_000u32).flat_map(|i| format!("entry {} of {}; ", i % 300, i % 7).into_bytes()).collect();
        let blob = |level: Option<usize>| {
            let mut b = Vec::new();
            lz4_compress_to(&body, &mut b, level).unwrap();
            assert_eq!(lz4_decompress(&b).unwrap(), body, "level {level:?}");
            b
        };
        let one = blob(Some(1));
        assert_eq!(&one[4..], &shale_base::compression::lz4_compress_fast(&body, 1).unwrap()[..]);
        // liblz4 takes 0 (and, through raft-engine's `as i32`, usize::MAX = -1) as 1.
        assert_eq!(blob(Some(0)), one);
        assert_eq!(blob(Some(usize::MAX)), one);
        // `as i32` keeps the low 32 bits: 2^32 + 3 is acceleration 3.
        assert_eq!(blob(Some((1usize << 32) + 3)), blob(Some(3)));
        // Higher acceleration: a bigger blob; the default path (lz4_flex) reads back too.
        assert!(blob(Some(200)).len() > one.len());
        blob(None);
    }
}
