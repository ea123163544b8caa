//! `git stella hook cursor` fed Cursor's payloads, as Cursor's hooks documentation
//! (cursor.com/docs/agent/hooks) describes them, reproduced by hook libraries; not captured from a
//! running client.

use serde_json::json;

use crate::common::*;

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
