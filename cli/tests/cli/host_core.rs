//! One host core serves every adapter: each behaviour the adapters once disagreed on is now one
//! rule, checked here through a host other than Claude Code (whose own tests cover it there).
//!
//! Not per command: each checks every host's adapter at once, through `git stella hook <host>`;
//! a host's own payloads are in `claude_code.rs` and `hook_<host>.rs`.

use serde_json::{Value, json};

use crate::common::*;

const GEMINI_SESSION: &str = "5f0c8d1e-2a3b-4c5d-9e8f-7a6b5c4d3e2f";

fn gemini(w: &World, event: &str, tool: &str, input: Value, response: Option<Value>) -> Value {
    gemini_payload(w, event, tool, input, response)
}

fn codex(w: &World, event: &str, patch: &str) -> Value {
    json!({
        "session_id": "01a22f0a-7e78-7413-8804-f360d07812f7",
        "cwd": w.repo,
        "hook_event_name": event,
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
        "tool_use_id": "call_1",
    })
}

/// Run a hook; exit status, stdout as JSON (`Null` when empty), stderr.
fn call(w: &World, agent: &str, payload: &Value) -> (i32, Value, String) {
    let out = w.run_stdin(&["hook", agent], payload.to_string().as_bytes());
    let text = stdout(&out);
    let v = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (code(&out), v, stderr(&out))
}

#[test]
fn a_read_reported_only_after_it_happened_needs_a_re_read_before_a_write() {
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    let ranged = json!({"file_path": "notes.txt", "start_line": 1, "end_line": 2});
    let shown = Some(json!({"llmContent": "alpha\nbeta\n"}));
    let replace = gemini(
        &w,
        "BeforeTool",
        "replace",
        json!({"file_path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA"}),
        None,
    );
    // No before-event: the model saw part of some version, which one nobody can tell.
    let (c, _, _) = call(
        &w,
        "gemini",
        &gemini(&w, "AfterTool", "read_file", ranged.clone(), shown.clone()),
    );
    assert_eq!(c, 0);
    let (c, v, _) = call(&w, "gemini", &replace);
    assert_eq!(c, 0);
    assert!(denies(&v), "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("re-read notes.txt"),
        "{v}"
    );
    // With the before-event the disk was seen not to change: the read counts.
    let (c, _, _) = call(
        &w,
        "gemini",
        &gemini(&w, "BeforeTool", "read_file", ranged.clone(), None),
    );
    assert_eq!(c, 0);
    // Between the two events the scratch note waits in the work tree's private folder.
    let scratch = w
        .repo
        .join(".stella/private/hooks/gemini")
        .join(GEMINI_SESSION);
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 1);
    call(
        &w,
        "gemini",
        &gemini(&w, "AfterTool", "read_file", ranged, shown),
    );
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    let (c, v, _) = call(&w, "gemini", &replace);
    assert_eq!((c, v), (0, json!({})));
}

#[test]
fn what_a_host_does_to_the_bytes_on_the_way_to_disk_never_refuses_its_own_write() {
    // The session writes LF text; the host stores it with CRLF, a BOM, or without the final
    // newline (as Gemini CLI does for a CRLF file). Its next edit is its own and is allowed.
    for (name, on_disk) in [
        ("crlf", "one\r\ntwo\r\nthree\r\n"),
        ("bom", "\u{feff}one\ntwo\nthree\n"),
        ("no-final-newline", "one\ntwo\nthree"),
    ] {
        let w = World::new();
        let file = format!("{name}.txt");
        w.write(&file, "old\n");
        let input = json!({"file_path": file, "content": "one\ntwo\nthree\n"});
        call(
            &w,
            "gemini",
            &gemini(
                &w,
                "BeforeTool",
                "read_file",
                json!({"file_path": file}),
                None,
            ),
        );
        call(
            &w,
            "gemini",
            &gemini(
                &w,
                "AfterTool",
                "read_file",
                json!({"file_path": file}),
                Some(json!({"llmContent": "old\n"})),
            ),
        );
        let (_, v, _) = call(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "write_file", input.clone(), None),
        );
        assert_eq!(v, json!({}), "{name}");
        w.write(&file, on_disk);
        let (c, _, e) = call(
            &w,
            "gemini",
            &gemini(
                &w,
                "AfterTool",
                "write_file",
                input,
                Some(json!({"llmContent": "ok"})),
            ),
        );
        assert_eq!(c, 0, "{name}: {e}");
        let edit = json!({"file_path": file, "old_string": "two", "new_string": "TWO"});
        let (_, v, _) = call(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "replace", edit, None),
        );
        assert_eq!(v, json!({}), "{name}: the session's own write was refused");
        // Content that is not the tool's is still someone else's change.
        w.write(&file, "one\ntwo\nthree\nfour\n");
        let edit = json!({"file_path": file, "old_string": "two", "new_string": "TWO"});
        let (_, v, _) = call(
            &w,
            "gemini",
            &gemini(&w, "BeforeTool", "replace", edit, None),
        );
        assert!(denies(&v), "{name}: {v}");
    }
}

