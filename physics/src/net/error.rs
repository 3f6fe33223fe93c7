//! Why bytes from the network were refused, and why a net configuration was.

use std::fmt;

/// Why a packet was refused. A refused packet is dropped whole: nothing in it is applied.
///
/// Each variant names the field, what was expected and what came, so a log line says
/// which part of which packet was wrong.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum WireError {
    /// The packet ended before the field was complete (a truncated or forged packet).
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Bits the field needed.
        needed: u64,
        /// Bits left in the packet.
        left: u64,
    },
    /// A count, id, index or enum tag lay outside what the field allows.
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The largest value allowed.
        max: u64,
        /// The value that came.
        actual: u64,
    },
    /// A float was NaN or infinite.
    NotFinite {
        /// The field.
        field: &'static str,
    },
    /// A float was finite but outside the field's range.
    FloatOutOfRange {
        /// The field.
        field: &'static str,
        /// The largest magnitude allowed.
        max: f64,
        /// The value that came.
        actual: f64,
    },
    /// A sorted id array was not strictly ascending, or ran past `u32::MAX`.
    NotAscending {
        /// The field.
        field: &'static str,
    },
    /// The packet had bytes after its last field (beyond the final byte's padding).
    TrailingBytes {
        /// Bytes left after the last field.
        left: usize,
    },
    /// The packet is longer than [`MAX_PACKET_BYTES`](super::MAX_PACKET_BYTES).
    TooLong {
        /// The packet's length in bytes.
        actual: usize,
    },
    /// A snapshot was coded against a baseline tick this side no longer holds (or never
    /// received); the next snapshot, coded against a newer ack, will be accepted.
    UnknownBaseline {
        /// The baseline tick the packet named.
        tick: u32,
    },
    /// An input named a body the sending client does not own.
    NotOwned {
        /// The body's network id.
        net_id: u32,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated {
                field,
                needed,
                left,
            } => write!(
                f,
                "{field}: packet truncated, expected {needed} more bits, {left} left"
            ),
            WireError::OutOfRange { field, max, actual } => {
                write!(f, "{field}: expected at most {max}, got {actual}")
            }
            WireError::NotFinite { field } => {
                write!(f, "{field}: expected a finite number, got NaN or infinity")
            }
            WireError::FloatOutOfRange { field, max, actual } => {
                write!(
                    f,
                    "{field}: expected a magnitude of at most {max}, got {actual}"
                )
            }
            WireError::NotAscending { field } => {
                write!(f, "{field}: expected strictly ascending ids below 2^32")
            }
            WireError::TrailingBytes { left } => {
                write!(
                    f,
                    "packet: expected its end after the last field, got {left} more bytes"
                )
            }
            WireError::TooLong { actual } => write!(
                f,
                "packet: expected at most {} bytes, got {actual}",
                super::MAX_PACKET_BYTES
            ),
            WireError::UnknownBaseline { tick } => write!(
                f,
                "snapshot.baseline: expected a tick this client holds, got {tick}"
            ),
            WireError::NotOwned { net_id } => write!(
                f,
                "input.body: expected a body this client owns, got net id {net_id}"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// Why a [`NetConfig`](super::NetConfig) or a quantization range was refused.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum NetConfigError {
    /// A value was NaN, infinite, zero or negative where a positive size is needed, or a
    /// range's minimum was not below its maximum. The field is named.
    Invalid {
        /// The field.
        field: &'static str,
        /// What the field needs.
        expected: &'static str,
        /// The value that came.
        actual: f64,
    },
    /// The range divided by the precision needs more than
    /// [`MAX_AXIS_BITS`](super::quantize::MAX_AXIS_BITS) bits: widen the precision or
    /// narrow the range.
    TooManySteps {
        /// The field.
        field: &'static str,
        /// The bits it would need.
        bits: u32,
    },
}

impl fmt::Display for NetConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetConfigError::Invalid {
                field,
                expected,
                actual,
            } => {
                write!(f, "{field}: expected {expected}, got {actual}")
            }
            NetConfigError::TooManySteps { field, bits } => write!(
                f,
                "{field}: expected at most {} bits per axis, got {bits}",
                super::quantize::MAX_AXIS_BITS
            ),
        }
    }
}

impl std::error::Error for NetConfigError {}
