//! `RdictIter` (a raw iterator over one column family) and the Python iterators
//! `items`/`keys`/`values`/`columns`/`entities` built on it.
//!
//! Every positioning call (`seek*`, `next`, `prev`) runs with the GIL released: it may read
//! table blocks from disk. `items`/`keys`/`values` step in runs (`Prefetch`): one release of
//! the GIL copies the next several entries out of the engine, and the Python objects are made
//! from that copy with the GIL held. A step of a cached block takes less time than releasing
//! and taking back the GIL, so one release per entry would cost more than the step itself
//! (and, with other threads waiting, a thread switch per entry).

use crate::encoder::{decode_value, encode_key};
use crate::rdict::{columns_to_py, CfRef};
use crate::{db_err, lock_released, Db};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::{Mutex, MutexGuard};

type RawIter = shale::DBRawIteratorWithThreadMode<'static, Db>;

/// A raw iterator: `seek*`, `next`, `prev`, `key`, `value`, `columns`.
#[pyclass(name = "RdictIter", module = "rocksdict", frozen)]
pub(crate) struct RdictIter {
    // Declared first: dropped before the database share (`cf`) and the snapshot it reads.
    inner: Mutex<RawIter>,
    /// The `Snapshot` this iterator reads at, kept alive as long as the iterator.
    _snapshot: Option<PyObject>,
    _cf: CfRef,
    loads: PyObject,
    raw_mode: bool,
}

impl RdictIter {
    /// An iterator over `cf` with `ro` (and at `snapshot`'s sequence when given: the caller
    /// sets it in `ro` and passes the snapshot object so it outlives the iterator).
    pub(crate) fn new(
        cf: &CfRef,
        ro: shale::ReadOptions,
        snapshot: Option<PyObject>,
        loads: PyObject,
        raw_mode: bool,
    ) -> RdictIter {
        let it = cf.db.raw_iterator_cf_opt(&cf.handle, ro);
        // SAFETY: the iterator borrows the database, which lives in the `Arc` held by `_cf`;
        // `inner` is declared before `_cf`, so the iterator is dropped first, and the `Arc`
        // keeps the database at one address for the iterator's whole life.
        let it: RawIter = unsafe { std::mem::transmute(it) };
        RdictIter { inner: Mutex::new(it), _snapshot: snapshot, _cf: cf.clone(), loads, raw_mode }
    }

    fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, RawIter>> {
        lock_released(py, &self.inner, "iterator")
    }

    /// Runs `f` on the iterator with the GIL released.
    fn step(&self, py: Python<'_>, f: impl FnOnce(&mut RawIter) + Send) -> PyResult<()> {
        let mut it = self.lock(py)?;
        let it: &mut RawIter = &mut it;
        py.allow_threads(|| f(it));
        Ok(())
    }

    fn key_py<'py>(&self, py: Python<'py>, it: &RawIter) -> PyResult<Bound<'py, PyAny>> {
        match it.key() {
            Some(k) => decode_value(py, k, &self.loads, self.raw_mode),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn value_py<'py>(&self, py: Python<'py>, it: &RawIter) -> PyResult<Bound<'py, PyAny>> {
        match it.value() {
            Some(v) => decode_value(py, v, &self.loads, self.raw_mode),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn columns_py<'py>(&self, py: Python<'py>, it: &RawIter) -> PyResult<Bound<'py, PyAny>> {
        match it.columns() {
            Some(cols) => {
                Ok(columns_to_py(py, &cols.map_err(db_err)?, &self.loads, self.raw_mode)?.into_any())
            }
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// Positions for a Python iterator: from `from_key` (or the first/last key) onwards.
    fn position(&self, py: Python<'_>, backwards: bool, from_key: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        match from_key {
            Some(k) => {
                let k = encode_key(k, self.raw_mode)?;
                if backwards {
                    self.step(py, |it| it.seek_for_prev(&k))
                } else {
                    self.step(py, |it| it.seek(&k))
                }
            }
            None if backwards => self.step(py, |it| it.seek_to_last()),
            None => self.step(py, |it| it.seek_to_first()),
        }
    }

    /// One item of a Python iterator: `read` of the current entry, then a step; None at the
    /// end (after raising the iterator's error, if it stopped on one).
    fn next_item<'py, T>(
        &self,
        py: Python<'py>,
        backwards: bool,
        read: impl FnOnce(&Self, &RawIter) -> PyResult<T>,
    ) -> PyResult<Option<T>> {
        let mut it = self.lock(py)?;
        if !it.valid() {
            it.status().map_err(db_err)?;
            return Ok(None);
        }
        let item = read(self, &it)?;
        let it: &mut RawIter = &mut it;
        py.allow_threads(|| if backwards { it.prev() } else { it.next() });
        Ok(Some(item))
    }
}

