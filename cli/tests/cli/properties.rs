//! Property tests: the guard against a tiny model, and the artifact reader against arbitrary
//! bytes. `STELLA_PROPTEST_CASES` and `STELLA_FUZZ_CASES` raise the case counts for long runs.

use std::collections::HashMap;

use proptest::prelude::*;
use stella::guard::Intent;
use stella::paths::RelPath;
use stella::session::{Context, Outcome};

use crate::common::*;

#[derive(Clone, Debug)]
enum Op {
    Read(usize, usize),
    Write(usize, usize, u8),
    Delete(usize, usize),
    Guard(usize, usize),
    Outside(usize, Option<u8>),
}

fn op() -> impl Strategy<Value = Op> {
    let s = 0..2usize;
    let f = 0..3usize;
    let c = 0..3u8;
    prop_oneof![
        (s.clone(), f.clone()).prop_map(|(s, f)| Op::Read(s, f)),
        (s.clone(), f.clone(), c.clone()).prop_map(|(s, f, c)| Op::Write(s, f, c)),
        (s.clone(), f.clone()).prop_map(|(s, f)| Op::Delete(s, f)),
        (s, f.clone()).prop_map(|(s, f)| Op::Guard(s, f)),
        (f, proptest::option::of(c)).prop_map(|(f, c)| Op::Outside(f, c)),
    ]
}

/// The model: what each session last saw, what it last wrote (while its last word on the file
/// is that write), and the disk. No file of the model is ever committed.
#[derive(Default)]
struct Model {
    seen: [HashMap<usize, u8>; 2],
    wrote: [HashMap<usize, u8>; 2],
    disk: HashMap<usize, u8>,
}

impl Model {
    /// Whether the bytes of `f` on disk are the other session's uncommitted write.
    fn theirs(&self, s: usize, f: usize) -> bool {
        self.disk
            .get(&f)
            .is_some_and(|now| self.wrote[1 - s].get(&f) == Some(now))
    }

    /// Would a write of `content` (None: a delete) by `s` to `f` be allowed?
    fn allows(&self, s: usize, f: usize, content: Option<u8>) -> bool {
        let Some(seen) = self.seen[s].get(&f) else {
            // A blind change: refused over the other session's uncommitted write, unless it
            // writes those very bytes.
            return content.is_some() && self.disk.get(&f) == content.as_ref()
                || !self.theirs(s, f);
        };
        match (self.disk.get(&f), content) {
            (None, None) => true,
            (None, Some(_)) => false,
            (Some(now), Some(c)) if *now == c => true,
            (Some(now), _) => now == seen,
        }
    }
}

fn bytes(c: u8) -> Vec<u8> {
    format!("version {c}\n").into_bytes()
}

fn cases(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases("STELLA_PROPTEST_CASES", 48)))]

    #[test]
    fn the_guard_agrees_with_the_model(ops in proptest::collection::vec(op(), 1..24)) {
        let w = World::new();
        let settings = stella::workspace::Settings::new(w.stella_home.clone());
        let (ctx, _) = Context::open(&settings, &w.repo).unwrap();
        let sessions = [ctx.start_session(None).unwrap(), ctx.start_session(None).unwrap()];
        let path = |f: usize| RelPath::from_bytes(format!("file{f}").as_bytes()).unwrap();
        let disk = |f: usize| w.repo.join(format!("file{f}"));
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Read(s, f) => {
                    let r = ctx.session(&sessions[s]).read(&[path(f)]);
                    match model.disk.get(&f) {
                        Some(c) => {
                            prop_assert!(r.is_ok());
                            model.seen[s].insert(f, *c);
                            if model.wrote[s].get(&f) != Some(c) {
                                model.wrote[s].remove(&f);
                            }
                        }
                        None => prop_assert!(r.is_err(), "a read of a missing file must fail"),
                    }
                }
                Op::Write(s, f, c) => {
                    let allowed = model.allows(s, f, Some(c));
                    let out = ctx.session(&sessions[s]).write(&path(f), &bytes(c)).unwrap();
                    prop_assert_eq!(matches!(out, Outcome::Done(..)), allowed, "write {} {} {}", s, f, c);
                    if allowed {
                        model.disk.insert(f, c);
                        model.seen[s].insert(f, c);
                        model.wrote[s].insert(f, c);
                    }
                    let on_disk = std::fs::read(disk(f)).ok();
                    prop_assert_eq!(on_disk, model.disk.get(&f).map(|c| bytes(*c)));
                }
                Op::Delete(s, f) => {
                    let allowed = model.allows(s, f, None);
                    let out = ctx.session(&sessions[s]).rm(&[path(f).into()]).unwrap();
                    prop_assert_eq!(matches!(out, Outcome::Done(..)), allowed, "delete {} {}", s, f);
                    if allowed {
                        model.disk.remove(&f);
                        model.seen[s].remove(&f);
                        model.wrote[s].remove(&f);
                    }
                    prop_assert_eq!(disk(f).exists(), model.disk.contains_key(&f));
                }
                Op::Guard(s, f) => {
                    let checks = ctx.session(&sessions[s]).guard(&[path(f)], Intent::Write { content: None }).unwrap();
                    let model_allows = match model.seen[s].get(&f) {
                        Some(seen) => model.disk.get(&f) == Some(seen),
                        None => !model.theirs(s, f),
                    };
                    prop_assert_eq!(!checks[0].refused(), model_allows, "guard {} {}", s, f);
                }
                Op::Outside(f, c) => {
                    match c {
                        Some(c) => { std::fs::write(disk(f), bytes(c)).unwrap(); model.disk.insert(f, c); }
                        None => { let _ = std::fs::remove_file(disk(f)); model.disk.remove(&f); }
                    }
                }
            }
        }
    }
}

