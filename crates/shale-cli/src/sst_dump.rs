//! `shale sst_dump`: RocksDB's `sst_dump` (tools/sst_dump_tool.cc, table/sst_file_dumper.cc)
//! flags and output: `--file=<file or directory> --command=check|scan|raw|verify|recompress|identify
//! --show_properties --show_summary --from --to --read_num --output_hex --input_key_hex
//! --decode_blob_index --show_sequence_number_type` and recompress's flags.

use std::io::Write;

use shale_format::key::{make_internal_key, parse_internal_key, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK};
use shale_format::table::{Table, TableProperties};

use crate::ldb::fmt::Out;
use crate::ldb::fmt::{parsed_debug, slice_to_string, to_hex, Failure, Res};

#[derive(Default)]
struct Args {
    /// The files and directories named (`--file=`, or positional as RocksDB 11 allows).
    files: Vec<String>,
    command: String,
    output_hex: bool,
    input_key_hex: bool,
    read_num: u64,
    verify_checksum: bool,
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
    show_properties: bool,
    show_summary: bool,
    /// `--decode_blob_index`: blob references printed decoded.
    decode_blob_index: bool,
    /// `--show_sequence_number_type`: raw dump entries with their seqno and type.
    show_seq_type: bool,
    /// `--command=recompress`'s flags.
    recompress: crate::sst_recompress::Opts,
}

const USAGE: &str = "Usage: sst_dump --file=<data_dir_OR_sst_file> [--command=check|scan|raw|verify|identify]
    --file=<data_dir_OR_sst_file>
      Path to SST file or directory containing SST files

    --command=check|scan|raw|verify|identify
        check: Iterate over entries in files but don't print anything except if an error is encountered (default command)
        scan: Iterate over entries in files and print them to screen
        raw: Dump all the table contents to <file_name>_dump.txt
        verify: Iterate all the blocks in files verifying checksum to detect possible corruption but don't print anything except if a corruption is encountered
        recompress: reports the SST file size if recompressed with different compression types
        identify: Reports a file is a valid SST file or lists all valid SST files under a directory

    --show_sequence_number_type
      Show sequence number and value type when executing raw command

    --output_hex
      Can be combined with scan command to print the keys and values in Hex

    --from=<user_key>
      Key to start reading from when executing check|scan

    --to=<user_key>
      Key to stop reading at when executing check|scan

    --read_num=<num>
      Maximum number of entries to read when executing check|scan

    --verify_checksum
      Verify file checksum when executing check|scan

    --input_key_hex
      Can be combined with --from and --to to indicate that these values are encoded in Hex

    --show_properties
      Print table properties after iterating over the file when executing check|scan|raw|identify

    --show_summary
      Print summary of number of files, data blocks and block sizes

    --decode_blob_index
      Decode blob indexes and print them in a human-readable format during scans.

    --set_block_size=<block_size>
      Can be combined with --command=recompress to set the block size that will
      be used when trying different compression algorithms

    --compression_types=<comma-separated list of CompressionType members, e.g.,
      kSnappyCompression>
      Can be combined with --command=recompress to run recompression for this
      list of compression types

    --compression_level_from=<compression_level>
    --compression_level_to=<compression_level>
      Range of compression levels to try with --command=recompress (both or neither)
";

