//! One entry of a chunk's `choices` read into its leaf, step by step in the twin's order
//! (`_choice`): the delta's reasoning, content, calls and listed extras, then the choice's
//! own fields, then what no step knows, kept as provider metadata.

use super::delta::{content_list, details_parts, tool_call};
use super::{
    absent, delta, dict, list_value, others, present, str_value, text_field, text_of, unknown,
    without_null_members, Adapter, At, Choice, Map, Obj, Top, Value, CHOICE_KNOWN, DELTA_KNOWN,
    LISTED, REASONING_FIELD,
};

impl Adapter {
    /// Choice `i` of the event (a dict, checked by the caller) -> its index and leaf.
    pub(super) fn choice(
        &mut self,
        top: &Top,
        i: usize,
        choice: &Value,
    ) -> Result<(i64, Value), String> {
        let at = At {
            choice: i,
            item: None,
        };
        let Value::Dict(choice) = choice else {
            return Err(format!("{at} is not an object"));
        };
        let index = match choice.get("index") {
            None => 0,
            Some(Value::Int(index)) => *index,
            Some(_) => return Err(format!("{at}.index is not an integer")),
        };
        let empty = Map::default();
        let delta_map: &Map = match choice.get("delta") {
            None | Some(Value::Null) => &empty,
            Some(Value::Dict(map)) => map,
            Some(_) => return Err(format!("{at}.delta is not an object")),
        };
        let state = self.choices.entry(index).or_default();
        let mut leaf = Obj::new();
        let mut parts: Vec<Value> = Vec::new();
        let mut anomalies: Vec<Value> = Vec::new();
        let mut pm = Map::default();

        if let Some(role) = text_field(delta_map.get("role"), format_args!("{at}.delta.role"))? {
            leaf.put("role", role.clone());
        }
        let content = present(delta_map.get("content"));
        if matches!(content, Some(Value::List(_))) {
            leaf.put("content_list", Value::Bool(true));
        }
        reasoning_parts(at, delta_map, state, &mut parts, &mut pm)?;
        content_parts(at, content, delta_map, state, &mut parts)?;
        call_parts(at, index, delta_map, state, &mut parts, &mut anomalies)?;
        extra_parts(at, delta_map, &mut parts)?;
        if !parts.is_empty() {
            leaf.put("parts", list_value(parts));
        }
        put_choice_fields(at, choice, delta_map, state, &mut leaf)?;
        unknown_fields(choice, delta_map, &mut pm);
        Self::put_top(&mut leaf, top, pm, Some(state));
        if !anomalies.is_empty() {
            leaf.put("anomalies", list_value(anomalies));
        }
        Ok((index, leaf.build()))
    }
}

/// Reasoning: the plain fields, unless `reasoning_details` carries the same text; then the
/// details' own parts.
fn reasoning_parts(
    at: At,
    delta_map: &Map,
    state: &mut Choice,
    parts: &mut Vec<Value>,
    pm: &mut Map,
) -> Result<(), String> {
    let details: &[Value] = match present(delta_map.get("reasoning_details")) {
        None => &[],
        Some(Value::List(items)) => items,
        Some(_) => return Err(format!("{at}.delta.reasoning_details is not a list")),
    };
    let mut plain: &str = "";
    for key in ["reasoning_content", "reasoning"] {
        match present(delta_map.get(key)) {
            None => {}
            Some(Value::Str(text)) if !text.is_empty() && plain.is_empty() => {
                plain = text;
                // the field's name (the first one sent), for a replay under that name
                // (§9.1)
                if state.top[REASONING_FIELD].is_none() {
                    pm.insert("reasoning_field".to_owned(), str_value(key));
                }
            }
            Some(Value::Str(_)) => {}
            Some(_) => return Err(format!("{at}.delta.{key} is not a string")),
        }
    }
    let mut detail_text = false;
    for (j, entry) in details.iter().enumerate() {
        let Value::Dict(entry) = entry else {
            return Err(format!(
                "{at}.delta.reasoning_details[{j}] is not an object"
            ));
        };
        if !text_of(entry.get("text")).is_empty() || !text_of(entry.get("summary")).is_empty() {
            detail_text = true;
        }
    }
    if !plain.is_empty() && !detail_text {
        parts.push(delta("reasoning", plain));
        state.open_call = None;
    }
    if !details.is_empty() {
        details_parts(details, parts, pm);
    }
    Ok(())
}

/// Content (a string, or Mistral's typed chunks), then the delta's annotations as citations
/// of an empty text part.
fn content_parts(
    at: At,
    content: Option<&Value>,
    delta_map: &Map,
    state: &mut Choice,
    parts: &mut Vec<Value>,
) -> Result<(), String> {
    match content {
        None => {}
        Some(Value::Str(text)) if !text.is_empty() => {
            parts.push(delta("text", text));
            state.open_call = None;
        }
        Some(Value::Str(_)) => {}
        Some(Value::List(items)) => {
            let texted = content_list(at.choice, items, parts)?;
            if texted {
                state.open_call = None;
            }
        }
        Some(_) => return Err(format!("{at}.delta.content is not a string or a list")),
    }
    match present(delta_map.get("annotations")) {
        None => {}
        Some(Value::List(items)) if !items.is_empty() => {
            let mut part = Obj::new();
            part.put("part", str_value("text"))
                .put("text", str_value(""))
                .put("citations", Value::List(items.clone()));
            parts.push(part.build());
        }
        Some(Value::List(_)) => {}
        Some(_) => return Err(format!("{at}.delta.annotations is not a list")),
    }
    Ok(())
}

