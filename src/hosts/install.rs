//! `hooks install` / `hooks uninstall`: wire the guard into an agent host's settings file and the
//! commit-trailer hook into git, editing only Stella's own entries and taking out exactly those.
//!
//! A settings file is the team's: `install` adds Stella's entries as text edits and leaves every
//! other byte where it was (`jsonedit.rs`). What it changed is kept in a [`Ledger`] outside
//! the file, so `uninstall` of an otherwise untouched file gives back the original byte for byte,
//! removes the file when Stella created it, and removes the folders Stella created for it when
//! they are left empty. When the file changed since (or there is no ledger: a clone, another
//! machine), Stella's entries are found by their command and taken out one by one, with the
//! groups, event lists and objects that held nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::digest::Digest;
use crate::fsutil::PathIo;
use crate::jsonedit::json_path;
use crate::jsonedit::{self, Doc, Edit, Kind, Node, Step};

/// The error returned by the installers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A settings file is not UTF-8 JSON (with comments, for a host that reads them).
    #[error("'{}' is not valid JSON; nothing was changed", .path.display())]
    InvalidJson {
        /// Where the settings file is.
        path: PathBuf,
        /// Where it stops parsing.
        #[source]
        source: serde_json::Error,
    },
    /// A settings file is JSON, but a value Stella's entries go into is not of the kind they
    /// need (the top level, or `hooks`, is not an object).
    #[error("'{}' has an unexpected shape: {why}; nothing was changed", .path.display())]
    Shape {
        /// Where the settings file is.
        path: PathBuf,
        /// What is in the way.
        why: String,
    },
    /// A file or folder could not be read, written or removed.
    #[error(transparent)]
    Io(#[from] PathIo),
    /// git, run to find the hooks folder, failed.
    #[error("'git {args}' failed: {stderr}")]
    Git {
        /// Its arguments, as one line.
        args: String,
        /// What it said on stderr.
        stderr: String,
    },
    /// The git hook is someone else's, and the place it would be moved aside to (`CHAINED`)
    /// is taken.
    #[error(
        "'{}' exists and is not a hook Stella installed, yet a chained hook is already there too; nothing was changed", .path.display()
    )]
    ChainTaken {
        /// The git hook that is not Stella's.
        path: PathBuf,
    },
    /// A file Stella writes whole (OpenCode's plugin) is there, but it is someone else's.
    #[error("'{}' is not the file Stella wrote there; nothing was changed", .path.display())]
    NotOurs {
        /// Where the file is.
        path: PathBuf,
    },
}

fn io_error(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    let path = path.to_owned();
    move |source| Error::Io(PathIo { op, path, source })
}

/// What an install or uninstall did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Files were written or removed.
    Changed,
    /// Everything was already as asked: nothing was written.
    Unchanged,
}

// --- The binary the hooks run.

/// The path this `git-stella` was started by: `argv0` as given, looked up on `path_var` when it
/// is a bare name (git runs `git stella` that way), joined to `cwd` when relative. Symbolic links
/// are not resolved, so a hook keeps working when the link is pointed at a new build. `None`
/// when that path does not lead to the running binary `exe` (a caller that set `argv[0]` to
/// something else): then `exe` is the answer.
pub fn invoked_as(
    argv0: &OsStr,
    path_var: Option<&OsStr>,
    cwd: &Path,
    exe: &Path,
) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let given = Path::new(argv0);
    let found = if given.components().count() > 1 || given.is_absolute() {
        cwd.join(given)
    } else {
        std::env::split_paths(path_var?)
            .map(|dir| cwd.join(dir).join(given))
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))?
    };
    let (a, b) = (
        std::fs::metadata(&found).ok()?,
        std::fs::metadata(exe).ok()?,
    );
    // `.` says nothing; `..` stays, since it means something else after a symbolic link.
    let clean: PathBuf = found
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    ((a.dev(), a.ino()) == (b.dev(), b.ino())).then_some(clean)
}

/// The command line a host runs for Stella's hook: the absolute path of this binary (quoted for
/// the shell when needed), then `hook <agent>`. No PATH lookup and no git start-up on each call.
pub(crate) fn hook_command(exe: &Path, agent: &str) -> String {
    format!("{} hook {agent}", quoted(exe))
}

/// How the hooks an install writes find `git-stella`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    /// By this machine's path of the binary: for the settings files that are this machine's
    /// (a user's, Claude Code's `settings.local.json`).
    At(PathBuf),
    /// By looking on `PATH`, then in `USUAL_PLACES`, when the hook runs: for a project's
    /// settings, committed and run on every teammate's machine ([`portable_command`]).
    Found,
}

