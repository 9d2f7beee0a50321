//! Dask's split step and a raw read (`split_file`, `read_input`): an input's records as one
//! fragment per bucket, and an input's bytes as the engine reads them.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::args::{batch_error, count_of, max_line_arg, path_arg, text_arg};
use crate::engine::batch::input::Input;
use crate::engine::batch::split::{split_file as split_engine, Fragment};
use crate::engine::batch::{BatchError, Options};
use crate::py::args::Arg;
use crate::py::errors::wrong_type;

/// A fragment as `(bucket, data, lines)`: the line numbers in an `array('Q')`, one object,
/// not one per record.
fn fragment<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    f: Fragment,
) -> PyResult<Bound<'py, PyTuple>> {
    let lines: Vec<u8> = f.lines.iter().flat_map(|n| n.to_ne_bytes()).collect();
    (
        f.bucket,
        PyBytes::new(py, &f.data),
        array.call1(("Q", PyBytes::new(py, &lines)))?,
    )
        .into_pyobject(py)
}

/// One input's lines and its records as one fragment per bucket (the split step of
/// `fastmerge.dask`), read with the GIL released; see the twin's
/// `fastmerge._pure.batch.split_file`.
#[pyfunction]
#[pyo3(
    signature = (path, group_by, event = None, order_by = None, buckets = Arg::Default),
    text_signature = "(path, group_by, event=None, order_by=None, buckets=1)"
)]
pub(super) fn split_file<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    group_by: &Bound<'py, PyAny>,
    event: Option<Bound<'py, PyAny>>,
    order_by: Option<Bound<'py, PyAny>>,
    buckets: Arg<'py>,
) -> PyResult<Bound<'py, PyTuple>> {
    // the twin's order of checks: path, buckets, then BatchCore's
    let path = path_arg(py, "path", path)?;
    let buckets = match &buckets {
        Arg::Default => 1,
        Arg::Given(obj) => count_of(py, "buckets", obj, 1)?
            .ok_or_else(|| wrong_type(py, "buckets", "an int", obj))?,
    };
    let mut options = Options::new(vec![path]);
    options.group_by = text_arg(py, "group_by", group_by)?;
    options.event = event.map(|e| text_arg(py, "event", &e)).transpose()?;
    options.order_by = order_by.map(|o| text_arg(py, "order_by", &o)).transpose()?;
    options.max_line_bytes = max_line_arg(py)?;
    let (lines, fragments) = py
        .detach(|| split_engine(options, buckets))
        .map_err(|e| batch_error(py, e))?;
    let array = py.import("array")?.getattr("array")?;
    let out = PyList::empty(py);
    for f in fragments {
        out.append(fragment(py, &array, f)?)?;
    }
    (lines, out).into_pyobject(py)
}

/// One input's bytes as the batch engine reads them: decompressed when its first bytes are
/// gzip, zstd, bzip2 or xz (members and frames read whole), with the GIL released. For a
/// caller that reads what the engine reads without decompressing it itself (`fastmerge bench`
/// gives the twin a zstd log this way when the `zstandard` package is missing).
#[pyfunction]
#[pyo3(text_signature = "(path)")]
pub(super) fn read_input<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let path = path_arg(py, "path", path)?;
    let data = py
        .detach(|| -> Result<Vec<u8>, BatchError> {
            let mut input = Input::open(&path, Arc::new(AtomicU64::new(0)))?;
            let mut data = Vec::new();
            while !input.fill(&mut data, 1 << 20)? {}
            Ok(data)
        })
        .map_err(|e| batch_error(py, e))?;
    Ok(PyBytes::new(py, &data))
}
