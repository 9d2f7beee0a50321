//! The batch engine's binding (`_fastmerge.BatchCore`): options checked in the twin's order,
//! the engine run with the GIL released, items out as Python tuples. Every rule is in
//! `crate::engine::batch`; the twin is `fastmerge._pure.batch`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PyString, PyTuple};

use crate::engine::batch::{
    Batch, BatchError, Item, Next, Options, Place, StreamError, Writer, Written,
};
use crate::py::aggregate::AggregatorCore;
use crate::py::args::Arg;
use crate::py::chunks::parse_options;
use crate::py::convert::{GcPause, ToPy};
use crate::py::errors::{agg_error, wrong_type};

mod args;
pub(crate) use args::{batch_error, text_arg};
use args::{bucket_arg, count_arg, max_line_arg, path_text, timeout_arg};
mod columns;
pub(crate) mod record;
mod split;

use columns::{Columns, RowCells};

/// How long a wait without a timeout sleeps between looks at Python's signals (Ctrl-C).
const SIGNAL_TICK: Duration = Duration::from_millis(100);

/// What `BatchCore.next` makes of a stream's item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Item,
    Line,
    Row,
}

/// Logged streams -> one item per stream, on all cores (`fastmerge.batch.merge_logs`'s engine).
#[pyclass(module = "fastmerge._fastmerge")]
pub struct BatchCore {
    batch: Mutex<Batch>,
    /// Whether each item ends with its place (`positions=True`).
    positions: bool,
    /// Where a record is written ([`record::record`]), kept from one to the next: a large
    /// record then costs no fresh memory (and its page faults) each time.
    buffer: Mutex<Vec<u8>>,
    /// whether the workers were asked to write records ([`record_writer`])
    writing: AtomicBool,
    /// What `next_rows` found but could not add to its rows (or the error it met after
    /// some), returned (raised) by the next call.
    pending: Mutex<Option<PyResult<Next>>>,
    /// The rows `next_rows` added, until `take_rows`.
    columns: Mutex<Columns>,
}

/// A stream's record as a worker wrote it ([`record_writer`]): its line (or its row's
/// message) in `buffer`.
struct WrittenRecord {
    buffer: Vec<u8>,
    record: record::Record,
    row: bool,
}

/// The writer of each stream's record on the batch's workers (as [`BatchCore::record`] writes
/// it): a stream that could not be merged is left to `next`, whose error text needs Python.
fn record_writer(row: bool) -> Writer {
    Arc::new(move |item: &Item| -> Option<Written> {
        let Item::Stream {
            key,
            provider,
            result: Ok(messages),
        } = item
        else {
            return None;
        };
        let mut buffer = Vec::new();
        let record = record::record(key, *provider, Some(messages), None, row, &mut buffer)?;
        Some(Box::new(WrittenRecord {
            buffer,
            record,
            row,
        }))
    })
}

/// What one `next_rows` call added so far.
#[derive(Default)]
struct Added {
    rows: usize,
    held: usize,
    statuses: [usize; 4],
    /// the first row without a message: `(key, error)`
    failed: Option<(String, Option<String>)>,
}

impl Added {
    /// Add `cells` to `columns` and count them, when they fit there; whether they did.
    fn push(&mut self, columns: &mut Columns, cells: &RowCells<'_>) -> bool {
        if !columns.fits(cells) {
            return false;
        }
        columns.push(cells);
        self.rows += 1;
        self.held += cells.record.message.map_or(0, |(start, end)| end - start);
        let status = record::status_index(cells.record.status);
        self.statuses[status] += 1;
        // a record without a message is an `error` record (`Written.merged` False)
        if status == 3 && self.failed.is_none() {
            self.failed = Some((cells.key.to_owned(), cells.error.map(str::to_owned)));
        }
        true
    }
}

/// What became of an item `next_rows` found.
enum Took<'py> {
    /// added to the rows
    Kept,
    /// the batch ended (kept for the next call when rows were added)
    Ended,
    /// not a row: kept for the next call
    Stopped,
    /// not a row, and found first: returned by itself
    Alone(Bound<'py, PyTuple>),
}

/// The most bytes [`BatchCore::buffer`] keeps between records.
const BUFFER_KEPT: usize = 16 << 20;

