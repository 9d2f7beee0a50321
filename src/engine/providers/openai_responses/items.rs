//! The Responses adapter on output items: an item added, a call item's tool-call part, an item
//! as finally reported (`output_item.done` or the terminal response), its message and
//! reasoning content settled against what was streamed.

use crate::engine::providers::common::{
    anomaly, get, get_str, list_value, str_value, text_field, Leaves, Obj,
};
use crate::engine::value::{py_repr, Value};

use super::*;

impl Adapter {
    // -- items

    pub(super) fn added(&mut self, event: &Value, kind: &str, leaves: &mut Leaves) -> Res {
        let index = self.index(event, kind)?;
        let item = match get(event, "item") {
            Some(item @ Value::Dict(_)) => item,
            other => {
                return Err(format!(
                    "{kind}: 'item' must be a dict, not {}",
                    type_name(other)
                ))
            }
        };
        let item_kind = match get(item, "type") {
            Some(Value::Str(k)) => k.as_str(),
            other => {
                return Err(format!(
                    "{kind}: 'item.type' must be a str, not {}",
                    type_name(other)
                ))
            }
        };
        let item_id = get(item, "id");
        let item_id_str = match item_id {
            Some(Value::Str(id)) => Some(id.clone()),
            _ => None,
        };
        let mut anomalies = Vec::new();
        let state = self
            .items
            .entry(index)
            .or_insert_with(|| Item::new(item_kind));
        let same_id = match (&state.item_id, item_id) {
            (None, None | Some(Value::Null)) => true,
            (Some(known), Some(Value::Str(id))) => known == id,
            _ => false,
        };
        if state.added && (state.kind != item_kind || !same_id) {
            anomalies.push(anomaly(
                "index_collision",
                format!(
                    "output_index {index}: {item_kind} {} added over {} {}",
                    py_repr(item_id.unwrap_or(&Value::Null)),
                    state.kind,
                    repr_opt(&state.item_id)
                ),
            ));
        } else if state.kind != item_kind {
            anomalies.push(anomaly(
                "kind_change",
                format!(
                    "output_index {index}: {item_kind} item after {} deltas",
                    state.kind
                ),
            ));
        }
        state.kind = item_kind.to_owned();
        state.added = true;
        if let Some(id) = &item_id_str {
            state.item_id = Some(id.clone());
            self.ids.insert(id.clone(), index);
        }
        let mut leaf = Obj::new();
        if call_key(item_kind).is_some() {
            let part = self.call_part(index, item, item_kind, kind, &mut anomalies, false)?;
            leaf.put("parts", list_value(vec![part]));
        } else if !is_modeled(item_kind) {
            if let Some(state) = self.items.get_mut(&index) {
                state.raw = Some(item.clone());
            }
        }
        if let Value::Dict(fields) = item {
            if let Some(env) = envelope(fields) {
                leaf.put("provider_metadata", envelope_at(index, env));
            }
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    /// A call item's tool-call part: identity once, arguments (settled when `done`).
    pub(super) fn call_part(
        &mut self,
        index: i64,
        item: &Value,
        item_kind: &str,
        kind: &str,
        anomalies: &mut Vec<Value>,
        done: bool,
    ) -> Result<Value, String> {
        let mut part = Obj::new();
        part.put("part", str_value("tool_call"));
        let given_id = text_field(get(item, "call_id"), format_args!("{kind}.item.call_id"))?;
        let name = text_field(get(item, "name"), format_args!("{kind}.item.name"))?;
        let call_id = {
            let Some(state) = self.items.get_mut(&index) else {
                return Err(format!("{kind}: no item at output_index {index}"));
            };
            if state.call_id.is_none() {
                if let Some(Value::Str(call_id)) = given_id {
                    state.call_id = Some(call_id.clone());
                    part.put("id", str_value(call_id));
                    part.put_opt("name", name.cloned());
                    if item_kind == "custom_tool_call" {
                        part.put("type", str_value("custom"));
                    }
                }
            }
            state.call_id.clone()
        };
        let key = call_key(item_kind).unwrap_or("arguments");
        let arguments = match get(item, key) {
            None | Some(Value::Null) => "",
            Some(Value::Str(text)) => text.as_str(),
            other => {
                return Err(format!(
                    "{kind}: 'item.{key}' must be a str, not {}",
                    type_name(other)
                ))
            }
        };
        if !arguments.is_empty() {
            let (rest, replaces) = if done {
                let what = format!("{item_kind} {} {key}", repr_opt(&call_id));
                self.settle(index.to_string(), arguments, &what, anomalies)
            } else {
                self.track(index.to_string(), arguments);
                (arguments.to_owned(), false)
            };
            if !rest.is_empty() {
                part.put("arguments", Value::Str(rest));
            }
            if replaces {
                part.put("settled", Value::Bool(true));
            }
        }
        part.put("provider_index", Value::Int(index));
        if let Some(item_id) = get_str(item, "id") {
            part.put("response_item_id", str_value(item_id));
        }
        Ok(part.build())
    }

    pub(super) fn item_done_event(
        &mut self,
        event: &Value,
        kind: &str,
        leaves: &mut Leaves,
    ) -> Res {
        let index = self.index(event, kind)?;
        match get(event, "item") {
            Some(item @ Value::Dict(_)) => self.item_done(index, item, kind, leaves),
            other => Err(format!(
                "{kind}: 'item' must be a dict, not {}",
                type_name(other)
            )),
        }
    }

    /// An item as finally reported (`output_item.done` or the terminal response).
    pub(super) fn item_done(
        &mut self,
        index: i64,
        item: &Value,
        kind: &str,
        leaves: &mut Leaves,
    ) -> Res {
        let item_kind = match get(item, "type") {
            Some(Value::Str(k)) => k.as_str(),
            other => {
                return Err(format!(
                    "{kind}: 'item.type' must be a str, not {}",
                    type_name(other)
                ))
            }
        };
        let mut anomalies = Vec::new();
        let state = self
            .items
            .entry(index)
            .or_insert_with(|| Item::new(item_kind));
        if state.kind != item_kind {
            anomalies.push(anomaly(
                "kind_change",
                format!(
                    "output_index {index}: {item_kind} item done after {}",
                    state.kind
                ),
            ));
            state.kind = item_kind.to_owned();
        }
        state.done = true;
        if let Some(item_id) = get_str(item, "id") {
            if state.item_id.is_none() {
                state.item_id = Some(item_id.to_owned());
            }
            self.ids.insert(item_id.to_owned(), index);
        }
        let mut parts = Vec::new();
        let mut refusal = String::new();
        let mut refusal_replaces = false;
        match item_kind {
            "message" => {
                refusal_replaces =
                    self.message_done(index, item, kind, &mut parts, &mut refusal, &mut anomalies)?
            }
            "reasoning" => self.reasoning_done(index, item, kind, &mut parts, &mut anomalies)?,
            _ if call_key(item_kind).is_some() => {
                parts.push(self.call_part(index, item, item_kind, kind, &mut anomalies, true)?)
            }
            _ => parts.push(unknown(item, str_value(item_kind), index * STRIDE + ITEM)),
        }
        let mut leaf = Obj::new();
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        if refusal_replaces {
            // the done refusal replaces the streamed one: the whole refusal, as now known
            leaf.put("refusal", Value::Str(self.whole_refusal()))
                .put("settled", Value::Bool(true));
        } else if !refusal.is_empty() {
            leaf.put("refusal", Value::Str(refusal));
        }
        if let Value::Dict(fields) = item {
            if let Some(env) = envelope(fields) {
                leaf.put("provider_metadata", envelope_at(index, env));
            }
        }
        emit(leaves, leaf, anomalies);
        Ok(())
    }

    pub(super) fn message_done(
        &mut self,
        index: i64,
        item: &Value,
        kind: &str,
        parts: &mut Vec<Value>,
        refusal: &mut String,
        anomalies: &mut Vec<Value>,
    ) -> Result<bool, String> {
        let mut replaced = false;
        for (ci, entry) in list_of(item, "content", kind, CONTENT_LIMIT)?
            .iter()
            .enumerate()
        {
            let key = format!("{index}:{ci}");
            let at = index * STRIDE + ci as i64;
            let entry_kind = match entry {
                Value::Dict(_) => get(entry, "type"),
                _ => None,
            };
            match (entry, entry_kind) {
                (Value::Dict(fields), Some(Value::Str(k))) if k == "output_text" => {
                    let text = match fields.get("text") {
                        Some(Value::Str(text)) => text.as_str(),
                        other => {
                            return Err(format!(
                                "{kind}: 'item.content[{ci}].text' must be a str, not {}",
                                type_name(other)
                            ))
                        }
                    };
                    let (rest, replaces) =
                        self.settle(key.clone(), text, &format!("output_text {key}"), anomalies);
                    let mut part = Obj::new();
                    part.put("part", str_value("text"))
                        .put("text", Value::Str(rest));
                    let annotations = fields.get("annotations");
                    if truthy_list(annotations) && !self.cited.contains(&key) {
                        if let Some(annotations) = annotations {
                            // once: the terminal response repeats the item
                            self.cited.insert(key.clone());
                            part.put("citations", annotations.clone());
                        }
                    }
                    let mut attributes = Obj::new();
                    for (k, v) in fields.iter() {
                        if k != "text" {
                            attributes.put(k, v.clone());
                        }
                    }
                    part.put("attributes", attributes.build())
                        .put("index", Value::Int(at));
                    parts.push(settled(part.build(), replaces));
                }
                (Value::Dict(fields), Some(Value::Str(k))) if k == "refusal" => {
                    let text = match fields.get("refusal") {
                        Some(Value::Str(text)) => text.as_str(),
                        other => {
                            return Err(format!(
                                "{kind}: 'item.content[{ci}].refusal' must be a str, not {}",
                                type_name(other)
                            ))
                        }
                    };
                    self.refusal_key(key.clone());
                    let (rest, replaces) =
                        self.settle(key.clone(), text, &format!("refusal {key}"), anomalies);
                    if replaces {
                        replaced = true;
                    } else {
                        refusal.push_str(&rest);
                    }
                }
                (Value::Dict(_), _) => {
                    parts.push(unknown(
                        entry,
                        entry_kind.cloned().unwrap_or(Value::Null),
                        at,
                    ));
                }
                _ => {
                    return Err(format!(
                        "{kind}: 'item.content[{ci}]' must be a dict, not {}",
                        type_name(Some(entry))
                    ))
                }
            }
        }
        Ok(replaced)
    }

    pub(super) fn set_first_part(&mut self, index: i64, at: i64) {
        if let Some(state) = self.items.get_mut(&index) {
            if state.first_part.is_none() {
                state.first_part = Some(at);
            }
        }
    }

    pub(super) fn reasoning_done(
        &mut self,
        index: i64,
        item: &Value,
        kind: &str,
        parts: &mut Vec<Value>,
        anomalies: &mut Vec<Value>,
    ) -> Res {
        for (si, entry) in list_of(item, "summary", kind, SUMMARY_LIMIT)?
            .iter()
            .enumerate()
        {
            if !matches!(entry, Value::Dict(_)) {
                return Err(format!(
                    "{kind}: 'item.summary[{si}]' must be a dict, not {}",
                    type_name(Some(entry))
                ));
            }
            let text = match get(entry, "text") {
                Some(Value::Str(text)) => text.as_str(),
                other => {
                    return Err(format!(
                        "{kind}: 'item.summary[{si}].text' must be a str, not {}",
                        type_name(other)
                    ))
                }
            };
            let key = format!("{index}:summary:{si}");
            let (rest, replaces) = self.settle(
                key.clone(),
                text,
                &format!("reasoning summary {key}"),
                anomalies,
            );
            if !rest.is_empty() || replaces {
                let at = index * STRIDE + SUMMARY + si as i64;
                self.set_first_part(index, at);
                parts.push(settled(summary_part(rest, at), replaces));
            }
        }
        for (ci, entry) in list_of(item, "content", kind, CONTENT_LIMIT)?
            .iter()
            .enumerate()
        {
            let at = index * STRIDE + ci as i64;
            if !matches!(entry, Value::Dict(_)) {
                return Err(format!(
                    "{kind}: 'item.content[{ci}]' must be a dict, not {}",
                    type_name(Some(entry))
                ));
            }
            let key = format!("{index}:{ci}");
            let entry_kind = get(entry, "type");
            if !matches!(entry_kind, Some(Value::Str(k)) if k == "reasoning_text") {
                parts.push(unknown(
                    entry,
                    entry_kind.cloned().unwrap_or(Value::Null),
                    at,
                ));
                continue;
            }
            let text = match get(entry, "text") {
                Some(Value::Str(text)) => text.as_str(),
                other => {
                    return Err(format!(
                        "{kind}: 'item.content[{ci}].text' must be a str, not {}",
                        type_name(other)
                    ))
                }
            };
            let (rest, replaces) = self.settle(
                key.clone(),
                text,
                &format!("reasoning_text {key}"),
                anomalies,
            );
            if !rest.is_empty() || replaces {
                self.set_first_part(index, at);
                parts.push(settled(text_part("reasoning", rest, at), replaces));
            }
        }
        let encrypted = match get(item, "encrypted_content") {
            None | Some(Value::Null) => None,
            Some(Value::Str(text)) => Some(text),
            other => {
                return Err(format!(
                    "{kind}: 'item.encrypted_content' must be a str, not {}",
                    type_name(other)
                ))
            }
        };
        if let Some(encrypted) = encrypted.filter(|e| !e.is_empty()) {
            self.set_first_part(index, index * STRIDE + ITEM);
            let first = self
                .items
                .get(&index)
                .and_then(|state| state.first_part)
                .unwrap_or(index * STRIDE + ITEM);
            let mut payload = Obj::new();
            payload
                .put("provider", str_value(NAME))
                .put("kind", str_value("encrypted_content"))
                .put("data", str_value(encrypted));
            let mut part = Obj::new();
            part.put("part", str_value("reasoning"))
                .put("text", str_value(""))
                .put("payload", payload.build())
                .put("index", Value::Int(first));
            parts.push(part.build());
        }
        Ok(())
    }
}
