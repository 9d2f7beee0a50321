//! The typed fast paths (openai-chat; anthropic's in `fastpath_anthropic.rs`) against their
//! generic paths (`cargo test --no-default-features --test engine fastpath`): on every
//! openai-chat and Mistral corpus stream and on generated streams, event by event (the same leaves from the
//! bytes as from the parsed event) and whole (the same messages, anomalies and errors, however
//! split).

use crate::common;
use common::*;

use fastmerge::engine::aggregate::AggregatorCore;
use fastmerge::engine::chunks::Options;
use fastmerge::engine::events;

/// Two adapters in lockstep over the stream's lines, one reading each event through
/// `fast_event` (the generic `event` where it declines), one always through `event`: the
/// same leaves after every event. Returns how many events the fast path read.
fn lockstep(bytes: &[u8]) -> usize {
    lockstep_of("openai-chat", bytes)
}

pub(crate) fn lockstep_of(provider: &str, bytes: &[u8]) -> usize {
    let mut fast = adapter_for(provider);
    let mut generic = adapter_for(provider);
    let mut hits = 0;
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(event) = events::parse(line) else {
            assert!(fast.fast_event(line).is_none(), "read what is not an event");
            continue;
        };
        if !generic.knows(&event) || generic.new_response(&event).is_some() {
            assert!(
                fast.fast_event(line).is_none(),
                "read a foreign or new response"
            );
            continue;
        }
        let mut expected = generic.event(&event).map(|l| show_leaves(&l));
        let got = match fast.fast_event(line) {
            Some(leaves) => {
                hits += 1;
                assert_eq!(fast.fast_ended(), generic.ends_stream(&event), "the end");
                let built: Vec<_> = leaves.into_iter().map(|(c, l)| (c, l.build())).collect();
                // the fast path leaves out a call's repeated type, which changes nothing
                // (the whole streams are compared too: `assert_same_whole`)
                expected = expected.map(|shown| untyped(&shown));
                Ok(untyped(&show_leaves(&built)))
            }
            None => fast.event(&event).map(|l| show_leaves(&l)),
        };
        assert_eq!(got, expected, "{}", String::from_utf8_lossy(line));
    }
    assert_eq!(show_leaves(&fast.end()), show_leaves(&generic.end()));
    hits
}

/// Shown leaves without the `type` of their tool-call parts.
fn untyped(shown: &str) -> String {
    let mut leaves: serde_json::Value = serde_json::from_str(shown).expect("shown leaves");
    for pair in leaves.as_array_mut().expect("a list") {
        let parts = pair[1].get_mut("parts").and_then(|p| p.as_array_mut());
        for part in parts.into_iter().flatten() {
            if part["part"] == "tool_call" {
                part.as_object_mut().expect("a part").remove("type");
            }
        }
    }
    leaves.to_string()
}

/// The messages (or the error) of `bytes` fed `piece` bytes at a time.
fn aggregated(bytes: &[u8], piece: usize, fast: bool, strict: bool) -> String {
    aggregated_of("openai-chat", bytes, piece, fast, strict)
}

fn aggregated_of(provider: &str, bytes: &[u8], piece: usize, fast: bool, strict: bool) -> String {
    aggregated_as(Some(provider), bytes, piece, fast, strict)
}

/// The messages of `bytes` fed in pieces of `piece` bytes, as JSON (or the error), with the
/// provider given or (None) told from the first event.
pub(crate) fn aggregated_as(
    provider: Option<&str>,
    bytes: &[u8],
    piece: usize,
    fast: bool,
    strict: bool,
) -> String {
    let mut options = Options::DEFAULT;
    options.strict = strict;
    let mut core = AggregatorCore::new(provider, options);
    core.set_fast_events(fast);
    for chunk in bytes.chunks(piece.max(1)) {
        if let Err(err) = core.feed(chunk) {
            return format!("{err:?}");
        }
    }
    match core.finish() {
        Ok(messages) => {
            serde_json::to_string(&messages.iter().map(to_json).collect::<Vec<_>>()).expect("json")
        }
        Err(err) => format!("{err:?}"),
    }
}

fn assert_same_whole(name: &str, bytes: &[u8]) {
    assert_same_whole_of("openai-chat", name, bytes);
}

