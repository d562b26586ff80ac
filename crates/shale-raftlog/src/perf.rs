//! raft-engine's per-thread perf context: where a thread's write time went.

use std::cell::RefCell;
use std::ops::AddAssign;
use std::time::Duration;

/// Durations accumulated by the calling thread's writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerfContext {
    /// Encoding and compressing batches.
    pub log_populating_duration: Duration,
    /// Waiting for the write group to form and be processed.
    pub write_wait_duration: Duration,
    /// Writing batches to files (the group leader's thread).
    pub log_write_duration: Duration,
    /// Rotating the active file.
    pub log_rotate_duration: Duration,
    /// Syncing (the group leader's thread).
    pub log_sync_duration: Duration,
    /// Applying written batches to the index (the group leader's thread).
    pub apply_duration: Duration,
}

impl AddAssign<&'_ PerfContext> for PerfContext {
    fn add_assign(&mut self, rhs: &PerfContext) {
        self.log_populating_duration += rhs.log_populating_duration;
        self.write_wait_duration += rhs.write_wait_duration;
        self.log_write_duration += rhs.log_write_duration;
        self.log_rotate_duration += rhs.log_rotate_duration;
        self.log_sync_duration += rhs.log_sync_duration;
        self.apply_duration += rhs.apply_duration;
    }
}

thread_local! {
    static TLS_PERF_CONTEXT: RefCell<PerfContext> = RefCell::new(PerfContext::default());
}

/// The calling thread's perf context.
pub fn get_perf_context() -> PerfContext {
    TLS_PERF_CONTEXT.with(|c| c.borrow().clone())
}

/// Resets the calling thread's perf context, returning its old value.
pub fn take_perf_context() -> PerfContext {
    TLS_PERF_CONTEXT.with(|c| c.take())
}

/// Sets the calling thread's perf context.
pub fn set_perf_context(perf_context: PerfContext) {
    TLS_PERF_CONTEXT.with(|c| *c.borrow_mut() = perf_context);
}

pub(crate) fn with_perf(f: impl FnOnce(&mut PerfContext)) {
    TLS_PERF_CONTEXT.with(|c| f(&mut c.borrow_mut()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_resets() {
        with_perf(|p| p.apply_duration += Duration::from_millis(3));
        assert_eq!(get_perf_context().apply_duration, Duration::from_millis(3));
        assert_eq!(take_perf_context().apply_duration, Duration::from_millis(3));
        assert_eq!(get_perf_context(), PerfContext::default());
    }
}
