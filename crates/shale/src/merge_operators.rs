//! RocksDB's built-in merge operators (`utilities/merge_operators/`), by the names RocksDB
//! registers them under, so that a database RocksDB wrote with one reads the same in Shale,
//! and Shale records the same operator name in the OPTIONS file and in the tables'
//! `rocksdb.merge.operator` property. A Shale extension (rust-rocksdb has no access to them):
//!
//! ```
//! let mut opts = shale::Options::default();
//! opts.set_merge_operator_object(shale::merge_operators::uint64add());
//! ```
//!
//! | nickname (`by_name`) | `Name()` | full merge | partial merge |
//! |---|---|---|---|
//! | `put`, `put_v1` | `PutOperator` | the newest operand | the newest operand |
//! | `uint64add` | `UInt64AddOperator` | sum of fixed64 LE values (a value of another size counts 0) | sum |
//! | `max` | `MaxOperator` | bytewise largest of base and operands | largest |
//! | `bytesxor` | `BytesXOR` | byte-wise XOR (the longer input's tail kept) | XOR |
//! | `sortlist` | `MergeSortOperator` | merge of sorted comma-separated integer lists (the base ignored) | merge |
//! | `stringappend` | `StringAppendOperator` | base and operands joined by `,` | joined |
//! | `stringappendtest` | `StringAppendTESTOperator` | as `stringappend` | none |
//!
//! One deliberate difference: RocksDB's `sortlist` partial merge of several operands
//! returns an empty string (a bug: `SortList::PartialMergeMulti` writes nothing); Shale
//! merges the lists, which is what its full merge gives.

use crate::merge_operator::{MergeOperands, MergeOperator};

/// The built-in operator RocksDB registers as `nickname` (`db_bench --merge_operator`,
/// `ldb --merge_operator`... accept these names), or None.
pub fn by_name(nickname: &str) -> Option<MergeOperator> {
    Some(match nickname {
        "put" | "put_v1" | "PutOperator" => put(),
        "uint64add" | "UInt64AddOperator" => uint64add(),
        "max" | "MaxOperator" => max(),
        "bytesxor" | "BytesXOR" => bytesxor(),
        "sortlist" | "MergeSortOperator" => sortlist(),
        "stringappend" | "StringAppendOperator" => stringappend(","),
        "stringappendtest" | "StringAppendTESTOperator" => stringappendtest(","),
        _ => return None,
    })
}

/// Folds an associative `merge(existing, operand)` over the operands, as RocksDB's
/// `AssociativeMergeOperator` does for both full and partial merges.
fn associative(
    name: &str,
    f: impl Fn(Option<&[u8]>, &[u8]) -> Vec<u8> + Send + Sync + Clone + 'static,
) -> MergeOperator {
    let fold = move |_k: &[u8], existing: Option<&[u8]>, ops: &MergeOperands| -> Option<Vec<u8>> {
        let mut acc: Option<Vec<u8>> = existing.map(<[u8]>::to_vec);
        for op in ops {
            acc = Some(f(acc.as_deref(), op));
        }
        acc
    };
    MergeOperator::new(name, fold.clone(), Some(Box::new(fold)))
}

/// `put`: the newest operand wins.
pub fn put() -> MergeOperator {
    let newest = |_k: &[u8], _e: Option<&[u8]>, ops: &MergeOperands| ops.iter().last().map(<[u8]>::to_vec);
    MergeOperator::new("PutOperator", newest, Some(Box::new(newest)))
}

fn fixed64(v: &[u8]) -> u64 {
    <[u8; 8]>::try_from(v).map(u64::from_le_bytes).unwrap_or(0)
}

/// `uint64add`: values are 8-byte little-endian counters, summed (wrapping).
pub fn uint64add() -> MergeOperator {
    associative("UInt64AddOperator", |e, v| {
        e.map_or(0, fixed64).wrapping_add(fixed64(v)).to_le_bytes().to_vec()
    })
}

/// `max`: the bytewise largest value.
pub fn max() -> MergeOperator {
    let full = |_k: &[u8], e: Option<&[u8]>, ops: &MergeOperands| {
        let mut m: &[u8] = e.unwrap_or(&[]);
        for op in ops {
            if m < op {
                m = op;
            }
        }
        Some(m.to_vec())
    };
    MergeOperator::new("MaxOperator", full, Some(Box::new(full)))
}

/// `bytesxor`: byte-wise XOR; the longer input's extra bytes are kept.
pub fn bytesxor() -> MergeOperator {
    associative("BytesXOR", |e, v| match e {
        None => v.to_vec(),
        Some(e) => {
            let (long, short) = if e.len() >= v.len() { (e, v) } else { (v, e) };
            let mut out = long.to_vec();
            for (o, s) in out.iter_mut().zip(short) {
                *o ^= s;
            }
            out
        }
    })
}

fn parse_list(v: &[u8]) -> Option<Vec<i64>> {
    std::str::from_utf8(v).ok()?.split(',').map(|s| s.trim().parse::<i64>().ok()).collect()
}