pub(crate) fn assert_same_whole_of(provider: &str, name: &str, bytes: &[u8]) {
    for piece in [bytes.len(), 7] {
        for strict in [false, true] {
            assert_eq!(
                aggregated_of(provider, bytes, piece, true, strict),
                aggregated_of(provider, bytes, piece, false, strict),
                "{name} piece {piece} strict {strict}"
            );
        }
    }
}

#[test]
fn corpus_fast_path_equals_generic_path() {
    let mut total = 0;
    for (name, bytes) in corpus_streams(&["openai_chat", "mistral"]) {
        total += lockstep(&bytes);
        assert_same_whole(&name, &bytes);
    }
    // the fast path does read most corpus events (else this test compares nothing)
    assert!(total > 500, "fast path read only {total} corpus events");
}

/// A stream whose provider is not given: its first event tells the provider, and the typed
/// paths read the events after it. Every corpus stream gives the same messages as on the
/// generic path, whole and fed in pieces.
#[test]
fn a_stream_whose_provider_is_told_reads_alike_on_both_paths() {
    let folders = [
        "openai_chat",
        "mistral",
        "openai_responses",
        "anthropic_messages",
        "gemini",
        "bedrock_converse",
        "ollama",
    ];
    let streams = corpus_streams(&folders);
    assert!(streams.len() > 90, "{} corpus streams", streams.len());
    for (name, bytes) in streams {
        for piece in [bytes.len(), 7] {
            assert_eq!(
                aggregated_as(None, &bytes, piece, true, false),
                aggregated_as(None, &bytes, piece, false, false),
                "{name} piece {piece}"
            );
        }
    }
}

#[test]
fn hot_chunks_take_the_fast_path() {
    let stream = concat!(
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","service_tier":"default","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x"}"#,
        "\n",
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi \u00e9\n"},"logprobs":null,"finish_reason":null}]}"#,
        "\n",
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"why"},"finish_reason":null}]}"#,
        "\n",
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "\n",
    );
    assert_eq!(lockstep(stream.as_bytes()), 4);
    assert_eq!(
        aggregated(stream.as_bytes(), stream.len(), true, false),
        aggregated(stream.as_bytes(), stream.len(), false, false)
    );
}

#[test]
fn logprobs_chunks_take_the_fast_path() {
    // the logprobs entries are kept as their text; read from it, a negative zero is what the
    // generic path makes of it (-0 the int 0, -0.0 the float)
    let entry = r#"{"token":"Hi","logprob":-0.25,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.25,"bytes":[72,105]}]}"#;
    let chunk = |delta: &str, logprobs: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":{logprobs},"finish_reason":null}}]}}"#
        ) + "\n"
    };
    let stream = [
        chunk(
            r#"{"role":"assistant","content":""}"#,
            r#"{"content":[],"refusal":null}"#,
        ),
        chunk(
            r#"{"content":"Hi"}"#,
            &format!(r#"{{"content":[{entry}],"refusal":null}}"#),
        ),
        chunk(
            r#"{"content":" there"}"#,
            &format!(r#"{{"content":[{entry},{entry}]}}"#),
        ),
    ]
    .concat();
    assert_eq!(lockstep(stream.as_bytes()), 3);
    assert_same_whole("logprobs", stream.as_bytes());
    let zeros = [
        chunk(
            r#"{"role":"assistant","content":"a"}"#,
            r#"{"content":[{"logprob":-0}]}"#,
        ),
        chunk(r#"{"content":"b"}"#, r#"{"content":[{"logprob":-0.0}]}"#),
    ]
    .concat();
    assert_eq!(lockstep(zeros.as_bytes()), 2);
    assert_same_whole("negative zeros", zeros.as_bytes());
}

/// The generator of chunks that vary every field the fast path reads between its hot shape
/// and the shapes it must leave to the generic path.
trait Pick {
    fn pick<'a>(&mut self, hostile: bool, options: &[&'a str]) -> &'a str;
}

impl Pick for Gen {
    /// One of `options`; only of those before the "|" unless `hostile`.
    fn pick<'a>(&mut self, hostile: bool, options: &[&'a str]) -> &'a str {
        let good = options
            .iter()
            .position(|o| *o == "|")
            .unwrap_or(options.len());
        let options: Vec<&str> = options.iter().copied().filter(|o| *o != "|").collect();
        let n = if hostile { options.len() } else { good };
        options[(self.next() % n as u64) as usize]
    }
}

