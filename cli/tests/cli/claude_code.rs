//! `git stella hook claude-code` fed the payloads captured from the real client
//! (`tests/fixtures/claude-code/`, paths rewritten to the test's repository), asserting the exact
//! stdout and exit status Claude Code acts on.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// The host session id most fixtures carry.
const SID: &str = "e6c55faa-d7b7-44f5-8458-fd227d2da938";

/// A captured payload with its paths moved into `w`'s repository and home.
fn fixture(w: &World, name: &str) -> Value {
    serde_json::from_str(&claude_fixture_text(w, name)).unwrap()
}

/// `fixture`, turned into another event: the captured PostToolUse payload of a tool, as the
/// PreToolUse payload of the same call (same fields, no response).
fn pre_of(w: &World, post: &str) -> Value {
    let mut v = fixture(w, post);
    v["hook_event_name"] = json!("PreToolUse");
    let o = v.as_object_mut().unwrap();
    o.remove("tool_response");
    o.remove("duration_ms");
    v
}

fn hook_cmd(w: &World, dir: &Path) -> Command {
    let mut cmd = w.stella_in(dir);
    cmd.args(["hook", "claude-code"]);
    cmd
}

/// Run the hook on `payload`; it must exit 0 and its stdout is returned.
fn hook(w: &World, payload: &Value) -> String {
    let out = feed(hook_cmd(w, &w.repo), payload.to_string().as_bytes());
    assert_eq!(code(&out), 0, "stderr: {}", stderr(&out));
    stdout(&out)
}

/// The exact deny answer Claude Code reads.
fn deny(reason: &str) -> String {
    format!(
        "{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":{}}}}}\n",
        serde_json::to_string(reason).unwrap()
    )
}

/// A session that read notes.txt ("alpha\nbeta\n") through the client's Read tool.
fn session_that_read(w: &World) {
    w.write("notes.txt", "alpha\nbeta\n");
    assert_eq!(hook(w, &fixture(w, "SessionStart-startup.json")), "");
    assert_eq!(hook(w, &fixture(w, "UserPromptSubmit.json")), "");
    assert_eq!(hook(w, &pre_of(w, "PostToolUse-Read.json")), "");
    assert_eq!(hook(w, &fixture(w, "PostToolUse-Read.json")), "");
}

const STALE_NOTES: &str = "refusing to write: notes.txt
notes.txt changed since this session last read it: another process or a person edited it after this session looked.
This write would overwrite their work with a plan formed against content that no longer exists.
Nothing was written. To recover, re-read notes.txt and redo the change against what is there now.
--- notes.txt (seen by this session)
+++ notes.txt (on disk now)
@@ -1,2 +1,2 @@
 alpha
-beta
+betamax";

