//! `fastmerge.batch.json_line` for plain Python data, written in Rust: the record a user
//! holds (`StreamResult.record()`) as the bytes `json.dumps(value, ensure_ascii=False,
//! separators=(",", ":"))` gives, and a newline, without the encoder's per-object dispatch.
//! Anything this walk does not write exactly as `json.dumps` does makes it step aside: the
//! caller then runs `json.dumps` itself, for the same bytes or the same error.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::py::dumps::{float, int_text, itoa_buffer, string};
use crate::py::writer::utf8;

/// How deep the walk goes before it steps aside: `json.dumps` then gives what a deeper or a
/// circular value gives (its `RecursionError` or `ValueError`).
const DEPTH: usize = 200;

/// The recursion `json.dumps` spends beyond a value's nesting (its own frames: `dumps`,
/// `encode`, `iterencode`), and some to spare: a line is written only if the interpreter has
/// room for that many more levels than the value nests, so that `json.dumps` at the same place
/// would not raise `RecursionError` (short of it, the walk steps aside and `json.dumps` says).
const SPARE: usize = 8;

/// The JSON line of `value` when it is plain data: exact dicts with exact str keys, exact
/// lists and tuples, exact strs with a UTF-8 form (no lone surrogate), ints of 64 bits,
/// floats, bools and None, nested at most 200 deep. None for anything else (a subclass,
/// another key type, a bigger int, ...): `fastmerge.batch.json_line` then calls `json.dumps`.
#[pyfunction]
#[pyo3(text_signature = "(value)")]
fn json_line<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(1024);
    let mut deepest = 0;
    // SAFETY: `value` is held by the caller and the GIL is held; the walk runs no Python code
    // (so nothing it borrows can change or go while it reads).
    unsafe { write(&mut out, value.as_ptr(), 0, &mut deepest) }?;
    if !room_for(py, deepest + SPARE) {
        return None;
    }
    out.push(b'\n');
    Some(PyBytes::new(py, &out))
}

/// Whether the interpreter's recursion limit leaves `levels` more levels of recursion here:
/// entered one by one (as `json.dumps`'s encoder enters one per container), then left.
fn room_for(_py: Python<'_>, levels: usize) -> bool {
    let mut entered = 0;
    let room = loop {
        if entered == levels {
            break true;
        }
        // SAFETY: the GIL is held (`_py`); each level entered is left below
        if unsafe { ffi::Py_EnterRecursiveCall(c" in fastmerge.json_line".as_ptr()) } != 0 {
            // the RecursionError set is not this call's to raise: json.dumps raises its own
            unsafe { ffi::PyErr_Clear() };
            break false;
        }
        entered += 1;
    };
    for _ in 0..entered {
        // SAFETY: as above; one leave for each level entered
        unsafe { ffi::Py_LeaveRecursiveCall() };
    }
    room
}

/// Writes the object at `ptr` (`depth` containers deep), `deepest` the most containers
/// nested so far; None (`out` partly written) where the walk steps aside.
///
/// # Safety
/// `ptr` is a live object, held by the caller or by a container it holds; the GIL is held.
unsafe fn write(
    out: &mut Vec<u8>,
    ptr: *mut ffi::PyObject,
    depth: usize,
    deepest: &mut usize,
) -> Option<()> {
    if ptr == ffi::Py_None() {
        out.extend_from_slice(b"null");
    } else if ptr == ffi::Py_True() {
        out.extend_from_slice(b"true");
    } else if ptr == ffi::Py_False() {
        out.extend_from_slice(b"false");
    } else if ffi::PyUnicode_CheckExact(ptr) != 0 {
        string(out, utf8(ptr)?);
    } else if ffi::PyLong_CheckExact(ptr) != 0 {
        let mut overflow = 0;
        // an exact int: the only failure is the overflow it reports
        let number = ffi::PyLong_AsLongLongAndOverflow(ptr, &mut overflow);
        if overflow != 0 {
            return None; // `int.__repr__` of a big int, and its digit limit, are Python's
        }
        out.extend_from_slice(int_text(number, &mut itoa_buffer()));
    } else if ffi::PyFloat_CheckExact(ptr) != 0 {
        float(out, ffi::PyFloat_AsDouble(ptr));
    } else if depth >= DEPTH {
        return None;
    } else if ffi::PyDict_CheckExact(ptr) != 0 {
        *deepest = (*deepest).max(depth + 1);
        out.push(b'{');
        let (mut pos, mut key, mut item) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        let mut first = true;
        while ffi::PyDict_Next(ptr, &mut pos, &mut key, &mut item) != 0 {
            if !first {
                out.push(b',');
            }
            first = false;
            // json.dumps also takes int, float, bool and None keys (written as strings): rare
            // enough to leave to it
            string(out, utf8(key)?);
            out.push(b':');
            write(out, item, depth + 1, deepest)?;
        }
        out.push(b'}');
    } else if ffi::PyList_CheckExact(ptr) != 0 || ffi::PyTuple_CheckExact(ptr) != 0 {
        *deepest = (*deepest).max(depth + 1);
        let list = ffi::PyList_CheckExact(ptr) != 0;
        let len = if list {
            ffi::PyList_Size(ptr)
        } else {
            ffi::PyTuple_Size(ptr)
        };
        out.push(b'[');
        for at in 0..len {
            if at > 0 {
                out.push(b',');
            }
            let item = if list {
                ffi::PyList_GetItem(ptr, at)
            } else {
                ffi::PyTuple_GetItem(ptr, at)
            };
            write(out, item, depth + 1, deepest)?;
        }
        out.push(b']');
    } else {
        return None;
    }
    Some(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(json_line, m)?)
}
