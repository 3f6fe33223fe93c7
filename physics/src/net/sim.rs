//! A network to test on: latency, jitter, loss, duplication and reordering from a seed,
//! the same every run.
//!
//! One [`SimNetwork`] joins any number of nodes; each gets a [`SimEndpoint`]
//! ([`Transport`]). A datagram sent at time `t` arrives at `t + latency + U(0, jitter)`;
//! an unreliable one is lost with probability `loss`, duplicated with `duplicate` (the
//! copy with its own delay) and, with `reorder`, held back an extra `jitter`. A reliable
//! one is never lost: a "loss" costs it one more round trip, as a retransmission does,
//! and it never overtakes the reliable datagram before it on the same link. Time is the
//! caller's: [`SimNetwork::advance`] moves it, so a test is exactly repeatable.

use std::cell::RefCell;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::rc::Rc;

use super::transport::{Channel, Transport};

/// A link's conditions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConditions {
    /// One-way latency, seconds.
    pub latency: f64,
    /// Extra delay, uniform in `[0, jitter]`, seconds.
    pub jitter: f64,
    /// Probability an unreliable datagram is lost.
    pub loss: f64,
    /// Probability a datagram arrives twice.
    pub duplicate: f64,
    /// Probability a datagram is held back another `jitter` (so later ones overtake it).
    pub reorder: f64,
}

impl LinkConditions {
    /// A perfect link: no latency, nothing lost.
    pub const PERFECT: LinkConditions = LinkConditions {
        latency: 0.0,
        jitter: 0.0,
        loss: 0.0,
        duplicate: 0.0,
        reorder: 0.0,
    };

    /// Issue 32's test conditions: 100 ms latency, 20 ms jitter, 5% loss, with 1%
    /// duplicated and 2% reordered.
    pub const ISSUE_32: LinkConditions = LinkConditions {
        latency: 0.1,
        jitter: 0.02,
        loss: 0.05,
        duplicate: 0.01,
        reorder: 0.02,
    };
}

#[derive(Debug, PartialEq, Eq)]
struct InFlight {
    /// Arrival time as ordered bits (non-negative f64 orders as its bits).
    at: u64,
    seq: u64,
    from: u32,
    to: u32,
    channel: Channel,
    bytes: Vec<u8>,
}

impl Ord for InFlight {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Earliest first from a max-heap.
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug)]
struct State {
    now: f64,
    rng: u64,
    seq: u64,
    conditions: LinkConditions,
    in_flight: BinaryHeap<InFlight>,
    /// The last reliable arrival per `(from, to)`, which the next may not precede.
    last_reliable: BTreeMap<(u32, u32), u64>,
    arrived: BTreeMap<u32, VecDeque<(u32, Channel, Vec<u8>)>>,
    sent: u64,
    lost: u64,
    bytes_sent: BTreeMap<(u32, u32), u64>,
}

impl State {
    fn unit(&mut self) -> f64 {
        unit(&mut self.rng)
    }

    fn push(&mut self, from: u32, to: u32, channel: Channel, bytes: Vec<u8>, at: f64) {
        self.seq += 1;
        let mut at = at.max(0.0).to_bits();
        if channel == Channel::Reliable {
            let last = self.last_reliable.entry((from, to)).or_insert(0);
            at = at.max(*last);
            *last = at;
        }
        self.in_flight.push(InFlight {
            at,
            seq: self.seq,
            from,
            to,
            channel,
            bytes,
        });
    }

    fn send(&mut self, from: u32, to: u32, channel: Channel, bytes: Vec<u8>) {
        let c = self.conditions;
        self.sent += 1;
        *self.bytes_sent.entry((from, to)).or_insert(0) += bytes.len() as u64;
        let mut delay = c.latency + c.jitter * self.unit();
        if self.unit() < c.reorder {
            delay += c.jitter;
        }
        if self.unit() < c.loss {
            match channel {
                Channel::Unreliable => {
                    self.lost += 1;
                    return;
                }
                Channel::Reliable => delay += 2.0 * c.latency + c.jitter,
            }
        }
        if self.unit() < c.duplicate && channel == Channel::Unreliable {
            let again = c.latency + c.jitter * self.unit();
            self.push(from, to, channel, bytes.clone(), self.now + again);
        }
        let at = self.now + delay;
        self.push(from, to, channel, bytes, at);
    }
}

/// The simulated network (see the [module header](self)).
#[derive(Clone, Debug)]
pub struct SimNetwork {
    state: Rc<RefCell<State>>,
}

impl SimNetwork {
    /// A network where every link has `conditions`, its randomness from `seed`.
    #[must_use]
    pub fn new(conditions: LinkConditions, seed: u64) -> SimNetwork {
        SimNetwork {
            state: Rc::new(RefCell::new(State {
                now: 0.0,
                rng: seed,
                seq: 0,
                conditions,
                in_flight: BinaryHeap::new(),
                last_reliable: BTreeMap::new(),
                arrived: BTreeMap::new(),
                sent: 0,
                lost: 0,
                bytes_sent: BTreeMap::new(),
            })),
        }
    }