#[pymethods]
impl RdictIter {
    fn valid(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.lock(py)?.valid())
    }

    fn status(&self, py: Python<'_>) -> PyResult<()> {
        self.lock(py)?.status().map_err(db_err)
    }

    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.seek_to_first())
    }

    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.seek_to_last())
    }

    fn seek(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        self.step(py, |it| it.seek(&k))
    }

    fn seek_for_prev(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = encode_key(key, self.raw_mode)?;
        self.step(py, |it| it.seek_for_prev(&k))
    }

    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.next())
    }

    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.prev())
    }

    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let it = self.lock(py)?;
        self.key_py(py, &it)
    }

    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let it = self.lock(py)?;
        self.value_py(py, &it)
    }

    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let it = self.lock(py)?;
        self.columns_py(py, &it)
    }
}

/// The fewest and the most entries one release of the GIL copies: a run starts small (an
/// iterator read for its first entries reads no more than a few ahead) and doubles.
const FIRST_RUN: usize = 8;
const LONGEST_RUN: usize = 256;

/// Entries copied out of the engine by one step run, served to Python in order.
#[derive(Default)]
struct Prefetch {
    /// The keys and values, back to back.
    data: Vec<u8>,
    /// Per entry: where its key ends and where its value ends in `data`.
    ends: Vec<(usize, usize)>,
    /// The next entry to serve.
    next: usize,
    /// The length of the next run.
    run: usize,
}

impl Prefetch {
    fn is_empty(&self) -> bool {
        self.next == self.ends.len()
    }

    /// Copies up to `run` entries from `it`, stepping past each (the GIL is released by the
    /// caller). Stops early where the iterator stops.
    fn fill<const KEYS: bool, const VALUES: bool>(&mut self, it: &mut RawIter, backwards: bool) {
        self.data.clear();
        self.ends.clear();
        self.next = 0;
        self.run = (self.run * 2).clamp(FIRST_RUN, LONGEST_RUN);
        for _ in 0..self.run {
            let Some((k, v)) = it.item() else {
                break;
            };
            if KEYS {
                self.data.extend_from_slice(k);
            }
            let key_end = self.data.len();
            if VALUES {
                self.data.extend_from_slice(v);
            }
            self.ends.push((key_end, self.data.len()));
            if backwards {
                it.prev()
            } else {
                it.next()
            }
        }
    }

    /// The next entry's key and value bytes (empty when not copied).
    fn take(&mut self) -> Option<(&[u8], &[u8])> {
        let &(key_end, value_end) = self.ends.get(self.next)?;
        let start = match self.next {
            0 => 0,
            i => self.ends[i - 1].1,
        };
        self.next += 1;
        Some((&self.data[start..key_end], &self.data[key_end..value_end]))
    }
}

impl RdictIter {
    /// The next entry of a Python iterator over keys and/or values, from `buf`, refilled from
    /// the engine with the GIL released when empty; None at the end (after raising the
    /// iterator's error, if it stopped on one).
    #[inline]
    fn next_prefetched<'py, const KEYS: bool, const VALUES: bool>(
        &self,
        py: Python<'py>,
        buf: &Mutex<Prefetch>,
        backwards: bool,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let mut buf = lock_released(py, buf, "iterator")?;
        if buf.is_empty() {
            let mut it = self.lock(py)?;
            if !it.valid() {
                it.status().map_err(db_err)?;
                return Ok(None);
            }
            let it: &mut RawIter = &mut it;
            let b: &mut Prefetch = &mut buf;
            py.allow_threads(|| b.fill::<KEYS, VALUES>(it, backwards));
        }
        let Some((k, v)) = buf.take() else {
            return Ok(None);
        };
        let k =
            if KEYS { decode_value(py, k, &self.loads, self.raw_mode)? } else { py.None().into_bound(py) };
        let v =
            if VALUES { decode_value(py, v, &self.loads, self.raw_mode)? } else { py.None().into_bound(py) };
        Ok(Some((k, v)))
    }
}

