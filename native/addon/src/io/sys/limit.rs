//! Running out of descriptors, as both sides report it.

/// An accept failed for want of a descriptor (EMFILE: the process's file limit; ENFILE: the
/// system's; WSAEMFILE on Windows): the connection stays queued, and the listener stays readable.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct OutOfDescriptors;
