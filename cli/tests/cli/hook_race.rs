//! Two writers at the same moment where the host makes the write: each hook protocol's
//! before-event and the host's write cannot be one step, so Stella reports a race instead of
//! letting it pass in silence. Interleaved on purpose (before A, before B, write A, after A,
//! write B, after B): B's after-event answer names session A, when it wrote, and the `recover`
//! line that gives A's bytes back; A's next write is refused, naming B.

use serde_json::{Value, json};

use crate::common::*;

const A: &str = "0a0a0a0a-1111-4111-8111-aaaaaaaaaaaa";
const B: &str = "0b0b0b0b-2222-4222-8222-bbbbbbbbbbbb";

/// What the after-event told the model.
fn context(v: &Value) -> String {
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The answer names session `other`, and its `recover` line, run as given, gives `bytes`.
fn names_and_recovers(w: &World, told: &str, other: &str, bytes: &str) {
    assert!(
        told.contains(&format!("session {other} wrote notes.txt at ")),
        "{told}"
    );
    let line = told
        .lines()
        .find(|l| l.trim_start().starts_with("git stella recover"))
        .unwrap_or_else(|| panic!("no recover line: {told}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        &words[..4],
        ["git", "stella", "recover", "'notes.txt'"],
        "{line}"
    );
    assert_eq!(words[4], "--show", "{line}");
    let out = w.ok(&["recover", "notes.txt", "--show", words[5]]);
    assert_eq!(out, bytes.trim_end(), "{line}");
}

/// A's next write of notes.txt is refused, naming B.
fn next_write_refused_naming(v: &Value, other: &str) {
    assert!(denies(v), "{v}");
    let reason = v["reason"]
        .as_str()
        .or(v["hookSpecificOutput"]["permissionDecisionReason"].as_str())
        .unwrap();
    assert!(
        reason.contains(&format!("session {other} wrote it at")),
        "{reason}"
    );
}

fn claude(
    w: &World,
    session: &str,
    event: &str,
    tool: &str,
    input: Value,
    response: Option<Value>,
) -> Value {
    let mut v: Value =
        serde_json::from_str(&claude_fixture_text(w, "PostToolUse-Write-update.json")).unwrap();
    v["session_id"] = json!(session);
    v["hook_event_name"] = json!(event);
    v["tool_name"] = json!(tool);
    v["tool_input"] = input;
    v["tool_use_id"] = json!(format!("toolu_{session}_{tool}"));
    let o = v.as_object_mut().unwrap();
    o.remove("tool_response");
    o.remove("duration_ms");
    if let Some(r) = response {
        v["tool_response"] = r;
    }
    v
}

#[test]
fn claude_code_the_replacing_write_is_told_whose_write_it_replaced() {
    let w = World::new();
    let base = "alpha\nbeta\n";
    w.write("notes.txt", base);
    let file = w.repo.join("notes.txt");
    let read = json!({"file_path": file});
    let shown = json!({"type": "text", "file": {"filePath": file, "content": base}});
    for s in [A, B] {
        assert_eq!(
            hook_json(
                &w,
                "claude-code",
                &claude(&w, s, "PreToolUse", "Read", read.clone(), None)
            ),
            Value::Null
        );
        hook_json(
            &w,
            "claude-code",
            &claude(
                &w,
                s,
                "PostToolUse",
                "Read",
                read.clone(),
                Some(shown.clone()),
            ),
        );
    }
    let write = |_: &str, content: &str| json!({"file_path": file, "content": content});
    let response = |content: &str, original: &str| json!({"type": "update", "filePath": file, "content": content, "originalFile": original});
    let (a, b) = ("alpha\nA\n", "alpha\nB\n");
    assert_eq!(
        hook_json(
            &w,
            "claude-code",
            &claude(&w, A, "PreToolUse", "Write", write(A, a), None)
        ),
        Value::Null
    );
    assert_eq!(
        hook_json(
            &w,
            "claude-code",
            &claude(&w, B, "PreToolUse", "Write", write(B, b), None)
        ),
        Value::Null
    );
    w.write("notes.txt", a);
    let after_a = hook_json(
        &w,
        "claude-code",
        &claude(
            &w,
            A,
            "PostToolUse",
            "Write",
            write(A, a),
            Some(response(a, base)),
        ),
    );
    assert_eq!(after_a, Value::Null, "A's write replaced nothing");
    w.write("notes.txt", b);
    let after_b = hook_json(
        &w,
        "claude-code",
        &claude(
            &w,
            B,
            "PostToolUse",
            "Write",
            write(B, b),
            Some(response(b, a)),
        ),
    );
    let told = context(&after_b);
    names_and_recovers(&w, &told, A, a);
    assert!(told.contains("so Write replaced their write"), "{told}");
    // Both versions are kept.
    let versions = w.ok(&["recover", "notes.txt"]);
    assert!(versions.lines().count() >= 3, "{versions}");
    let again = hook_json(
        &w,
        "claude-code",
        &claude(&w, A, "PreToolUse", "Write", write(A, "alpha\nA2\n"), None),
    );
    next_write_refused_naming(&again, B);
}

fn codex(w: &World, session: &str, event: &str, patch: &str) -> Value {
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo_root().join("tests/fixtures/codex-0.169.0/PostToolUse-apply_patch-update.json"),
        )
        .unwrap(),
    )
    .unwrap();
    v["session_id"] = json!(session);
    v["cwd"] = json!(w.repo);
    v["hook_event_name"] = json!(event);
    v["tool_input"] = json!({"command": patch});
    v["tool_use_id"] = json!(format!("call_{session}"));
    if event == "PreToolUse" {
        v.as_object_mut().unwrap().remove("tool_response");
    }
    v
}