/// Where a project's hooks look for `git-stella` after `PATH`, in order: where `cargo install`,
/// `pip`-style user installs, a system-wide install and Homebrew put programs. `$HOME` is the
/// user's, expanded by the shell the host runs the hook in.
pub(crate) const USUAL_PLACES: [&str; 4] = [
    "$HOME/.cargo/bin",
    "$HOME/.local/bin",
    "/usr/local/bin",
    "/opt/homebrew/bin",
];

/// What a portable hook says when it finds no `git-stella` (on stderr, which the host shows).
/// It goes between single quotes in the shell: it holds none.
pub(crate) const NOT_INSTALLED: &str = "Stella is not installed: the hooks of this project run git-stella, and there is none on PATH or in ~/.cargo/bin, ~/.local/bin, /usr/local/bin or /opt/homebrew/bin. Install Stella, or take its hooks out of the settings of this project";

/// The hook command a project's settings hold: one line of POSIX shell that runs the
/// `git-stella` found on `PATH` or in `USUAL_PLACES` as `hook <agent>`, and names no path of
/// the machine that wrote it (an empty `PATH` adds no empty entry, which would search the
/// current folder: a checkout cannot plant its own `git-stella`). Where there is none, it says so (`NOT_INSTALLED`) and exits 1,
/// which the hosts report and go on from; on an event that can refuse a tool call (`blocks`), a
/// project that chose fail-closed (`hooks.on-error = "deny"` in `.stella/config.toml`, or `git
/// config stella.hookOnError deny`) gets exit 2 instead, which the hosts take as a refusal.
pub fn portable_command(agent: &str, blocks: bool) -> String {
    let places = USUAL_PLACES.join(":");
    let missing = if blocks {
        "if [ \"$(git config --get stella.hookOnError)\" = deny ] || grep -Eqs '^[[:space:]]*on-error[[:space:]]*=[[:space:]]*\"deny\"' \"$(git rev-parse --show-toplevel 2>/dev/null)/.stella/config.toml\"; then echo 'This project refuses writes when Stella cannot check them (fail-closed): nothing was done.' >&2; exit 2; fi; exit 1"
    } else {
        "exit 1"
    };
    format!(
        "s=$(PATH=\"${{PATH:+$PATH:}}{places}\"; command -v git-stella) && exec \"$s\" hook {agent}; echo '{NOT_INSTALLED}.' >&2; {missing}"
    )
}

/// The marker a [`portable_command`] for `agent` holds, whatever its version wrote around it.
fn portable_marker(agent: &str) -> String {
    format!("command -v git-stella) && exec \"$s\" hook {agent};")
}

/// Whether a hook command is a [`portable_command`] (of any host).
pub fn is_portable(command: &str) -> bool {
    command.contains("command -v git-stella) && exec \"$s\" hook ")
}

/// The `git-stella` a [`portable_command`] would run here: the first on `path_var`, then in
/// `USUAL_PLACES` under `home`. `None` when there is none.
pub fn find_portable(path_var: Option<&OsStr>, home: Option<&Path>) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    for place in USUAL_PLACES {
        match place.strip_prefix("$HOME/") {
            Some(rest) => dirs.extend(home.map(|h| h.join(rest))),
            None => dirs.push(PathBuf::from(place)),
        }
    }
    dirs.into_iter()
        .filter(|d| d.is_absolute())
        .map(|d| d.join("git-stella"))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// The shell prefix Claude Code runs every Bash command through (`CLAUDE_CODE_SHELL_PREFIX`):
/// the shell guard, in the Claude session's Stella session. Names the binary by the same path as
/// [`hook_command`].
///
/// Claude Code 2.1 quotes everything before the prefix's last ` -` as one word, the program, so
/// the prefix is the program and one flag (`git-stella --claude-code-shell`, which the command
/// line rewrites to `exec --host claude-code`), and the path is left unquoted for it to quote.
pub(crate) fn shell_prefix(launch: &Launch) -> String {
    match launch {
        Launch::At(exe) => format!("{} {PREFIX_ARGS}", exe.to_string_lossy()),
        // Claude Code runs the prefix's program by name: found on PATH.
        Launch::Found => format!("git-stella {PREFIX_ARGS}"),
    }
}

/// The flag of the shell prefix.
pub(crate) const PREFIX_ARGS: &str = "--claude-code-shell";

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

/// Whether a hook command is Stella's hook for `agent`, whatever path named the binary then
/// (`git stella hook codex` included, the form older versions wrote).
pub(crate) fn is_stella_command(command: &str, agent: &str) -> bool {
    command.contains(&portable_marker(agent))
        || command
            .strip_suffix(agent)
            .and_then(|c| c.strip_suffix(" hook "))
            .is_some_and(is_stella_program)
}

/// Whether a program, as a hook command names it, is git-stella.
fn is_stella_program(program: &str) -> bool {
    let program = program.trim_matches('\'');
    program == "git-stella" || program.ends_with("/git-stella") || program == "git stella"
}

// --- What Stella wants in a host's settings file.

