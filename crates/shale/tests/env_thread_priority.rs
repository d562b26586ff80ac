//! `Env::lower_thread_pool_cpu_priority` and `lower_high_priority_thread_pool_cpu_priority`
//! (RocksDB's thread-pool priorities) act: the database's compaction (LOW) and flush (HIGH)
//! threads run at nice 19, as RocksDB's do; without the calls they keep the process's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Env, Options, DB};

/// (thread name, nice) of this process's flush and compaction threads whose name starts
/// with `prefix`.
fn nice_of_threads(prefix: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        let comm = comm.trim().to_string();
        // The pools' threads only: the stats-dump thread is RocksDB's periodic-task timer,
        // outside the pools, and keeps the process's priority there too.
        if !comm.starts_with(prefix) || !(comm.contains(":flush") || comm.contains(":compact")) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // Fields after the ")" that ends the name: state is field 3, nice is field 19.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if let Some(n) = fields.get(16).and_then(|f| f.parse().ok()) {
            out.push((comm, n));
        }
    }
    out
}

#[test]
fn pool_threads_take_the_lowered_cpu_priority() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let mut env = Env::new().unwrap();
    env.set_background_threads(2);
    env.lower_thread_pool_cpu_priority();
    env.lower_high_priority_thread_pool_cpu_priority();
    opts.set_env(&env);
    let db = DB::open(&opts, tmp.path().join("db")).unwrap();
    db.put(b"k", b"v").unwrap();
    // The threads lower themselves as they start.
    // (A thread names itself as it starts: wait for both compaction threads' names, however
    // long a loaded machine takes to start them.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = nice_of_threads("shale:");
    while !(seen.iter().any(|(n, _)| n.starts_with("shale:flush"))
        && seen.iter().filter(|(n, _)| n.starts_with("shale:compact")).count() >= 2
        && seen.iter().all(|(_, nice)| *nice == 19))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
        seen = nice_of_threads("shale:");
    }
    assert!(seen.iter().any(|(n, _)| n.starts_with("shale:flush")), "{seen:?}");
    assert!(seen.iter().filter(|(n, _)| n.starts_with("shale:compact")).count() >= 2, "{seen:?}");
    assert!(seen.iter().all(|(_, nice)| *nice == 19), "{seen:?}");
    drop(db);

    // Without the calls, the pools keep the process's priority.
    let plain = DB::open(
        &{
            let mut o = Options::default();
            o.create_if_missing(true);
            o
        },
        tmp.path().join("db2"),
    )
    .unwrap();
    // Wait until its pool threads have started and named themselves (a thread that has not
    // would make the check below pass without looking at it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = nice_of_threads("shale:");
    while !(seen.iter().any(|(n, _)| n.starts_with("shale:flush"))
        && seen.iter().any(|(n, _)| n.starts_with("shale:compact")))
    {
        assert!(std::time::Instant::now() < deadline, "the pool threads did not start: {seen:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
        seen = nice_of_threads("shale:");
    }
    assert!(seen.iter().all(|(_, nice)| *nice != 19), "{seen:?}");
    drop(plain);
}
