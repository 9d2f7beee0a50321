//! Templates of the openai-chat fast path: a chunk read as the bytes of an earlier one. Most
//! chunks of a stream are alike but for their delta's text and padding; a chunk the typed
//! parse read as one bare delta is kept, and a later chunk whose other bytes are the same is
//! read by comparing them instead of being parsed.

use std::borrow::Cow;

use super::logprobs_at;
use crate::engine::providers::common::{FastLeaf, FastLeaves};
use crate::engine::providers::openai_chat::Adapter;
use crate::engine::text::is_absent_text;
use crate::engine::value::Value;

/// What a [`Template`] chunk comes out as: one bare delta of one choice.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bare {
    Text { reasoning: bool },
    Arguments { index: i64 },
}

/// A chunk the typed path read as one bare delta, cut around the strings that change from
/// chunk to chunk: the delta's text and the `obfuscation` padding. Every other byte of a
/// chunk that matches it is the same, so the typed parse would read the same fields (the
/// holes are JSON strings, whatever they hold): the same id, model, choice, keys and nulls.
/// Reading the chunk would also change nothing the leaf depends on (a bare delta's chunk sends
/// no field: every top-level value was the one last sent to its choice, and that stays so), so
/// it comes out as the same bare delta with the hole's text, and changes the adapter's state
/// as the typed path would (`open_call`, the last id: [`template_event`] does it). Any other
/// chunk, or an event read the generic way, may change what is sent: it drops every template
/// ([`Templates::after`], [`Templates::clear`]).
#[derive(Debug)]
struct Template {
    /// the chunk's bytes without what its holes held (the quotes around each hole are kept)
    fixed: Vec<u8>,
    /// where each hole is in `fixed` (a string's after its opening quote), and what it holds
    holes: Vec<(usize, Hole)>,
    choice: i64,
    bare: Bare,
    id: Option<String>,
}

/// What a hole of a [`Template`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Hole {
    /// the delta's text (a JSON string)
    Text,
    /// the `obfuscation` padding (a JSON string, not kept)
    Ignored,
    /// the choice's `logprobs` (any JSON value: a chunk whose logprobs are null is a bare
    /// delta, as the typed path reads it)
    Logprobs,
}

/// What [`Template::read`] finds in a chunk's holes: the text, and the logprobs if the
/// template has that hole and they are not null.
type Holes<'a> = (Cow<'a, str>, Option<Value>);

/// The templates of the chunks read since the last chunk that was not one bare delta (a few:
/// one per kind of delta, per tool call, per choice).
#[derive(Debug, Default)]
pub(in crate::engine::providers::openai_chat) struct Templates {
    kept: Vec<Template>,
    /// templates made since one was last matched: a stream whose chunks differ elsewhere too
    /// (an id or a timestamp per chunk) makes one per chunk for nothing, so after
    /// [`MISSES`] of them only every [`RETRY`]th bare chunk is kept
    misses: u32,
}

const TEMPLATES: usize = 4;
const MISSES: u32 = 8;
const RETRY: u32 = 64;

impl Templates {
    /// An event read the generic way: what it sent is not known here.
    pub(in crate::engine::providers::openai_chat) fn clear(&mut self) {
        self.kept.clear();
    }