/// The `tool_calls` entries, then the deprecated single `function_call` (provider_index -1).
fn call_parts(
    at: At,
    index: i64,
    delta_map: &Map,
    state: &mut Choice,
    parts: &mut Vec<Value>,
    anomalies: &mut Vec<Value>,
) -> Result<(), String> {
    match present(delta_map.get("tool_calls")) {
        None => {}
        Some(Value::List(calls)) => {
            for (j, call) in calls.iter().enumerate() {
                let here = At {
                    choice: at.choice,
                    item: Some(("tool_calls", j)),
                };
                parts.push(tool_call(here, index, state, call, anomalies)?);
            }
        }
        Some(_) => return Err(format!("{at}.delta.tool_calls is not a list")),
    }
    match present(delta_map.get("function_call")) {
        None => {}
        Some(Value::Dict(legacy)) => {
            let name = legacy.get("name");
            text_field(name, format_args!("{at}.delta.function_call.name"))?;
            match present(legacy.get("arguments")) {
                None | Some(Value::Str(_) | Value::Dict(_)) => {}
                Some(_) => {
                    return Err(format!(
                        "{at}.delta.function_call.arguments is not a string or an object"
                    ))
                }
            }
            let mut call = Map::default();
            call.insert("index".to_owned(), Value::Int(-1));
            call.insert("function".to_owned(), Value::Dict(legacy.clone()));
            parts.push(tool_call(at, index, state, &dict(call), anomalies)?);
        }
        Some(_) => return Err(format!("{at}.delta.function_call is not an object")),
    }
    Ok(())
}

/// Audio pieces, executed tools and the [`LISTED`] lists, each entry an unknown part kept
/// verbatim.
fn extra_parts(at: At, delta_map: &Map, parts: &mut Vec<Value>) -> Result<(), String> {
    // audio output: pieces of data and transcript, verbatim
    if let Some(audio) = present(delta_map.get("audio")) {
        parts.push(unknown("audio", &without_null_members(audio)));
    }
    match present(delta_map.get("executed_tools")) {
        None => {}
        Some(Value::List(tools)) => {
            for tool in tools.iter() {
                parts.push(unknown("executed_tools", tool));
            }
        }
        Some(_) => return Err(format!("{at}.delta.executed_tools is not a list")),
    }
    for key in LISTED {
        if let Some(Value::List(entries)) = present(delta_map.get(*key)) {
            for entry in entries.iter() {
                parts.push(unknown(key, entry));
            }
        }
    }
    Ok(())
}

/// The refusal, logprobs, token ids and finish reason of the choice.
fn put_choice_fields(
    at: At,
    choice: &Map,
    delta_map: &Map,
    state: &mut Choice,
    leaf: &mut Obj,
) -> Result<(), String> {
    match present(delta_map.get("refusal")) {
        None => {}
        Some(Value::Str(text)) if !text.is_empty() => {
            leaf.put("refusal", str_value(text));
        }
        Some(Value::Str(_)) => {}
        Some(_) => return Err(format!("{at}.delta.refusal is not a string")),
    }
    if let Some(logprobs) = present(choice.get("logprobs")) {
        leaf.put("logprobs", without_null_members(logprobs));
    }
    let ids: &[Value] = match present(choice.get("token_ids")) {
        None => &[],
        Some(Value::List(items)) => items,
        Some(_) => return Err(format!("{at}.token_ids is not a list")),
    };
    if !ids.is_empty() {
        if let Some(value) = choice.get("token_ids") {
            leaf.put("completion_token_ids", value.clone());
        }
    } else if let Some(Value::Int(token)) = delta_map.get("token_id") {
        leaf.put("completion_token_ids", list_value(vec![Value::Int(*token)]));
    }
    let finish = choice.get("finish_reason");
    if let Some(finish) = text_field(finish, format_args!("{at}.finish_reason"))? {
        leaf.put("finish_reason", finish.clone());
        if !absent(finish) {
            leaf.put("status", str_value("complete"));
            state.finished = true;
        }
    }
    Ok(())
}

/// The choice's and the delta's fields no step reads, kept under `choice` and `message`.
fn unknown_fields(choice: &Map, delta_map: &Map, pm: &mut Map) {
    let extra = others(choice, CHOICE_KNOWN);
    if !extra.is_empty() {
        pm.insert("choice".to_owned(), dict(extra));
    }
    // (a listed field that is no list, or an empty one, stays a field of the message)
    let extra: Map = others(delta_map, DELTA_KNOWN)
        .into_iter()
        .filter(|(k, v)| {
            !(LISTED.contains(&k.as_str()) && matches!(v, Value::List(items) if !items.is_empty()))
        })
        .collect();
    if !extra.is_empty() {
        pm.insert("message".to_owned(), dict(extra));
    }
}
