//! Integer encodings shared by every on-disk format (RocksDB's util/coding.h).
//!
//! ```text
//! fixed32 / fixed64 : little-endian, 4 / 8 bytes
//! varint32/varint64 : 7 bits a byte, low group first, high bit set on all but the last byte
//! length-prefixed   : varint32 length | bytes
//! ```

pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian u32 from the first 4 bytes. The caller guarantees the length.
pub fn decode_fixed32(src: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&src[..4]);
    u32::from_le_bytes(b)
}

/// Reads a little-endian u64 from the first 8 bytes. The caller guarantees the length.
pub fn decode_fixed64(src: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&src[..8]);
    u64::from_le_bytes(b)
}

pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, v as u64)
}

pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

pub fn varint_length(mut v: u64) -> usize {
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

pub fn put_length_prefixed_slice(dst: &mut Vec<u8>, s: &[u8]) {
    put_varint32(dst, s.len() as u32);
    dst.extend_from_slice(s);
}

/// Decodes a varint64 at the start of `src`: `(value, bytes used)`, or None when truncated
/// or longer than 10 bytes.
pub fn decode_varint64(src: &[u8]) -> Option<(u64, usize)> {
    let mut result = 0u64;
    for (i, &b) in src.iter().enumerate().take(10) {
        result |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Some((result, i + 1));
        }
    }
    None
}

/// Decodes a varint32 at the start of `src`; None when truncated or over 32 bits.
pub fn decode_varint32(src: &[u8]) -> Option<(u32, usize)> {
    let mut result = 0u32;
    for (i, &b) in src.iter().enumerate().take(5) {
        let part = (b & 0x7f) as u32;
        if i == 4 && part > 0x0f {
            return None;
        }
        result |= part << (7 * i);
        if b & 0x80 == 0 {
            return Some((result, i + 1));
        }
    }
    None
}

/// A cursor over a byte slice for decoding records. Every read returns None instead of
/// panicking when the input is short, so decoders turn that into a Corruption error.
#[derive(Clone, Copy, Debug)]
pub struct Decoder<'a> {
    data: &'a [u8],
}

impl<'a> Decoder<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Decoder { data }
    }

    pub fn remaining(&self) -> &'a [u8] {
        self.data
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    pub fn fixed32(&mut self) -> Option<u32> {
        let v = decode_fixed32(self.data.get(..4)?);
        self.data = &self.data[4..];
        Some(v)
    }

    pub fn fixed64(&mut self) -> Option<u64> {
        let v = decode_fixed64(self.data.get(..8)?);
        self.data = &self.data[8..];
        Some(v)
    }

    pub fn varint32(&mut self) -> Option<u32> {
        let (v, n) = decode_varint32(self.data)?;
        self.data = &self.data[n..];
        Some(v)
    }

    pub fn varint64(&mut self) -> Option<u64> {
        let (v, n) = decode_varint64(self.data)?;
        self.data = &self.data[n..];
        Some(v)
    }

    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.data.len() < n {
            return None;
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Some(head)
    }

    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = self.varint32()? as usize;
        self.bytes(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        let values = [0u64, 1, 127, 128, 16383, 16384, u32::MAX as u64, 1 << 35, u64::MAX];
        for &v in &values {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            assert_eq!(buf.len(), varint_length(v));
            assert_eq!(decode_varint64(&buf), Some((v, buf.len())));
            assert_eq!(decode_varint64(&buf[..buf.len() - 1]), None, "truncated {v}");
        }
    }

    #[test]
    fn varint32_rejects_overflow() {
        let mut buf = Vec::new();
        put_varint64(&mut buf, 1 << 33);
        assert_eq!(decode_varint32(&buf), None);
        let mut buf = Vec::new();
        put_varint32(&mut buf, u32::MAX);
        assert_eq!(decode_varint32(&buf), Some((u32::MAX, 5)));
    }

    #[test]
    fn decoder_reports_short_input() {
        let mut buf = Vec::new();
        put_fixed32(&mut buf, 7);
        put_length_prefixed_slice(&mut buf, b"abc");
        let mut d = Decoder::new(&buf);
        assert_eq!(d.fixed32(), Some(7));
        assert_eq!(d.length_prefixed(), Some(&b"abc"[..]));
        assert!(d.is_empty());
        assert_eq!(d.fixed64(), None);
        let mut d = Decoder::new(&buf[..6]);
        d.fixed32();
        assert_eq!(d.length_prefixed(), None);
    }
}
