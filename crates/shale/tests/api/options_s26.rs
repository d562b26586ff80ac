//! Two behaviours of RocksDB 11.8.1's options machinery:
//! - an OPTIONS file RocksDB 7.8.3 wrote holds options 11.8.1 no longer writes
//!   (`random_access_max_buffer_size`, `skip_checking_sst_file_sizes_on_db_open`,
//!   `fail_if_options_file_error`, `access_hint_on_compaction_start`,
//!   `ignore_max_compaction_bytes_for_input`, `check_flush_compaction_key_order`,
//!   `level_compaction_dynamic_file_size`, `max_write_buffer_number_to_maintain`): each has a
//!   row marked `kDeprecated` in 11.8.1's `db_options.cc` / `cf_options.cc`, whose
//!   `OptionTypeInfo::Parse` returns OK for any value, so the file loads whatever they hold;
//!   a name with no row at all is InvalidArgument (`ignore_unknown_options` does not apply
//!   to a file of an older RocksDB);
//! - `set_db_options` whose values change nothing answers OK and writes no OPTIONS file
//!   (`DBImpl::SetDBOptions`' MutableDBOptionsAreEqual); an empty map is InvalidArgument.

use shale::{Cache, Env, ErrorKind, Options, DB};

use crate::util;

/// RocksDB 7.8.3's OPTIONS file of the default options with `edits` (name, value) applied
/// to the lines of those names.
fn file_78(edits: &[(&str, &str)]) -> String {
    let mut text = shale::options_file::ROCKSDB_DEFAULTS_TEXT.to_string();
    for (name, value) in edits {
        let at = text.find(&format!("  {name}=")).unwrap_or_else(|| panic!("{name} not in 7.8.3's file"));
        let end = at + text[at..].find('\n').unwrap();
        text.replace_range(at..end, &format!("  {name}={value}"));
    }
    text
}

fn load(text: &str, ignore_unknown: bool) -> shale::Result<Options> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("OPTIONS-000007"), text).unwrap();
    Options::load_latest(dir.path(), Env::new().unwrap(), ignore_unknown, Cache::new_lru_cache(1 << 20))
        .map(|(o, _)| o)
}

#[test]
fn options_rocksdb_783_wrote_load_with_any_value() {
    let edits = [
        ("random_access_max_buffer_size", "4096"),
        ("skip_checking_sst_file_sizes_on_db_open", "true"),
        ("fail_if_options_file_error", "true"),
        ("access_hint_on_compaction_start", "WILLNEED"),
        ("ignore_max_compaction_bytes_for_input", "false"),
        ("check_flush_compaction_key_order", "false"),
        ("level_compaction_dynamic_file_size", "false"),
        ("max_write_buffer_number_to_maintain", "7"),
        // A value written by 7.8.3 that 11.8.1 applies.
        ("write_buffer_size", "1048576"),
    ];
    let text = file_78(&edits);
    assert!(text.contains("  max_write_buffer_number_to_maintain=7\n"));
    let mut o = load(&text, false).unwrap();
    // They change nothing: a database opened with these options writes none of them, and
    // the applied option is there.
    let dir = tempfile::tempdir().unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    let written = util::latest_options_text(dir.path());
    for (name, _) in &edits[..8] {
        assert!(!written.contains(&format!("  {name}=")), "{name} written:\n{written}");
    }
    assert!(written.contains("  write_buffer_size=1048576\n"), "{written}");
}

#[test]
fn a_name_no_rocksdb_has_is_refused_in_a_783_file() {
    let text = file_78(&[]).replace("  max_write_buffer_number_to_maintain=0\n", "  no_such_option=3\n");
    for ignore in [false, true] {
        let Err(e) = load(&text, ignore) else { panic!("no_such_option loaded (ignore_unknown={ignore})") };
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("no_such_option"), "{e}");
    }
}

/// The names of the OPTIONS files in `dir`, sorted.
fn options_files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = util::files_ending(dir, "")
        .into_iter()
        .filter(|n| n.starts_with("OPTIONS-") && !n.ends_with(".dbtmp"))
        .collect();
    v.sort();
    v
}

