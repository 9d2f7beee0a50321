//! Shortcuts of `fold` for the hot leaves (a bare or indexed text delta, an indexed tool-call
//! arguments fragment): the text is appended to the part `fold` would append it to, without
//! walking the leaf; false, with nothing done, where that part is not the state's last (then
//! the caller folds the leaf). The twin's shortcut in `ChunkCore.__add__`; the `_str` variants
//! take text borrowed from an event's bytes (the typed fast paths'). Separate from `fold`:
//! they are what the aggregator and the chunk `+` call before it.

use crate::engine::host::Host;
use crate::engine::value::{NativeError, NativeHost, Value};

use super::merge::fold_logprobs;
use super::state::{PartKind, State};
use super::Family;

/// `fold` of a bare text or reasoning delta ([`Leaf::bare_text`], which may carry a role)
/// when the state already has its role and ends with a plain part of that kind: the text is
/// appended without walking the leaf. False (and nothing done) otherwise: then fold the leaf.
/// The twin's shortcut in `ChunkCore.__add__`.
///
/// [`Leaf::bare_text`]: super::Leaf::bare_text
pub fn append_bare_text<O: Clone>(state: &mut State<O>, text: &O, reasoning: bool) -> bool {
    let part = bare_text_part(state, reasoning, Role::MayCarry);
    push_to(part, state, |pieces| pieces.push(text.clone()))
}

/// [`append_bare_text`] of a leaf that is nothing but its one part (`{"parts": [part]}`,
/// an aggregator's): it carries no role, so the state's role does not matter (a stream
/// whose chunks never send one stays on this path).
pub fn append_sole_text<O: Clone>(state: &mut State<O>, text: &O, reasoning: bool) -> bool {
    let part = bare_text_part(state, reasoning, Role::Absent);
    push_to(part, state, |pieces| pieces.push(text.clone()))
}

/// Whether a bare leaf may carry a `role` (a chunk's) or carries none (an aggregator's
/// `{"parts": [part]}`).
#[derive(Clone, Copy, PartialEq)]
enum Role {
    MayCarry,
    Absent,
}

/// The part [`append_bare_text`] appends to, if any: the state's last part, plain and of that
/// kind. A leaf that may carry a role needs the state's role set (else `fold` sets it).
fn bare_text_part<O>(state: &State<O>, reasoning: bool, role: Role) -> Option<usize> {
    if state.family != Family::Assistant || (role == Role::MayCarry && state.role.is_none()) {
        return None;
    }
    let last = state.parts.last()?;
    (last.index.is_none() && is_kind(&last.kind, reasoning)).then(|| state.parts.len() - 1)
}

/// Whether a part kind is text (or reasoning, if `reasoning`).
fn is_kind<O>(kind: &PartKind<O>, reasoning: bool) -> bool {
    matches!(
        (kind, reasoning),
        (PartKind::Text(_), false) | (PartKind::Reasoning(_), true)
    )
}

/// Appends to the pieces of part `part` (if any) and counts the leaf: whether it did.
fn push_to<O>(part: Option<usize>, state: &mut State<O>, push: impl FnOnce(&mut Vec<O>)) -> bool {
    match part.and_then(|p| state.parts.get_mut(p)) {
        Some(part) => {
            push(&mut part.pieces);
            state.leaves += 1;
            true
        }
        None => false,
    }
}

/// A text the engine read itself, appended to the last piece when that is a str (else a
/// piece of its own): a run of deltas grows one string, so each delta is copied once and
/// allocates nothing of its own. The pieces join to the same text.
fn push_str(pieces: &mut Vec<Value>, text: &str) {
    match pieces.last_mut() {
        Some(Value::Str(last)) => last.push_str(text),
        _ => pieces.push(Value::Str(text.to_owned())),
    }
}

/// [`append_sole_text`] of a text borrowed from an event's bytes (a typed fast path's leaf,
/// which carries no role).
pub fn append_bare_str(state: &mut State<Value>, text: &str, reasoning: bool) -> bool {
    push_to(
        bare_text_part(state, reasoning, Role::Absent),
        state,
        |pieces| push_str(pieces, text),
    )
}