    /// After the typed path read `raw` into `leaves`: keep it as a template if it is one bare
    /// delta (with its logprobs, their text `logprobs`) whose text lies in `raw` (`ignored`:
    /// its `obfuscation`, if it lies there); drop every template if it is not bare.
    pub(super) fn after(
        &mut self,
        raw: &[u8],
        leaves: &FastLeaves<'_>,
        id: Option<Cow<'_, str>>,
        ignored: Option<&str>,
        logprobs: Option<&str>,
    ) {
        if !leaves.iter().all(|(_, leaf)| {
            matches!(
                leaf,
                FastLeaf::Text { index: None, .. }
                    | FastLeaf::TextLogprobs { .. }
                    | FastLeaf::Arguments { .. }
            )
        }) {
            self.kept.clear();
            return;
        }
        let [(choice, leaf)] = leaves.as_slice() else {
            return;
        };
        let (text, bare) = match leaf {
            FastLeaf::Text {
                text: Cow::Borrowed(text),
                reasoning,
                index: None,
            } => (
                *text,
                Bare::Text {
                    reasoning: *reasoning,
                },
            ),
            FastLeaf::TextLogprobs {
                text: Cow::Borrowed(text),
                reasoning,
                ..
            } => (
                *text,
                Bare::Text {
                    reasoning: *reasoning,
                },
            ),
            FastLeaf::Arguments {
                arguments: Cow::Borrowed(arguments),
                index,
            } => (*arguments, Bare::Arguments { index: *index }),
            _ => return,
        };
        if text.is_empty() {
            return;
        }
        self.misses = self.misses.saturating_add(1);
        if self.misses > MISSES && self.misses % RETRY != 0 {
            return;
        }
        let mut holes: Vec<(usize, usize, Hole)> = Vec::with_capacity(3);
        let logprobs = match leaf {
            FastLeaf::TextLogprobs { .. } if logprobs.is_none() => return,
            FastLeaf::TextLogprobs { .. } => logprobs,
            _ => None,
        };
        for (hole, kind) in [
            (Some(text), Hole::Text),
            (ignored, Hole::Ignored),
            (logprobs, Hole::Logprobs),
        ] {
            let Some(hole) = hole else { continue };
            // a str the parse borrowed lies in `raw`: a string between the quotes of its
            // token, the logprobs as their whole JSON text
            let start = (hole.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
            let end = start.wrapping_add(hole.len());
            if start == 0 || end >= raw.len() {
                return;
            }
            if kind != Hole::Logprobs && (raw[start - 1] != b'"' || raw[end] != b'"') {
                return;
            }
            holes.push((start, end, kind));
        }
        holes.sort_unstable();
        let mut fixed = Vec::with_capacity(raw.len());
        let mut cuts = Vec::with_capacity(holes.len());
        let mut from = 0;
        for (start, end, kind) in holes {
            if start < from {
                return;
            }
            fixed.extend_from_slice(&raw[from..start]);
            cuts.push((fixed.len(), kind));
            from = end;
        }
        fixed.extend_from_slice(&raw[from..]);
        if self.kept.len() == TEMPLATES {
            self.kept.remove(0);
        }
        self.kept.push(Template {
            fixed,
            holes: cuts,
            choice: *choice,
            bare,
            id: id.map(Cow::into_owned),
        });
    }
}

impl Template {
    /// What the holes of `raw` hold, if it is this template's chunk with other strings (and
    /// logprobs) in its holes.
    fn read<'a>(&self, raw: &'a [u8]) -> Option<Holes<'a>> {
        let mut pos = 0;
        let mut from = 0;
        let mut text = None;
        let mut kept = None;
        for &(at, kind) in &self.holes {
            let run = &self.fixed[from..at];
            if raw.get(pos..pos + run.len())? != run {
                return None;
            }
            pos += run.len();
            from = at;
            if kind == Hole::Logprobs {
                // the value to its end, read as the typed path reads it (a decline declines)
                let (value, end) = logprobs_at(raw, pos)?;
                pos = end;
                kept = Some(value).filter(|value| !matches!(value, Value::Null));
                continue;
            }
            // the string to its closing quote (a control character is not JSON: the typed
            // path's error, so it reads the chunk)
            let start = pos;
            let mut escaped = false;
            loop {
                match *raw.get(pos)? {
                    b'"' => break,
                    b'\\' => {
                        escaped = true;
                        pos += 2;
                    }
                    0..=0x1f => return None,
                    _ => pos += 1,
                }
            }
            let body = raw.get(start..pos)?;
            let read: Cow<'a, str> = if escaped {
                // the escapes read as the typed parse reads them (an invalid one declines)
                Cow::Owned(serde_json::from_slice::<String>(raw.get(start - 1..=pos)?).ok()?)
            } else {
                Cow::Borrowed(std::str::from_utf8(body).ok()?)
            };
            if kind == Hole::Text {
                if read.is_empty() {
                    return None; // no delta: the typed path builds its leaf
                }
                text = Some(read);
            }
        }
        (raw.get(pos..)? == &self.fixed[from..]).then_some(())?;
        Some((text?, kept))
    }
}

/// [`super::fast_event`] of a chunk that matches a template: its bare delta, with the state changes
/// the typed path would make; None, with nothing done, if none matches.
pub(super) fn template_event<'a>(adapter: &mut Adapter, raw: &'a [u8]) -> Option<FastLeaves<'a>> {
    let (template, (text, logprobs)) = adapter
        .templates
        .kept
        .iter()
        .find_map(|t| t.read(raw).map(|holes| (t, holes)))?;
    let id = template.id.as_deref();
    // the typed path's checks, which the adapter's state decides
    if let (Some(finished), Some(id)) = (adapter.finished_id.finished(), id) {
        if !is_absent_text(id) && id != finished {
            return None;
        }
    }
    let state = adapter.choices.get_mut(&template.choice)?;
    let leaf = match template.bare {
        Bare::Text { reasoning } => {
            state.open_call = None;
            match logprobs {
                Some(logprobs) => FastLeaf::TextLogprobs {
                    text,
                    reasoning,
                    logprobs,
                },
                None => FastLeaf::Text {
                    text,
                    reasoning,
                    index: None,
                },
            }
        }
        Bare::Arguments { index } => {
            // (a template's `type`, if any, was read where the call had one: only the generic
            // path changes that, and it drops every template)
            let call = state.calls.get(&index)?;
            if state.open_call.as_ref() != Some(call) {
                state.open_call = Some(call.clone());
            }
            FastLeaf::Arguments {
                arguments: text,
                index,
            }
        }
    };
    let choice = template.choice;
    let finished = adapter.choices.values().any(|c| c.finished);
    adapter.finished_id.track_str(id, finished);
    adapter.templates.misses = 0;
    Some(vec![(choice, leaf)])
}
