//! The bundle writer: an artifact's pack in Stella's order, its head first (see
//! [`crate::artifact`]).

use std::collections::HashSet;
use std::io::{self, Read, Write};

use gix::ObjectId;

use super::{Error, HEAD_BLOBS, not_artifact};

/// Every object reachable from `tip`, without descending into gitlinks, head objects first and
/// the rest in a fixed walk order.
fn objects_to_pack(
    repo: &gix::Repository,
    tip: ObjectId,
    head: &[ObjectId],
) -> Result<Vec<ObjectId>, gix::Error> {
    let mut seen: HashSet<ObjectId> = head.iter().copied().collect();
    let mut order: Vec<ObjectId> = head.to_vec();
    let mut commits = vec![tip];
    let mut trees = Vec::new();
    while let Some(c) = commits.pop() {
        let commit = repo.find_commit(c)?;
        let decoded = commit.decode().map_err(gix::Error::from_error)?;
        if seen.insert(c) {
            order.push(c);
        }
        trees.push(decoded.tree());
        for p in decoded.parents() {
            if !seen.contains(&p) {
                commits.push(p);
            }
        }
    }
    let mut i = 0;
    while i < trees.len() {
        let t = trees[i];
        i += 1;
        if t != head[1] && !seen.insert(t) {
            continue;
        }
        if t != head[1] {
            order.push(t);
        }
        let tree = repo.find_tree(t)?;
        for e in tree.iter() {
            let e = e.map_err(gix::Error::from_error)?;
            let id = e.oid().to_owned();
            if e.mode().is_tree() {
                trees.push(id);
            } else if e.mode().is_commit() {
                // A gitlink names the base commit: never carried.
            } else if seen.insert(id) {
                order.push(id);
            }
        }
    }
    Ok(order)
}

/// Write a v2 git bundle of `tip` (one ref `refname`, no prerequisites) in artifact order: the
/// pack starts with the tip commit, its tree, `stella.toml`, `fingerprint` and `origins` (each
/// object once: `origins` is often the same blob as `fingerprint`), then
/// the rest of the history, every object stored whole, never descending into gitlinks.
///
/// [`crate::session::Session::checkpoint`] builds the tip and calls this; it is public for tools (and tests)
/// that assemble an artifact's commit themselves.
pub fn write_bundle(
    repo: &gix::Repository,
    refname: &str,
    tip: ObjectId,
    out: &mut dyn Write,
) -> Result<(), Error> {
    write_bundle_with(repo, refname, tip, out, false)
}