#[test]
fn set_db_options_without_a_change_writes_no_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_max_total_wal_size(1 << 30);
    let db = DB::open(&o, dir.path()).unwrap();
    let at_open = options_files(dir.path());
    // The first call changes `bytes_per_sync`: 0 at open (no rate limiter), made 1 MiB by
    // every SetDBOptions, so the values differ and a new OPTIONS file records it.
    db.set_db_options(&[("max_total_wal_size", "1073741824")]).unwrap();
    let first = options_files(dir.path());
    assert_ne!(first, at_open);
    assert!(util::latest_options_text(dir.path()).contains(
        "  bytes_per_sync=1048576
"
    ));
    // Now the values in force, a deprecated option, `bytes_per_sync` 0 (made 1 MiB) change
    // nothing: OK, no new file.
    db.set_db_options(&[("max_total_wal_size", "1073741824")]).unwrap();
    db.set_db_options(&[("allow_os_buffer", "false"), ("max_total_wal_size", "1073741824")]).unwrap();
    db.set_db_options(&[("bytes_per_sync", "0")]).unwrap();
    db.set_db_options(&[("bytes_per_sync", "1048576")]).unwrap();
    assert_eq!(options_files(dir.path()), first);
    let after_bps = first;
    // A bad value is still refused.
    let e = db.set_db_options(&[("max_total_wal_size", "lots")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = db.set_db_options(&[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // A change writes a new file.
    db.set_db_options(&[("max_total_wal_size", "2147483648")]).unwrap();
    let changed = options_files(dir.path());
    assert_ne!(changed, after_bps);
    assert!(util::latest_options_text(dir.path()).contains("  max_total_wal_size=2147483648\n"));
}

/// An enum value RocksDB 11.8.1 has no mapping for is InvalidArgument naming the option (its
/// enum parser's refusal); the index with first keys, which RocksDB has, is built.
#[test]
fn enum_values_no_rocksdb_has_are_invalid_in_an_options_file() {
    for (name, bad) in [
        ("compaction_style", "kCompactionStyleBogus"),
        ("index_type", "kNoSuchSearch"),
        ("data_block_index_type", "kNoSuchIndex"),
        ("prepopulate_block_cache", "kAlways"),
    ] {
        let text = file_78(&[(name, bad)]);
        let Err(e) = load(&text, false) else { panic!("{name}={bad} loaded") };
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
        assert!(e.to_string().contains(name), "{e}");
    }
    // RocksDB 11.8.1's index with first keys loads and is written back.
    let o = load(&file_78(&[("index_type", "kBinarySearchWithFirstKey")]), false).unwrap();
    assert_eq!(line_of(&written_by(&o), "index_type"), "index_type=kBinarySearchWithFirstKey");
}

/// The OPTIONS file a database opened with `o` writes.
fn written_by(o: &Options) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut o = o.clone();
    o.create_if_missing(true);
    o.set_allow_concurrent_memtable_write(false);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put("k", "v").unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    util::latest_options_text(dir.path())
}

fn line_of<'a>(text: &'a str, name: &str) -> &'a str {
    let prefix = format!("{name}=");
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// A `memtable_factory` (or its alias `memtable`) RocksDB 11.8.1's object registry cannot
/// build is NotSupported in MemTableRepFactory::CreateFromString, which
/// `ignore_unsupported_options` (true in GetOptionsFromString and LoadLatestOptions) turns
/// into OK with the factory left as it was; `<name>:<integer>` is the registry's pattern.
#[test]
fn a_memtable_factory_rocksdb_cannot_build_leaves_the_factory_as_it_was() {
    let mut base = Options::default();
    let vector = base.get_options_from_string("memtable=vector").unwrap();
    assert_eq!(
        line_of(&written_by(&vector), "memtable_factory"),
        "memtable_factory={id=VectorRepFactory;count=0;}"
    );
    for v in [
        "memtable_factory=NoSuchRepFactory",
        "memtable=cuckoo",
        "memtable_factory=skip_list:abc",
        "memtable_factory={id=cuckoo:1024;}",
        "memtable_factory={}",
        "memtable_factory=",
    ] {
        let mut from = vector.clone();
        let o = from.get_options_from_string(v).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(
            line_of(&written_by(&o), "memtable_factory"),
            "memtable_factory={id=VectorRepFactory;count=0;}",
            "{v}"
        );
    }
    // The registry's `:<integer>` forms are built.
    let o = base.get_options_from_string("memtable=vector:1024").unwrap();
    assert_eq!(
        line_of(&written_by(&o), "memtable_factory"),
        "memtable_factory={id=VectorRepFactory;count=1024;}"
    );
    let o = vector.clone().get_options_from_string("memtable_factory=skip_list:16").unwrap();
    assert_eq!(line_of(&written_by(&o), "memtable_factory"), "memtable_factory=SkipListFactory");
    // A known factory's unknown field is still refused.
    assert!(base.get_options_from_string("memtable_factory={id=VectorRepFactory;nope=1;}").is_err());

    // An OPTIONS file naming another factory loads with RocksDB's default, the skip list.
    let o = load(&file_78(&[("memtable_factory", "NoSuchRepFactory")]), false).unwrap();
    assert_eq!(line_of(&written_by(&o), "memtable_factory"), "memtable_factory=SkipListFactory");
}

/// A `filter_policy` RocksDB 11.8.1's registry cannot build (no `:<bits>`, another policy's
/// id, a struct without an id) leaves the policy as it was (FilterPolicy::CreateFromString
/// with `ignore_unsupported_options`): no filter in an OPTIONS file of the default options.
/// A policy it builds, by nickname or class name, is built.
#[test]
fn a_filter_policy_rocksdb_cannot_build_leaves_the_policy_as_it_was() {
    for v in
        ["my.CustomFilter", "bloomfilter", "bloomfilter:ten", "ribbonfilter:10:x", "{bloom_before_level=1;}"]
    {
        let o = load(&file_78(&[("filter_policy", v)]), false).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(line_of(&written_by(&o), "filter_policy"), "filter_policy=nullptr", "{v}");
    }
    let o = load(&file_78(&[("filter_policy", "bloomfilter:10:false")]), false).unwrap();
    assert_eq!(line_of(&written_by(&o), "filter_policy"), "filter_policy=bloomfilter:10:false");
    let o = load(&file_78(&[("filter_policy", "{id=ribbonfilter:10:-1;bloom_before_level=-1;}")]), false)
        .unwrap();
    assert!(line_of(&written_by(&o), "filter_policy").contains("ribbonfilter:10"));
    // A policy the registry builds by its class name is built (`internal_filter_ids` has
    // the internal ones).
    let o = load(&file_78(&[("filter_policy", "rocksdb.internal.FastLocalBloomFilter:10")]), false).unwrap();
    assert_eq!(
        line_of(&written_by(&o), "filter_policy"),
        "filter_policy=rocksdb.internal.FastLocalBloomFilter:10"
    );
    for (v, written) in
        [("rocksdb.BloomFilter:7", "bloomfilter:7:false"), ("rocksdb.RibbonFilter:9:1", "ribbonfilter:9")]
    {
        let o = load(&file_78(&[("filter_policy", v)]), false).unwrap();
        let text = written_by(&o);
        let line = line_of(&text, "filter_policy");
        assert!(line.contains(written), "{v}: {line}");
    }
}

fn l0_files(db: &DB) -> u64 {
    db.property_int_value("rocksdb.num-files-at-level0").unwrap().unwrap()
}

/// Writes `n` level-0 tables of two keys each (`k<i>` and `shared`).
fn flush_tables(db: &DB, n: usize) {
    for i in 0..n {
        db.put(format!("k{i}"), format!("v{i}")).unwrap();
        db.put("shared", format!("s{i}")).unwrap();
        db.flush().unwrap();
    }
}

/// `compaction_style=kCompactionStyleNone` (no value of rust-rocksdb's DBCompactionStyle,
/// reached through options strings and OPTIONS files): RocksDB 11.8.1's
/// NullCompactionPicker, whose NeedsCompaction is false and whose PickCompaction and
/// CompactRange pick nothing. Level-0 tables pile up past the trigger, `compact_range`
/// answers OK and leaves them, the OPTIONS file writes the style back and loads it again.
#[test]
fn compaction_style_none_never_compacts() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default()
        .get_options_from_string("compaction_style=kCompactionStyleNone;level0_file_num_compaction_trigger=2")
        .unwrap();
    o.create_if_missing(true);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        flush_tables(&db, 4);
        db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
        assert_eq!(l0_files(&db), 4);
        assert_eq!(db.property_int_value("rocksdb.compaction-pending").unwrap(), Some(0));
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
        assert_eq!(l0_files(&db), 4, "compact_range picks nothing");
        assert_eq!(db.get("shared").unwrap().as_deref(), Some(&b"s3"[..]));
        assert_eq!(db.get("k0").unwrap().as_deref(), Some(&b"v0"[..]));
    }
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("  compaction_style=kCompactionStyleNone\n"), "{text}");
    // Loaded back from the OPTIONS file, the style still compacts nothing.
    let (mut loaded, _) =
        Options::load_latest(dir.path(), Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    loaded.create_if_missing(false);
    let db = DB::open(&loaded, dir.path()).unwrap();
    flush_tables(&db, 1);
    db.compact_range(Some(b"a"), Some(b"z"));
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    assert_eq!(l0_files(&db), 5);
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("  compaction_style=kCompactionStyleNone\n"));

    // Another style set afterwards replaces it: leveled compaction runs again.
    let mut level = loaded.get_options_from_string("compaction_style=kCompactionStyleLevel").unwrap();
    level.create_if_missing(false);
    let db = DB::open(&level, dir.path()).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(l0_files(&db), 0);
    assert_eq!(db.get("shared").unwrap().as_deref(), Some(&b"s0"[..]));
    drop(db);
    assert!(util::latest_options_text(dir.path()).contains("  compaction_style=kCompactionStyleLevel\n"));

    // A RocksDB 7.8.3 OPTIONS file naming it loads. RocksDB's SanitizeCfOptions keeps one
    // level (only kCompactionStyleLevel needs two).
    let o =
        load(&file_78(&[("compaction_style", "kCompactionStyleNone"), ("num_levels", "1")]), false).unwrap();
    let text = written_by(&o);
    assert!(text.contains("  compaction_style=kCompactionStyleNone\n"), "{text}");
    assert_eq!(line_of(&text, "num_levels"), "num_levels=1");
    // From an options string (periodic compaction at its default), a compaction filter
    // leaves periodic compaction off, where leveled turns it to 30 days.
    let mut none =
        Options::default().get_options_from_string("compaction_style=kCompactionStyleNone").unwrap();
    none.set_compaction_filter("keep", |_, _, _| shale::CompactionDecision::Keep);
    assert_eq!(line_of(&written_by(&none), "periodic_compaction_seconds"), "periodic_compaction_seconds=0");
    let level = none.get_options_from_string("compaction_style=kCompactionStyleLevel").unwrap();
    assert_eq!(
        line_of(&written_by(&level), "periodic_compaction_seconds"),
        "periodic_compaction_seconds=2592000"
    );
}

