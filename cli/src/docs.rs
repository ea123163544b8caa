//! Man pages and shell completions, generated from the one clap tree.
//!
//! The words live once, with each command: its `Args` doc comment is the page's DESCRIPTION and
//! its `after_long_help` holds the further sections (`Examples:`, `Exit status:`,
//! `Decision table:`, …, one heading a line, ending in a colon), so `git stella CMD --help` and
//! `man git-stella-CMD` say the same thing. `man/` and `completions/` are committed copies of what
//! [`generate`] writes; a test fails when they are stale and names [`REFRESH`]. Nothing here runs at
//! build time: a build script writing into the source tree would dirty every checkout.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use clap::{Command, CommandFactory};
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

use super::Cli;

/// The command that refreshes the committed `man/` and `completions/`.
pub const REFRESH: &str = "cargo run --example gen-docs";

/// The folders [`generate`] owns, relative to the repository root.
pub const FOLDERS: [&str; 2] = ["man", "completions"];

/// The exit status section of a page whose command does not write its own.
const DEFAULT_EXIT_STATUS: &str = "  0  done, or the write is allowed
  1  refused by a check (a stale write, a fingerprint mismatch, a materialize that would
     overwrite someone's work); nothing was written
  2  an error: bad usage, not inside a git working tree, an unknown session, an unreadable
     file, an I/O failure";

/// The name `git`, `man` and the shells know the program by.
const BIN: &str = "git-stella";

/// Glue between git's bash completion and clap's.
///
/// git's completion (`git stella <TAB>`) calls a function named `_git_stella`, after asking
/// bash-completion to load `completions/git-stella` if it is not defined yet; clap's script
/// defines `_git__stella` for the `git-stella` command only. The glue rewrites git's words into the
/// ones clap expects and adds the trailing space git's `complete -o nospace` leaves to each
/// function.
const BASH_GIT_GLUE: &str = r#"
# `git stella <TAB>`: git's completion calls _git_stella (loading this file through
# bash-completion's _completion_loader "git-stella" when it is not defined yet).
_git_stella() {
    local idx=${__git_cmd_idx:-1}
    local COMP_WORDS=("git-stella" "${words[@]:idx+1}")
    local COMP_CWORD=$((cword - idx))
    local COMP_LINE="${COMP_WORDS[*]}"
    local COMP_POINT=${#COMP_LINE}
    local prev=""
    ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD-1]}"
    _git__stella "git-stella" "${COMP_WORDS[COMP_CWORD]}" "$prev"
    # git completes with -o nospace: end each whole word with a space, a folder with a slash.
    local i
    for i in "${!COMPREPLY[@]}"; do
        if [[ -d "${COMPREPLY[i]}" ]]; then
            COMPREPLY[i]="${COMPREPLY[i]%/}/"
        elif [[ "${COMPREPLY[i]}" != *= ]]; then
            COMPREPLY[i]="${COMPREPLY[i]} "
        fi
    done
}
"#;

/// Glue between fish's git completion and ours, for fish's `conf.d/`.
///
/// fish's git completion registers each `git-*` program under its full name up to fish 3.6
/// (`__fish_git_using_command git-stella`), so `git stella <TAB>` never reaches
/// `completions/git-stella.fish`; this registers it as `stella`. The condition is evaluated when
/// completing, after fish has loaded its git completion.
const FISH_GIT_GLUE: &str = "# `git stella <TAB>`: hand over to the completion of git-stella (fish 3.6 and older register
# git-* programs under their full name, which never matches `git stella`).
complete -c git -f -n '__fish_git_using_command stella' -a '(__fish_git_complete_custom_command stella)'
";

/// Every generated file: its path relative to the repository root, and its bytes.
pub fn render_all() -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut top = Cli::command().disable_help_subcommand(true);
    top.build();
    let mut stack = vec![(top, Vec::<String>::new())];
    while let Some((cmd, parents)) = stack.pop() {
        let name = page_name(&cmd);
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut chain = parents.clone();
            chain.push(name.clone());
            stack.push((sub.clone(), chain));
        }
        files.push((
            Path::new("man").join(format!("{name}.1")),
            man_page(&cmd, &parents),
        ));
    }
    for (shell, file) in [
        (Shell::Bash, "git-stella.bash"),
        (Shell::Zsh, "_git-stella"),
        (Shell::Fish, "git-stella.fish"),
    ] {
        files.push((Path::new("completions").join(file), completion(shell)));
    }
    files.push((
        Path::new("completions").join("git-stella.conf.fish"),
        FISH_GIT_GLUE.as_bytes().to_vec(),
    ));
    files.sort();
    files
}

