//! The byte format of a state-machine snapshot (what openraft ships to a follower as
//! `SnapshotData` and what `get_current_snapshot` returns). Described in
//! docs/openraft-storage.md; implemented here.
//!
//! ```text
//! +----------------+---------+----------------------------------------------+
//! | magic (8)      | version | record* | count (8, LE) | crc32c (4, LE)     |
//! | "SHALESNP"     | u32 LE  |         |               | of all bytes before |
//! +----------------+---------+----------------------------------------------+
//!
//! record := key_len (u32 LE) | key | value_len (u32 LE) | value
//! ```
//!
//! The records are the state machine's user key-values in key order, as an iterator over one
//! DB snapshot saw them. The snapshot's metadata (last applied log id, membership) travels
//! beside the bytes in openraft's `SnapshotMeta`, not inside them. A hand-written format
//! because it is four fields: a decoder that checks lengths and the checksum is shorter than a
//! dependency, and corrupt input gives an error naming the offset, never a panic.

pub const MAGIC: &[u8; 8] = b"SHALESNP";
pub const VERSION: u32 = 1;
const HEADER_LEN: usize = 12;
const TRAILER_LEN: usize = 12;

/// Writes a snapshot: `begin`, `add` per key-value in key order, `finish`.
pub struct SnapshotWriter {
    buf: Vec<u8>,
    count: u64,
}

impl Default for SnapshotWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl SnapshotWriter {
    pub fn new() -> SnapshotWriter {
        let mut buf = Vec::with_capacity(4096);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&VERSION.to_le_bytes());
        SnapshotWriter { buf, count: 0 }
    }

    /// Adds one key-value. Keys and values longer than 4 GiB are refused.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let kl = u32::try_from(key.len())
            .map_err(|_| format!("snapshot key of {} bytes is too long", key.len()))?;
        let vl = u32::try_from(value.len())
            .map_err(|_| format!("snapshot value of {} bytes is too long", value.len()))?;
        self.buf.extend_from_slice(&kl.to_le_bytes());
        self.buf.extend_from_slice(key);
        self.buf.extend_from_slice(&vl.to_le_bytes());
        self.buf.extend_from_slice(value);
        self.count += 1;
        Ok(())
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.buf.extend_from_slice(&self.count.to_le_bytes());
        let crc = crc32c::crc32c(&self.buf);
        self.buf.extend_from_slice(&crc.to_le_bytes());
        self.buf
    }
}

fn read_u32(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Checks a snapshot and calls `f` for every key-value in it, in order. Errors name the
/// offset of what is wrong.
pub fn decode(bytes: &[u8], mut f: impl FnMut(&[u8], &[u8])) -> Result<u64, String> {
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return Err(format!("snapshot of {} bytes is shorter than its header and trailer", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err("snapshot: bad magic at offset 0".to_string());
    }
    let version = read_u32(bytes, 8).unwrap_or(0);
    if version != VERSION {
        return Err(format!("snapshot: unknown version {version} at offset 8"));
    }
    let crc_off = bytes.len() - 4;
    let stored = read_u32(bytes, crc_off).unwrap_or(0);
    let actual = crc32c::crc32c(&bytes[..crc_off]);
    if stored != actual {
        return Err(format!(
            "snapshot: checksum mismatch at offset {crc_off} (stored {stored:#x}, computed {actual:#x})"
        ));
    }
    let count_off = bytes.len() - TRAILER_LEN;
    let mut c = [0u8; 8];
    c.copy_from_slice(&bytes[count_off..count_off + 8]);
    let count = u64::from_le_bytes(c);
    let mut off = HEADER_LEN;
    let mut n = 0u64;
    while off < count_off {
        let kl = read_u32(bytes, off)
            .ok_or_else(|| format!("snapshot: truncated key length at offset {off}"))?
            as usize;
        let ks = off + 4;
        let ke = ks
            .checked_add(kl)
            .filter(|&e| e <= count_off)
            .ok_or_else(|| format!("snapshot: key at offset {ks} runs past the records"))?;
        let vl = read_u32(bytes, ke)
            .filter(|_| ke + 4 <= count_off)
            .ok_or_else(|| format!("snapshot: truncated value length at offset {ke}"))?
            as usize;
        let vs = ke + 4;
        let ve = vs
            .checked_add(vl)
            .filter(|&e| e <= count_off)
            .ok_or_else(|| format!("snapshot: value at offset {vs} runs past the records"))?;
        f(&bytes[ks..ke], &bytes[vs..ve]);
        n += 1;
        off = ve;
    }
    if n != count {
        return Err(format!("snapshot: {n} records but the trailer at offset {count_off} says {count}"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let mut w = SnapshotWriter::new();
        w.add(b"a", b"1").unwrap();
        w.add(b"bb", b"").unwrap();
        w.add(b"", b"333").unwrap();
        let bytes = w.finish();
        let mut got = Vec::new();
        assert_eq!(decode(&bytes, |k, v| got.push((k.to_vec(), v.to_vec()))).unwrap(), 3);
        assert_eq!(
            got,
            vec![(b"a".to_vec(), b"1".to_vec()), (b"bb".to_vec(), vec![]), (vec![], b"333".to_vec())]
        );

        // Every single-byte flip and every truncation is refused, never a panic.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(decode(&b, |_, _| {}).is_err(), "flip at {i} accepted");
            assert!(decode(&bytes[..i], |_, _| {}).is_err(), "truncation to {i} accepted");
        }
        let empty = SnapshotWriter::new().finish();
        assert_eq!(decode(&empty, |_, _| panic!("no records")).unwrap(), 0);
    }
}
