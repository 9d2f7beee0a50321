//! The caches `ToPy` builds Python objects through: each distinct object key, short string and
//! list of token bytes made once and shared (as orjson shares keys), found by a `Print` of
//! its text.

use pyo3::prelude::*;
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
