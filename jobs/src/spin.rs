//! The spin phase of an idle or waiting thread, before it parks.

use std::time::Instant;

use crossbeam_utils::Backoff;

/// How long an idle thread stays awake looking for work before it parks: crossbeam's
/// `Backoff` (spin, then yield), then more yields, about 50-100 µs in all. A physics step
/// is a chain of short parallel stages (tens of µs each); a worker that parked between
/// them would wake too late for the next one (a futex wake-up costs about as much as a
/// stage), so it keeps looking for a while. After that it parks and costs nothing.
///
/// A wait with a deadline spins only until it: [`next`](Spin::next) looks at the clock
/// before every round, so a round never starts after the deadline, and the most it can
/// overshoot is the one round (a `yield_now`) that began before it.
pub(crate) struct Spin {
    backoff: Backoff,
    rounds: u32,
    deadline: Option<Instant>,
}

impl Spin {
    const ROUNDS: u32 = 64;

    pub(crate) fn new() -> Self {
        Self::until(None)
    }

    /// A spin that also ends at `deadline`.
    pub(crate) fn until(deadline: Option<Instant>) -> Self {
        Self {
            backoff: Backoff::new(),
            rounds: 0,
            deadline,
        }
    }

    /// Waits a little; false once the thread should park (or its deadline has passed).
    pub(crate) fn next(&mut self) -> bool {
        if self.rounds >= Self::ROUNDS || self.deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        self.rounds += 1;
        if self.backoff.is_completed() {
            std::thread::yield_now();
        } else {
            self.backoff.snooze();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_spin_without_deadline_runs_its_rounds_then_ends() {
        let mut spin = Spin::new();
        let mut rounds = 0;
        while spin.next() {
            rounds += 1;
        }
        assert_eq!(rounds, Spin::ROUNDS);
    }

    #[test]
    fn a_spin_past_its_deadline_does_not_start_a_round() {
        let mut spin = Spin::until(Some(Instant::now()));
        assert!(!spin.next(), "a round started at or after the deadline");
    }

    /// The property `wait_timeout` relies on (issue 28): whenever the deadline had passed
    /// before `next` was called, `next` refuses, so no round (no `yield_now`) ever starts
    /// after it. Checked round by round against a deadline that falls within the spin
    /// (each round sleeps a little, so it is reached long before the 64 rounds end).
    #[test]
    fn no_round_starts_after_the_deadline() {
        let deadline = Instant::now() + Duration::from_millis(2);
        let mut spin = Spin::until(Some(deadline));
        let mut rounds = 0;
        loop {
            let before = Instant::now();
            let more = spin.next();
            if before >= deadline {
                assert!(!more, "round {rounds} started after the deadline");
            }
            if !more {
                break;
            }
            rounds += 1;
            std::thread::sleep(Duration::from_micros(200));
        }
        assert!(
            rounds < Spin::ROUNDS,
            "the deadline ended the spin, not its rounds"
        );
    }
}
