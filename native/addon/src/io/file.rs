//! Files opened to be sent as a response's body, on the loop's own thread: open(2) and
//! fstat(2), as nginx opens them (without `aio`). On a file in the page cache each is a
//! microsecond or two, where libuv's thread pool costs a round trip per call (a wakeup of a
//! pool thread, a wakeup of the loop). A file on a cold, slow disk blocks the loop for the
//! read of its inode; static files are usually hot (see docs/decisions/static-files.md).
//! The metadata comes from the descriptor, so what is sent is what was looked at however the
//! path changes meanwhile.

use super::sys;
use std::fs::File;

/// What is at a path.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A regular file, open for reading, with what validators need: its size, and its
    /// modification time in seconds and nanoseconds (as Node's `Stats` has them).
    Regular { file: File, size: u64, mtime: (i64, i64) },
    /// A directory (closed again).
    Directory,
    /// Anything else, which is not served: a FIFO, a socket, a device (closed again).
    Other,
}

/// Opens `path` (bytes, as the file system takes them) for reading. Non-blocking, so that a
/// FIFO can't hold the open (and the loop) until a writer comes: it is then `Other`.
/// Close-on-exec, as every descriptor std opens. Fails with the errno of open(2) or fstat(2)
/// (EINVAL for a path holding a NUL, which no file's can).
pub(crate) fn open(path: &[u8]) -> Result<Opened, i32> {
    let path = path_of(path)?;
    let errno = |err: std::io::Error| sys::errno_of(&err);
    let file = sys::open_for_reading(path).map_err(errno)?;
    let meta = file.metadata().map_err(errno)?;
    let kind = meta.file_type();
    Ok(if kind.is_file() {
        Opened::Regular { size: meta.len(), mtime: sys::modified(&meta), file }
    } else if kind.is_dir() {
        Opened::Directory
    } else {
        Opened::Other
    })
}

/// A path JavaScript gave as bytes; EINVAL for one holding a NUL (which no file's can), or, on
/// Windows, one that is not UTF-8.
fn path_of(path: &[u8]) -> Result<&std::path::Path, i32> {
    if path.contains(&0) {
        return Err(sys::EINVAL);
    }
    sys::path_of(path).ok_or(sys::EINVAL)
}

/// The engine's own duplicate of a file JavaScript holds open, by its descriptor (close-on-exec);
/// None when it can't be had (on Windows, always: the caller streams the file instead).
pub(crate) fn duplicate(fd: u32) -> Option<File> {
    sys::duplicate_file(fd)
}

/// What is at a path, looked at without opening it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Regular,
    Directory,
    Other,
}

/// What is at `path`, by stat(2) (following links, as `open` does): one system call where an
/// open, fstat and close are three (a file served by its precompressed variant is only checked
/// to be there). Fails with stat(2)'s errno (EINVAL for a path holding a NUL).
pub(crate) fn kind(path: &[u8]) -> Result<Kind, i32> {
    let meta = std::fs::metadata(path_of(path)?).map_err(|err| sys::errno_of(&err))?;
    let kind = meta.file_type();
    Ok(if kind.is_file() {
        Kind::Regular
    } else if kind.is_dir() {
        Kind::Directory
    } else {
        Kind::Other
    })
}

/// Reads from `offset` of a file into `buf`: the bytes read; 0 at its end or on an error.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    usize::try_from(sys::read_at(file, buf, offset)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;

    fn dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("cog-file-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_regular_file_is_open_with_its_size_and_time() {
        let path = dir().join("a.txt");
        std::fs::write(&path, b"hello").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let Ok(Opened::Regular { mut file, size, mtime }) = open(path.as_os_str().as_bytes()) else { panic!("not opened") };
        assert_eq!((size, mtime), (5, (meta.mtime(), meta.mtime_nsec())));
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_eq!(text, "hello");
        assert!(sys::closed_on_exec(&file), "closed on exec");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_directory_a_fifo_and_nothing_are_told_apart() {
        let dir = dir();
        assert!(matches!(open(dir.as_os_str().as_bytes()), Ok(Opened::Directory)));
        let fifo = dir.join("pipe");
        sys::make_fifo(&fifo).unwrap();
        // Non-blocking: no writer, yet the open returns at once.
        assert!(matches!(open(fifo.as_os_str().as_bytes()), Ok(Opened::Other)));
        std::fs::remove_file(&fifo).unwrap();
        assert_eq!(open(dir.join("missing").as_os_str().as_bytes()).unwrap_err(), sys::ENOENT);
        assert_eq!(open(dir.join("missing/below").as_os_str().as_bytes()).unwrap_err(), sys::ENOENT);
        assert_eq!(open(b"/tmp/a\0b").unwrap_err(), sys::EINVAL);
    }

    #[test]
    fn kinds_are_told_without_opening() {
        let dir = dir();
        let path = dir.join("k.txt");
        std::fs::write(&path, b"k").unwrap();
        assert_eq!(kind(path.as_os_str().as_bytes()), Ok(Kind::Regular));
        assert_eq!(kind(dir.as_os_str().as_bytes()), Ok(Kind::Directory));
        let fifo = dir.join("kind-pipe");
        sys::make_fifo(&fifo).unwrap();
        assert_eq!(kind(fifo.as_os_str().as_bytes()), Ok(Kind::Other));
        std::fs::remove_file(&fifo).unwrap();
        assert_eq!(kind(dir.join("missing").as_os_str().as_bytes()), Err(sys::ENOENT));
        assert_eq!(kind(path.join("below").as_os_str().as_bytes()), Err(sys::ENOTDIR));
        assert_eq!(kind(b"/tmp/a\0b"), Err(sys::EINVAL));
        std::fs::remove_file(&path).unwrap();
    }
}