/// One chunk of a generated stream: its top-level keys, then one or two choices; a third of
/// the chunks (`h`) take values off the hot shape.
fn generated_chunk(g: &mut Gen) -> String {
    let h = g.next() % 3 == 0; // a chunk with values off the hot shape
    let mut top = generated_top(g, h);
    let mut choices = Vec::new();
    // a tenth of the chunks have no choice (the usage chunk, a gateway's metadata chunk)
    let count = if g.next() % 10 == 0 {
        0
    } else {
        1 + g.next() % 2
    };
    for _ in 0..count {
        choices.push(generated_choice(g, h));
    }
    if !h || g.next() % 10 != 0 {
        top.push(format!("\"choices\":[{}]", choices.join(",")));
    }
    if h && g.next() % 20 == 0 {
        top.push("\"id\":\"dup\"".to_owned()); // a duplicate key (or not)
    }
    format!("{{{}}}\n", top.join(","))
}

/// The chunk's top-level keys but `choices`.
fn generated_top(g: &mut Gen, h: bool) -> Vec<String> {
    let mut top: Vec<String> = Vec::new();
    for (key, values) in [
        (
            "id",
            &[
                "", "\"c\"", "\"c\"", "\"c\"", "\"d\"", "null", "\"\"", "|", "7",
            ][..],
        ),
        (
            "object",
            &["", "\"chat.completion.chunk\"", "\"\"", "null", "|", "2"][..],
        ),
        (
            "created",
            &[
                "",
                "1",
                "1",
                "2",
                "null",
                "|",
                "1.0",
                "-0",
                "\"1\"",
                "99999999999999999999",
            ][..],
        ),
        (
            "model",
            &["", "\"m\"", "\"m\"", "\"n\"", "null", "|", "[]"][..],
        ),
        ("system_fingerprint", &["", "\"fp\"", "null", "\"\""][..]),
        ("service_tier", &["", "\"default\"", "null"][..]),
        (
            "usage",
            &[
                "",
                "",
                "null",
                "{\"prompt_tokens\":1}",
                r#"{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":1,"audio_tokens":null},"completion_tokens_details":{"reasoning_tokens":0}}"#,
                "|",
                "{}",
                r#"{"prompt_cache_hit_tokens":4,"x":null,"y":-0.0,"z":"\ud800"}"#,
                "1",
                "[]",
            ][..],
        ),
        ("obfuscation", &["", "\"zz\"", "null", "|", "3"][..]),
        ("x_other", &["", "|", "1"][..]),
    ] {
        let value = g.pick(h, values);
        if !value.is_empty() {
            top.push(format!("\"{key}\":{value}"));
        }
    }
    top
}

/// One choice: its keys, and a delta (missing, null, or an object).
fn generated_choice(g: &mut Gen, h: bool) -> String {
    let delta = generated_delta(g, h);
    let mut choice: Vec<String> = Vec::new();
    for (key, values) in [
        ("index", &["", "0", "0", "1", "|", "null", "\"0\""][..]),
        (
            "finish_reason",
            &[
                "",
                "null",
                "null",
                "null",
                "\"stop\"",
                "\"\"",
                "\"null\"",
                "\" \"",
                "\"tool_calls\"",
                "|",
                "1",
            ][..],
        ),
        (
            "logprobs",
            &[
                "",
                "null",
                "{\"content\":[]}",
                r#"{"content":[{"token":"a","logprob":-0.5,"bytes":[97],"top_logprobs":[{"token":"a","logprob":-0.5,"bytes":[97]}]}],"refusal":null}"#,
                "|",
                r#"{"content":[{"token":"a","logprob":-0,"bytes":null}]}"#,
                r#"{"content":[{"token":"a","logprob":-0.0}]}"#,
                r#"{"content":[{"logprob":1e400}]}"#,
                "[1,{\"a\":\"\\ud800\"}]",
                "7",
            ][..],
        ),
        ("token_ids", &["", "", "null", "|", "[1]", "[]"][..]),
        // keys of no step (vLLM's, OpenRouter's, Azure's), and one the fast path declines
        (
            "stop_reason",
            &["", "", "null", "\"x\"", "|", "-0", "{\"a\":-0.0}"][..],
        ),
        (
            "content_filter_results",
            &["", "", "{}", "{\"hate\":{\"filtered\":false}}"][..],
        ),
        ("text", &["", "", "", "|", "\"t\"", "null"][..]),
    ] {
        let value = g.pick(h, values);
        if !value.is_empty() {
            choice.push(format!("\"{key}\":{value}"));
        }
    }
    match g.next() % 8 {
        0 => {}
        1 => choice.push("\"delta\":null".to_owned()),
        _ => choice.push(format!("\"delta\":{{{}}}", delta.join(","))),
    }
    format!("{{{}}}", choice.join(","))
}