/// How a host nests its hook entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `hooks.<Event>: [{matcher?, hooks: [{type: "command", command, …}]}]` (Claude Code,
    /// Codex, Gemini CLI).
    Grouped,
    /// `hooks.<event>: [{command, matcher?, …}]` (Cursor).
    Flat,
}

/// One hook Stella wants: the event, the matcher, and the handler object (holding `command`).
pub(crate) struct Wanted {
    pub(crate) event: &'static str,
    pub(crate) matcher: Option<&'static str>,
    pub(crate) command: String,
    pub(crate) handler: Value,
}

/// One event Stella hooks: its name, its matcher, and whether the host lets a hook on it refuse
/// the tool call (what a portable hook's fail-closed answer needs).
pub(crate) type Event = (&'static str, Option<&'static str>, bool);

/// A host's hook settings file: where it is, how it nests entries, and Stella's entries there.
pub struct HooksFile {
    /// Where the settings file is.
    pub path: PathBuf,
    pub(crate) shape: Shape,
    /// The word after `hook` in Stella's command for this host: a handler that runs
    /// `<git-stella> hook <agent>` is Stella's, whatever path named the binary.
    pub(crate) agent: &'static str,
    pub(crate) wanted: Vec<Wanted>,
    /// A top-level key the file must have (Cursor's `version`), added when missing.
    pub(crate) header: Option<(&'static str, Value)>,
    /// Claude Code's shell prefix, set under `env` unless a prefix of the user's is there.
    pub(crate) shell_prefix: Option<String>,
    /// Matchers earlier versions of Stella wrote for its own entries: an install brings them up
    /// to date (a matcher that is none of these is the user's choice, and stays).
    pub(crate) former_matchers: &'static [&'static str],
    /// The host reads the file with `//` and `/* */` comments (Gemini CLI): so does Stella,
    /// and its edits keep them.
    pub(crate) comments: bool,
}

impl HooksFile {
    /// The hooks file at `path` for the host `agent`, one handler (built by `handler` from the
    /// command line that runs Stella as `launch` says) on each of `events`.
    pub fn new(
        path: PathBuf,
        shape: Shape,
        agent: &'static str,
        launch: &Launch,
        handler: impl Fn(&str) -> Value,
        events: &[Event],
    ) -> HooksFile {
        let wanted = events
            .iter()
            .map(|&(event, matcher, blocks)| {
                let command = match launch {
                    Launch::At(exe) => hook_command(exe, agent),
                    Launch::Found => portable_command(agent, blocks),
                };
                Wanted {
                    event,
                    matcher,
                    handler: handler(&command),
                    command,
                }
            })
            .collect();
        HooksFile {
            path,
            shape,
            agent,
            wanted,
            header: None,
            shell_prefix: None,
            former_matchers: &[],
            comments: false,
        }
    }
}

impl HooksFile {
    fn is_stella(&self, command: &str) -> bool {
        self.wanted.iter().any(|w| w.command == command) || is_stella_command(command, self.agent)
    }

    /// Whether `node` is a handler running Stella's command.
    fn is_stella_handler(&self, doc: &Doc, node: &Node) -> bool {
        node.get("command")
            .map(|c| doc.value(c))
            .is_some_and(|c| c.as_str().is_some_and(|c| self.is_stella(c)))
    }

    /// The handler lists of an event's entries: for each entry, its position and the handlers
    /// in it (the entry itself for the flat shape).
    fn handlers<'d>(&self, list: &'d Node) -> Vec<(usize, Vec<&'d Node>)> {
        list.children()
            .into_iter()
            .enumerate()
            .filter_map(|(i, entry)| match self.shape {
                Shape::Flat => Some((i, vec![entry])),
                Shape::Grouped => entry
                    .get("hooks")
                    .filter(|h| h.is_array())
                    .map(|h| (i, h.children())),
            })
            .collect()
    }

    /// Whether the file holds Stella's hooks for this host (an unreadable file holds none).
    pub(crate) fn has_stella_hooks(&self) -> bool {
        let Ok(Some(text)) = read_text(&self.path) else {
            return false;
        };
        let Ok(doc) = self.parse_text(text) else {
            return false;
        };
        let Some(hooks) = doc.root().get("hooks") else {
            return false;
        };
        hooks
            .children()
            .into_iter()
            .filter(|l| l.is_array())
            .any(|list| {
                self.handlers(list)
                    .iter()
                    .any(|(_, hs)| hs.iter().any(|h| self.is_stella_handler(&doc, h)))
            })
    }
}

impl HooksFile {
    /// Parse the file's text as the host reads it.
    pub fn parse_text(&self, text: String) -> Result<Doc, serde_json::Error> {
        if self.comments {
            Doc::parse_with_comments(text)
        } else {
            Doc::parse(text)
        }
    }
}

