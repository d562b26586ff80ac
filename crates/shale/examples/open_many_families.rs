//! Times opening a database with many column families: creating them on a new database
//! (`create_missing_column_families`), then reopening it. The figures of the many-families
//! benchmark in docs/benchmarks.md come from:
//!
//! ```sh
//! cargo run --release -p shale --example open_many_families -- 1000 /tmp/many-cfs
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::time::Instant;

use shale::{Options, DB};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().unwrap_or_else(|| "1000".into()).parse()?;
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/tmp/shale-many-families".into()));
    if dir.exists() {
        DB::destroy(&Options::default(), &dir)?;
    }
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    let names: Vec<String> =
        (0..n).map(|i| if i == 0 { "default".into() } else { format!("cf{i:05}") }).collect();

    let t = Instant::now();
    let db = DB::open_cf(&o, &dir, &names)?;
    let create = t.elapsed();
    for name in names.iter().step_by((n / 10).max(1)) {
        db.put_cf(db.cf_handle(name).ok_or("missing family")?, b"k", b"v")?;
    }
    drop(db);

    let t = Instant::now();
    let db = DB::open_cf(&o, &dir, &names)?;
    let reopen = t.elapsed();
    for name in names.iter().step_by((n / 10).max(1)) {
        assert_eq!(db.get_cf(db.cf_handle(name).ok_or("missing family")?, b"k")?.as_deref(), Some(&b"v"[..]));
    }
    drop(db);
    println!(
        "{n} column families: create {:.3} s, reopen {:.3} s",
        create.as_secs_f64(),
        reopen.as_secs_f64()
    );
    DB::destroy(&Options::default(), &dir)?;
    Ok(())
}
