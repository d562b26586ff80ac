//! A raw Snappy block decoder that writes into memory it has not zeroed.
//!
//! ```text
//! block   : varint32 uncompressed length | element*
//! element : tag byte, its low 2 bits the kind
//!   00 literal    len-1 = tag>>2 (0..59), or in the next 1..4 bytes LE (tag>>2 = 60..63);
//!                 then len bytes
//!   01 copy       len = 4 + (tag>>2 & 7), offset = (tag>>5) << 8 | next byte
//!   10 copy       len = 1 + tag>>2, offset = next 2 bytes LE
//!   11 copy       len = 1 + tag>>2, offset = next 4 bytes LE
//! a copy repeats `len` bytes from `offset` bytes back in the output (it may overlap what
//! it writes: offset < len repeats a pattern); 0 < offset <= bytes written so far
//! ```
//!
//! Why not `snap` (which compresses, and decodes elsewhere): its decoder writes into an
//! initialised `&mut [u8]`, so each data block read from a table costs a zero-fill of its
//! uncompressed size before the decoding writes every byte again; profiles of readrandom and
//! readseq with Snappy put that zero-fill at 2.4-3.9% beside 4.4% for the decoding itself.
//! This decoder writes into the spare capacity of a `Vec` and sets its length only once every
//! byte up to it is written. Its result is checked against `snap` by a property test over
//! random and compressible inputs and over corrupted blocks (which both must refuse or
//! decode the same).

use crate::coding::decode_varint32;

/// Why a block does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnappyError {
    /// The length prefix is missing or not a varint32.
    Header,
    /// The input ends inside an element.
    Truncated,
    /// A copy reaches before the start of the output (or has offset 0).
    Offset,
    /// The elements produce more or fewer bytes than the prefix says.
    Length,
}

impl std::fmt::Display for SnappyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SnappyError::Header => "bad uncompressed length prefix",
            SnappyError::Truncated => "input ends inside an element",
            SnappyError::Offset => "copy offset out of range",
            SnappyError::Length => "decoded length differs from the prefix",
        })
    }
}

/// The uncompressed length a block's prefix gives.
pub fn decompress_len(src: &[u8]) -> Result<usize, SnappyError> {
    decode_varint32(src).map(|(n, _)| n as usize).ok_or(SnappyError::Header)
}

/// Decodes a raw Snappy block. `max_len` bounds the length the prefix may claim (the
/// caller's sanity limit), checked before anything is allocated.
pub fn decompress(src: &[u8], max_len: usize) -> Result<Vec<u8>, SnappyError> {
    decompress_into(src, max_len, Vec::new())
}