impl BatchCore {
    /// An item as a tuple, with `(end, file, line)` at the end when `place` is given.
    fn item<'py>(
        &self,
        py: Python<'py>,
        item: Item,
        place: Option<Place>,
        form: Form,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let tuple = match form {
            Form::Item => Self::fields(py, item)?,
            Form::Line | Form::Row => self.record(py, item, form == Form::Row)?,
        };
        self.placed(py, tuple, place)
    }

    /// The next thing found: what an earlier `next_rows` kept, else the batch's next, waiting
    /// at most `wait` with the GIL released.
    fn wait(&self, py: Python<'_>, form: Form, wait: Duration) -> PyResult<Next> {
        if let Some(found) = self.pending.lock().ok().and_then(|mut kept| kept.take()) {
            return found;
        }
        py.detach(|| match self.batch.lock() {
            Ok(mut batch) => {
                if form != Form::Item && !self.writing.swap(true, Ordering::Relaxed) {
                    // records are written on the workers from now on, in parallel
                    batch.write_items(record_writer(form == Form::Row));
                }
                batch.next(Some(wait))
            }
            Err(_) => Err(BatchError::Internal("a batch call panicked".to_owned())),
        })
        .map_err(|e| batch_error(py, e))
    }

    /// Keep `found` for the next call.
    fn keep(&self, found: PyResult<Next>) {
        if let Ok(mut kept) = self.pending.lock() {
            *kept = Some(found);
        }
    }

    /// `found` added to `columns` when it is a stream's row that fits (`next_rows`).
    fn add_row<'py>(
        &self,
        py: Python<'py>,
        columns: &mut Columns,
        found: Next,
        added: &mut Added,
    ) -> PyResult<Took<'py>> {
        let (item, place) = match found {
            Next::Written(item, place, written) => match written.downcast::<WrittenRecord>() {
                Ok(made) if made.row => {
                    if let Item::Stream { key, provider, .. } = &item {
                        let cells = RowCells {
                            key,
                            provider: *provider,
                            error: None,
                            record: &made.record,
                            line: &made.buffer,
                        };
                        if added.push(columns, &cells) {
                            return Ok(Took::Kept);
                        }
                    }
                    return self.not_a_row(py, Next::Written(item, place, made as Written), added);
                }
                // written as a line (`next` asked for that before): written again as a row
                _ => (item, place),
            },
            Next::Item(item, place) => (item, place),
            Next::End => {
                if added.rows > 0 {
                    self.keep(Ok(Next::End));
                }
                return Ok(Took::Ended);
            }
            Next::Timeout => return Ok(Took::Stopped),
        };
        let kept = self.with_buffer(|buffer| -> PyResult<bool> {
            let Some((made, error)) = Self::write_record(py, &item, true, buffer)? else {
                return Ok(false);
            };
            let Item::Stream { key, provider, .. } = &item else {
                return Ok(false);
            };
            let cells = RowCells {
                key,
                provider: *provider,
                error: error.as_deref(),
                record: &made,
                line: buffer,
            };
            Ok(added.push(columns, &cells))
        })?;
        if kept {
            return Ok(Took::Kept);
        }
        self.not_a_row(py, Next::Item(item, place), added)
    }

    /// What is found that is not added to the rows: returned by itself, as `next` returns it,
    /// when no row was added yet; else kept for the next call.
    fn not_a_row<'py>(&self, py: Python<'py>, found: Next, added: &Added) -> PyResult<Took<'py>> {
        if added.rows > 0 {
            self.keep(Ok(found));
            return Ok(Took::Stopped);
        }
        let tuple = match found {
            Next::Written(item, _, made) => match made.downcast::<WrittenRecord>() {
                Ok(made) => match &item {
                    Item::Stream { key, provider, .. } => {
                        Self::written(py, key, *provider, None, made.record, &made.buffer, true)?
                    }
                    _ => self.item(py, item, None, Form::Row)?,
                },
                Err(_) => self.item(py, item, None, Form::Row)?,
            },
            Next::Item(item, _) => self.item(py, item, None, Form::Row)?,
            Next::End | Next::Timeout => return Ok(Took::Stopped),
        };
        Ok(Took::Alone(tuple))
    }

    /// `tuple` with `(end, file, line)` at the end when `place` is given.
    fn placed<'py>(
        &self,
        py: Python<'py>,
        tuple: Bound<'py, PyTuple>,
        place: Option<Place>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let Some(place) = place else {
            return Ok(tuple);
        };
        let place = (u8::from(place.end), place.file, place.line).into_pyobject(py)?;
        let mut all: Vec<Bound<'py, PyAny>> = tuple.iter().collect();
        all.push(place.into_any());
        PyTuple::new(py, all)
    }

    /// A stream's item as its written record, `("record", key, status, error, line, row)`
    /// (`row`: the Parquet columns, or None), serialized with the GIL released; a bad line's
    /// item, or a stream whose record Python must write itself, as [`BatchCore::fields`] makes
    /// it.
    fn record<'py>(&self, py: Python<'py>, item: Item, row: bool) -> PyResult<Bound<'py, PyTuple>> {
        let made = self.with_buffer(|buffer| -> PyResult<Option<Bound<'py, PyTuple>>> {
            let Some((made, error)) = Self::write_record(py, &item, row, buffer)? else {
                return Ok(None);
            };
            let Item::Stream { key, provider, .. } = &item else {
                return Ok(None);
            };
            Self::written(py, key, *provider, error, made, buffer, row).map(Some)
        })?;
        match made {
            Some(tuple) => Ok(tuple),
            None => Self::fields(py, item),
        }
    }

    /// `f` given the kept buffer ([`BatchCore::buffer`]), or a fresh one while another thread
    /// holds it (never waited for with the GIL held).
    fn with_buffer<T>(&self, f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
        let mut kept = self.buffer.try_lock().ok();
        let mut own = Vec::new();
        let buffer: &mut Vec<u8> = match kept.as_deref_mut() {
            Some(buffer) => buffer,
            None => &mut own,
        };
        let out = f(buffer);
        if buffer.capacity() > BUFFER_KEPT {
            *buffer = Vec::new();
        }
        out
    }

    /// A stream's record written in `out` with the GIL released, and its error text; None
    /// for an item that is not a stream's, or a record Python must write itself.
    fn write_record(
        py: Python<'_>,
        item: &Item,
        row: bool,
        out: &mut Vec<u8>,
    ) -> PyResult<Option<(record::Record, Option<String>)>> {
        let Item::Stream {
            key,
            provider,
            result,
        } = item
        else {
            return Ok(None);
        };
        let (messages, error) = match result {
            Ok(values) => (Some(values.as_slice()), None),
            Err(StreamError::Aggregate(err)) => {
                let exc = agg_error(py, err.clone());
                (None, Some(exc.value(py).str()?.to_str()?.to_owned()))
            }
            Err(StreamError::Text(text)) => (None, Some(text.clone())),
        };
        let made =
            py.detach(|| record::record(key, *provider, messages, error.as_deref(), row, out));
        Ok(made.map(|made| (made, error)))
    }

    /// The tuple of a record written in `buffer` ([`BatchCore::record`]).
    fn written<'py>(
        py: Python<'py>,
        key: &str,
        provider: Option<&str>,
        error: Option<String>,
        made: record::Record,
        buffer: &[u8],
        row: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        // a row holds the message: its line is not made
        let line = PyBytes::new(py, if row { b"" } else { buffer });
        let row = match made.row {
            None => py.None().into_bound(py),
            Some(columns) => {
                // the message's JSON as bytes (UTF-8: written from Rust strings), which
                // pyarrow reads as a string column: no Python str is made of a long text
                let message = made
                    .message
                    .map(|(start, end)| PyBytes::new(py, &buffer[start..end]));
                let cells: [Bound<'py, PyAny>; 14] = [
                    key.into_pyobject(py)?.into_any(),
                    provider.into_pyobject(py)?.into_any(),
                    columns.model.into_pyobject(py)?.into_any(),
                    made.status.into_pyobject(py)?.into_any(),
                    columns.finish_reason.into_pyobject(py)?.into_any(),
                    columns
                        .finish_reason_normalized
                        .into_pyobject(py)?
                        .into_any(),
                    columns.input_tokens.into_pyobject(py)?.into_any(),
                    columns.output_tokens.into_pyobject(py)?.into_any(),
                    columns.total_tokens.into_pyobject(py)?.into_any(),
                    columns.text.into_pyobject(py)?.into_any(),
                    columns.tool_calls.into_pyobject(py)?.into_any(),
                    columns.anomalies.into_pyobject(py)?.into_any(),
                    error.as_deref().into_pyobject(py)?.into_any(),
                    message.into_pyobject(py)?.into_any(),
                ];
                PyTuple::new(py, cells)?.into_any()
            }
        };
        ("record", key, made.status, error, line, row).into_pyobject(py)
    }

    fn fields<'py>(py: Python<'py>, item: Item) -> PyResult<Bound<'py, PyTuple>> {
        match item {
            Item::Bad {
                source,
                line,
                reason,
            } => ("bad", source, line, reason).into_pyobject(py),
            Item::Stream {
                key,
                provider,
                result,
            } => {
                let (choices, error) = match result {
                    Ok(values) => {
                        let _pause = GcPause::new(py);
                        let mut convert = ToPy::new(py);
                        let list = PyList::empty(py);
                        for value in &values {
                            list.append(convert.message(value)?)?;
                        }
                        (Some(list), None)
                    }
                    Err(StreamError::Aggregate(err)) => {
                        // the message `aggregate` would raise for these events
                        let exc = agg_error(py, err);
                        (None, Some(exc.value(py).str()?.to_str()?.to_owned()))
                    }
                    Err(StreamError::Text(text)) => (None, Some(text)),
                };
                ("stream", key, provider, choices, error).into_pyobject(py)
            }
        }
    }
}

