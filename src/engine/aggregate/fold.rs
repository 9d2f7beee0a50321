//! Leaves into the choices' states: the chunk rules' `fold`, and the appends that do what it
//! would do with a bare text or arguments delta without building the leaf; a choice's state
//! made on its first leaf.

use super::{native_error, AggError, AggregatorCore};
use crate::engine::chunks::{
    append_bare_str, append_bare_str_logprobs, append_indexed_arguments,
    append_indexed_arguments_str, append_indexed_str, append_indexed_text, append_sole_text, fold,
    Family, Leaf, State,
};
use crate::engine::providers::{common, Leaves};
use crate::engine::value::{Map, NativeHost, Value};

impl AggregatorCore {
    /// One anomaly for every choice seen so far (choice 0 if none).
    pub(super) fn anomaly_everywhere(
        &mut self,
        code: &str,
        detail: String,
    ) -> Result<(), AggError> {
        self.ensure_choice();
        let mut leaf = common::Obj::new();
        leaf.put(
            "anomalies",
            common::list_value(vec![common::anomaly(code, detail)]),
        );
        let leaf = leaf.build();
        let choices: Vec<i64> = self.states.keys().copied().collect();
        self.fold_all(choices.into_iter().map(|c| (c, leaf.clone())).collect())
    }

    pub(super) fn fold_all(&mut self, leaves: Leaves) -> Result<(), AggError> {
        for (choice, leaf) in leaves {
            if !self.states.contains_key(&choice) {
                self.new_state(choice)?;
            }
            if self.options.strict {
                if let Some(first) = common::items(common::get(&leaf, "anomalies")).first() {
                    self.closed = Some(format!("event {} raised an anomaly", self.count));
                    return Err(AggError::Anomaly {
                        code: common::get_str(first, "code").unwrap_or("").to_owned(),
                        detail: common::get_str(first, "detail").unwrap_or("").to_owned(),
                    });
                }
            }
            let Some(state) = self.states.get_mut(&choice) else {
                continue; // inserted above
            };
            if let Some((text, reasoning, index)) = bare_text(&leaf) {
                let appended = match index {
                    None => append_sole_text(state, text, reasoning),
                    Some(index) => append_indexed_text(state, text, reasoning, index),
                };
                if appended {
                    continue; // what fold does with this leaf, without parsing it
                }
            } else if let Some((arguments, index)) = bare_arguments(&leaf) {
                match append_indexed_arguments(&NativeHost, state, arguments, index) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(err) => return Err(native_error(err, self.count)),
                }
            }
            let parsed = Leaf::parse(&NativeHost, Family::Assistant, leaf);
            if let Err(err) = fold(&NativeHost, state, &parsed) {
                self.closed = Some(format!("event {} raised while folding", self.count));
                return Err(native_error(err, self.count));
            }
        }
        Ok(())
    }

    /// `fold_all` of a fast path's leaves: a bare delta is appended to its part without being
    /// built as a leaf, when that is what `fold_all` would do with it.
    pub(super) fn fold_fast(&mut self, leaves: common::FastLeaves) -> Result<(), AggError> {
        if leaves.iter().any(|(choice, _)| self.finished(*choice)) {
            // a delta for a choice that finished (spec §6.1): read as any other event
            let leaves = leaves.into_iter().map(|(c, l)| (c, l.build())).collect();
            let leaves = self.after_finish(leaves);
            return self.fold_all(leaves);
        }
        for (choice, leaf) in leaves {
            if let Some(state) = self.states.get_mut(&choice) {
                // the checks of `bare_text` / `bare_arguments`: an empty text is folded
                let appended = match &leaf {
                    common::FastLeaf::Text {
                        text,
                        reasoning,
                        index,
                    } if !text.is_empty() => match index {
                        None => append_bare_str(state, text, *reasoning),
                        Some(index) => append_indexed_str(state, text, *reasoning, *index),
                    },
                    common::FastLeaf::TextLogprobs {
                        text,
                        reasoning,
                        logprobs,
                    } if !text.is_empty() => {
                        append_bare_str_logprobs(state, text, *reasoning, logprobs)
                            .map_err(|err| native_error(err, self.count))?
                    }
                    common::FastLeaf::Arguments { arguments, index } if !arguments.is_empty() => {
                        append_indexed_arguments_str(state, arguments, *index)
                            .map_err(|err| native_error(err, self.count))?
                    }
                    _ => false,
                };
                if appended {
                    continue;
                }
            }
            self.fold_all(vec![(choice, leaf.build())])?;
        }
        Ok(())
    }

    pub(super) fn new_state(&mut self, choice: i64) -> Result<(), AggError> {
        let mut state = State::new(
            &NativeHost,
            Family::Assistant,
            common::str_value("assistant"),
            self.options,
        );
        let mut first = common::Obj::new();
        first.put("choice_index", Value::Int(choice));
        if let Some(provider) = self.provider {
            let mut meta = common::Obj::new();
            meta.put("provider", common::str_value(provider));
            first.put("provider_metadata", meta.build());
        }
        let leaf = Leaf::parse(&NativeHost, Family::Assistant, first.build());
        fold(&NativeHost, &mut state, &leaf).map_err(|e| native_error(e, self.count))?;
        if !self.pending.is_empty() {
            // the unreadable events before the first choice, in their order
            let mut anomalies = common::Obj::new();
            anomalies.put(
                "anomalies",
                common::list_value(std::mem::take(&mut self.pending)),
            );
            let leaf = Leaf::parse(&NativeHost, Family::Assistant, anomalies.build());
            fold(&NativeHost, &mut state, &leaf).map_err(|e| native_error(e, self.count))?;
        }
        self.states.insert(choice, state);
        Ok(())
    }

    pub(super) fn ensure_choice(&mut self) {
        if self.states.is_empty() {
            // no event at all: one empty, incomplete message (cannot fail: a fixed leaf)
            let _ = self.new_state(0);
        }
    }
}

