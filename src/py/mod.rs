//! PyO3 bindings: conversion, error mapping. No merge rule lives here.
use pyo3::prelude::*;

#[pymodule]
fn _fastmerge(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
