//! Fail closed with the store damaged: every way in (the command line, the shell guard, each
//! host's hook, MCP) meets each damage a store can come to, and the stale write it makes is
//! refused, saying what to do; nobody's bytes are lost, and doing what it says works.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::*;

const OURS: &str = "alpha\nbeta\ngamma\n";
const THEIRS: &str = "alpha\nTHEIRS\ngamma\n";

#[derive(Clone, Copy, Debug)]
enum Damage {
    /// The session's ref file is gone; its reflog is not.
    MissingRef,
    /// The ref and its reflog are gone: the store no longer knows the session.
    MissingRefAndReflog,
    /// The tip's map tree is gone.
    MissingObject,
    /// The tip's commit is cut in half.
    TruncatedObject,
    /// Stella's whole data dir is gone.
    DataDirGone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Command,
    ShellGuard,
    ClaudeCode,
    Codex,
    Gemini,
    Mcp,
}

impl Way {
    /// The session each way acts as: the hosts' ids are those of their captured payloads.
    fn session(self) -> &'static str {
        match self {
            Way::ClaudeCode => "e6c55faa-d7b7-44f5-8458-fd227d2da938",
            Way::Codex => "01a22f0a-7e78-7413-8804-f360d07812f7",
            Way::Gemini => "d862d4ba-d744-4a57-a433-73ecae9eede8",
            _ => "s",
        }
    }
}

/// A captured payload, moved into `w`.
fn payload(w: &World, way: Way) -> Value {
    let text = match way {
        Way::ClaudeCode => {
            return serde_json::from_str(
                &claude_fixture_text(w, "PreToolUse-Write.json").replace("new.txt", "notes.txt"),
            )
            .unwrap();
        }
        Way::Codex => "codex-0.169.0/PreToolUse-apply_patch-update.json",
        Way::Gemini => "gemini-cli-0.61.0/BeforeTool-write_file.json",
        _ => unreachable!("{way:?} takes no payload"),
    };
    let path = repo_root().join("tests/fixtures").join(text);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["cwd"] = json!(w.repo);
    v
}

