//! The one place the engine calls the operating system: sockets (listen, accept, recv, send
//! without SIGPIPE, shutdown, close, options, addresses, FIONREAD, MSG_PEEK), file ranges sent
//! to a socket (sendfile), and the files it opens. Each side gives the same functions over its
//! own calls: `unix` (Linux, with its one-call paths, and macOS and the BSDs; the `portable-unix`
//! feature builds the latter's flavour on Linux) and `windows` (Winsock). Everything above
//! `io::sys` is the same on every platform: no `libc`, no `cfg`.
//!
//! Errors are numbers (`Error`) as Node names them: errno on Unix, libuv's numbering on Windows.

mod copy;
mod limit;
pub(crate) use limit::OutOfDescriptors;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

/// The error number of a failed file or socket call, as JavaScript names it (`util.getSystemErrorName`).
#[cfg(unix)]
pub(crate) fn errno_of(err: &std::io::Error) -> i32 {
    err.raw_os_error().unwrap_or(EIO)
}

/// An error's text, ending "(os error N)" with N its `errno_of` (which JavaScript reads the code from).
#[cfg(unix)]
pub(crate) fn error_text(err: &std::io::Error) -> String {
    err.to_string()
}
