//! The real transport (feature `net-udp`): renet 2's channels over netcode, on UDP.
//!
//! netcode does what a game's UDP needs and this crate should not write itself: a client
//! joins only with a connect token made with the server's private key (a game's backend
//! issues them), every packet after is encrypted and authenticated (a forged, replayed
//! or truncated packet is dropped before renet sees it), and renet adds the reliable,
//! ordered channel (acknowledgements and retransmission) beside the unreliable one.
//! Channel 0 is [`Channel::Unreliable`], channel 2 (renet's reliable ordered)
//! [`Channel::Reliable`].
//!
//! renet's client ids are `u64`; the [`Server`](super::Server)'s are `u32`, so a token's
//! client id must be below 2^32 (the server drops a client whose id is not).

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use renet::{ConnectionConfig, DefaultChannel, RenetClient, RenetServer, ServerEvent};
use renet_netcode::{
    ClientAuthentication, ConnectToken, NetcodeClientTransport, NetcodeServerTransport,
    ServerAuthentication, ServerConfig,
};

use super::server::ClientId;
use super::transport::{Channel, Transport};

pub use renet_netcode::{NETCODE_KEY_BYTES, NetcodeTransportError};

fn channel_id(channel: Channel) -> DefaultChannel {
    match channel {
        Channel::Unreliable => DefaultChannel::Unreliable,
        Channel::Reliable => DefaultChannel::ReliableOrdered,
    }
}

const CHANNELS: [Channel; 2] = [Channel::Unreliable, Channel::Reliable];

fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Makes a connect token for `client_id` to join the server at `server` (what a game's
/// backend does; it alone holds `private_key`). Valid for `expire_seconds`.
///
/// # Errors
/// renet's, for an address list it cannot encode.
pub fn connect_token(
    protocol_id: u64,
    client_id: u32,
    server: SocketAddr,
    private_key: &[u8; NETCODE_KEY_BYTES],
    expire_seconds: u64,
) -> Result<ConnectToken, NetcodeTransportError> {
    Ok(ConnectToken::generate(
        since_epoch(),
        protocol_id,
        expire_seconds,
        u64::from(client_id),
        15,
        vec![server],
        None,
        private_key,
    )?)
}

/// A connection event on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdpEvent {
    /// A client joined with a valid token.
    Connected(ClientId),
    /// A client left or timed out.
    Disconnected(ClientId),
}

/// The server's side: a socket, netcode and renet.
pub struct UdpServer {
    server: RenetServer,
    transport: NetcodeServerTransport,
    inbox: Vec<(ClientId, Channel, Vec<u8>)>,
    events: Vec<UdpEvent>,
}

impl std::fmt::Debug for UdpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpServer")
            .field("clients", &self.server.connected_clients())
            .finish()
    }
}

impl UdpServer {
    /// Binds `addr` and accepts up to `max_clients` clients with tokens made with
    /// `private_key` for `protocol_id`.
    ///
    /// # Errors
    /// The socket's.
    pub fn bind(
        addr: SocketAddr,
        protocol_id: u64,
        private_key: [u8; NETCODE_KEY_BYTES],
        max_clients: usize,
    ) -> io::Result<UdpServer> {
        let socket = UdpSocket::bind(addr)?;
        let public = socket.local_addr()?;
        let config = ServerConfig {
            current_time: since_epoch(),
            max_clients,
            protocol_id,
            public_addresses: vec![public],
            authentication: ServerAuthentication::Secure { private_key },
        };
        Ok(UdpServer {
            server: RenetServer::new(ConnectionConfig::default()),
            transport: NetcodeServerTransport::new(config, socket)?,
            inbox: Vec::new(),
            events: Vec::new(),
        })
    }