/// `way`'s change of notes.txt without a read first: whether it was refused (the file was not
/// changed and the caller was told), and what the caller was told.
fn change(w: &World, way: Way, mcp: Option<&Path>) -> (bool, String) {
    let s = way.session();
    let (told, said) = match way {
        Way::Command => {
            let out = w.run_stdin(&["--session", s, "write", "notes.txt"], b"mine\n");
            (!out.status.success(), stderr(&out))
        }
        Way::ShellGuard => {
            let out = w.run(&[
                "--session",
                s,
                "exec",
                "--",
                "sh",
                "-c",
                "printf 'mine\\n' > notes.txt",
            ]);
            (!out.status.success(), stderr(&out))
        }
        Way::ClaudeCode | Way::Codex | Way::Gemini => {
            let agent = match way {
                Way::ClaudeCode => "claude-code",
                Way::Codex => "codex",
                _ => "gemini",
            };
            let out = w.run_stdin(&["hook", agent], payload(w, way).to_string().as_bytes());
            // Only an explicit deny stops the host: a hook that fails (exit 1) lets it run.
            let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap_or(Value::Null);
            let reason = v
                .pointer("/hookSpecificOutput/permissionDecisionReason")
                .or_else(|| v.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            (
                code(&out) == 0 && denies(&v),
                format!("{reason}\n{}", stderr(&out)),
            )
        }
        Way::Mcp => {
            let steps = crate::mcp::drive(w, mcp.unwrap(), "change", &["notes.txt", s]);
            let all = steps.iter().all(|(_, v)| v["error"] == true);
            let said = steps
                .iter()
                .map(|(step, v)| format!("{step}: {}", v["text"].as_str().unwrap()))
                .collect::<Vec<_>>()
                .join("\n");
            (all, said)
        }
    };
    (told && w.read("notes.txt") == THEIRS, said)
}

fn damage(w: &World, what: Damage, s: &str) {
    let store = w.store();
    let object = |spec: &str| {
        let id = w.store_git(&["rev-parse", spec]);
        store.join("objects").join(&id[..2]).join(&id[2..])
    };
    match what {
        Damage::MissingRef => {
            std::fs::remove_file(store.join("refs/stella/sessions").join(s)).unwrap();
        }
        Damage::MissingRefAndReflog => {
            std::fs::remove_file(store.join("refs/stella/sessions").join(s)).unwrap();
            std::fs::remove_file(store.join("logs/refs/stella/sessions").join(s)).unwrap();
        }
        Damage::MissingObject => {
            std::fs::remove_file(object(&format!("refs/stella/sessions/{s}^{{tree}}:map")))
                .unwrap();
        }
        Damage::TruncatedObject => {
            let file = object(&format!("refs/stella/sessions/{s}"));
            let len = std::fs::metadata(&file).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
            f.set_len(len / 2).unwrap();
        }
        Damage::DataDirGone => std::fs::remove_dir_all(&w.stella_home).unwrap(),
    }
}

/// What a refusal must say: what to do next.
fn says_what_to_do(said: &str) -> bool {
    ["re-read", "read it again", "read again", "run it again"]
        .iter()
        .any(|s| said.contains(s))
}

#[test]
fn every_way_in_refuses_a_stale_write_whatever_the_store_came_to() {
    let mcp = crate::mcp::python();
    let guard = guarded_here(&World::new());
    let mut table = Vec::new();
    for what in [
        Damage::MissingRef,
        Damage::MissingRefAndReflog,
        Damage::MissingObject,
        Damage::TruncatedObject,
        Damage::DataDirGone,
    ] {
        for way in [
            Way::Command,
            Way::ShellGuard,
            Way::ClaudeCode,
            Way::Codex,
            Way::Gemini,
            Way::Mcp,
        ] {
            if (way == Way::ShellGuard && !guard) || (way == Way::Mcp && mcp.is_none()) {
                continue;
            }
            let w = World::new();
            let s = way.session();
            w.write("notes.txt", OURS);
            w.ok(&["session", "start", "--id", s]);
            w.ok(&["--session", s, "read", "notes.txt"]);
            // Someone else's edit, then the damage.
            w.write("notes.txt", THEIRS);
            damage(&w, what, s);
            let why = format!("{what:?} through {way:?}");
            let (refused, said) = change(&w, way, mcp.as_deref());
            assert!(refused, "{why}: not refused: {said}");
            assert!(says_what_to_do(&said), "{why}: {said}");
            // The next call is refused too, whatever the first one repaired.
            let (again, said_again) = change(&w, way, mcp.as_deref());
            assert!(again, "{why}, again: not refused: {said_again}");
            table.push(format!(
                "{what:?} | {way:?} | {}",
                said.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
            ));
            // Doing what it says works: read the file again, then change it.
            w.ok(&["--session", s, "read", "notes.txt"]);
            w.ok_stdin(&["--session", s, "write", "notes.txt"], b"mine\n");
            assert_eq!(w.read("notes.txt"), "mine\n", "{why}");
            let fsck = w.store_git(&[
                "fsck",
                "--no-progress",
                "--connectivity-only",
                "--no-dangling",
            ]);
            assert!(fsck.is_empty(), "{why}: {fsck}");
        }
    }
    eprintln!("{}", table.join("\n"));
}

/// The store read-only or full: a stale write through the command line, the hooks and the shell
/// guard is refused all the same; a write nothing stands against fails before the tree is
/// touched; and once the store is writable again, reading and writing work.
#[test]
fn a_read_only_or_full_store_refuses_stale_writes_and_changes_nothing() {
    if !can_mount_tmpfs() {
        return;
    }
    let guard = guarded_here(&World::new());
    for damage in ["read-only", "full"] {
        let w = World::new();
        w.write("notes.txt", OURS);
        let out = w.base().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let mine = w.base().join("mine");
        std::fs::write(&mine, "mine\n").unwrap();
        for way in [Way::ClaudeCode, Way::Gemini] {
            let file = out.join(format!("{way:?}.payload"));
            std::fs::write(&file, payload(&w, way).to_string()).unwrap();
        }
        // Everything in one mount namespace: the data dir is a small tmpfs.
        let script = format!(
            r#"
set -u
mkdir -p "$STELLA_HOME" && mount -t tmpfs -o size=4m tmpfs "$STELLA_HOME" || exit 90
s() {{ "$BIN" "$@"; }}
for id in s {claude} {gemini}; do
    s session start --id "$id" >/dev/null && s --session "$id" read notes.txt || exit 91
done
printf '{theirs}' > notes.txt
case {damage} in
    read-only) mount -o remount,ro "$STELLA_HOME" || exit 92 ;;
    full) dd if=/dev/zero of="$STELLA_HOME/filler" bs=4k 2>/dev/null ;;
esac
s --session s write notes.txt < "$MINE" 2>"$OUT/command.err"; echo "command=$?"
"$BIN" hook claude-code < "$OUT/ClaudeCode.payload" >"$OUT/claude.json" 2>"$OUT/claude.err"; echo "claude=$?"
"$BIN" hook gemini < "$OUT/Gemini.payload" >"$OUT/gemini.json" 2>"$OUT/gemini.err"; echo "gemini=$?"
if [ "$GUARD" = yes ]; then
    s --session s exec -- sh -c 'printf mine > notes.txt' 2>"$OUT/exec.err"; echo "exec=$?"
fi
s --session s write new.txt < "$MINE" 2>"$OUT/create.err"; echo "create=$?"
echo "notes=$(cat notes.txt | tr '\n' ' ')"
test -e new.txt && echo "new.txt was created"
case {damage} in
    read-only) mount -o remount,rw "$STELLA_HOME" ;;
    full) rm "$STELLA_HOME/filler" ;;
