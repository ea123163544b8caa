//! What Stella wants in a host's JSON settings file, and the text edits that put its entries
//! in and take them out again, leaving every other byte where it was.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::jsonedit::json_path;
use crate::jsonedit::{self, Doc, Kind, Node, Step};

use super::command::{
    Launch, PREFIX_KEY, hook_command, is_stella_command, is_stella_prefix, portable_command,
};
use super::{Error, io_error};

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
pub(super) fn read_text(path: &Path) -> Result<Option<String>, Error> {
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
pub(super) fn parse(file: &HooksFile, text: String) -> Result<Doc, Error> {
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
pub(super) fn merge(doc: &mut Doc, file: &HooksFile) -> Result<Option<String>, Error> {
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
pub(super) fn strip(mut doc: Doc, file: &HooksFile) -> String {
    while let Some((container, index)) = next_removal(&doc, file) {
        doc.remove(&container, index)
            .expect("a removal found in this text applies to it");
    }
    doc.into_text()
}

/// Whether a settings text holds nothing at all (only whitespace, `{}`, or the header).
pub(super) fn holds_nothing(text: &str, header: Option<&(&'static str, Value)>) -> bool {
    match serde_json::from_str::<Value>(text) {
        _ if text.trim().is_empty() => true,
        Ok(Value::Object(m)) => {
            m.is_empty() || header.is_some_and(|(k, v)| m.len() == 1 && m.get(*k) == Some(v))
        }
        _ => false,
    }
}