/// The tuple `(k, v)`, made with CPython's own two calls: `PyTuple::new` checks the length
/// of what it is given and counts the items as it goes, a cost paid on every item of `items()`.
fn pair<'py>(py: Python<'py>, k: Bound<'py, PyAny>, v: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the GIL is held (`py`). `PyTuple_New(2)` returns a new reference or null with
    // an exception set (taken by `from_owned_ptr_or_err`). `PyTuple_SetItem` on a fresh tuple
    // at indexes 0 and 1 (in range) steals the reference it is given, which `into_ptr` gives
    // up, and cannot fail for a tuple of that size.
    unsafe {
        let t = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyTuple_New(2))?;
        pyo3::ffi::PyTuple_SetItem(t.as_ptr(), 0, k.into_ptr());
        pyo3::ffi::PyTuple_SetItem(t.as_ptr(), 1, v.into_ptr());
        Ok(t)
    }
}

/// A Python iterator over keys and/or values, stepping in runs (`Prefetch`).
macro_rules! prefetching_iterator {
    ($ty:ident, $name:literal, keys: $keys:expr, values: $values:expr, |$py:ident, $k:ident, $v:ident| $make:expr) => {
        #[pyclass(name = $name, module = "rocksdict", frozen)]
        pub(crate) struct $ty {
            inner: RdictIter,
            buf: Mutex<Prefetch>,
            backwards: bool,
        }

        impl $ty {
            pub(crate) fn new(
                py: Python<'_>,
                inner: RdictIter,
                backwards: bool,
                from_key: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                inner.position(py, backwards, from_key)?;
                Ok($ty { inner, buf: Mutex::new(Prefetch::default()), backwards })
            }
        }

        #[pymethods]
        impl $ty {
            fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
                slf
            }

            fn __next__<'py>(&self, $py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
                match self.inner.next_prefetched::<{ $keys }, { $values }>($py, &self.buf, self.backwards)? {
                    Some(($k, $v)) => Ok(Some($make)),
                    None => Ok(None),
                }
            }
        }
    };
}

prefetching_iterator!(RdictItems, "RdictItems", keys: true, values: true, |py, k, v| pair(py, k, v)?);
prefetching_iterator!(RdictKeys, "RdictKeys", keys: true, values: false, |py, k, _v| k);
prefetching_iterator!(RdictValues, "RdictValues", keys: false, values: true, |py, _k, v| v);

macro_rules! py_iterator {
    ($ty:ident, $name:literal, |$s:ident, $py:ident, $it:ident| $read:expr) => {
        #[pyclass(name = $name, module = "rocksdict", frozen)]
        pub(crate) struct $ty {
            inner: RdictIter,
            backwards: bool,
        }

        impl $ty {
            pub(crate) fn new(
                py: Python<'_>,
                inner: RdictIter,
                backwards: bool,
                from_key: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                inner.position(py, backwards, from_key)?;
                Ok($ty { inner, backwards })
            }
        }

        #[pymethods]
        impl $ty {
            fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
                slf
            }

            fn __next__<'py>(&self, $py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
                self.inner.next_item($py, self.backwards, |$s, $it| $read)
            }
        }
    };
}

py_iterator!(RdictColumns, "RdictColumns", |s, py, it| s.columns_py(py, it));
py_iterator!(RdictEntities, "RdictEntities", |s, py, it| {
    let k = s.key_py(py, it)?;
    let c = s.columns_py(py, it)?;
    Ok(PyTuple::new(py, [k, c])?.into_any())
});

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RdictIter>()?;
    m.add_class::<RdictItems>()?;
    m.add_class::<RdictKeys>()?;
    m.add_class::<RdictValues>()?;
    m.add_class::<RdictColumns>()?;
    m.add_class::<RdictEntities>()?;
    Ok(())
}