/// A delta's keys: its texts (and non-texts), and maybe one tool-call fragment.
fn generated_delta(g: &mut Gen, h: bool) -> Vec<String> {
    let text = [
        "",
        "\"\"",
        "\"a\"",
        "\"null\"",
        "\" \"",
        "null",
        "\"\\u00e9\\n\"",
        "|",
        "1",
        "[]",
        "\"\\ud800\"",
    ];
    let mut delta: Vec<String> = Vec::new();
    for key in [
        "role",
        "content",
        "reasoning_content",
        "reasoning",
        "refusal",
    ] {
        let value = g.pick(h, &text);
        if !value.is_empty() {
            delta.push(format!("\"{key}\":{value}"));
        }
    }
    for (key, values) in [
        (
            "x_delta",
            &["", "", "null", "1", "\"\"", "|", "\"\\ud800\"", "[-0]"][..],
        ),
        (
            "audio",
            &["", "", "", "", "|", "null", "{\"id\":\"a\"}"][..],
        ),
        ("images", &["", "", "", "", "|", "[]", "null"][..]),
    ] {
        let value = g.pick(h, values);
        if !value.is_empty() {
            delta.push(format!("\"{key}\":{value}"));
        }
    }
    let call = g.pick(
        h,
        &[
            "",
            "",
            "",
            r#"{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}"#,
            r#"{"index":0,"function":{"arguments":"{\"a\""}}"#,
            r#"{"index":1,"function":{"arguments":"1}"}}"#,
            r#"{"index":0,"id":null,"type":null,"function":{"arguments":"x","name":null}}"#,
            "|",
            r#"{"index":null,"function":{"arguments":"x"}}"#,
            r#"{"index":0,"function":{"arguments":null}}"#,
            // a repeated type (LiteLLM's stream objects), another type, an empty one, a type
            // without arguments; a known id without a name (the fold may send it to another
            // call), a late name, another call at index 1, a typed call opened without a name
            r#"{"index":0,"type":"function","function":{"arguments":"x"}}"#,
            r#"{"index":1,"type":"function","function":{"arguments":"2"}}"#,
            r#"{"index":0,"type":"custom","function":{"arguments":"y"}}"#,
            r#"{"index":0,"type":"","function":{"arguments":"y"}}"#,
            r#"{"index":0,"type":"function","function":{"arguments":""}}"#,
            r#"{"index":1,"id":"call_1","function":{"arguments":"z"}}"#,
            r#"{"index":1,"id":"call_1","type":"function","function":{"arguments":"z"}}"#,
            r#"{"index":1,"function":{"name":"g","arguments":"q"}}"#,
            r#"{"index":1,"id":"call_2","function":{"name":"h","arguments":""}}"#,
            r#"{"index":1,"type":"function","function":{"arguments":""}}"#,
        ],
    );
    if !call.is_empty() {
        delta.push(format!("\"tool_calls\":[{call}]"));
    }
    delta
}

#[test]
fn generated_streams_fast_path_equals_generic_path() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut hits = 0;
    for _ in 0..400 {
        let stream: String = (0..(1 + g.next() % 12))
            .map(|_| generated_chunk(&mut g))
            .collect();
        hits += lockstep(stream.as_bytes());
        assert_same_whole("generated", stream.as_bytes());
    }
    assert!(hits > 100, "fast path read only {hits} generated events");
}

