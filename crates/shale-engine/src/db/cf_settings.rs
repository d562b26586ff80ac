//! A family's published settings: the engine's `CfConfig` and, beside it, the layer above's
//! own record of the options it was built from.
//!
//! The engine reads only the `CfConfig`. The record is opaque here (`dyn Any`): the
//! rust-rocksdb facade keeps the user's `Options` there, for its own work (the OPTIONS
//! file, the info LOG's options dump, `set_options`' copy), and reads it back with
//! [`CfSettings::record`]. Both are published together, so a reader sees a matching pair;
//! a change publishes a new pair at once. Every published pair is kept until the family's
//! handle goes, so a reference handed out earlier stays valid: changes are rare (RocksDB's
//! SetOptions), and each keeps one pair (a few hundred bytes).

use std::any::Any;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use crate::config::CfConfig;

/// The layer above's record of a family's options (opaque to the engine).
pub type LayerRecord = Arc<dyn Any + Send + Sync>;

/// A family's configuration and the record it came from, published together.
struct Published {
    config: CfConfig,
    record: LayerRecord,
}

/// A family's settings, replaceable while readers hold references (see the module comment).
pub struct CfSettings {
    current: AtomicPtr<Published>,
    /// Every pair ever published, so that `current`'s pointee outlives any reference.
    /// A parking_lot lock (a Vec pushed to; nothing under it can panic, `halt.rs`).
    kept: parking_lot::Mutex<Vec<Arc<Published>>>,
}

impl CfSettings {
    pub fn new(config: CfConfig, record: LayerRecord) -> CfSettings {
        let first = Arc::new(Published { config, record });
        let ptr = Arc::as_ptr(&first) as *mut Published;
        CfSettings { current: AtomicPtr::new(ptr), kept: parking_lot::Mutex::new(vec![first]) }
    }

    /// Publishes a new pair; readers see it from their next read on.
    pub fn set(&self, config: CfConfig, record: LayerRecord) {
        let next = Arc::new(Published { config, record });
        let ptr = Arc::as_ptr(&next) as *mut Published;
        self.kept.lock().push(next);
        self.current.store(ptr, Ordering::Release);
    }

    fn current(&self) -> &Published {
        let ptr = self.current.load(Ordering::Acquire);
        // SAFETY: `ptr` always points into an `Arc<Published>` held by `self.kept`, which
        // only grows and is dropped with `self`; the returned reference borrows `self`, so it
        // cannot outlive that Arc. The value behind it is never mutated (a change publishes
        // a new value).
        unsafe { &*ptr }
    }

    /// The engine's configuration in force.
    pub fn config(&self) -> &CfConfig {
        &self.current().config
    }

    /// The layer above's record published with [`config`](Self::config).
    pub fn record(&self) -> &(dyn Any + Send + Sync) {
        &*self.current().record
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_keep_their_reference_across_a_change() {
        let first = CfConfig { write_buffer_size: 100, ..CfConfig::default() };
        let s = CfSettings::new(first, Arc::new(1u32));
        let before = s.config();
        let before_record = s.record();
        s.set(CfConfig { write_buffer_size: 200, ..CfConfig::default() }, Arc::new(2u32));
        assert_eq!(before.write_buffer_size, 100);
        assert_eq!(before_record.downcast_ref::<u32>(), Some(&1));
        assert_eq!(s.config().write_buffer_size, 200);
        assert_eq!(s.record().downcast_ref::<u32>(), Some(&2), "published together");
    }
}
