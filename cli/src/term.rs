//! Where output meets a person: colour, the pager and dates, by git's rules.
//!
//! Colour: `--color` first, then `color.stella`, then `color.ui` (git's values: `always`,
//! `never`, `auto`, a boolean; `true` means `auto`). `auto` colours only a terminal (or the pager
//! git itself started, when `color.pager` allows), and never when `NO_COLOR` is set or `TERM` is
//! `dumb`. The pager: only for a terminal, for the commands that page by default (`log`, `diff`,
//! `recover`) unless `pager.stella.<command>` is false (a string there is the pager to use) or
//! `--no-pager` is given; the program is `GIT_PAGER`, `core.pager`, `PAGER` or `less`, as
//! `git var GIT_PAGER` chooses, with git's `LESS=FRX` and `LV=-c` when they are unset. Config is
//! read by git itself (`git config`), so includes and `git -c` count.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::env;

/// When to colour, as `--color` spells it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Always,
    Never,
    Auto,
}

/// The git config entries that decide colour and paging, read once.
#[derive(Default)]
pub struct GitConfig {
    entries: Vec<(String, String)>,
}

impl GitConfig {
    /// Read the entries with `git config`, in the repository around `cwd` when there is one.
    /// No git, or no such entries: empty.
    pub fn read(cwd: &Path) -> GitConfig {
        let out = Command::new("git")
            .current_dir(cwd)
            .args([
                "config",
                "-z",
                "--get-regexp",
                r"^(color\.(ui|pager|stella)|core\.pager|pager\.stella\..*)$",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let Ok(out) = out else {
            return GitConfig::default();
        };
        // `-z`: each entry is `key\nvalue\0`; a key alone (`[color] ui`) is a true boolean.
        let entries = out
            .stdout
            .split(|b| *b == 0)
            .filter(|e| !e.is_empty())
            .map(|e| {
                let e = String::from_utf8_lossy(e);
                match e.split_once('\n') {
                    Some((k, v)) => (k.to_ascii_lowercase(), v.to_owned()),
                    None => (e.to_ascii_lowercase(), "true".to_owned()),
                }
            })
            .collect();
        GitConfig { entries }
    }

    /// The last value of `key` (lower case), as git reads a single-valued key.
    fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// git's boolean words; `None` for anything else.
fn boolean(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" | "" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// A `color.*` value: `always`, `never`, `auto`, or a boolean (`true` is `auto`, as in git).
fn color_value(value: &str) -> Option<When> {
    match value.to_ascii_lowercase().as_str() {
        "always" => Some(When::Always),
        "never" => Some(When::Never),
        "auto" => Some(When::Auto),
        other => boolean(other).map(|b| if b { When::Auto } else { When::Never }),
    }
}

/// What the process was started with that decides colour and paging.
pub struct Surroundings {
    pub stdout_is_terminal: bool,
    /// `GIT_PAGER_IN_USE`: git itself started a pager for us.
    pub pager_in_use: bool,
    pub no_color: bool,
    pub dumb_terminal: bool,
    pub git_pager: Option<String>,
    pub pager: Option<String>,
}

impl Surroundings {
    /// Read from this process's environment and standard output.
    pub fn of_process() -> Surroundings {
        let var = |name: &str| env::var(name);
        Surroundings {
            stdout_is_terminal: env::stdout().is_terminal(),
            pager_in_use: var("GIT_PAGER_IN_USE").is_some_and(|v| boolean(&v) == Some(true)),
            no_color: var("NO_COLOR").is_some_and(|v| !v.is_empty()),
            dumb_terminal: var("TERM").is_some_and(|t| t == "dumb"),
            git_pager: var("GIT_PAGER"),
            pager: var("PAGER"),
        }
    }
}

/// How one command's standard output is shown.
#[derive(Debug, PartialEq, Eq)]
pub struct Output {
    pub color: bool,
    /// The pager to run (a shell command), if any.
    pub pager: Option<String>,
}

/// Decide colour and pager for `command` (its name, e.g. `log`), paged by default or not.
pub fn decide(
    flag: Option<When>,
    no_pager: bool,
    command: &str,
    pages_by_default: bool,
    config: &GitConfig,
    env: &Surroundings,
) -> Output {
    let pager = if no_pager || !env.stdout_is_terminal {
        None
    } else {
        let choice = config.get(&format!("pager.stella.{command}"));
        let wanted = match choice {
            Some(v) => match boolean(v) {
                Some(b) => b.then(|| pager_program(config, env)),
                // A string: the pager for this command.
                None => Some(v.to_owned()),
            },
            None if pages_by_default => Some(pager_program(config, env)),
            None => None,
        };
        wanted.filter(|p| !p.is_empty() && p != "cat")
    };
    let when = flag
        .or_else(|| config.get("color.stella").and_then(color_value))
        .or_else(|| config.get("color.ui").and_then(color_value))
        .unwrap_or(When::Auto);
    let color_pager = config.get("color.pager").and_then(boolean).unwrap_or(true);
    let color = match when {
        When::Always => true,
        When::Never => false,
        When::Auto if env.no_color || env.dumb_terminal => false,
        When::Auto if pager.is_some() || env.pager_in_use => color_pager,
        When::Auto => env.stdout_is_terminal,
    };
    Output { color, pager }
}

/// Whether what goes to stderr is coloured: `flag` (`--color`), else `color.stella`/`color.ui`,
/// else when stderr is a terminal (and `NO_COLOR` and `TERM=dumb` are not set). git's config is
/// read only when asked: a refusal, never an allowed write.
pub fn stderr_color(flag: Option<When>, cwd: &std::path::Path) -> bool {
    let env = Surroundings {
        stdout_is_terminal: env::stderr().is_terminal(),
        pager_in_use: false,
        ..Surroundings::of_process()
    };
    decide(flag, true, "", false, &GitConfig::read(cwd), &env).color
}

/// The pager `git var GIT_PAGER` names: `GIT_PAGER`, `core.pager`, `PAGER`, else `less`.
fn pager_program(config: &GitConfig, env: &Surroundings) -> String {
    env.git_pager
        .clone()
        .or_else(|| config.get("core.pager").map(str::to_owned))
        .or_else(|| env.pager.clone())
        .unwrap_or_else(|| "less".to_owned())
}

/// A running pager: standard output goes to its input until [`Pager::finish`].
pub struct Pager {
    child: Child,
    input: io::BufWriter<ChildStdin>,
}

impl Pager {
    /// Start `command` through the shell, as git does; `None` when it cannot start (the output
    /// then goes to the terminal, unpaged).
    pub fn start(command: &str) -> Option<Pager> {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", command]).stdin(Stdio::piped());
        // git's PAGER_ENV: unless the person chose otherwise.
        for (name, value) in [("LESS", "FRX"), ("LV", "-c")] {
            if env::var_os(name).is_none() {
                cmd.env(name, value);
            }
        }
        let mut child = cmd.spawn().ok()?;
        let input = io::BufWriter::new(child.stdin.take()?);
        Some(Pager { child, input })
    }

    pub fn input(&mut self) -> &mut dyn Write {
        &mut self.input
    }

    /// Close the pager's input and wait for the person to quit it.
    pub fn finish(mut self) {
        let _ = self.input.flush();
        drop(self.input);
        let _ = self.child.wait();
    }
}

/// Paints text with ANSI colours when the output is coloured; plain text otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct Paint {
    pub on: bool,
}

/// The colours Stella uses, git's defaults for the same things.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    /// A commit id (git log's `color.decorate` yellow).
    Commit,
    /// Good news: an unchanged file, a line added.
    Good,
    /// Bad news: a changed or deleted file, a refusal, a line removed.
    Bad,
    /// Needs a look: a file to re-read.
    Warn,
    /// A diff's hunk header.
    Frag,
    /// A diff's file header.
    Meta,
    /// A session's name on its newest step (git's bold green branch decoration).
    Name,
}

impl Paint {
    pub fn paint(&self, slot: Slot, text: &str) -> String {
        if !self.on || text.is_empty() {
            return text.to_owned();
        }
        let code = match slot {
            Slot::Commit => "33",
            Slot::Good => "32",
            Slot::Bad => "31",
            Slot::Warn => "33",
            Slot::Frag => "36",
            Slot::Meta => "1",
            Slot::Name => "1;32",
        };
        format!("\x1b[{code}m{text}\x1b[m")
    }

    /// A unified diff, each line coloured by its kind as git colours a diff.
    pub fn diff(&self, text: &str) -> String {
        if !self.on {
            return text.to_owned();
        }
        text.lines()
            .map(|line| {
                let slot = if line.starts_with("--- ") || line.starts_with("+++ ") {
                    Some(Slot::Meta)
                } else if line.starts_with("@@") {
                    Some(Slot::Frag)
                } else if line.starts_with('-') {
                    Some(Slot::Bad)
                } else if line.starts_with('+') {
                    Some(Slot::Good)
                } else {
                    None
                };
                match slot {
                    Some(slot) => self.paint(slot, line),
                    None => line.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `--date=FORMAT`, for every command that prints a time.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct Dates {
    /// How to show times: relative, local, iso, iso-strict (the default), rfc, short, raw,
    /// unix, default; FORMAT-local for this machine's time zone (JSON keeps ISO 8601)
    #[arg(long = "date", value_name = "FORMAT", value_parser = parse_date_format)]
    pub format: Option<DateFormat>,
}

impl Dates {
    /// `time` as asked, seen from `now` (Unix seconds).
    pub fn show(&self, time: gix::date::Time, now: i64) -> String {
        self.format.unwrap_or_default().show(time, now)
    }

    /// The format asked for, else the default.
    pub fn format(&self) -> DateFormat {
        self.format.unwrap_or_default()
    }

    /// A time Stella wrote as ISO 8601 text (a manifest's, a session file's), as asked; text
    /// that does not read as one is shown as it is, escaped.
    pub fn show_text(&self, text: &str, now: i64) -> String {
        match parse_iso(text) {
            Some(t) => self.show(t, now),
            None => stella::text::escape_controls(text).into_owned(),
        }
    }
}

/// ISO 8601 text as Stella writes it (`2026-12-01T07:54:51+00:00`).
pub fn parse_iso(text: &str) -> Option<gix::date::Time> {
    jiff::Timestamp::strptime("%Y-%m-%dT%H:%M:%S%:z", text)
        .ok()
        .map(|t| gix::date::Time::new(t.as_second(), 0))
}

/// How a time is shown: git's `--date` formats, in the zone the time was recorded in (UTC for
/// Stella's steps) or, with `local` / `FORMAT-local`, in this machine's zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateFormat {
    style: DateStyle,
    local: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DateStyle {
    Relative,
    Default,
    Iso,
    IsoStrict,
    Rfc,
    Short,
    Raw,
    Unix,
}

impl Default for DateFormat {
    /// ISO 8601, strict, as Stella has always printed times.
    fn default() -> Self {
        DateFormat {
            style: DateStyle::IsoStrict,
            local: false,
        }
    }
}

/// The values `--date` takes, for its help.
pub const DATE_HELP: &str = "relative, local, iso, iso-strict, rfc, short, raw, unix, default; \
                             FORMAT-local for this machine's time zone";

/// Parse a `--date` value as git spells it.
pub fn parse_date_format(text: &str) -> std::result::Result<DateFormat, String> {
    let (name, local) = match text.strip_suffix("-local") {
        Some(name) => (name, true),
        None => (text, false),
    };
    let style = match name {
        "relative" => DateStyle::Relative,
        "local" if !local => {
            return Ok(DateFormat {
                style: DateStyle::Default,
                local: true,
            });
        }
        "default" => DateStyle::Default,
        "iso" | "iso8601" => DateStyle::Iso,
        "iso-strict" | "iso8601-strict" => DateStyle::IsoStrict,
        "rfc" | "rfc2822" => DateStyle::Rfc,
        "short" => DateStyle::Short,
        "raw" => DateStyle::Raw,
        "unix" => DateStyle::Unix,
        _ => {
            return Err(format!(
                "unknown date format '{text}' (one of: {DATE_HELP})"
            ));
        }
    };
    Ok(DateFormat { style, local })
}

impl DateFormat {
    /// Show `time`; `now` (Unix seconds) is what `relative` counts from.
    pub fn show(&self, time: gix::date::Time, now: i64) -> String {
        let strftime = match self.style {
            DateStyle::Relative => return relative(now - time.seconds),
            DateStyle::Unix => return time.seconds.to_string(),
            DateStyle::Raw if !self.local => return time.to_string(),
            DateStyle::Raw => "%s %z",
            DateStyle::Default => "%a %b %-d %H:%M:%S %Y %z",
            DateStyle::Iso => "%Y-%m-%d %H:%M:%S %z",
            DateStyle::IsoStrict => "%Y-%m-%dT%H:%M:%S%:z",
            DateStyle::Rfc => "%a, %-d %b %Y %H:%M:%S %z",
            DateStyle::Short => "%Y-%m-%d",
        };
        let zone = if self.local {
            jiff::tz::TimeZone::system()
        } else {
            match jiff::tz::Offset::from_seconds(time.offset) {
                Ok(offset) => offset.to_time_zone(),
                Err(_) => return time.seconds.to_string(),
            }
        };
        match jiff::Timestamp::from_second(time.seconds) {
            Ok(ts) => ts.to_zoned(zone).strftime(strftime).to_string(),
            Err(_) => time.seconds.to_string(),
        }
    }
}

/// git's relative date (`show_date_relative`), for a time `seconds` ago.
fn relative(seconds: i64) -> String {
    fn ago(n: i64, unit: &str) -> String {
        format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
    }
    if seconds < 0 {
        return "in the future".to_owned();
    }
    if seconds < 90 {
        return ago(seconds, "second");
    }
    let minutes = (seconds + 30) / 60;
    if minutes < 90 {
        return ago(minutes, "minute");
    }
    let hours = (minutes + 30) / 60;
    if hours < 36 {
        return ago(hours, "hour");
    }
    let days = (hours + 12) / 24;
    if days < 14 {
        return ago(days, "day");
    }
    if days < 70 {
        return ago((days + 3) / 7, "week");
    }
    if days < 365 {
        return ago((days + 15) / 30, "month");
    }
    if days < 1825 {
        let total_months = (days * 12 * 2 + 365) / (365 * 2);
        let (years, months) = (total_months / 12, total_months % 12);
        if months > 0 {
            let years = format!("{years} year{}", if years == 1 { "" } else { "s" });
            return format!("{years}, {}", ago(months, "month"));
        }
        return ago(years, "year");
    }
    ago((days + 183) / 365, "year")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(terminal: bool) -> Surroundings {
        Surroundings {
            stdout_is_terminal: terminal,
            pager_in_use: false,
            no_color: false,
            dumb_terminal: false,
            git_pager: None,
            pager: None,
        }
    }

    fn config(entries: &[(&str, &str)]) -> GitConfig {
        GitConfig {
            entries: entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn colour_follows_the_flag_then_color_stella_then_color_ui_then_the_terminal() {
        let none = config(&[]);
        let d = |flag, c: &GitConfig, e: &Surroundings| decide(flag, true, "log", true, c, e).color;
        assert!(d(None, &none, &env(true)));
        assert!(!d(None, &none, &env(false)));
        assert!(d(Some(When::Always), &none, &env(false)));
        assert!(!d(Some(When::Never), &none, &env(true)));
        let ui_never = config(&[("color.ui", "never")]);
        assert!(!d(None, &ui_never, &env(true)));
        let ui_always = config(&[("color.ui", "always")]);
        assert!(d(None, &ui_always, &env(false)));
        let stella_wins = config(&[("color.ui", "always"), ("color.stella", "false")]);
        assert!(!d(None, &stella_wins, &env(false)));
        assert!(d(Some(When::Always), &stella_wins, &env(false)));
        let mut no_color = env(true);
        no_color.no_color = true;
        assert!(!d(None, &none, &no_color));
        assert!(
            d(None, &ui_always, &no_color),
            "NO_COLOR only changes the default"
        );
        let mut in_pager = env(false);
        in_pager.pager_in_use = true;
        assert!(d(None, &none, &in_pager));
        assert!(!d(None, &config(&[("color.pager", "false")]), &in_pager));
    }

    #[test]
    fn the_pager_is_chosen_as_git_chooses_it() {
        let none = config(&[]);
        let p = |no_pager, cmd, by_default, c: &GitConfig, e: &Surroundings| {
            decide(None, no_pager, cmd, by_default, c, e).pager
        };
        assert_eq!(
            p(false, "log", true, &none, &env(true)).as_deref(),
            Some("less")
        );
        assert_eq!(p(false, "log", true, &none, &env(false)), None);
        assert_eq!(p(true, "log", true, &none, &env(true)), None);
        assert_eq!(p(false, "status", false, &none, &env(true)), None);
        let core = config(&[("core.pager", "more")]);
        assert_eq!(
            p(false, "log", true, &core, &env(true)).as_deref(),
            Some("more")
        );
        let mut git_pager = env(true);
        git_pager.git_pager = Some("cat".into());
        assert_eq!(p(false, "log", true, &core, &git_pager), None);
        let off = config(&[("pager.stella.log", "false")]);
        assert_eq!(p(false, "log", true, &off, &env(true)), None);
        let own = config(&[("pager.stella.status", "most")]);
        assert_eq!(
            p(false, "status", false, &own, &env(true)).as_deref(),
            Some("most")
        );
        let mut pager_env = env(true);
        pager_env.pager = Some("pg".into());
        assert_eq!(
            p(false, "diff", true, &none, &pager_env).as_deref(),
            Some("pg")
        );
    }

    #[test]
    fn dates_read_as_git_writes_them() {
        let t = gix::date::Time {
            seconds: 1_700_000_000,
            offset: 0,
        };
        let show = |f: &str| {
            parse_date_format(f)
                .unwrap()
                .show(t, t.seconds + 3 * 86_400)
        };
        assert_eq!(show("relative"), "3 days ago");
        assert_eq!(show("iso"), "2023-11-14 22:13:20 +0000");
        assert_eq!(show("iso-strict"), "2023-11-14T22:13:20+00:00");
        assert_eq!(show("rfc"), "Tue, 14 Nov 2023 22:13:20 +0000");
        assert_eq!(show("short"), "2023-11-14");
        assert_eq!(show("unix"), "1700000000");
        assert_eq!(show("raw"), "1700000000 +0000");
        assert_eq!(show("default"), "Tue Nov 14 22:13:20 2023 +0000");
        assert!(parse_date_format("local").is_ok());
        assert!(parse_date_format("iso-local").is_ok());
        assert!(parse_date_format("yesterday").is_err());
        for (ago, text) in [
            (5, "5 seconds ago"),
            (1, "1 second ago"),
            (100, "2 minutes ago"),
            (7200, "2 hours ago"),
            (20 * 86_400, "3 weeks ago"),
            (100 * 86_400, "3 months ago"),
            (400 * 86_400, "1 year, 1 month ago"),
            (3000 * 86_400, "8 years ago"),
            (-5, "in the future"),
        ] {
            assert_eq!(relative(ago), text, "{ago}");
        }
    }
}