fn merge_sorted(a: Vec<i64>, b: Vec<i64>) -> Vec<i64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `sortlist`: operands are sorted comma-separated integer lists, merged into one (RocksDB's
/// full merge ignores the base value; so does this one). A list that does not parse fails
/// the merge.
pub fn sortlist() -> MergeOperator {
    let full = |_k: &[u8], _e: Option<&[u8]>, ops: &MergeOperands| {
        let mut acc: Vec<i64> = Vec::new();
        for op in ops {
            acc = merge_sorted(acc, parse_list(op)?);
        }
        if acc.is_empty() {
            return None;
        }
        Some(acc.iter().map(i64::to_string).collect::<Vec<_>>().join(",").into_bytes())
    };
    MergeOperator::new("MergeSortOperator", full, Some(Box::new(full)))
}

/// `stringappend`: values joined by `delim` (RocksDB's default `,`).
pub fn stringappend(delim: &str) -> MergeOperator {
    let d = delim.as_bytes().to_vec();
    associative("StringAppendOperator", move |e, v| match e {
        None => v.to_vec(),
        Some(e) => [e, &d, v].concat(),
    })
    .with_options_value(format!("{{id=StringAppendOperator;delimiter={};}}", escape(delim)))
}

/// `stringappendtest`: as `stringappend`, built without a partial merge (RocksDB's test
/// operator, whose `PartialMergeMulti` declines).
pub fn stringappendtest(delim: &str) -> MergeOperator {
    let d = delim.as_bytes().to_vec();
    let full = move |_k: &[u8], e: Option<&[u8]>, ops: &MergeOperands| {
        let mut out: Vec<u8> = e.map(<[u8]>::to_vec).unwrap_or_default();
        let mut first = e.is_none();
        for op in ops {
            if !first {
                out.extend_from_slice(&d);
            }
            first = false;
            out.extend_from_slice(op);
        }
        Some(out)
    };
    MergeOperator::new("StringAppendTESTOperator", full, None)
        .with_options_value(format!("{{id=StringAppendTESTOperator;delimiter={};}}", escape(delim)))
}

/// An OPTIONS-file value escaped as RocksDB escapes one (`:`, `;`, `=`, `{`, `}`, `\`... get a
/// backslash).
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if matches!(c, ':' | '\\' | '#' | ';' | '=' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use shale_engine::merge::MergeOperatorCore;

    fn full(m: &MergeOperator, e: Option<&[u8]>, ops: &[&[u8]]) -> Vec<u8> {
        m.full_merge(b"k", e, ops.iter().map(|o| o.to_vec()).collect(), None).unwrap()
    }

    fn partial(m: &MergeOperator, ops: &[&[u8]]) -> Option<Vec<u8>> {
        m.partial_merge(b"k", &ops.iter().map(|o| o.to_vec()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn uint64add_sums_and_counts_bad_values_as_zero() {
        let m = uint64add();
        assert_eq!(m.name(), "UInt64AddOperator");
        let one = 1u64.to_le_bytes();
        let five = 5u64.to_le_bytes();
        assert_eq!(full(&m, Some(&five), &[&one, &one]), 7u64.to_le_bytes());
        assert_eq!(full(&m, None, &[&one, b"bad"]), 1u64.to_le_bytes());
        assert_eq!(full(&m, None, &[b"bad"]), 0u64.to_le_bytes());
        assert_eq!(partial(&m, &[&one, &five]), Some(6u64.to_le_bytes().to_vec()));
    }

    #[test]
    fn stringappend_variants_join_with_the_delimiter() {
        let m = stringappend(",");
        assert_eq!(full(&m, Some(b"a"), &[b"b", b"c"]), b"a,b,c");
        assert_eq!(full(&m, None, &[b"b", b"c"]), b"b,c");
        assert_eq!(partial(&m, &[b"b", b"c"]), Some(b"b,c".to_vec()));
        assert_eq!(m.options_value(), "{id=StringAppendOperator;delimiter=,;}");
        let t = stringappendtest(",");
        assert_eq!(full(&t, Some(b"a"), &[b"b", b"c"]), b"a,b,c");
        assert_eq!(full(&t, None, &[b"b"]), b"b");
        assert_eq!(partial(&t, &[b"b", b"c"]), None);
        assert_eq!(stringappend(":").options_value(), "{id=StringAppendOperator;delimiter=\\:;}");
    }

    #[test]
    fn put_max_xor_sortlist() {
        assert_eq!(full(&put(), Some(b"base"), &[b"x", b"y"]), b"y");
        assert_eq!(full(&max(), Some(b"b"), &[b"a", b"c", b"bb"]), b"c");
        assert_eq!(full(&max(), None, &[b"a"]), b"a");
        assert_eq!(full(&bytesxor(), Some(&[0xff, 0x0f, 1]), &[&[0x0f, 0xff]]), vec![0xf0, 0xf0, 1]);
        assert_eq!(full(&bytesxor(), None, &[&[1, 2]]), vec![1, 2]);
        assert_eq!(full(&sortlist(), None, &[b"1,5,9", b"2,3"]), b"1,2,3,5,9");
        assert_eq!(partial(&sortlist(), &[b"4", b"1,7"]), Some(b"1,4,7".to_vec()));
        assert!(sortlist().full_merge(b"k", None, vec![b"x".to_vec()], None).is_err());
        for n in ["put", "uint64add", "max", "bytesxor", "sortlist", "stringappend", "stringappendtest"] {
            assert!(by_name(n).is_some(), "{n}");
        }
        assert!(by_name("nope").is_none());
    }
}
