//! Reading a state back as plain data (the twin's `_materialize`, `_finish_usage`,
//! `_content`): fresh containers, keys in the twin's order.

use crate::engine::error::EngineError;
use crate::engine::host::{Host, Kind};

use super::map::{own, HMap, Val};
use super::state::{
    detail, Anomaly, Call, ContentKind, Part, PartFields, PartKind, PayloadState, Piece, State,
};
use super::usage::counts_total;
use super::{normalized_finish_reason, Family};

/// Dict entries under construction.
struct Out<'h, H: Host> {
    host: &'h H,
    pairs: Vec<(H::Obj, H::Obj)>,
}

impl<'h, H: Host> Out<'h, H> {
    fn new(host: &'h H) -> Self {
        Out {
            host,
            pairs: Vec::with_capacity(24),
        }
    }
    fn put(&mut self, key: &str, value: H::Obj) {
        self.pairs.push((self.host.str_obj(key), value));
    }
    fn finish(self) -> Result<H::Obj, H::Err> {
        self.host.new_dict(self.pairs)
    }
}

fn or_none<H: Host>(host: &H, value: &Option<H::Obj>) -> H::Obj {
    value.clone().unwrap_or_else(|| host.none())
}

fn thaw_opt<H: Host>(host: &H, value: &Option<Val<H::Obj>>) -> Result<H::Obj, H::Err> {
    match value {
        Some(v) => v.thaw(host),
        None => Ok(host.none()),
    }
}

fn thaw_map<H: Host>(host: &H, map: &HMap<H::Obj, Val<H::Obj>>) -> Result<H::Obj, H::Err> {
    let mut pairs = Vec::with_capacity(map.len());
    for (key, value) in map.iter() {
        pairs.push((key.clone(), value.thaw(host)?));
    }
    host.new_dict(pairs)
}

fn thaw_payload<H: Host>(
    host: &H,
    payload: &Option<PayloadState<H::Obj>>,
) -> Result<H::Obj, H::Err> {
    let Some(payload) = payload else {
        return Ok(host.none());
    };
    let mut pairs = Vec::new();
    for (key, value) in host.dict_items(&payload.base)? {
        pairs.push((key, own(host, &value)?));
    }
    if let Some(data) = &payload.data {
        pairs.push((host.str_obj("data"), data.clone()));
    }
    host.new_dict(pairs)
}

/// The folded fields as plain data; `finish` applies the end-of-stream rules (synthetic ids
/// [E37], a computed or checked usage total [E57]).
pub fn materialize<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    finish: bool,
) -> Result<H::Obj, H::Err> {
    let mut data = Out::new(host);
    put_head(host, state, &mut data)?;
    if state.family != Family::Assistant {
        put_plain_content(host, state, &mut data)?;
        return data.finish();
    }
    let mut anomalies = given_anomalies(host, state)?;
    let parts = parts_list(host, state, finish, &mut anomalies)?;
    data.put("parts", parts);
    data.put("content_list", bool_obj(host, state.content_list));
    let usage = match &state.usage {
        Some(map) => {
            let usage = thaw_map(host, map)?;
            if finish {
                return_usage(host, state, usage, &mut anomalies)?
            } else {
                usage
            }
        }
        None => host.none(),
    };
    data.put("usage", usage);
    put_finish_reason(host, state, &mut data)?;
    put_response_fields(host, state, &mut data)?;
    data.put("anomalies", host.new_list(anomalies)?);
    data.put("choice_index", or_none(host, &state.choice_index));
    data.finish()
}

/// The fields every family has: family, role, name, metadata.
fn put_head<H: Host>(host: &H, state: &State<H::Obj>, data: &mut Out<'_, H>) -> Result<(), H::Err> {
    data.put("family", state.family_obj.clone());
    data.put("role", or_none(host, &state.role));
    data.put("name", state.name.clone());
    data.put(
        "metadata",
        match &state.metadata {
            Some(v) => v.thaw(host)?,
            None => host.new_dict(Vec::new())?,
        },
    );
    Ok(())
}

/// A non-assistant message's content (and a tool message's call id).
fn put_plain_content<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    data: &mut Out<'_, H>,
) -> Result<(), H::Err> {
    let content = match state.content_kind {
        ContentKind::Str => host.join(&state.content_pieces)?,
        ContentKind::List => host.new_list(state.content_pieces.clone())?,
        ContentKind::Other => or_none(host, &state.content),
        ContentKind::None => host.str_obj(""),
    };
    data.put("content", content);
    if state.family == Family::Tool {
        data.put("tool_call_id", or_none(host, &state.tool_call_id));
    }
    Ok(())
}

/// The anomalies recorded while folding, as dicts.
fn given_anomalies<H: Host>(host: &H, state: &State<H::Obj>) -> Result<Vec<H::Obj>, H::Err> {
    let mut anomalies = Vec::with_capacity(state.anomalies.len());
    for anomaly in &state.anomalies {
        anomalies.push(match anomaly {
            Anomaly::Given(obj) => host.dict_of(obj)?,
            Anomaly::Own(code, detail) => anomaly_dict(host, code, detail.clone())?,
        });
    }
    Ok(anomalies)
}