#[test]
fn a_stale_edit_is_denied_with_json_and_exit_0_and_a_fresh_one_passes() {
    let w = World::new();
    session_that_read(&w);
    assert_eq!(w.ok(&["--session", SID, "status"]), "unchanged  notes.txt");
    // Fresh: allowed, nothing said.
    assert_eq!(hook(&w, &fixture(&w, "PreToolUse-Edit.json")), "");
    // Another process turns beta into betamax: the client's own check would let `beta`→`BETA`
    // through (old_string still matches); Stella denies.
    w.write("notes.txt", "alpha\nbetamax\n");
    assert_eq!(
        hook(&w, &fixture(&w, "PreToolUse-Edit.json")),
        deny(STALE_NOTES)
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbetamax\n");
}

#[test]
fn an_edit_records_what_it_wrote_not_the_disk_and_a_second_edit_passes() {
    let w = World::new();
    session_that_read(&w);
    assert_eq!(hook(&w, &fixture(&w, "PreToolUse-Edit.json")), "");
    w.write("notes.txt", "alpha\nBETA\n");
    assert_eq!(hook(&w, &fixture(&w, "PostToolUse-Edit.json")), "");
    // Read → Edit → Edit again: allowed.
    assert_eq!(hook(&w, &fixture(&w, "PreToolUse-Edit.json")), "");
    // A change right after the tool is not absorbed: originalFile + the edit is what was recorded.
    w.write("notes.txt", "alpha\nBETA\nlate\n");
    let denied = hook(&w, &fixture(&w, "PreToolUse-Edit.json"));
    assert!(denied.contains("refusing to write: notes.txt"), "{denied}");
    assert!(denied.contains(" alpha\\n BETA\\n+late"), "{denied}");
}

#[test]
fn writes_of_new_and_never_read_files_pass_and_write_is_if_match() {
    let w = World::new();
    session_that_read(&w);
    // A new file: allowed, then its content is recorded.
    assert_eq!(hook(&w, &fixture(&w, "PreToolUse-Write.json")), "");
    w.write("new.txt", "fresh file\n");
    assert_eq!(hook(&w, &fixture(&w, "PostToolUse-Write-create.json")), "");
    let status = w.ok(&["--session", SID, "status"]);
    assert_eq!(status, "unchanged  new.txt\nunchanged  notes.txt");
    // A Write over a file the session read: recorded as the content written (the disk here).
    let mut update = fixture(&w, "PostToolUse-Write-update.json");
    update["session_id"] = json!(SID);
    let mut pre_update = update.clone();
    pre_update["hook_event_name"] = json!("PreToolUse");
    pre_update.as_object_mut().unwrap().remove("tool_response");
    assert_eq!(hook(&w, &pre_update), "");
    w.write("notes.txt", "alpha\nBETA\n");
    assert_eq!(hook(&w, &update), "");
    assert_eq!(
        w.ok(&["--session", SID, "status"]),
        "unchanged  new.txt\nunchanged  notes.txt"
    );
    // A file the session never read: allowed.
    w.write("other.txt", "someone's\n");
    let mut pre = fixture(&w, "PreToolUse-Edit.json");
    pre["tool_input"]["file_path"] = json!(w.repo.join("other.txt"));
    assert_eq!(hook(&w, &pre), "");
    // If-Match: a Write whose bytes are already on disk loses nothing.
    w.write("new.txt", "changed by someone\n");
    let mut write = fixture(&w, "PreToolUse-Write.json");
    write["tool_input"]["content"] = json!("changed by someone\n");
    assert_eq!(hook(&w, &write), "");
    write["tool_input"]["content"] = json!("mine\n");
    let denied = hook(&w, &write);
    assert!(
        denied.starts_with("{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"refusing to write: new.txt\\n"),
        "{denied}"
    );
}

#[test]
fn bytes_overwritten_between_guard_and_tool_are_kept_and_the_way_back_is_told() {
    let w = World::new();
    session_that_read(&w);
    assert_eq!(hook(&w, &fixture(&w, "PreToolUse-Edit.json")), "");
    // Someone writes while the permission prompt waits; the tool then edits their bytes.
    w.write("notes.txt", "alpha\nBETA\ngamma (added by other agent)\n");
    let mut post = fixture(&w, "PostToolUse-Edit-staleRecovered.json");
    post["session_id"] = json!(SID);
    let out = hook(&w, &post);
    let v: Value = serde_json::from_str(&out).unwrap();
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert_eq!(v["systemMessage"].as_str().unwrap(), text);
    let version = text
        .split("--show ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert_eq!(
        text,
        format!(
            "Stella: notes.txt changed on disk after this session last read it and before Edit ran (someone wrote to it in between, for example while a permission prompt waited), so Edit overwrote their change. Their bytes are kept in Stella's journal; get them back with:\n  git stella recover 'notes.txt' --show {version} > 'notes.txt.overwritten'\nthen compare and merge what they changed."
        )
    );
    // The command it gives works and gives their bytes back.
    let shown = w.run(&["recover", "notes.txt", "--show", version]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    assert_eq!(
        stdout(&shown),
        "alpha\nbeta\ngamma (added by other agent)\n"
    );
    // The listing names them as overwritten and kept, and --restore puts them back through the
    // guard: the session's own write is what is on disk now, so nothing is lost.
    let list = w.ok(&["recover", "notes.txt"]);
    assert!(
        list.lines()
            .any(|l| l.starts_with(version) && l.contains(&format!("overwritten, kept by {SID}"))),
        "{list}"
    );
    w.ok(&[
        "--session",
        SID,
        "recover",
        "notes.txt",
        "--restore",
        version,
    ]);
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (added by other agent)\n"
    );
    // And the session recorded originalFile with the edit applied.
    assert_eq!(w.ok(&["--session", SID, "status"]), "unchanged  notes.txt");
}

#[test]
fn resume_names_the_files_changed_while_away() {
    let w = World::new();
    session_that_read(&w);
    w.write("notes.txt", "alpha\nchanged while away\n");
    let mut resume = fixture(&w, "SessionStart-resume.json");
    resume["session_id"] = json!(SID);
    let out = hook(&w, &resume);
    assert_eq!(
        out,
        format!(
            "{}\n",
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
            "Stella: while this session was away, files it had read or written changed on disk (another agent or a person edited them):\n- notes.txt (changed)\nWhat you remember of them is out of date: re-read them before editing. Stella refuses an edit made against the old content."}})
        )
    );
    // The resumed session is as guarded as before.
    assert_eq!(
        hook(&w, &fixture(&w, "PreToolUse-Edit.json")),
        deny(
            "refusing to write: notes.txt
notes.txt changed since this session last read it: another process or a person edited it after this session looked.
This write would overwrite their work with a plan formed against content that no longer exists.
Nothing was written. To recover, re-read notes.txt and redo the change against what is there now.
--- notes.txt (seen by this session)
+++ notes.txt (on disk now)
@@ -1,2 +1,2 @@
 alpha
-beta
+changed while away"
        )
    );
    // Nothing changed: a resume says nothing.
    let other = World::new();
    session_that_read(&other);
    let mut resume = fixture(&other, "SessionStart-resume.json");
    resume["session_id"] = json!(SID);
    assert_eq!(hook(&other, &resume), "");
}

