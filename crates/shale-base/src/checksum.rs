//! CRC32C masking, as RocksDB's `crc32c::Mask`/`Unmask` (used by the WAL record header and
//! the block trailer).
//!
//! ```text
//! masked = rotate_right(crc, 15) + 0xa282ead8   (wrapping)
//! ```

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC before it is stored, so that a CRC of data that itself holds CRCs does not
/// checksum to something degenerate (RocksDB's `crc32c::Mask`).
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_round_trips_and_changes_value() {
        for &c in &[0u32, 1, 0xdead_beef, u32::MAX, 0xa282_ead8] {
            assert_eq!(unmask_crc(mask_crc(c)), c);
            assert_ne!(mask_crc(c), c);
            assert_ne!(mask_crc(mask_crc(c)), mask_crc(c));
        }
    }
}
