//! db_bench's key and value generators, reproduced so that `shale bench` and db_bench
//! touch the same keys with the same values for the same `--seed`.
//!
//! Keys (`key_from_int`, db_bench's GenerateKeyFromInt with no prefix):
//!
//! ```text
//!   +--------------------------------+---------------------------+
//!   | v as big-endian, min(ks, 8) B   | '0' padding up to key_size |
//!   +--------------------------------+---------------------------+
//! ```
//!
//! Values (`ValueGenerator`, db_bench's RandomGenerator): a buffer of at least 1 MiB
//! made of 100-byte pieces; each piece repeats `int(100 * compression_ratio)` random
//! printable bytes (RocksDB's `Random(301)`, a Lehmer generator), so the data compresses
//! to about `compression_ratio`. Values are consecutive slices of that buffer.
//!
//! Per-thread randomness is `std::mt19937_64` (db_bench's `Random64`), seeded with
//! `seed_base + thread_number`.

/// `std::mt19937_64`.
pub struct Mt64 {
    state: [u64; 312],
    index: usize,
}

impl Mt64 {
    const N: usize = 312;
    const M: usize = 156;
    const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
    const LOWER: u64 = 0x7FFF_FFFF;

    pub fn new(seed: u64) -> Mt64 {
        let mut state = [0u64; 312];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 6364136223846793005u64.wrapping_mul(prev ^ (prev >> 62)).wrapping_add(i as u64);
        }
        Mt64 { state, index: Self::N }
    }

    fn twist(&mut self) {
        for i in 0..Self::N {
            let x = (self.state[i] & Self::UPPER) | (self.state[(i + 1) % Self::N] & Self::LOWER);
            let mut y = x >> 1;
            if x & 1 != 0 {
                y ^= 0xB502_6F5A_A966_19E9;
            }
            self.state[i] = self.state[(i + Self::M) % Self::N] ^ y;
        }
        self.index = 0;
    }

    pub fn next_u64(&mut self) -> u64 {
        if self.index >= Self::N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= (y >> 29) & 0x5555_5555_5555_5555;
        y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
        y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
        y ^ (y >> 43)
    }
}

/// RocksDB's `Random`: the Lehmer generator `seed = seed * 16807 mod (2^31 - 1)`.
pub struct LehmerRandom {
    seed: u32,
}

impl LehmerRandom {
    const M: u32 = 2_147_483_647;

    pub fn new(s: u32) -> LehmerRandom {
        let s = s & Self::M;
        LehmerRandom { seed: if s != 0 { s } else { 1 } }
    }

    pub fn next(&mut self) -> u32 {
        let product = u64::from(self.seed) * 16807;
        let mut seed = ((product >> 31) + (product & u64::from(Self::M))) as u32;
        if seed > Self::M {
            seed -= Self::M;
        }
        self.seed = seed;
        seed
    }

    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// db_bench's RandomGenerator with a fixed value size.
pub struct ValueGenerator {
    data: Vec<u8>,
    pos: usize,
}

impl ValueGenerator {
    pub fn new(compression_ratio: f64, value_size: usize) -> ValueGenerator {
        let mut rnd = LehmerRandom::new(301);
        let mut data = Vec::new();
        let target = value_size.max(1_048_576);
        while data.len() < target {
            // One 100-byte piece: `raw` random printable bytes repeated.
            let raw = ((100.0 * compression_ratio) as i32).max(1) as usize;
            let raw_data: Vec<u8> = (0..raw).map(|_| b' ' + rnd.uniform(95) as u8).collect();
            let mut piece = Vec::with_capacity(100 + raw);
            while piece.len() < 100 {
                piece.extend_from_slice(&raw_data);
            }
            piece.truncate(100);
            data.extend_from_slice(&piece);
        }
        ValueGenerator { data, pos: 0 }
    }

    pub fn generate(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

/// db_bench's GenerateKeyFromInt (no prefix): writes the key for `v` into `key`, whose
/// length is the key size.
pub fn key_from_int(v: u64, key: &mut [u8]) {
    let fill = key.len().min(8);
    for (i, b) in key[..fill].iter_mut().enumerate() {
        *b = (v >> ((fill - i - 1) * 8)) as u8;
    }
    for b in &mut key[fill..] {
        *b = b'0';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_64_matches_the_standard() {
        // The C++ standard requires the 10000th output of a default-seeded
        // mt19937_64 (seed 5489) to be 9981545732273789042.
        let mut r = Mt64::new(5489);
        let mut last = 0;
        for _ in 0..10000 {
            last = r.next_u64();
        }
        assert_eq!(last, 9981545732273789042);
    }

    #[test]
    fn lehmer_sequence() {
        let mut r = LehmerRandom::new(301);
        assert_eq!(r.next(), 301 * 16807);
        let mut z = LehmerRandom::new(0);
        assert_eq!(z.next(), 16807);
    }

    #[test]
    fn keys_are_big_endian_then_zero_padded() {
        let mut k = [0u8; 16];
        key_from_int(0x0102, &mut k);
        assert_eq!(&k[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&k[8..], b"00000000");
        let mut short = [0u8; 2];
        key_from_int(0x0102_0304, &mut short);
        assert_eq!(short, [3, 4]);
        let mut missing = [0u8; 17];
        key_from_int(5, &mut missing);
        assert_eq!(&missing[8..], b"000000000");
    }

    #[test]
    fn values_compress_to_the_ratio() {
        let mut g = ValueGenerator::new(0.5, 100);
        let v = g.generate(100).to_vec();
        assert_eq!(v.len(), 100);
        assert_eq!(&v[..50], &v[50..]);
        assert!(v.iter().all(|&b| (b' '..=b'~').contains(&b)));
        let w = g.generate(100).to_vec();
        assert_ne!(v, w);
    }
}