#[test]
fn stop_stores_the_transcript_verbatim_and_the_next_event_catches_up() {
    let w = World::new();
    let (transcript, sample) = claude_transcript(&w);
    std::fs::write(&transcript, &sample[..4000]).unwrap();
    session_that_read(&w);
    assert_eq!(hook(&w, &fixture(&w, "Stop.json")), "");
    let resume = w.ok(&["--session", SID, "resume"]);
    assert!(resume.contains("no open turn"), "{resume}");
    // The host flushes the rest after Stop; the next prompt captures it.
    std::fs::write(&transcript, &sample).unwrap();
    assert_eq!(hook(&w, &fixture(&w, "UserPromptSubmit.json")), "");
    let r = format!("refs/stella/sessions/{SID}");
    let mut stored = Vec::new();
    for chunk in w
        .store_git(&[
            "ls-tree",
            "--name-only",
            &format!("{r}:transcript/{SID}.jsonl/chunks"),
        ])
        .lines()
    {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(w.store())
            .args([
                "cat-file",
                "-p",
                &format!("{r}:transcript/{SID}.jsonl/chunks/{chunk}"),
            ])
            .output()
            .unwrap();
        stored.extend_from_slice(&out.stdout);
    }
    assert_eq!(
        w.store_git(&[
            "ls-tree",
            "--name-only",
            &format!("{r}:transcript/{SID}.jsonl/chunks")
        ])
        .lines()
        .count(),
        2
    );
    assert!(
        stored == sample,
        "the stored transcript differs from the file"
    );
    assert_eq!(
        w.store_git(&["cat-file", "-p", &format!("{r}:hosts/claude-code.toml")]),
        format!("transcript_path = \"{}\"", transcript.display())
    );
    // SessionEnd ends the session (one step); again, with nothing new, it records nothing.
    let steps = w.steps(SID);
    assert_eq!(hook(&w, &fixture(&w, "SessionEnd.json")), "");
    assert_eq!(w.steps(SID), steps + 1);
    assert!(w.ok(&["log", SID]).contains("session end"));
    assert_eq!(hook(&w, &fixture(&w, "SessionEnd.json")), "");
    assert_eq!(w.steps(SID), steps + 1);
}