fn parse(args: &[String]) -> Res<Args> {
    let mut a = Args { command: String::new(), ..Default::default() };
    let mut from: Option<String> = None;
    let mut to: Option<String> = None;
    let mut rest_are_files = false;
    let (mut has_from, mut has_to) = (false, false);
    for arg in args {
        if rest_are_files {
            a.files.push(arg.clone());
        } else if arg == "--" {
            rest_are_files = true;
        } else if let Some(v) = arg.strip_prefix("--file=") {
            a.files.push(v.to_string());
        } else if !arg.starts_with('-') {
            a.files.push(arg.clone());
        } else if arg == "--output_hex" {
            a.output_hex = true;
        } else if arg == "--input_key_hex" {
            a.input_key_hex = true;
        } else if let Some(v) = arg.strip_prefix("--read_num=") {
            a.read_num = v.parse().map_err(|_| Failure::usage(format!("Unrecognized argument '{arg}'\n")))?;
        } else if arg == "--verify_checksum" {
            a.verify_checksum = true;
        } else if let Some(v) = arg.strip_prefix("--command=") {
            a.command = v.to_string();
        } else if let Some(v) = arg.strip_prefix("--from=") {
            from = Some(v.to_string());
        } else if let Some(v) = arg.strip_prefix("--to=") {
            to = Some(v.to_string());
        } else if arg == "--show_properties" {
            a.show_properties = true;
        } else if arg == "--show_summary" {
            a.show_summary = true;
        } else if arg == "--show_sequence_number_type" {
            a.show_seq_type = true;
        } else if arg == "--decode_blob_index" {
            a.decode_blob_index = true;
        } else if let Some(v) = arg.strip_prefix("--compression_types=") {
            let mut types = Vec::new();
            // std::getline on ',': an empty list names nothing, a trailing comma adds nothing.
            for name in v
                .split(',')
                .enumerate()
                .filter(|(i, n)| !(n.is_empty() && *i + 1 == v.split(',').count()))
                .map(|(_, n)| n)
            {
                match crate::sst_recompress::type_from_name(name) {
                    Some(t) => types.push(t),
                    None => return Err(Failure::plain(format!("{name} is not a valid CompressionType"))),
                }
            }
            a.recompress.types = Some(types);
        } else if let Some(v) =
            int_arg(arg, &["--set_block_size=", "--block_size="], "block size must be numeric")?
        {
            a.recompress.block_size = v as usize;
        } else if let Some(v) = int_arg(arg, &["--compression_level="], "compression_level must be numeric")?
        {
            (has_from, has_to) = (true, true);
            a.recompress.level_from = v as i32;
            a.recompress.level_to = v as i32;
        } else if let Some(v) =
            int_arg(arg, &["--compression_level_from="], "compression_level_from must be numeric")?
        {
            has_from = true;
            a.recompress.level_from = v as i32;
        } else if let Some(v) =
            int_arg(arg, &["--compression_level_to="], "compression_level_to must be numeric")?
        {
            has_to = true;
            a.recompress.level_to = v as i32;
        } else if let Some(v) =
            int_arg(arg, &["--compression_max_dict_bytes="], "compression_max_dict_bytes must be numeric")?
        {
            a.recompress.compression.max_dict_bytes = u32::try_from(v).map_err(|_| {
                Failure::usage(format!("compression_max_dict_bytes must be a uint32_t: '{arg}'\n"))
            })?;
        } else if let Some(v) = int_arg(
            arg,
            &["--compression_zstd_max_train_bytes="],
            "compression_zstd_max_train_bytes must be numeric",
        )? {
            a.recompress.compression.zstd_max_train_bytes = u32::try_from(v).map_err(|_| {
                Failure::usage(format!("compression_zstd_max_train_bytes must be a uint32_t: '{arg}'\n"))
            })?;
        } else if let Some(v) = int_arg(
            arg,
            &["--compression_max_dict_buffer_bytes="],
            "compression_max_dict_buffer_bytes must be numeric",
        )? {
            a.recompress.compression.max_dict_buffer_bytes = u64::try_from(v).map_err(|_| {
                Failure::usage(format!("compression_max_dict_buffer_bytes must be positive: '{arg}'\n"))
            })?;
        } else if arg == "--compression_use_zstd_finalize_dict" {
            a.recompress.compression.use_zstd_dict_trainer = false;
        } else if let Some(v) = int_arg(
            arg,
            &["--compression_parallel_threads="],
            "compression_parallel_threads must be numeric",
        )? {
            // Parallel compression changes nothing in what is written, only how fast.
            a.recompress.threads = u32::try_from(v).ok().filter(|&t| t <= 100).ok_or_else(|| {
                Failure::usage(format!("compression_parallel_threads out of range: '{arg}'\n"))
            })?;
        } else if arg == "--help" {
            return Err(Failure::usage(String::new()));
        } else {
            return Err(Failure::usage(format!("Unrecognized argument '{arg}'\n")));
        }
    }
    if has_from != has_to {
        return Err(Failure::plain("Specify both --compression_level_from and --compression_level_to.\n"));
    }
    let decode = |s: String| -> Res<Vec<u8>> {
        if a.input_key_hex {
            crate::ldb::fmt::hex_to_string(&s)
        } else {
            Ok(s.into_bytes())
        }
    };
    a.from = from.map(decode).transpose()?;
    a.to = to.map(decode).transpose()?;
    Ok(a)
}

