use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::ctx::Ctx;
use crate::env;
use crate::error::{CliError, Result};

/// Run a short, real walkthrough in a temp folder: two sessions, a refused write, a checkpoint,
/// a replay into a fresh clone
///
/// Everything runs for real: two git repositories in a temp folder, this git-stella binary, stock
/// git. Each command is printed before its output. Nothing outside the temp folder is touched and
/// no network connection is opened. Exits 0 when every step behaved as shown (the stale writes
/// refused, the fresh ones allowed), 2 otherwise.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "Examples:
  git stella demo
  git stella demo --keep     # look around the two repositories afterwards

Exit status:
  0  every step behaved as shown
  2  a step did not, or the walkthrough could not run")]
pub struct Args {
    /// Keep the temp folder and print where it is
    #[arg(long)]
    pub keep: bool,
}

/// One machine of the walkthrough: a folder with a repository and its own Stella data dir.
struct Machine<'a> {
    name: &'static str,
    repo: PathBuf,
    home: PathBuf,
    exe: &'a Path,
}

impl Machine<'_> {
    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&self.repo)
            .env("STELLA_HOME", &self.home)
            .env("GIT_AUTHOR_NAME", "Demo")
            .env("GIT_AUTHOR_EMAIL", "demo@example.invalid")
            .env("GIT_COMMITTER_NAME", "Demo")
            .env("GIT_COMMITTER_EMAIL", "demo@example.invalid")
            .env_remove("STELLA_SESSION")
            .stdin(Stdio::piped());
        cmd
    }
}

struct Demo<'o> {
    out: &'o mut dyn Write,
    failed: Vec<String>,
}

impl Demo<'_> {
    fn say(&mut self, text: &str) -> std::io::Result<()> {
        writeln!(self.out, "\n# {text}")
    }

    /// Run a command, print it and its output, and check its exit status.
    fn run(
        &mut self,
        m: &Machine<'_>,
        shown: &str,
        program: &Path,
        args: &[&str],
        stdin: &[u8],
        expect: i32,
    ) -> std::io::Result<String> {
        writeln!(self.out, "[{}] $ {shown}", m.name)?;
        let mut child = m
            .command(program, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        child.stdin.take().expect("piped").write_all(stdin)?;
        let output = child.wait_with_output()?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        for line in stdout
            .lines()
            .chain(String::from_utf8_lossy(&output.stderr).lines())
        {
            writeln!(self.out, "    {line}")?;
        }
        let code = output.status.code().unwrap_or(-1);
        if code != expect {
            writeln!(self.out, "    (exit {code}, expected {expect})")?;
            self.failed.push(shown.to_owned());
        } else if code != 0 {
            writeln!(self.out, "    (exit {code}, as it should)")?;
        }
        Ok(stdout.trim().to_owned())
    }

    fn stella(
        &mut self,
        m: &Machine<'_>,
        args: &[&str],
        stdin: &[u8],
        expect: i32,
    ) -> std::io::Result<String> {
        let shown = match stdin {
            [] => format!("git stella {}", args.join(" ")),
            bytes => format!(
                "printf '{}' | git stella {}",
                String::from_utf8_lossy(bytes).replace('\n', "\\n"),
                args.join(" ")
            ),
        };
        self.run(m, &shown, m.exe, args, stdin, expect)
    }

    /// `git stella --session <session> ARGS`, with `stdin`, expecting exit status `expect`.
    fn agent(
        &mut self,
        m: &Machine<'_>,
        session: &str,
        args: &[&str],
        stdin: &str,
        expect: i32,
    ) -> std::io::Result<String> {
        let mut full = vec!["--session", session];
        full.extend_from_slice(args);
        self.stella(m, &full, stdin.as_bytes(), expect)
    }

    fn git(&mut self, m: &Machine<'_>, args: &[&str]) -> std::io::Result<String> {
        self.run(
            m,
            &format!("git {}", args.join(" ")),
            Path::new("git"),
            args,
            b"",
            0,
        )
    }

    fn shell(
        &mut self,
        m: &Machine<'_>,
        shown: &str,
        file: &str,
        content: &str,
    ) -> std::io::Result<()> {
        writeln!(self.out, "[{}] $ {shown}", m.name)?;
        std::fs::write(m.repo.join(file), content)
    }
}

