//! `git stella hook gemini` fed Gemini CLI's payloads, as `docs/hooks/reference.md` and
//! `docs/tools/file-system.md` shipped in `@google/gemini-cli@0.61.0` (npm registry) describe them
//! (the real client is driven in `gemini_real.rs`).

use serde_json::{Value, json};

use crate::common::*;

// ---- Gemini CLI ----

fn gemini(w: &World, event: &str, tool: &str, input: Value, response: Option<Value>) -> Value {
    gemini_payload(w, event, tool, input, response)
}

#[test]
fn gemini_records_reads_and_denies_a_stale_write_with_decision_deny() {
    let w = World::new();
    w.write("notes.txt", "seen\n");
    let path = w.repo.join("notes.txt");
    let read = json!({"file_path": path});
    assert_eq!(
        answer(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "read_file", read.clone(), None)
        ),
        json!({})
    );
    let resp = json!({"llmContent": "seen\n", "returnDisplay": ""});
    assert_eq!(
        answer(
            &w,
            "gemini",
            &gemini(
                &w,
                "AfterTool",
                "read_file",
                read.clone(),
                Some(resp.clone())
            )
        ),
        json!({})
    );
    w.write("notes.txt", "theirs\n");
    let write = json!({"file_path": path, "content": "mine\n"});
    assert_eq!(
        answer(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "write_file", write.clone(), None)
        ),
        json!({"decision": "deny", "reason": refusal("notes.txt", "seen", "theirs")})
    );
    let replace = json!({"file_path": "notes.txt", "instruction": "x", "old_string": "theirs", "new_string": "ours"});
    assert_eq!(
        answer(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "replace", replace.clone(), None)
        )["decision"],
        "deny"
    );
    // A re-read (a ranged one: the disk did not change around it) and the edit passes.
    let ranged = json!({"file_path": path, "offset": 0, "limit": 1});
    answer(
        &w,
        "gemini",
        &gemini(&w, "BeforeTool", "read_file", ranged.clone(), None),
    );
    answer(
        &w,
        "gemini",
        &gemini(
            &w,
            "AfterTool",
            "read_file",
            ranged,
            Some(json!({"llmContent": "[truncated]\ntheirs"})),
        ),
    );
    assert_eq!(
        answer(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "replace", replace.clone(), None)
        ),
        json!({})
    );
    w.write("notes.txt", "ours\n");
    answer(
        &w,
        "gemini",
        &gemini(
            &w,
            "AfterTool",
            "replace",
            replace,
            Some(json!({"llmContent": "ok"})),
        ),
    );
    let s = "5f0c8d1e-2a3b-4c5d-9e8f-7a6b5c4d3e2f";
    assert_eq!(w.ok(&["--session", s, "status"]), "unchanged  notes.txt");
}

#[test]
fn gemini_a_ranged_read_that_raced_a_change_needs_a_re_read() {
    let w = World::new();
    w.write("notes.txt", "seen\n");
    let path = w.repo.join("notes.txt");
    let write = json!({"file_path": path, "content": "mine\n"});
    // A file changed between BeforeTool and AfterTool of a ranged read: either version may have
    // been seen, so the next write needs a re-read.
    let ranged = json!({"file_path": path, "offset": 0, "limit": 1});
    answer(
        &w,
        "gemini",
        &gemini(&w, "BeforeTool", "read_file", ranged.clone(), None),
    );
    w.write("notes.txt", "during\n");
    answer(
        &w,
        "gemini",
        &gemini(
            &w,
            "AfterTool",
            "read_file",
            ranged,
            Some(json!({"llmContent": "during"})),
        ),
    );
    let denied = answer(
        &w,
        "gemini",
        &gemini(&w, "BeforeTool", "write_file", write, None),
    );
    assert!(
        denied["reason"].as_str().unwrap().starts_with(
            "refusing to write: notes.txt\nnotes.txt changed while this session was reading it"
        ),
        "{denied}"
    );
}
