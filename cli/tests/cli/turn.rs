//! `git stella turn`: turns open and retract the resume point and keep the map.

use crate::common::*;

#[test]
fn turns_open_and_retract_the_resume_point_and_keep_the_map() {
    let w = World::new();
    let s = w.start();
    w.write("a", "a");
    w.ok(&["--session", &s, "read", "a"]);
    assert!(w.ok(&["--session", &s, "resume"]).contains("no open turn"));
    assert_eq!(
        w.ok(&["--session", &s, "turn", "begin", "--id", "t1"]),
        "t1"
    );
    w.ok(&["--session", &s, "step", "--note", "planned the change"]);
    w.write("a", "A");
    let resume = w.ok(&["--session", &s, "resume"]);
    assert!(resume.contains("open turn t1 since "), "{resume}");
    assert!(resume.contains(": 1 step, last at "), "{resume}");
    assert!(resume.contains("last note: planned the change"), "{resume}");
    assert!(resume.contains("1 tracked file\n"), "{resume}");
    assert!(
        resume.ends_with(
            "changed since this session saw them (re-read before writing):\n  changed  a"
        ),
        "{resume}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "resume", "--json"])).unwrap();
    assert_eq!(v["turn"]["id"], "t1");
    assert_eq!(v["turn"]["step_count"], 1);
    assert_eq!(v["changed"][0]["path"], "a");

    // A second begin while t1 is open ends t1 and says so.
    let out = w.run(&["--session", &s, "turn", "begin", "--id", "t2"]);
    assert_eq!(stdout(&out), "t2\n");
    assert_eq!(
        stderr(&out),
        "stella: turn t1 was still open (1 step); ended it and began turn t2\n"
    );
    w.ok(&["--session", &s, "turn", "end"]);
    let v: serde_json::Value =
        serde_json::from_str(&w.ok(&["--session", &s, "resume", "--json"])).unwrap();
    assert!(v["turn"].is_null());
    assert_eq!(v["tracked_count"], 1);
    // The map stayed: the stale write is still refused.
    assert_eq!(code(&w.run(&["--session", &s, "guard", "a"])), 1);
    let out = w.run(&["--session", &s, "turn", "end"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: no turn is open in session '{s}'\nhint: open one with 'git stella turn begin'\n"
        )
    );
    let log = w.ok(&["log", &s]);
    let summaries: Vec<&str> = log
        .lines()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap())
        .collect();
    // The guard's refusal only answered: it is no step.
    assert_eq!(
        summaries,
        [
            "turn end t2",
            "turn begin t2 (ended open turn t1)",
            "step 1 of turn t1: planned the change",
            "turn begin t1",
            "read a",
            "session start"
        ]
    );
}
