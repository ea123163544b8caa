use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::ctx::{Ctx, report_refusals};
use crate::error::{CliError, Result};
use crate::output::print_json;
use stella::digest::Digest;
use stella::guard::Disk;
use stella::journal::{How, Version, version_id};
use stella::session::Outcome;
use stella::text::format_time;

/// List, show or restore any version of a file that a session read, wrote or saw overwritten
///
/// The journal keeps the bytes of every version of every file each session of this workspace
/// read or wrote, and the bytes a tool overwrote before the session had seen them. Without an
/// option, one line per version, oldest first: its id (the first 12 hex digits of its BLAKE3),
/// when a session first came by it, its size, and how (written by a session, read by one, or
/// overwritten and kept); the version on disk now is marked. --show prints one version's bytes;
/// --restore writes it back through the guard, as the session given with --session: refused,
/// like any write, over a change that session has not seen.
///
/// --all lists, newest first and whatever the file, every version a session kept because a
/// change replaced it unseen: someone's uncommitted edit or untracked file that a session
/// overwrote or deleted without reading it, or a change a host's tool overwrote.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella recover notes.txt
  git stella recover notes.txt --show 3f2a9c1e0b7d > notes.txt.theirs
  git stella --session agent-1 recover notes.txt --restore 3f2a9c1e0b7d
  git stella recover --all --since 2h

Exit status:
  0  listed, shown or restored
  1  --restore refused: the file changed since the session saw it; nothing
     was written
  2  an error: a path outside the workspace, an unknown or ambiguous version,
     a version whose bytes were not kept, no session for --restore")]
pub struct Args {
    /// The file, inside the workspace
    #[arg(
        value_name = "PATH",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub path: Option<PathBuf>,
    /// List every version kept because a change replaced it unseen, whatever the file, newest
    /// first
    #[arg(long, conflicts_with_all = ["show", "restore"])]
    pub all: bool,
    /// With --all: only what was kept since then: a duration back from now (30m, 2h, 7d) or a
    /// date (2026-12-03, 2026-12-03T14:00:00+01:00)
    #[arg(long, value_name = "WHEN", requires = "all", value_parser = parse_since)]
    pub since: Option<i64>,
    /// Print this version's bytes
    #[arg(long, value_name = "VERSION", conflicts_with = "restore")]
    pub show: Option<String>,
    /// Write this version back to the file, through the guard
    #[arg(long, value_name = "VERSION")]
    pub restore: Option<String>,
    /// Print JSON: {path, versions: [{version, blake3, time, bytes, session, step, how,
    /// writer, on_disk}]}; with --all: {kept: [{path, version, blake3, time, bytes,
    /// session, step}]}
    #[arg(long, conflicts_with_all = ["show", "restore"])]
    pub json: bool,
    #[command(flatten)]
    pub date: super::term::Dates,
}

/// `--since`: Unix seconds, from a duration back from now or a date.
fn parse_since(text: &str) -> std::result::Result<i64, String> {
    let now = gix::date::Time::now_utc().seconds;
    if let Ok(d) = stella::config::parse_duration(text) {
        return Ok(now - i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2));
    }
    if let Ok(t) = text.parse::<jiff::Timestamp>() {
        return Ok(t.as_second());
    }
    if let Ok(d) = text.parse::<jiff::civil::Date>()
        && let Ok(t) = d.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(t.timestamp().as_second());
    }
    Err(format!(
        "'{text}' is neither a duration (30m, 2h, 7d) nor a date (2026-12-03, 2026-12-03T14:00:00Z)"
    ))
}

