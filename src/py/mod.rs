//! PyO3 bindings: argument checks, the Python [`host::PyHost`], error mapping. No merge rule
//! lives here: every rule is in `crate::engine`.

use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyTuple};

use crate::engine::generic::config::{LIST_MERGES, POLICIES};
use crate::engine::generic::delta::ATOMIC_KEYS;
use crate::engine::generic::MAX_DEPTH;

mod aggregate;
mod args;
mod batch;
mod chunks;
mod convert;
mod directory;
mod dumps;
mod errors;
mod functions;
mod host;
mod intern;
mod json_line;
mod message_data;
mod writer;

#[pymodule]
fn _fastmerge(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    crate::alloc::configure();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // what `backend_info()` and `fastmerge --version` report: a debug build is many times slower
    m.add(
        "BUILD_PROFILE",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    )?;
    m.add("MAX_DEPTH", MAX_DEPTH)?;
    m.add("POLICIES", PyTuple::new(py, POLICIES)?)?;
    m.add("LIST_MERGES", PyTuple::new(py, LIST_MERGES)?)?;
    m.add("ATOMIC_KEYS", PyFrozenSet::new(py, ATOMIC_KEYS)?)?;
    m.add(
        "PROVIDERS",
        PyTuple::new(py, crate::engine::providers::PROVIDERS)?,
    )?;
    functions::register(m)?;
    chunks::register(m)?;
    batch::register(m)?;
    directory::register(m)?;
    json_line::register(m)?;
    message_data::register(m)?;
    aggregate::register(m)
}