#[test]
fn json_lines_read_whole_give_what_the_scan_gives() {
    // a hot chunk is read whole from its line (the transport only finds the newline); a line
    // that is not exactly one object of the hot shape is scanned as always: the same
    // messages, anomalies and errors as with the fast path off, however the line ends
    let hot = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#;
    let first = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
    let lines = [
        format!("{hot}\n"),
        format!("{hot}  \r\n"),
        format!("{hot}{hot}\n"),
        format!("{hot} {hot}\n"),
        format!("{hot}}}\n"),
        format!("{hot}x\n"),
        format!("{hot}\n\n"),
        format!("{{\"a\":\n{hot}}}\n"),
        format!("{}\n{}\n", &hot[..40], &hot[40..]),
        "{\"id\":\"c\",\n\"choices\":[]}\n".to_owned(),
        "{\"a\":\"}\n".to_owned(),
        "{\"a\":1} {\"b\":\n".to_owned(),
        format!("{hot}\n"),
    ];
    for (i, line) in lines.iter().enumerate() {
        let stream = format!("{first}\n{line}{hot}\n");
        assert_same_whole(&format!("line {i}"), stream.as_bytes());
    }
    let stream: String = [first.to_owned() + "\n"].into_iter().chain(lines).collect();
    assert_same_whole("all lines", stream.as_bytes());
    assert!(lockstep(stream.as_bytes()) > 0);
}

