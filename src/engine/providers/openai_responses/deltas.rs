//! The Responses adapter on the deltas of an item's content: output text (with logprobs and
//! annotations), refusals, reasoning text and summaries, call arguments, each checked against
//! its done event.

use crate::engine::providers::common::{get, get_str, list_value, str_value, Leaves, Obj};
use crate::engine::value::Value;

use super::*;

/// What a streamed text is, for [`Adapter::stream_text`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Streamed {
    /// output text (`output_text.delta`)
    Output,
    /// reasoning text (`reasoning_text.delta`)
    Reasoning,
    /// a reasoning summary's text (`reasoning_summary_text.delta`)
    Summary,
}

impl Adapter {
    // -- deltas

    /// What a streamed text delta of item `index` changes, read by the generic handlers and
    /// the typed path alike: the text of its content (or summary) `sub` tracked for its done
    /// event and, for reasoning that adds text, the item's first part. The index of its part.
    pub(super) fn stream_text(&mut self, index: i64, sub: i64, delta: &str, of: Streamed) -> i64 {
        let (key, at) = match of {
            Streamed::Summary => (
                format!("{index}:summary:{sub}"),
                index * STRIDE + SUMMARY + sub,
            ),
            _ => (format!("{index}:{sub}"), index * STRIDE + sub),
        };
        self.track(key, delta);
        if of != Streamed::Output && !delta.is_empty() {
            self.set_first_part(index, at);
        }
        at
    }