/// A real artifact to mutate.
fn sample_artifact() -> &'static [u8] {
    static SAMPLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SAMPLE.get_or_init(|| {
        let w = World::new();
        let s = w.start();
        w.write("a.txt", "alpha\n");
        w.write("b/c.txt", "gamma\n");
        w.ok(&["--session", &s, "read", "a.txt", "b/c.txt"]);
        std::fs::read(w.ok(&["--session", &s, "checkpoint"])).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases("STELLA_FUZZ_CASES", 512)))]

    #[test]
    fn the_artifact_reader_never_panics_on_arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = stella::artifact::read_head(&data[..]);
        let mut headed = b"# v2 git bundle\n".to_vec();
        headed.extend_from_slice(&data);
        let _ = stella::artifact::read_head(&headed[..]);
    }

    #[test]
    fn the_artifact_reader_never_panics_on_mutated_artifacts(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut data = sample_artifact().to_vec();
        let intact = stella::artifact::read_head(&data[..]).unwrap();
        for (i, b) in flips {
            let i = i.index(data.len());
            data[i] ^= b | 1;
        }
        // Every byte that says something is covered by a check (the header's syntax, the ids,
        // the pack's checksum): damage is refused, or (in the ref's name, a label that a push
        // may change too) changes nothing that is read.
        if let Ok(read) = stella::artifact::read_head(&data[..]) {
            prop_assert_eq!(read.tip, intact.tip);
            prop_assert_eq!(&read.manifest_text, &intact.manifest_text);
            prop_assert_eq!(&read.fingerprint, &intact.fingerprint);
            prop_assert_eq!(&read.origins, &intact.origins);
            prop_assert!(read.refname.starts_with(stella::artifact::CHECKPOINTS));
        }
        let end = cut.index(data.len());
        prop_assert!(stella::artifact::read_head(&data[..end]).is_err());
    }
}

/// The long fuzz run: mutate a real artifact and random bytes for `STELLA_FUZZ_SECONDS`
/// (default 600) and count the cases. Run it with
/// `cargo test --release --test cli -- --ignored fuzz_the_artifact_reader --nocapture`.
#[test]
#[ignore = "a long fuzz run, started by hand"]
fn fuzz_the_artifact_reader_for_a_while() {
    let seconds: u64 = std::env::var("STELLA_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let sample = sample_artifact();
    let mut seed = 0x9e3779b97f4a7c15u64 ^ u64::from(std::process::id());
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let start = std::time::Instant::now();
    let (mut cases, mut accepted) = (0u64, 0u64);
    while start.elapsed().as_secs() < seconds {
        let mut data = sample.to_vec();
        match next() % 4 {
            0 => {
                for _ in 0..1 + next() % 8 {
                    let i = (next() as usize) % data.len();
                    data[i] ^= (next() as u8) | 1;
                }
            }
            1 => data.truncate((next() as usize) % data.len()),
            2 => {
                let i = (next() as usize) % data.len();
                let n = (next() as usize) % 64;
                data.splice(i..i, (0..n).map(|_| next() as u8));
            }
            _ => data = (0..next() % 4096).map(|_| next() as u8).collect(),
        }
        if stella::artifact::read_head(&data[..]).is_ok() {
            accepted += 1;
        }
        cases += 1;
    }
    eprintln!(
        "fuzzed the artifact reader: {cases} cases in {seconds} s, {accepted} still read as artifacts"
    );
    assert!(cases > 0);
}
