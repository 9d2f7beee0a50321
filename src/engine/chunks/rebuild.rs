//! The rebuild of a described leaf (`from_dict`) folded first [E91]: its parts are made as
//! they are, registered so later leaves continue them, with no part joining another and no
//! anomaly recorded (the twin's `_rebuild_part`, `_rebuild_call`). Separate from the merge
//! rules it bypasses.

use crate::engine::host::Host;

use super::calls::new_call;
use super::leaf::{Args, Fragment, PartOp};
use super::map::Val;
use super::merge::merge_payload;
use super::parts::{fill_text_fields, new_other_part, new_part, text_kind};
use super::state::State;

/// One part of a described leaf folded first (the twin's `_rebuild_part`): a new part with
/// the fields the leaf gives, registered by its index (a call by its provider index and id)
/// so that later leaves continue it; no part joins another, no anomaly is recorded.
pub(super) fn rebuild_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    op: &PartOp<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    match op {
        PartOp::Text(part) => {
            let i = new_part(host, state, text_kind(part), part.index.as_ref())?;
            if let Some(text) = &part.text {
                state.parts[i].pieces.push(text.clone());
            }
            if let Some(extras) = &part.extras {
                fill_text_fields(host, state, i, extras)?;
            }
            Ok(())
        }
        PartOp::Call(fragment) => rebuild_call(host, state, fragment),
        PartOp::Other(part) => new_other_part(host, state, part),
        PartOp::Fail(err) => Err(host.clone_err(err)),
    }
}