#[test]
fn a_check_before_a_write_never_creates_a_session() {
    let w = World::new();
    // Committed: a blind change of it has nothing to keep, so nothing to record before it.
    w.write("notes.txt", "alpha\n");
    w.git(&["add", "notes.txt"]);
    w.git(&["commit", "-q", "-m", "notes"]);
    let patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n";
    let (c, v, _) = call(&w, "codex", &codex(&w, "PreToolUse", patch));
    assert_eq!((c, v), (0, Value::Null));
    assert_eq!(w.ok(&["session", "list"]), "");
    // The after-event records, and so creates it.
    w.write("notes.txt", "ALPHA\n");
    let (c, _, e) = call(&w, "codex", &codex(&w, "PostToolUse", patch));
    assert_eq!(c, 0, "{e}");
    assert!(
        w.ok(&["session", "list"])
            .contains("01a22f0a-7e78-7413-8804-f360d07812f7")
    );
}

#[test]
fn every_host_says_what_opening_the_workspace_had_to_say() {
    let w = World::new();
    w.write("notes.txt", "alpha\n");
    w.ok(&["init"]);
    // A copy of the checkout gets its own id, and the hook says so on stderr.
    let copy = w.base().join("copy");
    let status = std::process::Command::new("cp")
        .args(["-a"])
        .arg(&w.repo)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let mut p = gemini(
        &w,
        "AfterTool",
        "read_file",
        json!({"file_path": "notes.txt"}),
        Some(json!({"llmContent": "alpha\n"})),
    );
    p["cwd"] = json!(copy);
    let mut cmd = w.stella_in(&copy);
    cmd.args(["hook", "gemini"]);
    let out = feed(cmd, p.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stella: this checkout is a copy of"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_host_keeps_the_time_budget_and_fail_closed_denies_a_write_that_ran_out() {
    let w = World::new();
    w.write("notes.txt", "alpha\n");
    w.ok(&["init"]);
    w.write(".stella/config.toml", "[hooks]\non-error = \"deny\"\n");
    // The owner record is gone and another process holds its lock: the hook waits for it.
    let mut holder = hold_owner_lock(&w);
    let patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n";
    let mut cmd = w.stella();
    cmd.args(["hook", "codex"])
        .env("STELLA_HOOK_TIMEOUT_MS", "500");
    let started = std::time::Instant::now();
    let out = feed(cmd, codex(&w, "PreToolUse", patch).to_string().as_bytes());
    let took = started.elapsed();
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(denies(&v), "{v}");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .ends_with(
                "the hook did not finish within its time budget of 500ms; nothing more was done"
            ),
        "{v}"
    );
    assert!(took.as_secs() < 10, "took {took:?}");
    assert_eq!(w.read("notes.txt"), "alpha\n");
}