/// A stream of chunks alike but for their delta's text and `obfuscation` (what the fast path
/// reads by comparing bytes with an earlier chunk's), among chunks that change one thing:
/// another model or id, a role, a finish, a refusal, another kind of delta, another tool call
/// or choice, spacing, and texts the comparison must not take: escapes, an empty text, a lone
/// surrogate, a raw control character, invalid UTF-8.
fn generated_alike(g: &mut Gen) -> Vec<u8> {
    let texts: [&[u8]; 12] = [
        b"a",
        b" word",
        b" b",
        "\u{e9}\u{6570}".as_bytes(),
        br"\u00e9\n",
        br#"\"q\""#,
        br"\\",
        b"",
        br"\ud800",
        b"a\tb",
        b"\xff",
        br"\x",
    ];
    let obfuscations: [&[u8]; 7] = [
        br#","obfuscation":"zz""#,
        br#","obfuscation":"abc12""#,
        br#","obfuscation":"""#,
        br#","obfuscation":"a\"b""#,
        br#","obfuscation":null"#,
        b"",
        br#","obfuscation":"\xfe""#,
    ];
    let mut out: Vec<u8> = Vec::new();
    let start = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#;
    out.extend_from_slice(start.as_bytes());
    out.push(b'\n');
    if g.next() % 2 == 0 {
        for i in 0..2 {
            out.extend_from_slice(format!(r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{i},"id":"call_{i}","type":"function","function":{{"name":"f","arguments":""}}}}]}},"logprobs":null,"finish_reason":null}}]}}"#).as_bytes());
            out.push(b'\n');
        }
    }
    for _ in 0..(4 + g.next() % 40) {
        // mostly a text of the usual kind, sometimes a hostile one
        let text = if g.next() % 4 == 0 {
            texts[(g.next() % texts.len() as u64) as usize]
        } else {
            texts[(g.next() % 4) as usize]
        };
        let obfuscation = if g.next() % 4 == 0 {
            obfuscations[(g.next() % obfuscations.len() as u64) as usize]
        } else {
            obfuscations[(g.next() % 2) as usize]
        };
        let model = if g.next() % 12 == 0 { "n" } else { "m" };
        let id = if g.next() % 20 == 0 { "d" } else { "c" };
        let choice = if g.next() % 10 == 0 { 1 } else { 0 };
        let finish = match g.next() % 60 {
            0 => r#""stop""#,
            1 => r#""""#,
            _ => "null",
        };
        let mut delta: Vec<u8> = Vec::new();
        match g.next() % 12 {
            0 => delta.extend_from_slice(br#"{"reasoning_content":""#),
            1 => delta.extend_from_slice(br#"{"role":"assistant","content":""#),
            2 => delta.extend_from_slice(br#"{"refusal":"no","content":""#),
            3 | 4 => {
                let index = g.next() % 3;
                delta.extend_from_slice(
                    format!(r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":""#)
                        .as_bytes(),
                );
            }
            _ => delta.extend_from_slice(br#"{"content":""#),
        }
        delta.extend_from_slice(text);
        delta.push(b'"');
        if delta.starts_with(br#"{"tool_calls""#) {
            delta.extend_from_slice(b"}}]");
        }
        delta.push(b'}');
        out.extend_from_slice(
            format!(r#"{{"id":"{id}","object":"chat.completion.chunk","created":1,"model":"{model}","choices":[{{"index":{choice},"delta":"#).as_bytes(),
        );
        out.extend_from_slice(&delta);
        out.extend_from_slice(
            format!(r#","logprobs":null,"finish_reason":{finish}}}],"usage":null"#).as_bytes(),
        );
        out.extend_from_slice(obfuscation);
        out.push(b'}');
        if g.next() % 15 == 0 {
            out.push(b' ');
        }
        out.push(b'\n');
    }
    out
}

#[test]
fn alike_chunks_fast_path_equals_generic_path() {
    let mut g = Gen(0x2545_f491_4f6c_dd1d);
    let mut hits = 0;
    for _ in 0..400 {
        let stream = generated_alike(&mut g);
        hits += lockstep(&stream);
        assert_same_whole("alike", &stream);
    }
    assert!(hits > 4000, "fast path read only {hits} generated events");
}

#[test]
fn a_chunk_read_as_an_earlier_one_changes_the_state_as_it() {
    // the last fragment of a call is read as the bytes of the call's earlier one: the stream
    // still ends inside that call (no finish_reason), as the generic path says
    let chunk = |delta: &str, obfuscation: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":null}}],"usage":null,"obfuscation":"{obfuscation}"}}"#
        ) + "\n"
    };
    let stream = [
        chunk(r#"{"role":"assistant","content":""}"#, "a"),
        chunk(r#"{"content":"Hi"}"#, "b"),
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":""}}]}"#,
            "c",
        ),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}"#, "d"),
        chunk(r#"{"content":" there"}"#, "e"),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}"#, "ff"),
    ]
    .concat();
    assert_eq!(lockstep(stream.as_bytes()), 5);
    assert_same_whole("alike", stream.as_bytes());
    assert!(aggregated(stream.as_bytes(), stream.len(), true, false).contains("truncated"));
}

#[test]
fn chunks_that_differ_elsewhere_too_are_read_the_same() {
    // a timestamp per chunk: no chunk is alike the one before (the fast path stops keeping
    // them after a few, and tries again now and then); then alike chunks again
    let chunk = |created: usize, text: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":{created},"model":"m","choices":[{{"index":0,"delta":{{"content":"{text}"}},"logprobs":null,"finish_reason":null}}]}}"#
        ) + "\n"
    };
    let mut stream = String::from(
        r#"{"id":"c","created":0,"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
    );
    stream.push('\n');
    for i in 0..300 {
        let created = if i < 200 { i / (1 + i % 3) } else { 7 };
        stream.push_str(&chunk(created, ["a", " b", "\\n", "c"][i % 4]));
    }
    assert_eq!(lockstep(stream.as_bytes()), 301);
    assert_same_whole("created", stream.as_bytes());
}

/// Objects written as arrays (E90): serde reads a struct from an array of its fields, the
/// generic path finds an array that is not an object. Each line after a readable start: the
/// fast path declines it (lockstep) and the whole streams agree.
#[test]
fn arrays_where_objects_belong_take_the_generic_path() {
    let chat_start =
        r#"{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#;
    let call_start = r#"{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"f","arguments":""}}]}}]}"#;
    for line in [
        r#"{"id":"c","choices":[[0,{"content":"hi"},"stop"]]}"#,
        r#"{"id":"c","choices":[[],{"index":0,"delta":{"content":"hi"}}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}},[]]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":[null,"hi"]}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[[0,null,null,{"arguments":"x"}]]}}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":["x"]}]}}]}"#,
        r#"["c",null,null,null,null,null,[{"index":0,"delta":{"content":"hi"}}]]"#,
    ] {
        let stream = format!("{chat_start}\n{call_start}\n{line}\n");
        lockstep(stream.as_bytes());
        assert_same_whole(line, stream.as_bytes());
    }
    let start = concat!(
        r#"{"type":"message_start","message":{"id":"m","role":"assistant","content":[]}}"#,
        "\n",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    );
    for line in [
        r#"["content_block_delta",0,{"type":"text_delta","text":"hi"}]"#,
        r#"{"type":"content_block_delta","index":0,"delta":["text_delta","hi"]}"#,
    ] {
        let stream = format!("{start}\n{line}\n");
        lockstep_of("anthropic", stream.as_bytes());
        assert_same_whole_of("anthropic", line, stream.as_bytes());
    }
}

/// A chunk of choice 0 with `call` as its one tool-call fragment.
fn call_chunk(call: &str) -> String {
    format!(
        r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"tool_calls":[{call}]}},"finish_reason":null}}]}}"#
    ) + "\n"
}

