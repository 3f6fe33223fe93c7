//! Networked simulation, server-authoritative (feature `net`, off by default).
//!
//! The server owns the [`World`](crate::world::World) and streams it; clients mirror and
//! show it; inputs reach the server stamped with the client's clock. This module is
//! built in slices (issue 32); what exists today:
//!
//! - the wire codec: a bit-packed archive ([`bits`]) whose reader never reads past its
//!   packet and bounds every count by the bits left; quantization ([`quantize`]) of
//!   positions to a configurable box and precision, rotations as smallest-three and
//!   velocities; sorted id arrays delta-coded at the width of the largest gap ([`ids`]);
//!   snapshots delta-coded against the client's acknowledged baseline, where an
//!   unchanged body costs nothing ([`snapshot`]); every kind of shape ([`shapes`]: hulls,
//!   compounds, meshes and heightfields too, sent once by id, in parts) and joint
//!   ([`joints`]: their descriptions); the messages both ways ([`message`]), each field
//!   of each validated on decoding;
//! - the [`transport`] trait and a [`sim`]ulated network (latency, jitter, loss,
//!   duplication, reordering from a seed) to test on;
//! - the [`server`] (fixed-rate steps, areas of interest, bandwidth budgets by island
//!   relevance, entity mapping, the input playout buffer, flood limits) and the
//!   [`client`] (the mirror: a [`World`](crate::world::World) of the replicated bodies,
//!   shapes and joints, shown through a [`Presentation`](crate::game::Presentation) at
//!   an adaptive playout delay; the input history),
//!   with [`clock`] synchronization.
//!
//! Game-level code: it uses the world's public surface only, as a game would.

pub mod bits;
pub mod client;
pub mod clock;
pub mod config;
pub mod error;
pub mod ids;
pub mod joints;
pub mod message;
pub mod quantize;
pub mod server;
pub mod shapes;
pub mod sim;
pub mod snapshot;
pub mod transport;
#[cfg(feature = "net-udp")]
pub mod udp;

pub use client::{Client, ClientCounts, ClientError, MirrorBody};
pub use clock::ClockSync;
pub use config::{BodyState, Codec, NetConfig};
pub use error::{NetConfigError, WireError};
pub use joints::JointSpawn;
pub use message::{Action, ClientMessage, InputFrame, NetMotion, ServerMessage, Spawn};
pub use quantize::{QuantRange, Quantizer, SmallestThree};
pub use server::{AppliedInput, ClientId, ClientStats, Server, ServerDesc, ServerError};
pub use shapes::{ChildDef, ShapeDef};
pub use sim::{Conditioned, LinkConditions, SimEndpoint, SimNetwork};
pub use snapshot::SnapshotState;
pub use transport::{Channel, Transport, pump_client, pump_server};

/// The longest packet either side accepts, in bytes.
pub const MAX_PACKET_BYTES: usize = 1 << 16;
