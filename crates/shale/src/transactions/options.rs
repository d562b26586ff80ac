//! Options of transactions and transaction databases, as rust-rocksdb's. Transactions are
//! issue 16's: these are kept for the day a transaction database opens.

/// Options of one pessimistic transaction.
#[derive(Debug, Clone)]
pub struct TransactionOptions {
    pub(crate) skip_prepare: bool,
    pub(crate) set_snapshot: bool,
    pub(crate) deadlock_detect: bool,
    pub(crate) lock_timeout: i64,
    pub(crate) expiration: i64,
    pub(crate) deadlock_detect_depth: i64,
    pub(crate) max_write_batch_size: usize,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions {
            skip_prepare: true,
            set_snapshot: false,
            deadlock_detect: false,
            lock_timeout: -1,
            expiration: -1,
            deadlock_detect_depth: 50,
            max_write_batch_size: 0,
        }
    }
}

impl TransactionOptions {
    pub fn new() -> TransactionOptions {
        TransactionOptions::default()
    }

    pub fn set_skip_prepare(&mut self, skip_prepare: bool) {
        self.skip_prepare = skip_prepare;
    }

    pub fn set_snapshot(&mut self, snapshot: bool) {
        self.set_snapshot = snapshot;
    }

    pub fn set_deadlock_detect(&mut self, deadlock_detect: bool) {
        self.deadlock_detect = deadlock_detect;
    }

    pub fn set_lock_timeout(&mut self, lock_timeout: i64) {
        self.lock_timeout = lock_timeout;
    }

    pub fn set_expiration(&mut self, expiration: i64) {
        self.expiration = expiration;
    }

    pub fn set_deadlock_detect_depth(&mut self, depth: i64) {
        self.deadlock_detect_depth = depth;
    }

    pub fn set_max_write_batch_size(&mut self, size: usize) {
        self.max_write_batch_size = size;
    }
}

/// Options of a pessimistic transaction database.
#[derive(Debug, Clone)]
pub struct TransactionDBOptions {
    pub(crate) default_lock_timeout: i64,
    pub(crate) txn_lock_timeout: i64,
    pub(crate) max_num_locks: i64,
    pub(crate) num_stripes: usize,
}

impl Default for TransactionDBOptions {
    fn default() -> Self {
        TransactionDBOptions {
            default_lock_timeout: 1000,
            txn_lock_timeout: 1000,
            max_num_locks: -1,
            num_stripes: 16,
        }
    }
}

impl TransactionDBOptions {
    pub fn new() -> TransactionDBOptions {
        TransactionDBOptions::default()
    }

    pub fn set_default_lock_timeout(&mut self, default_lock_timeout: i64) {
        self.default_lock_timeout = default_lock_timeout;
    }

    pub fn set_txn_lock_timeout(&mut self, txn_lock_timeout: i64) {
        self.txn_lock_timeout = txn_lock_timeout;
    }

    pub fn set_max_num_locks(&mut self, max_num_locks: i64) {
        self.max_num_locks = max_num_locks;
    }

    pub fn set_num_stripes(&mut self, num_stripes: usize) {
        self.num_stripes = num_stripes;
    }
}

/// Options of one optimistic transaction.
#[derive(Debug, Clone, Default)]
pub struct OptimisticTransactionOptions {
    pub(crate) set_snapshot: bool,
}

impl OptimisticTransactionOptions {
    pub fn new() -> OptimisticTransactionOptions {
        OptimisticTransactionOptions::default()
    }

    pub fn set_snapshot(&mut self, snapshot: bool) {
        self.set_snapshot = snapshot;
    }
}