/// Write `man/` and `completions/` under `root` (the repository root), removing generated files
/// whose command is gone; returns the files written.
pub fn generate(root: &Path) -> io::Result<Vec<PathBuf>> {
    let files = render_all();
    let keep: BTreeSet<PathBuf> = files.iter().map(|(p, _)| root.join(p)).collect();
    for folder in FOLDERS {
        let dir = root.join(folder);
        std::fs::create_dir_all(&dir)?;
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_file() && !keep.contains(&path) {
                std::fs::remove_file(&path)?;
            }
        }
    }
    let mut written = Vec::new();
    for (rel, bytes) in files {
        let path = root.join(rel);
        std::fs::write(&path, bytes)?;
        written.push(path);
    }
    Ok(written)
}

/// `git-stella`, `git-stella-read`, `git-stella-session-start`: what `man` is asked for.
fn page_name(cmd: &Command) -> String {
    cmd.get_display_name().unwrap_or(cmd.get_name()).to_owned()
}

fn completion(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN, &mut buf);
    if shell != Shell::Bash {
        return buf;
    }
    // clap's bash script spells a state `git__stella__subcmd__read` where it is set and
    // `git__subcmd__stella__subcmd__read` where it is matched, so nothing past the subcommand
    // completes for a hyphenated binary name (https://github.com/clap-rs/clap/issues/6421).
    let script = String::from_utf8(buf).expect("clap writes UTF-8");
    let script = script.replace("git__subcmd__stella", "git__stella");
    let mut script = bash_values(script, &cmd);
    script.push_str(BASH_SESSIONS);
    script.push_str(BASH_GIT_GLUE);
    script.into_bytes()
}

/// The session ids bash offers: read by `git stella session list`, and only in a workspace where
/// Stella already keeps something, so a TAB never sets one up.
const BASH_SESSIONS: &str = r#"
# The session ids of the workspace around the current folder (with --dropped, the dropped ones
# 'session undrop' can bring back).
__git_stella_sessions() {
    local top
    top=$(git rev-parse --show-toplevel 2>/dev/null) || return 0
    [[ -d "$top/.stella/private" ]] || return 0
    git stella session list "$@" 2>/dev/null | tail -n +2 | cut -d' ' -f1
}
"#;

/// What clap's bash script cannot know: `--session` and an `ID` operand take session ids, `-C` a
/// folder, and a `PATH` or `FILE` operand a file (clap offers only the options there).
fn bash_values(script: String, cmd: &Command) -> String {
    const FILES: &str = r#"COMPREPLY=($(compgen -f "${cur}"))"#;
    let mut script = script
        .replace(
            &format!("--session)\n                    {FILES}"),
            "--session)\n                    COMPREPLY=($(compgen -W \"$(__git_stella_sessions)\" -- \"${cur}\"))",
        )
        .replace(
            &format!("--date)\n                    {FILES}"),
            "--date)\n                    COMPREPLY=($(compgen -W \"relative local iso iso-strict rfc short raw unix default\" -- \"${cur}\"))",
        )
        .replace(
            &format!("-C)\n                    {FILES}"),
            "-C)\n                    COMPREPLY=($(compgen -d -- \"${cur}\"))",
        );
    const OPTS: &str = r#"COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )"#;
    let mut states = Vec::new();
    operand_states(cmd, "git__stella".to_owned(), &mut states);
    for (state, operand) in states {
        let header = format!("\n        {state})\n");
        let Some(start) = script.find(&header) else {
            continue;
        };
        let end = script[start + header.len()..]
            .find("\n        git__")
            .map_or(script.len(), |e| start + header.len() + e);
        let with = match operand {
            Operand::Session => {
                r#"COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions)" -- "${cur}") )"#
            }
            Operand::Dropped => {
                r#"COMPREPLY=( $(compgen -W "${opts} $(__git_stella_sessions --dropped)" -- "${cur}") )"#
            }
            Operand::File => {
                r#"COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") $(compgen -f -- "${cur}") )"#
            }
        };
        let block = script[start..end].replace(OPTS, with);
        script.replace_range(start..end, &block);
    }
    script
}