/// sst_dump's `ParseIntArg`: the value of `--name=<int>` for one of `names`; a value that
/// is not a number fails with `msg`.
fn int_arg(arg: &str, names: &[&str], msg: &str) -> Res<Option<i64>> {
    for n in names {
        if let Some(v) = arg.strip_prefix(n) {
            // `istringstream >> int64_t`: leading blanks, a sign and digits; the rest ignored.
            let v = v.trim_start();
            let sign = usize::from(v.starts_with(['-', '+']));
            let end = sign + v[sign..].bytes().take_while(u8::is_ascii_digit).count();
            return v[..end].parse::<i64>().map(Some).map_err(|_| Failure::plain(msg.to_string()));
        }
    }
    Ok(None)
}

/// Runs `shale sst_dump <args>`; returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let a = match parse(args) {
        Ok(a) => a,
        Err(f) => {
            if f.usage {
                eprint!("{}", f.msg);
                eprint!("{USAGE}");
            } else {
                eprintln!("{}", f.msg);
            }
            return 1;
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let code = match dump(&a, &mut out) {
        Ok(c) => c,
        Err(f) => {
            let _ = out.flush();
            eprintln!("{}", f.msg);
            1
        }
    };
    if out.flush().is_err() {
        return 1;
    }
    code
}

fn w(out: &mut Out<'_>, b: &[u8]) -> Res<()> {
    out.write_all(b).map_err(Failure::io)
}

