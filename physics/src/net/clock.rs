//! Clock synchronization (seed 000 §Clock synchronization): a client learns the offset
//! from its clock to the server's, and the rate at which that offset drifts, with
//! `time_req` / `time_res` round trips.
//!
//! **A round** is two exchanges back to back. A `time_req` carries a random id and its
//! send time `tr0` is kept; a response whose id is not the one outstanding (a late answer
//! to a request already resent, or one never asked for) is ignored. When the answer
//! (the server's time `tB0`) comes at `ta0`, a second request goes out at once, at
//! `tr1`; its answer `tB1` comes at `tr2`. The latency is the mean of the two round
//! trips, `lat = ((ta0 - tr0) + (tr2 - tr1)) / 2`. The server's clock moved by
//! `tB1 - tB0` between its answers, which should be the client's wait `tr1 - ta0` plus
//! about one round trip; a round where it differs by more than a quarter of `lat`
//! (plus 5 ms) is dropped (a stalled server, a clock that jumped, a response held in a
//! queue on one leg only). Each exchange of a kept round gives an offset sample, the
//! second `tB1 + (tr2 - tr1) / 2 - tr2` (the server's clock at `tr2` minus the
//! client's), the first likewise. A
//! request unanswered for twice the round trip (1 s before any) starts the round again
//! under a new id.
//!
//! **The estimate.** Rounds run back to back until [`FIRST_ROUNDS`] are kept, then one
//! every [`REFRESH`] seconds to follow drift; the last [`ROUNDS`] are kept. The
//! estimate drops the slowest quarter of their samples by round trip (a slow round
//! trip is one that waited in a queue, and half of it is the wrong split) and fits a
//! line through the offsets of the rest against the client's clock: the mean while
//! they span under 6 s, the least squares slope once they span more (clamped to ±1 %, beyond which a clock is broken,
//! not drifting). A client clock running 0.1 % fast is followed without lag.

use std::collections::VecDeque;

/// Rounds kept for the estimate.
pub const ROUNDS: usize = 32;

/// Rounds run back to back before the refresh period applies.
pub const FIRST_ROUNDS: usize = 5;

/// Seconds between rounds once [`FIRST_ROUNDS`] are kept.
pub const REFRESH: f64 = 0.5;

/// The span of rounds, seconds, from which a drift rate is fitted.
const DRIFT_SPAN: f64 = 6.0;

/// The largest drift believed, seconds per second.
const MAX_DRIFT: f64 = 0.01;

/// One exchange of a kept round: the client's time at the answer, the round trip, the
/// offset it gives.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    at: f64,
    rtt: f64,
    offset: f64,
}

/// Where the current round is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// No request out; the next round starts when due.
    Idle,
    /// The first request `id` went out at `sent`.
    First { id: u32, sent: f64 },
    /// The first answer came: its round trip, the server's time in it, its arrival.
    Answered {
        rtt0: f64,
        server0: f64,
        arrived0: f64,
    },
    /// The second request `id` went out at `sent`.
    Second {
        id: u32,
        sent: f64,
        rtt0: f64,
        server0: f64,
        arrived0: f64,
    },
}

/// A client's estimate of the server's clock.
#[derive(Clone, Debug)]
pub struct ClockSync {
    rng: u64,
    phase: Phase,
    last_round: f64,
    rounds: VecDeque<[Sample; 2]>,
    rejected: u64,
    /// `server = local + offset + drift * (local - at)`.
    fit: Option<(f64, f64, f64)>,
    rtt: Option<f64>,
}

impl ClockSync {
    /// A clock sync whose request ids come from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> ClockSync {
        ClockSync {
            rng: seed | 1,
            phase: Phase::Idle,
            last_round: f64::NEG_INFINITY,
            rounds: VecDeque::with_capacity(ROUNDS),
            rejected: 0,
            fit: None,
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
        match self.phase {
            Phase::First { sent, .. } | Phase::Second { sent, .. } if now - sent > timeout => {
                // Unanswered: the round starts again under a new id, so a late answer
                // to the old one is ignored.
                let id = self.next_id();
                self.phase = Phase::First { id, sent: now };
                Some(id)
            }
            Phase::Answered {
                rtt0,
                server0,
                arrived0,
            } => {
                let id = self.next_id();
                self.phase = Phase::Second {
                    id,
                    sent: now,
                    rtt0,
                    server0,
                    arrived0,
                };
                Some(id)
            }
            Phase::Idle => {
                let period = if self.rounds.len() < FIRST_ROUNDS {
                    0.0
                } else {
                    REFRESH
                };
                if now - self.last_round < period {
                    return None;
                }
                let id = self.next_id();
                self.phase = Phase::First { id, sent: now };
                Some(id)
            }
            Phase::First { .. } | Phase::Second { .. } => None,
        }
    }

