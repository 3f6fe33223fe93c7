//! The transport: datagrams to and from peers on two channels. A game brings its own
//! (Steam sockets, WebRTC) by implementing [`Transport`]; the tests use the
//! [`SimNetwork`](super::sim::SimNetwork).
//!
//! The [`Server`] and [`Client`] do no I/O
//! themselves: they take the bytes that arrived and hand back the bytes to send, so one
//! loop (see [`pump_server`] and [`pump_client`]) joins them to any transport.

use super::client::Client;
use super::server::{ClientId, Server};

/// Which channel a datagram travels on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// May be lost, duplicated or reordered: transient state (snapshots, inputs, clock
    /// requests), which the next packet supersedes.
    Unreliable,
    /// Delivered once and in order, after any retransmissions: creation and destruction.
    Reliable,
}

/// Datagrams to and from peers.
pub trait Transport {
    /// Who a datagram goes to or came from.
    type Peer: Copy + Eq;

    /// Queues `bytes` for `to` on `channel`.
    fn send(&mut self, to: Self::Peer, channel: Channel, bytes: Vec<u8>);

    /// The next datagram that has arrived, if any.
    fn receive(&mut self) -> Option<(Self::Peer, Channel, Vec<u8>)>;
}

/// Feeds everything that arrived on `transport` to `server` (peers are client ids),
/// advances it to `now` and sends what it has to send.
pub fn pump_server<T: Transport<Peer = ClientId>>(
    server: &mut Server,
    transport: &mut T,
    now: f64,
) {
    while let Some((from, channel, bytes)) = transport.receive() {
        server.receive(from, channel, &bytes, now);
    }
    server.advance(now);
    for (to, channel, bytes) in server.drain_outgoing() {
        transport.send(to, channel, bytes);
    }
}

/// Feeds everything that arrived on `transport` to `client` (the one peer is the
/// server), advances it to its clock's `now` and sends what it has to send.
pub fn pump_client<T: Transport>(
    client: &mut Client,
    transport: &mut T,
    server: T::Peer,
    now: f64,
) {
    while let Some((_, channel, bytes)) = transport.receive() {
        client.receive(channel, &bytes, now);
    }
    for (channel, bytes) in client.update(now) {
        transport.send(server, channel, bytes);
    }
}
