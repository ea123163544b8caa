//! `hooks install` / `hooks uninstall`: wire the guard into Claude Code's settings and the
//! commit-trailer hook into git, merging with what is there and removing exactly what was added.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

use super::claude_code::TOOL_MATCHER;

/// The error returned by the installers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("'{}' is not valid JSON; nothing was changed", .path.display())]
    InvalidJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("'{}' has an unexpected shape: {why}; nothing was changed", .path.display())]
    Shape { path: PathBuf, why: String },
    #[error("could not {op} '{}'", .path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("'git {args}' failed: {stderr}")]
    Git { args: String, stderr: String },
    #[error(
        "'{}' exists and is not a hook Stella installed, yet a chained hook is already there too; nothing was changed", .path.display()
    )]
    ChainTaken { path: PathBuf },
}

/// What an install or uninstall did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Changed,
    Unchanged,
}

/// The events Claude Code runs Stella for, with the tool matcher where the event has one.
fn events() -> [(&'static str, Option<&'static str>); 6] {
    [
        ("SessionStart", None),
        ("UserPromptSubmit", None),
        ("PreToolUse", Some(TOOL_MATCHER)),
        ("PostToolUse", Some(TOOL_MATCHER)),
        ("Stop", None),
        ("SessionEnd", None),
    ]
}

/// The command line Claude Code runs: the absolute path of this binary (quoted for the shell
/// when needed), so it works whether or not `git-stella` is on the PATH the host sees.
pub fn hook_command(exe: &Path) -> String {
    format!("{} hook claude-code", quoted(exe))
}

/// The shell prefix Claude Code runs every Bash command through (`CLAUDE_CODE_SHELL_PREFIX`):
/// the shell guard, in the Claude session's Stella session.
///
/// Claude Code 2.1 quotes everything before the prefix's last ` -` as one word, the program, so
/// the prefix is the program and one flag (`git-stella --claude-code-shell`, which the command
/// line rewrites to `exec --host claude-code`), and the path is left unquoted for it to quote.
pub fn shell_prefix(exe: &Path) -> String {
    format!("{} {PREFIX_ARGS}", exe.to_string_lossy())
}

/// The flag of the shell prefix.
pub const PREFIX_ARGS: &str = "--claude-code-shell";

/// The settings key that holds the shell prefix, under `env`.
pub const PREFIX_KEY: &str = "CLAUDE_CODE_SHELL_PREFIX";

/// Whether a shell prefix is one Stella wrote (whatever path the binary had then).
pub fn is_stella_prefix(prefix: &str) -> bool {
    prefix
        .strip_suffix(&format!(" {PREFIX_ARGS}"))
        .is_some_and(is_stella_program)
}

/// A path quoted for the shell when it needs it.
fn quoted(exe: &Path) -> String {
    let s = exe.to_string_lossy();
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Whether a hook command is one Stella wrote (whatever path the binary had then).
pub(crate) fn is_stella_command(command: &str) -> bool {
    command
        .strip_suffix(" hook claude-code")
        .is_some_and(is_stella_program)
}

/// Whether a program, as a hook command names it, is git-stella.
fn is_stella_program(program: &str) -> bool {
    let program = program.trim_matches('\'');
    program == "git-stella" || program.ends_with("/git-stella") || program == "git stella"
}

fn is_stella_hook(hook: &Value) -> bool {
    hook["command"].as_str().is_some_and(is_stella_command)
}

fn group(matcher: Option<&str>, command: &str) -> Value {
    let mut g = Map::new();
    if let Some(m) = matcher {
        g.insert("matcher".into(), json!(m));
    }
    g.insert(
        "hooks".into(),
        json!([{ "type": "command", "command": command }]),
    );
    Value::Object(g)
}

fn read_settings(path: &Path) -> Result<Option<Value>, Error> {
    let Some(bytes) = crate::fsutil::read_optional(path).map_err(|source| Error::Io {
        op: "read",
        path: path.to_owned(),
        source,
    })?
    else {
        return Ok(None);
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Some(json!({})));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|source| Error::InvalidJson {
        path: path.to_owned(),
        source,
    })?;
    if !value.is_object() {
        return Err(Error::Shape {
            path: path.to_owned(),
            why: "the top level is not an object".into(),
        });
    }
    Ok(Some(value))
}

fn write_settings(path: &Path, value: &Value) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(value).expect("JSON serialises");
    text.push('\n');
    crate::fsutil::write_settings_file(path, text.as_bytes()).map_err(|source| Error::Io {
        op: "write",
        path: path.to_owned(),
        source,
    })
}