/// `--all`: every kept version, newest first.
fn run_all(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let context = ctx.open()?;
    let journal = context.journal();
    let kept = journal.kept_since(args.since.unwrap_or(i64::MIN))?;
    let size = |v: &Version| v.blob.and_then(|b| journal.blob_size(b).ok());
    if args.json {
        let list: Vec<_> = kept
            .iter()
            .map(|(path, v)| {
                json!({
                    "path": path.to_lossy(),
                    "version": version_id(&v.digest),
                    "blake3": v.digest.to_hex(),
                    "time": format_time(v.time),
                    "bytes": size(v),
                    "session": v.session.as_str(),
                    "step": v.step,
                })
            })
            .collect();
        print_json(out, &json!({ "kept": list }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if kept.is_empty() {
        writeln!(
            ctx.err,
            "nothing was kept: no change replaced a file unseen"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<25}  {:<12}  {:>9}  {:<16}  PATH",
        "TIME", "VERSION", "BYTES", "KEPT BY"
    )?;
    let (date, now) = (args.date.format(), gix::date::Time::now_utc().seconds);
    for (path, v) in &kept {
        writeln!(
            out,
            "{:<25}  {:<12}  {:>9}  {:<16}  {}",
            date.show(v.time, now),
            version_id(&v.digest),
            size(v).map_or("-".into(), |n| n.to_string()),
            v.session.as_str(),
            stella::text::escape_controls(&path.to_lossy())
        )?;
    }
    writeln!(
        ctx.err,
        "get one back: git stella recover PATH --show VERSION > PATH.kept"
    )?;
    Ok(ExitCode::SUCCESS)
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let Some(path) = &args.path else {
        return run_all(ctx, args, out);
    };
    let context = ctx.open()?;
    let path = context.resolve(&ctx.cwd, path)?;
    let journal = context.journal();
    let versions = journal.versions(&path)?;
    let wanted = args.show.as_deref().or(args.restore.as_deref());
    if let Some(wanted) = wanted {
        let version = find(&versions, wanted, &path.to_string())?;
        let Some(blob) = version.blob else {
            return Err(CliError::new(format!(
                "the bytes of version {wanted} of '{path}' were not kept"
            ))
            .hint("the session recorded only their digest (a file over the shell guard's cap, or one it saw change while reading)"));
        };
        if args.show.is_some() {
            // Streamed: a large version is shown with flat memory.
            std::io::copy(&mut journal.blob_reader(blob)?, out)?;
            return Ok(ExitCode::SUCCESS);
        }
        let id = ctx.session_id()?;
        ctx.resume_forgotten(&context, &id)?;
        return match context.session(&id).restore(&path, blob, version.digest)? {
            Outcome::Done(_, kept) => {
                crate::ctx::say_kept(ctx, &kept)?;
                writeln!(
                    out,
                    "restored {path} to version {}",
                    version_id(&version.digest)
                )?;
                Ok(ExitCode::SUCCESS)
            }
            Outcome::Refused(checks) => Ok(report_refusals(ctx, &context, &checks)),
        };
    }
    let now = Disk::probe(&context.abs(&path)).digest();
    let rows = distinct(&versions, |v| {
        v.blob
            .and_then(|b| journal.blob_size(b).ok())
            .map(|n| n as usize)
    });
    if args.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(v, size, writer)| {
                json!({
                    "version": version_id(&v.digest),
                    "blake3": v.digest.to_hex(),
                    "time": format_time(v.time),
                    "bytes": size,
                    "session": v.session.as_str(),
                    "step": v.step,
                    "how": match v.how {
                        How::Read => "read",
                        How::Wrote => "wrote",
                        How::Overwritten => "overwritten",
                    },
                    "writer": writer.map(|w| crate::output::writer_json(w.session.as_str(), w.time.seconds)),
                    "on_disk": Some(v.digest) == now,
                })
            })
            .collect();
        print_json(out, &json!({ "path": path.to_lossy(), "versions": list }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        writeln!(out, "no session of this workspace read or wrote {path}")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<12}  {:<25}  {:>9}  HOW",
        "VERSION", "TIME", "BYTES"
    )?;
    for (v, size, writer) in &rows {
        let size = size.map_or("?".to_owned(), |s| s.to_string());
        let first = format!("{} {} (step {})", how(v.how), v.session, v.step);
        let by = match writer {
            Some(w) if w.session != v.session || w.how != v.how => {
                format!("; {} {} (step {})", how(w.how), w.session, w.step)
            }
            _ => String::new(),
        };
        let disk = if Some(v.digest) == now {
            "  (on disk now)"
        } else {
            ""
        };
        writeln!(
            out,
            "{:<12}  {:<25}  {size:>9}  {first}{by}{disk}",
            version_id(&v.digest),
            args.date.show(v.time, gix::date::Time::now_utc().seconds)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn how(how: How) -> &'static str {
    match how {
        How::Read => "read by",
        How::Wrote => "written by",
        How::Overwritten => "overwritten, kept by",
    }
}

/// One row per distinct version, at its first sighting: its size when the bytes were kept, and
/// the first session that wrote it (or kept it overwritten), when one did.
type Row<'v> = (&'v Version, Option<usize>, Option<&'v Version>);

fn distinct(versions: &[Version], size_of: impl Fn(&Version) -> Option<usize>) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    for v in versions {
        let writer = (v.how != How::Read).then_some(v);
        match rows.iter_mut().find(|(r, _, _)| r.digest == v.digest) {
            Some(row) => {
                if row.2.is_none() {
                    row.2 = writer;
                }
                if row.1.is_none() {
                    row.1 = size_of(v);
                }
            }
            None => rows.push((v, size_of(v), writer)),
        }
    }
    rows
}

/// The version whose id starts with `wanted` (at least 4 hex digits, unambiguous).
fn find<'v>(versions: &'v [Version], wanted: &str, path: &str) -> Result<&'v Version> {
    let wanted = wanted.to_ascii_lowercase();
    if wanted.len() < 4 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CliError::new(format!(
            "'{wanted}' is not a version id: give at least 4 of the hex digits 'git stella recover {path}' lists"
        )));
    }
    let mut matches: Vec<&Version> = versions
        .iter()
        .filter(|v| v.digest.to_hex().starts_with(&wanted))
        .collect();
    // The same bytes seen by several sessions are one version: prefer a sighting that kept them.
    matches.sort_by_key(|v| v.blob.is_none());
    let distinct: std::collections::HashSet<Digest> = matches.iter().map(|v| v.digest).collect();
    match (distinct.len(), matches.first()) {
        (1, Some(v)) => Ok(v),
        (0, _) | (_, None) => Err(CliError::new(format!(
            "no version {wanted} of '{path}' in this workspace's sessions"
        ))
        .hint(format!("'git stella recover {path}' lists them"))),
        _ => Err(CliError::new(format!(
            "'{wanted}' names {} versions of '{path}'; give more digits",
            distinct.len()
        ))),
    }
}
