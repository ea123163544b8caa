//! One edit as agent tools describe it — replace an exact old text with a new one, once or
//! everywhere — and the texts a series of them makes: what a host's edit tool wrote (the hooks
//! replay it) and what MCP `edit_file` writes apply it the same way.

/// One replacement of an edit tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub(crate) old: String,
    pub(crate) new: String,
    /// Every occurrence, not just the first.
    pub(crate) all: bool,
}

/// The texts `edits` make of `base`, as hosts apply them: first the way Claude Code does it (an
/// edit that deletes a whole line takes its line ending along), then literally when that
/// differs. `None` when an edit does not apply (its old text is not there).
pub fn replay(base: &str, edits: &[Edit]) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for eats_line_end in [true, false] {
        let mut text = base.to_owned();
        for e in edits {
            text = apply(&text, e, eats_line_end)?;
        }
        if !out.contains(&text) {
            out.push(text);
        }
    }
    Some(out)
}

/// `text` with edit `e` applied, literally (`eats_line_end` false) or as Claude Code applies it
/// (an edit that deletes a whole line takes its line ending along); `None` when its old text is
/// not there. An empty old text creates content in an empty file only.
pub(crate) fn apply(text: &str, e: &Edit, eats_line_end: bool) -> Option<String> {
    if e.old.is_empty() {
        // An empty old text creates content in an empty file.
        return text.is_empty().then(|| e.new.clone());
    }
    let with_nl = format!("{}\n", e.old);
    let old =
        if eats_line_end && e.new.is_empty() && !e.old.ends_with('\n') && text.contains(&with_nl) {
            with_nl.as_str()
        } else {
            e.old.as_str()
        };
    if !text.contains(old) {
        return None;
    }
    Some(if e.all {
        text.replace(old, &e.new)
    } else {
        text.replacen(old, &e.new, 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str, all: bool) -> Edit {
        Edit {
            old: old.into(),
            new: new.into(),
            all,
        }
    }

    #[test]
    fn edits_replay_like_the_hosts() {
        assert_eq!(
            replay("alpha\nbeta\n", &[edit("beta", "BETA", false)]).unwrap(),
            vec!["alpha\nBETA\n"]
        );
        assert_eq!(
            replay("aac\nd\n", &[edit("a", "b", true), edit("c\n", "", false)]).unwrap(),
            vec!["bbd\n"]
        );
        assert_eq!(replay("abc", &[edit("x", "y", false)]), None);
        // Deleting a whole line: Claude Code takes its line ending along; a literal host not.
        assert_eq!(
            replay("one\ntwo\nthree\n", &[edit("two", "", false)]).unwrap(),
            vec!["one\nthree\n", "one\n\nthree\n"]
        );
        assert_eq!(
            replay("", &[edit("", "new\n", false)]).unwrap(),
            vec!["new\n"]
        );
    }
}
