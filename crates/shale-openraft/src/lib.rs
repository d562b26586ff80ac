//! shale-openraft: Shale as the storage of an openraft 0.9 cluster, in TiKV's shape.
//!
//! - [`ShaleLogStore`] ([`log_store`]): openraft's `RaftLogStorage` and `RaftLogReader` on the
//!   Raft log engine `shale-raftlog`, one region per Raft group.
//! - [`ShaleStateMachine`] ([`state_machine`]): openraft's `RaftStateMachine` and
//!   `RaftSnapshotBuilder` on the Shale KV engine.
//! - [`cluster`]: the replicated key-value service of the `shale-kv-cluster` example (HTTP on
//!   loopback, the network openraft needs, and the client calls).
//!
//! The storage passes `openraft::testing::Suite::test_all` (tests/openraft_suite.rs).

use std::io::Cursor;

use serde::{Deserialize, Serialize};

pub mod cluster;
pub mod jepsen;
pub mod linearizability;
pub mod log_store;
pub mod snapshot_format;
pub mod state_machine;

pub use log_store::ShaleLogStore;
pub use state_machine::ShaleStateMachine;

/// A command of the replicated key-value store (the application data of a log entry).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Set {
        key: String,
        value: String,
    },
    Delete {
        key: String,
    },
    /// Compare-and-set: if `key` holds `expected` (None: absent), set it to `new`. The
    /// [`Response`] says whether it swapped and what the key held.
    Cas {
        key: String,
        expected: Option<String>,
        new: String,
    },
}

/// What applying a [`Request`] returns.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Response {
    /// For [`Request::Cas`]: the value the key held when it was applied.
    pub value: Option<String>,
    /// For [`Request::Cas`]: whether it swapped.
    #[serde(default)]
    pub swapped: bool,
}

pub type NodeId = u64;
pub type Node = openraft::BasicNode;

openraft::declare_raft_types!(
    /// The openraft types of the replicated key-value store.
    pub TypeConfig:
        D = Request,
        R = Response,
        NodeId = NodeId,
        Node = Node,
        SnapshotData = Cursor<Vec<u8>>,
);

pub type Raft = openraft::Raft<TypeConfig>;

/// Opens the storage of one node in `dir`: the Raft log in `dir/raftlog` (group `group`), the
/// state machine in `dir/sm`.
pub fn open_storage(dir: &std::path::Path, group: u64) -> Result<(ShaleLogStore, ShaleStateMachine), String> {
    let log = ShaleLogStore::open(&dir.join("raftlog"), group)
        .map_err(|e| format!("opening the raft log in {}: {e}", dir.display()))?;
    let sm = ShaleStateMachine::open(&dir.join("sm"))
        .map_err(|e| format!("opening the state machine in {}: {e}", dir.display()))?;
    Ok((log, sm))
}