/// RocksDB 11.8.1's filter policies built by their internal ids (`RegisterBuiltinFilterPolicies`):
/// each builds its one filter whatever the `format_version`, names itself in the table's
/// "rocksdb.filter.policy" and the OPTIONS file; `rocksdb.BuiltinBloomFilter` (the read-only
/// policy) builds none and still reads the filters of existing tables.
mod internal_filter_ids {
    use shale::table::filter::{FilterKind, FilterReader};
    use shale::{Options, DB};
    use std::path::Path;

    use crate::util;

    /// The properties of every live table, in file-number order, and the kind of its full
    /// filter (None: no filter block). The filter block is the first block after the data
    /// blocks (`data_size`), `filter_size` bytes long.
    fn tables(db: &DB, dir: &Path) -> Vec<(shale::table::properties::TableProperties, Option<FilterKind>)> {
        let mut files: Vec<_> = db.live_files().unwrap().into_iter().map(|lf| lf.name).collect();
        files.sort();
        files
            .into_iter()
            .map(|name| {
                let f = dir.join(name.trim_start_matches('/'));
                let bytes = std::fs::read(&f).unwrap();
                let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
                let opts = shale::table::reader::TableReaderOptions::standalone(
                    shale::key::bytewise_internal_comparator(),
                    f.display().to_string(),
                );
                let p = shale::table::reader::Table::open(file, bytes.len() as u64, opts)
                    .unwrap()
                    .properties()
                    .clone();
                let kind = (p.filter_size > 0).then(|| {
                    let at = p.data_size as usize;
                    FilterReader::new(bytes[at..at + p.filter_size as usize].to_vec()).unwrap().kind()
                });
                (p, kind)
            })
            .collect()
    }