#[test]
fn codex_the_replacing_patch_is_told_whose_write_it_replaced() {
    let w = World::new();
    let base = "alpha\nbeta\n";
    w.write("notes.txt", base);
    for s in [A, B] {
        w.ok(&["session", "start", "--id", s]);
        w.ok(&["--session", s, "read", "notes.txt"]);
    }
    let patch = |to: &str| {
        format!(
            "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+{to}\n*** End Patch\n"
        )
    };
    let (a, b) = ("alpha\nA\n", "alpha\nB\n");
    assert!(!denies(&hook_json(
        &w,
        "codex",
        &codex(&w, A, "PreToolUse", &patch("A"))
    )));
    assert!(!denies(&hook_json(
        &w,
        "codex",
        &codex(&w, B, "PreToolUse", &patch("B"))
    )));
    w.write("notes.txt", a);
    assert_eq!(
        hook_json(&w, "codex", &codex(&w, A, "PostToolUse", &patch("A"))),
        Value::Null
    );
    w.write("notes.txt", b);
    let after_b = hook_json(&w, "codex", &codex(&w, B, "PostToolUse", &patch("B")));
    assert_eq!(
        after_b["hookSpecificOutput"]["hookEventName"],
        "PostToolUse"
    );
    names_and_recovers(&w, &context(&after_b), A, a);
    let again = hook_json(&w, "codex", &codex(&w, A, "PreToolUse", &patch("A2")));
    next_write_refused_naming(&again, B);
}

fn gemini(
    w: &World,
    session: &str,
    event: &str,
    tool: &str,
    input: Value,
    response: Option<Value>,
) -> Value {
    let mut v = gemini_payload(w, event, tool, input, response);
    v["session_id"] = json!(session);
    v
}

#[test]
fn gemini_cli_the_replacing_write_is_told_whose_write_it_replaced_even_when_it_landed_first() {
    let w = World::new();
    let base = "alpha\nbeta\n";
    w.write("notes.txt", base);
    let read = json!({"file_path": "notes.txt"});
    for s in [A, B] {
        hook_json(
            &w,
            "gemini",
            &gemini(&w, s, "BeforeTool", "read_file", read.clone(), None),
        );
        hook_json(
            &w,
            "gemini",
            &gemini(
                &w,
                s,
                "AfterTool",
                "read_file",
                read.clone(),
                Some(json!({"llmContent": base})),
            ),
        );
    }
    let write = |content: &str| json!({"file_path": "notes.txt", "content": content});
    let done = Some(json!({"llmContent": "Successfully overwrote file"}));
    let (a, b) = ("alpha\nA\n", "alpha\nB\n");
    assert!(!denies(&hook_json(
        &w,
        "gemini",
        &gemini(&w, A, "BeforeTool", "write_file", write(a), None)
    )));
    assert!(!denies(&hook_json(
        &w,
        "gemini",
        &gemini(&w, B, "BeforeTool", "write_file", write(b), None)
    )));
    // B's write lands first, then A's replaces it; A's after-event is the first to hear.
    w.write("notes.txt", b);
    w.write("notes.txt", a);
    let after_b = hook_json(
        &w,
        "gemini",
        &gemini(&w, B, "AfterTool", "write_file", write(b), done.clone()),
    );
    assert_eq!(
        after_b,
        json!({}),
        "nothing recorded yet by A when B's after-event runs"
    );
    let after_a = hook_json(
        &w,
        "gemini",
        &gemini(&w, A, "AfterTool", "write_file", write(a), done.clone()),
    );
    let told = context(&after_a);
    assert_eq!(after_a["hookSpecificOutput"]["hookEventName"], "AfterTool");
    names_and_recovers(&w, &told, B, b);
    assert!(
        told.contains("so write_file replaced their write"),
        "{told}"
    );
    let again = hook_json(
        &w,
        "gemini",
        &gemini(
            &w,
            B,
            "BeforeTool",
            "write_file",
            write("alpha\nB2\n"),
            None,
        ),
    );
    next_write_refused_naming(&again, A);
}

#[test]
fn a_write_the_check_already_saw_is_no_race() {
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    let read = json!({"file_path": "notes.txt"});
    let write = |content: &str| json!({"file_path": "notes.txt", "content": content});
    let done = Some(json!({"llmContent": "ok"}));
    // A writes; B reads A's bytes afterwards, then writes: sequential, nothing to report,
    // even within the same second.
    hook_json(
        &w,
        "gemini",
        &gemini(&w, A, "BeforeTool", "write_file", write("alpha\nA\n"), None),
    );
    w.write("notes.txt", "alpha\nA\n");
    hook_json(
        &w,
        "gemini",
        &gemini(
            &w,
            A,
            "AfterTool",
            "write_file",
            write("alpha\nA\n"),
            done.clone(),
        ),
    );
    hook_json(
        &w,
        "gemini",
        &gemini(&w, B, "BeforeTool", "read_file", read.clone(), None),
    );
    hook_json(
        &w,
        "gemini",
        &gemini(
            &w,
            B,
            "AfterTool",
            "read_file",
            read,
            Some(json!({"llmContent": "alpha\nA\n"})),
        ),
    );
    assert!(!denies(&hook_json(
        &w,
        "gemini",
        &gemini(&w, B, "BeforeTool", "write_file", write("alpha\nB\n"), None)
    )));
    w.write("notes.txt", "alpha\nB\n");
    let after = hook_json(
        &w,
        "gemini",
        &gemini(&w, B, "AfterTool", "write_file", write("alpha\nB\n"), done),
    );
    assert_eq!(after, json!({}));
}
