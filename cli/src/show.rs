use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use stella::ids::SessionId;
use stella::refusals::Record;
use stella::text::escape_controls;
use stella::timeline::{Change, Kind, Step};

use crate::ctx::{Ctx, parse_session_id};
use crate::error::Result;
use crate::session_meta::{Meta, meta};
use crate::term::{DateFormat, Paint, Slot};

/// Show one session's timeline, oldest step first, as text or as one HTML page
///
/// Each step with its time, what it was (read, write, delete, move, refused, turn begin, …), the
/// paths whose entry it added, changed or dropped, and, for a refused write or delete, what the
/// session had seen, what was found, who wrote it, and the diff between the two when the store
/// holds both versions (a session of this workspace read or wrote them). Steps taken inside a
/// turn are marked with `|`. A replayed session's timeline reaches back into the session it was
/// replayed from, as `log` does.
///
/// With --html the same timeline is one self-contained page on stdout: inline CSS, no script, no
/// external address, every name from the journal escaped. Open it in a browser or attach it to a
/// review; like an artifact, it names the files the agent touched and shows lines of them.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella show agent-1
  git stella show agent-1 --date=relative
  git stella show agent-1 --html > agent-1.html

Exit status:
  0  shown
  2  an error: no session given, an unknown session, not inside a git working tree")]
pub struct Args {
    /// The session (default: --session or STELLA_SESSION)
    pub id: Option<String>,
    /// Write one self-contained HTML page instead of text
    #[arg(long)]
    pub html: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
}

