//! One JSON vocabulary: every command's `--json` output, and the error object of a command run
//! with `--json`, validated against `docs/output.schema.json` by the `jsonschema` Python package
//! (installed with the MCP SDK; `.ci/run` pins it). Every command that takes `--json` must have
//! a definition there, and every definition must be exercised here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn schema_file() -> PathBuf {
    repo_root().join("docs/output.schema.json")
}

/// Validate each `(definition, value)` pair; the messages of those that fail.
fn invalid(python: &Path, cases: &[(String, Value)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, serde_json::to_vec(cases).unwrap()).unwrap();
    let script = r#"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
for key, value in json.load(open(sys.argv[2])):
    root = dict(schema["commands"][key], **{"$defs": schema["$defs"]})
    for e in jsonschema.Draft202012Validator(root).iter_errors(value):
        print(f"{key}: at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(schema_file())
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).lines().map(str::to_owned).collect()
}

/// The one line of JSON a command printed on `stream`.
fn one_object(args: &[&str], stream: &[u8]) -> Value {
    let text = String::from_utf8_lossy(stream);
    assert_eq!(text.lines().count(), 1, "{args:?} printed {text:?}");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert!(value.is_object(), "{args:?}: {text}");
    value
}

/// Run `args` in `dir` expecting exit status `want`; its stdout object.
fn json_of(w: &World, dir: &Path, args: &[&str], want: i32) -> Value {
    let out = w.stella_in(dir).args(args).output().unwrap();
    assert_eq!(code(&out), want, "{args:?}: {}", stderr(&out));
    one_object(args, &out.stdout)
}