/// `claude --resume ID` finds a transcript copied into any project folder and keeps appending
/// to it there, but its `SessionStart` names the file under the current folder's project folder,
/// which does not exist (observed with 2.1.328; the later events name the real file). Stella
/// follows the file the host writes, so a checkpoint after a crash still carries its last bytes.
#[test]
fn the_transcript_path_follows_the_file_the_host_really_writes() {
    let w = World::new();
    let projects = w.home.join(".claude/projects");
    let named = projects.join(format!("-home-dev-src-demo/{SID}.jsonl"));
    let real = projects.join(format!("-elsewhere/{SID}.jsonl"));
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "{\"type\":\"user\"}\n").unwrap();
    w.ok(&["session", "start", "--id", SID]);
    let mut resume = fixture(&w, "SessionStart-resume.json");
    resume["session_id"] = json!(SID);
    resume["transcript_path"] = json!(named);
    let mut prompt = fixture(&w, "UserPromptSubmit.json");
    prompt["transcript_path"] = json!(real);
    let remembered = || {
        w.store_git(&[
            "cat-file",
            "-p",
            &format!("refs/stella/sessions/{SID}:hosts/claude-code.toml"),
        ])
    };
    assert_eq!(hook(&w, &resume), "");
    assert_eq!(hook(&w, &prompt), "");
    assert_eq!(
        remembered(),
        format!("transcript_path = \"{}\"", real.display())
    );
    // The next resume names the absent file again: the one that exists stays remembered.
    assert_eq!(hook(&w, &resume), "");
    assert_eq!(
        remembered(),
        format!("transcript_path = \"{}\"", real.display())
    );
    // The host appends mid-turn and is killed: no more hook calls.
    let full = "{\"type\":\"user\"}\n{\"type\":\"assistant\",\"late\":true}\n";
    std::fs::write(&real, full).unwrap();
    let artifact = w.base().join("moved.bundle");
    w.checkpoint_to(SID, &artifact);
    let json: Value =
        serde_json::from_str(&w.ok(&["inspect", "--json", artifact.to_str().unwrap()])).unwrap();
    assert_eq!(
        json["transcripts"],
        json!({ format!("{SID}.jsonl"): full.len() })
    );
}

#[test]
fn crlf_and_invalid_utf8_files_read_whole_are_not_refused() {
    let w = World::new();
    session_that_read(&w);
    for (file, bytes, rendered) in [
        ("crlf.txt", &b"one\r\ntwo\r\n"[..], "one\ntwo\n"),
        ("latin1.txt", &b"caf\xe9\n"[..], "caf\u{fffd}\n"),
    ] {
        std::fs::write(w.repo.join(file), bytes).unwrap();
        let mut post = fixture(&w, "PostToolUse-Read.json");
        post["tool_input"]["file_path"] = json!(w.repo.join(file));
        post["tool_response"]["file"]["content"] = json!(rendered);
        // With the PreToolUse of the read, and without it (a host that skipped it).
        for with_pre in [true, false] {
            if with_pre {
                let mut pre = post.clone();
                pre["hook_event_name"] = json!("PreToolUse");
                pre.as_object_mut().unwrap().remove("tool_response");
                assert_eq!(hook(&w, &pre), "");
            }
            assert_eq!(hook(&w, &post), "");
            let mut edit = fixture(&w, "PreToolUse-Edit.json");
            edit["tool_input"]["file_path"] = json!(w.repo.join(file));
            assert_eq!(hook(&w, &edit), "", "{file}, with PreToolUse: {with_pre}");
        }
    }
}