/// The one part of a leaf that is nothing but `{"parts": [part]}` (the shape of the deltas
/// [`bare_text`] and [`bare_arguments`] read).
#[inline]
fn sole_part(leaf: &Value) -> Option<&Map> {
    let Value::Dict(map) = leaf else { return None };
    if map.len() != 1 {
        return None;
    }
    let Some(Value::List(parts)) = map.get("parts") else {
        return None;
    };
    match parts.as_slice() {
        [Value::Dict(part)] => Some(part),
        _ => None,
    }
}

/// The text of a leaf that is nothing but one text or reasoning delta, whether it is
/// reasoning, and its part index if it has one (`{"parts": [{"part": "text" | "reasoning",
/// "text": "...", "index"?: i}]}`): most events of a long stream. [`append_bare_text`] and
/// [`append_indexed_text`] append it as `fold` would.
fn bare_text(leaf: &Value) -> Option<(&Value, bool, Option<&Value>)> {
    let part = sole_part(leaf)?;
    let index = part.get("index");
    if part.len() != 2 + usize::from(index.is_some()) {
        return None;
    }
    let reasoning = match part.get("part") {
        Some(Value::Str(kind)) if kind == "text" => false,
        Some(Value::Str(kind)) if kind == "reasoning" => true,
        _ => return None,
    };
    match (part.get("text"), index) {
        (_, Some(Value::Null)) => None,
        (Some(text @ Value::Str(t)), index) if !t.is_empty() => Some((text, reasoning, index)),
        _ => None,
    }
}

/// The arguments and provider index of a leaf that is nothing but one tool-call arguments
/// fragment at an index (`{"parts": [{"part": "tool_call", "provider_index": i, "arguments":
/// "..."}]}`): the deltas of a streamed call. [`append_indexed_arguments`] appends them as
/// `fold` would.
fn bare_arguments(leaf: &Value) -> Option<(&Value, &Value)> {
    let part = sole_part(leaf)?;
    if part.len() != 3 || !matches!(part.get("part"), Some(Value::Str(k)) if k == "tool_call") {
        return None;
    }
    match (part.get("arguments"), part.get("provider_index")) {
        (Some(arguments @ Value::Str(a)), Some(index))
            if !a.is_empty() && !matches!(index, Value::Null) =>
        {
            Some((arguments, index))
        }
        _ => None,
    }
}