    /// The bound address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.transport.addresses()[0]
    }

    /// Receives what arrived in the `elapsed` time since the last call.
    ///
    /// # Errors
    /// The socket's.
    pub fn update(&mut self, elapsed: Duration) -> Result<(), NetcodeTransportError> {
        self.server.update(elapsed);
        self.transport.update(elapsed, &mut self.server)?;
        while let Some(event) = self.server.get_event() {
            match event {
                ServerEvent::ClientConnected { client_id } => match u32::try_from(client_id) {
                    Ok(id) => self.events.push(UdpEvent::Connected(id)),
                    Err(_) => self.server.disconnect(client_id),
                },
                ServerEvent::ClientDisconnected { client_id, .. } => {
                    if let Ok(id) = u32::try_from(client_id) {
                        self.events.push(UdpEvent::Disconnected(id));
                    }
                }
            }
        }
        for client_id in self.server.clients_id() {
            let Ok(id) = u32::try_from(client_id) else {
                continue;
            };
            for channel in CHANNELS {
                while let Some(bytes) = self.server.receive_message(client_id, channel_id(channel))
                {
                    self.inbox.push((id, channel, bytes.to_vec()));
                }
            }
        }
        Ok(())
    }

    /// Connections and disconnections since the last call.
    pub fn events(&mut self) -> Vec<UdpEvent> {
        std::mem::take(&mut self.events)
    }

    /// Sends what was queued.
    pub fn flush(&mut self) {
        self.transport.send_packets(&mut self.server);
    }

    /// Clients connected now.
    #[must_use]
    pub fn connected(&self) -> usize {
        self.server.connected_clients()
    }
}

impl Transport for UdpServer {
    type Peer = ClientId;

    fn send(&mut self, to: ClientId, channel: Channel, bytes: Vec<u8>) {
        let id = u64::from(to);
        if self.server.is_connected(id) {
            self.server.send_message(id, channel_id(channel), bytes);
        }
    }

    fn receive(&mut self) -> Option<(ClientId, Channel, Vec<u8>)> {
        if self.inbox.is_empty() {
            return None;
        }
        Some(self.inbox.remove(0))
    }
}

/// A client's side: a socket, netcode and renet.
pub struct UdpClient {
    client: RenetClient,
    transport: NetcodeClientTransport,
    inbox: std::collections::VecDeque<(Channel, Vec<u8>)>,
}

impl std::fmt::Debug for UdpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpClient")
            .field("connected", &self.client.is_connected())
            .finish()
    }
}

impl UdpClient {
    /// Connects with `token` from a local socket on 127.0.0.1 or 0.0.0.0 as `local`.
    ///
    /// # Errors
    /// The socket's, or netcode's for a token it cannot use.
    pub fn connect(
        token: ConnectToken,
        local: SocketAddr,
    ) -> Result<UdpClient, NetcodeTransportError> {
        let socket = UdpSocket::bind(local)?;
        let auth = ClientAuthentication::Secure {
            connect_token: token,
        };
        Ok(UdpClient {
            client: RenetClient::new(ConnectionConfig::default()),
            transport: NetcodeClientTransport::new(since_epoch(), auth, socket)?,
            inbox: std::collections::VecDeque::new(),
        })
    }

    /// Receives what arrived in the `elapsed` time since the last call.
    ///
    /// # Errors
    /// netcode's: the server refused the token, or timed out.
    pub fn update(&mut self, elapsed: Duration) -> Result<(), NetcodeTransportError> {
        self.client.update(elapsed);
        self.transport.update(elapsed, &mut self.client)?;
        for channel in CHANNELS {
            while let Some(bytes) = self.client.receive_message(channel_id(channel)) {
                self.inbox.push_back((channel, bytes.to_vec()));
            }
        }
        Ok(())
    }

    /// Sends what was queued.
    ///
    /// # Errors
    /// The socket's.
    pub fn flush(&mut self) -> Result<(), NetcodeTransportError> {
        self.transport.send_packets(&mut self.client)
    }

    /// Whether the server has accepted this client.
    #[must_use]
    pub fn is_connected(&self) -> bool {
        self.client.is_connected()
    }

    /// Whether the connection has ended (refused, timed out, disconnected).
    #[must_use]
    pub fn is_disconnected(&self) -> bool {
        self.client.is_disconnected() || self.transport.disconnect_reason().is_some()
    }
}

impl Transport for UdpClient {
    type Peer = ();

    fn send(&mut self, _to: (), channel: Channel, bytes: Vec<u8>) {
        if self.client.is_connected() {
            self.client.send_message(channel_id(channel), bytes);
        }
    }

    fn receive(&mut self) -> Option<((), Channel, Vec<u8>)> {
        self.inbox.pop_front().map(|(c, b)| ((), c, b))
    }
}