pub fn run(_ctx: &mut Ctx<'_>, args: &Args, out: &mut dyn Write) -> Result {
    let exe = env::current_exe()?;
    let tmp = tempfile::Builder::new().prefix("stella-demo-").tempdir()?;
    let root = tmp.path().canonicalize()?;
    let alice = Machine {
        name: "alice",
        repo: root.join("alice/project"),
        home: root.join("alice/stella-data"),
        exe: &exe,
    };
    let bob = Machine {
        name: "bob",
        repo: root.join("bob/project"),
        home: root.join("bob/stella-data"),
        exe: &exe,
    };
    std::fs::create_dir_all(&alice.repo)?;
    std::fs::create_dir_all(bob.repo.parent().expect("has a parent"))?;
    let mut d = Demo {
        out,
        failed: Vec::new(),
    };

    d.say("A repository with one file, on alice's machine.")?;
    d.git(&alice, &["init", "-q", "-b", "main"])?;
    d.shell(
        &alice,
        "printf 'alpha\\nbeta\\ngamma\\n' > notes.txt",
        "notes.txt",
        "alpha\nbeta\ngamma\n",
    )?;
    d.git(&alice, &["add", "notes.txt"])?;
    d.git(&alice, &["commit", "-q", "-m", "notes"])?;

    d.say("Two agents start sessions and both read notes.txt.")?;
    d.stella(&alice, &["session", "start", "--id", "agent-a"], b"", 0)?;
    d.stella(&alice, &["session", "start", "--id", "agent-b"], b"", 0)?;
    d.agent(&alice, "agent-a", &["read", "notes.txt"], "", 0)?;
    d.agent(&alice, "agent-b", &["read", "notes.txt"], "", 0)?;

    d.say("Agent B writes first. Agent A, still planning against what it read, writes blind: refused.")?;
    d.agent(
        &alice,
        "agent-b",
        &["write", "notes.txt"],
        "alpha\nbetamax\ngamma\n",
        0,
    )?;
    d.agent(
        &alice,
        "agent-a",
        &["write", "notes.txt"],
        "alpha\nBETA\ngamma\n",
        1,
    )?;
    d.git(&alice, &["diff", "--stat"])?;

    d.say("Agent A re-reads and redoes its change on top of B's: allowed.")?;
    d.agent(&alice, "agent-a", &["read", "notes.txt"], "", 0)?;
    d.agent(
        &alice,
        "agent-a",
        &["write", "notes.txt"],
        "alpha\nBETAMAX\ngamma\n",
        0,
    )?;

    d.say("Agent A's session becomes one file: a git bundle.")?;
    let artifact = root.join("agent-a.stella.bundle");
    let artifact_s = artifact.to_string_lossy().into_owned();
    d.agent(&alice, "agent-a", &["checkpoint", "-o", &artifact_s], "", 0)?;
    d.stella(&alice, &["-q", "inspect", &artifact_s], b"", 0)?;

    d.say(
        "On bob's machine: a fresh clone at the same commit, then the replay writes A's files out.",
    )?;
    let bob_folder = Machine {
        name: "bob",
        repo: root.join("bob"),
        home: bob.home.clone(),
        exe: &exe,
    };
    let source = alice.repo.to_string_lossy().into_owned();
    d.git(&bob_folder, &["clone", "-q", &source, "project"])?;
    let replayed = d.stella(
        &bob,
        &[
            "replay",
            "--materialize",
            "--as",
            "agent-a-on-bob",
            &artifact_s,
        ],
        b"",
        0,
    )?;
    d.stella(&bob, &["log", &replayed], b"", 0)?;

    d.say("Someone edits the file on bob's machine; the replayed session is still guarded.")?;
    d.shell(
        &bob,
        "printf 'edited by bob\\n' > notes.txt",
        "notes.txt",
        "edited by bob\n",
    )?;
    d.agent(
        &bob,
        "agent-a-on-bob",
        &["write", "notes.txt"],
        "overwrite\n",
        1,
    )?;

    if args.keep {
        let kept = tmp.keep();
        writeln!(d.out, "\n# kept: {}", kept.display())?;
    }
    if d.failed.is_empty() {
        writeln!(
            d.out,
            "\n# Done: two stale writes refused, every fresh one allowed, nothing uploaded anywhere."
        )?;
        Ok(ExitCode::SUCCESS)
    } else {
        Err(CliError::new(format!(
            "the demonstration did not go as shown: {}",
            d.failed.join("; ")
        )))
    }
}