/// [`write_bundle`], with git's progress lines on this process's stderr when `progress` (the
/// caller decides: a terminal, and not quiet).
pub(crate) fn write_bundle_with(
    repo: &gix::Repository,
    refname: &str,
    tip: ObjectId,
    out: &mut dyn Write,
    progress: bool,
) -> Result<(), Error> {
    let to_io = |e: gix::Error| io::Error::other(e.to_string());
    let commit = repo.find_commit(tip).map_err(to_io)?;
    let tree = commit.tree().map_err(to_io)?;
    let mut head = vec![tip, tree.id];
    for name in HEAD_BLOBS {
        let entry = tree
            .find_entry(name)
            .ok_or_else(|| not_artifact(format!("its tree has no '{name}'")))?;
        // `origins` is often `fingerprint` itself (a session that changed nothing it saw): one
        // object goes into a pack once, or `git verify-pack` refuses the pack.
        if !head.contains(&entry.object_id()) {
            head.push(entry.object_id());
        }
    }
    let ids = objects_to_pack(repo, tip, &head).map_err(to_io)?;
    let mut rest = PackObjects::spawn(repo, &ids[head.len()..], progress)?;
    // git's pack header says how many entries it holds; the total goes in ours.
    let mut git_header = [0u8; 12];
    rest.stdout.read_exact(&mut git_header)?;
    if &git_header[..4] != b"PACK" {
        return Err(io::Error::other("git pack-objects wrote no pack").into());
    }
    let rest_count = u32::from_be_bytes(git_header[8..12].try_into().expect("4 bytes"));

    write!(out, "# v2 git bundle\n{tip} {refname}\n\n")?;
    let mut hasher = gix::hash::hasher(repo.object_hash());
    let mut emit = |out: &mut dyn Write, bytes: &[u8]| -> io::Result<()> {
        hasher.update(bytes);
        out.write_all(bytes)
    };
    let count = u32::try_from(head.len()).expect("at most five") + rest_count;
    let mut header = b"PACK\0\0\0\x02".to_vec();
    header.extend_from_slice(&count.to_be_bytes());
    emit(out, &header)?;
    for id in &head {
        let obj = repo.find_object(*id).map_err(to_io)?;
        emit(
            out,
            &crate::store::entry_header(obj.kind, obj.data.len() as u64),
        )?;
        let mut z =
            gix_zlib::stream::deflate::Write::new(Vec::new(), gix_zlib::Compression::DEFAULT);
        z.write_all(&obj.data)?;
        z.flush()?;
        emit(out, &z.into_inner())?;
    }
    // git's entries stream through, all but its own 20-byte trailer, which covers its header.
    let trailer_len = repo.object_hash().len_in_bytes();
    let mut buf = vec![0u8; 256 * 1024];
    let mut held = 0usize;
    loop {
        let n = rest.stdout.read(&mut buf[held..])?;
        if n == 0 {
            break;
        }
        held += n;
        if held > trailer_len {
            emit(out, &buf[..held - trailer_len])?;
            buf.copy_within(held - trailer_len..held, 0);
            held = trailer_len;
        }
    }
    rest.finish()?;
    if held != trailer_len {
        return Err(io::Error::other("git pack-objects wrote a truncated pack").into());
    }
    let trailer = hasher
        .try_finalize()
        .map_err(|e| io::Error::other(e.to_string()))?;
    out.write_all(trailer.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A pack of exactly the objects given, streamed by stock `git pack-objects`: it reuses the
/// store's compressed and deltified data, where compressing every object again cost 4.8× `git
/// bundle create` on 50 MB. Its entries follow the head's; their delta offsets are relative, so
/// they stay valid. One thread keeps the bytes the same run to run.
struct PackObjects {
    child: std::process::Child,
    stdout: std::process::ChildStdout,
    writer: std::thread::JoinHandle<io::Result<()>>,
}

impl PackObjects {
    fn spawn(repo: &gix::Repository, ids: &[ObjectId], progress: bool) -> io::Result<PackObjects> {
        use std::process::Stdio;
        // Killed with Stella (as every git Stella starts): a pack nobody reads is work for nobody.
        let mut child = crate::store::git_command(repo.git_dir())
            .args([
                "-c",
                "pack.threads=1",
                "-c",
                crate::store::BIG_FILE_THRESHOLD,
            ])
            .args(["pack-objects", "--stdout"])
            .arg(if progress { "--progress" } else { "-q" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if progress {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()?;
        let mut list = String::with_capacity(ids.len() * 41);
        for id in ids {
            list.push_str(&id.to_string());
            list.push('\n');
        }
        let mut stdin = child.stdin.take().expect("piped");
        let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
        let stdout = child.stdout.take().expect("piped");
        // A 1 MiB pipe (Linux's default ceiling for one) moves the pack in a sixteenth of the
        // reads and context switches of the default 64 KiB; where it cannot grow, nothing changes.
        #[cfg(target_os = "linux")]
        let _ = rustix::pipe::fcntl_setpipe_size(&stdout, 1 << 20);
        Ok(PackObjects {
            child,
            stdout,
            writer,
        })
    }

    fn finish(mut self) -> io::Result<()> {
        self.writer
            .join()
            .map_err(|_| io::Error::other("writing to git pack-objects failed"))??;
        let status = self.child.wait()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "git pack-objects failed: {status}"
            )))
        }
    }
}