    fn options(table: &str) -> Options {
        let mut o = Options::default()
            .get_options_from_string(format!("block_based_table_factory={{{table}}}"))
            .unwrap();
        o.create_if_missing(true);
        o
    }

    fn fill(db: &DB, tag: &str) {
        for i in 0..3000u32 {
            db.put(format!("{tag}{i:05}"), format!("v{i}")).unwrap();
        }
        db.flush().unwrap();
    }

    fn check_gets(db: &DB, tag: &str) {
        for i in (0..3000u32).step_by(7) {
            assert_eq!(db.get(format!("{tag}{i:05}")).unwrap().unwrap(), format!("v{i}").as_bytes());
            assert_eq!(db.get(format!("{tag}{i:05}x")).unwrap(), None);
        }
    }

    fn options_file_text(dir: &Path) -> String {
        let f = util::files_ending(dir, "").into_iter().filter(|f| f.starts_with("OPTIONS-")).max().unwrap();
        std::fs::read_to_string(dir.join(f)).unwrap()
    }

    #[test]
    fn internal_filter_ids_build_their_one_filter() {
        let cases = [
            // The legacy Bloom even at format_version 7, the cache-local Bloom even at 4,
            // Ribbon even for a flush (where `ribbonfilter:10` builds Bloom).
            (
                "filter_policy=rocksdb.internal.LegacyBloomFilter:10",
                "rocksdb.internal.LegacyBloomFilter",
                FilterKind::LegacyBloom,
            ),
            (
                "filter_policy=rocksdb.internal.FastLocalBloomFilter:10;format_version=4",
                "rocksdb.internal.FastLocalBloomFilter",
                FilterKind::FastLocalBloom,
            ),
            (
                "filter_policy={id=rocksdb.internal.Standard128RibbonFilter:9.5}",
                "rocksdb.internal.Standard128RibbonFilter",
                FilterKind::Ribbon,
            ),
        ];
        for (table, name, kind) in cases {
            let tmp = tempfile::tempdir().unwrap();
            let db = DB::open(&options(table), tmp.path()).unwrap();
            fill(&db, "k");
            check_gets(&db, "k");
            let t = tables(&db, tmp.path());
            assert_eq!(t.len(), 1, "{table}");
            assert_eq!(t[0].0.filter_policy_name, name, "{table}");
            assert_eq!(t[0].1, Some(kind), "{table}");
            drop(db);
            // Written back as RocksDB's id: the name and the bits.
            let text = options_file_text(tmp.path());
            let bits = if kind == FilterKind::Ribbon { "9.5" } else { "10" };
            assert!(text.contains(&format!("filter_policy={name}:{bits}\n")), "{text}");
            // The LOG's dump of the table factory prints the policy's name.
            let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
            assert!(log.contains(&format!("  filter_policy: {name}\n")), "{log}");
            // ...which loads back to the same policy.
            let db = DB::open(&options(&format!("filter_policy={name}:{bits}")), tmp.path()).unwrap();
            fill(&db, "m");
            check_gets(&db, "k");
            check_gets(&db, "m");
            let t = tables(&db, tmp.path());
            assert_eq!(t.len(), 2, "{table}");
            assert_eq!(t[1].0.filter_policy_name, name, "{table}");
            assert_eq!(t[1].1, Some(kind), "{table}");
        }
    }

