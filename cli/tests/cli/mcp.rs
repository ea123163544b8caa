//! `git stella mcp` end to end, driven by the official Python MCP SDK client (`pip install mcp`)
//! through `tests/mcp/client.py`: real processes, one stdio connection each.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

pub(crate) fn python() -> Option<PathBuf> {
    mcp_python("the MCP client tests")
}

/// Run the client script in `mode`; every JSON line it printed, by step name.
pub(crate) fn drive(w: &World, python: &Path, mode: &str, extra: &[&str]) -> Vec<(String, Value)> {
    let git_stella = assert_cmd::cargo::cargo_bin("git-stella");
    let mut cmd = Command::new(python);
    clean_env(&mut cmd, &w.home, &w.stella_home);
    let out = cmd
        .arg(client_script())
        .arg(mode)
        .arg(&git_stella)
        .arg(&w.repo)
        .args(extra)
        .current_dir(&w.repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client.py {mode} failed:\nstdout:\n{}\nstderr:\n{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["step"].as_str().unwrap().to_owned(), v)
        })
        .collect()
}

fn step<'a>(steps: &'a [(String, Value)], name: &str) -> &'a Value {
    &steps
        .iter()
        .find(|(s, _)| s == name)
        .unwrap_or_else(|| panic!("no step {name}"))
        .1
}

const REFUSAL: &str = "refusing to write: notes.txt\n\
notes.txt changed since this session last read it: another process or a person edited it after this session looked.\n\
This write would overwrite their work with a plan formed against content that no longer exists.\n\
Nothing was written. To recover, re-read notes.txt and redo the change against what is there now.\n\
--- notes.txt (seen by this session)\n\
+++ notes.txt (on disk now)\n\
@@ -1,3 +1,3 @@\n\
\x20alpha\n\
-beta\n\
+betamax\n\
\x20gamma";

#[test]
fn the_python_sdk_client_gets_refusals_as_tool_errors_and_recovers_on_one_connection() {
    let Some(python) = python() else { return };
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    let steps = drive(&w, &python, "guard", &[]);

    let instructions = step(&steps, "initialize")["instructions"].as_str().unwrap();
    let session = instructions
        .split("This connection is Stella session '")
        .nth(1)
        .and_then(|s| s.split('\'').next())
        .unwrap();
    assert!(
        instructions.contains(&format!(
            "start the server with '--session {session}' (or STELLA_SESSION={session})"
        )),
        "{instructions}"
    );

    let tools = step(&steps, "list_tools");
    assert_eq!(
        tools["names"],
        serde_json::json!([
            "delete_file",
            "edit_file",
            "read_file",
            "status",
            "write_file"
        ])
    );
    let edit = &tools["schemas"]["edit_file"];
    assert_eq!(edit["type"], "object");
    assert_eq!(
        edit["required"],
        serde_json::json!(["path", "old_string", "new_string"])
    );
    assert!(
        edit["properties"]["old_string"]["description"]
            .as_str()
            .unwrap()
            .starts_with("The exact text to replace")
    );
    assert_eq!(
        tools["schemas"]["read_file"]["properties"]["offset"]["description"],
        "The first line to return, counting from 1. Leave it out to start at the first line."
    );

    assert_eq!(step(&steps, "read")["text"], "alpha\nbeta\ngamma\n");
    // Both stale calls are tool results with isError and the full refusal; the disk keeps the
    // outside process's bytes.
    assert_eq!(step(&steps, "write_refused")["text"], REFUSAL);
    assert_eq!(step(&steps, "edit_refused")["text"], REFUSAL);
    assert_eq!(
        step(&steps, "disk_after_refusals")["text"],
        "alpha\nbetamax\ngamma\n"
    );
    // A re-read, then the same edit goes through.
    assert_eq!(step(&steps, "reread")["text"], "alpha\nbetamax\ngamma\n");
    assert_eq!(
        step(&steps, "edit_after_reread")["text"],
        "edited notes.txt: replaced 1 occurrence"
    );
    assert_eq!(
        step(&steps, "edit_absent")["text"],
        "error: 'old_string' was not found in notes.txt; nothing was written. Re-read notes.txt with read_file and copy the exact text, whitespace included."
    );
    assert_eq!(
        step(&steps, "outside")["text"],
        format!(
            "error: '../outside.txt' is outside the workspace '{}'; nothing was touched. These tools only act on files inside the workspace.",
            w.repo.display()
        )
    );
    assert_eq!(
        step(&steps, "ranged")["text"],
        "betamax\n[lines 2-2 of 3 of notes.txt]"
    );
    assert_eq!(
        step(&steps, "status")["text"],
        format!("session {session}\nunchanged  notes.txt\n")
    );
    assert_eq!(step(&steps, "ping")["ok"], true);
    assert_eq!(
        step(&steps, "disk_final")["text"],
        "alpha\nbetamax\nGAMMA\n"
    );
    // The session's steps are in the store like any other session's, its refusals too.
    let log = w.store_git(&[
        "log",
        "--format=%s",
        &format!("refs/stella/sessions/{session}"),
    ]);
    assert_eq!(
        log,
        "read notes.txt\nwrite notes.txt\nread notes.txt\nrefused write notes.txt\nrefused write notes.txt\nread notes.txt\nsession start",
    );
}

