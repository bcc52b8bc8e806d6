//! The bottom layer: sockets and their bytes. `socket` makes the system calls (listening,
//! accepting, addresses, `recv`/`send`); `tls` is rustls on a connection; `transport` is one
//! connection's socket with its input and output buffers, plain or TLS, which the protocol
//! state machines read and write without touching the socket; `in_place` sends bodies from
//! where they lie (sendfile(2), the app's Buffer); `file` opens the files it sends; `udp` is a UDP socket on libuv (HTTP/3's); `sys` is
//! every call into the operating system those make, one module with a Unix side and a Windows
//! side (nothing above it names a platform).

pub(crate) mod file;
pub(crate) mod in_place;
pub(crate) mod socket;
pub(crate) mod sys;
pub(crate) mod tls;
mod transport;
pub(crate) mod udp;

pub(crate) use transport::{Input, Read, Transport, Written, HIGH_WATER};
