//! The caches `ToPy` builds Python objects through: each distinct object key, short string and
//! list of token bytes made once and shared (as orjson shares keys), found by a `Print` of
//! its text.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyString;
use smallvec::SmallVec;

/// A [`Shared`] object, the [`Print`] of its text, and the text itself when the print does
/// not hold all of it (longer than 16 bytes).
type Slot<'py, T> = (Print, Option<SmallVec<[u8; 24]>>, Bound<'py, T>);

/// A short text's length and two words of it: its first and last eight bytes (four for a text
/// of 4 to 7 bytes, the bytes themselves below 4). Up to 16 bytes the print is the text: two
/// texts with the same print are equal, with no comparison of bytes (keys and tokens are that
/// short); it also gives the slot.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Print {
    len: usize,
    head: u64,
    tail: u64,
}

impl Print {
    /// Texts longer than this are compared byte by byte after their prints.
    const WHOLE: usize = 16;

    fn of(text: &[u8]) -> Print {
        let len = text.len();
        let word = |at: usize, width: usize| -> u64 {
            let mut bytes = [0u8; 8];
            if let (Some(to), Some(from)) = (bytes.get_mut(..width), text.get(at..at + width)) {
                to.copy_from_slice(from);
            }
            u64::from_le_bytes(bytes)
        };
        let (head, tail) = match len {
            8.. => (word(0, 8), word(len - 8, 8)),
            4..=7 => (word(0, 4), word(len - 4, 4)),
            1..=3 => (
                word(0, 1) | word(len / 2, 1) << 8 | word(len - 1, 1) << 16,
                0,
            ),
            0 => (0, 0),
        };
        Print { len, head, tail }
    }

    fn slot(&self, bits: u32) -> usize {
        let mixed = (self.head ^ self.tail.rotate_left(29) ^ self.len as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - bits)) as usize
    }
}

/// Python objects made from short texts, found again by their text: a direct-mapped table
/// (one slot per text's [`Print`]; a newer text takes the slot), so a lookup is a print and
/// one comparison of it, and the table never grows. Allocated at its first use.
pub(crate) struct Shared<'py, T> {
    slots: Vec<Option<Slot<'py, T>>>,
    bits: u32,
}

impl<'py, T> Shared<'py, T> {
    pub(crate) fn new(bits: u32) -> Self {
        Shared {
            slots: Vec::new(),
            bits,
        }
    }

    pub(crate) fn get(&self, text: &[u8]) -> Option<Bound<'py, T>> {
        let print = Print::of(text);
        match self.slots.get(print.slot(self.bits)) {
            Some(Some((known, whole, obj)))
                if *known == print
                    && whole.as_ref().is_none_or(|whole| whole.as_slice() == text) =>
            {
                Some(obj.clone())
            }
            _ => None,
        }
    }

    /// Keeps `obj` as the object of `text` (a short one: see [`SHARED_LEN`]).
    pub(crate) fn put(&mut self, text: &[u8], obj: &Bound<'py, T>) {
        if text.len() > SHARED_LEN {
            return;
        }
        if self.slots.is_empty() {
            self.slots.resize_with(1 << self.bits, || None);
        }
        let print = Print::of(text);
        let whole = (text.len() > Print::WHOLE).then(|| SmallVec::from_slice(text));
        if let Some(slot) = self.slots.get_mut(print.slot(self.bits)) {
            *slot = Some((print, whole, obj.clone()));
        }
    }
}

/// How long a text may be for [`Shared`] to keep its object.
const SHARED_LEN: usize = 64;

/// The object keys of every message made so far, kept between calls: a message's keys are
/// the same few dozen each time (its fields, its parts', its usage's), and a `str` made once
/// keeps its hash, so a dict insert does not hash it again. A [`Shared`] table of 512 slots
/// (a newer key takes the slot, dropping the older one): the memory it holds is bounded
/// whatever keys come through.
struct KeptKeys {
    slots: Vec<Option<KeptKey>>,
}

/// A kept key: its print, its text when the print does not hold all of it, its `str`.
type KeptKey = (Print, Option<SmallVec<[u8; 24]>>, Py<PyString>);

static KEYS: Mutex<KeptKeys> = Mutex::new(KeptKeys { slots: Vec::new() });
const KEY_BITS: u32 = 9;

/// The `str` of an object key: the one made before if the table holds it, else a new one,
/// kept. The table is never waited for: a key wanted while it is in use (another
/// interpreter thread between its own GIL switches) is made afresh.
pub(crate) fn key<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyString> {
    let bytes = text.as_bytes();
    if bytes.len() > SHARED_LEN {
        return PyString::new(py, text);
    }
    let Ok(mut table) = KEYS.try_lock() else {
        return PyString::new(py, text);
    };
    let print = Print::of(bytes);
    let at = print.slot(KEY_BITS);
    if table.slots.is_empty() {
        table.slots.resize_with(1 << KEY_BITS, || None);
    }
    let Some(slot) = table.slots.get_mut(at) else {
        return PyString::new(py, text);
    };
    if let Some((known, whole, obj)) = slot {
        if *known == print && whole.as_ref().is_none_or(|whole| whole.as_slice() == bytes) {
            return obj.bind(py).clone();
        }
    }
    let made = PyString::new(py, text);
    let whole = (bytes.len() > Print::WHOLE).then(|| SmallVec::from_slice(bytes));
    // the older key's str is released here (a str's dealloc runs no Python code)
    *slot = Some((print, whole, made.clone().unbind()));
    made
}
