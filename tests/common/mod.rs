//! Shared by the cargo integration tests: JSON (serde_json, insertion order kept) to and from
//! the engine's native `Value`.

#![allow(dead_code)] // each test crate uses part of it

use fastmerge::engine::value::Value;
use serde_json::json;
use std::sync::Arc;

pub fn convert(json: serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::Str(s),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.into_iter().map(convert).collect()))
        }
        serde_json::Value::Object(map) => Value::Dict(Arc::new(
            map.into_iter()
                .map(|(k, v)| (k, convert(v)))
                .collect::<fastmerge::engine::value::Map>(),
        )),
    }
}

pub fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => {
            serde_json::Value::Number(serde_json::Number::from_f64(*f).expect("a finite float"))
        }
        Value::Str(s) => json!(s),
        Value::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Dict(map) => {
            serde_json::Value::Object(map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}