    #[test]
    fn read_only_builtin_policy_writes_no_filter_and_reads_old_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let db = DB::open(&options("filter_policy=bloomfilter:10:false"), tmp.path()).unwrap();
        fill(&db, "k");
        drop(db);
        let db = DB::open(&options("filter_policy=rocksdb.BuiltinBloomFilter"), tmp.path()).unwrap();
        fill(&db, "m");
        check_gets(&db, "k");
        check_gets(&db, "m");
        let t = tables(&db, tmp.path());
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].0.filter_policy_name.as_str(), t[0].1),
            ("bloomfilter", Some(FilterKind::FastLocalBloom))
        );
        // RocksDB names the policy set, though it built no filter.
        assert_eq!((t[1].0.filter_policy_name.as_str(), t[1].1), ("rocksdb.BuiltinBloomFilter", None));
        assert_eq!(t[1].0.filter_size, 0);
        drop(db);
        let text = options_file_text(tmp.path());
        assert!(text.contains("filter_policy=rocksdb.BuiltinBloomFilter\n"), "{text}");
        let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
        assert!(log.contains("  filter_policy: rocksdb.BuiltinBloomFilter\n"), "{log}");
        // The `{id=...}` form builds the same policy.
        let o = options("filter_policy={id=rocksdb.BuiltinBloomFilter}");
        let db = DB::open(&o, tmp.path()).unwrap();
        fill(&db, "n");
        let t = tables(&db, tmp.path());
        assert_eq!((t[2].0.filter_policy_name.as_str(), t[2].1), ("rocksdb.BuiltinBloomFilter", None));
    }
}
