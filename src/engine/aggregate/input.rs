//! Event payloads from bytes: the adapter's typed reading where it takes the event, else the
//! event parsed into values first; and the transport's sink that hands the payloads over.

use super::{AggError, AggregatorCore};
use crate::engine::events;
use crate::engine::providers;
use crate::engine::transport::Sink;

impl AggregatorCore {
    /// One event payload from bytes.
    pub(super) fn read(&mut self, payload: &[u8]) -> Result<(), AggError> {
        match self.read_fast(payload) {
            Some(result) => result,
            None => self.read_generic(payload),
        }
    }

    /// The adapter's typed reading of an event's bytes, when the event is of its hot shape:
    /// the same leaves as `event`, without building the event's tree. None, with nothing
    /// done, for any other event.
    pub(super) fn read_fast(&mut self, payload: &[u8]) -> Option<Result<(), AggError>> {
        if !self.fast_events || self.new_response_at.is_some() {
            return None;
        }
        if self.adapter.is_none() {
            return self.read_first_fast(payload);
        }
        let adapter = self.adapter.as_mut()?;
        let leaves = adapter.fast_event(payload)?;
        if adapter.fast_ended() {
            self.ended = true;
        }
        self.count += 1;
        self.recognized += 1;
        self.read += 1;
        Some(self.fold_fast(leaves))
    }

    /// Without a provider yet (`provider="auto"`): the provider told from the event's bytes
    /// (`providers::detect_raw`), and the event read by that adapter's typed path, as a later
    /// event is (for a first event that may be OpenAI Chat's). None, with no provider chosen,
    /// where either declines: the event is then parsed into values and the provider told
    /// from them ([`AggregatorCore::choose_adapter`]).
    fn read_first_fast(&mut self, payload: &[u8]) -> Option<Result<(), AggError>> {
        // Only an OpenAI Chat stream starts with an event of a typed path's shape (the others
        // start with message_start, response.created, messageStart, or a Gemini chunk, which
        // have none): for them, telling the provider from the bytes too would be wasted work.
        memchr::memmem::find(payload, b"\"choices\"")?;
        let name = providers::detect_raw(payload)?;
        let mut adapter = providers::adapter(name)?;
        let leaves = adapter.fast_event(payload)?;
        self.ended = adapter.fast_ended();
        self.provider = Some(name);
        self.adapter = Some(adapter);
        self.count += 1;
        self.recognized += 1;
        self.read += 1;
        Some(self.fold_fast(leaves))
    }

    /// An event payload parsed into values first.
    pub(super) fn read_generic(&mut self, payload: &[u8]) -> Result<(), AggError> {
        self.count += 1;
        match events::parse(payload) {
            Ok(event) => self.event(&event),
            Err(err) => self.unreadable(err.0),
        }
    }

    /// A transport's sink: reads `payload` unless an earlier payload of the same call failed
    /// (the call's error, in `result`; the payloads after it are not read).
    pub(super) fn read_into(&mut self, result: &mut Result<(), AggError>, payload: &[u8]) {
        if result.is_ok() {
            *result = self.read(payload);
        }
    }
}

/// The sink of [`AggregatorCore::feed`]: reads each payload unless an earlier one of the same
/// call failed (the call's error, in `result`; the payloads after it are not read).
pub(super) struct Reader<'a> {
    pub(super) core: &'a mut AggregatorCore,
    pub(super) result: Result<(), AggError>,
    /// the line the fast path just declined (where it lies): when the scan hands over that
    /// very payload, it is not offered to the fast path again
    pub(super) declined: Option<(*const u8, usize)>,
}

impl Sink for Reader<'_> {
    fn payload(&mut self, payload: &[u8]) {
        if self.result.is_err() {
            return;
        }
        let declined = self.declined.take() == Some((payload.as_ptr(), payload.len()));
        self.result = match declined {
            true => self.core.read_generic(payload),
            false => self.core.read(payload),
        };
    }

    fn whole_line(&mut self, line: &[u8]) -> bool {
        if self.result.is_err() {
            return false; // scanned as always, and not read
        }
        match self.core.read_fast(line) {
            Some(result) => {
                self.result = result;
                true
            }
            None => {
                self.declined = Some((line.as_ptr(), line.len()));
                false
            }
        }
    }
}
