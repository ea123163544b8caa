//! `git stella hook codex` fed the Codex CLI's payloads, end to end (the real client runs in
//! `codex_real.rs`).
//!
//! Where the shapes come from: the JSON Schemas `pre-tool-use.command.input` and
//! `post-tool-use.command.input` embedded in the `codex` binary of
//! `@openai/codex@0.171.0-linux-x64` (npm registry): every required field is present below.

use serde_json::{Value, json};

use crate::common::*;

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