fn dump(a: &Args, out: &mut Out<'_>) -> Res<i32> {
    if a.files.is_empty() {
        return Err(Failure::new("file or directory must be specified.\n\n".to_string() + USAGE));
    }
    // RocksDB prints its Env's address; Shale has no Env object, so a fixed value.
    w(out, b"options.env is 0x0\n")?;
    // RocksDB 11: a directory with entries is listed (in the order the OS gives, as Shale
    // lists it too); anything else that exists, an empty directory included, is a file.
    let mut dirs: Vec<bool> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    for target in &a.files {
        let children: Vec<String> = match std::fs::read_dir(target) {
            Ok(rd) => {
                rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
            }
            Err(_) => Vec::new(),
        };
        if children.is_empty() {
            if std::fs::metadata(target).is_err() {
                out.flush().map_err(Failure::io)?;
                eprintln!("NotFound: {target}: No such file or directory");
                return Ok(1);
            }
            files.push(target.clone());
            dirs.push(false);
        } else {
            files.extend(children.into_iter().map(|c| format!("{target}/{c}")));
            dirs.push(true);
        }
    }
    let verify_checksum = a.verify_checksum || a.command == "verify";
    let mut valid: Vec<String> = Vec::new();
    let mut total_read = 0u64;
    let mut totals = [0u64; 5];
    for path in files {
        if path.len() <= 4 || !path.ends_with(".sst") {
            continue;
        }
        w(out, format!("Process {path}\n").as_bytes())?;
        out.flush().map_err(Failure::io)?;
        let table = match open(&path, verify_checksum) {
            Ok(t) => t,
            Err(f) => {
                eprintln!("{path}: {}", f.msg);
                continue;
            }
        };
        w(out, b"Sst file format: block-based\n")?;
        valid.push(path.clone());
        if valid.len() == 1 && matches!(a.command.as_str(), "" | "check" | "scan") {
            let f = a.from.as_deref().map(to_hex).unwrap_or_default();
            let t = a.to.as_deref().map(to_hex).unwrap_or_default();
            w(out, format!("from [{f}] to [{t}]\n").as_bytes())?;
        }
        if a.command == "recompress" {
            let mut text = Vec::new();
            let r = crate::sst_recompress::show_all(&table, &a.recompress, &mut text);
            w(out, &text)?;
            if let Err(f) = r {
                out.flush().map_err(Failure::io)?;
                eprintln!("Failed to recompress: {}", f.msg);
                return Ok(1);
            }
            continue;
        }
        if a.command == "raw" {
            let out_name = format!("{}_dump.txt", &path[..path.len() - 4]);
            let written = crate::sst_raw::dump_table(&path, &table, a.show_seq_type)
                .and_then(|text| std::fs::write(&out_name, text).map_err(Failure::io));
            if let Err(f) = written {
                out.flush().map_err(Failure::io)?;
                eprintln!("{path}: {}", f.msg);
                return Ok(1);
            }
            w(out, format!("raw dump written to file {out_name}\n").as_bytes())?;
            continue;
        }
        if matches!(a.command.as_str(), "" | "check" | "scan") {
            let limit = if a.read_num > 0 { a.read_num - total_read } else { 0 };
            let r = read_sequential(&table, a.command == "scan", limit, a, out);
            match r {
                Ok(n) => total_read += n,
                Err(f) => {
                    out.flush().map_err(Failure::io)?;
                    eprintln!("{path}: {}", f.msg);
                }
            }
            if a.read_num > 0 && total_read > a.read_num {
                break;
            }
        }
        if a.command == "verify" {
            match verify(&table) {
                Ok(()) => w(out, b"The file is ok\n")?,
                Err(f) => {
                    out.flush().map_err(Failure::io)?;
                    eprintln!("{path} is corrupted: {}", f.msg);
                }
            }
            continue;
        }
        if a.show_properties || a.show_summary {
            let p = table.properties();
            if a.show_properties {
                w(out, b"Table Properties:\n------------------------------\n  ")?;
                w(out, &properties_to_string(p, "\n  ", ": "))?;
            }
            totals[0] += 1;
            totals[1] += p.num_data_blocks;
            totals[2] += p.data_size;
            totals[3] += p.index_size;
            totals[4] += p.filter_size;
            if a.show_properties {
                w(out, b"Raw user collected properties\n------------------------------\n")?;
                for (k, v) in user_collected(p) {
                    w(out, format!("  # {k}: 0x{}\n", to_hex(v)).as_bytes())?;
                }
            }
        }
    }
    if a.show_summary {
        w(
            out,
            format!(
                "total number of files: {}\ntotal number of data blocks: {}\ntotal data block size: {}\n\
                 total index block size: {}\ntotal filter block size: {}\n",
                totals[0], totals[1], totals[2], totals[3], totals[4]
            )
            .as_bytes(),
        )?;
    }
    if valid.is_empty() {
        for (target, dir) in a.files.iter().zip(&dirs) {
            if *dir {
                w(out, b"------------------------------\n")?;
                out.flush().map_err(Failure::io)?;
                eprintln!("No valid SST files found in {target}");
            } else {
                out.flush().map_err(Failure::io)?;
                eprintln!("{target} is not a valid SST file");
            }
        }
        return Ok(1);
    }
    if a.command == "identify" {
        if a.files.len() > 1 || dirs[0] {
            let found_in =
                if a.files.len() == 1 { format!(" found in {}", a.files[0]) } else { String::new() };
            w(
                out,
                format!("------------------------------\nList of valid SST files{found_in}:\n").as_bytes(),
            )?;
            for f in &valid {
                w(out, format!("{f}\n").as_bytes())?;
            }
            w(out, format!("Number of valid SST files: {}\n", valid.len()).as_bytes())?;
        } else {
            w(out, format!("{} is a valid SST file\n", a.files[0]).as_bytes())?;
        }
    }
    Ok(0)
}

fn open(path: &str, verify: bool) -> Res<std::sync::Arc<Table>> {
    let size = std::fs::metadata(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Failure::new(format!(
                "IO error: No such file or directory: While open a file for random read: {path}: No such file or directory"
            )),
            _ => Failure::io(e),
        })?
        .len();
    let fs = shale_format::fs::default_fs();
    let file = fs.new_random_access_file(std::path::Path::new(path)).map_err(Failure::db)?;
    let opts = shale_format::table::TableReaderOptions {
        verify_checksums: verify,
        ..shale_format::table::TableReaderOptions::standalone(
            shale_format::key::bytewise_internal_comparator(),
            path.to_string(),
        )
    };
    Table::open(file, size, opts).map_err(Failure::db)
}