/// `decompress` into `out` (emptied first, grown as needed): a buffer to reuse.
pub fn decompress_into(src: &[u8], max_len: usize, mut out: Vec<u8>) -> Result<Vec<u8>, SnappyError> {
    let (n, used) = decode_varint32(src).ok_or(SnappyError::Header)?;
    let n = n as usize;
    if n > max_len {
        return Err(SnappyError::Length);
    }
    out.clear();
    out.reserve_exact(n);
    let dst = out.as_mut_ptr();
    let mut ip = used;
    let mut op = 0usize;
    // Invariant: bytes [0, op) of `dst` are written and op <= n <= capacity.
    while ip < src.len() {
        // The fast loop: with at least 32 input bytes and 64 bytes of output room left, an
        // element's tag and extra bytes (at most 5) are read without checks, and short
        // literals and copies move fixed 16- or 64-byte spans; anything else (and the
        // block's end) goes to the checked step below, one element at a time.
        while src.len() - ip >= 32 && n - op >= 64 {
            let sp = src.as_ptr();
            // SAFETY: ip + 32 <= src.len(): the tag and up to 4 extra bytes are in bounds.
            let tag = unsafe { *sp.add(ip) };
            match tag & 3 {
                0 => {
                    let len = (tag >> 2) as usize + 1;
                    if len <= 16 {
                        // SAFETY: 16 bytes at src[ip + 1..] (ip + 17 <= src.len()) and 16 at
                        // dst[op..] (op + 64 <= n <= capacity); bytes past `len` are
                        // overwritten later or lie beyond the final length.
                        unsafe { std::ptr::copy_nonoverlapping(sp.add(ip + 1), dst.add(op), 16) };
                    } else if len <= 60 && src.len() - ip > 64 {
                        // A literal of 17..=60 bytes (its length in the tag: no extra bytes),
                        // as in db_bench's values (half random, half repeated): one fixed
                        // 64-byte copy instead of a call to memcpy from the checked step.
                        // SAFETY: 64 bytes at src[ip + 1..] (ip + 65 <= src.len()) and 64 at
                        // dst[op..] (op + 64 <= n <= capacity); bytes past `len` are
                        // overwritten later or lie beyond the final length.
                        unsafe { std::ptr::copy_nonoverlapping(sp.add(ip + 1), dst.add(op), 64) };
                    } else {
                        break;
                    }
                    ip += len + 1;
                    op += len;
                }
                1 => {
                    // SAFETY: ip + 1 < src.len().
                    let b = unsafe { *sp.add(ip + 1) };
                    let len = 4 + ((tag >> 2) & 7) as usize;
                    let offset = ((tag as usize >> 5) << 8) | b as usize;
                    if offset < 8 || offset > op {
                        break;
                    }
                    let from = op - offset;
                    // SAFETY: as in the checked step's 16-byte copy: reads in [from, op + 8),
                    // written; writes in [op, op + 16), op + 64 <= n <= capacity.
                    unsafe {
                        let w0 = std::ptr::read_unaligned(dst.add(from) as *const u64);
                        std::ptr::write_unaligned(dst.add(op) as *mut u64, w0);
                        let w1 = std::ptr::read_unaligned(dst.add(from + 8) as *const u64);
                        std::ptr::write_unaligned(dst.add(op + 8) as *mut u64, w1);
                    }
                    ip += 2;
                    op += len;
                }
                2 => {
                    // SAFETY: ip + 2 < src.len().
                    let offset = unsafe { u16::from_le_bytes([*sp.add(ip + 1), *sp.add(ip + 2)]) } as usize;
                    let len = 1 + (tag >> 2) as usize;
                    if offset < 16 || offset > op {
                        break;
                    }
                    let from = op - offset;
                    let mut k = 0;
                    while k < len {
                        // SAFETY: offset >= 16, so each 16-byte source [from + k, from + k + 16)
                        // ends at or before op + k, in bytes already written, and does not
                        // overlap its destination [op + k, op + k + 16); k < len <= 64 and
                        // op + 64 <= n <= capacity.
                        unsafe { std::ptr::copy_nonoverlapping(dst.add(from + k), dst.add(op + k), 16) };
                        k += 16;
                    }
                    ip += 3;
                    op += len;
                }
                _ => break,
            }
        }
        if ip >= src.len() {
            break;
        }
        let tag = src[ip];
        ip += 1;
        match tag & 3 {
            0 => {
                let mut len = (tag >> 2) as usize;
                if len >= 60 {
                    let extra = len - 59;
                    let b = src.get(ip..ip + extra).ok_or(SnappyError::Truncated)?;
                    len = b.iter().rev().fold(0usize, |acc, &x| (acc << 8) | x as usize);
                    ip += extra;
                }
                let len = len + 1;
                if len > src.len() - ip {
                    return Err(SnappyError::Truncated);
                }
                if len > n - op {
                    return Err(SnappyError::Length);
                }
                if len <= 16 && src.len() - ip >= 16 && n - op >= 16 {
                    // SAFETY: 16 bytes are readable at src[ip..] and writable at dst[op..]
                    // (op + 16 <= n <= capacity); the bytes past `len` are overwritten later or
                    // lie beyond the final length. `src` and `out` do not overlap.
                    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(ip), dst.add(op), 16) };
                } else {
                    // SAFETY: ip + len <= src.len() and op + len <= n <= capacity, checked above.
                    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(ip), dst.add(op), len) };
                }
                ip += len;
                op += len;
            }
            kind => {
                let (len, offset) = match kind {
                    1 => {
                        let b = *src.get(ip).ok_or(SnappyError::Truncated)?;
                        ip += 1;
                        (4 + ((tag >> 2) & 7) as usize, ((tag as usize >> 5) << 8) | b as usize)
                    }
                    2 => {
                        let b = src.get(ip..ip + 2).ok_or(SnappyError::Truncated)?;
                        ip += 2;
                        (1 + (tag >> 2) as usize, u16::from_le_bytes([b[0], b[1]]) as usize)
                    }
                    _ => {
                        let b = src.get(ip..ip + 4).ok_or(SnappyError::Truncated)?;
                        ip += 4;
                        (1 + (tag >> 2) as usize, u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                    }
                };
                if offset == 0 || offset > op {
                    return Err(SnappyError::Offset);
                }
                if len > n - op {
                    return Err(SnappyError::Length);
                }
                let from = op - offset;
                if offset >= 8 && len <= 16 && n - op >= 16 {
                    // SAFETY: reads lie in [from, op + 8) — written bytes, since the first
                    // word is written before the second is read and offset >= 8 — and writes
                    // in [op, op + 16) within the capacity (op + 16 <= n); bytes past `len`
                    // are overwritten later or lie beyond the final length.
                    unsafe {
                        let w0 = std::ptr::read_unaligned(dst.add(from) as *const u64);
                        std::ptr::write_unaligned(dst.add(op) as *mut u64, w0);
                        let w1 = std::ptr::read_unaligned(dst.add(from + 8) as *const u64);
                        std::ptr::write_unaligned(dst.add(op + 8) as *mut u64, w1);
                    }
                    op += len;
                } else {
                    // The pattern [from, op) repeats: copy from `from` as much as is written
                    // after it, which doubles each round, so each copy reads written bytes
                    // that it does not write.
                    let end = op + len;
                    while op < end {
                        let c = (end - op).min(op - from);
                        // SAFETY: [from, from + c) lies in [0, op), written; [op, op + c) lies
                        // within [op, end), end <= n <= capacity; the ranges do not overlap.
                        unsafe { std::ptr::copy_nonoverlapping(dst.add(from), dst.add(op), c) };
                        op += c;
                    }
                }
            }
        }
    }
    if op != n {
        return Err(SnappyError::Length);
    }
    // SAFETY: every byte of [0, n) has been written (the loop's invariant, op == n) and
    // n <= capacity.
    unsafe { out.set_len(n) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn compressible() -> impl Strategy<Value = Vec<u8>> {
        // Runs of a few repeated pieces: copies of every offset and length class.
        proptest::collection::vec((proptest::collection::vec(any::<u8>(), 1..40), 1usize..30, 0u8..4), 0..40)
            .prop_map(|parts| {
                let mut v = Vec::new();
                for (piece, times, shrink) in parts {
                    for _ in 0..times {
                        v.extend_from_slice(&piece[..piece.len() - (shrink as usize).min(piece.len() - 1)]);
                    }
                }
                v
            })
    }

    /// Entries like a table's data block of db_bench values: a short key, then a value whose
    /// first part is random (a literal of up to 60 bytes, the fast loop's long literals) and
    /// the rest repeats it.
    fn value_like() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            (
                proptest::collection::vec(any::<u8>(), 0..20),
                proptest::collection::vec(any::<u8>(), 1..70),
                0usize..3,
            ),
            0..60,
        )
        .prop_map(|entries| {
            let mut v = Vec::new();
            for (key, random, repeats) in entries {
                v.extend_from_slice(&key);
                for _ in 0..=repeats {
                    v.extend_from_slice(&random);
                }
            }
            v
        })
    }

    fn check_same(block: &[u8]) {
        let ours = decompress(block, 1 << 24);
        let theirs = snap::raw::Decoder::new().decompress_vec(block);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            _ => panic!(
                "ours {:?} snap {:?} for {block:?}",
                ours.as_ref().map(|v| v.len()),
                theirs.map(|v| v.len())
            ),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn decodes_what_snap_encodes(raw in compressible()) {
            let block = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            prop_assert_eq!(decompress(&block, 1 << 24).unwrap(), raw);
        }

        #[test]
        fn decodes_value_like_blocks(raw in value_like()) {
            let block = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            prop_assert_eq!(decompress(&block, 1 << 24).unwrap(), raw);
        }

        #[test]
        fn corrupted_value_like_blocks_are_refused_or_decoded_as_snap_does(
            raw in value_like(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let mut block = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            for (at, b) in flips {
                if !block.is_empty() {
                    let i = at.index(block.len());
                    block[i] = b;
                }
            }
            check_same(&block);
        }

        #[test]
        fn decodes_random_bytes_as_snap_does(raw in proptest::collection::vec(any::<u8>(), 0..3000)) {
            let block = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            prop_assert_eq!(decompress(&block, 1 << 24).unwrap(), raw);
        }

        #[test]
        fn corrupted_blocks_are_refused_or_decoded_as_snap_does(
            raw in compressible(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            let mut block = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            for (at, b) in flips {
                if !block.is_empty() {
                    let i = at.index(block.len());
                    block[i] = b;
                }
            }
            if truncate && !block.is_empty() {
                block.truncate(cut.index(block.len()));
            }
            check_same(&block);
        }

        #[test]
        fn arbitrary_bytes_are_refused_or_decoded_as_snap_does(block in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_same(&block);
        }
    }

    #[test]
    fn long_literals_and_far_copies() {
        let mut raw: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let copy = raw[..70_000].to_vec();
        raw.extend_from_slice(&copy);
        raw.extend(std::iter::repeat_n(b'z', 5000));
        let block = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        assert_eq!(decompress(&block, 1 << 24).unwrap(), raw);
        assert_eq!(decompress_len(&block).unwrap(), raw.len());
        assert_eq!(decompress(&block, raw.len() - 1), Err(SnappyError::Length));
        assert_eq!(decompress(&[], 10), Err(SnappyError::Header));
        // A copy before the start, a zero offset, a short output.
        assert_eq!(decompress(&[5, 0b0000_0001, 1], 10), Err(SnappyError::Offset));
        assert_eq!(decompress(&[5, 0, b'a', 0b0000_0001, 0], 10), Err(SnappyError::Offset));
        assert_eq!(decompress(&[5, 0, b'a'], 10), Err(SnappyError::Length));
        assert_eq!(decompress(&[1, 4, b'a'], 10), Err(SnappyError::Truncated));
    }
}
