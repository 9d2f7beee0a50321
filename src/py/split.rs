//! The bucket step of `fastmerge.dask` on inputs every task reads itself
//! (`_fastmerge.write_bucket`), run with the GIL released; the rules are in
//! `crate::engine::batch::split`, the twin is `fastmerge._pure.split`.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList};

use crate::engine::batch::split::write_bucket as write_engine;
use crate::engine::batch::{BatchError, Options};
use crate::py::batch::{batch_error, text_arg};
use crate::py::errors::wrong_type;

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

/// A count argument: an int (not a bool) of at least `least`.
fn count_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>, least: i128) -> PyResult<usize> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(wrong_type(py, name, "an int", obj));
    }
    let value: i128 = obj.extract()?;
    if value < least {
        let detail = format!("{name} must be {least} or more, not {value}");
        return Err(batch_error(py, BatchError::Option(detail)));
    }
    Ok(usize::try_from(value).unwrap_or(usize::MAX))
}

/// The inputs read in turn as one text of one bucket's records at their input-wide line
/// numbers, written to the file `out`; each input's lines and stored bytes read. See the
/// twin's `fastmerge._pure.split.write_bucket`.
#[pyfunction]
#[pyo3(signature = (paths, bucket, buckets, out, group_by, event, order_by))]
#[allow(clippy::too_many_arguments)]
fn write_bucket<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    bucket: &Bound<'py, PyAny>,
    buckets: &Bound<'py, PyAny>,
    out: &Bound<'py, PyAny>,
    group_by: &Bound<'py, PyAny>,
    event: Option<Bound<'py, PyAny>>,
    order_by: Option<Bound<'py, PyAny>>,
) -> PyResult<Vec<(u64, u64)>> {
    let paths = texts_arg(py, "paths", paths)?;
    let bucket = count_arg(py, "bucket", bucket, 0)?;
    let buckets = count_arg(py, "buckets", buckets, 1)?;
    let out = text_arg(py, "out", out)?;
    let options = options(py, paths, group_by, event, order_by)?;
    py.detach(|| {
        let file = std::fs::File::create(&out).map_err(|e| BatchError::File {
            source: out.clone(),
            errno: e.raw_os_error().unwrap_or(0),
        })?;
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
        let read = write_engine(options, bucket, buckets, &mut writer, &out)?;
        std::io::Write::flush(&mut writer).map_err(|e| BatchError::File {
            source: out.clone(),
            errno: e.raw_os_error().unwrap_or(0),
        })?;
        Ok(read)
    })
    .map_err(|e| batch_error(py, e))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_bucket, m)?)
}