/// The commands (`session list`, …) whose help offers `--json`.
fn commands_with_json(w: &World) -> BTreeSet<String> {
    let listed = |args: &[&str]| -> Vec<String> {
        let help = w.ok(args);
        help.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter(|l| !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .filter(|c| c != "help")
            .collect()
    };
    let mut found = BTreeSet::new();
    for command in listed(&["--help"]) {
        let subs = listed(&[&command, "--help"]);
        let words: Vec<String> = if subs.is_empty() {
            vec![command.clone()]
        } else {
            subs.iter().map(|s| format!("{command} {s}")).collect()
        };
        for word in words {
            let mut args: Vec<&str> = word.split(' ').collect();
            args.push("--help");
            if w.ok(&args).contains("--json") {
                found.insert(word);
            }
        }
    }
    found
}

/// Every command's `--json` output, and the error object, follow `docs/output.schema.json`.
///
/// One test, not several: every definition must be exercised, so the outputs of every command,
/// taken from one repository, are checked together.
#[test]
fn every_commands_json_follows_the_documented_schema() {
    let Some(python) = python_with("jsonschema", "jsonschema", "the JSON schema test") else {
        return;
    };
    let w = World::new();
    w.write("a.txt", "one\n");
    w.write("b.txt", "two\n");
    w.write("gone.txt", "soon gone\n");
    w.git(&["add", "."]);
    w.git(&["commit", "-q", "-m", "files"]);
    w.ok(&["session", "start", "--id", "a"]);
    w.ok(&["session", "start", "--id", "b"]);
    w.ok(&["--session", "a", "read", "a.txt", "b.txt", "gone.txt"]);
    w.ok(&["--session", "b", "read", "a.txt"]);
    w.ok_stdin(&["--session", "b", "write", "a.txt"], b"theirs\n");
    let refused = w.run_stdin(&["--session", "a", "write", "a.txt"], b"mine\n");
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    w.ok_stdin(&["--session", "a", "write", "new/c.txt"], b"made\n");
    std::fs::remove_file(w.repo.join("gone.txt")).unwrap();
    // A person's file that git does not hold, overwritten blind: kept first.
    w.write("notes.txt", "a person's notes\n");
    w.ok_stdin(&["--session", "a", "write", "notes.txt"], b"the agent's\n");
    w.ok(&["--session", "a", "turn", "begin"]);
    let artifact = w.base().join("a.stella");
    let artifact = artifact.to_str().unwrap();

    let repo = w.repo.clone();
    let mut cases: Vec<(String, Value)> = Vec::new();
    let mut case = |key: &str, dir: &Path, args: &[&str], want: i32| {
        cases.push((key.to_owned(), json_of(&w, dir, args, want)));
    };
    fn with<'a>(rest: &[&'a str]) -> Vec<&'a str> {
        ["--session", "a"]
            .into_iter()
            .chain(rest.iter().copied())
            .collect()
    }
    case(
        "guard",
        &repo,
        &with(&["guard", "--json", "a.txt", "b.txt", "gone.txt", "README"]),
        1,
    );
    case("status", &repo, &with(&["status", "--json"]), 0);
    case("status --all", &repo, &["status", "--all", "--json"], 0);
    case("diff", &repo, &with(&["diff", "--json"]), 0);
    case("log", &repo, &["log", "--json"], 0);
    case("session list", &repo, &["session", "list", "--json"], 0);
    case(
        "session show",
        &repo,
        &["session", "show", "a", "--json"],
        0,
    );
    case(
        "session prune",
        &repo,
        &[
            "session",
            "prune",
            "--older-than",
            "30d",
            "--dry-run",
            "--json",
        ],
        0,
    );
    case("recover", &repo, &["recover", "a.txt", "--json"], 0);
    case("recover --all", &repo, &["recover", "--all", "--json"], 0);
    // Someone edits what the session made: undoing it is refused.
    std::fs::write(repo.join("new/c.txt"), "edited\n").unwrap();
    case("undo", &repo, &with(&["undo", "--dry-run", "--json"]), 1);
    case("resume", &repo, &with(&["resume", "--json"]), 0);
    case(
        "checkpoint",
        &repo,
        &with(&["checkpoint", "-o", artifact, "--json"]),
        0,
    );
    case("inspect", &repo, &["inspect", artifact, "--json"], 0);
    case("verify", &repo, &["verify", artifact, "--json"], 1);
    case("replay", &repo, &["replay", artifact, "--json"], 1);
    // In a clone at the artifact's base, a plan and then a replay that starts.
    let other = World::clone_of(&w);
    let there = other.repo.clone();
    cases.push((
        "replay".into(),
        json_of(
            &other,
            &there,
            &["replay", artifact, "--materialize", "--dry-run", "--json"],
            0,
        ),
    ));
    cases.push((
        "replay".into(),
        json_of(
            &other,
            &there,
            &["replay", artifact, "--ignore-fingerprint", "--json"],
            0,
        ),
    ));
    let mut case = |key: &str, args: &[&str], want: i32| {
        cases.push((key.to_owned(), json_of(&w, &repo, args, want)));
    };
    w.ok(&["session", "drop", "b"]);
    case(
        "session list --dropped",
        &["session", "list", "--dropped", "--json"],
        0,
    );
    case(
        "gc",
        &["gc", "--dry-run", "--expire-dropped", "now", "--json"],
        0,
    );
    case("doctor", &["doctor", "--json"], 0);

    // What each output says, beyond its shape: the vocabulary's words where they belong.
    fn of<'c>(cases: &'c [(String, Value)], key: &str) -> &'c Value {
        &cases.iter().find(|(k, _)| k == key).unwrap().1
    }
    let states: Vec<(&str, &str)> = of(&cases, "status")["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["state"].as_str().unwrap()))
        .collect();
    assert!(states.contains(&("a.txt", "changed")), "{states:?}");
    assert!(states.contains(&("b.txt", "unchanged")), "{states:?}");
    assert!(states.contains(&("gone.txt", "deleted")), "{states:?}");
    let steps = of(&cases, "log")["steps"].as_array().unwrap();
    let refusal = steps
        .iter()
        .find(|s| !s["refused"].as_array().unwrap().is_empty())
        .expect("the refused write is a step");
    assert_eq!(refusal["paths"], serde_json::json!(["a.txt"]));
    assert_eq!(refusal["refused"][0]["writer"]["session"], "b");
    let made = steps
        .iter()
        .find(|s| s["summary"] == "write new/c.txt")
        .unwrap();
    assert_eq!(made["paths"], serde_json::json!(["new/c.txt"]));
    assert_eq!(of(&cases, "recover --all")["kept"][0]["path"], "notes.txt");
    // The newest step alone (-n 1) is what it is, not a refusal because the one before it is
    // not shown.
    let newest: Value = serde_json::from_str(&w.ok(&["log", "a", "-n", "1", "--json"])).unwrap();
    assert_eq!(
        newest["steps"].as_array().map(Vec::len),
        Some(1),
        "{newest}"
    );
    assert!(
        newest["steps"][0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("turn begin"),
        "{newest}"
    );
    assert_eq!(
        newest["steps"][0]["refused"],
        serde_json::json!([]),
        "{newest}"
    );
    assert_eq!(
        of(&cases, "session list --dropped")["dropped"][0]["session"],
        "b"
    );
    assert_eq!(of(&cases, "gc")["expired"][0]["session"], "b");

    // Errors under --json: one object on stderr, and the exit status they always had.
    let mut errors: Vec<(String, Value)> = Vec::new();
    for (args, want, kind) in [
        (&["log", "nobody", "--json"][..], 2, "error"),
        (&["status", "--json", "--no-such-option"][..], 2, "usage"),
        (&["verify", "/no/such/artifact", "--json"][..], 2, "error"),
    ] {
        let out = w.run(args);
        assert_eq!(code(&out), want, "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
        let error = one_object(args, &out.stderr);
        assert_eq!(error["error"]["kind"], kind, "{error}");
        assert_eq!(error["error"]["exit"], want, "{error}");
        errors.push(("error".into(), error));
    }
    cases.extend(errors);

    let failures = invalid(&python, &cases);
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Every command with --json has a definition, and every definition was exercised.
    let schema: Value = serde_json::from_slice(&std::fs::read(schema_file()).unwrap()).unwrap();
    let defined: BTreeSet<String> = schema["commands"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let exercised: BTreeSet<String> = cases.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(exercised, defined, "definitions exercised");
    let commands: BTreeSet<String> = defined
        .iter()
        .filter(|k| *k != "error")
        .map(|k| {
            k.trim_end_matches(" --all")
                .trim_end_matches(" --dropped")
                .to_owned()
        })
        .collect();
    assert_eq!(commands, commands_with_json(&w), "commands with --json");

    // The check can fail: yesterday's words are rejected.
    let mut old = of(&cases, "status").clone();
    old["files"][0]["state"] = "fresh".into();
    old["refused"] = 1.into();
    let failures = invalid(&python, &[("status".into(), old)]);
    assert_eq!(failures.len(), 2, "{failures:?}");
}