esac
s --session s read notes.txt >/dev/null && s --session s write notes.txt < "$MINE"; echo "after=$?"
"#,
            claude = Way::ClaudeCode.session(),
            gemini = Way::Gemini.session(),
            theirs = THEIRS.replace('\n', "\\n"),
        );
        let guard_env = std::path::PathBuf::from(if guard { "yes" } else { "no" });
        let run = sh_unshared(
            &w,
            &script,
            &[("OUT", &out), ("MINE", &mine), ("GUARD", &guard_env)],
        );
        let text = stdout(&run);
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
        let why = format!("{damage}: {text}\n{}", stderr(&run));
        assert_eq!(code(&run), 0, "{why}");
        assert!(
            text.contains(&format!("notes={}", THEIRS.replace('\n', " "))),
            "{why}"
        );
        assert!(!text.contains("new.txt was created"), "{why}");
        assert!(text.contains("create=2"), "{why}\n{}", read("create.err"));
        assert!(
            !text.contains("command=0"),
            "{why}\n{}",
            read("command.err")
        );
        assert!(
            read("command.err").contains("refusing to write: notes.txt"),
            "{why}"
        );
        for (host, file) in [("claude", "claude.json"), ("gemini", "gemini.json")] {
            let v: Value = serde_json::from_str(read(file).trim()).unwrap_or(Value::Null);
            assert!(
                denies(&v),
                "{why}\n{host}: {v}\n{}",
                read(&format!("{host}.err"))
            );
        }
        if guard {
            assert!(!text.contains("exec=0"), "{why}");
            assert!(
                read("exec.err").contains("refusing"),
                "{why}\n{}",
                read("exec.err")
            );
        }
        assert!(text.contains("after=0"), "{why}");
        eprintln!(
            "{damage}: command: {}; create: {}",
            read("command.err").lines().next().unwrap_or(""),
            read("create.err").lines().next().unwrap_or("")
        );
    }
}