#[test]
fn a_fixed_session_id_keeps_the_guard_across_a_reconnect() {
    let Some(python) = python() else { return };
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    let steps = drive(&w, &python, "reconnect", &["agent-7"]);
    assert!(
        step(&steps, "first_connection")["instructions"]
            .as_str()
            .unwrap()
            .ends_with(
                "This connection is Stella session 'agent-7'; reconnecting with the same --session keeps what it has seen."
            )
    );
    assert_eq!(step(&steps, "second_connection_refused")["text"], REFUSAL);
    assert_eq!(step(&steps, "disk")["text"], "alpha\nbetamax\ngamma\n");
}

#[test]
fn a_thousand_tool_calls_over_one_connection_do_not_grow_the_servers_memory() {
    let Some(python) = python() else { return };
    let w = World::new();
    w.write("soak.txt", "line 0\n");
    let steps = drive(&w, &python, "soak", &["1000"]);
    let soak = step(&steps, "soak");
    let before = soak["rss_before_kib"].as_u64().unwrap();
    let after = soak["rss_after_kib"].as_u64().unwrap();
    eprintln!(
        "stella-mcp RSS over 1000 calls (after 200 warm-up calls): {before} KiB -> {after} KiB"
    );
    // 1000 calls that each leaked even 4 KiB would add 4 MiB: the bound catches that.
    assert!(
        after <= before + 4096,
        "RSS grew from {before} KiB to {after} KiB over 1000 calls"
    );
}

#[test]
fn a_write_file_over_the_message_limit_gets_a_tool_error_naming_it() {
    let Some(python) = python() else { return };
    let w = World::new();
    let steps = drive(&w, &python, "oversized", &[]);
    let over = step(&steps, "oversized");
    let text = over["text"].as_str().unwrap();
    assert!(
        text.starts_with("error: this call was 1782") && text.contains("over the 16 MiB"),
        "{text}"
    );
    assert!(text.contains("nothing was written"), "{text}");
    assert_eq!(over["exists"], false);
    // The connection goes on.
    assert_eq!(step(&steps, "after")["text"], "created small.txt (3 bytes)");
}

#[test]
fn git_stella_mcp_says_so_when_the_server_binary_is_missing() {
    let w = World::new();
    let lone = w.base().join("lone");
    std::fs::create_dir_all(&lone).unwrap();
    let exe = lone.join("git-stella");
    copy_binary(&assert_cmd::cargo::cargo_bin("git-stella"), &exe);
    let mut cmd = Command::new(&exe);
    clean_env(&mut cmd, &w.home, &w.stella_home);
    let out = cmd.arg("mcp").current_dir(&w.repo).output().unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: the MCP server '{}' is missing next to '{}'\n\
             hint: install git-stella with its default features ('cargo install git-stella'), which builds stella-mcp beside it\n",
            lone.join("stella-mcp").display(),
            exe.display()
        )
    );
}

/// Text symbols of a binary from `nm`, demangled.
fn code_symbols(bin: &Path) -> String {
    let out = Command::new("nm").arg("-C").arg(bin).output().unwrap();
    assert!(out.status.success(), "nm failed: {}", stderr(&out));
    stdout(&out)
        .lines()
        .filter(|l| l.contains(" t ") || l.contains(" T "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn only_the_mcp_binary_links_tokio_and_rmcp() {
    let hot = code_symbols(&assert_cmd::cargo::cargo_bin("git-stella"));
    let mcp = code_symbols(&assert_cmd::cargo::cargo_bin("stella-mcp"));
    for krate in ["tokio::", "rmcp::"] {
        assert!(!hot.contains(krate), "git-stella links {krate} code");
        assert!(mcp.contains(krate), "stella-mcp links no {krate} code");
    }
}