#[test]
fn a_ranged_read_that_raced_a_change_needs_a_re_read() {
    let w = World::new();
    session_that_read(&w);
    w.write("long.txt", "1\n2\n3\n4\n");
    let mut post = fixture(&w, "PostToolUse-Read.json");
    post["tool_input"] = json!({"file_path": w.repo.join("long.txt"), "offset": 2, "limit": 1});
    post["tool_response"]["file"] = json!({"filePath": w.repo.join("long.txt"), "content": "2\n", "numLines": 1, "startLine": 2, "totalLines": 5});
    let mut pre = post.clone();
    pre["hook_event_name"] = json!("PreToolUse");
    pre.as_object_mut().unwrap().remove("tool_response");
    let mut edit = fixture(&w, "PreToolUse-Edit.json");
    edit["tool_input"]["file_path"] = json!(w.repo.join("long.txt"));
    // Unchanged between Pre and Post: the disk's bytes are what the model saw a part of.
    hook(&w, &pre);
    hook(&w, &post);
    assert_eq!(hook(&w, &edit), "");
    // Changed while the model read it: it may have seen either version.
    hook(&w, &pre);
    w.write("long.txt", "1\n2\n3\n4\n5\n");
    hook(&w, &post);
    assert_eq!(
        hook(&w, &edit),
        deny(
            "refusing to write: long.txt
long.txt changed while this session was reading it: the session may have seen either version.
This write could overwrite someone's work with a plan formed against content that no longer exists.
Nothing was written. To recover, re-read long.txt and redo the change against what is there now."
        )
    );
}

