use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::output::print_json;
use crate::prune::{json_pruned, print_pruned, prune};
use stella::text::format_time;

/// Repack the store and prune what no session reaches
///
/// Objects younger than the grace period are kept even when unreachable, since a writer creates
/// its objects before it moves its session's ref. A dropped session is kept, for 'session
/// undrop', until its drop is older than --expire-dropped (14 days by default); then gc forgets
/// it, and what only it saw is pruned once older than the grace period. With '[retention]
/// sessions-older-than = "30d"' in '.stella/config.toml', sessions idle longer than that are
/// dropped first.
///
/// A store holds every byte its sessions read or wrote, secrets included. --all also removes,
/// from Stella's data dir, the stores whose checkout is gone (its folder no longer exists, or now
/// belongs to another workspace); it works outside a repository too. A checkout on a drive that
/// is not mounted looks gone: run --dry-run first.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella session drop old-agent && git stella gc
  git stella gc --all --dry-run     # what would go, then without --dry-run
  git stella gc --grace 0           # only when no other git-stella runs
  git stella gc --expire-dropped now --grace 0    # forget dropped sessions now

Exit status:
  0  done (or, with --dry-run, listed)
  2  an error: not inside a git working tree (without --all), an invalid
     [retention] setting, a store that cannot be repacked or removed")]
pub struct Args {
    /// Keep unreachable objects younger than this many seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub grace: u64,
    /// Forget sessions dropped longer ago than this: a whole number and a unit (s, m, h, d, w),
    /// or now
    #[arg(long, value_name = "DURATION", default_value = "14d", value_parser = parse_expiry)]
    pub expire_dropped: Duration,
    #[command(flatten)]
    pub date: super::term::Dates,
    /// Also remove the stores of checkouts that are gone, from Stella's data dir
    #[arg(long)]
    pub all: bool,
    /// Only list what would be dropped or removed; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON: {dry_run, stores: [{workspace, checkout, why}], sessions: [{session,
    /// last_step}], expired: [{session, dropped}]}
    #[arg(long)]
    pub json: bool,
}

fn parse_expiry(text: &str) -> std::result::Result<Duration, String> {
    match text {
        "now" => Ok(Duration::ZERO),
        _ => stella::config::parse_duration(text).map_err(|e| e.to_string()),
    }
}

pub fn run(ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let mut stores = Vec::new();
    let mut pruned = Vec::new();
    let mut expired = Vec::new();
    let result = collect(ctx, args, out, &mut stores, &mut pruned, &mut expired);
    // What was removed is said even when a later part failed.
    if args.json {
        print_json(
            out,
            &json!({
                "dry_run": args.dry_run,
                "stores": stores,
                "sessions": json_pruned(&pruned),
                "expired": expired
                    .iter()
                    .map(|d: &stella::journal::Dropped| json!({
                        "session": d.id.as_str(),
                        "dropped": format_time(gix::date::Time::new(d.at, 0)),
                    }))
                    .collect::<Vec<_>>(),
            }),
        )?;
    }
    result
}

fn collect(
    ctx: &mut Ctx<'_>,
    args: &Args,
    out: &mut dyn Write,
    stores: &mut Vec<serde_json::Value>,
    pruned: &mut Vec<(stella::ids::SessionId, gix::date::Time)>,
    expired: &mut Vec<stella::journal::Dropped>,
) -> Result {
    if args.all {
        let verb = if args.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let orphans = stella::retention::orphans(&ctx.settings.data_dir)?;
        for o in &orphans {
            if !args.dry_run {
                std::fs::remove_dir_all(&o.dir).map_err(|e| {
                    CliError::new(format!("could not remove '{}'", o.dir.display()))
                        .cause(e.to_string())
                })?;
            }
            let owner = o
                .owner
                .as_deref()
                .map_or_else(|| "?".into(), |p| p.display().to_string());
            stores.push(json!({"workspace": o.id.to_string(), "checkout": o.owner.as_ref().map(|p| p.to_string_lossy()), "why": o.why.to_string()}));
            if !args.json {
                writeln!(
                    out,
                    "{verb} the store of {} ({}): {}",
                    stella::text::escape_controls(&owner),
                    o.id,
                    o.why
                )?;
            }
        }
        let inside = stella::workspace::discover_root(&ctx.settings, &ctx.cwd).is_ok();
        if !inside {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let context = ctx.open()?;
    let config =
        stella::hosts::Config::load(context.root()).map_err(|e| CliError::from_error(&e))?;
    if let Some(age) = config.retention.sessions_older_than {
        *pruned = prune(&context, age, args.dry_run)?;
        if !args.json {
            print_pruned(pruned, args.dry_run, &args.date, out)?;
        }
    }
    let now = gix::date::Time::now_utc().seconds;
    let until = now.saturating_sub(args.expire_dropped.as_secs().try_into().unwrap_or(i64::MAX));
    *expired = context.journal().expire_dropped(until, args.dry_run)?;
    if !args.json {
        let verb = if args.dry_run {
            "would forget"
        } else {
            "forgot"
        };
        for d in expired.iter() {
            writeln!(
                out,
                "{verb} dropped session {} (dropped {})",
                d.id,
                args.date.show(gix::date::Time::new(d.at, 0), now)
            )?;
        }
    }
    if !args.dry_run {
        context
            .store()
            .gc(Duration::from_secs(args.grace), ctx.progress)?;
        if !args.json {
            ctx.say(format_args!(
                "stella: store repacked{}",
                match pruned.len() {
                    0 => String::new(),
                    n => format!(
                        "; {} dropped first",
                        stella::text::count(n as u64, "idle session")
                    ),
                }
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
