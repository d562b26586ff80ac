// TEMPORARY: replaced by branch filter
//! A stand-in whole-key Bloom filter with the API of the real filter module.
//!
//! ```text
//! filter : bit array (m bytes) | num_probes u8
//! ```

use crate::error::{Error, Result};

pub const BLOOM_POLICY_NAME: &str = "rocksdb.BuiltinBloomFilter";

pub struct FilterBuilder {
    bits_per_key: f64,
    hashes: Vec<u64>,
}

fn probes(bits_per_key: f64) -> u8 {
    ((bits_per_key * 0.69) as u8).clamp(1, 30)
}

impl FilterBuilder {
    pub fn new(bits_per_key: f64) -> Self {
        FilterBuilder { bits_per_key: bits_per_key.max(1.0), hashes: Vec::new() }
    }

    pub fn add_key(&mut self, key: &[u8]) {
        self.hashes.push(xxhash_rust::xxh3::xxh3_64(key));
    }

    pub fn num_added(&self) -> usize {
        self.hashes.len()
    }

    pub fn finish(&mut self) -> Vec<u8> {
        let bits = ((self.hashes.len() as f64 * self.bits_per_key) as usize).max(64);
        let bytes = bits.div_ceil(8);
        let k = probes(self.bits_per_key);
        let mut out = vec![0u8; bytes + 1];
        for &h in &self.hashes {
            for i in probe_positions(h, k, bytes * 8) {
                out[i / 8] |= 1 << (i % 8);
            }
        }
        out[bytes] = k;
        self.hashes.clear();
        out
    }
}

fn probe_positions(h: u64, k: u8, nbits: usize) -> impl Iterator<Item = usize> {
    let (mut a, b) = (h, h.rotate_left(21) | 1);
    (0..k).map(move |_| {
        let p = (a % nbits as u64) as usize;
        a = a.wrapping_add(b);
        p
    })
}

pub struct FilterReader {
    data: Vec<u8>,
}

impl FilterReader {
    pub fn new(data: Vec<u8>) -> Result<FilterReader> {
        if data.len() < 2 {
            return Err(Error::corruption("filter block too short"));
        }
        Ok(FilterReader { data })
    }

    pub fn may_match(&self, key: &[u8]) -> bool {
        let bytes = self.data.len() - 1;
        let k = self.data[bytes];
        if k == 0 || k > 30 {
            return true;
        }
        let h = xxhash_rust::xxh3::xxh3_64(key);
        probe_positions(h, k, bytes * 8).all(|i| self.data[i / 8] & (1 << (i % 8)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives() {
        let mut b = FilterBuilder::new(10.0);
        for i in 0..1000 {
            b.add_key(format!("k{i}").as_bytes());
        }
        assert_eq!(b.num_added(), 1000);
        let r = FilterReader::new(b.finish()).unwrap();
        assert!((0..1000).all(|i| r.may_match(format!("k{i}").as_bytes())));
        let fp = (0..1000).filter(|i| r.may_match(format!("x{i}").as_bytes())).count();
        assert!(fp < 100, "{fp}");
    }
}
