//! rocksdict's encoding of keys and values, and its `rocksdict` comparator.
//!
//! Default mode (not raw): every key and value is one type byte, then the payload:
//!
//! ```text
//!   +------+---------------------------------------------------------------+
//!   | type | payload                                                       |
//!   +------+---------------------------------------------------------------+
//!   |  1   | bytes, as given                                               |
//!   |  2   | str, UTF-8                                                    |
//!   |  3   | int: two's complement, big-endian, fewest bytes (0 -> 00,     |
//!   |      |      127 -> 7f, 128 -> 00 80, -1 -> ff, -129 -> ff 7f)        |
//!   |  4   | float: IEEE 754 binary64, big-endian (8 bytes)                |
//!   |  5   | bool: one byte, 0 or 1                                        |
//!   |  6   | any other object: the bytes of `dumps(obj)` (pickle.dumps     |
//!   |      | unless `set_dumps` replaced it); values only, never keys      |
//!   +------+---------------------------------------------------------------+
//! ```
//!
//! An empty stored value (a wide-column entity's default column) decodes as `""`.
//! Raw mode stores keys and values as the bytes given and accepts nothing else.
//!
//! The `rocksdict` comparator orders two int keys (type 3 both) by their value and every
//! other pair bytewise; its name is recorded in the MANIFEST and OPTIONS files, so a database
//! written in default mode opens only with it.

use pyo3::exceptions::{PyException, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};
use std::borrow::Cow;
use std::cmp::Ordering;

pub(crate) const TYPE_BYTES: u8 = 1;
pub(crate) const TYPE_STR: u8 = 2;
pub(crate) const TYPE_INT: u8 = 3;
pub(crate) const TYPE_FLOAT: u8 = 4;
pub(crate) const TYPE_BOOL: u8 = 5;
pub(crate) const TYPE_PICKLE: u8 = 6;

/// The comparator's name, as rocksdict records it.
pub(crate) const COMPARATOR_NAME: &str = "rocksdict";

fn tagged(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 1);
    out.push(tag);
    out.extend_from_slice(payload);
    out
}

/// The fewest big-endian two's-complement bytes of `v` (at least one).
fn int_bytes_i64(v: i64) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (hi, next) = (b[start], b[start + 1]);
        if (hi == 0x00 && next & 0x80 == 0) || (hi == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    b[start..].to_vec()
}

/// The int payload of any Python int: i64 in Rust, larger ones through `int.to_bytes`.
fn int_bytes(v: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(small) = v.extract::<i64>() {
        return Ok(int_bytes_i64(small));
    }
    // len = bit_length(v if v >= 0 else ~v) // 8 + 1: room for the sign bit.
    let negative = v.lt(0)?;
    let magnitude = if negative { v.call_method0("__invert__")? } else { v.clone() };
    let bits: usize = magnitude.call_method0("bit_length")?.extract()?;
    let len = bits / 8 + 1;
    let kwargs = pyo3::types::PyDict::new(v.py());
    kwargs.set_item("signed", true)?;
    let bytes = v.call_method("to_bytes", (len, "big"), Some(&kwargs))?;
    Ok(bytes.downcast::<PyBytes>()?.as_bytes().to_vec())
}

/// Encodes a key: raw mode takes bytes only (KeyError otherwise, as rocksdict).
pub(crate) fn encode_key<'a>(key: &'a Bound<'_, PyAny>, raw_mode: bool) -> PyResult<Cow<'a, [u8]>> {
    if raw_mode {
        return match key.downcast::<PyBytes>() {
            Ok(b) => Ok(Cow::Borrowed(b.as_bytes())),
            Err(_) => Err(PyKeyError::new_err("raw mode only support bytes")),
        };
    }
    match encode_typed(key)? {
        Some(v) => Ok(Cow::Owned(v)),
        None => {
            Err(PyException::new_err("Only support `string`, `int`, `float`, `bool`, and `bytes` as keys"))
        }
    }
}

/// Encodes a value: raw mode takes bytes only (ValueError otherwise, as rocksdict); other
/// objects go through `dumps`.
pub(crate) fn encode_value<'a>(
    value: &'a Bound<'_, PyAny>,
    dumps: &PyObject,
    raw_mode: bool,
) -> PyResult<Cow<'a, [u8]>> {
    if raw_mode {
        return match value.downcast::<PyBytes>() {
            Ok(b) => Ok(Cow::Borrowed(b.as_bytes())),
            Err(_) => Err(PyValueError::new_err("raw mode only support bytes")),
        };
    }
    match encode_typed(value)? {
        Some(v) => Ok(Cow::Owned(v)),
        None => {
            let py = value.py();
            let dumped = dumps.call1(py, (value,))?;
            let bytes = dumped.downcast_bound::<PyBytes>(py)?;
            Ok(Cow::Owned(tagged(TYPE_PICKLE, bytes.as_bytes())))
        }
    }
}

/// The encoding of a bool, bytes, str, int or float (checked in rocksdict's order: bool is an
/// int subclass); None for any other object.
fn encode_typed(v: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(Some(tagged(TYPE_BOOL, &[u8::from(b.is_true())])));
    }
    if let Ok(b) = v.downcast::<PyBytes>() {
        return Ok(Some(tagged(TYPE_BYTES, b.as_bytes())));
    }
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(Some(tagged(TYPE_STR, s.to_cow()?.as_bytes())));
    }
    if v.downcast::<PyInt>().is_ok() {
        return Ok(Some(tagged(TYPE_INT, &int_bytes(v)?)));
    }
    if let Ok(f) = v.downcast::<PyFloat>() {
        return Ok(Some(tagged(TYPE_FLOAT, &f.value().to_be_bytes())));
    }
    Ok(None)
}

