//! A file range sent by copy, where the system has no call that sends it where it lies (Windows,
//! and Unix other than Linux and macOS): one piece of up to 64 KiB read at its offset, then sent
//! as far as the socket takes it. Each side passes its own positioned read and send.

/// Reads up to 64 KiB of the range (`read(buf, offset)`) and sends it (`send(bytes)`): the bytes
/// sent, 0 at the file's end, negative on an error (the read's or the send's).
#[cfg_attr(all(unix, not(feature = "portable-unix"), any(target_os = "linux", target_os = "macos", target_os = "ios")), allow(dead_code))]
pub(crate) fn send_by_copy(offset: u64, length: usize, read: impl FnOnce(&mut [u8], u64) -> isize, send: impl FnOnce(&[u8]) -> isize) -> isize {
    let mut buf = [0u8; 64 * 1024];
    let want = length.min(buf.len());
    let got = read(&mut buf[..want], offset);
    if got <= 0 {
        return got;
    }
    send(&buf[..got as usize])
}