#[pymethods]
impl BatchCore {
    /// The core writes records itself (`next(timeout, "jsonl" | "row")`, `next_rows`).
    #[classattr]
    const WRITES_RECORDS: bool = true;

    /// The keys of the records it writes, in their order (`fastmerge.batch.schema`'s).
    #[classattr]
    #[pyo3(name = "RECORD_FIELDS")]
    fn record_fields(py: Python<'_>) -> PyResult<Py<PyTuple>> {
        Ok(PyTuple::new(py, record::RECORD_FIELDS)?.unbind())
    }

    /// The Parquet columns of the rows it writes, `(name, Arrow type)` in their order.
    #[classattr]
    #[pyo3(name = "COLUMNS")]
    fn columns_schema(py: Python<'_>) -> PyResult<Py<PyTuple>> {
        Ok(PyTuple::new(py, columns::COLUMNS)?.unbind())
    }

    /// Stream statuses, best first (`fastmerge.batch.schema.STATUSES`).
    #[classattr]
    #[pyo3(name = "STATUSES")]
    fn statuses(py: Python<'_>) -> PyResult<Py<PyTuple>> {
        Ok(PyTuple::new(py, record::STATUSES)?.unbind())
    }

    #[new]
    #[pyo3(
        signature = (paths, group_by = Arg::Default, event = None, order_by = None, provider = Arg::Default, strict = Arg::Default, signature_merge = Arg::Default, usage = Arg::Default, jobs = Arg::Default, max_open_streams = Arg::Default, positions = Arg::Default, bucket = None),
        text_signature = "(paths, group_by='auto', event=None, order_by=None, provider='auto', strict=False, signature_merge='replace', usage='merge', jobs=0, max_open_streams=0, positions=False, bucket=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        paths: &Bound<'py, PyAny>,
        group_by: Arg<'py>,
        event: Option<Bound<'py, PyAny>>,
        order_by: Option<Bound<'py, PyAny>>,
        provider: Arg<'py>,
        strict: Arg<'py>,
        signature_merge: Arg<'py>,
        usage: Arg<'py>,
        jobs: Arg<'py>,
        max_open_streams: Arg<'py>,
        positions: Arg<'py>,
        bucket: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        // the twin's order of checks: paths, counts, aggregator options, then the paths
        let list = match paths.cast::<PyList>() {
            Ok(list) if paths.get_type().is(py.get_type::<PyList>()) => list,
            _ => return Err(wrong_type(py, "paths", "a list of str", paths)),
        };
        let mut texts = Vec::with_capacity(list.len());
        for item in list.iter() {
            match item.cast_into::<PyString>() {
                Ok(text) if text.get_type().is(py.get_type::<PyString>()) => texts.push(text),
                _ => return Err(wrong_type(py, "paths", "a list of str", paths)),
            }
        }
        // every item a str first, then each one's text (the twin's order)
        let files = texts
            .iter()
            .map(|text| path_text(py, text))
            .collect::<PyResult<Vec<String>>>()?;
        let jobs = count_arg(py, "jobs", &jobs)?;
        let max_open_streams = count_arg(py, "max_open_streams", &max_open_streams)?;
        let positions = match &positions {
            Arg::Default => false,
            Arg::Given(obj) if obj.is_instance_of::<PyBool>() => obj.is_truthy()?,
            Arg::Given(obj) => return Err(wrong_type(py, "positions", "a bool", obj)),
        };
        let bucket = bucket.map(|obj| bucket_arg(py, &obj)).transpose()?;
        let provider_name = match &provider {
            Arg::Given(obj) if obj.is_instance_of::<PyString>() => {
                Some(obj.cast::<PyString>()?.to_str()?.to_owned())
            }
            _ => None,
        };
        let dup = |arg: &Arg<'py>| match arg {
            Arg::Given(obj) => Arg::Given(obj.clone()),
            Arg::Default => Arg::Default,
        };
        let (strict_flag, signature, usage_arg) =
            (dup(&strict), dup(&signature_merge), dup(&usage));
        // the aggregator's own checks of its options; a ValueError is a batch option error
        if let Err(err) = AggregatorCore::new(py, provider, strict, signature_merge, usage) {
            if err.is_instance_of::<PyValueError>(py) {
                let detail = err.value(py).str()?.to_str()?.to_owned();
                return Err(batch_error(py, BatchError::Option(detail)));
            }
            return Err(err);
        }
        let aggregate = parse_options(py, &strict_flag, &signature, &usage_arg)?;
        let group_by = match &group_by {
            Arg::Default => "auto".to_owned(),
            Arg::Given(obj) => text_arg(py, "group_by", obj)?,
        };
        let event = event.map(|e| text_arg(py, "event", &e)).transpose()?;
        let order_by = order_by.map(|o| text_arg(py, "order_by", &o)).transpose()?;
        let mut options = Options::new(files);
        options.group_by = group_by;
        options.event = event;
        options.order_by = order_by;
        options.provider = provider_name.filter(|p| p != "auto");
        options.aggregate = aggregate;
        options.jobs = jobs;
        options.max_open_streams = max_open_streams;
        options.bucket = bucket;
        options.max_line_bytes = max_line_arg(py)?;
        // the differential tests' switch, as AggregatorCore reads it
        options.fast_events = std::env::var_os("FASTMERGE_GENERIC_EVENTS").is_none();
        let batch = py
            .detach(|| Batch::new(options))
            .map_err(|e| batch_error(py, e))?;
        Ok(BatchCore {
            batch: Mutex::new(batch),
            positions,
            buffer: Mutex::new(Vec::new()),
            writing: AtomicBool::new(false),
            pending: Mutex::new(None),
            columns: Mutex::new(Columns::default()),
        })
    }

    /// The next item, or None when `timeout` seconds passed without one; raises
    /// `StopIteration` when every item was returned (and after an error or `close`).
    ///
    /// `record`: None, a stream's item `("stream", key, provider, choices, error)`; `"jsonl"`,
    /// its record as written, `("record", key, status, error, line, None)` (`line`: the bytes
    /// of `fastmerge.batch.json_line(StreamResult.record())`); `"row"`, the same with its
    /// Parquet columns (`fastmerge.batch.COLUMNS`) as a tuple in place of None. A bad line's
    /// item is the same in every form, and so is a stream's whose record Python must write.
    #[pyo3(signature = (timeout = None, record = None))]
    fn next<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
        record: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let form = match record {
            None => Form::Item,
            Some(obj) => match text_arg(py, "record", &obj)?.as_str() {
                "jsonl" => Form::Line,
                "row" => Form::Row,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "record must be None, 'jsonl' or 'row', not {}",
                        obj.repr()?
                    )))
                }
            },
        };
        let timeout = timeout_arg(timeout);
        loop {
            // without a timeout: short waits, so that Ctrl-C is seen between them
            match self.wait(py, form, timeout.unwrap_or(SIGNAL_TICK))? {
                Next::Item(item, place) => {
                    let place = self.positions.then_some(place);
                    return self.item(py, item, place, form).map(Some);
                }
                Next::Written(item, place, written) => {
                    let place = self.positions.then_some(place);
                    let made = match written.downcast::<WrittenRecord>() {
                        Ok(made) if form != Form::Item && made.row == (form == Form::Row) => made,
                        // written in another form than asked for now
                        _ => return self.item(py, item, place, form).map(Some),
                    };
                    let Item::Stream { key, provider, .. } = &item else {
                        return self.item(py, item, place, form).map(Some);
                    };
                    let WrittenRecord {
                        buffer,
                        record,
                        row,
                    } = *made;
                    let tuple = Self::written(py, key, *provider, None, record, &buffer, row)?;
                    return self.placed(py, tuple, place).map(Some);
                }
                Next::End => return Err(PyStopIteration::new_err(())),
                Next::Timeout if timeout.is_some() => return Ok(None),
                Next::Timeout => py.check_signals()?,
            }
        }
    }

    /// Rows added to the core's Arrow columns (taken by `take_rows`): the records
    /// `next(timeout, "row")` would give, as many as are ready. Waits as `next` does for the
    /// first; then takes what is ready without waiting, until `rows` rows were added or their
    /// messages reached `held` bytes. Returns `("rows", added, held, statuses, failed)`:
    /// `held` the added messages' JSON bytes, `statuses` the added rows by status
    /// (`fastmerge.batch.STATUSES` order), `failed` the first added row that has no message,
    /// `(key, error)`, or None. An item that is not such a row (a bad line, a record Python
    /// writes) ends the rows: it is returned by itself, as `next` returns it, by this call
    /// when it comes first, else by the next call; so is an error met after rows were added
    /// (raised by the next call). None when `timeout` passed with nothing.
    #[pyo3(signature = (timeout = None, rows = 1000, held = usize::MAX))]
    fn next_rows<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
        rows: usize,
        held: usize,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if self.positions {
            return Err(PyValueError::new_err(
                "next_rows gives no positions: make the core with positions=False",
            ));
        }
        let timeout = timeout_arg(timeout);
        let mut columns = self
            .columns
            .try_lock()
            .map_err(|_| PyRuntimeError::new_err("next_rows is running on another thread"))?;
        let mut added = Added::default();
        loop {
            let wait = if added.rows > 0 {
                Duration::ZERO
            } else {
                timeout.unwrap_or(SIGNAL_TICK)
            };
            let found = match self.wait(py, Form::Row, wait) {
                Ok(found) => found,
                // the rows added are returned first (as `next` returned each before it)
                Err(err) if added.rows > 0 => {
                    self.keep(Err(err));
                    break;
                }
                Err(err) => return Err(err),
            };
            let found = match found {
                Next::Timeout if added.rows > 0 => break,
                Next::Timeout if timeout.is_some() => return Ok(None),
                Next::Timeout => {
                    py.check_signals()?;
                    continue;
                }
                found => found,
            };
            match self.add_row(py, &mut columns, found, &mut added)? {
                Took::Kept => {}
                Took::Ended if added.rows > 0 => break,
                Took::Ended => return Err(PyStopIteration::new_err(())),
                Took::Stopped => break,
                Took::Alone(tuple) => return Ok(Some(tuple)),
            }
            if added.rows >= rows.max(1) || added.held >= held {
                break;
            }
        }
        let failed = added.failed.take();
        Ok(Some(
            ("rows", added.rows, added.held, added.statuses, failed).into_pyobject(py)?,
        ))
    }

    /// The rows `next_rows` added since the last call: `(count, columns)`, each column's
    /// Arrow buffers in `fastmerge.batch.COLUMNS` order (a string column's `(nulls,
    /// validity, offsets, data)`, an integer column's `(nulls, validity, values)`;
    /// `validity` None when no value is null).
    fn take_rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut columns = self
            .columns
            .try_lock()
            .map_err(|_| PyRuntimeError::new_err("next_rows is running on another thread"))?;
        columns.take(py)
    }

    /// `(bytes_read, bytes_total, streams_done, bad_lines)`.
    fn progress(&self) -> (u64, u64, u64, u64) {
        match self.batch.lock() {
            Ok(batch) => batch.progress(),
            Err(_) => (0, 0, 0, 0),
        }
    }

    /// Stop early: workers stop, files close. Idempotent; `next` then raises StopIteration.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            if let Ok(mut batch) = self.batch.lock() {
                batch.close();
            }
        });
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BatchCore>()?;
    m.add_function(wrap_pyfunction!(split::split_file, m)?)?;
    m.add_function(wrap_pyfunction!(split::read_input, m)?)
}