/// Decodes a stored key or value.
pub(crate) fn decode_value<'py>(
    py: Python<'py>,
    bytes: &[u8],
    loads: &PyObject,
    raw_mode: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if raw_mode {
        return Ok(PyBytes::new(py, bytes).into_any());
    }
    let Some((&tag, payload)) = bytes.split_first() else {
        return Ok(PyString::new(py, "").into_any());
    };
    match tag {
        TYPE_BYTES => Ok(PyBytes::new(py, payload).into_any()),
        TYPE_STR => match std::str::from_utf8(payload) {
            Ok(s) => Ok(PyString::new(py, s).into_any()),
            Err(_) => Err(PyException::new_err("utf-8 decoding error")),
        },
        TYPE_INT => decode_int(py, payload),
        TYPE_FLOAT => match <[u8; 8]>::try_from(payload) {
            Ok(b) => Ok(PyFloat::new(py, f64::from_be_bytes(b)).into_any()),
            Err(_) => {
                Err(PyException::new_err(format!("float value of {} bytes, expected 8", payload.len())))
            }
        },
        TYPE_BOOL => match payload.first() {
            Some(&b) => Ok(PyBool::new(py, b != 0).to_owned().into_any()),
            None => Err(PyException::new_err("bool value without its byte")),
        },
        TYPE_PICKLE => Ok(loads.call1(py, (PyBytes::new(py, payload),))?.into_bound(py)),
        _ => Err(PyException::new_err("Unknown value type")),
    }
}

fn decode_int<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    if payload.len() <= 8 {
        let mut v: i64 = match payload.first() {
            Some(&b) if b & 0x80 != 0 => -1,
            _ => 0,
        };
        for &b in payload {
            v = (v << 8) | i64::from(b);
        }
        return Ok(PyInt::new(py, v).into_any());
    }
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("signed", true)?;
    py.get_type::<PyInt>().call_method("from_bytes", (PyBytes::new(py, payload), "big"), Some(&kwargs))
}

/// A two's-complement big-endian integer without its redundant sign-extension bytes
/// (rocksdict writes the fewest bytes, but any length decodes to the same value).
fn trim_int(b: &[u8]) -> &[u8] {
    let mut s = b;
    while s.len() > 1 && ((s[0] == 0x00 && s[1] & 0x80 == 0) || (s[0] == 0xff && s[1] & 0x80 != 0)) {
        s = &s[1..];
    }
    s
}

/// Compares two int payloads by value.
fn compare_ints(a: &[u8], b: &[u8]) -> Ordering {
    // The empty payload is 0.
    let zero: &[u8] = &[0];
    let (a, b) =
        (if a.is_empty() { zero } else { trim_int(a) }, if b.is_empty() { zero } else { trim_int(b) });
    let neg = |s: &[u8]| s.first().is_some_and(|&x| x & 0x80 != 0);
    match (neg(a), neg(b)) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (both_negative, _) => {
            // Same sign, fewest bytes: the longer one is farther from zero.
            let by_len = a.len().cmp(&b.len());
            let by_len = if both_negative { by_len.reverse() } else { by_len };
            // Same length and sign: two's complement orders bytewise.
            by_len.then_with(|| a.cmp(b))
        }
    }
}

/// rocksdict's comparator: int keys by value, everything else bytewise.
pub(crate) fn rocksdict_compare(a: &[u8], b: &[u8]) -> Ordering {
    match (a.split_first(), b.split_first()) {
        (Some((&TYPE_INT, pa)), Some((&TYPE_INT, pb))) => compare_ints(pa, pb),
        _ => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_int_bytes() {
        assert_eq!(int_bytes_i64(0), vec![0x00]);
        assert_eq!(int_bytes_i64(127), vec![0x7f]);
        assert_eq!(int_bytes_i64(128), vec![0x00, 0x80]);
        assert_eq!(int_bytes_i64(-1), vec![0xff]);
        assert_eq!(int_bytes_i64(-128), vec![0x80]);
        assert_eq!(int_bytes_i64(-129), vec![0xff, 0x7f]);
        assert_eq!(int_bytes_i64(i64::MIN), i64::MIN.to_be_bytes().to_vec());
    }

    #[test]
    fn comparator_orders_ints_by_value() {
        let vals: Vec<i64> =
            vec![i64::MIN, -70000, -129, -128, -1, 0, 1, 127, 128, 255, 256, 70000, i64::MAX];
        for (i, &x) in vals.iter().enumerate() {
            for (j, &y) in vals.iter().enumerate() {
                let (a, b) = (tagged(TYPE_INT, &int_bytes_i64(x)), tagged(TYPE_INT, &int_bytes_i64(y)));
                assert_eq!(rocksdict_compare(&a, &b), i.cmp(&j), "{x} vs {y}");
            }
        }
        // Non-minimal encodings compare by value too.
        assert_eq!(compare_ints(&[0x00, 0x00, 0x05], &[0x05]), Ordering::Equal);
        assert_eq!(compare_ints(&[0xff, 0xff], &[0xff]), Ordering::Equal);
        assert_eq!(compare_ints(&[], &[0x00]), Ordering::Equal);
        // Other types bytewise.
        assert_eq!(rocksdict_compare(b"\x02a", b"\x02b"), Ordering::Less);
        assert_eq!(rocksdict_compare(b"\x03\x05", b"\x02b"), Ordering::Greater);
    }
}
