//! The sessions of a store: listing them, their history, and dropping, restoring and expiring
//! them.

use super::*;

impl Journal<'_> {
    /// Every session in the store with its tip, sorted by id.
    pub fn sessions(&self) -> Result<Vec<(SessionId, Tip)>, Error> {
        self.sessions_where(|_| true)
    }

    /// The sessions that recorded a step from Unix second `since` on: their ref's file changed
    /// then (a ref packed away has not moved since it was packed). One `stat` per session; only
    /// those read their tip.
    pub(crate) fn sessions_moved_since(&self, since: i64) -> Result<Vec<(SessionId, Tip)>, Error> {
        let refs = self.store.dir().to_owned();
        self.sessions_where(|name| {
            std::fs::metadata(refs.join(name))
                .is_ok_and(|m| std::os::unix::fs::MetadataExt::mtime(&m) >= since)
        })
    }

    fn sessions_where(&self, keep: impl Fn(&str) -> bool) -> Result<Vec<(SessionId, Tip)>, Error> {
        let mut out = Vec::new();
        for (name, commit) in self.store.refs(SESSIONS)? {
            let Some(id) = name
                .strip_prefix(SESSIONS)
                .and_then(|s| SessionId::parse(s).ok())
            else {
                continue;
            };
            if !keep(&name) {
                continue;
            }
            let tip = self.read_tip(id.as_str(), commit)?;
            out.push((id, tip));
        }
        Ok(out)
    }

    /// The session's steps, newest first: (commit, time, summary).
    pub fn history(
        &self,
        id: &SessionId,
    ) -> Result<Vec<(ObjectId, gix::date::Time, String)>, Error> {
        let mut out = Vec::new();
        self.walk_steps(id, |commit, time, d| {
            let summary = d.message.lines().next().unwrap_or_default();
            out.push((commit, time, summary.to_str_lossy().into_owned()));
            Ok(true)
        })?;
        Ok(out)
    }

    /// The bytes session `id` wrote at `path` in its steps from Unix second `since` on, newest
    /// first, with when each was written: only those steps are read.
    pub(crate) fn written_since(
        &self,
        id: &SessionId,
        path: &RelPath,
        since: i64,
    ) -> Result<Vec<(Digest, i64)>, Error> {
        let mut out: Vec<(Digest, i64)> = Vec::new();
        self.walk_steps(id, |_, time, d| {
            if time.seconds < since {
                return Ok(false);
            }
            if let Some(Entry {
                seen: Seen::Digest(digest),
                wrote: Some(at),
                ..
            }) = self.lookup_at(d.tree(), path)?
                && at >= since
                && !out.iter().any(|(d, _)| *d == digest)
            {
                out.push((digest, at));
            }
            Ok(true)
        })?;
        Ok(out)
    }

    /// Call `each` on the session's steps, newest first, with each step's time, until it says
    /// to stop (`false`).
    fn walk_steps(
        &self,
        id: &SessionId,
        mut each: impl FnMut(ObjectId, gix::date::Time, &CommitRef<'_>) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let mut next = Some(self.tip(id)?.commit);
        let mut buf = Vec::new();
        while let Some(commit) = next {
            let d = self.read_commit(&commit, &mut buf)?;
            let time = d
                .committer()
                .ok()
                .and_then(|s| s.time().ok())
                .unwrap_or_default();
            if !each(commit, time, &d)? {
                break;
            }
            next = d.parents().next();
        }
        Ok(())
    }

    /// Delete the session's ref and reflog.
    pub(crate) fn drop_session(&self, id: &SessionId) -> Result<DropOutcome, Error> {
        // A damaged journal is removed, not set aside: nothing whole could come back, and
        // git's gc stops at a ref whose objects are missing.
        if !self.store.is_whole(&session_ref(id))? {
            return if self.store.delete_ref(&session_ref(id))? {
                Ok(DropOutcome::Removed)
            } else {
                Err(Error::UnknownSession { id: id.clone() })
            };
        }
        let now = gix::date::Time::now_utc().seconds;
        // Dropped twice in one second (started again in between): the next number.
        let taken: Vec<String> = self
            .store
            .refs(DROPPED)?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let mut to = format!("{DROPPED}{id}/{now}");
        let mut nth = 1;
        while taken.contains(&to) {
            to = format!("{DROPPED}{id}/{now}.{nth}");
            nth += 1;
        }
        if self
            .store
            .rename_ref(&session_ref(id), &to, &format!("session drop {id}"))?
        {
            Ok(DropOutcome::Kept)
        } else {
            Err(Error::UnknownSession { id: id.clone() })
        }
    }

    /// Every dropped session still kept, newest drop first.
    pub fn dropped(&self) -> Result<Vec<Dropped>, Error> {
        let mut out = Vec::new();
        for (name, commit) in self.store.refs(DROPPED)? {
            let Some((id, at, nth)) = name
                .strip_prefix(DROPPED)
                .and_then(|rest| rest.rsplit_once('/'))
                .and_then(|(id, when)| {
                    let (at, nth) = when.split_once('.').unwrap_or((when, "0"));
                    Some((
                        SessionId::parse(id).ok()?,
                        at.parse().ok()?,
                        nth.parse().ok()?,
                    ))
                })
            else {
                continue;
            };
            let tip = self.read_tip(id.as_str(), commit)?;
            out.push(Dropped {
                id,
                at,
                nth,
                tip,
                ref_name: name,
            });
        }
        out.sort_by(|a, b| (b.at, b.nth).cmp(&(a.at, a.nth)).then(a.id.cmp(&b.id)));
        Ok(out)
    }

    /// Bring back the last drop of session `id`, as it was when dropped.
    pub(crate) fn undrop(&self, id: &SessionId) -> Result<Dropped, Error> {
        if self.try_tip(id)?.is_some() {
            return Err(Error::SessionExists { id: id.clone() });
        }
        let Some(last) = self.dropped()?.into_iter().find(|d| &d.id == id) else {
            return Err(Error::NotDropped { id: id.clone() });
        };
        if !self.store.rename_ref(
            &last.ref_name,
            &session_ref(id),
            &format!("session undrop {id}"),
        )? {
            return Err(Error::NotDropped { id: id.clone() });
        }
        Ok(last)
    }

    /// Forget for good the sessions dropped at Unix second `until` or before (with `dry_run`,
    /// only name them): their steps become unreachable, for `git gc` to prune.
    pub fn expire_dropped(&self, until: i64, dry_run: bool) -> Result<Vec<Dropped>, Error> {
        let old: Vec<Dropped> = self
            .dropped()?
            .into_iter()
            .filter(|d| d.at <= until)
            .collect();
        if !dry_run {
            for d in &old {
                self.store.delete_ref(&d.ref_name)?;
            }
        }
        Ok(old)
    }
}