/// The `hooks` object of the settings, checked for the shape Claude Code reads.
fn hooks_of<'v>(path: &Path, settings: &'v mut Value) -> Result<&'v mut Map<String, Value>, Error> {
    let shape = |why: &str| Error::Shape {
        path: path.to_owned(),
        why: why.to_owned(),
    };
    let obj = settings.as_object_mut().expect("checked when read");
    let hooks = obj.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| shape("'hooks' is not an object"))?;
    for (event, groups) in hooks.iter() {
        if !groups.is_array() {
            return Err(shape(&format!("'hooks.{event}' is not a list")));
        }
    }
    Ok(hooks)
}

/// Drop Stella's hooks from every group of `groups`, and the groups that only held them.
fn strip_stella(groups: &mut Vec<Value>) {
    groups.retain_mut(|g| {
        let Some(list) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = list.len();
        list.retain(|h| !is_stella_hook(h));
        !(list.is_empty() && before > 0)
    });
}

/// Merge Stella's hooks and shell prefix into Claude Code's settings at `path`, keeping every
/// other key and hook. Twice is the same as once: entries already in place are left where they
/// are. A shell prefix that is not Stella's is kept, and returned so the caller can say that
/// Bash commands then run without the shell guard.
pub fn install_claude(
    path: &Path,
    command: &str,
    prefix: &str,
) -> Result<(Outcome, Option<String>), Error> {
    let original = read_settings(path)?;
    let mut settings = original.clone().unwrap_or_else(|| json!({}));
    let foreign = {
        let env = env_of(path, &mut settings)?;
        match env.get(PREFIX_KEY) {
            Some(Value::String(p)) if !is_stella_prefix(p) => Some(p.clone()),
            Some(Value::String(_)) | None => {
                env.insert(PREFIX_KEY.into(), json!(prefix));
                None
            }
            Some(_) => {
                return Err(Error::Shape {
                    path: path.to_owned(),
                    why: format!("'env.{PREFIX_KEY}' is not a string"),
                });
            }
        }
    };
    let hooks = hooks_of(path, &mut settings)?;
    for (event, matcher) in events() {
        let wanted = group(matcher, command);
        let groups = hooks
            .entry(event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("checked to be a list");
        if groups.contains(&wanted) {
            continue;
        }
        // A Stella hook from another binary path or an older matcher: replace it.
        strip_stella(groups);
        groups.push(wanted);
    }
    if original.as_ref() == Some(&settings) {
        return Ok((Outcome::Unchanged, foreign));
    }
    write_settings(path, &settings)?;
    Ok((Outcome::Changed, foreign))
}

/// The `env` object of the settings, created when missing.
fn env_of<'v>(path: &Path, settings: &'v mut Value) -> Result<&'v mut Map<String, Value>, Error> {
    let obj = settings.as_object_mut().expect("checked when read");
    obj.entry("env")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| Error::Shape {
            path: path.to_owned(),
            why: "'env' is not an object".into(),
        })
}

/// Remove Stella's shell prefix from `env`, and `env` itself when that leaves it empty.
fn strip_prefix(settings: &mut Value) {
    let obj = settings.as_object_mut().expect("an object");
    let Some(env) = obj.get_mut("env").and_then(Value::as_object_mut) else {
        return;
    };
    if env
        .get(PREFIX_KEY)
        .and_then(Value::as_str)
        .is_some_and(is_stella_prefix)
    {
        env.remove(PREFIX_KEY);
        if env.is_empty() {
            obj.remove("env");
        }
    }
}

/// Remove exactly Stella's hooks from the settings at `path`: the groups, event lists and
/// `hooks` object that become empty go too, and a file left as `{}` is removed.
pub fn uninstall_claude(path: &Path) -> Result<Outcome, Error> {
    let Some(mut settings) = read_settings(path)? else {
        return Ok(Outcome::Unchanged);
    };
    let original = settings.clone();
    strip_prefix(&mut settings);
    if settings.get("hooks").is_some() {
        let hooks = hooks_of(path, &mut settings)?;
        let mut emptied = Vec::new();
        for (event, groups) in hooks.iter_mut() {
            let list = groups.as_array_mut().expect("checked to be a list");
            let before = list.len();
            strip_stella(list);
            if list.is_empty() && before > 0 {
                emptied.push(event.clone());
            }
        }
        for e in emptied {
            hooks.remove(&e);
        }
        if hooks.is_empty() {
            settings.as_object_mut().expect("an object").remove("hooks");
        }
    }
    if settings == original {
        return Ok(Outcome::Unchanged);
    }
    if settings.as_object().is_some_and(Map::is_empty) {
        std::fs::remove_file(path).map_err(|source| Error::Io {
            op: "remove",
            path: path.to_owned(),
            source,
        })?;
        return Ok(Outcome::Changed);
    }
    write_settings(path, &settings)?;
    Ok(Outcome::Changed)
}