/// `fold` of a leaf that is one text or reasoning delta with a part index (`{"parts":
/// [{"part", "text", "index"}]}`, what adapters emit for a provider's block deltas) when the
/// state's last part is of that kind and holds that index: the text is appended without
/// walking the leaf. That part is the one `by_index` maps the index to (a part takes its index
/// when it is created, and a later part with the same index would be later in `parts`), so
/// this is what `fold` does. False (and nothing done) otherwise: then fold the leaf.
pub fn append_indexed_text<O: Clone + PartialEq>(
    state: &mut State<O>,
    text: &O,
    reasoning: bool,
    index: &O,
) -> bool {
    push_to(
        indexed_text_part(state, reasoning, index),
        state,
        |pieces| pieces.push(text.clone()),
    )
}

/// The part [`append_indexed_text`] appends to, if any.
fn indexed_text_part<O: PartialEq>(state: &State<O>, reasoning: bool, index: &O) -> Option<usize> {
    if state.family != Family::Assistant {
        return None;
    }
    let last = state.parts.last()?;
    (last.index.as_ref() == Some(index) && is_kind(&last.kind, reasoning))
        .then(|| state.parts.len() - 1)
}

/// [`append_bare_str`] of a leaf that carries its `logprobs` too (`{"parts": [text part],
/// "logprobs": logprobs}`, a token delta with its logprobs): the text appended as there,
/// then the logprobs folded as `fold` folds that leaf's (the leaf counted once). False, with
/// nothing done, where the text cannot be appended: then fold the leaf.
pub fn append_bare_str_logprobs(
    state: &mut State<Value>,
    text: &str,
    reasoning: bool,
    logprobs: &Value,
) -> Result<bool, NativeError> {
    let part = bare_text_part(state, reasoning, Role::Absent);
    if !push_to(part, state, |pieces| push_str(pieces, text)) {
        return Ok(false);
    }
    if !matches!(logprobs, Value::Null) {
        state.logprobs = Some(fold_logprobs(&NativeHost, state.logprobs.take(), logprobs)?);
    }
    Ok(true)
}

/// [`append_indexed_text`] of a text borrowed from an event's bytes (a typed fast path's).
pub fn append_indexed_str(
    state: &mut State<Value>,
    text: &str,
    reasoning: bool,
    index: i64,
) -> bool {
    let part = indexed_text_part(state, reasoning, &Value::Int(index));
    push_to(part, state, |pieces| push_str(pieces, text))
}

/// `fold` of a leaf that is one tool-call fragment holding only a provider index and text
/// arguments (`{"parts": [{"part": "tool_call", "provider_index": i, "arguments": "..."}]}`,
/// resolver rule 7) when a call holds that index and has text arguments: the text is appended
/// to that call, as `_merge_into` does, without walking the leaf. False (and nothing done)
/// otherwise: then fold the leaf.
pub fn append_indexed_arguments<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    arguments: &H::Obj,
    index: &H::Obj,
) -> Result<bool, H::Err> {
    let part = arguments_part(host, state, index)?;
    Ok(push_to(part, state, |pieces| {
        pieces.push(arguments.clone())
    }))
}

/// The part [`append_indexed_arguments`] appends to, if any.
fn arguments_part<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    index: &H::Obj,
) -> Result<Option<usize>, H::Err> {
    if state.family != Family::Assistant {
        return Ok(None);
    }
    let hash = host.key_hash(index)?;
    let Some(&call) = state.calls_by_index.get(host, index, hash)? else {
        return Ok(None);
    };
    Ok(state
        .calls
        .get(call)
        .filter(|c| c.args_dict.is_none())
        .map(|c| c.part))
}

/// [`append_indexed_arguments`] of arguments borrowed from an event's bytes (a typed fast
/// path's).
pub fn append_indexed_arguments_str(
    state: &mut State<Value>,
    arguments: &str,
    index: i64,
) -> Result<bool, NativeError> {
    let part = arguments_part(&NativeHost, state, &Value::Int(index))?;
    Ok(push_to(part, state, |pieces| push_str(pieces, arguments)))
}