/// A call of each host that fails open (it runs a tool whatever a failed hook said): Qwen Code's
/// edit, Copilot CLI's edit, OpenCode's write, as each sends them.
fn fails_open_writes(w: &World) -> [(&'static str, Value); 3] {
    let notes = w.repo.join("notes.txt");
    [
        (
            "qwen",
            json!({"session_id": "s-1", "cwd": w.repo, "hook_event_name": "PreToolUse",
                "tool_name": "edit", "tool_use_id": "toolu_1",
                "tool_input": {"file_path": notes, "old_string": "alpha", "new_string": "ALPHA"}}),
        ),
        (
            "copilot",
            json!({"sessionId": "s-1", "timestamp": 1, "cwd": w.repo, "toolName": "edit",
                "toolArgs": {"path": notes, "old_str": "alpha", "new_str": "ALPHA"}}),
        ),
        (
            "opencode",
            json!({"session_id": "s-1", "cwd": w.repo, "hook_event_name": "tool.execute.before",
                "tool_name": "write", "tool_use_id": "call_1", "tool_response": null,
                "tool_input": {"filePath": notes, "content": "mine\n"}}),
        ),
    ]
}

#[test]
fn where_the_host_fails_open_a_write_stella_could_not_check_is_denied_unless_the_project_allows_it()
{
    let w = World::new();
    w.write("notes.txt", "alpha\n");
    w.ok(&["init"]);
    // A slow store: the owner record gone and its lock held; the hook's budget runs out.
    let mut holder = hold_owner_lock(&w);
    for (agent, payload) in fails_open_writes(&w) {
        let mut cmd = w.stella();
        cmd.args(["hook", agent])
            .env("STELLA_HOOK_TIMEOUT_MS", "500");
        let started = std::time::Instant::now();
        let out = feed(cmd, payload.to_string().as_bytes());
        assert!(started.elapsed().as_secs() < 10, "{agent}");
        assert_eq!(code(&out), 0, "{agent}: {}", stderr(&out));
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let reason = [
            &v["hookSpecificOutput"]["permissionDecisionReason"],
            &v["permissionDecisionReason"],
            &v["reason"],
        ]
        .into_iter()
        .find_map(Value::as_str)
        .unwrap_or_else(|| panic!("{agent}: no deny in {v}"));
        assert!(
            reason.ends_with(
                "the hook did not finish within its time budget of 500ms; nothing more was done"
            ),
            "{agent}: {reason}"
        );
    }
    holder.kill().unwrap();
    holder.wait().unwrap();
    // An unreadable store (the data folder is a file): denied the same way.
    let blocked = w.base().join("not-a-folder");
    std::fs::write(&blocked, "").unwrap();
    for (agent, payload) in fails_open_writes(&w) {
        let mut cmd = w.stella();
        cmd.args(["hook", agent]).env("STELLA_HOME", &blocked);
        let out = feed(cmd, payload.to_string().as_bytes());
        assert_eq!(code(&out), 0, "{agent}: {}", stderr(&out));
        assert!(stdout(&out).contains("deny"), "{agent}: {}", stdout(&out));
    }
    // A project that chose to let writes through when Stella fails gets that, as each host
    // reads it: Qwen Code exit 1, Copilot CLI (for which 1 is a deny) and OpenCode's plugin 0.
    w.write(".stella/config.toml", "[hooks]\non-error = \"allow\"\n");
    for (agent, payload) in fails_open_writes(&w) {
        let mut cmd = w.stella();
        cmd.args(["hook", agent]).env("STELLA_HOME", &blocked);
        let out = feed(cmd, payload.to_string().as_bytes());
        assert!(!stdout(&out).contains("deny"), "{agent}: {}", stdout(&out));
        assert!(
            stderr(&out).starts_with("stella: error: "),
            "{agent}: {}",
            stderr(&out)
        );
        assert_eq!(code(&out), if agent == "qwen" { 1 } else { 0 }, "{agent}");
    }
    assert_eq!(w.read("notes.txt"), "alpha\n");
}

// ---- all adapters ----

#[test]
fn hooks_do_nothing_outside_a_repository_and_fail_open_on_a_bad_payload() {
    let w = World::new();
    let outside = w.base().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let p = json!({"session_id": "s1", "cwd": outside, "hook_event_name": "BeforeTool",
        "tool_name": "write_file", "tool_input": {"file_path": outside.join("f"), "content": "x"}});
    let out = w.run_stdin(&["hook", "gemini"], p.to_string().as_bytes());
    assert_eq!(
        (code(&out), stdout(&out), stderr(&out)),
        (0, "{}\n".into(), String::new())
    );
    for agent in ["codex", "gemini", "cursor"] {
        let out = w.run_stdin(&["hook", agent], b"not json");
        assert_eq!(code(&out), 1, "{agent}");
        assert_eq!(stdout(&out), "", "{agent}");
        assert!(
            stderr(&out)
                .starts_with("stella: error: the hook payload is not valid JSON\ncaused by: "),
            "{agent}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_failing_hook_denies_writes_but_never_reads_when_the_project_chose_fail_closed() {
    let w = World::new();
    let file = w.repo.join("README");
    let calls: [(&str, Value, Value); 3] = [
        (
            "codex",
            codex(
                &w,
                "PreToolUse",
                "*** Begin Patch\n*** Update File: README\n@@\n-hello\n+HELLO\n*** End Patch\n",
            ),
            codex(
                &w,
                "PostToolUse",
                "*** Begin Patch\n*** Update File: README\n@@\n-hello\n+HELLO\n*** End Patch\n",
            ),
        ),
        (
            "gemini",
            gemini(
                &w,
                "BeforeTool",
                "replace",
                json!({"file_path": file, "old_string": "hello", "new_string": "HELLO"}),
                None,
            ),
            gemini(
                &w,
                "AfterTool",
                "read_file",
                json!({"file_path": file}),
                Some(json!({"llmContent": "hello\n"})),
            ),
        ),
        (
            "cursor",
            cursor(
                &w,
                "preToolUse",
                json!({"tool_name": "Write", "tool_input": {"file_path": file, "contents": "HELLO\n"}}),
            ),
            cursor(
                &w,
                "postToolUse",
                json!({"tool_name": "Write", "tool_input": {"file_path": file, "contents": "HELLO\n"}}),
            ),
        ),
    ];
    // Stella's data dir cannot be created: every call fails inside the hook.
    let broken = |agent: &str, payload: &Value| {
        let mut cmd = w.stella();
        cmd.args(["hook", agent])
            .env("STELLA_HOME", w.repo.join("README").join("stella"));
        feed(cmd, payload.to_string().as_bytes())
    };
    // By default a failing hook lets the tool run: exit 1, the error on stderr.
    for (agent, write, _) in &calls {
        let out = broken(agent, write);
        assert_eq!((code(&out), stdout(&out)), (1, String::new()), "{agent}");
        assert!(
            stderr(&out).starts_with("stella: error: could not create the data dir '"),
            "{agent}: {}",
            stderr(&out)
        );
    }
    // Fail-closed: the write is denied in the agent's own protocol, with the error as the
    // reason; a read or an after-the-fact call still fails open.
    w.write(".stella/config.toml", "[hooks]\non-error = \"deny\"\n");
    for (agent, write, other) in &calls {
        let out = broken(agent, write);
        assert_eq!(code(&out), 0, "{agent}: {}", stderr(&out));
        let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let reason = match *agent {
            "codex" => {
                assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
                answer["hookSpecificOutput"]["permissionDecisionReason"].clone()
            }
            "gemini" => {
                assert_eq!(answer["decision"], "deny");
                answer["reason"].clone()
            }
            _ => {
                assert_eq!(
                    (&answer["permission"], &answer["decision"]),
                    (&json!("deny"), &json!("deny"))
                );
                answer["agent_message"].clone()
            }
        };
        assert!(
            reason.as_str().unwrap().starts_with(
                "Stella could not check this call, and this project refuses writes when the check fails (fail-closed). Nothing was written.\nstella: error: could not create the data dir '"
            ),
            "{agent}: {reason}"
        );
        let out = broken(agent, other);
        assert_eq!((code(&out), stdout(&out)), (1, String::new()), "{agent}");
    }
    assert_eq!(w.read("README"), "hello\n");
}