// --- The git commit-trailer hook.

/// The name of the hook Stella installs.
pub const GIT_HOOK: &str = "prepare-commit-msg";
/// Where an existing hook is kept while Stella's runs it first.
pub const CHAINED: &str = "prepare-commit-msg.stella-chained";
const MARKER: &str = "# git-stella: commit trailer hook";

/// The hook script: run the hook it replaced (with the same arguments; its failure aborts the
/// commit, as it would have), then add `Stella-Session: <id>` when `$STELLA_SESSION` is set.
/// `addIfDifferent` keeps an amend from adding the same trailer twice.
fn git_hook_script() -> String {
    format!(
        r#"#!/bin/sh
{MARKER}
# Added by 'git stella hooks install --git'; 'git stella hooks uninstall --git' removes it
# (and puts back the hook it chains to, if there was one).
chained="$(dirname "$0")/{CHAINED}"
if [ -x "$chained" ]; then
	"$chained" "$@" || exit $?
fi
if [ -n "$STELLA_SESSION" ]; then
	git interpret-trailers --in-place --if-exists addIfDifferent \
		--trailer "Stella-Session: $STELLA_SESSION" "$1" || exit $?
fi
"#
    )
}

/// The folder git runs hooks from, honouring `core.hooksPath`.
pub fn git_hooks_dir(cwd: &Path) -> Result<PathBuf, Error> {
    let out = crate::child::die_with_parent(
        Command::new("git")
            .args(["rev-parse", "--git-path", "hooks"])
            .current_dir(cwd),
    )
    .output()
    .map_err(|source| Error::Io {
        op: "run git in",
        path: cwd.to_owned(),
        source,
    })?;
    if !out.status.success() {
        return Err(Error::Git {
            args: "rev-parse --git-path hooks".into(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    let rel = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(cwd.join(rel))
}

fn is_ours(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(MARKER))
}

/// Install the trailer hook into `dir`; an existing hook that is not Stella's is kept as the
/// chained hook and still runs first.
pub fn install_git(dir: &Path) -> Result<Outcome, Error> {
    let hook = dir.join(GIT_HOOK);
    let chained = dir.join(CHAINED);
    let io = |op, path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { op, path, source }
    };
    let script = git_hook_script();
    if is_ours(&hook) {
        if std::fs::read(&hook).is_ok_and(|b| b == script.as_bytes()) {
            return Ok(Outcome::Unchanged);
        }
    } else if hook.symlink_metadata().is_ok() {
        if chained.symlink_metadata().is_ok() {
            return Err(Error::ChainTaken { path: hook });
        }
        std::fs::rename(&hook, &chained).map_err(io("move aside", &hook))?;
    }
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    crate::fsutil::write_atomic(&hook, script.as_bytes(), 0o755).map_err(io("write", &hook))?;
    Ok(Outcome::Changed)
}

/// Remove Stella's trailer hook from `dir` and put back the hook it chained to.
pub fn uninstall_git(dir: &Path) -> Result<Outcome, Error> {
    let hook = dir.join(GIT_HOOK);
    let chained = dir.join(CHAINED);
    if !is_ours(&hook) {
        return Ok(Outcome::Unchanged);
    }
    std::fs::remove_file(&hook).map_err(|source| Error::Io {
        op: "remove",
        path: hook.clone(),
        source,
    })?;
    if chained.symlink_metadata().is_ok() {
        std::fs::rename(&chained, &hook).map_err(|source| Error::Io {
            op: "restore",
            path: chained.clone(),
            source,
        })?;
    }
    Ok(Outcome::Changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_absolute_quoted_and_recognised() {
        assert_eq!(
            hook_command(Path::new("/usr/local/bin/git-stella")),
            "/usr/local/bin/git-stella hook claude-code"
        );
        let spaced = hook_command(Path::new("/home/a b/git-stella"));
        assert_eq!(spaced, "'/home/a b/git-stella' hook claude-code");
        assert!(is_stella_command(&spaced));
        assert!(!is_stella_command("/bin/other hook claude-code"));
        assert!(!is_stella_command(
            "/usr/bin/git-stella hook claude-code --x"
        ));
    }
}
