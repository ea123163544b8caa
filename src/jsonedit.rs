//! Edit JSON text in place: add, replace or remove one member or item, keeping every other byte
//! (indentation, key order, one-line arrays, line ends, a final newline or its absence) as it was.
//!
//! Re-serialising a parsed value formats the whole file Stella's way; a settings file a team
//! commits is theirs, so Stella changes only the spans of its own entries. Each edit is recorded
//! with its inverse ([`Doc::undo`]), so what one run added can later be taken out to the byte.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON value's place in the text.
#[derive(Clone, Debug)]
pub struct Node {
    /// Where the value starts (its first byte) and ends (one past its last byte).
    pub(crate) span: Range<usize>,
    pub(crate) kind: Kind,
}

/// What a [`Node`] holds.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// Members in text order, each with the offset where its key starts.
    Object(Vec<(String, usize, Node)>),
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

impl Node {
    /// The value of the last member named `key` (the one JSON parsers keep).
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members.iter().rev().find(|m| m.0 == key).map(|m| &m.2),
            _ => None,
        }
    }

    /// The position of the last member named `key`.
    pub(crate) fn position(&self, key: &str) -> Option<usize> {
        match &self.kind {
            Kind::Object(members) => members.iter().rposition(|m| m.0 == key),
            _ => None,
        }
    }

    /// The items of an array, or the member values of an object.
    pub(crate) fn children(&self) -> Vec<&Node> {
        match &self.kind {
            Kind::Object(members) => members.iter().map(|m| &m.2).collect(),
            Kind::Array(items) => items.iter().collect(),
            Kind::Scalar => Vec::new(),
        }
    }

    pub(crate) fn is_object(&self) -> bool {
        matches!(self.kind, Kind::Object(_))
    }

    pub(crate) fn is_array(&self) -> bool {
        matches!(self.kind, Kind::Array(_))
    }

    /// How many members or items it holds.
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Object(m) => m.len(),
            Kind::Array(i) => i.len(),
            Kind::Scalar => 0,
        }
    }

    /// Where each child starts (a member at its key) and ends.
    fn child_spans(&self) -> Vec<Range<usize>> {
        match &self.kind {
            Kind::Object(members) => members.iter().map(|m| m.1..m.2.span.end).collect(),
            Kind::Array(items) => items.iter().map(|n| n.span.clone()).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// One step from a node to a child: a member by key, or an item by position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The member of an object named this.
    Key(String),
    /// The item of an array at this position, from 0.
    Index(usize),
}

impl From<&str> for Step {
    fn from(k: &str) -> Self {
        Step::Key(k.to_owned())
    }
}

impl From<usize> for Step {
    fn from(i: usize) -> Self {
        Step::Index(i)
    }
}

/// Build a path, an array of [`Step`]s: `json_path!["hooks", event, 0]`.
macro_rules! json_path {
    ($($s:expr),* $(,)?) => { [$($crate::jsonedit::Step::from($s)),*] };
}
pub(crate) use json_path;

/// One replacement in a text: the `len` bytes at `at` become `text`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub(crate) at: usize,
    pub(crate) len: usize,
    pub(crate) text: String,
}

/// Apply `edits` in order; `None` when one does not fit the text (it was made for another one).
pub(crate) fn apply(text: &str, edits: &[Edit]) -> Option<String> {
    let mut out = text.to_owned();
    for e in edits {
        let end = e.at.checked_add(e.len)?;
        if end > out.len() || !out.is_char_boundary(e.at) || !out.is_char_boundary(end) {
            return None;
        }
        out.replace_range(e.at..end, &e.text);
    }
    Some(out)
}

/// The text had no value where a path pointed, or not the kind an edit needs.
#[derive(Debug, thiserror::Error)]
#[error("no JSON {wanted} at {path:?}")]
pub(crate) struct PathError {
    pub(crate) path: Vec<Step>,
    pub(crate) wanted: &'static str,
}

/// A JSON text, its parse, and the inverse of every edit made to it.
#[derive(Debug)]
pub struct Doc {
    text: String,
    root: Node,
    /// Applied in order, these turn the text back into what [`Doc::parse`] was given.
    undo: Vec<Edit>,
    /// The text may hold comments ([`Doc::parse_with_comments`]).
    comments: bool,
}