/// Read a settings file as text; `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>, Error> {
    let Some(bytes) = crate::fsutil::read_optional(path).map_err(io_error("read", path))? else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::InvalidJson {
            path: path.to_owned(),
            source: serde::de::Error::custom("the file is not UTF-8 text"),
        })
}

/// Parse a settings file's text as its host reads it; it must hold an object.
fn parse(file: &HooksFile, text: String) -> Result<Doc, Error> {
    let path = &file.path;
    let doc = file.parse_text(text).map_err(|source| Error::InvalidJson {
        path: path.to_owned(),
        source,
    })?;
    if !doc.root().is_object() {
        return Err(shape(path, "the top level is not an object"));
    }
    Ok(doc)
}

fn shape(path: &Path, why: &str) -> Error {
    Error::Shape {
        path: path.to_owned(),
        why: why.to_owned(),
    }
}

/// Make Stella's entries in `doc` what `file` wants, as text edits: missing ones appended, a
/// command naming another path rewritten where it stands, a duplicate taken out. Returns a shell
/// prefix of the user's that was kept.
fn merge(doc: &mut Doc, file: &HooksFile) -> Result<Option<String>, Error> {
    let path = &file.path;
    let edit = |e: jsonedit::PathError| shape(path, &e.to_string());
    if let Some((key, value)) = &file.header
        && doc.root().get(key).is_none()
    {
        doc.append(&[], Some(key), value).map_err(edit)?;
    }
    let mut foreign = None;
    if let Some(prefix) = &file.shell_prefix {
        match doc.root().get("env") {
            None => doc
                .append(&[], Some("env"), &json!({ PREFIX_KEY: prefix }))
                .map_err(edit)?,
            Some(env) if !env.is_object() => return Err(shape(path, "'env' is not an object")),
            Some(env) => match env.get(PREFIX_KEY).map(|n| doc.value(n)) {
                None => doc
                    .append(&json_path!["env"], Some(PREFIX_KEY), &json!(prefix))
                    .map_err(edit)?,
                Some(Value::String(p)) if is_stella_prefix(&p) => {
                    if &p != prefix {
                        doc.set(&json_path!["env", PREFIX_KEY], &json!(prefix))
                            .map_err(edit)?;
                    }
                }
                Some(Value::String(p)) => foreign = Some(p),
                Some(_) => {
                    return Err(shape(path, &format!("'env.{PREFIX_KEY}' is not a string")));
                }
            },
        }
    }
    match doc.root().get("hooks") {
        None => doc.append(&[], Some("hooks"), &json!({})).map_err(edit)?,
        Some(h) if !h.is_object() => return Err(shape(path, "'hooks' is not an object")),
        Some(_) => {}
    }
    for w in &file.wanted {
        merge_one(doc, file, w)?;
    }
    Ok(foreign)
}

/// One Stella handler found in an event's list.
struct Found {
    entry: usize,
    /// Its place in the entry's `hooks` (grouped shape).
    handler: Option<usize>,
    matcher_ok: bool,
    command_ok: bool,
}

