//! The plan steps of `fastmerge.dask` on inputs every task reads itself
//! (`_fastmerge.index_file`, `_fastmerge.write_bucket`), run with the GIL released; the rules
//! are in `crate::engine::batch::split`, the twin is `fastmerge._pure.split`. Line numbers
//! cross as little-endian `u64`s in one `bytes` per list (`array('Q')` on most machines).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyList, PyString};

use crate::engine::batch::split::{index_file as index_engine, write_bucket as write_engine};
use crate::engine::batch::{BatchError, Options};
use crate::py::errors::{build, wrong_type};

/// A batch error as `BatchCore` raises it.
fn batch_error(py: Python<'_>, err: BatchError) -> PyErr {
    match err {
        BatchError::File { source, errno } => {
            build(py, "file_error", (source, errno).into_pyobject(py))
        }
        BatchError::Compressed {
            source,
            format,
            truncated,
            offset,
        } => build(
            py,
            "compressed_error",
            (source, format, truncated, offset).into_pyobject(py),
        ),
        BatchError::TooManyStreams {
            limit,
            source,
            line,
        } => build(
            py,
            "too_many_streams",
            (limit, source, line).into_pyobject(py),
        ),
        BatchError::Option(detail) => build(py, "batch_option", (detail,).into_pyobject(py)),
        BatchError::Internal(text) => {
            PyRuntimeError::new_err(format!("fastmerge engine error: {text}"))
        }
    }
}

/// An exact `str` argument's text, or the twin's `TypeError`.
fn text_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(text) if obj.get_type().is(py.get_type::<PyString>()) => Ok(text.to_str()?.to_owned()),
        _ => Err(wrong_type(py, name, "a str", obj)),
    }
}

/// A list of exact `str`s, or the twin's `TypeError`.
fn texts_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let list = match obj.cast::<PyList>() {
        Ok(list) if obj.get_type().is(py.get_type::<PyList>()) => list,
        _ => return Err(wrong_type(py, name, "a list of str", obj)),
    };
    list.iter()
        .map(|item| {
            text_arg(py, name, &item).map_err(|_| wrong_type(py, name, "a list of str", obj))
        })
        .collect()
}

fn options(
    py: Python<'_>,
    paths: Vec<String>,
    group_by: &Bound<'_, PyAny>,
    event: Option<Bound<'_, PyAny>>,
    order_by: Option<Bound<'_, PyAny>>,
) -> PyResult<Options> {
    let mut options = Options::new(paths);
    options.group_by = text_arg(py, "group_by", group_by)?;
    options.event = event.map(|e| text_arg(py, "event", &e)).transpose()?;
    options.order_by = order_by.map(|o| text_arg(py, "order_by", &o)).transpose()?;
    Ok(options)
}

fn packed<'py>(py: Python<'py>, numbers: &[u64]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = numbers.iter().flat_map(|n| n.to_le_bytes()).collect();
    PyBytes::new(py, &bytes)
}

/// One input's records as the line numbers of each bucket: `(lines, [(bucket, numbers)])`,
/// see the twin's `fastmerge._pure.split.index_file`.
#[pyfunction]
#[pyo3(signature = (path, group_by, event, order_by, buckets))]
fn index_file<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    group_by: &Bound<'py, PyAny>,
    event: Option<Bound<'py, PyAny>>,
    order_by: Option<Bound<'py, PyAny>>,
    buckets: &Bound<'py, PyAny>,
) -> PyResult<(u64, Bound<'py, PyList>)> {
    let path = text_arg(py, "path", path)?;
    if !buckets.is_instance_of::<PyInt>() || buckets.is_instance_of::<PyBool>() {
        return Err(wrong_type(py, "buckets", "an int", buckets));
    }
    let value: i128 = buckets.extract()?;
    if value < 1 {
        let detail = format!("buckets must be 1 or more, not {value}");
        return Err(batch_error(py, BatchError::Option(detail)));
    }
    let buckets = usize::try_from(value).unwrap_or(usize::MAX);
    let options = options(py, vec![path], group_by, event, order_by)?;
    let index = py
        .detach(|| index_engine(options, buckets))
        .map_err(|e| batch_error(py, e))?;
    let out = PyList::empty(py);
    for (bucket, lines) in &index.buckets {
        out.append((bucket, packed(py, lines)))?;
    }
    Ok((index.lines, out))
}

/// The inputs read in turn as one text of one bucket's records at their input-wide line
/// numbers, written to the file `out`; each input's lines. See the twin's
/// `fastmerge._pure.split.write_bucket`.
#[pyfunction]
#[pyo3(signature = (paths, own, out, group_by, event = None, order_by = None))]
fn write_bucket<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    own: &Bound<'py, PyAny>,
    out: &Bound<'py, PyAny>,
    group_by: &Bound<'py, PyAny>,
    event: Option<Bound<'py, PyAny>>,
    order_by: Option<Bound<'py, PyAny>>,
) -> PyResult<Vec<u64>> {
    let paths = texts_arg(py, "paths", paths)?;
    let list = match own.cast::<PyList>() {
        Ok(list) if own.get_type().is(py.get_type::<PyList>()) => list,
        _ => return Err(wrong_type(py, "own", "a list of bytes", own)),
    };
    let mut wanted = Vec::with_capacity(list.len());
    for item in list.iter() {
        let Ok(bytes) = item.cast::<PyBytes>() else {
            return Err(wrong_type(py, "own", "a list of bytes", own));
        };
        let bytes = bytes.as_bytes();
        if bytes.len() % 8 != 0 {
            let detail = "own holds line numbers as 8 bytes each".to_owned();
            return Err(batch_error(py, BatchError::Option(detail)));
        }
        let numbers: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect();
        wanted.push(numbers);
    }
    let out = text_arg(py, "out", out)?;
    let options = options(py, paths, group_by, event, order_by)?;
    py.detach(|| {
        let file = std::fs::File::create(&out).map_err(|e| BatchError::File {
            source: out.clone(),
            errno: e.raw_os_error().unwrap_or(0),
        })?;
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
        let totals = write_engine(options, &wanted, &mut writer, &out)?;
        std::io::Write::flush(&mut writer).map_err(|e| BatchError::File {
            source: out.clone(),
            errno: e.raw_os_error().unwrap_or(0),
        })?;
        Ok(totals)
    })
    .map_err(|e| batch_error(py, e))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(index_file, m)?)?;
    m.add_function(wrap_pyfunction!(write_bucket, m)?)
}
