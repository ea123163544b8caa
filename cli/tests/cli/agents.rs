//! The Codex CLI, Gemini CLI and Cursor hook adapters, end to end, from real payload shapes.
//!
//! Where the shapes come from (none of the three clients runs offline here):
//! - Codex: the JSON Schemas `pre-tool-use.command.input` and `post-tool-use.command.input`
//!   embedded in the `codex` binary of `@openai/codex@0.171.0-linux-x64` (npm registry): every
//!   required field is present below.
//! - Gemini CLI: `docs/hooks/reference.md` and `docs/tools/file-system.md` shipped in
//!   `@google/gemini-cli@0.61.0` (npm registry).
//! - Cursor: Cursor's hooks documentation (cursor.com/docs/agent/hooks) as reproduced by hook
//!   libraries; not captured from a running client.

use serde_json::{Value, json};

use crate::common::*;

fn hook(w: &World, agent: &str, payload: &Value) -> std::process::Output {
    w.run_stdin(&["hook", agent], payload.to_string().as_bytes())
}

/// Run a hook that must succeed; its stdout as JSON (`Null` when it printed nothing).
fn answer(w: &World, agent: &str, payload: &Value) -> Value {
    let out = hook(w, agent, payload);
    assert_eq!(code(&out), 0, "hook {agent} failed: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "hook {agent} said something on stderr");
    let text = stdout(&out);
    if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

fn refusal(path: &str, seen: &str, now: &str) -> String {
    write_refusal(path, &format!("@@ -1 +1 @@\n-{seen}\n+{now}"))
}

// ---- Codex ----

fn codex_schema(name: &str) -> Value {
    let path = repo_root().join(format!("tests/fixtures/codex-0.171.0/{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Check an object against one of Codex's own schemas as far as these shapes need: every
/// required key present, no key the schema does not know (they say `additionalProperties: false`).
fn conforms(value: &Value, schema: &Value) {
    let obj = value.as_object().unwrap();
    let known = schema["properties"].as_object().unwrap();
    for r in schema["required"].as_array().into_iter().flatten() {
        assert!(
            obj.contains_key(r.as_str().unwrap()),
            "missing {r} in {value}"
        );
    }
    for k in obj.keys() {
        assert!(known.contains_key(k), "{k} is not in Codex's schema");
    }
}

fn codex(w: &World, event: &str, patch: &str) -> Value {
    let mut p = json!({
        "session_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "transcript_path": null,
        "cwd": w.repo,
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
        "tool_use_id": "call_1",
        "turn_id": "turn_1",
    });
    if event == "PostToolUse" {
        p["tool_response"] = json!("Success. Updated the following files:\n");
        conforms(&p, &codex_schema("post-tool-use.command.input"));
    } else {
        conforms(&p, &codex_schema("pre-tool-use.command.input"));
    }
    p
}

#[test]
fn codex_refuses_a_patch_over_a_change_it_never_saw_and_parses_moves_and_deletes() {
    let w = World::new();
    w.write("src/keep.rs", "keep\n");
    w.write("src/old.rs", "old\n");
    w.write("src/gone.rs", "gone\n");
    w.write("src/blind.rs", "someone's\n");
    // The session writes three files through patches (reads go through the shell, unseen).
    let create = "*** Begin Patch\n*** Add File: src/new.rs\n+fresh\n*** End Patch\n";
    assert_eq!(
        answer(&w, "codex", &codex(&w, "PreToolUse", create)),
        Value::Null
    );
    w.write("src/new.rs", "fresh\n");
    assert_eq!(
        answer(&w, "codex", &codex(&w, "PostToolUse", create)),
        Value::Null
    );

    // Someone edits the file the session created.
    w.write("src/new.rs", "theirs\n");
    let update = "*** Begin Patch\n*** Update File: src/new.rs\n@@\n-fresh\n+mine\n*** End Patch\n";
    assert_eq!(
        answer(&w, "codex", &codex(&w, "PreToolUse", update)),
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": refusal("src/new.rs", "fresh", "theirs"),
        }})
    );

    // The deny is one Codex accepts: known keys only, and a decision from its enum.
    let denied = answer(&w, "codex", &codex(&w, "PreToolUse", update));
    let out_schema = codex_schema("pre-tool-use.command.output");
    conforms(&denied, &out_schema);
    conforms(
        &denied["hookSpecificOutput"],
        &out_schema["definitions"]["PreToolUseHookSpecificOutputWire"],
    );
    assert!(
        out_schema["definitions"]["PreToolUsePermissionDecisionWire"]["enum"]
            .as_array()
            .unwrap()
            .contains(&denied["hookSpecificOutput"]["permissionDecision"])
    );

    // A patch over several files the session never touched: blind writes, all allowed.
    let many = "*** Begin Patch\n\
*** Update File: src/blind.rs\n@@\n-someone's\n+mine\n\
*** Update File: src/old.rs\n*** Move to: src/moved.rs\n@@\n-old\n+moved\n\
*** Delete File: src/gone.rs\n\
*** Add File: src/added.rs\n+added\n\
*** End Patch\n";
    assert_eq!(
        answer(&w, "codex", &codex(&w, "PreToolUse", many)),
        Value::Null
    );
    // Codex applies it; the hook records every file of it, and says that the bytes it replaced
    // unseen (no commit holds them) were kept first.
    w.write("src/blind.rs", "mine\n");
    std::fs::remove_file(w.repo.join("src/old.rs")).unwrap();
    w.write("src/moved.rs", "moved\n");
    std::fs::remove_file(w.repo.join("src/gone.rs")).unwrap();
    w.write("src/added.rs", "added\n");
    let told = ["src/blind.rs", "src/old.rs", "src/gone.rs"]
        .map(|p| format!("Stella: kept the previous {p}: git stella recover {p}"))
        .join("\n\n");
    assert_eq!(
        answer(&w, "codex", &codex(&w, "PostToolUse", many)),
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": told}})
    );

    let session = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    assert_eq!(
        w.ok(&["--session", session, "status"]),
        "unchanged  src/added.rs\nunchanged  src/blind.rs\nunchanged  src/moved.rs\nchanged    src/new.rs"
    );
    // Now someone edits the moved file: deleting it, or moving it on, is refused.
    w.write("src/moved.rs", "edited\n");
    // Codex may send absolute paths in the headers.
    let again = format!(
        "*** Begin Patch\n*** Delete File: {}\n*** Update File: src/keep.rs\n@@\n-keep\n+k\n*** End Patch\n",
        w.repo.join("src/moved.rs").display()
    );
    let denied = answer(&w, "codex", &codex(&w, "PreToolUse", &again));
    let reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("refusing to delete: src/moved.rs\n"),
        "{reason}"
    );
    assert!(!reason.contains("src/keep.rs"), "{reason}");
    // Another tool passes untouched (the shell, Bash, is routed through the shell guard: see
    // shell_routes.rs).
    let mut other = codex(&w, "PreToolUse", "");
    other["tool_name"] = json!("view_image");
    other["tool_input"] = json!({"path": "src/moved.rs"});
    assert_eq!(answer(&w, "codex", &other), Value::Null);
}

#[test]
fn a_codex_update_is_recorded_as_the_patch_applied_to_what_the_session_saw() {
    let w = World::new();
    let create = "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** End Patch\n";
    w.write("a.txt", "one\ntwo\n");
    answer(&w, "codex", &codex(&w, "PostToolUse", create));
    let update = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n";
    assert_eq!(
        answer(&w, "codex", &codex(&w, "PreToolUse", update)),
        Value::Null
    );
    // Codex wrote the patch, and someone appended a line before the hook ran: not absorbed.
    w.write("a.txt", "one\nTWO\nthree\n");
    answer(&w, "codex", &codex(&w, "PostToolUse", update));
    let s = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    assert_eq!(w.ok(&["--session", s, "status"]), "changed    a.txt");
}

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

// ---- Cursor ----

fn cursor(w: &World, event: &str, fields: Value) -> Value {
    let mut p = json!({
        "hook_event_name": event,
        "conversation_id": "c0ffee00-1234-4abc-8def-001122334455",
        "generation_id": "gen-1",
        "workspace_roots": [w.repo],
        "cursor_version": "2.0.77",
    });
    for (k, v) in fields.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

#[test]
fn cursor_records_what_the_agent_saw_and_denies_with_agent_message() {
    let w = World::new();
    w.write("app.ts", "const a = 1\n");
    let path = w.repo.join("app.ts");
    assert_eq!(
        answer(
            &w,
            "cursor",
            &cursor(
                &w,
                "beforeReadFile",
                json!({"file_path": path, "content": "const a = 1\n", "attachments": []})
            )
        ),
        json!({"permission": "allow"})
    );
    w.write("app.ts", "const a = 2\n");
    let write = json!({"tool_name": "Write", "tool_input": {"file_path": path, "contents": "const a = 3\n"}});
    let msg = refusal("app.ts", "const a = 1", "const a = 2");
    assert_eq!(
        answer(&w, "cursor", &cursor(&w, "preToolUse", write.clone())),
        json!({
            "permission": "deny",
            "agent_message": msg,
            "user_message": "Stella: refusing to write: app.ts",
            "decision": "deny",
            "reason": msg,
        })
    );
    assert_eq!(w.read("app.ts"), "const a = 2\n");
    let delete = json!({"tool_name": "Delete", "tool_input": {"file_path": path}});
    assert_eq!(
        answer(&w, "cursor", &cursor(&w, "preToolUse", delete))["permission"],
        "deny"
    );
    // The agent re-reads; the content it sees is recorded, and the write passes.
    answer(
        &w,
        "cursor",
        &cursor(
            &w,
            "beforeReadFile",
            json!({"file_path": path, "content": "const a = 2\n"}),
        ),
    );
    assert_eq!(
        answer(&w, "cursor", &cursor(&w, "preToolUse", write.clone())),
        json!({})
    );
    // Cursor writes; its own write is recorded, so its next write is not refused.
    w.write("app.ts", "const a = 3\n");
    answer(&w, "cursor", &cursor(&w, "postToolUse", write.clone()));
    let write5 = json!({"tool_name": "Write", "tool_input": {"file_path": path, "contents": "const a = 5\n"}});
    assert_eq!(
        answer(&w, "cursor", &cursor(&w, "preToolUse", write5)),
        json!({})
    );
    // An edit is recorded as the edit applied to what the agent saw: a line someone added right
    // after Cursor's edit is not taken as the agent's.
    w.write("app.ts", "const a = 4\n// theirs\n");
    answer(
        &w,
        "cursor",
        &cursor(
            &w,
            "afterFileEdit",
            json!({"file_path": path, "edits": [{"old_string": "3", "new_string": "4"}]}),
        ),
    );
    let s = "c0ffee00-1234-4abc-8def-001122334455";
    assert_eq!(w.ok(&["--session", s, "status"]), "changed    app.ts");
    answer(
        &w,
        "cursor",
        &cursor(
            &w,
            "beforeReadFile",
            json!({"file_path": path, "content": "const a = 4\n// theirs\n"}),
        ),
    );
    assert_eq!(w.ok(&["--session", s, "status"]), "unchanged  app.ts");
    // Content the agent saw that is not the disk (the file changed after Cursor read it) is
    // what is recorded: the next write is refused until it reads again.
    answer(
        &w,
        "cursor",
        &cursor(
            &w,
            "beforeReadFile",
            json!({"file_path": path, "content": "const a = 0\n"}),
        ),
    );
    assert_eq!(w.ok(&["--session", s, "status"]), "changed    app.ts");
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

#[test]
fn agent_hooks_install_merges_is_idempotent_and_uninstall_removes_exactly_that() {
    let w = World::new();
    let user = json!({"theme": "dark", "hooks": {"BeforeTool": [
        {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh"}]}]}});
    w.write(
        ".gemini/settings.json",
        &serde_json::to_string_pretty(&user).unwrap(),
    );
    let read = |rel: &str| -> Value { serde_json::from_str(&w.read(rel)).unwrap() };
    // A project's hooks find git-stella on each machine; the event that can refuse a tool
    // call refuses it where the project chose fail-closed and Stella is missing.
    let cmd = |agent: &str, blocks: bool| stella::hosts::install::portable_command(agent, blocks);

    let out = w.run(&["hooks", "install", "--agent", "gemini"]);
    let said = stderr(&out);
    let mut lines = said.lines();
    assert_eq!(
        lines.next(),
        Some("installed Stella's hooks in .gemini/settings.json")
    );
    // Then the trust step Gemini CLI needs, and nothing else.
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("next: Gemini CLI runs a project's hooks")
    );
    assert_eq!(lines.next(), None, "{said}");
    let installed = read(".gemini/settings.json");
    assert_eq!(installed["theme"], "dark");
    assert_eq!(
        installed["hooks"]["BeforeTool"][0],
        user["hooks"]["BeforeTool"][0]
    );
    assert_eq!(
        installed["hooks"]["BeforeTool"][1],
        json!({"matcher": "^(read_file|write_file|replace|run_shell_command)$",
            "hooks": [{"type": "command", "command": cmd("gemini", true), "name": "stella"}]})
    );
    let out = w.run(&["hooks", "install", "--agent", "gemini"]);
    assert_eq!(
        stderr(&out),
        "Stella's hooks are already in .gemini/settings.json\n"
    );
    assert_eq!(read(".gemini/settings.json"), installed);
    w.ok(&["hooks", "uninstall", "--agent", "gemini"]);
    assert_eq!(read(".gemini/settings.json"), user);

    // Files Stella created are removed again whole.
    w.ok(&["hooks", "install", "--agent", "codex"]);
    assert_eq!(
        read(".codex/hooks.json"),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": [{"type": "command", "command": cmd("codex", true)}]}],
            "PostToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": [{"type": "command", "command": cmd("codex", false)}]}],
        }})
    );
    w.ok(&["hooks", "install", "--agent", "cursor"]);
    assert_eq!(
        read(".cursor/hooks.json"),
        json!({"version": 1, "hooks": {
            "preToolUse": [{"command": cmd("cursor", true), "matcher": "Write|Edit|StrReplace|MultiEdit|Delete"}],
            "postToolUse": [{"command": cmd("cursor", false), "matcher": "Write|Delete"}],
            "beforeReadFile": [{"command": cmd("cursor", false)}],
            "afterFileEdit": [{"command": cmd("cursor", false)}],
        }})
    );
    for agent in ["codex", "cursor"] {
        w.ok(&["hooks", "uninstall", "--agent", agent]);
    }
    assert!(!w.repo.join(".codex/hooks.json").exists());
    assert!(!w.repo.join(".cursor/hooks.json").exists());
    let out = w.run(&["hooks", "uninstall", "--agent", "cursor"]);
    assert_eq!(
        stderr(&out),
        "no Stella hooks in .cursor/hooks.json; nothing to remove\n"
    );
}