/// SstFileDumper::ReadSequential: returns the number of entries read.
fn read_sequential(
    t: &std::sync::Arc<Table>,
    print: bool,
    read_num: u64,
    a: &Args,
    out: &mut Out<'_>,
) -> Res<u64> {
    let mut it = t.iter(false);
    match &a.from {
        Some(f) => it.seek(&make_internal_key(f, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK)),
        None => it.seek_to_first(),
    }
    let mut i = 0u64;
    while it.valid() {
        i += 1;
        if read_num > 0 && i > read_num {
            break;
        }
        let key = it.key();
        match parse_internal_key(key) {
            Ok(p) => {
                if a.to.as_deref().is_some_and(|t| p.user_key >= t) {
                    break;
                }
                if print {
                    let mut line = parsed_debug(p.user_key, p.sequence, p.value_type as u8, a.output_hex);
                    line.extend_from_slice(b" => ");
                    if a.decode_blob_index && p.value_type as u8 == VALUE_TYPE_BLOB_INDEX {
                        match blob_index_debug(it.value(), a.output_hex) {
                            Some(d) => line.extend(d),
                            None => {
                                line.truncate(line.len() - 4);
                                out.flush().map_err(Failure::io)?;
                                eprintln!("{} => error decoding blob index", String::from_utf8_lossy(&line));
                                it.next();
                                continue;
                            }
                        }
                    } else if p.value_type == shale_format::key::ValueType::WideColumnEntity {
                        // A wide-column entity prints its columns (RocksDB's SstFileDumper).
                        match shale_format::wide_columns::owned_columns(it.value()) {
                            Ok(c) => line.extend(crate::ldb::fmt::dump_columns(&c, a.output_hex)),
                            Err(_) => {
                                line.truncate(line.len() - 4);
                                out.flush().map_err(Failure::io)?;
                                eprintln!(
                                    "{} => error deserializing wide columns",
                                    String::from_utf8_lossy(&line)
                                );
                                it.next();
                                continue;
                            }
                        }
                    } else {
                        line.extend(slice_to_string(it.value(), a.output_hex));
                    }
                    line.push(b'\n');
                    w(out, &line)?;
                }
            }
            Err(e) => eprintln!("{e}"),
        }
        it.next();
    }
    it.status().map_err(Failure::db)?;
    Ok(i)
}

/// kTypeBlobIndex.
const VALUE_TYPE_BLOB_INDEX: u8 = 0x11;

/// RocksDB's `BlobIndex::DecodeFrom` then `DebugString(output_hex)`: `[blob ref] file:N
/// offset:O size:S compression: C` (` exp:E` for kBlobTTL), or `[inlined blob] value:V
/// exp:E`; None where RocksDB fails to decode (the caller reports it).
fn blob_index_debug(v: &[u8], hex: bool) -> Option<Vec<u8>> {
    use shale_format::coding::Decoder;
    let (&t, rest) = v.split_first()?;
    // kInlinedTTL = 0, kBlob = 1, kBlobTTL = 2.
    if t > 2 {
        return None;
    }
    let mut d = Decoder::new(rest);
    let exp = if t != 1 { Some(d.varint64()?) } else { None };
    let mut s = Vec::new();
    if t == 0 {
        s.extend_from_slice(b"[inlined blob] value:");
        s.extend(slice_to_string(d.remaining(), hex));
    } else {
        let (file, offset, size) = (d.varint64()?, d.varint64()?, d.varint64()?);
        let &[c] = d.remaining() else { return None };
        let file = if file == 0 { "same".to_string() } else { file.to_string() };
        let c = match shale_format::table::CompressionType::from_u8(c).filter(|_| c <= 7) {
            Some(ct) => ct.name().to_string(),
            None if c == 0xff => "DisableOption".to_string(),
            None if (0x80..=0xfe).contains(&c) => format!("Custom{c:02X}"),
            None => format!("Reserved{c:02X}"),
        };
        s.extend(format!("[blob ref] file:{file} offset:{offset} size:{size} compression: {c}").into_bytes());
    }
    if let Some(e) = exp {
        s.extend(format!(" exp:{e}").into_bytes());
    }
    Some(s)
}

/// Reads every block with its checksum verified.
fn verify(t: &std::sync::Arc<Table>) -> Res<()> {
    let mut it = t.iter(false);
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    it.status().map_err(Failure::db)
}