    /// Takes a response: the request's `id`, the server's `server_time`, at local `now`.
    /// Returns false for a response to no outstanding request (ignored).
    pub fn on_response(&mut self, id: u32, server_time: f64, now: f64) -> bool {
        match self.phase {
            Phase::First { id: expected, sent } if id == expected && now >= sent => {
                self.phase = Phase::Answered {
                    rtt0: now - sent,
                    server0: server_time,
                    arrived0: now,
                };
                true
            }
            Phase::Second {
                id: expected,
                sent,
                rtt0,
                server0,
                arrived0,
            } if id == expected && now >= sent => {
                self.phase = Phase::Idle;
                self.last_round = now;
                let rtt1 = now - sent;
                let lat = (rtt0 + rtt1) / 2.0;
                let expected_step = (sent - arrived0) + lat;
                if ((server_time - server0) - expected_step).abs() > 0.25 * lat + 0.005 {
                    self.rejected += 1;
                    return true;
                }
                if self.rounds.len() == ROUNDS {
                    self.rounds.pop_front();
                }
                // Both exchanges of the round give a sample.
                self.rounds.push_back([
                    Sample {
                        at: arrived0,
                        rtt: rtt0,
                        offset: server0 + rtt0 / 2.0 - arrived0,
                    },
                    Sample {
                        at: now,
                        rtt: rtt1,
                        offset: server_time + rtt1 / 2.0 - now,
                    },
                ]);
                self.estimate();
                true
            }
            _ => false,
        }
    }

    /// The fit through the kept samples but the slowest quarter.
    fn estimate(&mut self) {
        let mut fast: Vec<Sample> = self.rounds.iter().flatten().copied().collect();
        // By round trip, ties by time: a fixed order whatever the arrival order. The
        // slowest quarter goes.
        fast.sort_by(|a, b| a.rtt.total_cmp(&b.rtt).then(a.at.total_cmp(&b.at)));
        fast.truncate((fast.len() * 3).div_ceil(4));
        let n = fast.len() as f64;
        let mean_at = fast.iter().map(|r| r.at).sum::<f64>() / n;
        let mean_offset = fast.iter().map(|r| r.offset).sum::<f64>() / n;
        let (lo, hi) = fast
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r.at), hi.max(r.at))
            });
        let mut drift = 0.0;
        if hi - lo >= DRIFT_SPAN && fast.len() >= 3 {
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for r in &fast {
                let x = r.at - mean_at;
                sxy += x * (r.offset - mean_offset);
                sxx += x * x;
            }
            drift = (sxy / sxx).clamp(-MAX_DRIFT, MAX_DRIFT);
        }
        self.fit = Some((mean_at, mean_offset, drift));
        self.rtt = Some(fast.iter().map(|r| r.rtt).sum::<f64>() / n);
    }

    /// The server's clock at local time `now`, once a round has been kept.
    #[must_use]
    pub fn server_time(&self, now: f64) -> Option<f64> {
        self.fit
            .map(|(at, offset, drift)| now + offset + drift * (now - at))
    }

    /// The estimated round trip, seconds (the mean of the rounds the estimate uses).
    #[must_use]
    pub fn rtt(&self) -> Option<f64> {
        self.rtt
    }

    /// The estimated drift of the server's clock against the client's, seconds per
    /// second (-0.001 when the client's runs 0.1 % fast); 0 until the rounds span 6 s.
    #[must_use]
    pub fn drift(&self) -> f64 {
        self.fit.map_or(0.0, |(_, _, d)| d)
    }

    /// Rounds kept (at most [`ROUNDS`]).
    #[must_use]
    pub fn sample_count(&self) -> usize {
        self.rounds.len()
    }

    /// Rounds dropped because the server's clock did not move as the round trips said.
    #[must_use]
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
}
