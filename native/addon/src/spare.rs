//! Buffers kept from finished requests and written responses, for the next ones to fill:
//! allocating and freeing them per request cost more than the rest of a small request's
//! bookkeeping.

use std::ops::Range;

/// Buffers of finished requests, kept for reuse, up to a byte budget. A count cap (256) once
/// held too few: under 2,500 connections x 4 pipelined a loop iteration has thousands of
/// requests in flight, so most buffers were freed and allocated again each time (1.9 frees a
/// request). Small heads are the common case: the budget holds thousands of them, or a few
/// hundred browser-sized ones.
#[derive(Default)]
pub(crate) struct Spare {
    heads: Vec<Vec<u8>>,
    headers: Vec<Vec<(Range<usize>, Range<usize>)>>,
    /// The capacity, in bytes, of what `heads` and `headers` hold.
    bytes: usize,
    /// Output buffers of connections that wrote all they had. A connection holds one only while
    /// it has output, so thousands of idle ones hold none (a buffer each was 10 MiB at 2,500
    /// connections x 4 pipelined), and the most recently given back, still in the CPU's cache,
    /// is taken first.
    outs: Buffers<{ Spare::MAX_OUTS }, { Spare::MAX_OUT }>,
    /// Input buffers of connections that parsed all they had, likewise: a connection holds one
    /// only while bytes wait in it.
    inputs: Buffers<{ Spare::MAX_INPUTS }, { Spare::MAX_INPUT }>,
}

/// Up to `COUNT` cleared byte buffers of at most `CAPACITY` bytes each, the most recently kept
/// (still in the CPU's cache) taken first.
#[derive(Default)]
struct Buffers<const COUNT: usize, const CAPACITY: usize>(Vec<Vec<u8>>);

impl<const COUNT: usize, const CAPACITY: usize> Buffers<COUNT, CAPACITY> {
    fn keep(&mut self, mut buffer: Vec<u8>) {
        if buffer.capacity() > 0 && buffer.capacity() <= CAPACITY && self.0.len() < COUNT {
            buffer.clear();
            self.0.push(buffer);
        }
    }

    fn take(&mut self) -> Vec<u8> {
        self.0.pop().unwrap_or_default()
    }
}

impl Spare {
    const BUDGET: usize = 1 << 20;
    const MAX_HEAD: usize = 2048;
    const MAX_HEADERS: usize = 64;
    const HEADER_SIZE: usize = std::mem::size_of::<(Range<usize>, Range<usize>)>();

    /// Keeps a finished request's buffers: its head's copy and its header list.
    pub(crate) fn keep(&mut self, head: Vec<u8>, headers: Vec<(Range<usize>, Range<usize>)>) {
        self.keep_head(head);
        self.keep_headers(headers);
    }

    fn keep_head(&mut self, mut head: Vec<u8>) {
        let size = head.capacity();
        if size > 0 && size <= Self::MAX_HEAD && self.bytes + size <= Self::BUDGET {
            head.clear();
            self.bytes += size;
            self.heads.push(head);
        }
    }

    pub(crate) fn keep_headers(&mut self, headers: Vec<(Range<usize>, Range<usize>)>) {
        let size = headers.capacity() * Self::HEADER_SIZE;
        if size > 0 && headers.capacity() <= Self::MAX_HEADERS && self.bytes + size <= Self::BUDGET {
            self.bytes += size;
            self.headers.push(headers);
        }
    }

    const MAX_OUTS: usize = 16;
    const MAX_OUT: usize = 64 * 1024;
    const MAX_INPUTS: usize = 16;
    /// Larger ones the transport gives back to the allocator itself (`KEEP_INPUT`).
    const MAX_INPUT: usize = 16 * 1024;

    pub(crate) fn keep_out(&mut self, out: Vec<u8>) {
        self.outs.keep(out);
    }

    pub(crate) fn out(&mut self) -> Vec<u8> {
        self.outs.take()
    }

    pub(crate) fn keep_input(&mut self, input: Vec<u8>) {
        self.inputs.keep(input);
    }

    pub(crate) fn input(&mut self) -> Vec<u8> {
        self.inputs.take()
    }

    pub(crate) fn head(&mut self) -> Vec<u8> {
        let head = self.heads.pop().unwrap_or_default();
        self.bytes -= head.capacity();
        head
    }

    pub(crate) fn headers(&mut self) -> Vec<(Range<usize>, Range<usize>)> {
        let headers = self.headers.pop().unwrap_or_default();
        self.bytes -= headers.capacity() * Self::HEADER_SIZE;
        headers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_requests_buffers_serve_the_next_one_emptied() {
        let mut spare = Spare::default();
        let mut head = Vec::with_capacity(512);
        head.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        spare.keep(head, Vec::with_capacity(8));
        let reused = spare.head();
        assert!(reused.is_empty() && reused.capacity() == 512);
        assert_eq!(spare.head().capacity(), 0, "one kept, one given");
        assert_eq!(spare.headers().capacity(), 8);
        assert_eq!(spare.bytes, 0, "what is given back leaves the budget");
    }

    #[test]
    fn large_buffers_and_those_past_the_budget_are_let_go() {
        let mut spare = Spare::default();
        spare.keep(Vec::with_capacity(Spare::MAX_HEAD + 1), Vec::with_capacity(Spare::MAX_HEADERS + 1));
        assert_eq!((spare.head().capacity(), spare.headers().capacity()), (0, 0));
        for _ in 0..(Spare::BUDGET / Spare::MAX_HEAD + 10) {
            spare.keep(Vec::with_capacity(Spare::MAX_HEAD), Vec::new());
        }
        assert!(spare.bytes <= Spare::BUDGET);
        assert_eq!(spare.heads.len(), Spare::BUDGET / Spare::MAX_HEAD);
    }

    #[test]
    fn input_buffers_are_kept_few_and_small() {
        let mut spare = Spare::default();
        for _ in 0..Spare::MAX_INPUTS + 5 {
            spare.keep_input(Vec::with_capacity(512));
        }
        spare.keep_input(Vec::with_capacity(Spare::MAX_INPUT + 1));
        assert_eq!(spare.inputs.0.len(), Spare::MAX_INPUTS);
        assert!(spare.input().capacity() >= 512);
        spare.inputs.0.clear();
        assert_eq!(spare.input().capacity(), 0, "none kept: a new one, unallocated");
    }

    #[test]
    fn output_buffers_are_kept_few_and_small() {
        let mut spare = Spare::default();
        for _ in 0..Spare::MAX_OUTS + 5 {
            spare.keep_out(Vec::with_capacity(1024));
        }
        spare.keep_out(Vec::with_capacity(Spare::MAX_OUT + 1));
        assert_eq!(spare.outs.0.len(), Spare::MAX_OUTS);
        assert!(spare.out().capacity() >= 1024);
    }
}