#[test]
fn a_repeated_type_takes_the_fast_path_where_it_changes_nothing() {
    let opened = call_chunk(
        r#"{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":""}}"#,
    );
    let typed = call_chunk(
        r#"{"index":0,"id":null,"type":"function","function":{"arguments":"ab","name":null}}"#,
    );
    let finish = r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;
    // LiteLLM's stream objects: every fragment repeats the type, read by the fast path (the
    // second and third by the first one's bytes)
    let stream = [opened.clone(), typed.clone(), typed.clone(), typed.clone()].concat() + finish;
    assert_eq!(lockstep(stream.as_bytes()), 4);
    assert_same_whole("typed", stream.as_bytes());
    let message = aggregated(stream.as_bytes(), stream.len(), true, false);
    assert!(message.contains(r#""arguments":"ababab""#), "{message}");
    // a call opened without a type: the first typed fragment sets it (the generic path), the
    // next ones are read fast
    let untyped_open =
        call_chunk(r#"{"index":0,"id":"call_0","function":{"name":"f","arguments":""}}"#);
    let stream = [untyped_open.clone(), typed.clone(), typed.clone()].concat() + finish;
    assert_same_whole("typed later", stream.as_bytes());
    let fast = aggregated(stream.as_bytes(), stream.len(), true, false);
    assert!(fast.contains(r#""type":"function""#), "{fast}");
    // (a type other than the default shows in the message)
    let custom = call_chunk(r#"{"index":0,"type":"custom","function":{"arguments":"ab"}}"#);
    let custom_stream = [untyped_open, custom.clone(), custom].concat() + finish;
    assert_same_whole("custom later", custom_stream.as_bytes());
    let fast = aggregated(custom_stream.as_bytes(), custom_stream.len(), true, false);
    assert!(fast.contains(r#""type":"custom""#), "{fast}");
    assert_eq!(lockstep(stream.as_bytes()), 2);
    assert_eq!(lockstep(custom_stream.as_bytes()), 2);
    // another type where the call has one changes nothing either (set once): read fast; a
    // type without arguments is metadata the fold attaches to the call (the fragment without
    // it is ignored): read the generic way
    let other = call_chunk(r#"{"index":0,"type":"custom","function":{"arguments":"c"}}"#);
    let empty = call_chunk(r#"{"index":0,"type":"function","function":{"arguments":""}}"#);
    let stream = [opened.clone(), other, empty].concat() + finish;
    assert_eq!(lockstep(stream.as_bytes()), 2);
    assert_same_whole("other types", stream.as_bytes());
    // a fragment with a known id and no name may go to another call: the index it names is
    // not known to have a typed call after it (unless it had one), and a name may open a new
    // call at the index
    let second = call_chunk(r#"{"index":1,"id":"call_0","function":{"arguments":"x"}}"#);
    let typed_1 = call_chunk(r#"{"index":1,"type":"function","function":{"arguments":"y"}}"#);
    let named = call_chunk(r#"{"index":0,"id":"call_9","function":{"name":"g","arguments":"z"}}"#);
    let stream = [opened, second, typed_1, named, typed].concat() + finish;
    assert_same_whole("redirected", stream.as_bytes());
    assert_eq!(lockstep(stream.as_bytes()), 1);
}

/// The keys no step reads, in a choice and in its delta (vLLM's `stop_reason`, Azure's
/// `content_filter_results`, a proxy's own), and the usage chunk: every chunk on the typed
/// path, the same leaves and the same end.
#[test]
fn keys_of_no_step_and_the_usage_chunk_stay_on_the_fast_path() {
    let chunk = |delta: &str, extra: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":null,"stop_reason":null{extra}}}]}}
"#
        )
    };
    let stream = [
        chunk(r#"{"role":"assistant","content":""}"#, r#","content_filter_results":{}"#),
        chunk(r#"{"content":"a","x_delta":1}"#, r#","content_filter_results":{}"#),
        chunk(r#"{"content":"b","x_delta":1}"#, r#","content_filter_results":{}"#),
        chunk(r#"{"content":"c","x_delta":2}"#, r#","content_filter_results":{"hate":{"filtered":false}}"#),
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":0}},"x_gateway":"eu"}
"#
        .to_owned(),
    ]
    .concat();
    assert_eq!(lockstep(stream.as_bytes()), 5);
    assert_same_whole("keys of no step", stream.as_bytes());
}