#[test]
fn a_file_changed_while_a_shell_command_ran_is_not_absorbed_and_the_refusal_says_so() {
    let w = World::new();
    session_that_read(&w);
    let mut bash = fixture(&w, "PreToolUse-Edit.json");
    bash["tool_name"] = json!("Bash");
    bash["tool_use_id"] = json!("toolu_bash_1");
    bash["tool_input"] =
        json!({"command": "sed -i s/beta/gamma/ notes.txt", "description": "edit"});
    assert_eq!(hook(&w, &bash), "");
    w.write("notes.txt", "alpha\ngamma\n");
    bash["hook_event_name"] = json!("PostToolUse");
    bash["tool_response"] = json!({"stdout": "", "stderr": "", "interrupted": false});
    assert_eq!(hook(&w, &bash), "");
    assert_eq!(
        hook(&w, &fixture(&w, "PreToolUse-Edit.json")),
        deny("refusing to write: notes.txt
notes.txt changed since this session last read it: another process or a person edited it after this session looked.
This write would overwrite their work with a plan formed against content that no longer exists.
Nothing was written. To recover, re-read notes.txt and redo the change against what is there now.
--- notes.txt (seen by this session)
+++ notes.txt (on disk now)
@@ -1,2 +1,2 @@
 alpha
-beta
+gamma
notes.txt changed while your shell command ran (`sed -i s/beta/gamma/ notes.txt`): that change may be the command's own or someone else's — re-read it.")
    );
    // A re-read settles it.
    hook(&w, &pre_of(&w, "PostToolUse-Read.json"));
    let mut read = fixture(&w, "PostToolUse-Read.json");
    read["tool_response"]["file"]["content"] = json!("alpha\ngamma\n");
    hook(&w, &read);
    assert_eq!(hook(&w, &fixture(&w, "PreToolUse-Edit.json")), "");
}

#[test]
fn mcp_filesystem_tools_and_mapped_tools_are_guarded() {
    let w = World::new();
    session_that_read(&w);
    let payload = |event: &str, tool: &str, input: Value| {
        let mut p = fixture(&w, "PreToolUse-Edit.json");
        p["hook_event_name"] = json!(event);
        p["tool_name"] = json!(tool);
        p["tool_input"] = input;
        p["tool_use_id"] = json!("toolu_mcp");
        p
    };
    let file = w.repo.join("doc.md");
    w.write("doc.md", "# doc\n");
    let read = json!({"path": file});
    hook(
        &w,
        &payload(
            "PreToolUse",
            "mcp__filesystem__read_text_file",
            read.clone(),
        ),
    );
    hook(
        &w,
        &payload("PostToolUse", "mcp__filesystem__read_text_file", read),
    );
    w.write("doc.md", "# doc, edited by someone\n");
    let write = payload(
        "PreToolUse",
        "mcp__filesystem__write_file",
        json!({"path": file, "content": "# mine\n"}),
    );
    assert!(hook(&w, &write).contains("refusing to write: doc.md"));
    // A tool the project mapped in .stella/config.toml.
    w.write(
        ".stella/config.toml",
        "[[hooks.tools]]\nname = \"mcp__wiki__save_*\"\npath = \"target\"\naccess = \"write\"\ncontent = \"body\"\n",
    );
    let save = payload(
        "PreToolUse",
        "mcp__wiki__save_page",
        json!({"target": "doc.md", "body": "# mine\n"}),
    );
    assert!(hook(&w, &save).contains("refusing to write: doc.md"));
    let save_other = payload(
        "PreToolUse",
        "mcp__wiki__save_page",
        json!({"target": "fresh.md", "body": "# new\n"}),
    );
    assert_eq!(hook(&w, &save_other), "");
    // A broken config cannot say what was meant: the write is denied, the file named (never
    // exit 2, which Claude Code would treat as a block without a reason).
    w.write(".stella/config.toml", "[[hooks.tools]]\nname = 3\n");
    let out = feed(hook_cmd(&w, &w.repo), save.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains(&format!(
            "stella: error: '{}' is not a valid Stella config\ncaused by: ",
            w.repo.join(".stella/config.toml").display()
        )),
        "{reason}"
    );
}

#[test]
fn a_subagent_is_its_own_session() {
    let w = World::new();
    session_that_read(&w);
    let mut read = fixture(&w, "PostToolUse-Read.json");
    read["agent_id"] = json!("a7f3");
    read["agent_type"] = json!("general-purpose");
    hook(&w, &read);
    let list = w.ok(&["session", "list"]);
    assert!(list.contains(&format!("{SID}.agent-a7f3")), "{list}");
    w.write("notes.txt", "alpha\nbetamax\n");
    let mut edit = fixture(&w, "PreToolUse-Edit.json");
    edit["agent_id"] = json!("a7f3");
    assert!(hook(&w, &edit).contains("refusing to write: notes.txt"));
}

#[test]
fn errors_exit_1_never_2_unless_the_project_chose_fail_closed() {
    let w = World::new();
    session_that_read(&w);
    let out = feed(hook_cmd(&w, &w.repo), b"not json");
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "stella: error: the hook payload is not valid JSON\ncaused by: expected ident at line 1 column 2\n"
    );
    // Bad arguments in the settings' command: still 1, never 2.
    let mut bad_args = hook_cmd(&w, &w.repo);
    bad_args.arg("--bogus");
    let out = feed(bad_args, b"{}");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).starts_with("error: unexpected argument '--bogus' found"));
    let out = feed(hook_cmd(&w, &w.repo), br#"{"session_id":"x","cwd":"/"}"#);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        "stella: error: the hook payload is not what claude-code sends\ncaused by: missing field `hook_event_name`\n"
    );
    // An internal error: Stella's data dir cannot be created.
    let edit = fixture(&w, "PreToolUse-Edit.json").to_string();
    let broken = |w: &World| {
        let mut cmd = hook_cmd(w, &w.repo);
        cmd.env("STELLA_HOME", w.repo.join("README").join("stella"));
        cmd
    };
    let out = feed(broken(&w), edit.as_bytes());
    assert_eq!(code(&out), 1);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).starts_with("stella: error: could not create the data dir '"),
        "{}",
        stderr(&out)
    );
    // Fail-closed through git config: the write is denied with the error as the reason.
    w.git(&["config", "stella.hookOnError", "deny"]);
    let out = feed(broken(&w), edit.as_bytes());
    assert_eq!(code(&out), 0);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("Stella could not check this call, and this project refuses writes when the check fails (fail-closed). Nothing was written.\nstella: error: could not create the data dir '"),
        "{reason}"
    );
    // .stella/config.toml wins over git config.
    w.write(".stella/config.toml", "[hooks]\non-error = \"allow\"\n");
    assert_eq!(code(&feed(broken(&w), edit.as_bytes())), 1);
    w.git(&["config", "--unset", "stella.hookOnError"]);
    w.write(".stella/config.toml", "[hooks]\non-error = \"deny\"\n");
    let out = feed(broken(&w), edit.as_bytes());
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).contains("\"permissionDecision\":\"deny\""));
    // Only a write is denied: a failed record of a read is exit 1, fail-closed or not.
    let out = feed(
        broken(&w),
        fixture(&w, "PostToolUse-Read.json").to_string().as_bytes(),
    );
    assert_eq!((code(&out), stdout(&out)), (1, String::new()));
}

