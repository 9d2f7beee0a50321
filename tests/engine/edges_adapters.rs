//! Adapters at the edges without Python (`cargo test --no-default-features --test
//! engine_edges_adapters`): which events each adapter knows (spec §8), where another response
//! starts (spec §6) and the aggregator's `new_response_at` a batch splitter reads, and a
//! non-string field as an error. `tests/providers/test_adapter_edges.py` runs the same rules on both
//! backends.

use crate::common;
use common::*;

use fastmerge::engine::aggregate::{AggError, AggregatorCore};
use fastmerge::engine::chunks::Options;
use serde_json::json;

#[test]
fn each_adapter_knows_its_own_events_only() {
    let own = [
        ("openai-chat", json!({"id": "c", "choices": []})),
        (
            "openai-responses",
            json!({"type": "response.content_part.added"}),
        ),
        ("anthropic", json!({"type": "ping"})),
        ("gemini", json!({"candidates": []})),
        ("bedrock-converse", json!({"somethingNew": {}})),
        ("ollama", json!({"model": "m", "done": false})),
    ];
    for (name, event) in &own {
        let event = convert(event.clone());
        for (other, _) in &own {
            let knows = adapter_for(other).knows(&event);
            assert_eq!(knows, name == other, "{other} on an event of {name}");
        }
    }
}

#[test]
fn a_second_start_is_a_new_response() {
    let mut anthropic = adapter_for("anthropic");
    let start = convert(json!({"type": "message_start", "message": {"id": "m"}}));
    assert_eq!(anthropic.new_response(&start), None);
    anthropic.event(&start).expect("maps");
    let other = convert(json!({"type": "message_start", "message": {"id": "n"}}));
    assert_eq!(
        anthropic.new_response(&other).as_deref(),
        Some("a second message_start")
    );
    // the same message again (a stream logged twice) is the same response (spec §6.1)
    assert_eq!(anthropic.new_response(&start), None);

    let mut chat = adapter_for("openai-chat");
    let chunk = |id: &str, finish: serde_json::Value| {
        convert(json!({"id": id, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    };
    // ids before the finish say nothing (Groq compound changes them per chunk)
    chat.event(&chunk("a", json!(null))).expect("maps");
    assert_eq!(chat.new_response(&chunk("b", json!(null))), None);
    chat.event(&chunk("b", json!("stop"))).expect("maps");
    assert_eq!(chat.new_response(&chunk("b", json!(null))), None);
    assert_eq!(
        chat.new_response(&chunk("c", json!(null))).as_deref(),
        Some("id 'c' after a choice finished with id 'b'")
    );
    // an id seen before the finish is this response's (a stream logged twice, spec §6.1)
    assert_eq!(chat.new_response(&chunk("a", json!(null))), None);
}

#[test]
fn the_aggregator_keeps_where_another_response_started() {
    let mut core = AggregatorCore::new(Some("ollama"), Options::DEFAULT);
    core.feed(b"{\"response\":\"a\",\"done\":true}\n{\"response\":\"b\",\"done\":true}\n")
        .expect("feed");
    assert_eq!(core.new_response_at(), Some(2));
    let messages: Vec<serde_json::Value> =
        core.finish().expect("finish").iter().map(to_json).collect();
    assert_eq!(messages[0]["parts"][0]["text"], "a");
    assert_eq!(
        messages[0]["anomalies"],
        json!([{
            "code": "new_response",
            "detail": "event 2 starts another response (an object after done: true): it and \
                       the events after it are not merged into this message"
        }])
    );
}

#[test]
fn content_after_the_finish_is_not_merged() {
    // E97 (spec §6.1): a chat stream logged twice is its first copy, with the anomaly
    let stream = b"{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\
{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n";
    let mut core = AggregatorCore::new(Some("openai-chat"), Options::DEFAULT);
    core.feed(stream).expect("feed");
    core.feed(stream).expect("feed");
    assert_eq!(core.new_response_at(), None);
    let messages: Vec<serde_json::Value> =
        core.finish().expect("finish").iter().map(to_json).collect();
    assert_eq!(messages[0]["parts"][0]["text"], "a");
    assert_eq!(messages[0]["status"], "complete");
    assert_eq!(
        messages[0]["anomalies"],
        json!([{
            "code": "delta_after_finish",
            "detail": "event 3 carries content for choice 0, which had finished: its content \
                       was not merged"
        }])
    );
    // strict: the anomaly is raised
    let options = Options::parse(true, "replace", "merge").expect("options");
    let mut core = AggregatorCore::new(Some("openai-chat"), options);
    core.feed(stream).expect("feed");
    assert!(matches!(
        core.feed(stream),
        Err(AggError::Anomaly { code, .. }) if code == "delta_after_finish"
    ));
}

#[test]
fn an_ollama_object_read_again_after_done_is_the_same_response() {
    let mut ollama = adapter_for("ollama");
    let first = convert(json!({"created_at": "t1", "response": "a", "done": false}));
    let done = convert(json!({"created_at": "t2", "response": "", "done": true}));
    ollama.event(&first).expect("maps");
    ollama.event(&done).expect("maps");
    assert_eq!(ollama.new_response(&first), None);
    let later = convert(json!({"created_at": "t3", "response": "b", "done": false}));
    assert_eq!(
        ollama.new_response(&later).as_deref(),
        Some("an object after done: true")
    );
}

#[test]
fn a_stream_of_another_provider_is_an_error_at_finish() {
    let mut core = AggregatorCore::new(Some("openai-chat"), Options::DEFAULT);
    core.feed(b"{\"type\":\"message_start\",\"message\":{}}\n{\"type\":\"message_stop\"}\n")
        .expect("feed");
    assert_eq!(
        core.finish(),
        Err(AggError::Event {
            event: 2,
            detail: "none of the stream's 2 events is an event of 'openai-chat'; they look like \
                     events of 'anthropic': pass provider='anthropic'"
                .to_owned()
        })
    );
}

#[test]
fn a_non_string_role_is_an_error() {
    let mut bedrock = adapter_for("bedrock-converse");
    let event = convert(json!({"messageStart": {"role": ["assistant"]}}));
    assert_eq!(
        bedrock.event(&event),
        Err("messageStart.role is not a string".to_owned())
    );
}