/// ldb's `dump_live_files` view of one table (ldb's DumpSstFile): the entries, then the
/// properties as `name=value` lines.
pub fn dump_sst_for_ldb(path: &str, hex: bool, out: &mut Out<'_>) -> Res<()> {
    dump_sst_for_ldb_with(path, hex, None, None, false, out)
}

/// ldb's DumpSstFile with its range and `--decode_blob_index` (`dump --path=<n>.sst`).
pub fn dump_sst_for_ldb_with(
    path: &str,
    hex: bool,
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
    decode_blob_index: bool,
    out: &mut Out<'_>,
) -> Res<()> {
    w(out, format!("Process {path}\n").as_bytes())?;
    let t = match open(path, false) {
        Ok(t) => t,
        Err(f) => {
            out.flush().map_err(Failure::io)?;
            eprintln!("Error in reading SST file {path}{}", f.msg);
            return Ok(());
        }
    };
    w(out, b"Sst file format: block-based\n")?;
    let a = Args { output_hex: hex, from, to, decode_blob_index, ..Default::default() };
    if let Err(f) = read_sequential(&t, true, u64::MAX, &a, out) {
        out.flush().map_err(Failure::io)?;
        eprintln!("Error in reading SST file {path}{}", f.msg);
        return Ok(());
    }
    w(out, b"\nTable Properties:\n")?;
    w(out, &properties_to_string(t.properties(), "\n", "="))?;
    w(out, b"\n")
}

fn base36(s: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'Z' => c - b'A' + 10,
            b'a'..=b'z' => c - b'a' + 10,
            _ => return None,
        } as u64;
        v = v.wrapping_mul(36).wrapping_add(d);
    }
    Some(v)
}

/// The table's public unique id (table/unique_id.cc), from the DB id, session id and file
/// number in its properties; None when one is missing, as RocksDB prints "N/A".
pub fn table_unique_id(p: &TableProperties) -> Option<String> {
    let sid = p.db_session_id.as_bytes();
    if p.db_id.is_empty() || p.orig_file_number == 0 || sid.len() < 13 || sid.len() > 24 {
        return None;
    }
    let a = base36(&sid[..sid.len() - 12])?;
    let b = base36(&sid[sid.len() - 12..])?;
    let upper = a >> 2;
    let lower = (b & (u64::MAX >> 2)) | (a << 62);
    let h = xxhash_rust::xxh3::xxh3_128_with_seed(p.db_id.as_bytes(), upper);
    let db_a = (h >> 64) as u64;
    let id = [lower, db_a ^ p.orig_file_number];
    Some(crate::ldb::fmt::unique_id_strings(id).1)
}

/// Properties RocksDB 11.8.1 reads into `TableProperties` fields (table/meta_blocks.cc) that
/// Shale keeps raw in `user_collected`: 11.8.1 does not list them among the "Raw user
/// collected properties" (7.8.3, which knew fewer, did).
const KNOWN_TO_ROCKSDB_11: &[&str] = &[
    "rocksdb.udi.is.primary.index",
    "rocksdb.num.data.blocks.compression.rejected",
    "rocksdb.num.data.blocks.compression.bypassed",
    "rocksdb.num.uniform.blocks",
    "rocksdb.newest.key.time",
    "rocksdb.tail.start.offset",
    "rocksdb.user.defined.timestamps.persisted",
    "rocksdb.key.largest.seqno",
    "rocksdb.key.smallest.seqno",
    "rocksdb.data.block.restart.interval",
    "rocksdb.index.block.restart.interval",
    "rocksdb.separate.key.value.in.data.block",
];

/// The "Raw user collected properties" RocksDB 11.8.1 prints: every property it does not
/// read into a field (deleted.keys and merge.operands stay listed, as RocksDB keeps them
/// for compatibility).
pub fn user_collected(p: &TableProperties) -> impl Iterator<Item = (&String, &Vec<u8>)> {
    p.user_collected.iter().filter(|(k, _)| !KNOWN_TO_ROCKSDB_11.contains(&k.as_str()))
}