    pub(super) fn text_delta(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let ci = Self::sub(event, "content_index", kind, CONTENT_LIMIT)?;
        let delta = Self::string(event, "delta", kind)?;
        let logprobs = get(event, "logprobs");
        if !matches!(logprobs, None | Some(Value::Null) | Some(Value::List(_))) {
            return Err(format!(
                "{kind}: 'logprobs' must be a list, not {}",
                type_name(logprobs)
            ));
        }
        let mut anomalies = Vec::new();
        let item_kind = self
            .item_at(index, kind, "message", &mut anomalies)
            .kind
            .clone();
        let mut leaf = Obj::new();
        if item_kind == "message" {
            let at = self.stream_text(index, ci, delta, Streamed::Output);
            if !delta.is_empty() {
                let part = text_part("text", delta.to_owned(), at);
                leaf.put("parts", list_value(vec![part]));
            }
            if let Some(lp) = logprobs.filter(|lp| truthy_list(Some(lp))) {
                let mut content = Obj::new();
                content.put("content", lp.clone());
                leaf.put("logprobs", content.build());
            }
        } else {
            anomalies.push(mismatched(kind, index, &item_kind));
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    /// `output_text.done`, `content_part.done` (of output_text, reasoning_text or refusal),
    /// `refusal.done`, `reasoning_text.done`.
    pub(super) fn text_done(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let ci = Self::sub(event, "content_index", kind, CONTENT_LIMIT)?;
        let (part_kind, text): (&str, &str) = if kind == "response.content_part.done" {
            let part = match get(event, "part") {
                Some(part @ Value::Dict(_)) => part,
                other => {
                    return Err(format!(
                        "{kind}: 'part' must be a dict, not {}",
                        type_name(other)
                    ))
                }
            };
            let part_kind = match get_str(part, "type") {
                Some(k @ ("output_text" | "reasoning_text" | "refusal")) => k,
                _ => return Ok(()),
            };
            let field = if part_kind == "refusal" {
                "refusal"
            } else {
                "text"
            };
            match get(part, field) {
                Some(Value::Str(text)) => (part_kind, text.as_str()),
                other => {
                    return Err(format!(
                        "{kind}: 'part.{field}' must be a str, not {}",
                        type_name(other)
                    ))
                }
            }
        } else {
            let part_kind = match kind {
                "response.output_text.done" => "output_text",
                "response.refusal.done" => "refusal",
                _ => "reasoning_text",
            };
            let field = if part_kind == "refusal" {
                "refusal"
            } else {
                "text"
            };
            (part_kind, Self::string(event, field, kind)?)
        };
        let wanted = if part_kind == "reasoning_text" {
            "reasoning"
        } else {
            "message"
        };
        match self.items.get(&index) {
            Some(item) if !item.done && item.kind == wanted => {}
            _ => return Ok(()),
        }
        let key = format!("{index}:{ci}");
        let mut anomalies = Vec::new();
        if part_kind == "refusal" {
            self.refusal_key(key.clone());
        }
        let (rest, replaces) = self.settle(
            key.clone(),
            text,
            &format!("{part_kind} {key}"),
            &mut anomalies,
        );
        let mut leaf = Obj::new();
        if part_kind == "refusal" && replaces {
            leaf.put("refusal", Value::Str(self.whole_refusal()))
                .put("settled", Value::Bool(true));
        } else if part_kind == "refusal" {
            if !rest.is_empty() {
                leaf.put("refusal", Value::Str(rest));
            }
        } else if !rest.is_empty() || replaces {
            if wanted == "reasoning" {
                self.set_first_part(index, index * STRIDE + ci);
            }
            let part_name = if wanted == "message" {
                "text"
            } else {
                "reasoning"
            };
            let part = text_part(part_name, rest, index * STRIDE + ci);
            leaf.put("parts", list_value(vec![settled(part, replaces)]));
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    pub(super) fn refusal_delta(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let ci = Self::sub(event, "content_index", kind, CONTENT_LIMIT)?;
        let delta = Self::string(event, "delta", kind)?;
        let mut anomalies = Vec::new();
        let item_kind = self
            .item_at(index, kind, "message", &mut anomalies)
            .kind
            .clone();
        let mut leaf = Obj::new();
        if item_kind == "message" {
            self.refusal_key(format!("{index}:{ci}"));
            self.track(format!("{index}:{ci}"), delta);
            if !delta.is_empty() {
                leaf.put("refusal", str_value(delta));
            }
        } else {
            anomalies.push(mismatched(kind, index, &item_kind));
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    /// `reasoning_text.delta` (content) and `reasoning_summary_text.delta`.
    pub(super) fn reasoning_delta(
        &mut self,
        event: &Value,
        kind: &str,
        leaves: &mut Leaves,
    ) -> Res {
        let index = self.index(event, kind)?;
        let summary = kind == "response.reasoning_summary_text.delta";
        let sub = if summary {
            Self::sub(event, "summary_index", kind, SUMMARY_LIMIT)?
        } else {
            Self::sub(event, "content_index", kind, CONTENT_LIMIT)?
        };
        let delta = Self::string(event, "delta", kind)?;
        let mut anomalies = Vec::new();
        let item_kind = self
            .item_at(index, kind, "reasoning", &mut anomalies)
            .kind
            .clone();
        let mut leaf = Obj::new();
        if item_kind == "reasoning" {
            let streamed = if summary {
                Streamed::Summary
            } else {
                Streamed::Reasoning
            };
            let at = self.stream_text(index, sub, delta, streamed);
            if !delta.is_empty() {
                let part = if summary {
                    summary_part(delta.to_owned(), at)
                } else {
                    text_part("reasoning", delta.to_owned(), at)
                };
                leaf.put("parts", list_value(vec![part]));
            }
        } else {
            anomalies.push(mismatched(kind, index, &item_kind));
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    /// `reasoning_summary_text.done` and `reasoning_summary_part.done`.
    pub(super) fn summary_done(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let si = Self::sub(event, "summary_index", kind, SUMMARY_LIMIT)?;
        let text = if kind == "response.reasoning_summary_part.done" {
            let part = match get(event, "part") {
                Some(part @ Value::Dict(_)) => part,
                other => {
                    return Err(format!(
                        "{kind}: 'part' must be a dict, not {}",
                        type_name(other)
                    ))
                }
            };
            match get(part, "text") {
                Some(Value::Str(text)) => text.as_str(),
                other => {
                    return Err(format!(
                        "{kind}: 'part.text' must be a str, not {}",
                        type_name(other)
                    ))
                }
            }
        } else {
            Self::string(event, "text", kind)?
        };
        match self.items.get(&index) {
            Some(item) if !item.done && item.kind == "reasoning" => {}
            _ => return Ok(()),
        }
        let key = format!("{index}:summary:{si}");
        let mut anomalies = Vec::new();
        let (rest, replaces) = self.settle(
            key.clone(),
            text,
            &format!("reasoning summary {key}"),
            &mut anomalies,
        );
        let mut leaf = Obj::new();
        if !rest.is_empty() || replaces {
            let at = index * STRIDE + SUMMARY + si;
            self.set_first_part(index, at);
            leaf.put(
                "parts",
                list_value(vec![settled(summary_part(rest, at), replaces)]),
            );
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    /// `function_call_arguments.delta` and `custom_tool_call_input.delta`.
    pub(super) fn args_delta(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let delta = Self::string(event, "delta", kind)?;
        let wanted = if kind == "response.custom_tool_call_input.delta" {
            "custom_tool_call"
        } else {
            "function_call"
        };
        let mut anomalies = Vec::new();
        let item_kind = self
            .item_at(index, kind, wanted, &mut anomalies)
            .kind
            .clone();
        let mut leaf = Obj::new();
        if item_kind == wanted {
            self.track(index.to_string(), delta);
            if !delta.is_empty() {
                leaf.put(
                    "parts",
                    list_value(vec![args_part(index, delta.to_owned())]),
                );
            }
        } else {
            anomalies.push(mismatched(kind, index, &item_kind));
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    /// `function_call_arguments.done` and `custom_tool_call_input.done`.
    pub(super) fn args_done(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let custom = kind == "response.custom_tool_call_input.done";
        let key = if custom { "input" } else { "arguments" };
        let arguments = Self::string(event, key, kind)?;
        let wanted = if custom {
            "custom_tool_call"
        } else {
            "function_call"
        };
        let call_id = match self.items.get(&index) {
            Some(item) if !item.done && item.kind == wanted => item.call_id.clone(),
            _ => return Ok(()),
        };
        let mut anomalies = Vec::new();
        let what = format!("{wanted} {} {key}", repr_opt(&call_id));
        let (rest, replaces) = self.settle(index.to_string(), arguments, &what, &mut anomalies);
        let mut leaf = Obj::new();
        if !rest.is_empty() {
            leaf.put(
                "parts",
                list_value(vec![settled(args_part(index, rest), replaces)]),
            );
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    pub(super) fn annotation(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let ci = Self::sub(event, "content_index", kind, CONTENT_LIMIT)?;
        let annotation = match get(event, "annotation") {
            None | Some(Value::Null) => return Ok(()),
            Some(annotation) => annotation.clone(),
        };
        let mut anomalies = Vec::new();
        let item_kind = self
            .item_at(index, kind, "message", &mut anomalies)
            .kind
            .clone();
        let mut leaf = Obj::new();
        if item_kind == "message" {
            self.cited.insert(format!("{index}:{ci}"));
            let mut part = Obj::new();
            part.put("part", str_value("text"))
                .put("text", str_value(""))
                .put("citations", list_value(vec![annotation]))
                .put("index", Value::Int(index * STRIDE + ci));
            leaf.put("parts", list_value(vec![part.build()]));
        } else {
            anomalies.push(mismatched(kind, index, &item_kind));
        }
        with_anomalies(&mut leaf, anomalies);
        leaves.push((0, leaf.build()));
        Ok(())
    }
}
