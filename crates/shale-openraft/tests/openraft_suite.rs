//! openraft 0.9's own storage conformance suite, `openraft::testing::Suite::test_all`, against
//! the Shale adapter (log on shale-raftlog, state machine on the Shale KV engine). Each case
//! gets a fresh directory. The cases it runs, in order: last_membership_in_log_initial,
//! last_membership_in_log, last_membership_in_log_multi_step, get_membership_initial,
//! get_membership_from_log_and_empty_sm, get_membership_from_empty_log_and_sm,
//! get_membership_from_log_le_sm_last_applied, get_membership_from_log_gt_sm_last_applied_1,
//! get_membership_from_log_gt_sm_last_applied_2, get_initial_state_without_init,
//! get_initial_state_membership_from_log_and_sm, get_initial_state_with_state,
//! get_initial_state_last_log_gt_sm, get_initial_state_last_log_lt_sm,
//! get_initial_state_log_ids, get_initial_state_re_apply_committed, save_vote,
//! get_log_entries, limited_get_log_entries, try_get_log_entry, initial_logs, get_log_state,
//! get_log_id, last_id_in_log, last_applied_state, purge_logs_upto_0, purge_logs_upto_5,
//! purge_logs_upto_20, delete_logs_since_11, delete_logs_since_0, append_to_log,
//! snapshot_meta, apply_single, apply_multiple, transfer_snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use openraft::testing::{StoreBuilder, Suite};
use openraft::StorageError;
use shale_openraft::{open_storage, NodeId, ShaleLogStore, ShaleStateMachine, TypeConfig};

struct Builder;

impl StoreBuilder<TypeConfig, ShaleLogStore, ShaleStateMachine, tempfile::TempDir> for Builder {
    async fn build(
        &self,
    ) -> Result<(tempfile::TempDir, ShaleLogStore, ShaleStateMachine), StorageError<NodeId>> {
        let dir = tempfile::tempdir().expect("temp dir");
        let (log, sm) = open_storage(dir.path(), 1).expect("open storage");
        Ok((dir, log, sm))
    }
}

#[test]
fn openraft_suite_test_all() {
    Suite::test_all(Builder).expect("openraft's storage suite");
}