/// Make Stella's entry for one event what `file` wants.
fn merge_one(doc: &mut Doc, file: &HooksFile, w: &Wanted) -> Result<(), Error> {
    // The paths below come from this text's own parse: a miss is a bug, reported, not a panic.
    let edit = |e: jsonedit::PathError| shape(&file.path, &e.to_string());
    let list_path = json_path!["hooks", w.event].to_vec();
    match doc.at(&list_path) {
        None => doc
            .append(&json_path!["hooks"], Some(w.event), &json!([]))
            .map_err(edit)?,
        Some(list) if !list.is_array() => {
            return Err(shape(
                &file.path,
                &format!("'hooks.{}' is not a list", w.event),
            ));
        }
        Some(_) => {}
    }
    let list = doc.at(&list_path).expect("made above");
    let matcher = w.matcher.map(Value::from);
    let mut found = Vec::new();
    for (entry, handlers) in file.handlers(list) {
        let node = list.children()[entry];
        let matcher_ok = node.get("matcher").map(|m| doc.value(m)) == matcher;
        for (i, h) in handlers.iter().enumerate() {
            if file.is_stella_handler(doc, h) {
                let command = h.get("command").map(|c| doc.value(c));
                found.push(Found {
                    entry,
                    handler: (file.shape == Shape::Grouped).then_some(i),
                    matcher_ok,
                    command_ok: command.as_ref().and_then(Value::as_str) == Some(&w.command),
                });
            }
        }
    }
    // The one to keep: best where it is exactly as wanted. A matcher that differs is kept too
    // (someone widened it to cover a tool of theirs); only the command is Stella's to rewrite.
    let rank = |f: &Found| (!f.matcher_ok, !f.command_ok);
    let keep = (0..found.len()).min_by_key(|&i| rank(&found[i]));
    // A matcher an earlier Stella wrote is brought up to date.
    if let (Some(k), Some(m)) = (keep.map(|k| &found[k]), w.matcher)
        && !k.matcher_ok
    {
        let mut at = list_path.clone();
        at.push(Step::Index(k.entry));
        let old = doc
            .at(&at)
            .and_then(|n| n.get("matcher"))
            .map(|m| doc.value(m));
        if old
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|o| file.former_matchers.contains(&o))
        {
            at.push(Step::from("matcher"));
            doc.set(&at, &json!(m)).map_err(edit)?;
        }
    }
    if let Some(k) = keep.map(|k| &found[k])
        && !k.command_ok
    {
        let mut at = list_path.clone();
        at.push(Step::Index(k.entry));
        if let Some(h) = k.handler {
            at.extend(json_path!["hooks", h]);
        }
        at.push(Step::from("command"));
        doc.set(&at, &json!(w.command)).map_err(edit)?;
    }
    // Another copy of Stella's handler: taken out, last first so the positions found stay right.
    for (i, f) in found.iter().enumerate().rev() {
        if Some(i) == keep {
            continue;
        }
        let mut entry_path = list_path.clone();
        entry_path.push(Step::Index(f.entry));
        let only = f.handler.is_none()
            || doc
                .at(&entry_path)
                .and_then(|e| e.get("hooks"))
                .is_some_and(|h| h.len() == 1);
        match f.handler {
            Some(h) if !only => {
                entry_path.push(Step::from("hooks"));
                doc.remove(&entry_path, h).map_err(edit)?;
            }
            _ => doc.remove(&list_path, f.entry).map_err(edit)?,
        }
    }
    if keep.is_none() {
        let entry = match file.shape {
            Shape::Flat => {
                let mut h = w.handler.clone();
                if let (Some(m), Value::Object(o)) = (w.matcher, &mut h) {
                    o.insert("matcher".into(), json!(m));
                }
                h
            }
            Shape::Grouped => {
                let mut group = serde_json::Map::new();
                if let Some(m) = w.matcher {
                    group.insert("matcher".into(), json!(m));
                }
                group.insert("hooks".into(), json!([w.handler]));
                Value::Object(group)
            }
        };
        doc.append(&list_path, None, &entry).map_err(edit)?;
    }
    Ok(())
}

/// The next of Stella's entries to take out of `doc`, with whatever held only it: the handler,
/// else its group, else the event's list, else the `hooks` (or `env`) object.
fn next_removal(doc: &Doc, file: &HooksFile) -> Option<(Vec<Step>, usize)> {
    let root = doc.root();
    if file.shell_prefix.is_some()
        && let Some(env) = root.get("env")
        && let Some(p) = env.get(PREFIX_KEY)
        && doc.value(p).as_str().is_some_and(is_stella_prefix)
    {
        return Some(if env.len() == 1 {
            (Vec::new(), root.position("env")?)
        } else {
            (json_path!["env"].to_vec(), env.position(PREFIX_KEY)?)
        });
    }
    let hooks = root.get("hooks")?;
    let Kind::Object(events) = &hooks.kind else {
        return None;
    };
    for (index, (event, _, list)) in events.iter().enumerate() {
        // A name given twice: JSON readers keep the last one, and paths lead there.
        if !list.is_array() || hooks.position(event) != Some(index) {
            continue;
        }
        for (entry, handlers) in file.handlers(list) {
            for (i, h) in handlers.iter().enumerate() {
                if !file.is_stella_handler(doc, h) {
                    continue;
                }
                if file.shape == Shape::Grouped && handlers.len() > 1 {
                    return Some((
                        json_path!["hooks", event.as_str(), entry, "hooks"].to_vec(),
                        i,
                    ));
                }
                return Some(if list.len() > 1 {
                    (json_path!["hooks", event.as_str()].to_vec(), entry)
                } else if hooks.len() > 1 {
                    (json_path!["hooks"].to_vec(), index)
                } else {
                    (Vec::new(), root.position("hooks")?)
                });
            }
        }
    }
    None
}

/// `doc` with every one of Stella's entries taken out.
fn strip(mut doc: Doc, file: &HooksFile) -> String {
    while let Some((container, index)) = next_removal(&doc, file) {
        doc.remove(&container, index)
            .expect("a removal found in this text applies to it");
    }
    doc.into_text()
}

