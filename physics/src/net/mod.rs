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
//!   unchanged body costs nothing ([`snapshot`]); the messages both ways ([`message`]),
//!   each field of each validated on decoding.
//!
//! Game-level code: it uses the world's public surface only, as a game would.

pub mod bits;
pub mod config;
pub mod error;
pub mod ids;
pub mod message;
pub mod quantize;
pub mod snapshot;

pub use config::{BodyState, Codec, NetConfig};
pub use error::{NetConfigError, WireError};
pub use message::{Action, ClientMessage, InputFrame, NetMotion, ServerMessage, ShapeDef, Spawn};
pub use quantize::{QuantRange, Quantizer, SmallestThree};
pub use snapshot::SnapshotState;

/// The longest packet either side accepts, in bytes.
pub const MAX_PACKET_BYTES: usize = 1 << 16;