/// A session's timeline, read once and rendered as text or HTML.
struct Show {
    id: SessionId,
    meta: Meta,
    steps: Vec<Step>,
    date: DateFormat,
    now: i64,
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let id = match &args.id {
        Some(id) => parse_session_id(id)?,
        None => ctx.session_id()?,
    };
    let context = ctx.open()?;
    let steps = stella::timeline::of(&context.journal(), &id, true)?;
    let show = Show {
        meta: meta(&context, &id),
        id,
        steps,
        date: args.date.format(),
        now: gix::date::Time::now_utc().seconds,
    };
    let page = if args.html {
        show.html()
    } else {
        show.text(&ctx.paint)
    };
    out.write_all(page.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

impl Show {
    fn time(&self, t: gix::date::Time) -> String {
        self.date.show(t, self.now)
    }

    /// `10, 1 refused, 2 turns`.
    fn counts(&self) -> String {
        let refused: usize = self.steps.iter().map(|s| s.refused.len()).sum();
        let mut turns: Vec<&str> = self
            .steps
            .iter()
            .filter_map(|s| s.turn.as_deref())
            .collect();
        turns.dedup();
        format!(
            "{}, {} refused, {}",
            self.steps.len(),
            refused,
            stella::text::count(turns.len() as u64, "turn")
        )
    }

    /// Where a replayed session came from: `session X via artifact 0123456789ab`.
    fn origin(&self) -> Option<(String, String)> {
        self.meta.origin.as_ref().map(|(session, artifact)| {
            (
                session.clone(),
                artifact.chars().take(12).collect::<String>(),
            )
        })
    }

    /// A refusal in words: `refused write a.rs: seen ed8b7a779a4a, found 1133b3a21d30, written
    /// by session b at …` (digests cut to 12 digits, as `recover` names versions).
    fn refusal_line(&self, r: &Record) -> String {
        let short = |d: &str| d.chars().take(12).collect::<String>();
        let seen = match r.seen.as_deref() {
            Some("reread") => "seen while it changed".into(),
            Some(d) if d.len() == 64 => format!("seen {}", short(d)),
            Some(other) => format!("seen {other}"),
            None => "never seen".into(),
        };
        let found = match r.found.as_deref() {
            Some(stella::refusals::GONE) => "found it deleted".into(),
            Some(d) => format!("found {}", short(d)),
            None => "found it unreadable".into(),
        };
        let writer = match (&r.writer, r.writer_at) {
            (Some(w), Some(at)) => {
                format!(
                    ", written by session {w} at {}",
                    self.time(gix::date::Time::new(at, 0))
                )
            }
            (Some(w), None) => format!(", written by session {w}"),
            _ => String::new(),
        };
        format!("refused {} {}: {seen}, {found}{writer}", r.intent, r.path)
    }

    /// Why a refusal has no diff.
    fn no_diff(r: &Record) -> &'static str {
        match r.found.as_deref() {
            Some(stella::refusals::GONE) | None => "(no diff: there were no bytes to compare with)",
            Some(_) => "(no diff: no session of this workspace kept the bytes found)",
        }
    }

    fn text(&self, paint: &Paint) -> String {
        let mut t = String::new();
        let _ = writeln!(t, "session   {}", self.id);
        let _ = writeln!(
            t,
            "started   {}",
            self.meta.started_shown(&self.date, self.now)
        );
        if let Some((session, artifact)) = self.origin() {
            let _ = writeln!(
                t,
                "origin    session {} via artifact {}",
                escape_controls(&session),
                escape_controls(&artifact)
            );
        }
        let _ = writeln!(t, "steps     {}", self.counts());
        if !self.steps.is_empty() {
            t.push('\n');
        }
        let width = self
            .steps
            .iter()
            .map(|s| s.kind.label().len())
            .max()
            .unwrap_or(0);
        // The column that marks steps inside a turn, when there were turns.
        let turns = self.steps.iter().any(|s| s.turn.is_some());
        for step in &self.steps {
            let inside =
                step.turn.is_some() && !matches!(step.kind, Kind::TurnBegin | Kind::TurnEnd);
            let gutter = match (inside, turns) {
                (true, _) => "| ",
                (false, true) => "  ",
                (false, false) => "",
            };
            let label = step.kind.label();
            let pad = " ".repeat(width - label.len());
            let summary = escape_controls(&step.summary);
            let (kind, summary) = if step.kind == Kind::Refused {
                (
                    paint.paint(Slot::Bad, label) + &pad,
                    paint.paint(Slot::Bad, &summary),
                )
            } else {
                (format!("{label}{pad}"), summary.into_owned())
            };
            let time = self.time(step.time);
            let _ = writeln!(t, "{time} {gutter}{kind}  {summary}");
            // Under the summary: what the step did to each path, and what it refused.
            let indent = format!(
                "{:pad$}{gutter}{:width$}  ",
                "",
                "",
                pad = time.chars().count() + 1
            );
            for p in &step.paths {
                let _ = write!(t, "{indent}{:7} {}", p.change.label(), p.path);
                if let Change::Moved { from } = &p.change {
                    let _ = write!(t, " (from {from})");
                }
                t.push('\n');
            }
            for r in &step.refused {
                let line = escape_controls(&self.refusal_line(&r.record)).into_owned();
                let _ = writeln!(t, "{indent}{}", paint.paint(Slot::Bad, &line));
                let diff = match &r.diff {
                    Some(diff) => {
                        let lines: Vec<String> = diff.lines().map(escape_line).collect();
                        paint.diff(&lines.join("\n"))
                    }
                    None => Self::no_diff(&r.record).to_owned(),
                };
                for line in diff.lines() {
                    let _ = writeln!(t, "{indent}{line}");
                }
            }
        }
        t
    }

    fn html(&self) -> String {
        let mut h = String::new();
        let id = html(self.id.as_str());
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"git stella show\">\n\
<title>Stella session {id}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        );
        let _ = writeln!(
            h,
            "<header id=\"session\" data-session=\"{id}\">\n<h1>Session <code>{id}</code></h1>\n<dl>"
        );
        let started = match self.meta.started_at {
            Some(t) => time_tag(t, &self.time(t)),
            None => html(&self.meta.started),
        };
        let _ = writeln!(h, "<dt>started</dt><dd>{started}</dd>");
        if let Some((session, artifact)) = self.origin() {
            let _ = writeln!(
                h,
                "<dt>replayed from</dt><dd id=\"origin\">session <code>{}</code> via artifact <code>{}</code></dd>",
                html(&session),
                html(&artifact)
            );
        }
        let _ = writeln!(
            h,
            "<dt>steps</dt><dd id=\"counts\">{}</dd>\n</dl>\n</header>\n<main>\n<ol id=\"timeline\">",
            html(&self.counts())
        );
        let mut open_turn: Option<&str> = None;
        for (n, step) in self.steps.iter().enumerate() {
            let turn = step.turn.as_deref();
            if turn != open_turn {
                if open_turn.is_some() {
                    h.push_str("</ol></li>\n");
                }
                if let Some(t) = turn {
                    let name = if t.is_empty() { "(unreadable)" } else { t };
                    let _ = writeln!(
                        h,
                        "<li class=\"turn\" data-turn=\"{}\"><div class=\"turn-label\">turn <code>{}</code></div><ol class=\"turn-steps\">",
                        html(t),
                        html(name)
                    );
                }
                open_turn = turn;
            }
            self.html_step(&mut h, n + 1, step);
        }
        if open_turn.is_some() {
            h.push_str("</ol></li>\n");
        }
        let _ = write!(
            h,
            "</ol>\n</main>\n<footer>Written by <code>git stella show --html</code> from the session's journal.</footer>\n</body>\n</html>\n"
        );
        h
    }

    fn html_step(&self, h: &mut String, n: usize, step: &Step) {
        let label = step.kind.label();
        let class = label.replace(' ', "-");
        let _ = write!(
            h,
            "<li class=\"step {class}\" id=\"step-{n}\" data-kind=\"{label}\" data-commit=\"{}\">\
<div class=\"head\">{}<span class=\"kind\">{label}</span><span class=\"summary\">{}</span></div>",
            step.commit,
            time_tag(step.time, &self.time(step.time)),
            html(&step.summary)
        );
        if !step.paths.is_empty() {
            h.push_str("\n<ul class=\"paths\">");
            for p in &step.paths {
                let path = html(&p.path.to_lossy());
                let change = p.change.label();
                let _ = write!(
                    h,
                    "<li class=\"path {change}\" data-path=\"{path}\"><span class=\"change\">{change}</span> <code>{path}</code>"
                );
                if let Change::Moved { from } = &p.change {
                    let _ = write!(
                        h,
                        " <span class=\"from\">from <code>{}</code></span>",
                        html(&from.to_lossy())
                    );
                }
                h.push_str("</li>");
            }
            h.push_str("</ul>");
        }
        for r in &step.refused {
            let _ = write!(
                h,
                "\n<div class=\"refusal\" data-path=\"{}\" data-intent=\"{}\"><p>{}</p>",
                html(&r.record.path),
                html(&r.record.intent),
                html(&self.refusal_line(&r.record))
            );
            match &r.diff {
                Some(diff) => {
                    h.push_str("<pre class=\"diff\">");
                    for line in diff.lines() {
                        let class = if line.starts_with("--- ") || line.starts_with("+++ ") {
                            "meta"
                        } else if line.starts_with("@@") {
                            "hunk"
                        } else if line.starts_with('+') {
                            "add"
                        } else if line.starts_with('-') {
                            "del"
                        } else {
                            "ctx"
                        };
                        // Each line a block of its own: no newline between them in the <pre>.
                        let _ = write!(
                            h,
                            "<span class=\"{class}\">{}</span>",
                            html_escaped(&escape_line(line))
                        );
                    }
                    h.push_str("</pre>");
                }
                None => {
                    let _ = write!(h, "<p class=\"no-diff\">{}</p>", Self::no_diff(&r.record));
                }
            }
            h.push_str("</div>");
        }
        h.push_str("</li>\n");
    }
}

/// `<time datetime="2026-12-01T07:54:51+00:00">shown</time>`.
fn time_tag(t: gix::date::Time, shown: &str) -> String {
    format!(
        "<time datetime=\"{}\">{}</time>",
        html(&stella::text::format_time(t)),
        html(shown)
    )
}

/// A line of a file for a terminal or a page: its control characters escaped, its tabs kept.
fn escape_line(line: &str) -> String {
    line.split('\t')
        .map(|part| escape_controls(part).into_owned())
        .collect::<Vec<_>>()
        .join("\t")
}

/// Text from the journal, safe between tags and inside a quoted attribute: control characters
/// escaped as the terminal output escapes them, then HTML's five special characters as entities.
fn html(s: &str) -> String {
    html_escaped(&escape_controls(s))
}

/// `s` with HTML's five special characters as entities (its control characters already escaped).
fn html_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page's only style: a vertical timeline, refusals in red, diffs coloured as git colours
/// them. System fonts only: the page loads nothing.
const CSS: &str = r#"
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --panel: #f6f8fa;
  --red: #cf222e; --red-bg: #ffebe9; --green: #116329; --green-bg: #dafbe1; --blue: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; padding: 2rem 2.5rem 3rem; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
code, pre, time, .kind { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
code { font-size: 0.92em; overflow-wrap: anywhere; }
header { max-width: 60rem; border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; padding-bottom: 0.75rem; }
h1 { font-size: 1.5rem; margin: 0 0 0.5rem; font-weight: 600; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
ol, ul { list-style: none; margin: 0; padding: 0; }
main { max-width: 60rem; }
#timeline { position: relative; padding-left: 1.5rem; }
#timeline::before { content: ""; position: absolute; left: 0.45rem; top: 0.4rem; bottom: 0.4rem;
  width: 2px; background: var(--line); }
.step { position: relative; padding: 0.35rem 0 0.35rem 0.25rem; display: grid;
  grid-template-columns: max-content 6.5rem minmax(0, 1fr); column-gap: 0.75rem; align-items: baseline; }
.step::before { content: ""; position: absolute; left: -1.3rem; top: 0.8rem; width: 0.6rem; height: 0.6rem;
  border-radius: 50%; background: var(--bg); border: 2px solid var(--muted); }
.turn .step::before { left: -2.55rem; }
.head { display: contents; }
.head time { color: var(--muted); font-size: 0.85em; white-space: nowrap; }
.kind { font-size: 0.8em; font-weight: 600; text-transform: uppercase;
  letter-spacing: 0.03em; color: var(--muted); }
.summary { overflow-wrap: anywhere; }
.paths { grid-column: 3; margin: 0.1rem 0 0; font-size: 0.9em; }
.paths li { color: var(--muted); }
.refusal { grid-column: 1 / -1; }
.paths .change { display: inline-block; min-width: 4.5rem; }
.paths code { color: var(--fg); }
.step.read::before { border-color: var(--blue); }
.step.read .kind { color: var(--blue); }
.step.write::before, .step.move::before { border-color: var(--green); background: var(--green-bg); }
.step.write .kind, .step.move .kind { color: var(--green); }
.step.delete::before { border-color: #9a6700; background: #fff8c5; }
.step.delete .kind { color: #9a6700; }
/* A refusal stands out as a red panel; its columns stay in line with the other steps'. */
.step.refused { background: var(--red-bg); border-left: 3px solid var(--red); border-radius: 6px;
  padding: 0.5rem 0.75rem; margin: 0.4rem 0 0.4rem calc(-0.5rem - 3px); }
.step.refused::before { border-color: var(--red); background: var(--red); left: calc(-0.8rem - 0.1rem); }
.turn .step.refused::before { left: calc(-2.05rem - 0.1rem); }
.step.refused .kind, .step.refused .summary, .refusal p { color: var(--red); }
.step.refused .summary { font-weight: 600; }
.refusal p { margin: 0.35rem 0; overflow-wrap: anywhere; }
.refusal p.no-diff { color: var(--muted); font-style: italic; }
pre.diff { margin: 0.35rem 0 0.2rem; padding: 0.5rem 0; background: var(--bg); border: 1px solid var(--line);
  border-radius: 6px; overflow-x: auto; font-size: 0.85em; line-height: 1.4; }
pre.diff span { display: block; padding: 0 0.75rem; white-space: pre; min-height: 1.4em; }
pre.diff .add { background: var(--green-bg); color: var(--green); }
pre.diff .del { background: var(--red-bg); color: var(--red); }
pre.diff .hunk { color: #8250df; background: #fbefff; }
pre.diff .meta { font-weight: 600; }
.turn { position: relative; margin: 0.5rem 0 0.5rem -0.5rem; padding: 0.25rem 0.75rem 0.4rem 1.75rem;
  border: 1px solid var(--line); border-radius: 8px; background: var(--panel); }
.turn-label { font-size: 0.8em; color: var(--muted); text-transform: uppercase; letter-spacing: 0.03em; margin-bottom: 0.1rem; }
.turn-label code { text-transform: none; }
.step.turn-begin .kind, .step.turn-end .kind, .step.turn-step .kind { color: #8250df; }
.step.turn-begin::before, .step.turn-end::before, .step.turn-step::before { border-color: #8250df; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.8em; }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_journal_is_inert_in_a_page() {
        assert_eq!(
            html("<script>alert('x')</script>\"&"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;"
        );
        // Control characters are written out, as on a terminal; the escape's backslash is text.
        assert_eq!(html("a\nb\x1b[31m\u{0}"), "a\\nb\\x1b[31m\\x00");
        assert_eq!(escape_line("\tfn\x07 main()"), "\tfn\\x07 main()");
    }
}