/// Whether a settings text holds nothing at all (only whitespace, `{}`, or the header).
fn holds_nothing(text: &str, header: Option<&(&'static str, Value)>) -> bool {
    match serde_json::from_str::<Value>(text) {
        _ if text.trim().is_empty() => true,
        Ok(Value::Object(m)) => {
            m.is_empty() || header.is_some_and(|(k, v)| m.len() == 1 && m.get(*k) == Some(v))
        }
        _ => false,
    }
}

// --- What install changed, kept for uninstall.

/// Where `hooks install` keeps what it changed: a small JSON file outside the settings files
/// (`.stella/private/` for a repository's, the data dir for the user's). Paths in it are
/// relative to `base` (the repository's root, or the home folder), so a moved checkout keeps
/// its record.
pub struct Ledger {
    /// The ledger's own file ([`LEDGER_FILE`] in its folder).
    pub file: PathBuf,
    /// The folder the paths in it are relative to.
    pub base: PathBuf,
}

/// The name of the ledger file.
pub const LEDGER_FILE: &str = "hooks-installed.json";

#[derive(Default, Serialize, Deserialize)]
struct LedgerData {
    /// Per settings file: what install did to it.
    #[serde(default)]
    files: BTreeMap<String, FileRecord>,
    /// Folders install created for a settings file. Uninstall removes each one once it is empty.
    #[serde(default)]
    folders: BTreeSet<String>,
}

#[derive(Serialize, Deserialize)]
struct FileRecord {
    /// The BLAKE3 digest of the bytes install wrote: `undo` holds only while the file has them.
    installed: String,
    /// The edits that turn those bytes back into the file before Stella's first install.
    undo: Vec<Edit>,
    /// Whether Stella's first install created the file.
    created: bool,
}

impl Ledger {
    fn key(&self, path: &Path) -> String {
        path.strip_prefix(&self.base)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    fn load(&self) -> Result<LedgerData, Error> {
        let Some(bytes) =
            crate::fsutil::read_optional(&self.file).map_err(io_error("read", &self.file))?
        else {
            return Ok(LedgerData::default());
        };
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::Io(PathIo {
                op: "read",
                path: self.file.clone(),
                source: io::Error::new(io::ErrorKind::InvalidData, e),
            })
        })
    }

    /// Save `data`; an empty ledger is removed.
    fn save(&self, data: &LedgerData) -> Result<(), Error> {
        if data.files.is_empty() && data.folders.is_empty() {
            return match std::fs::remove_file(&self.file) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(io_error("remove", &self.file)(e))
                }
                _ => Ok(()),
            };
        }
        if let Some(dir) = self.file.parent() {
            crate::fsutil::create_private_dir(dir, 0o700).map_err(io_error("create", dir))?;
        }
        let text = serde_json::to_vec_pretty(data).expect("a ledger serialises");
        crate::fsutil::write_atomic(&self.file, &text, 0o600).map_err(io_error("write", &self.file))
    }
}

fn digest(text: &str) -> String {
    Digest::of(text.as_bytes()).to_hex()
}

/// What [`install`] did.
#[derive(Debug)]
pub struct Installed {
    /// Whether the file changed.
    pub outcome: Outcome,
    /// A shell prefix of the user's that was kept: Bash commands then run without the shell
    /// guard, which the caller says.
    pub foreign_prefix: Option<String>,
}

/// Merge Stella's entries into the settings file, editing nothing else. Twice is the same as
/// once: entries already in place are left where they are.
pub fn install(file: &HooksFile, ledger: &Ledger) -> Result<Installed, Error> {
    let path = &file.path;
    let before = read_text(path)?;
    let mut doc = parse(file, before.clone().unwrap_or_default())?;
    let foreign_prefix = merge(&mut doc, file)?;
    if before.as_deref() == Some(doc.text()) {
        return Ok(Installed {
            outcome: Outcome::Unchanged,
            foreign_prefix,
        });
    }
    let mut data = ledger.load()?;
    let key = ledger.key(path);
    let mut undo = doc.undo().to_vec();
    let mut created = before.is_none();
    if let (Some(b), Some(prior)) = (&before, data.files.remove(&key)) {
        // Nothing changed since the last install: its undo still applies after this one's.
        if prior.installed == digest(b) {
            undo.extend(prior.undo);
        }
        created = prior.created;
    }
    data.files.insert(
        key,
        FileRecord {
            installed: digest(doc.text()),
            undo,
            created,
        },
    );
    if before.is_none() {
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            data.folders.insert(ledger.key(d));
            dir = d.parent();
        }
    }
    ledger.save(&data)?;
    crate::fsutil::write_settings_file(path, doc.text().as_bytes())
        .map_err(io_error("write", path))?;
    Ok(Installed {
        outcome: Outcome::Changed,
        foreign_prefix,
    })
}