/// Every part as a dict, in order; synthetic call ids are numbered across the message.
fn parts_list<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    finish: bool,
    anomalies: &mut Vec<H::Obj>,
) -> Result<H::Obj, H::Err> {
    let mut parts = Vec::with_capacity(state.parts.len());
    let mut synthetic = 0usize;
    for part in &state.parts {
        let mut out = Out::new(host);
        let empty = PartFields::default();
        let fields = part.fields.as_deref().unwrap_or(&empty);
        match &part.kind {
            PartKind::Call => {
                let Some(call) = part.call.and_then(|c| state.calls.get(c)) else {
                    continue; // not reached: a call part always has its call
                };
                let call_id = call_id(host, state, call, finish, &mut synthetic, anomalies)?;
                put_call_part(host, state, part, fields, call, call_id, &mut out)?;
            }
            PartKind::Text(kind) | PartKind::Reasoning(kind) => {
                out.put("part", kind.clone());
                out.put("text", host.join(&part.pieces)?);
                if matches!(part.kind, PartKind::Text(_)) {
                    put_text_fields(host, fields, &mut out)?;
                } else {
                    put_reasoning_fields(host, part, fields, &mut out)?;
                }
                out.put("index", or_none(host, &part.index));
            }
            PartKind::Other(kind) => {
                out.put("part", kind.clone());
                for (key, value) in part.other.iter() {
                    out.pairs.push((key.clone(), own(host, value)?));
                }
                out.put("index", or_none(host, &part.index));
            }
        }
        parts.push(out.finish()?);
    }
    host.new_list(parts)
}

/// A call's id; at the finish, a named call without one gets `call_fm_<n>` and an anomaly
/// [E37] (an error when strict).
fn call_id<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    call: &Call<H::Obj>,
    finish: bool,
    synthetic: &mut usize,
    anomalies: &mut Vec<H::Obj>,
) -> Result<H::Obj, H::Err> {
    // a fragment that never met a name stays an orphan, never a ghost call [E33]
    if !(call.id.is_none() && finish && call.name.is_some()) {
        return Ok(or_none(host, &call.id));
    }
    let generated = host.str_obj(&format!("call_fm_{synthetic}"));
    *synthetic += 1;
    let name = or_none(host, &call.name);
    let detail = detail(
        host,
        vec![
            Piece::Lit("tool call "),
            Piece::Obj(host.repr(&name)?),
            Piece::Lit(" had no id; generated "),
            Piece::Obj(host.repr(&generated)?),
        ],
    )?;
    if state.options.strict {
        return Err(host.error(EngineError::Anomaly {
            code: "synthetic_id",
            detail,
        }));
    }
    anomalies.push(anomaly_dict(host, "synthetic_id", detail)?);
    Ok(generated)
}

/// A tool-call part's fields.
fn put_call_part<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    part: &Part<H::Obj>,
    fields: &PartFields<H::Obj>,
    call: &Call<H::Obj>,
    call_id: H::Obj,
    out: &mut Out<'_, H>,
) -> Result<(), H::Err> {
    let arguments = match &call.args_dict {
        Some(v) => v.thaw(host)?,
        None => host.join(&part.pieces)?,
    };
    out.put("part", host.str_obj("tool_call"));
    out.put("id", call_id);
    out.put(
        "type",
        call.type_
            .clone()
            .unwrap_or_else(|| host.str_obj("function")),
    );
    out.put("name", or_none(host, &call.name));
    out.put("arguments", arguments);
    out.put("provider_index", or_none(host, &call.provider_index));
    out.put("payload", thaw_payload(host, &fields.payload)?);
    out.put(
        "response_item_id",
        match &fields.response_item_id {
            Some(v) => own(host, v)?,
            None => host.none(),
        },
    );
    out.put("extra", thaw_opt(host, &fields.extra)?);
    out.put(
        "call_index",
        match &fields.call_index {
            Some(v) if state.leaves == 1 => own(host, v)?,
            _ => host.none(),
        },
    );
    Ok(())
}

/// A text part's citations and attributes.
fn put_text_fields<H: Host>(
    host: &H,
    fields: &PartFields<H::Obj>,
    out: &mut Out<'_, H>,
) -> Result<(), H::Err> {
    out.put(
        "citations",
        match &fields.citations {
            Some(items) => {
                let mut copies = Vec::with_capacity(items.len());
                for item in items {
                    copies.push(own(host, item)?);
                }
                host.new_list(copies)?
            }
            None => host.none(),
        },
    );
    out.put(
        "attributes",
        match &fields.attributes {
            Some(map) => {
                let mut pairs = Vec::with_capacity(map.len());
                for (key, value) in map.iter() {
                    pairs.push((key.clone(), own(host, value)?));
                }
                host.new_dict(pairs)?
            }
            None => host.none(),
        },
    );
    Ok(())
}

