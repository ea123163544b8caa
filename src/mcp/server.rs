//! The MCP glue: the tools of [`super::tools`] served over stdio with `rmcp`, the official Rust
//! SDK of the Model Context Protocol.
//!
//! The library stays synchronous, and its workspace handle cannot move between threads (gix's
//! `Repository` is `!Send` without gix's `parallel` feature, which Stella keeps off). So the
//! connection's one [`Tools`] lives on a worker thread of its own, and each tool call is sent
//! there and awaited over a oneshot channel: the async runtime never blocks, and the steps of a
//! session land in the order the calls arrived. Every outcome, a refusal or an error included, is a tool result
//! (`isError: true` for the failures); nothing here answers with a JSON-RPC error or closes the
//! connection because a file was stale.

use std::path::PathBuf;
use std::sync::mpsc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

use super::tools::{Reply, SessionOrigin, Tools};
use crate::ids::SessionId;
use crate::workspace::{Notice, Settings};

type Job = Box<dyn FnOnce(&Tools) + Send>;

/// The error returned by [`Server::start`].
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Open(#[from] crate::session::Error),
    #[error("could not start the thread that holds the workspace")]
    Thread(#[source] std::io::Error),
}

/// `read_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadFileArgs {
    /// The file to read: a path relative to the workspace root (the git working tree), or an absolute path inside it.
    pub path: String,
    /// The first line to return, counting from 1. Leave it out to start at the first line.
    #[serde(default)]
    pub offset: Option<u64>,
    /// How many lines to return from `offset`. Leave it out to read to the end of the file.
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `write_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WriteFileArgs {
    /// The file to replace or create: relative to the workspace root, or absolute inside it. Missing folders are created.
    pub path: String,
    /// The complete new content of the file. It replaces everything in the file.
    pub content: String,
}

/// `edit_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EditFileArgs {
    /// The file to edit: relative to the workspace root, or absolute inside it.
    pub path: String,
    /// The exact text to replace, copied from the file as read_file returned it, whitespace and indentation included. It must occur exactly once unless replace_all is true.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one. Defaults to false.
    #[serde(default)]
    pub replace_all: bool,
}

/// `delete_file`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DeleteFileArgs {
    /// The file to delete: relative to the workspace root, or absolute inside it.
    pub path: String,
}

/// One connection's server: its tools and how its session was chosen.
#[derive(Clone)]
pub struct Server {
    jobs: mpsc::Sender<Job>,
    session: String,
    origin: SessionOrigin,
    root: String,
    tool_router: ToolRouter<Self>,
}

impl From<Reply> for CallToolResult {
    fn from(r: Reply) -> Self {
        let content = vec![ContentBlock::text(r.text)];
        if r.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }
}

#[tool_router]
impl Server {
    /// Open the workspace and the session on a worker thread that keeps them for the whole
    /// connection; the server, and what the person should hear on stderr.
    pub fn start(
        settings: Settings,
        cwd: PathBuf,
        session: Option<SessionId>,
    ) -> Result<(Server, Vec<Notice>), StartError> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready_tx, ready) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("stella-tools".into())
            .spawn(move || {
                let tools = match Tools::open(&settings, &cwd, session) {
                    Ok((tools, origin, notices)) => {
                        let about = (
                            tools.id.to_string(),
                            tools.ctx.ws.root.display().to_string(),
                            origin,
                            notices,
                        );
                        let _ = ready_tx.send(Ok(about));
                        tools
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                // Ends when the server, and with it the last sender, is dropped.
                for job in inbox {
                    job(&tools);
                }
            })
            .map_err(StartError::Thread)?;
        let (session, root, origin, notices) = ready
            .recv()
            .expect("the worker thread answers before it ends")?;
        Ok((
            Server {
                jobs,
                session,
                origin,
                root,
                tool_router: Self::tool_router(),
            },
            notices,
        ))
    }

    /// The connection's session id.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Run one tool call on the worker thread and wait for it without blocking the runtime.
    async fn call(&self, f: impl FnOnce(&Tools) -> Reply + Send + 'static) -> CallToolResult {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |t| {
            let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(t)));
            let _ = tx.send(reply.ok());
        });
        if self.jobs.send(job).is_err() {
            return Reply::error(
                "error: the server's worker thread is gone; restart the MCP server",
            )
            .into();
        }
        match rx.await {
            Ok(Some(reply)) => reply.into(),
            _ => Reply::error(
                "error: the tool call failed inside the server; check the file with read_file before retrying",
            )
            .into(),
        }
    }

    #[tool(
        description = "Read a text file in the workspace and return its content. Stella records the version you saw, so later write_file, edit_file and delete_file calls on this file are refused if someone else changes it in the meantime. Read a file before you change it. Use offset and limit to read a range of lines of a large file."
    )]
    async fn read_file(&self, Parameters(a): Parameters<ReadFileArgs>) -> CallToolResult {
        self.call(move |t| t.read_file(&a.path, a.offset, a.limit))
            .await
    }

    #[tool(
        description = "Replace a file's whole content, or create the file. Refused, with nothing written, when the file changed since you last read or wrote it (another agent or a person edited it): then read it again and redo your change against what is there now. The write is atomic: readers never see half a file."
    )]
    async fn write_file(&self, Parameters(a): Parameters<WriteFileArgs>) -> CallToolResult {
        self.call(move |t| t.write_file(&a.path, &a.content)).await
    }

    #[tool(
        description = "Replace exact text in a file: old_string must occur exactly once (or set replace_all). Refused, with nothing written, when the file changed since you last read or wrote it: then read it again and redo the edit. Fails clearly when old_string is not found or is ambiguous."
    )]
    async fn edit_file(&self, Parameters(a): Parameters<EditFileArgs>) -> CallToolResult {
        self.call(move |t| t.edit_file(&a.path, &a.old_string, &a.new_string, a.replace_all))
            .await
    }

    #[tool(
        description = "Delete a file. Refused, with nothing deleted, when the file changed since you last read or wrote it: read it again and decide again."
    )]
    async fn delete_file(&self, Parameters(a): Parameters<DeleteFileArgs>) -> CallToolResult {
        self.call(move |t| t.delete_file(&a.path)).await
    }

    #[tool(
        description = "List every file this session has read or written and whether it is still as you saw it (fresh), changed by someone else (changed), or deleted (gone). Re-read changed files before writing them."
    )]
    async fn status(&self) -> CallToolResult {
        self.call(|t| t.status()).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let session = &self.session;
        let how = match self.origin {
            SessionOrigin::Given => format!(
                "This connection is Stella session '{session}'; reconnecting with the same --session keeps what it has seen."
            ),
            SessionOrigin::Minted => format!(
                "This connection is Stella session '{session}', minted for it. To keep the guard across a reconnect or a crash, start the server with '--session {session}' (or STELLA_SESSION={session})."
            ),
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "git-stella",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(format!(
                "Guarded file tools for the workspace {}. Read a file with read_file before changing it; write_file, edit_file and delete_file are refused when the file changed since you read it (someone else edited it), and the refusal says how to recover: read it again and redo the change. Paths are relative to the workspace root. {how}",
                self.root
            ))
    }
}

/// Serve on stdin/stdout until the client closes the connection.
pub async fn serve_stdio(server: Server) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