/// `text` with every `//` and `/* */` comment outside a string turned into spaces (line ends
/// kept), so every other byte stays where it was: JSON with comments, as Gemini CLI reads its
/// settings (`strip-json-comments`). `None` when a block comment never ends.
pub(crate) fn blank_comments(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        match (in_string, b[i], b.get(i + 1)) {
            (true, b'\\', _) => i += 2,
            (true, b'"', _) | (false, b'"', _) => {
                in_string = !in_string;
                i += 1;
            }
            (false, b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            (false, b'/', Some(b'*')) => {
                let end = text[i + 2..].find("*/")? + i + 4;
                for c in &mut out[i..end] {
                    if !matches!(*c, b'\n' | b'\r') {
                        *c = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes outside strings were replaced, by ASCII: still UTF-8.
    String::from_utf8(out).ok()
}

impl Doc {
    /// Parse `text`, which must hold one JSON value. Text that is empty or only whitespace
    /// becomes `{}` (and a newline), the way an empty settings file means "no settings".
    pub(crate) fn parse(text: String) -> Result<Doc, serde_json::Error> {
        Doc::parse_as(text, false)
    }

    /// [`Doc::parse`] for a file its reader takes with `//` and `/* */` comments (Gemini CLI's
    /// settings): the comments stay where they are, and edits go around them.
    pub(crate) fn parse_with_comments(text: String) -> Result<Doc, serde_json::Error> {
        Doc::parse_as(text, true)
    }

    fn parse_as(text: String, comments: bool) -> Result<Doc, serde_json::Error> {
        let plain = if comments {
            blank_comments(&text).ok_or_else(|| {
                serde_json::Error::io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a /* comment */ is never closed",
                ))
            })?
        } else {
            text.clone()
        };
        if plain.trim().is_empty() && !text.trim().is_empty() {
            // Only comments: the object goes after them.
            let mut doc = Doc::unscanned(text, comments);
            let end = doc.text.len();
            let nl = if doc.text.ends_with('\n') { "" } else { "\n" };
            doc.replace_range(end..end, &format!("{nl}{{}}\n"));
            return Ok(doc);
        }
        if text.trim().is_empty() {
            let mut doc = Doc::unscanned(text, comments);
            let all = 0..doc.text.len();
            doc.replace_range(all, "{}\n");
            return Ok(doc);
        }
        serde_json::from_str::<Value>(&plain)?;
        let root = scan(&plain).expect("serde_json accepted it");
        Ok(Doc {
            text,
            root,
            undo: Vec::new(),
            comments,
        })
    }

    /// A document whose text holds no value yet: the edit that gives it one scans it.
    fn unscanned(text: String, comments: bool) -> Doc {
        Doc {
            root: Node {
                span: 0..0,
                kind: Kind::Scalar,
            },
            text,
            undo: Vec::new(),
            comments,
        }
    }

    /// The text as JSON: comments blanked out where the text may hold them.
    fn plain(&self) -> std::borrow::Cow<'_, str> {
        if self.comments {
            std::borrow::Cow::Owned(
                blank_comments(&self.text).expect("an edit keeps every comment closed"),
            )
        } else {
            std::borrow::Cow::Borrowed(&self.text)
        }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn into_text(self) -> String {
        self.text
    }

    /// The top-level value.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The edits that turn the current text back into the one parsed, in the order to apply.
    pub(crate) fn undo(&self) -> &[Edit] {
        &self.undo
    }

    /// The node at `path`.
    pub(crate) fn at(&self, path: &[Step]) -> Option<&Node> {
        let mut node = &self.root;
        for step in path {
            node = match (step, &node.kind) {
                (Step::Key(k), Kind::Object(_)) => node.get(k)?,
                (Step::Index(i), Kind::Array(items)) => items.get(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The value of a node.
    pub fn value(&self, node: &Node) -> Value {
        serde_json::from_str(&self.plain()[node.span.clone()]).expect("a scanned value parses")
    }

    /// Add a member (`key`) to the object at `path`, or an item (`key` `None`) to the array
    /// there, after its last child, laid out like its siblings.
    pub(crate) fn append(
        &mut self,
        path: &[Step],
        key: Option<&str>,
        value: &Value,
    ) -> Result<(), PathError> {
        let err = |wanted| PathError {
            path: path.to_vec(),
            wanted,
        };
        let node = self.at(path).ok_or_else(|| err("container"))?;
        match (&node.kind, key) {
            (Kind::Object(_), Some(_)) | (Kind::Array(_), None) => {}
            (_, Some(_)) => return Err(err("object")),
            (_, None) => return Err(err("array")),
        }
        let style = Style::of(&self.text);
        let colon = self.colon(node);
        let spans = node.child_spans();
        let (open, close) = (node.span.start, node.span.end - 1);
        let entry = |indent: Option<&str>, sep: &str| {
            let rendered = match indent {
                Some(ind) => style.pretty(value, ind, &colon),
                None => inline(value, &colon, sep),
            };
            match key {
                Some(k) => format!("{}{colon}{rendered}", quote(k)),
                None => rendered,
            }
        };
        let (range, text) = match (spans.first(), spans.last()) {
            (Some(first), Some(last)) => {
                if self.text[open + 1..first.start].contains('\n') {
                    let indent = line_indent(&self.text, last.start).to_owned();
                    let text = format!(",{}{indent}{}", style.nl, entry(Some(&indent), " "));
                    (last.end..last.end, text)
                } else {
                    let sep = self.comma_sep(node, &colon);
                    (last.end..last.end, format!(",{sep}{}", entry(None, &sep)))
                }
            }
            _ => {
                // A document written on several lines gets its new lines; a one-line document
                // stays on one line, unless it is just `{}`.
                let is_root = node.span.start == self.root.span.start;
                if is_root || self.text[self.root.span.clone()].contains('\n') {
                    let outer = line_indent(&self.text, open).to_owned();
                    let indent = format!("{outer}{}", style.unit);
                    let text = format!(
                        "{nl}{indent}{}{nl}{outer}",
                        entry(Some(&indent), " "),
                        nl = style.nl
                    );
                    (open + 1..close, text)
                } else {
                    let sep = if colon.ends_with(' ') { " " } else { "" };
                    (open + 1..close, entry(None, sep))
                }
            }
        };
        self.replace_range(range, &text);
        Ok(())
    }

    /// Replace the value at `path` with `value` (written on one line: meant for scalars).
    pub(crate) fn set(&mut self, path: &[Step], value: &Value) -> Result<(), PathError> {
        let node = self.at(path).ok_or_else(|| PathError {
            path: path.to_vec(),
            wanted: "value",
        })?;
        let colon = self.colon(node);
        let range = node.span.clone();
        self.replace_range(range, &inline(value, &colon, " "));
        Ok(())
    }

    /// Remove the child at `index` of the container at `path` with the separator that joined
    /// it to its neighbour, so removing what [`Doc::append`] added gives the text back as it was.
    /// Removing the only child leaves `{}` or `[]`.
    pub(crate) fn remove(&mut self, path: &[Step], index: usize) -> Result<(), PathError> {
        let node = self.at(path).ok_or_else(|| PathError {
            path: path.to_vec(),
            wanted: "container",
        })?;
        let spans = node.child_spans();
        let range = match spans.len() {
            n if index >= n => {
                return Err(PathError {
                    path: path.to_vec(),
                    wanted: "child",
                });
            }
            1 => node.span.start + 1..node.span.end - 1,
            _ if index > 0 => spans[index - 1].end..spans[index].end,
            _ => spans[0].start..spans[1].start,
        };
        self.replace_range(range, "");
        Ok(())
    }

    fn replace_range(&mut self, range: Range<usize>, text: &str) {
        self.undo.insert(
            0,
            Edit {
                at: range.start,
                len: text.len(),
                text: self.text[range.clone()].to_owned(),
            },
        );
        self.text.replace_range(range, text);
        self.root = scan(&self.plain()).expect("an edit keeps the text valid JSON");
    }

    /// What separates a key from its value here: this object's (or the nearest one's) own
    /// spelling when it fits on one line, else `": "`.
    fn colon(&self, near: &Node) -> String {
        let from = |n: &Node| match &n.kind {
            Kind::Object(members) => members.last().map(|(_, at, v)| {
                // `"key"`, then the separator: the key's closing quote is the last '"' before
                // the last ':' (a key may hold a ':' of its own).
                let between = &self.text[*at..v.span.start];
                let colon_at = between.rfind(':').unwrap_or(0);
                let quote_end = between[..colon_at].rfind('"').map_or(0, |q| q + 1);
                between[quote_end..].to_owned()
            }),
            _ => None,
        };
        from(near)
            .or_else(|| from(&self.root))
            .filter(|c| !c.contains('\n') && !c.contains('\r'))
            .unwrap_or_else(|| ": ".to_owned())
    }

    /// What follows a comma between this one-line container's children: what follows the
    /// first one, else a space when the container or its colons have one.
    fn comma_sep(&self, node: &Node, colon: &str) -> String {
        let spans = node.child_spans();
        let spaced = match (spans.first(), spans.get(1)) {
            (Some(a), Some(b)) => self.text[a.end..b.start].ends_with([' ', '\t']),
            (Some(a), None) => a.start > node.span.start + 1 || colon.ends_with(' '),
            _ => false,
        };
        if spaced { " " } else { "" }.to_owned()
    }
}

/// How the text lays itself out: its indentation unit and its line end.
struct Style {
    unit: String,
    nl: &'static str,
}

impl Style {
    fn of(text: &str) -> Style {
        let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let unit = text
            .lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|ws| !ws.is_empty())
            .unwrap_or("  ")
            .to_owned();
        Style { unit, nl }
    }

    /// `value` over several lines, its first line continuing the current one at `indent`.
    fn pretty(&self, value: &Value, indent: &str, colon: &str) -> String {
        let inner = format!("{indent}{}", self.unit);
        match value {
            Value::Object(m) if !m.is_empty() => {
                let members: Vec<String> = m
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{inner}{}{colon}{}",
                            quote(k),
                            self.pretty(v, &inner, colon)
                        )
                    })
                    .collect();
                let nl = self.nl;
                format!("{{{nl}{}{nl}{indent}}}", members.join(&format!(",{nl}")))
            }
            Value::Array(a) if !a.is_empty() => {
                let items: Vec<String> = a
                    .iter()
                    .map(|v| format!("{inner}{}", self.pretty(v, &inner, colon)))
                    .collect();
                let nl = self.nl;
                format!("[{nl}{}{nl}{indent}]", items.join(&format!(",{nl}")))
            }
            _ => inline(value, colon, " "),
        }
    }
}

/// `value` on one line, with `colon` after keys and `sep` after commas.
fn inline(value: &Value, colon: &str, sep: &str) -> String {
    match value {
        Value::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}{colon}{}", quote(k), inline(v, colon, sep)))
                .collect();
            format!("{{{}}}", members.join(&format!(",{sep}")))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(|v| inline(v, colon, sep)).collect();
            format!("[{}]", items.join(&format!(",{sep}")))
        }
        scalar => serde_json::to_string(scalar).expect("a JSON value serialises"),
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The spaces and tabs that start the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Find every value's span in `text`, which serde_json has accepted.
fn scan(text: &str) -> Option<Node> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    let node = s.value(text)?;
    s.ws();
    (s.i == s.b.len()).then_some(node)
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.i;
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(start..self.i);
                }
                _ => self.i += 1,
            }
        }
    }

    fn value(&mut self, text: &str) -> Option<Node> {
        self.ws();
        let start = self.i;
        let kind = match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.eat(b'}').is_none() {
                    loop {
                        self.ws();
                        let key = self.string()?;
                        let name: String = serde_json::from_str(&text[key.clone()]).ok()?;
                        self.ws();
                        self.eat(b':')?;
                        let value = self.value(text)?;
                        members.push((name, key.start, value));
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b'}' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Object(members)
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.eat(b']').is_none() {
                    loop {
                        items.push(self.value(text)?);
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
                if self.i == start {
                    return None;
                }
                Kind::Scalar
            }
        };
        Some(Node {
            span: start..self.i,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(t: &str) -> Doc {
        Doc::parse(t.to_owned()).unwrap()
    }

    /// Append, check the text, then undo and get the original back.
    fn round_trip(original: &str, path: &[Step], key: Option<&str>, v: Value, expected: &str) {
        let mut d = doc(original);
        d.append(path, key, &v).unwrap();
        assert_eq!(d.text(), expected);
        assert_eq!(apply(d.text(), d.undo()).unwrap(), original);
        // Removing what was appended gives it back too.
        let container = d.at(path).unwrap();
        let last = container.len() - 1;
        if container.len() > 1 {
            d.remove(path, last).unwrap();
            assert_eq!(d.text(), original);
        }
    }

    #[test]
    fn appends_follow_the_siblings_layout() {
        round_trip(
            "{\n    \"a\": 1\n}",
            &json_path![],
            Some("b"),
            json!({"c": [1]}),
            "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": [\n            1\n        ]\n    }\n}",
        );
        round_trip(
            "{\r\n\t\"a\": [ 1, 2 ]\r\n}\r\n",
            &json_path!["a"],
            None,
            json!({"x": true}),
            "{\r\n\t\"a\": [ 1, 2, {\"x\": true} ]\r\n}\r\n",
        );
        round_trip(
            "{\"env\": {\"A\": \"b\"}}",
            &json_path!["env"],
            Some("C"),
            json!("d"),
            "{\"env\": {\"A\": \"b\", \"C\": \"d\"}}",
        );
        round_trip(
            "{\"a\":1}",
            &json_path![],
            Some("b"),
            json!([1, "z"]),
            "{\"a\":1,\"b\":[1,\"z\"]}",
        );
        round_trip(
            "{\n  \"h\": {}\n}\n",
            &json_path!["h"],
            Some("E"),
            json!([]),
            "{\n  \"h\": {\n    \"E\": []\n  }\n}\n",
        );
        round_trip("{}", &json_path![], Some("k"), json!(1), "{\n  \"k\": 1\n}");
        round_trip(
            " \n",
            &json_path![],
            Some("k"),
            json!(1),
            "{\n  \"k\": 1\n}\n",
        );
    }

    #[test]
    fn removing_takes_the_separator_with_it() {
        let mut d = doc("[\n  1,\n  2,\n  3\n]");
        d.remove(&[], 0).unwrap();
        assert_eq!(d.text(), "[\n  2,\n  3\n]");
        d.remove(&[], 1).unwrap();
        assert_eq!(d.text(), "[\n  2\n]");
        d.remove(&[], 0).unwrap();
        assert_eq!(d.text(), "[]");
        assert_eq!(apply(d.text(), d.undo()).unwrap(), "[\n  1,\n  2,\n  3\n]");
    }

    #[test]
    fn paths_keys_and_strings_with_escapes() {
        let mut d = doc(r#"{"a\"b": {"c": ["x]}", "y\\"]}, "a\"b": {"c": [1]}}"#);
        // The last member of a name wins, as in JSON parsers.
        assert_eq!(
            d.value(d.at(&json_path!["a\"b", "c", 0]).unwrap()),
            json!(1)
        );
        d.set(&json_path!["a\"b", "c", 0], &json!("new")).unwrap();
        assert!(d.text().ends_with(r#"{"c": ["new"]}}"#), "{}", d.text());
        assert!(d.at(&json_path!["nope"]).is_none());
        assert!(
            d.append(&json_path!["a\"b", "c"], Some("k"), &json!(1))
                .is_err()
        );
    }

    #[test]
    fn comments_stay_where_they_are_and_edits_go_around_them() {
        let text =
            "{\n  // first\n  \"a\": \"x//y /* z */\", /* after a */\n  \"b\": [1 /* one */]\n}\n";
        assert!(Doc::parse(text.to_owned()).is_err());
        let blank = blank_comments(text).unwrap();
        assert_eq!(blank.len(), text.len());
        assert!(
            blank.contains("\"x//y /* z */\""),
            "strings keep their slashes: {blank}"
        );
        assert!(
            !blank.contains("first") && !blank.contains("one"),
            "{blank}"
        );
        let mut d = Doc::parse_with_comments(text.to_owned()).unwrap();
        assert_eq!(d.value(d.root())["a"], json!("x//y /* z */"));
        d.append(&json_path!["b"], None, &json!(2)).unwrap();
        d.append(&[], Some("c"), &json!({"k": true})).unwrap();
        assert!(
            d.text().contains("// first") && d.text().contains("/* one */"),
            "{}",
            d.text()
        );
        assert_eq!(d.value(d.at(&json_path!["c", "k"]).unwrap()), json!(true));
        assert_eq!(apply(d.text(), d.undo()).unwrap(), text);
        // An unclosed block comment is not JSON with comments either; only comments is `{}`.
        assert!(Doc::parse_with_comments("{} /* open".to_owned()).is_err());
        let d = Doc::parse_with_comments("// nothing yet\n".to_owned()).unwrap();
        assert_eq!(d.text(), "// nothing yet\n{}\n");
    }
}
