//! Stella opens no network connection (SPEC section 8): a workflow runs with the network cut
//! (`unshare -rn`: a namespace whose only interface, loopback, is down) and under strace, which
//! must see no connect and no internet socket from any process it spawned (git included).
//!
//! Not per command: the promise holds for a whole workflow, every command in it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use super::common::{World, clean_env, have};

/// One command of a workflow: its argv (`git-stella` names the binary under test), what it
/// reads on stdin, and the exit status it must end with.
pub struct Step {
    pub argv: Vec<String>,
    pub stdin: Vec<u8>,
    pub code: i32,
}

pub fn step(argv: &[&str], code: i32) -> Step {
    Step {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        stdin: Vec::new(),
        code,
    }
}

pub fn step_stdin(argv: &[&str], stdin: &str, code: i32) -> Step {
    Step {
        stdin: stdin.as_bytes().to_vec(),
        ..step(argv, code)
    }
}

/// What strace saw: the programs run (children such as git included), the network system calls,
/// and those among them that try to reach a network.
pub struct Trace {
    pub programs: Vec<String>,
    pub calls: Vec<String>,
    pub attempts: Vec<String>,
}

fn is_attempt(line: &str) -> bool {
    line.contains("connect(")
        || ["socket(AF_INET", "socket(AF_INET6", "socket(AF_PACKET"]
            .iter()
            .any(|s| line.contains(s))
        || (line.contains("sendto(") || line.contains("sendmsg("))
            && (line.contains("AF_INET") || line.contains("sin_addr"))
}

/// Run `steps` in the world's repository, each with the network cut and traced; each must end
/// with its exit status. Returns every step's output and the trace of all of them.
pub fn run_offline(w: &World, steps: &[Step]) -> (Vec<Output>, Trace) {
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    let traces = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    let mut trace = Trace {
        programs: Vec::new(),
        calls: Vec::new(),
        attempts: Vec::new(),
    };
    for (i, s) in steps.iter().enumerate() {
        let log = traces.path().join(format!("{i}.strace"));
        let mut cmd = Command::new("unshare");
        clean_env(&mut cmd, &w.home, &w.stella_home);
        cmd.current_dir(&w.repo)
            .args(["-rn", "strace", "-f", "-qq", "-e", "signal=none"])
            .args(["-e", "trace=%network,execve", "-o"])
            .arg(&log);
        match s.argv[0].as_str() {
            "git-stella" => cmd.arg(&bin),
            other => cmd.arg(other),
        };
        let mut child = cmd
            .args(&s.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("unshare and strace run (.ci/run installs strace)");
        child.stdin.take().unwrap().write_all(&s.stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(s.code),
            "{:?} under unshare -rn: {}",
            s.argv,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&log).expect("strace wrote its log");
        for line in text.lines().filter(|l| !l.contains("+++ exited")) {
            if line.contains("execve(") {
                trace.programs.push(format!("{:?}: {line}", s.argv));
                continue;
            }
            trace.calls.push(format!("{:?}: {line}", s.argv));
            if is_attempt(line) {
                trace.attempts.push(format!("{:?}: {line}", s.argv));
            }
        }
        outputs.push(out);
    }
    (outputs, trace)
}

#[test]
fn the_workflow_opens_no_connection() {
    if !have(
        "strace",
        "tracing for network connections (the strace package)",
    ) {
        return;
    }
    let w = World::new();
    let a1 = ["git-stella", "--session", "agent-1"];
    let a2 = ["git-stella", "--session", "agent-2"];
    let with = |base: &[&str], rest: &[&str]| -> Vec<String> {
        base.iter().chain(rest).map(|s| s.to_string()).collect()
    };
    let s = |argv: Vec<String>, stdin: &str, code: i32| {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        step_stdin(&argv, stdin, code)
    };
    let steps = vec![
        step(&["git-stella", "init"], 0),
        step(&["git-stella", "session", "start", "--id", "agent-1"], 0),
        step(&["git-stella", "session", "start", "--id", "agent-2"], 0),
        s(with(&a1, &["read", "README"]), "", 0),
        s(with(&a2, &["read", "README"]), "", 0),
        s(with(&a1, &["turn", "begin"]), "", 0),
        s(with(&a2, &["write", "README"]), "agent 2\n", 0),
        s(with(&a1, &["write", "README"]), "agent 1\n", 1),
        s(with(&a1, &["guard", "README"]), "", 1),
        s(with(&a1, &["status"]), "", 0),
        s(with(&a1, &["diff", "README"]), "", 0),
        s(with(&a1, &["step", "--note", "refused"]), "", 0),
        s(with(&a1, &["turn", "end"]), "", 0),
        s(with(&a1, &["resume"]), "", 0),
        step(&["git-stella", "log"], 0),
        step(&["git-stella", "session", "list"], 0),
        step(&["git-stella", "gc"], 0),
        s(with(&a1, &["read", "README"]), "", 0),
        s(with(&a1, &["write", "README"]), "agent 1\n", 0),
    ];
    let (out, trace) = run_offline(&w, &steps);

    // The workflow did its job with the network cut: the stale write was refused, the fresh one
    // went through.
    let refused = String::from_utf8_lossy(&out[7].stderr);
    assert!(
        refused.starts_with("refusing to write: README\n"),
        "{refused}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out[9].stdout),
        "changed    README\n"
    );
    assert_eq!(w.read("README"), "agent 1\n");

    assert!(
        trace.attempts.is_empty(),
        "{} network connection attempts:\n{}",
        trace.attempts.len(),
        trace.attempts.join("\n")
    );
    // The trace followed the children: git-stella runs git for gc.
    assert!(
        trace
            .programs
            .iter()
            .any(|l| l.contains("\"gc\"") && l.contains("git\"")),
        "{}",
        trace.programs.join("\n")
    );
    println!(
        "{} steps, {} programs run, {} network system calls, {} connection attempts",
        steps.len(),
        trace.programs.len(),
        trace.calls.len(),
        trace.attempts.len()
    );
}

#[test]
fn the_trace_sees_a_connection_attempt() {
    if !have(
        "strace",
        "tracing for network connections (the strace package)",
    ) {
        return;
    }
    // The control: the same harness catches a process that does try to connect.
    let w = World::new();
    let (_, trace) = run_offline(
        &w,
        &[step(
            &["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9 || true"],
            0,
        )],
    );
    assert!(
        trace.attempts.iter().any(|l| l.contains("connect(")),
        "{:?}",
        trace.calls
    );
}

#[test]
fn the_demonstration_opens_no_connection() {
    if !have(
        "strace",
        "tracing for network connections (the strace package)",
    ) {
        return;
    }
    // The README's first command, whole: two repositories, a checkpoint, a replay, stock git.
    let w = World::new();
    let (outputs, trace) = run_offline(&w, &[step(&["git-stella", "demo"], 0)]);
    assert!(
        String::from_utf8_lossy(&outputs[0].stdout).contains("# Done: two stale writes refused"),
        "{}",
        String::from_utf8_lossy(&outputs[0].stderr)
    );
    assert!(
        trace.attempts.is_empty(),
        "{} network connection attempts:\n{}",
        trace.attempts.len(),
        trace.attempts.join("\n")
    );
    // The trace followed the demonstration's children: git clone among them.
    assert!(
        trace.programs.iter().any(|l| l.contains("\"clone\"")),
        "{}",
        trace.programs.join("\n")
    );
}
