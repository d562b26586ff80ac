//! The admin commands: get, put, delete, scan, list-column-families.

use std::io::Write;

use clap::Args;
use shale::{IteratorMode, Options, ReadOptions, DB};

#[derive(Args)]
#[command(rename_all = "snake_case")]
pub struct DbArgs {
    /// Database directory.
    #[arg(long)]
    pub db: String,
    /// Create the database if it does not exist.
    #[arg(long, default_value_t = false)]
    pub create_if_missing: bool,
    /// Column family to use.
    #[arg(long, default_value = "default")]
    pub column_family: String,
    /// Keys and values are given and printed as hex (0x...).
    #[arg(long, default_value_t = false)]
    pub hex: bool,
}

#[derive(Args)]
#[command(rename_all = "snake_case")]
pub struct KeyArgs {
    #[command(flatten)]
    pub db: DbArgs,
    pub key: String,
}

#[derive(Args)]
#[command(rename_all = "snake_case")]
pub struct PutArgs {
    #[command(flatten)]
    pub db: DbArgs,
    pub key: String,
    pub value: String,
}

#[derive(Args)]
#[command(rename_all = "snake_case")]
pub struct ScanArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// First key (inclusive).
    #[arg(long)]
    pub from: Option<String>,
    /// Last key (exclusive).
    #[arg(long)]
    pub to: Option<String>,
    /// Stop after this many keys.
    #[arg(long)]
    pub max_keys: Option<usize>,
    /// Scan from the last key backwards.
    #[arg(long, default_value_t = false)]
    pub reverse: bool,
}

type Result<T> = std::result::Result<T, String>;

fn decode(hex: bool, s: &str) -> Result<Vec<u8>> {
    if !hex {
        return Ok(s.as_bytes().to_vec());
    }
    let s = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex string: {s}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("bad hex {s}: {e}")))
        .collect()
}

fn encode(hex: bool, b: &[u8]) -> String {
    if hex {
        let mut s = String::from("0x");
        for x in b {
            s.push_str(&format!("{x:02X}"));
        }
        s
    } else {
        String::from_utf8_lossy(b).into_owned()
    }
}

fn open(a: &DbArgs) -> Result<DB> {
    let mut o = Options::default();
    o.create_if_missing(a.create_if_missing);
    let cfs = DB::list_cf(&o, &a.db).unwrap_or_else(|_| vec!["default".to_string()]);
    DB::open_cf_descriptors(&o, &a.db, crate::families::descriptors(&o, cfs)).map_err(|e| e.to_string())
}

fn cf<'a>(db: &'a DB, a: &DbArgs) -> Result<&'a shale::ColumnFamily> {
    db.cf_handle(&a.column_family).ok_or_else(|| format!("Column family not found: {}", a.column_family))
}

pub fn get(a: &KeyArgs) -> Result<()> {
    let db = open(&a.db)?;
    let key = decode(a.db.hex, &a.key)?;
    match db.get_cf(cf(&db, &a.db)?, &key).map_err(|e| e.to_string())? {
        Some(v) => {
            println!("{}", encode(a.db.hex, &v));
            Ok(())
        }
        None => Err("NotFound: ".to_string()),
    }
}

pub fn put(a: &PutArgs) -> Result<()> {
    let db = open(&a.db)?;
    let (k, v) = (decode(a.db.hex, &a.key)?, decode(a.db.hex, &a.value)?);
    db.put_cf(cf(&db, &a.db)?, k, v).map_err(|e| e.to_string())?;
    println!("OK");
    Ok(())
}

pub fn delete(a: &KeyArgs) -> Result<()> {
    let db = open(&a.db)?;
    db.delete_cf(cf(&db, &a.db)?, decode(a.db.hex, &a.key)?).map_err(|e| e.to_string())?;
    println!("OK");
    Ok(())
}

pub fn scan(a: &ScanArgs) -> Result<()> {
    let db = open(&a.db)?;
    let mut ro = ReadOptions::default();
    if let Some(f) = &a.from {
        ro.set_iterate_lower_bound(decode(a.db.hex, f)?);
    }
    if let Some(t) = &a.to {
        ro.set_iterate_upper_bound(decode(a.db.hex, t)?);
    }
    let mode = if a.reverse { IteratorMode::End } else { IteratorMode::Start };
    let out = std::io::stdout();
    let mut out = out.lock();
    for (n, item) in db.iterator_cf_opt(cf(&db, &a.db)?, ro, mode).enumerate() {
        if a.max_keys.is_some_and(|m| n >= m) {
            break;
        }
        let (k, v) = item.map_err(|e| e.to_string())?;
        writeln!(out, "{} : {}", encode(a.db.hex, &k), encode(a.db.hex, &v)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub fn list_cf(a: &DbArgs) -> Result<()> {
    let names = DB::list_cf(&Options::default(), &a.db).map_err(|e| e.to_string())?;
    println!("Column families in {}: \n{{{}}}", a.db, names.join(", "));
    Ok(())
}
