//! Records' Parquet rows kept as Arrow columns ([`COLUMNS`], the schema
//! `fastmerge.batch.schema.COLUMNS` declares; a test holds the two alike): validity bitmaps,
//! offsets and bytes, handed to Python as `bytes` that pyarrow wraps without reading them
//! (`pyarrow.Array.from_buffers`). A row group of thousands of rows then costs a few objects,
//! not a tuple of fourteen per row that pyarrow reads back one cell at a time.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::py::batch::record::Record;

/// The columns, each with its Arrow type, in the order [`Columns::take`] gives them.
pub(crate) const COLUMNS: [(&str, &str); 14] = [
    ("key", "string"),
    ("provider", "string"),
    ("model", "string"),
    ("status", "string"),
    ("finish_reason", "string"),
    ("finish_reason_normalized", "string"),
    ("input_tokens", "int64"),
    ("output_tokens", "int64"),
    ("total_tokens", "int64"),
    ("text", "string"),
    ("tool_calls", "int64"),
    ("anomalies", "int64"),
    ("error", "string"),
    ("message", "string"),
];

/// The most bytes a string column holds: its offsets are Arrow's `int32`.
const MOST_BYTES: usize = i32::MAX as usize;

/// A column's validity bitmap (Arrow's: bit `i` of byte `i / 8`, least significant first).
#[derive(Default)]
struct Validity {
    bits: Vec<u8>,
    nulls: usize,
}

impl Validity {
    fn push(&mut self, at: usize, valid: bool) {
        if at % 8 == 0 {
            self.bits.push(0);
        }
        if valid {
            self.bits[at / 8] |= 1 << (at % 8);
        } else {
            self.nulls += 1;
        }
    }

    /// The bitmap, or None when no value is null (Arrow's "all valid").
    fn bytes<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        (self.nulls > 0).then(|| PyBytes::new(py, &self.bits))
    }
}

/// A `string` column.
struct Strings {
    validity: Validity,
    /// little-endian `int32`s, as Arrow lays them out
    offsets: Vec<u8>,
    data: Vec<u8>,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            validity: Validity::default(),
            offsets: vec![0; 4],
            data: Vec::new(),
        }
    }
}

impl Strings {
    fn push(&mut self, at: usize, value: Option<&[u8]>) {
        self.validity.push(at, value.is_some());
        self.data.extend_from_slice(value.unwrap_or_default());
        // fits: `Columns::fits` was asked before the row was added
        let end = i32::try_from(self.data.len()).unwrap_or(i32::MAX);
        self.offsets.extend_from_slice(&end.to_le_bytes());
    }

    /// `(nulls, validity, offsets, data)`.
    fn buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (
            self.validity.nulls,
            self.validity.bytes(py),
            PyBytes::new(py, &self.offsets),
            PyBytes::new(py, &self.data),
        )
            .into_pyobject(py)
    }
}

/// An `int64` column.
#[derive(Default)]
struct Ints {
    validity: Validity,
    /// little-endian `int64`s
    values: Vec<u8>,
}

impl Ints {
    fn push(&mut self, at: usize, value: Option<i64>) {
        self.validity.push(at, value.is_some());
        self.values
            .extend_from_slice(&value.unwrap_or(0).to_le_bytes());
    }

    /// `(nulls, validity, values)`.
    fn buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (
            self.validity.nulls,
            self.validity.bytes(py),
            PyBytes::new(py, &self.values),
        )
            .into_pyobject(py)
    }
}

/// An optional text's bytes.
fn bytes(text: &Option<String>) -> Option<&[u8]> {
    text.as_deref().map(str::as_bytes)
}

/// One stream's row, as [`Columns::push`] takes it.
pub(crate) struct RowCells<'a> {
    pub key: &'a str,
    pub provider: Option<&'a str>,
    pub error: Option<&'a str>,
    /// the record, its line (with the message's JSON) in `line`
    pub record: &'a Record,
    pub line: &'a [u8],
}

impl RowCells<'_> {
    /// The message's JSON bytes, if any.
    fn message(&self) -> Option<&[u8]> {
        self.record
            .message
            .map(|(start, end)| &self.line[start..end])
    }
}

/// The rows added since the last [`Columns::take`], a column at a time.
#[derive(Default)]
pub(crate) struct Columns {
    count: usize,
    key: Strings,
    provider: Strings,
    model: Strings,
    status: Strings,
    finish_reason: Strings,
    finish_reason_normalized: Strings,
    input_tokens: Ints,
    output_tokens: Ints,
    total_tokens: Ints,
    text: Strings,
    tool_calls: Ints,
    anomalies: Ints,
    error: Strings,
    message: Strings,
}

