//! The engine's tests, one cargo target (`cargo test --no-default-features --test engine`), a
//! module per stage; `common` holds their shared helpers. Run one stage with a filter:
//! `cargo test --no-default-features --test engine batch::`.

mod common;

mod batch;
mod batch_records;
mod chunks;
mod edges_adapters;
mod events;
mod fastpath;
mod fastpath_anthropic;
mod fastpath_bedrock;
mod fastpath_detect;
mod fastpath_responses;
mod generic;
mod json_text;
mod provider_anthropic;
mod provider_bedrock_converse;
mod provider_gemini;
mod provider_ollama;
mod provider_openai_chat;
mod provider_openai_responses;
mod split;
