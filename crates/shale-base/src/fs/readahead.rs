//! A sequential file read ahead (RocksDB's `ReadaheadSequentialFile`, which its
//! `SequentialFileReader` puts over the WAL and MANIFEST files when `log_readahead_size` is
//! above 0): a read smaller than the readahead size is served from a buffer filled by one
//! read of that size; a larger read goes to the file directly.
//!
//! ```text
//! file:   |---- readahead ----|---- readahead ----|--...
//! buffer:  [pos ....... len)      refilled when pos == len
//! ```

use super::SequentialFile;
use crate::error::Result;

pub struct ReadaheadSequentialFile {
    inner: Box<dyn SequentialFile>,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
}

impl ReadaheadSequentialFile {
    /// `inner` read `size` bytes at a time (`size` 0: `inner` itself, as RocksDB does).
    pub fn wrap(inner: Box<dyn SequentialFile>, size: usize) -> Box<dyn SequentialFile> {
        if size == 0 {
            return inner;
        }
        Box::new(ReadaheadSequentialFile { inner, buf: vec![0; size], pos: 0, len: 0 })
    }
}

impl SequentialFile for ReadaheadSequentialFile {
    fn read(&mut self, out: &mut [u8]) -> Result<usize> {
        if self.pos == self.len {
            if out.len() >= self.buf.len() {
                return self.inner.read(out);
            }
            self.len = self.inner.read(&mut self.buf)?;
            self.pos = 0;
        }
        let n = out.len().min(self.len - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `data` that counts its read calls.
    struct Counted {
        data: Vec<u8>,
        at: usize,
        reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl SequentialFile for Counted {
        fn read(&mut self, out: &mut [u8]) -> Result<usize> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let n = out.len().min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn read_all(size: usize, chunk: usize) -> (Vec<u8>, usize) {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let inner = Box::new(Counted { data, at: 0, reads: reads.clone() });
        let mut f = ReadaheadSequentialFile::wrap(inner, size);
        let mut out = Vec::new();
        let mut buf = vec![0u8; chunk];
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        (out, reads.load(std::sync::atomic::Ordering::Relaxed))
    }

    #[test]
    fn reads_the_same_bytes_in_fewer_calls() {
        let (plain, plain_reads) = read_all(0, 100);
        let (ahead, ahead_reads) = read_all(4096, 100);
        assert_eq!(plain, ahead);
        assert_eq!(plain.len(), 10_000);
        assert_eq!(plain_reads, 101);
        // Three fills of 4096 bytes (the last one short) and the one that finds the end.
        assert_eq!(ahead_reads, 4);
        // Reads as large as the readahead go to the file directly.
        let (big, big_reads) = read_all(64, 128);
        assert_eq!(big, plain);
        assert_eq!(big_reads, 80);
    }
}