    /// The endpoint of node `node`, sending to and receiving from other nodes by number.
    #[must_use]
    pub fn endpoint(&self, node: u32) -> SimEndpoint {
        SimEndpoint {
            node,
            state: Rc::clone(&self.state),
        }
    }

    /// Moves the network's time to `now`, delivering every datagram due by then.
    pub fn advance(&self, now: f64) {
        let mut s = self.state.borrow_mut();
        s.now = s.now.max(now);
        let now_bits = s.now.to_bits();
        while s.in_flight.peek().is_some_and(|d| d.at <= now_bits) {
            let d = s.in_flight.pop().expect("peeked");
            s.arrived
                .entry(d.to)
                .or_default()
                .push_back((d.from, d.channel, d.bytes));
        }
    }

    /// Changes every link's conditions from now on (datagrams in flight keep their
    /// arrival times): a network that worsens or recovers mid-test.
    pub fn set_conditions(&self, conditions: LinkConditions) {
        self.state.borrow_mut().conditions = conditions;
    }

    /// Datagrams sent so far, and how many of them were lost.
    #[must_use]
    pub fn counts(&self) -> (u64, u64) {
        let s = self.state.borrow();
        (s.sent, s.lost)
    }

    /// Bytes sent from `from` to `to` so far (payloads; a real transport adds its
    /// headers).
    #[must_use]
    pub fn bytes_sent(&self, from: u32, to: u32) -> u64 {
        self.state
            .borrow()
            .bytes_sent
            .get(&(from, to))
            .copied()
            .unwrap_or(0)
    }
}

/// One node's side of a [`SimNetwork`].
#[derive(Debug)]
pub struct SimEndpoint {
    node: u32,
    state: Rc<RefCell<State>>,
}

impl Transport for SimEndpoint {
    type Peer = u32;

    fn send(&mut self, to: u32, channel: Channel, bytes: Vec<u8>) {
        self.state.borrow_mut().send(self.node, to, channel, bytes);
    }

    fn receive(&mut self) -> Option<(u32, Channel, Vec<u8>)> {
        let mut s = self.state.borrow_mut();
        s.arrived.get_mut(&self.node)?.pop_front()
    }
}

/// Any [`Transport`] with a [`LinkConditions`] applied to what it sends: each datagram
/// is held for `latency + U(0, jitter)` (another `jitter` with probability `reorder`),
/// an unreliable one lost with probability `loss` or sent twice with `duplicate`, all
/// from a seed. Reliable datagrams are only delayed, in order: the wrapped transport's
/// reliability is real. Wrap both ends to condition both directions; call
/// [`advance`](Self::advance) with the caller's clock to pass on what is due.
#[derive(Debug)]
pub struct Conditioned<T: Transport> {
    inner: T,
    conditions: LinkConditions,
    rng: u64,
    seq: u64,
    now: f64,
    last_reliable: f64,
    held: Vec<Held<T::Peer>>,
}

/// A datagram held back: when it is due, its order of sending, where it goes.
type Held<P> = (f64, u64, P, Channel, Vec<u8>);

impl<T: Transport> Conditioned<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, conditions: LinkConditions, seed: u64) -> Self {
        Conditioned {
            inner,
            conditions,
            rng: seed,
            seq: 0,
            now: 0.0,
            last_reliable: 0.0,
            held: Vec::new(),
        }
    }

    /// The wrapped transport.
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    fn unit(&mut self) -> f64 {
        unit(&mut self.rng)
    }

    /// Moves the clock to `now` and sends every held datagram due by then, earliest
    /// first.
    pub fn advance(&mut self, now: f64) {
        self.now = self.now.max(now);
        let mut due = Vec::new();
        let mut i = 0;
        while i < self.held.len() {
            if self.held[i].0 <= self.now {
                due.push(self.held.swap_remove(i));
            } else {
                i += 1;
            }
        }
        due.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (_, _, to, channel, bytes) in due {
            self.inner.send(to, channel, bytes);
        }
    }
}

impl<T: Transport> Transport for Conditioned<T> {
    type Peer = T::Peer;

    fn send(&mut self, to: T::Peer, channel: Channel, bytes: Vec<u8>) {
        let c = self.conditions;
        let mut at = self.now + c.latency + c.jitter * self.unit();
        if self.unit() < c.reorder {
            at += c.jitter;
        }
        if channel == Channel::Reliable {
            at = at.max(self.last_reliable);
            self.last_reliable = at;
        } else {
            if self.unit() < c.loss {
                return;
            }
            if self.unit() < c.duplicate {
                let again = self.now + c.latency + c.jitter * self.unit();
                self.seq += 1;
                self.held
                    .push((again, self.seq, to, channel, bytes.clone()));
            }
        }
        self.seq += 1;
        self.held.push((at, self.seq, to, channel, bytes));
    }

    fn receive(&mut self) -> Option<(T::Peer, Channel, Vec<u8>)> {
        self.inner.receive()
    }
}

/// The next number in [0, 1) from the SplitMix64 generator whose state is `rng`.
fn unit(rng: &mut u64) -> f64 {
    *rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *rng;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}
