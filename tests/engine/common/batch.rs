//! Shared by the batch engine's tests (`batch`, `batch_records`): scratch directories, a batch
//! run to its end, what one aggregator makes of a stream alone to compare with, and a generated
//! gateway log (interleaved OpenAI Chat streams in wrapper records).

use crate::common;

use std::path::PathBuf;

use fastmerge::engine::aggregate::AggregatorCore;
use fastmerge::engine::batch::{Batch, BatchError, Item, Next, Options, StreamError};
use fastmerge::engine::chunks::Options as AggOptions;

/// A scratch directory of this test process, removed when the test lets go of it (a test that
/// fails leaves it, to be looked at).
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A new scratch directory of this test process, named for the test (`name`).
pub fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("fastmerge-batch-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    Scratch(dir)
}

/// `bytes` written to the file `name` of `dir`: its path.
pub fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path.display().to_string()
}

/// Every item of a batch, or the error it stopped with (and the items before it).
pub fn run(options: Options) -> (Vec<Item>, Option<BatchError>) {
    let mut batch = match Batch::new(options) {
        Ok(batch) => batch,
        Err(err) => return (Vec::new(), Some(err)),
    };
    let mut items = Vec::new();
    loop {
        match batch.next(None) {
            Ok(Next::Item(item, _)) => items.push(item),
            Ok(Next::Written(item, _, _)) => items.push(item),
            Ok(Next::End) => return (items, None),
            Ok(Next::Timeout) => unreachable!("no timeout was given"),
            Err(err) => return (items, Some(err)),
        }
    }
}

/// Every item of a batch that must end without an error.
pub fn items(options: Options) -> Vec<Item> {
    let (items, err) = run(options);
    assert_eq!(err, None);
    items
}

/// The options of a batch of wrapper records (`stream_id`, `event`) on `jobs` workers.
pub fn wrapper(paths: Vec<String>, jobs: usize) -> Options {
    let mut options = Options::new(paths);
    options.group_by = "stream_id".to_owned();
    options.event = Some("event".to_owned());
    options.jobs = jobs;
    options
}

/// What one aggregator makes of `events` (one `add_text` each).
pub fn alone(events: &[Vec<u8>]) -> (Option<&'static str>, Result<Vec<serde_json::Value>, String>) {
    let mut core = AggregatorCore::new(None, AggOptions::DEFAULT);
    for event in events {
        if let Err(err) = core.add_text(event) {
            return (core.provider(), Err(format!("{err:?}")));
        }
    }
    let result = core.finish();
    let provider = core.provider();
    (
        provider,
        result
            .map(|m| m.iter().map(common::to_json).collect())
            .map_err(|e| format!("{e:?}")),
    )
}

/// A stream's item as (key, provider, messages as JSON or the error's text), to compare with
/// [`alone`]; a bad line panics.
pub fn shown(
    item: &Item,
) -> (
    String,
    Option<&'static str>,
    Result<Vec<serde_json::Value>, String>,
) {
    match item {
        Item::Stream {
            key,
            provider,
            result,
        } => (
            key.clone(),
            *provider,
            match result {
                Ok(m) => Ok(m.iter().map(common::to_json).collect()),
                Err(StreamError::Aggregate(e)) => Err(format!("{e:?}")),
                Err(StreamError::Text(t)) => Err(t.clone()),
            },
        ),
        Item::Bad { .. } => panic!("a bad line: {item:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// A generated gateway log: interleaved OpenAI Chat streams in wrapper records

/// An OpenAI Chat chunk of stream `stream` of the generated log.
pub fn chunk(
    stream: usize,
    choices: serde_json::Value,
    usage: serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "id": format!("chatcmpl-{stream:06}"), "object": "chat.completion.chunk",
        "created": 1770933892, "model": "gpt-4.1", "choices": choices, "usage": usage,
    })
}

/// The events of stream `n`: a role chunk, `n % 7 + 2` content deltas (every fifth stream:
/// a tool call's arguments), the finish chunk, and the usage chunk that ends it.
pub fn stream_events(n: usize) -> Vec<serde_json::Value> {
    let choice = |delta: serde_json::Value, finish: serde_json::Value| serde_json::json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
    let null = serde_json::Value::Null;
    let mut events = vec![chunk(
        n,
        choice(
            serde_json::json!({"role": "assistant", "content": ""}),
            null.clone(),
        ),
        null.clone(),
    )];
    let deltas = n % 7 + 2;
    if n % 5 == 4 {
        let head = serde_json::json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function", "function": {"name": "f", "arguments": ""}}]});
        events.push(chunk(n, choice(head, null.clone()), null.clone()));
        for i in 0..deltas {
            let piece = serde_json::json!({"tool_calls": [{"index": 0, "function": {"arguments": format!("{{\"a{i}\":{n}}}")}}]});
            events.push(chunk(n, choice(piece, null.clone()), null.clone()));
        }
        events.push(chunk(
            n,
            choice(serde_json::json!({}), "tool_calls".into()),
            null.clone(),
        ));
    } else {
        for i in 0..deltas {
            events.push(chunk(
                n,
                choice(
                    serde_json::json!({"content": format!(" w{i}.{n}")}),
                    null.clone(),
                ),
                null.clone(),
            ));
        }
        events.push(chunk(
            n,
            choice(serde_json::json!({}), "stop".into()),
            null.clone(),
        ));
    }
    let usage = serde_json::json!({"prompt_tokens": 5, "completion_tokens": deltas, "total_tokens": 5 + deltas});
    events.push(chunk(n, serde_json::json!([]), usage));
    events
}

/// A log of `streams` streams, about `concurrent` in flight at once, in a fixed interleaving:
/// its lines, and each stream's events (by stream number).
pub fn gen_log(streams: usize, concurrent: usize) -> (Vec<String>, Vec<Vec<Vec<u8>>>) {
    let all: Vec<Vec<serde_json::Value>> = (0..streams).map(stream_events).collect();
    let mut texts: Vec<Vec<Vec<u8>>> = vec![Vec::new(); streams];
    let mut lines = Vec::new();
    let mut next = vec![0usize; streams];
    let mut open: Vec<usize> = Vec::new();
    let mut started = 0;
    let mut tick = 0usize;
    while started < streams || !open.is_empty() {
        while open.len() < concurrent && started < streams {
            open.push(started);
            started += 1;
        }
        tick = tick.wrapping_mul(1103515245).wrapping_add(12345);
        let slot = (tick >> 8) % open.len();
        let n = open[slot];
        let event = &all[n][next[n]];
        let text = serde_json::to_string(event).expect("json");
        lines.push(format!(
            "{{\"ts\":{},\"stream_id\":\"req-{n:05}\",\"seq\":{},\"event\":{text}}}",
            lines.len(),
            next[n]
        ));
        texts[n].push(text.into_bytes());
        next[n] += 1;
        if next[n] == all[n].len() {
            open.remove(slot);
        }
    }
    (lines, texts)
}

/// The log's bytes: each line and a line end.
pub fn joined(lines: &[String]) -> Vec<u8> {
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}
