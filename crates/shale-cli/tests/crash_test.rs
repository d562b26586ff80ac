//! `shale crash-test` in CI: 20 SIGKILLs of a running `shale stress` (keys spread over 20
//! column families, 4 background jobs), each followed by a reopen and a full verification
//! against the expected state.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::process::Command;

#[test]
fn crash_test_twenty_kills_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shale"))
        .args(["crash-test", "--kills", "20", "--max_run_ms", "700", "--threads", "3", "--max_key", "4000"])
        .args(["--column_families", "20", "--max_background_jobs", "4", "--write_buffer_size", "65536"])
        .arg("--db")
        .arg(dir.path().join("db"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "crash-test failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("20 kills, 0 acknowledged writes lost, 0 failed opens"), "{stdout}");
    assert_eq!(stderr.matches("0 keys wrong").count(), 20, "{stderr}");
}

#[test]
fn admin_commands_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let shale = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_shale")).args(args).arg("--db").arg(&db).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert!(shale(&["put", "--create_if_missing", "k1", "v1"]).0);
    assert!(shale(&["put", "k2", "v2"]).0);
    assert_eq!(shale(&["get", "k1"]), (true, "v1\n".to_string()));
    assert_eq!(shale(&["scan"]).1, "k1 : v1\nk2 : v2\n");
    assert_eq!(shale(&["scan", "--reverse", "--max_keys", "1"]).1, "k2 : v2\n");
    assert!(shale(&["delete", "k1"]).0);
    assert!(!shale(&["get", "k1"]).0, "get of a deleted key fails like ldb's NotFound");
    assert_eq!(shale(&["scan", "--hex"]).1, "0x6B32 : 0x7632\n");
}