#[test]
fn a_write_that_runs_out_of_time_is_denied_when_the_project_chose_fail_closed() {
    let w = World::new();
    session_that_read(&w);
    w.write(".stella/config.toml", "[hooks]\non-error = \"deny\"\n");
    // The owner record is gone and another process holds its lock: the hook waits for it.
    let mut holder = hold_owner_lock(&w);
    let mut cmd = hook_cmd(&w, &w.repo);
    cmd.env("STELLA_HOOK_TIMEOUT_MS", "500");
    let out = feed(
        cmd,
        fixture(&w, "PreToolUse-Edit.json").to_string().as_bytes(),
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    // The watchdog answers for the write still waiting: a deny, exit 0, never 2.
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecisionReason"],
        "Stella could not check this call, and this project refuses writes when the check fails (fail-closed). Nothing was written.\nstella: error: the hook did not finish within its time budget of 500ms; nothing more was done"
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbeta\n");
}

#[test]
fn the_time_budget_ends_a_hook_that_waits_too_long() {
    let w = World::new();
    session_that_read(&w);
    let store = std::path::PathBuf::from(w.ok(&["store-path"]));
    let lock = store.parent().unwrap().join("store.lock");
    // Another process holds the store's writer lock for longer than the budget.
    let mut holder = hold_lock(&lock);
    let mut cmd = hook_cmd(&w, &w.repo);
    cmd.env("STELLA_HOOK_TIMEOUT_MS", "500");
    let started = std::time::Instant::now();
    let out = feed(
        cmd,
        fixture(&w, "PostToolUse-Read.json").to_string().as_bytes(),
    );
    let took = started.elapsed();
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out),
        "stella: error: the hook did not finish within its time budget of 500ms; nothing more was done\n"
    );
    assert!(took.as_secs() < 10, "took {took:?}");
}

#[test]
fn outside_a_repository_or_the_workspace_nothing_is_done() {
    let w = World::new();
    let outside = w.base().join("not-a-repo");
    std::fs::create_dir_all(&outside).unwrap();
    for name in [
        "SessionStart-startup.json",
        "UserPromptSubmit.json",
        "PreToolUse-Edit.json",
        "PostToolUse-Read.json",
        "Stop.json",
    ] {
        let mut p = fixture(&w, name);
        p["cwd"] = json!(outside);
        if p["tool_input"]["file_path"].is_string() {
            p["tool_input"]["file_path"] = json!(outside.join("notes.txt"));
        }
        let out = feed(hook_cmd(&w, &outside), p.to_string().as_bytes());
        assert_eq!(
            (code(&out), stdout(&out), stderr(&out)),
            (0, String::new(), String::new()),
            "{name}"
        );
    }
    assert!(
        !w.stella_home.exists(),
        "nothing may be written outside a repository"
    );
    assert!(!outside.join(".stella").exists());
    // In the repository, a path outside the workspace is none of Stella's business.
    let mut edit = fixture(&w, "PreToolUse-Edit.json");
    edit["tool_input"]["file_path"] = json!(outside.join("notes.txt"));
    assert_eq!(hook(&w, &edit), "");
    assert!(!w.stella_home.exists());
}

#[test]
fn a_symlinked_checkout_is_guarded_like_the_real_path() {
    let w = World::new();
    session_that_read(&w);
    let link = w.base().join("link");
    std::os::unix::fs::symlink(&w.repo, &link).unwrap();
    w.write("notes.txt", "alpha\nbetamax\n");
    let mut edit = fixture(&w, "PreToolUse-Edit.json");
    edit["cwd"] = json!(link);
    edit["tool_input"]["file_path"] = json!(link.join("notes.txt"));
    assert_eq!(hook(&w, &edit), deny(STALE_NOTES));
}