/// A tool-call part of a described leaf folded first (the twin's `_rebuild_call`): a call of
/// its own, its fields set in [`merge_into`]'s order; `arguments` and `extra` kept as they
/// are (an empty `extra` included).
///
/// [`merge_into`]: super::calls::merge_into
fn rebuild_call<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    fragment: &Fragment<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let c = new_call(host, state, fragment.index.as_ref())?;
    if let Some(id) = &fragment.id {
        state.calls[c].id = Some(id.obj.clone());
        if state.calls_by_id.find(host, &id.obj, id.hash)?.is_none() {
            state.calls_by_id.push(id.obj.clone(), id.hash, c);
        }
    }
    state.calls[c].name = fragment.name.clone();
    state.calls[c].type_ = fragment.type_.clone();
    let part = state.calls[c].part;
    match &fragment.args {
        Args::Text(text) => state.parts[part].pieces.push(text.clone()),
        Args::Dict(dict) => {
            super::map::check_depth(host, dict, 0)?;
            state.calls[c].args_dict = Some(Val::Obj(dict.clone()));
        }
        Args::Absent | Args::Other => {}
    }
    if let Some(err) = &fragment.late {
        return Err(host.clone_err(err));
    }
    let signature_concat = state.options.signature_concat;
    let fields = state.parts[part].fields();
    if let Some(payload) = &fragment.payload {
        fields.payload = Some(merge_payload(host, signature_concat, None, payload)?);
    }
    fields.response_item_id = fragment.item_id.clone();
    fields.call_index = fragment.call_index.clone();
    if let Some(extra) = &fragment.given_extra {
        super::map::check_depth(host, extra, 0)?;
        fields.extra = Some(Val::Obj(extra.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The rebuild of a described leaf (`from_dict`, E91), on the engine's own values; what
    //! the twin gives for the same leaves.

    use std::sync::Arc;

    use serde_json::json;

    use super::super::{fold, materialize, Family, Leaf, Options, State};
    use crate::engine::value::{Map, NativeHost, Value};

    fn convert(json: serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Int(n.as_i64().expect("an int")),
            serde_json::Value::String(s) => Value::Str(s),
            serde_json::Value::Array(items) => {
                Value::List(Arc::new(items.into_iter().map(convert).collect()))
            }
            serde_json::Value::Object(map) => Value::Dict(Arc::new(
                map.into_iter()
                    .map(|(k, v)| (k, convert(v)))
                    .collect::<Map>(),
            )),
        }
    }

    fn to_json(value: &Value) -> serde_json::Value {
        match value.resolved() {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => json!(b),
            Value::Int(i) => json!(i),
            Value::Str(s) => json!(s),
            Value::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
            Value::Dict(map) => serde_json::Value::Object(
                map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect(),
            ),
            other => panic!("not in these tests: {other:?}"),
        }
    }

    /// `leaves` folded into a fresh assistant state, read (`finish=False`) as JSON.
    fn folded(leaves: &[serde_json::Value]) -> serde_json::Value {
        let host = NativeHost;
        let family = Value::from("assistant");
        let mut state = State::new(&host, Family::Assistant, family, Options::DEFAULT);
        for leaf in leaves {
            let parsed = Leaf::parse(&host, Family::Assistant, convert(leaf.clone()));
            fold(&host, &mut state, &parsed).expect("fold");
        }
        to_json(&materialize(&host, &state, false).expect("materialize"))
    }

    /// What `from_dict` makes of a message whose reasoning and text share block index 0.
    fn described(described: bool) -> serde_json::Value {
        json!({
            "role": "assistant",
            "parts": [
                {"part": "reasoning", "text": "think", "summary": null,
                 "payload": {"provider": "p", "kind": "signature", "data": "S"},
                 "redacted": false, "index": 0, "opened": true},
                {"part": "text", "text": "Hel", "citations": null, "attributes": null,
                 "index": 0, "opened": true},
                {"part": "tool_call", "id": "c1", "type": "function", "name": "f",
                 "arguments": "{", "provider_index": 3, "payload": null,
                 "response_item_id": null, "extra": {}, "call_index": null},
            ],
            "anomalies": [{"code": "kind_change", "detail": "part index 0: text after reasoning"}],
            "described": described,
        })
    }

    fn kinds(data: &serde_json::Value) -> Vec<String> {
        let parts = data["parts"].as_array().expect("parts");
        parts
            .iter()
            .map(|p| p["part"].as_str().expect("kind").to_owned())
            .collect()
    }

    #[test]
    fn a_described_leaf_folded_first_is_rebuilt_as_it_is() {
        let data = folded(&[described(true)]);
        assert_eq!(kinds(&data), ["reasoning", "text", "tool_call"]);
        assert_eq!(data["anomalies"].as_array().expect("anomalies").len(), 1);
        assert_eq!(data["parts"][0]["payload"]["data"], json!("S"));
        assert_eq!(data["parts"][2]["extra"], json!({}));
        // merged again instead, the kind change is recorded again and the empty extra is lost
        let merged = folded(&[described(false)]);
        assert_eq!(merged["anomalies"].as_array().expect("anomalies").len(), 2);
        assert_eq!(merged["parts"][2]["extra"], json!(null));
    }

    #[test]
    fn later_leaves_continue_a_rebuilt_leaf() {
        let delta = json!({
            "parts": [
                {"part": "text", "text": "lo", "index": 0},
                {"part": "tool_call", "provider_index": 3, "arguments": "}"},
            ],
        });
        let data = folded(&[described(true), delta]);
        assert_eq!(kinds(&data), ["reasoning", "text", "tool_call"]);
        assert_eq!(data["parts"][1]["text"], json!("Hello"));
        assert_eq!(data["parts"][2]["arguments"], json!("{}"));
        assert_eq!(data["anomalies"].as_array().expect("anomalies").len(), 1);
    }

    #[test]
    fn a_described_leaf_after_another_is_merged() {
        let head = json!({"role": "assistant", "parts": [{"part": "text", "text": "x"}]});
        let data = folded(&[head, described(true)]);
        // its text at index 0 meets its reasoning there: the fold's rules, anomaly included
        assert_eq!(kinds(&data), ["text", "reasoning", "text", "tool_call"]);
        assert_eq!(data["anomalies"].as_array().expect("anomalies").len(), 2);
    }
}
