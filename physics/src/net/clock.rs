//! Clock synchronization (seed 000 §Clock synchronization): a client learns the offset
//! from its clock to the server's with `time_req` / `time_res` round trips.
//!
//! A request carries a random id and its send time is kept; a response whose id is not
//! the one outstanding (a late answer to a request already resent) is ignored. From a
//! round trip of `rtt` answered with the server's time `ts`, the server's clock at the
//! response's arrival `t` was about `ts + rtt / 2`, an offset sample of
//! `ts + rtt / 2 - t`. The last [`SAMPLES`] samples are kept; the estimate averages the
//! ones whose round trip is within 25% (plus 2 ms) of the shortest, since a long round
//! trip is one that waited in a queue on one leg and its half is the wrong split.
//! Requests go out every 100 ms until [`SAMPLES`] are in, then every 2 s to follow
//! drift; one unanswered for twice the round trip (or 1 s before any) is resent under a
//! new id.

/// Offset samples kept.
pub const SAMPLES: usize = 8;

/// A client's estimate of the server's clock.
#[derive(Clone, Debug)]
pub struct ClockSync {
    rng: u64,
    outstanding: Option<(u32, f64)>,
    last_request: f64,
    samples: Vec<(f64, f64)>,
    offset: Option<f64>,
    rtt: Option<f64>,
}

impl ClockSync {
    /// A clock sync whose request ids come from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> ClockSync {
        ClockSync {
            rng: seed | 1,
            outstanding: None,
            last_request: f64::NEG_INFINITY,
            samples: Vec::with_capacity(SAMPLES),
            offset: None,
            rtt: None,
        }
    }

    fn next_id(&mut self) -> u32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 32) as u32
    }

    /// The id of a request to send now, if one is due at local time `now`.
    pub fn poll(&mut self, now: f64) -> Option<u32> {
        let timeout = self.rtt.map_or(1.0, |r| (2.0 * r).max(0.05));
        let due = match self.outstanding {
            Some((_, sent)) => now - sent > timeout,
            None => {
                let period = if self.samples.len() < SAMPLES {
                    0.1
                } else {
                    2.0
                };
                now - self.last_request >= period
            }
        };
        if !due {
            return None;
        }
        let id = self.next_id();
        self.outstanding = Some((id, now));
        self.last_request = now;
        Some(id)
    }

    /// Takes a response: the request's `id`, the server's `server_time`, at local `now`.
    /// Returns false for a response to no outstanding request (ignored).
    pub fn on_response(&mut self, id: u32, server_time: f64, now: f64) -> bool {
        let Some((expected, sent)) = self.outstanding else {
            return false;
        };
        if id != expected || now < sent {
            return false;
        }
        self.outstanding = None;
        let rtt = now - sent;
        if self.samples.len() == SAMPLES {
            self.samples.remove(0);
        }
        self.samples.push((rtt, server_time + rtt / 2.0 - now));
        let shortest = self
            .samples
            .iter()
            .map(|&(r, _)| r)
            .fold(f64::INFINITY, f64::min);
        let limit = shortest * 1.25 + 0.002;
        let (mut sum, mut n, mut rtt_sum) = (0.0, 0.0, 0.0);
        for &(r, o) in &self.samples {
            if r <= limit {
                sum += o;
                rtt_sum += r;
                n += 1.0;
            }
        }
        self.offset = Some(sum / n);
        self.rtt = Some(rtt_sum / n);
        true
    }

    /// The server's clock at local time `now`, once a response has come.
    #[must_use]
    pub fn server_time(&self, now: f64) -> Option<f64> {
        self.offset.map(|o| now + o)
    }

    /// The estimated round trip, seconds.
    #[must_use]
    pub fn rtt(&self) -> Option<f64> {
        self.rtt
    }

    /// Samples taken (at most [`SAMPLES`]).
    #[must_use]
    pub fn sample_count(&self) -> usize {
        self.samples.len()
    }
}
