//! What `session.toml` says about a session, as `session list`, `session show` and `show` print
//! it: when it started, and which artifact it was replayed from.

/// What `session.toml` says about a session: when it started, and where it was replayed from.
pub(crate) struct Meta {
    pub started: String,
    /// `started`, read back (`None` for a time that does not parse).
    pub started_at: Option<gix::date::Time>,
    /// The last replay it descends from: (origin session, artifact BLAKE3).
    pub origin: Option<(String, String)>,
}

impl Meta {
    /// When it started, as `date` shows times; as recorded when it does not read as a time.
    pub fn started_shown(&self, date: &crate::term::DateFormat, now: i64) -> String {
        match self.started_at {
            Some(t) => date.show(t, now),
            None => stella::text::escape_controls(&self.started).into_owned(),
        }
    }

    pub fn origin_text(&self) -> String {
        match &self.origin {
            // The origin's name came from an artifact: escaped, never printed raw.
            Some((session, artifact)) => format!(
                "{}@{}",
                stella::text::escape_controls(session),
                stella::text::escape_controls(&artifact.chars().take(12).collect::<String>())
            ),
            None => "-".into(),
        }
    }
}

pub(crate) fn meta(context: &stella::session::Context, id: &stella::ids::SessionId) -> Meta {
    let file = context.session(id).metadata().unwrap_or_default();
    let origin = file
        .provenance
        .last()
        .map(|p| (p.session.clone(), p.artifact.clone()));
    let started_at = crate::term::parse_iso(&file.started);
    let started = file.started;
    Meta {
        started,
        started_at,
        origin,
    }
}