/// TableProperties::ToString(prop_delim, kv_delim), RocksDB 11.8.1's list and order.
pub fn properties_to_string(p: &TableProperties, pd: &str, kd: &str) -> Vec<u8> {
    let mut r = Vec::new();
    let mut add = |k: &str, v: String| {
        r.extend(format!("{k}{kd}{v}{pd}").into_bytes());
    };
    let na = |s: &str| if s.is_empty() { "N/A".to_string() } else { s.to_string() };
    let avg = |x: u64| if p.num_entries != 0 { x as f64 / p.num_entries as f64 } else { 0.0 };
    // Fields RocksDB 11 reads with these defaults when the property is absent.
    let raw = |name: &str, default: u64| p.raw_u64(name).unwrap_or(default).to_string();
    add("# data blocks", p.num_data_blocks.to_string());
    add("# data blocks compression rejected", raw("rocksdb.num.data.blocks.compression.rejected", 0));
    add("# data blocks compression bypassed", raw("rocksdb.num.data.blocks.compression.bypassed", 0));
    add("# uniform blocks", raw("rocksdb.num.uniform.blocks", 0));
    add("# entries", p.num_entries.to_string());
    add("# deletions", p.num_deletions.to_string());
    add("# merge operands", p.num_merge_operands.to_string());
    add("# range deletions", p.num_range_deletions.to_string());
    add("raw key size", p.raw_key_size.to_string());
    add("raw average key size", format!("{:.6}", avg(p.raw_key_size)));
    add("raw value size", p.raw_value_size.to_string());
    add("raw average value size", format!("{:.6}", avg(p.raw_value_size)));
    add("data block size", p.data_size.to_string());
    // RocksDB 11 never reads the uncompressed data size back from a file: always 0 here.
    add("data uncompressed size", "0".to_string());
    add(
        &format!(
            "index block size (user-key? {}, delta-value? {})",
            p.index_key_is_user_key, p.index_value_is_delta_encoded
        ),
        p.index_size.to_string(),
    );
    if p.index_partitions != 0 {
        add("# index partitions", p.index_partitions.to_string());
        add("top-level index size", p.top_level_index_size.to_string());
    }
    add("filter block size", p.filter_size.to_string());
    add("# entries for filter", p.num_filter_entries.to_string());
    add("(estimated) table size", (p.data_size + p.index_size + p.filter_size).to_string());
    add("filter policy name", na(&p.filter_policy_name));
    add("prefix extractor name", na(&p.prefix_extractor_name));
    let cf_id = if p.column_family_id == shale_format::table::properties::UNKNOWN_COLUMN_FAMILY {
        "N/A".to_string()
    } else {
        p.column_family_id.to_string()
    };
    add("column family ID", cf_id);
    add("column family name", na(&p.column_family_name));
    add("comparator name", na(&p.comparator_name));
    let udt = p.raw_u64("rocksdb.user.defined.timestamps.persisted").unwrap_or(1) != 0;
    add("user defined timestamps persisted", udt.to_string());
    add("largest sequence number in file", raw("rocksdb.key.largest.seqno", u64::MAX));
    add("smallest sequence number in file", raw("rocksdb.key.smallest.seqno", u64::MAX));
    add("merge operator name", na(&p.merge_operator_name));
    add("property collectors names", na(&p.property_collectors_names));
    add("SST file compression algo", na(&p.compression_name));
    add("SST file compression options", na(&p.compression_options));
    add("creation time", p.creation_time.to_string());
    add("time stamp of earliest key", p.oldest_key_time.to_string());
    add("time stamp of newest key", raw("rocksdb.newest.key.time", 0));
    add("file creation time", p.file_creation_time.to_string());
    add("slow compression estimated data size", p.slow_compression_estimated_data_size.to_string());
    add("fast compression estimated data size", p.fast_compression_estimated_data_size.to_string());
    add("DB identity", p.db_id.clone());
    add("DB session identity", p.db_session_id.clone());
    add("DB host id", p.db_host_id.clone());
    add("original file number", p.orig_file_number.to_string());
    add("unique ID", table_unique_id(p).unwrap_or_else(|| "N/A".to_string()));
    // As RocksDB's TableProperties::ToString: the decoded pairs (none: nothing), "N/A" when
    // they do not decode.
    let mut m = shale_format::table::seqno_time::SeqnoToTimeMapping::new();
    let seqno_time = match m.decode_from(&p.seqno_to_time_mapping) {
        Ok(()) => m.to_human_string(),
        Err(_) => "N/A".to_string(),
    };
    add("Sequence number to time mapping", seqno_time);
    r
}