/// Take Stella's entries out of the settings file, and nothing else. When the file is as install
/// left it, the ledger's record gives back the file as it was before, to the byte; otherwise each
/// of Stella's entries is taken out with what held only it. A file that then holds nothing is
/// removed when Stella created it (or nothing says who did); a symbolic link never is. Folders
/// install created are removed once empty.
pub fn uninstall(file: &HooksFile, ledger: &Ledger) -> Result<Outcome, Error> {
    let path = &file.path;
    let mut data = ledger.load()?;
    let key = ledger.key(path);
    let record = data.files.remove(&key);
    let mut outcome = Outcome::Unchanged;
    if let Some(text) = read_text(path)? {
        let restored = record
            .as_ref()
            .filter(|r| r.installed == digest(&text))
            .and_then(|r| jsonedit::apply(&text, &r.undo))
            .filter(|t| t.trim().is_empty() || file.parse_text(t.clone()).is_ok());
        let base = restored.unwrap_or_else(|| text.clone());
        let cleaned = if base.trim().is_empty() {
            base
        } else {
            strip(parse(file, base)?, file)
        };
        if cleaned != text {
            let created = record.as_ref().is_none_or(|r| r.created);
            let link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
            if created && !link && holds_nothing(&cleaned, file.header.as_ref()) {
                std::fs::remove_file(path).map_err(io_error("remove", path))?;
            } else {
                crate::fsutil::write_settings_file(path, cleaned.as_bytes())
                    .map_err(io_error("write", path))?;
            }
            outcome = Outcome::Changed;
        }
    }
    // Folders Stella created, deepest first, once nothing is left in them.
    let mut folders: Vec<String> = data.folders.iter().cloned().collect();
    folders.sort_by_key(|f| std::cmp::Reverse(Path::new(f).components().count()));
    let mut pruned = false;
    for f in folders {
        let dir = ledger.base.join(&f);
        match std::fs::remove_dir(&dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {}
            _ => pruned |= data.folders.remove(&f),
        }
    }
    if record.is_some() || pruned {
        ledger.save(&data)?;
    }
    Ok(outcome)
}

// --- The git commit-trailer hook.

