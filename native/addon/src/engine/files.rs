//! Files JavaScript opens for a request's answer (`serveStatic`, `res.sendFile`), opened on the
//! loop's thread (`io::file`), never through libuv's thread pool. A regular file is kept on the
//! request until its answer sends it (`respond` with a file body, `WholeBody::File`) or the
//! request is let go (answered otherwise, aborted), which closes it: JavaScript never holds the
//! descriptor, so no path of the app's can leak it.

use super::state::State;
use crate::io::file::{self, Opened};
use std::fs::File;

/// What JavaScript is told of a path it opened.
pub(crate) enum Found {
    /// A regular file, kept for the answer: its size, and its modification time (seconds, nanoseconds).
    File {
        size: u64,
        mtime: (i64, i64),
    },
    Directory,
    /// Not served (a FIFO, a socket, a device).
    Other,
}

impl State {
    /// Opens `path` for request `id`'s answer; a regular file is kept on the request in place
    /// of one kept before (closed: the answer sends the last one opened). Fails with open(2)'s
    /// or fstat(2)'s errno. A request already gone keeps nothing (the file is closed at once).
    pub(crate) fn open_file(&mut self, id: u64, path: &[u8]) -> Result<Found, i32> {
        Ok(match file::open(path)? {
            Opened::Regular { file, size, mtime } => {
                if let Some(req) = self.reqs.get_mut(id) {
                    req.keep_file(file);
                }
                Found::File { size, mtime }
            }
            Opened::Directory => Found::Directory,
            Opened::Other => Found::Other,
        })
    }

    /// The file kept for request `id`'s answer, to send: None when the request is gone,
    /// `Some(None)` when no file was opened for it.
    pub(crate) fn take_file(&mut self, id: u64) -> Option<Option<File>> {
        Some(self.reqs.get_mut(id)?.take_file())
    }
}