/// What a command's operand names.
enum Operand {
    Session,
    /// A dropped session's id (`session undrop`).
    Dropped,
    File,
}

/// Each (sub)command's state in clap's bash script, with what its operand takes.
fn operand_states(cmd: &Command, state: String, out: &mut Vec<(String, Operand)>) {
    let operand =
        cmd.get_positionals()
            .find_map(|a| match a.get_value_names()?.first()?.as_str() {
                "ID" => Some(Operand::Session),
                "DROPPED_ID" => Some(Operand::Dropped),
                "PATH" | "FILE" => Some(Operand::File),
                _ => None,
            });
    if let Some(operand) = operand {
        out.push((state.clone(), operand));
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name().replace('-', "__subcmd__");
        operand_states(sub, format!("{state}__subcmd__{name}"), out);
    }
}

/// One page: clap_mangen's synopsis, options and subcommands, framed by the command's own prose.
fn man_page(cmd: &Command, parents: &[String]) -> Vec<u8> {
    let name = page_name(cmd);
    let man = Man::new(cmd.clone())
        .title(name.to_uppercase())
        .source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
        .manual("Git Stella Manual");
    // Each clap_mangen section renders with roff's preamble; keep only the first.
    let preamble = Roff::new().render();
    let mut page = String::new();
    let mut section = |f: &dyn Fn(&mut dyn io::Write) -> io::Result<()>| {
        let mut buf = Vec::new();
        f(&mut buf).expect("writing to memory cannot fail");
        let text = String::from_utf8(buf).expect("roff is UTF-8");
        let text = if page.is_empty() {
            text.as_str()
        } else {
            text.strip_prefix(&preamble).unwrap_or(&text)
        };
        page.push_str(text);
    };
    section(&|w| man.render_title(w));

    let mut roff = Roff::new();
    roff.control("SH", ["NAME"]);
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    roff.text([roman(format!("{name} - {about}"))]);
    section(&|w| w.write_all(roff.to_roff().as_bytes()));

    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]);
    roff.text(synopsis(cmd));
    section(&|w| w.write_all(roff.to_roff().as_bytes()));

    let mut roff = Roff::new();
    roff.control("SH", ["DESCRIPTION"]);
    let long = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    // The first paragraph is the NAME line already; say it again only when it is all there is.
    let long = match long.split_once("\n\n") {
        Some((first, rest)) if first.trim() == about.trim() => rest.to_owned(),
        _ => long,
    };
    blocks(&mut roff, &long);
    section(&|w| w.write_all(roff.to_roff().as_bytes()));

    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        section(&|w| man.render_options_section(w));
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        section(&|w| man.render_subcommands_section(w));
    }

    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(|a| a.to_string())
        .unwrap_or_default();
    let mut extra = sections(&after);
    if !extra.iter().any(|(h, _)| h == "EXIT STATUS") {
        extra.push(("EXIT STATUS".to_owned(), DEFAULT_EXIT_STATUS.to_owned()));
    }
    let mut roff = Roff::new();
    for (heading, body) in &extra {
        roff.control("SH", [heading.as_str()]);
        blocks(&mut roff, body);
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut see: Vec<String> = parents.iter().rev().map(|p| format!("{p}(1)")).collect();
    see.push("git(1)".to_owned());
    roff.text([roman(see.join(", "))]);
    section(&|w| w.write_all(roff.to_roff().as_bytes()));
    page.into_bytes()
}

/// The SYNOPSIS line: every option with the value it takes named (`[-C DIR]`, `[--session ID]`),
/// which clap_mangen's own synopsis leaves out, then the operands and the subcommand.
fn synopsis(cmd: &Command) -> Vec<Inline> {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut line = vec![bold(name)];
    let mut options: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    // As clap_mangen orders them: by letter, the optional ones first.
    options.sort_by_key(|a| {
        let key = a
            .get_short()
            .map(|s| s.to_string())
            .or_else(|| a.get_long().map(str::to_owned))
            .unwrap_or_default()
            .to_lowercase();
        (a.is_required_set(), key)
    });
    for a in options {
        let (open, close) = if a.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => {
                line.push(bold(format!("-{s}")));
                line.push(roman("|"));
                line.push(bold(format!("--{l}")));
            }
            (Some(s), None) => line.push(bold(format!("-{s}"))),
            (None, Some(l)) => line.push(bold(format!("--{l}"))),
            (None, None) => continue,
        }
        let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
        if takes_value {
            let value = a
                .get_value_names()
                .map(|v| v.join(" "))
                .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
            line.push(roman(" "));
            line.push(italic(value));
        }
        line.push(roman(close));
        if matches!(a.get_action(), clap::ArgAction::Count) {
            line.push(roman("..."));
        }
    }
    for a in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let (open, close) = if a.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        let value = a
            .get_value_names()
            .map(|v| v.join(" "))
            .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
        let many = a.get_num_args().is_some_and(|n| n.max_values() > 1);
        line.push(roman(format!(" {open}")));
        line.push(italic(value));
        line.push(roman(format!("{close}{}", if many { "..." } else { "" })));
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        line.push(roman(" "));
        line.push(italic("COMMAND"));
    }
    line
}