/// A reasoning part's summary, payload and redaction flag.
fn put_reasoning_fields<H: Host>(
    host: &H,
    part: &Part<H::Obj>,
    fields: &PartFields<H::Obj>,
    out: &mut Out<'_, H>,
) -> Result<(), H::Err> {
    out.put(
        "summary",
        match &part.summary {
            Some(pieces) => host.join(pieces)?,
            None => host.none(),
        },
    );
    out.put("payload", thaw_payload(host, &fields.payload)?);
    out.put("redacted", bool_obj(host, fields.redacted));
    Ok(())
}

/// The finish reason as given and normalized (a known reason's normal form, else the one a
/// provider gave).
fn put_finish_reason<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    data: &mut Out<'_, H>,
) -> Result<(), H::Err> {
    data.put("finish_reason", or_none(host, &state.finish_reason));
    let normalized = match &state.finish_reason {
        None => None,
        Some(reason) => match host.class(reason).kind {
            Kind::Str => host
                .str_text(reason)
                .and_then(|text| normalized_finish_reason(&text)),
            _ => {
                host.key_hash(reason)?; // `FINISH_REASONS.get(x)` hashes x
                None
            }
        },
    };
    data.put(
        "finish_reason_normalized",
        match (normalized, &state.finish_reason_normalized) {
            (Some(normal), _) => host.str_obj(normal),
            (None, Some(given)) => host.str_obj(given),
            (None, None) => host.none(),
        },
    );
    Ok(())
}

/// The fields between the finish reason and the anomalies: parser output, token ids,
/// logprobs, the response's id and model, provider data, refusal, status.
fn put_response_fields<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    data: &mut Out<'_, H>,
) -> Result<(), H::Err> {
    data.put("parser_content", or_none(host, &state.parser_content));
    data.put(
        "prompt_token_ids",
        match &state.prompt_token_ids {
            Some((v, _)) => own(host, v)?,
            None => host.none(),
        },
    );
    data.put(
        "completion_token_ids",
        thaw_opt(host, &state.completion_token_ids)?,
    );
    data.put("logprobs", thaw_opt(host, &state.logprobs)?);
    data.put("response_id", state.response_id.clone());
    data.put("response_model", or_none(host, &state.response_model));
    data.put(
        "provider_metadata",
        match &state.provider_metadata {
            Some(v) => v.thaw(host)?,
            None => host.new_dict(Vec::new())?,
        },
    );
    data.put("provider_content", or_none(host, &state.provider_content));
    data.put(
        "refusal",
        match &state.refusal {
            Some(pieces) => host.join(pieces)?,
            None => host.none(),
        },
    );
    data.put("status", or_none(host, &state.status));
    Ok(())
}

fn bool_obj<H: Host>(host: &H, value: bool) -> H::Obj {
    host.bool_obj(value)
}

fn anomaly_dict<H: Host>(host: &H, code: &str, detail: H::Obj) -> Result<H::Obj, H::Err> {
    host.new_dict(vec![
        (host.str_obj("code"), host.str_obj(code)),
        (host.str_obj("detail"), detail),
    ])
}

fn is_number<H: Host>(host: &H, value: &H::Obj) -> bool {
    matches!(host.class(value).kind, Kind::Int | Kind::Float)
}

/// A missing total, or a per-chunk one, is input + output (absent counts 0); another
/// reported one is kept and checked [E57, E78] (the twin's `_finish_usage`).
fn return_usage<H: Host>(
    host: &H,
    state: &State<H::Obj>,
    mut usage: H::Obj,
    anomalies: &mut Vec<H::Obj>,
) -> Result<H::Obj, H::Err> {
    let total = host.dict_get_str(&usage, "total_tokens")?;
    let computed = counts_total(host, &usage)?;
    let none = |v: &Option<H::Obj>| v.as_ref().is_none_or(|v| host.class(v).is(Kind::Null));
    let total_number = total.as_ref().filter(|t| is_number(host, t));
    let recompute = match total_number {
        Some(t) => state.per_chunk_total || host.eq(t, &host.int_obj(0))?,
        None => false,
    };
    if none(&total) || recompute {
        if let Some(computed) = computed {
            host.set_item(&mut usage, host.str_obj("total_tokens"), computed?)?;
        }
    } else if let (Some(t), Some(computed)) = (total_number, computed) {
        let differs = match &computed {
            Ok(computed) => !host.eq(t, computed)?,
            Err(_) => true, // past 64 bits: not the reported total
        };
        if differs {
            let inputs = host.dict_get_str(&usage, "input_tokens")?;
            let outputs = host.dict_get_str(&usage, "output_tokens")?;
            let repr = |v: &Option<H::Obj>| match v {
                Some(v) => host.repr(v),
                None => Ok(host.str_obj("None")),
            };
            let detail = detail(
                host,
                vec![
                    Piece::Lit("reported total_tokens "),
                    Piece::Obj(host.repr(t)?),
                    Piece::Lit(" != input "),
                    Piece::Obj(repr(&inputs)?),
                    Piece::Lit(" + output "),
                    Piece::Obj(repr(&outputs)?),
                ],
            )?;
            if state.options.strict {
                return Err(host.error(EngineError::Anomaly {
                    code: "total_mismatch",
                    detail,
                }));
            }
            anomalies.push(anomaly_dict(host, "total_mismatch", detail)?);
        }
    }
    Ok(usage)
}
