//! Which wire format a stream is: the provider told from the first event when none was
//! given, and the events its adapter does not know (an anomaly each; a stream of none of them
//! is an error that names the provider they look like).

use super::{AggError, AggregatorCore};
use crate::engine::providers::{self, common, PROVIDERS};
use crate::engine::value::{py_repr, Value};

impl AggregatorCore {
    /// Without an adapter yet: the provider told from `event`, and its adapter. Some (the
    /// event's result) where no provider can be told: the event is unreadable.
    pub(super) fn choose_adapter(&mut self, event: &Value) -> Option<Result<(), AggError>> {
        if self.adapter.is_some() {
            return None;
        }
        let Some(name) = providers::detect(event) else {
            let names: Vec<String> = PROVIDERS
                .iter()
                .map(|p| py_repr(&Value::Str((*p).to_owned())))
                .collect();
            let what = wrapper_hint(event)
                .unwrap_or_else(|| format!("pass provider= one of {}", names.join(", ")));
            return Some(self.unreadable(format!(
                "cannot tell the provider from this event (keys: {}); {what}",
                keys_of(event)
            )));
        };
        self.provider = Some(name);
        self.adapter = providers::adapter(name);
        None
    }

    /// An event with no key the adapter knows: an anomaly, and not read (spec §8).
    pub(super) fn unrecognized(&mut self, event: &Value) -> Result<(), AggError> {
        let keys = keys_of(event);
        if self.foreign.is_none() {
            let looks = providers::detect(event).filter(|p| Some(*p) != self.provider);
            self.foreign = Some((keys.clone(), looks));
        }
        let detail = format!(
            "event {} has no key the {} adapter reads (keys: {keys}); it was not read",
            self.count,
            self.provider.unwrap_or("")
        );
        self.anomaly_everywhere("unrecognized_event", detail)
    }

    /// The detail of the error for a stream of which no event was recognized (`keys` of the
    /// first, and the provider it looks like).
    pub(super) fn foreign_stream(&self, keys: &str, looks: Option<&str>) -> String {
        let provider = py_repr(&common::str_value(self.provider.unwrap_or("")));
        let detail = format!(
            "none of the stream's {} events is an event of {provider}",
            self.count
        );
        match looks {
            None => format!("{detail} (keys of the first: {keys})"),
            Some(looks) => {
                let looks = py_repr(&common::str_value(looks));
                format!("{detail}; they look like events of {looks}: pass provider={looks}")
            }
        }
    }
}

/// What to do when an event no provider knows holds one in a field: it is a log's wrapper
/// record (`{"ts": ..., "stream_id": ..., "event": {...}}`), read by `fastmerge batch`.
fn wrapper_hint(event: &Value) -> Option<String> {
    let Value::Dict(map) = event else {
        return None;
    };
    map.iter().find_map(|(key, value)| {
        let name = match value {
            Value::Dict(_) => providers::detect(value)?,
            _ => return None,
        };
        Some(format!(
            "its {} is an event of {name}: read a log of such records with \
             fastmerge batch --group-by KEY --event {key}",
            py_repr(&Value::Str(key.clone()))
        ))
    })
}

/// The first keys of an event, as error and anomaly details name them.
fn keys_of(event: &Value) -> String {
    let keys: Vec<String> = match event {
        Value::Dict(map) => map
            .keys()
            .take(8)
            .map(|k| py_repr(&Value::Str(k.clone())))
            .collect(),
        _ => Vec::new(),
    };
    keys.join(", ")
}
