//! A token bucket: how many frames of one kind a client may send, in a burst and per second.
//! The connection reads the clock only when such a frame arrives, so a connection that sends
//! none costs nothing.

use std::time::Instant;

/// A rate: `burst` at once, refilled by `per_second`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub burst: u32,
    pub per_second: u32,
}

/// The tokens left of a `Rate`.
#[derive(Debug)]
pub(crate) struct Bucket {
    rate: Rate,
    tokens: f64,
    last: Option<Instant>,
}

impl Bucket {
    pub(crate) fn new(rate: Rate) -> Self {
        Bucket { rate, tokens: rate.burst as f64, last: None }
    }

    /// Takes a token at `now`; false when none is left (the rate is exceeded).
    pub(crate) fn take(&mut self, now: Instant) -> bool {
        if let Some(last) = self.last {
            let refill = now.saturating_duration_since(last).as_secs_f64() * self.rate.per_second as f64;
            self.tokens = (self.tokens + refill).min(self.rate.burst as f64);
        }
        self.last = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_then_refused_then_refilled_by_the_rate() {
        let mut bucket = Bucket::new(Rate { burst: 3, per_second: 2 });
        let t = Instant::now();
        assert!(bucket.take(t) && bucket.take(t) && bucket.take(t));
        assert!(!bucket.take(t), "the fourth in the same instant is over the burst");
        assert!(!bucket.take(t + Duration::from_millis(400)), "0.8 of a token after 400 ms");
        assert!(bucket.take(t + Duration::from_millis(600)), "one token after 500 ms at 2/s");
        assert!(!bucket.take(t + Duration::from_millis(600)));
        // A long pause refills to the burst, not beyond it.
        let later = t + Duration::from_secs(60);
        assert!(bucket.take(later) && bucket.take(later) && bucket.take(later));
        assert!(!bucket.take(later));
    }
}