impl Columns {
    /// Whether `cells` fit beside the rows held: no string column past [`MOST_BYTES`].
    pub fn fits(&self, cells: &RowCells<'_>) -> bool {
        let Some(row) = &cells.record.row else {
            return false;
        };
        let len = |text: Option<&[u8]>| text.map_or(0, <[u8]>::len);
        [
            (&self.key, Some(cells.key.as_bytes())),
            (&self.provider, cells.provider.map(str::as_bytes)),
            (&self.model, bytes(&row.model)),
            (&self.status, Some(cells.record.status.as_bytes())),
            (&self.finish_reason, bytes(&row.finish_reason)),
            (
                &self.finish_reason_normalized,
                bytes(&row.finish_reason_normalized),
            ),
            (&self.text, bytes(&row.text)),
            (&self.error, cells.error.map(str::as_bytes)),
            (&self.message, cells.message()),
        ]
        .iter()
        .all(|(column, value)| column.data.len() + len(*value) <= MOST_BYTES)
    }

    /// Add a row (its record made with its row: `record.row` is Some, and [`Columns::fits`]
    /// said yes).
    pub fn push(&mut self, cells: &RowCells<'_>) {
        let Some(row) = &cells.record.row else {
            return;
        };
        let at = self.count;
        let int = |value: Option<usize>| value.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        self.key.push(at, Some(cells.key.as_bytes()));
        self.provider.push(at, cells.provider.map(str::as_bytes));
        self.model.push(at, bytes(&row.model));
        self.status.push(at, Some(cells.record.status.as_bytes()));
        self.finish_reason.push(at, bytes(&row.finish_reason));
        self.finish_reason_normalized
            .push(at, bytes(&row.finish_reason_normalized));
        self.input_tokens.push(at, row.input_tokens);
        self.output_tokens.push(at, row.output_tokens);
        self.total_tokens.push(at, row.total_tokens);
        self.text.push(at, bytes(&row.text));
        self.tool_calls.push(at, int(row.tool_calls));
        self.anomalies.push(at, int(Some(row.anomalies)));
        self.error.push(at, cells.error.map(str::as_bytes));
        self.message.push(at, cells.message());
        self.count += 1;
    }

    /// `(count, columns)`, each column's buffers in `COLUMNS` order (strings: `(nulls,
    /// validity, offsets, data)`; ints: `(nulls, validity, values)`; `validity` None when
    /// no value is null); the columns are emptied.
    pub fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let taken = std::mem::take(self);
        // as many columns as [`COLUMNS`] declares, in its order (the length is checked here)
        let columns: [_; COLUMNS.len()] = [
            taken.key.buffers(py)?,
            taken.provider.buffers(py)?,
            taken.model.buffers(py)?,
            taken.status.buffers(py)?,
            taken.finish_reason.buffers(py)?,
            taken.finish_reason_normalized.buffers(py)?,
            taken.input_tokens.buffers(py)?,
            taken.output_tokens.buffers(py)?,
            taken.total_tokens.buffers(py)?,
            taken.text.buffers(py)?,
            taken.tool_calls.buffers(py)?,
            taken.anomalies.buffers(py)?,
            taken.error.buffers(py)?,
            taken.message.buffers(py)?,
        ];
        (taken.count, PyTuple::new(py, columns)?).into_pyobject(py)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_bits_are_least_significant_first() {
        let mut validity = Validity::default();
        for (at, valid) in [true, false, true, true, false, false, false, false, true]
            .into_iter()
            .enumerate()
        {
            validity.push(at, valid);
        }
        assert_eq!(validity.bits, vec![0b0000_1101, 0b0000_0001]);
        assert_eq!(validity.nulls, 5);
    }

    #[test]
    fn strings_keep_offsets_of_every_value_null_or_not() {
        let mut strings = Strings::default();
        strings.push(0, Some(b"ab"));
        strings.push(1, None);
        strings.push(2, Some(b"c"));
        let offsets: Vec<i32> = strings
            .offsets
            .chunks(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(offsets, vec![0, 2, 2, 3]);
        assert_eq!(strings.data, b"abc");
        assert_eq!(strings.validity.bits, vec![0b101]);
    }
}