/// The name of the hook Stella installs.
pub const GIT_HOOK: &str = "prepare-commit-msg";
/// Where an existing hook is kept while Stella's runs it first.
pub(crate) const CHAINED: &str = "prepare-commit-msg.stella-chained";
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
    .map_err(|source| {
        Error::Io(PathIo {
            op: "run git in",
            path: cwd.to_owned(),
            source,
        })
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
        move |source| Error::Io(PathIo { op, path, source })
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

/// Write `text`, a file of Stella's own whose first line is `mark` (OpenCode's plugin), at
/// `path`: created, or brought up to date when it is Stella's; a file of someone else's there is
/// an error, and stays as it is.
pub fn install_own_file(path: &Path, text: &str, mark: &str) -> Result<Outcome, Error> {
    let io = io_error;
    match std::fs::read(path) {
        Ok(bytes) if bytes == text.as_bytes() => return Ok(Outcome::Unchanged),
        Ok(bytes) if !bytes.starts_with(mark.as_bytes()) => {
            return Err(Error::NotOurs {
                path: path.to_owned(),
            });
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("read", path)(e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    crate::fsutil::write_atomic(path, text.as_bytes(), 0o644).map_err(io("write", path))?;
    Ok(Outcome::Changed)
}

/// Remove the file of Stella's own at `path` (its first line `mark`), and the folders that
/// leaves empty up to `base`; a file of someone else's there stays.
pub fn uninstall_own_file(path: &Path, mark: &str, base: &Path) -> Result<Outcome, Error> {
    match std::fs::read(path) {
        Ok(bytes) if bytes.starts_with(mark.as_bytes()) => {}
        Ok(_) => {
            return Err(Error::NotOurs {
                path: path.to_owned(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Outcome::Unchanged),
        Err(source) => {
            return Err(Error::Io(PathIo {
                op: "read",
                path: path.to_owned(),
                source,
            }));
        }
    }
    std::fs::remove_file(path).map_err(|source| {
        Error::Io(PathIo {
            op: "remove",
            path: path.to_owned(),
            source,
        })
    })?;
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(base) && *d != base) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(Outcome::Changed)
}

/// Remove Stella's trailer hook from `dir` and put back the hook it chained to.
pub fn uninstall_git(dir: &Path) -> Result<Outcome, Error> {
    let hook = dir.join(GIT_HOOK);
    let chained = dir.join(CHAINED);
    if !is_ours(&hook) {
        return Ok(Outcome::Unchanged);
    }
    std::fs::remove_file(&hook).map_err(|source| {
        Error::Io(PathIo {
            op: "remove",
            path: hook.clone(),
            source,
        })
    })?;
    if chained.symlink_metadata().is_ok() {
        std::fs::rename(&chained, &hook).map_err(|source| {
            Error::Io(PathIo {
                op: "restore",
                path: chained.clone(),
                source,
            })
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
            hook_command(Path::new("/usr/local/bin/git-stella"), "claude-code"),
            "/usr/local/bin/git-stella hook claude-code"
        );
        let spaced = hook_command(Path::new("/home/a b/git-stella"), "codex");
        assert_eq!(spaced, "'/home/a b/git-stella' hook codex");
        assert!(is_stella_command(&spaced, "codex"));
        assert!(is_stella_command("git stella hook codex", "codex"));
        assert!(!is_stella_command(&spaced, "cursor"));
        assert!(!is_stella_command(
            "/bin/other hook claude-code",
            "claude-code"
        ));
        assert!(!is_stella_command(
            "/usr/bin/git-stella hook claude-code --x",
            "claude-code"
        ));
    }

    /// Run a portable hook command as a host does (`sh -c`), in `dir`, with `path` and `home`.
    fn run_portable(command: &str, dir: &Path, path: &str, home: &Path) -> (i32, String, String) {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    #[test]
    fn a_portable_hook_finds_stella_on_path_or_in_the_usual_places_and_says_when_it_cannot() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let repo = base.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            assert!(
                Command::new("git")
                    .args(args)
                    .current_dir(&repo)
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .env("HOME", &base)
                    .output()
                    .unwrap()
                    .status
                    .success()
            )
        };
        git(&["init", "-q"]);
        // git and sh from the system; no git-stella there.
        let system = "/usr/bin:/bin";
        let fake = |dir: &Path, said: &str| {
            std::fs::create_dir_all(dir).unwrap();
            let f = dir.join("git-stella");
            std::fs::write(&f, format!("#!/bin/sh\necho {said} \"$@\"\n")).unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let home = base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        // A git-stella in the checkout is never run, even with an empty PATH.
        fake(&repo, "planted");
        let (code, out, _) = run_portable(&portable_command("codex", false), &repo, "", &home);
        assert_eq!((code, out.as_str()), (1, ""));
        std::fs::remove_file(repo.join("git-stella")).unwrap();
        for blocks in [false, true] {
            let command = portable_command("codex", blocks);
            assert!(is_portable(&command) && is_stella_command(&command, "codex"));
            assert!(!is_stella_command(&command, "gemini"));
            // Nowhere: said, exit 1 (the hosts go on).
            let (code, out, err) = run_portable(&command, &repo, system, &home);
            assert_eq!((code, out.as_str()), (1, ""), "{err}");
            assert_eq!(err, format!("{NOT_INSTALLED}.\n"));
        }
        // A project that chose fail-closed: exit 2 where the event can refuse, by either switch.
        std::fs::create_dir_all(repo.join(".stella")).unwrap();
        std::fs::write(
            repo.join(".stella/config.toml"),
            "[hooks]\n  on-error = \"deny\"\n",
        )
        .unwrap();
        let (code, _, err) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("fail-closed"), "{err}");
        let (code, ..) = run_portable(&portable_command("codex", false), &repo, system, &home);
        assert_eq!(code, 1);
        std::fs::remove_file(repo.join(".stella/config.toml")).unwrap();
        let (code, ..) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!(code, 1);
        git(&["config", "stella.hookOnError", "deny"]);
        let (code, ..) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!(code, 2);
        // In a usual place under HOME: found, run with the host's payload untouched.
        fake(&home.join(".cargo/bin"), "cargo");
        let (code, out, err) = run_portable(&portable_command("codex", true), &repo, system, &home);
        assert_eq!((code, out.as_str()), (0, "cargo hook codex\n"), "{err}");
        assert_eq!(
            find_portable(Some(OsStr::new(system)), Some(&home)),
            Some(home.join(".cargo/bin/git-stella"))
        );
        // On PATH: PATH comes first.
        fake(&base.join("bin"), "path");
        let path = format!("{}:{system}", base.join("bin").display());
        let (_, out, _) = run_portable(&portable_command("gemini", false), &repo, &path, &home);
        assert_eq!(out, "path hook gemini\n");
        assert_eq!(
            find_portable(Some(OsStr::new(&path)), Some(&home)),
            Some(base.join("bin/git-stella"))
        );
    }

    #[test]
    fn the_binary_is_named_by_the_path_it_was_run_by() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let real = base.join("real/git-stella");
        let other = base.join("real/other");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        for f in [&real, &other] {
            std::fs::write(f, "").unwrap();
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(base.join("bin")).unwrap();
        let link = base.join("bin/git-stella");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let path = std::env::join_paths([base.join("empty"), base.join("bin")]).unwrap();
        let as_run = |argv0: &str| invoked_as(OsStr::new(argv0), Some(&path), &base, &real);
        // A bare name, as git runs it: found on the PATH, the link kept.
        assert_eq!(as_run("git-stella"), Some(link.clone()));
        // Relative to the folder it was run in, `.` dropped; absolute as it is.
        assert_eq!(as_run("./bin/git-stella"), Some(link.clone()));
        assert_eq!(as_run(link.to_str().unwrap()), Some(link.clone()));
        // A name that leads elsewhere is no answer: the caller falls back on the binary itself.
        assert_eq!(as_run("real/other"), None);
        assert_eq!(as_run("nowhere"), None);
    }
}
