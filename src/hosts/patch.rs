//! The `apply_patch` format Codex CLI defined, which Copilot CLI and OpenCode also offer their
//! models: an envelope of `*** Add File:`, `*** Update File:` (with `*** Move to:`) and
//! `*** Delete File:` sections, read into the calls Stella guards.

use super::{Edit, Op, Writes};

/// A patch's file operations in the core's words: an Update is edits (its hunks) to what the
/// session saw, and with `*** Move to:` a move carrying them.
pub(crate) fn ops(patch: &[PatchOp]) -> Vec<Op> {
    patch
        .iter()
        .map(|op| match op {
            PatchOp::Add { path, content } => Op::Write {
                path: path.clone(),
                how: Writes::Content(content.clone()),
                original: None,
            },
            PatchOp::Delete { path } => Op::Delete { path: path.clone() },
            PatchOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let edits = Writes::Edits(
                    hunks
                        .iter()
                        .map(|(old, new)| Edit {
                            old: old.clone(),
                            new: new.clone(),
                            all: false,
                        })
                        .collect(),
                );
                match move_to {
                    Some(to) => Op::Move {
                        from: path.clone(),
                        to: to.clone(),
                        how: edits,
                    },
                    None => Op::Write {
                        path: path.clone(),
                        how: edits,
                        original: None,
                    },
                }
            }
        })
        .collect()
}

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatchOp {
    Add {
        path: String,
        content: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        /// Each hunk as (old text, new text): context and `-` lines, context and `+` lines.
        hunks: Vec<(String, String)>,
    },
}

/// Parse an `apply_patch` envelope into its file operations, in order. Lines outside any file
/// section (`*** Begin Patch`, `*** End Patch`) are ignored; so is anything this parser does not
/// know, since Codex itself validates the patch.
pub(crate) fn parse(patch: &str) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    let mut hunk: Option<(Vec<&str>, Vec<&str>)> = None;
    let flush = |ops: &mut Vec<PatchOp>, hunk: &mut Option<(Vec<&str>, Vec<&str>)>| {
        if let (Some((old, new)), Some(PatchOp::Update { hunks, .. })) =
            (hunk.take(), ops.last_mut())
            && !(old.is_empty() && new.is_empty())
        {
            hunks.push((old.join("\n"), new.join("\n")));
        }
    };
    for line in patch.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            flush(&mut ops, &mut hunk);
            ops.push(PatchOp::Add {
                path: p.trim().to_owned(),
                content: String::new(),
            });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            flush(&mut ops, &mut hunk);
            ops.push(PatchOp::Delete {
                path: p.trim().to_owned(),
            });
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            flush(&mut ops, &mut hunk);
            ops.push(PatchOp::Update {
                path: p.trim().to_owned(),
                move_to: None,
                hunks: Vec::new(),
            });
            hunk = Some((Vec::new(), Vec::new()));
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            if let Some(PatchOp::Update { move_to, .. }) = ops.last_mut() {
                *move_to = Some(p.trim().to_owned());
            }
        } else if line.starts_with("*** ") {
            // *** End Patch, *** End of File
            flush(&mut ops, &mut hunk);
        } else if line.starts_with("@@") {
            flush(&mut ops, &mut hunk);
            if matches!(ops.last(), Some(PatchOp::Update { .. })) {
                hunk = Some((Vec::new(), Vec::new()));
            }
        } else {
            match ops.last_mut() {
                Some(PatchOp::Add { content, .. }) => {
                    if let Some(l) = line.strip_prefix('+') {
                        content.push_str(l);
                        content.push('\n');
                    }
                }
                Some(PatchOp::Update { .. }) => {
                    if let Some((old, new)) = hunk.as_mut() {
                        if let Some(l) = line.strip_prefix('-') {
                            old.push(l);
                        } else if let Some(l) = line.strip_prefix('+') {
                            new.push(l);
                        } else {
                            let l = line.strip_prefix(' ').unwrap_or(line);
                            old.push(l);
                            new.push(l);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    flush(&mut ops, &mut hunk);
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_with_several_files_moves_and_deletes_parse() {
        let patch = "*** Begin Patch\n\
*** Add File: docs/new.md\n\
+# New\n\
+body\n\
*** Update File: src/a.rs\n\
@@ fn main() {\n\
 fn main() {\n\
-    old();\n\
+    new();\n\
 }\n\
*** Update File: src/old_name.rs\n\
*** Move to: src/new_name.rs\n\
@@\n\
-x\n\
+y\n\
*** Delete File: src/gone.rs\n\
*** End Patch\n";
        assert_eq!(
            parse(patch),
            vec![
                PatchOp::Add {
                    path: "docs/new.md".into(),
                    content: "# New\nbody\n".into()
                },
                PatchOp::Update {
                    path: "src/a.rs".into(),
                    move_to: None,
                    hunks: vec![(
                        "fn main() {\n    old();\n}".into(),
                        "fn main() {\n    new();\n}".into()
                    )]
                },
                PatchOp::Update {
                    path: "src/old_name.rs".into(),
                    move_to: Some("src/new_name.rs".into()),
                    hunks: vec![("x".into(), "y".into())]
                },
                PatchOp::Delete {
                    path: "src/gone.rs".into()
                },
            ]
        );
    }
}
