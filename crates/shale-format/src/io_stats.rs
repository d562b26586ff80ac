//! RocksDB's `RecordIOStats` (`file/random_access_file_reader.cc`): each read of a table file
//! counts its bytes and one read in the tickers of the file's temperature
//! (`rocksdb.{hot,warm,cool,cold,ice}.file.read.{bytes,count}`) and of its place
//! (`rocksdb.last.level.read.*` for a file of the last level when it was opened,
//! `rocksdb.non.last.level.read.*` otherwise). No bytes of their own: a wrapper around the
//! file the table reader reads.

use std::sync::Arc;

use crate::fs::RandomAccessFile;
use crate::statistics::{Statistics, Ticker};
use shale_base::error::Result;

/// A table file whose reads are counted (see the module comment).
pub struct CountedReads {
    inner: Arc<dyn RandomAccessFile>,
    stats: Arc<Statistics>,
    /// (bytes, count) tickers of the file's temperature; None for kUnknown.
    temperature: Option<(Ticker, Ticker)>,
    last_level: bool,
}

impl CountedReads {
    /// `file`, read with its reads counted in `stats`: `temperature` is RocksDB's
    /// `Temperature` byte (0 kUnknown, 0x04 kHot, 0x08 kWarm, 0x0A kCool, 0x0C kCold,
    /// 0x10 kIce), `last_level` whether it was opened on the last level.
    pub fn wrap(
        file: Arc<dyn RandomAccessFile>,
        stats: Arc<Statistics>,
        temperature: u8,
        last_level: bool,
    ) -> Arc<dyn RandomAccessFile> {
        let temperature = match temperature {
            0x04 => Some((Ticker::HotFileReadBytes, Ticker::HotFileReadCount)),
            0x08 => Some((Ticker::WarmFileReadBytes, Ticker::WarmFileReadCount)),
            0x0A => Some((Ticker::CoolFileReadBytes, Ticker::CoolFileReadCount)),
            0x0C => Some((Ticker::ColdFileReadBytes, Ticker::ColdFileReadCount)),
            0x10 => Some((Ticker::IceFileReadBytes, Ticker::IceFileReadCount)),
            _ => None,
        };
        Arc::new(CountedReads { inner: file, stats, temperature, last_level })
    }
}

impl RandomAccessFile for CountedReads {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let n = self.inner.read_at(offset, buf)?;
        self.count(n);
        Ok(n)
    }

    /// Lent bytes count as a read of that many, as RocksDB's reader counts a read of an
    /// mmap file.
    fn read_lent(&self, offset: u64, len: usize, f: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let mut n = 0;
        let lent = self.inner.read_lent(offset, len, &mut |b| {
            n = b.len();
            f(b)
        })?;
        if lent {
            self.count(n);
        }
        Ok(lent)
    }

    fn size(&self) -> Result<u64> {
        self.inner.size()
    }

    fn prefetch(&self, offset: u64, len: u64) -> Result<()> {
        self.inner.prefetch(offset, len)
    }

    fn supports_prefetch(&self) -> bool {
        self.inner.supports_prefetch()
    }
}

impl CountedReads {
    /// One read of `n` bytes in the tickers.
    fn count(&self, n: usize) {
        let (bytes, count) = if self.last_level {
            (Ticker::LastLevelReadBytes, Ticker::LastLevelReadCount)
        } else {
            (Ticker::NonLastLevelReadBytes, Ticker::NonLastLevelReadCount)
        };
        self.stats.record_tick(bytes, n as u64);
        self.stats.record_tick(count, 1);
        if let Some((bytes, count)) = self.temperature {
            self.stats.record_tick(bytes, n as u64);
            self.stats.record_tick(count, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bytes(Vec<u8>);

    impl RandomAccessFile for Bytes {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            let start = (offset as usize).min(self.0.len());
            let n = buf.len().min(self.0.len() - start);
            buf[..n].copy_from_slice(&self.0[start..start + n]);
            Ok(n)
        }
        fn size(&self) -> Result<u64> {
            Ok(self.0.len() as u64)
        }
    }

    #[test]
    fn reads_count_by_temperature_and_level() {
        let stats = Arc::new(Statistics::new());
        let warm = CountedReads::wrap(Arc::new(Bytes(vec![7; 100])), stats.clone(), 0x08, true);
        let mut buf = [0u8; 30];
        assert_eq!(warm.read_at(0, &mut buf).unwrap(), 30);
        assert_eq!(warm.read_at(90, &mut buf).unwrap(), 10);
        let unknown = CountedReads::wrap(Arc::new(Bytes(vec![1; 10])), stats.clone(), 0, false);
        assert_eq!(unknown.read_at(0, &mut buf).unwrap(), 10);
        let t = |k| stats.ticker_count(k);
        assert_eq!((t(Ticker::WarmFileReadBytes), t(Ticker::WarmFileReadCount)), (40, 2));
        assert_eq!((t(Ticker::LastLevelReadBytes), t(Ticker::LastLevelReadCount)), (40, 2));
        assert_eq!((t(Ticker::NonLastLevelReadBytes), t(Ticker::NonLastLevelReadCount)), (10, 1));
        assert_eq!(t(Ticker::HotFileReadBytes) + t(Ticker::ColdFileReadBytes), 0, "kUnknown counts nowhere");
    }
}