/// Split help text into sections at lines such as `Exit status:` (a heading alone on its line, at
/// the left margin); text before the first heading is NOTES.
fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let heading = line
            .strip_suffix(':')
            .filter(|h| !h.is_empty() && !h.starts_with(char::is_whitespace) && h.len() < 40);
        match (heading, out.last_mut()) {
            (Some(h), _) => out.push((h.to_uppercase(), String::new())),
            (None, Some((_, body))) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) if line.trim().is_empty() => {}
            (None, None) => out.push(("NOTES".to_owned(), format!("{line}\n"))),
        }
    }
    out
}

/// Paragraphs (blank-line separated) become filled text, with `code` in bold; a paragraph whose
/// lines are all indented is kept as it is (tables, examples).
fn blocks(roff: &mut Roff, text: &str) {
    let mut first = true;
    for para in text.split("\n\n") {
        let lines: Vec<&str> = para.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            continue;
        }
        if !first {
            roff.control("PP", []);
        }
        first = false;
        if lines.iter().all(|l| l.starts_with(char::is_whitespace)) {
            let indent = lines
                .iter()
                .map(|l| l.len() - l.trim_start().len())
                .min()
                .unwrap_or(0);
            roff.control("RS", ["4"]);
            roff.control("nf", []);
            for l in &lines {
                roff.text([roman(&l[indent..])]);
            }
            roff.control("fi", []);
            roff.control("RE", []);
        } else {
            // A `code` span may run over a line break.
            let mut code = false;
            for l in &lines {
                let mut inlines = Vec::new();
                for (i, part) in l.trim().split('`').enumerate() {
                    if i > 0 {
                        code = !code;
                    }
                    if !part.is_empty() {
                        inlines.push(if code { bold(part) } else { roman(part) });
                    }
                }
                roff.text(inlines);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_at_headings() {
        let s = sections("Examples:\n  git stella read a\n\nExit status:\n  0  done\n");
        assert_eq!(
            s,
            vec![
                ("EXAMPLES".to_owned(), "  git stella read a\n\n".to_owned()),
                ("EXIT STATUS".to_owned(), "  0  done\n".to_owned()),
            ]
        );
        assert_eq!(sections("loose text\n")[0].0, "NOTES");
    }

    #[test]
    fn indented_paragraphs_stay_as_written() {
        let mut roff = Roff::new();
        blocks(
            &mut roff,
            "Run `git stella gc` or `git\nstella gc --grace 0`.\n\n  a   b\n  c   d\n",
        );
        let text = roff.to_roff();
        assert!(text.contains("\\fBgit stella gc\\fR"), "{text}");
        assert!(
            text.contains("\n\\fBstella gc \\-\\-grace 0\\fR."),
            "{text}"
        );
        assert!(text.contains(".nf\na   b\nc   d\n.fi"), "{text}");
    }

    #[test]
    fn every_command_has_a_page_and_every_page_an_exit_status() {
        let files = render_all();
        let pages: Vec<_> = files
            .iter()
            .filter(|(p, _)| p.starts_with("man"))
            .map(|(p, b)| (p.to_string_lossy().into_owned(), String::from_utf8_lossy(b)))
            .collect();
        for name in [
            "git-stella.1",
            "git-stella-read.1",
            "git-stella-session-start.1",
        ] {
            assert!(
                pages.iter().any(|(p, _)| p.ends_with(name)),
                "no page {name}"
            );
        }
        for (p, text) in &pages {
            assert!(
                text.contains(".SH \"EXIT STATUS\""),
                "{p} has no exit status"
            );
            assert!(text.contains(".SH DESCRIPTION"), "{p} has no description");
        }
    }
}
