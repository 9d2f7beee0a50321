//! The parts of a choice's delta that take more than a field read: OpenRouter's
//! `reasoning_details` entries, Mistral's typed content chunks, and `tool_calls` entries as
//! tool-call fragments (the fold resolves which call each continues).

use super::*;

/// OpenRouter's `reasoning_details` entries -> reasoning deltas by entry index.
pub(super) fn details_parts(details: &[Value], parts: &mut Vec<Value>, pm: &mut Map) {
    let mut metas = Map::default();
    for entry in details {
        let Value::Dict(map) = entry else {
            continue; // checked by the caller
        };
        let kind = match map.get("type") {
            Some(Value::Str(kind)) if DETAIL_TYPES.contains(&kind.as_str()) => kind.as_str(),
            _ => {
                parts.push(unknown("reasoning_details", entry));
                continue;
            }
        };
        let index = match map.get("index") {
            Some(Value::Int(index)) => Some(*index),
            _ => None,
        };
        let text = text_of(map.get("text"));
        let mut part = Obj::new();
        part.put("part", str_value("reasoning"))
            .put("text", str_value(text));
        if let Some(index) = index {
            part.put("index", Value::Int(index));
        }
        let summary = text_of(map.get("summary"));
        if !summary.is_empty() {
            part.put("summary", str_value(summary));
        }
        let mut opaque = text_of(map.get("signature"));
        if opaque.is_empty() {
            opaque = text_of(map.get("data"));
        }
        if !opaque.is_empty() {
            let mut payload = Obj::new();
            payload
                .put("provider", str_value(NAME))
                .put("kind", str_value(kind))
                .put("data", str_value(opaque));
            part.put("payload", payload.build());
        }
        if !text.is_empty() || !summary.is_empty() || !opaque.is_empty() {
            parts.push(part.build());
        }
        if let Some(index) = index {
            let meta: Map = map
                .iter()
                .filter(|(k, v)| {
                    !DETAIL_OPAQUE.contains(&k.as_str())
                        && !matches!(v, Value::Null)
                        && !is_empty_str(v)
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !meta.is_empty() {
                metas.insert(index.to_string(), dict(meta));
            }
        }
    }
    if !metas.is_empty() {
        pm.insert("reasoning_details".to_owned(), dict(metas));
    }
}

/// Mistral's typed content chunks, in order; true if one carried text.
pub(super) fn content_list(
    choice: usize,
    content: &[Value],
    parts: &mut Vec<Value>,
) -> Result<bool, String> {
    let mut texted = false;
    for (j, item) in content.iter().enumerate() {
        let here = At {
            choice,
            item: Some(("content", j)),
        };
        let map = match item {
            Value::Str(text) => {
                if !text.is_empty() {
                    parts.push(delta("text", text));
                    texted = true;
                }
                continue;
            }
            Value::Dict(map) => map,
            _ => return Err(format!("{here} is not an object or a string")),
        };
        match map.get("type") {
            Some(Value::Str(kind)) if kind == "text" => match present(map.get("text")) {
                None => {}
                Some(Value::Str(text)) if !text.is_empty() => {
                    parts.push(delta("text", text));
                    texted = true;
                }
                Some(Value::Str(_)) => {}
                Some(_) => return Err(format!("{here}.text is not a string")),
            },
            Some(Value::Str(kind)) if kind == "thinking" => match present(map.get("thinking")) {
                None => {}
                Some(Value::Str(text)) if !text.is_empty() => {
                    parts.push(delta("reasoning", text));
                    texted = true;
                }
                Some(Value::Str(_)) => {}
                Some(Value::List(inner)) => {
                    for (k, item) in inner.iter().enumerate() {
                        let Value::Dict(fields) = item else {
                            return Err(format!("{here}.thinking[{k}] is not an object"));
                        };
                        match (fields.get("type"), fields.get("text")) {
                            (Some(Value::Str(kind)), Some(Value::Str(text))) if kind == "text" => {
                                if !text.is_empty() {
                                    parts.push(delta("reasoning", text));
                                    texted = true;
                                }
                            }
                            _ => parts.push(unknown("thinking", item)),
                        }
                    }
                }
                Some(_) => return Err(format!("{here}.thinking is not a list")),
            },
            Some(Value::Str(kind)) => parts.push(unknown(kind, item)),
            _ => parts.push(unknown("content", item)),
        }
    }
    Ok(texted)
}

/// One `tool_calls` entry -> a tool-call fragment (the fold resolves it).
pub(super) fn tool_call(
    at: At,
    choice: i64,
    state: &mut Choice,
    call: &Value,
    anomalies: &mut Vec<Value>,
) -> Result<Value, String> {
    let Value::Dict(map) = call else {
        return Err(format!("{at} is not an object"));
    };
    let mut part = Obj::new();
    part.put("part", str_value("tool_call"));
    let index = match present(map.get("index")) {
        None => None,
        Some(Value::Int(index)) => Some(*index),
        Some(_) => return Err(format!("{at}.index is not an integer")),
    };
    if let Some(index) = index {
        part.put("provider_index", Value::Int(index));
    }
    for key in ["id", "type"] {
        text_field(map.get(key), format_args!("{at}.{key}"))?;
    }
    let call_id = present(map.get("id"));
    if let Some(id) = call_id {
        part.put("id", id.clone());
    }
    // a custom body without a type (and no function body) is a custom call (E83)
    let custom = present(map.get("function")).is_none() && present(map.get("custom")).is_some();
    match present(map.get("type")) {
        Some(kind) => {
            part.put("type", kind.clone());
        }
        None if custom => {
            part.put("type", str_value("custom"));
        }
        None => {}
    }
    let mut name: Option<&Value> = None;
    let mut arguments: Option<&Value> = None;
    for (key, field) in [("function", "arguments"), ("custom", "input")] {
        let body = match present(map.get(key)) {
            None => continue,
            Some(Value::Dict(body)) => body,
            Some(_) => return Err(format!("{at}.{key} is not an object")),
        };
        if let Some(value) = text_field(body.get("name"), format_args!("{at}.{key}.name"))? {
            name = Some(value);
        }
        match present(body.get(field)) {
            None => {}
            Some(value @ (Value::Str(_) | Value::Dict(_))) => arguments = Some(value),
            Some(_) => return Err(format!("{at}.{key}.{field} is not a string or an object")),
        }
    }
    if let Some(name) = name {
        part.put("name", name.clone());
    }
    if let Some(arguments) = arguments {
        part.put("arguments", arguments.clone());
    }
    let extra = others(map, CALL_KNOWN);
    if !extra.is_empty() {
        part.put("extra", dict(extra));
    }

    // what the adapter knows of the call at this index (for anomalies and truncation)
    let new_id = match call_id {
        Some(Value::Str(text)) if !is_absent_text(text) => Some(text.clone()),
        _ => None,
    };
    let new_name = match name {
        Some(Value::Str(text)) if !is_absent_text(text) => Some(text.clone()),
        _ => None,
    };
    let Some(index) = index else {
        if new_id.is_some() || new_name.is_some() || state.open_call.is_none() {
            state.open_call = Some((new_id, new_name));
        }
        return Ok(part.build());
    };
    // the fold resolves a fragment with an index to the call at that index, or to a new call
    // there, except by a known id without a name (another call, which may take this index if
    // it had none); only an id or a name can put another call at the index
    let typed = matches!(present(map.get("type")), Some(Value::Str(kind)) if !is_absent_text(kind));
    match (typed, new_id.is_some(), new_name.is_some()) {
        (true, true, false) => {}
        (true, _, _) => {
            state.typed_calls.insert(index);
        }
        (false, false, false) => {}
        (false, _, _) => {
            state.typed_calls.remove(&index);
        }
    }
    let known = state.calls.get(&index).cloned();
    let identity = match known {
        None => {
            if new_id.is_none() && new_name.is_none() && arguments.is_some_and(truthy) {
                anomalies.push(anomaly(
                    "delta_before_start",
                    format!(
                        "choice {choice}: tool call index {index}: arguments before the call's \
                         id and name"
                    ),
                ));
            }
            let identity = (new_id, new_name);
            state.calls.insert(index, identity.clone());
            identity
        }
        Some(old) => {
            let collides =
                new_id.is_some() && new_name.is_some() && old.0.is_some() && old.0 != new_id;
            if collides {
                anomalies.push(anomaly(
                    "index_collision",
                    format!(
                        "choice {choice}: tool call index {index} reused: call {} after {}",
                        repr_opt(&new_id),
                        repr_opt(&old.0)
                    ),
                ));
                let identity = (new_id, new_name);
                state.calls.insert(index, identity.clone());
                identity
            } else {
                let mut identity = old;
                if identity.0.is_none() && new_id.is_some() {
                    identity.0 = new_id;
                }
                if identity.1.is_none() && new_name.is_some() {
                    identity.1 = new_name;
                }
                state.calls.insert(index, identity.clone());
                identity
            }
        }
    };
    state.open_call = Some(identity);
    Ok(part.build())
}
