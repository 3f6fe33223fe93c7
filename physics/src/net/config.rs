//! What both ends agree on: the tick rate, the quantization ranges and the limits every
//! packet is checked against.

use crate::math::{Quat, Vec3};

use super::error::NetConfigError;
use super::quantize::{QuantRange, Quantizer, ROTATION_BITS_RANGE, SmallestThree};

/// The network's settings. Server and clients must use the same ones (a game ships them
/// with its build); [`Codec::new`] validates them.
#[derive(Clone, Debug, PartialEq)]
pub struct NetConfig {
    /// Server steps per second.
    pub tick_rate: u32,
    /// Snapshots go out every this many steps (60 steps/s and 2 give 30 snapshots/s).
    pub snapshot_interval: u32,
    /// Positions: the world's box and precision.
    pub position: QuantRange,
    /// Linear velocities.
    pub linear_velocity: QuantRange,
    /// Angular velocities.
    pub angular_velocity: QuantRange,
    /// Bits per smallest-three component (2 to 16).
    pub rotation_bits: u32,
    /// The most bodies one snapshot or one world message may name.
    pub max_bodies: u32,
    /// The largest impulse component (N·s) an input may carry.
    pub max_impulse: f32,
    /// Input frames a client resends in every packet.
    pub input_history: u32,
    /// Actions one input frame may carry.
    pub max_actions: u32,
    /// The server world's gravity, m/s²: a client's dead reckoning carries a falling
    /// body on with it (see [`Client`](super::Client)).
    pub gravity: Vec3,
    /// The longest a client carries a body on past its newest received state, seconds;
    /// past it the body stands where the extrapolation reached (0 turns dead reckoning
    /// off: a body not updated stands where it was last received). The default, 0.25 s,
    /// measured best on knocked-over many_pyramids at 256 kbit/s (mean error 1.54 m at
    /// 0.25 s, 1.66 m at 0, 2.18 m at 1 s: extrapolated further, bodies pass through the
    /// ground and each other, which the client does not model).
    pub dead_reckoning_horizon: f32,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            tick_rate: 60,
            snapshot_interval: 2,
            position: QuantRange {
                min: Vec3::new(-1000.0, -100.0, -1000.0),
                max: Vec3::new(1000.0, 400.0, 1000.0),
                precision: Vec3::splat(0.001),
            },
            linear_velocity: QuantRange::symmetric(128.0, 0.01),
            angular_velocity: QuantRange::symmetric(64.0, 0.01),
            rotation_bits: 12,
            max_bodies: 1 << 16,
            max_impulse: 1.0e4,
            input_history: 16,
            max_actions: 8,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            dead_reckoning_horizon: 0.25,
        }
    }
}

/// A validated [`NetConfig`] with its quantizers: what encoders and decoders use.
#[derive(Clone, Debug, PartialEq)]
pub struct Codec {
    config: NetConfig,
    pub(super) position: Quantizer,
    pub(super) linear_velocity: Quantizer,
    pub(super) angular_velocity: Quantizer,
}

/// One body's state on the wire: its quantized pose and velocities. Two states are
/// equal exactly when the client would see the same thing, which is what delta coding
/// compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct BodyState {
    /// Quantized position.
    pub position: [u32; 3],
    /// Smallest-three rotation.
    pub rotation: SmallestThree,
    /// Quantized linear velocity.
    pub linear_velocity: [u32; 3],
    /// Quantized angular velocity.
    pub angular_velocity: [u32; 3],
}

impl Codec {
    /// Validates `config`.
    ///
    /// # Errors
    /// [`NetConfigError`] naming the first bad field.
    pub fn new(config: NetConfig) -> Result<Codec, NetConfigError> {
        let positive = |field: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(NetConfigError::Invalid {
                    field,
                    expected: "a positive finite value",
                    actual: v,
                })
            }
        };
        positive("tick_rate", f64::from(config.tick_rate))?;
        positive("snapshot_interval", f64::from(config.snapshot_interval))?;
        positive("max_bodies", f64::from(config.max_bodies))?;
        positive("max_impulse", f64::from(config.max_impulse))?;
        positive("input_history", f64::from(config.input_history))?;
        positive("max_actions", f64::from(config.max_actions))?;
        if !config.gravity.is_finite() {
            let actual = [config.gravity.x, config.gravity.y, config.gravity.z]
                .into_iter()
                .find(|v| !v.is_finite())
                .unwrap_or(f32::NAN);
            return Err(NetConfigError::Invalid {
                field: "gravity",
                expected: "finite components",
                actual: f64::from(actual),
            });
        }
        let horizon = config.dead_reckoning_horizon;
        if !(horizon.is_finite() && (0.0..=10.0).contains(&horizon)) {
            return Err(NetConfigError::Invalid {
                field: "dead_reckoning_horizon",
                expected: "0 to 10 seconds",
                actual: f64::from(horizon),
            });
        }
        if !ROTATION_BITS_RANGE.contains(&config.rotation_bits) {
            return Err(NetConfigError::Invalid {
                field: "rotation_bits",
                expected: "2 to 16",
                actual: f64::from(config.rotation_bits),
            });
        }
        Ok(Codec {
            position: Quantizer::new(config.position, "position")?,
            linear_velocity: Quantizer::new(config.linear_velocity, "linear_velocity")?,
            angular_velocity: Quantizer::new(config.angular_velocity, "angular_velocity")?,
            config,
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Seconds per server step.
    #[must_use]
    pub fn dt(&self) -> f32 {
        1.0 / self.config.tick_rate as f32
    }

    /// The wire state of a body.
    #[must_use]
    pub fn quantize(
        &self,
        position: Vec3,
        rotation: Quat,
        linear: Vec3,
        angular: Vec3,
    ) -> BodyState {
        BodyState {
            position: self.position.quantize(position),
            rotation: SmallestThree::encode(rotation, self.config.rotation_bits),
            linear_velocity: self.linear_velocity.quantize(linear),
            angular_velocity: self.angular_velocity.quantize(angular),
        }
    }

    /// The position of a wire state.
    #[must_use]
    pub fn position(&self, s: &BodyState) -> Vec3 {
        self.position.dequantize(s.position)
    }

    /// The rotation of a wire state.
    #[must_use]
    pub fn rotation(&self, s: &BodyState) -> Quat {
        s.rotation.decode(self.config.rotation_bits)
    }

    /// The linear velocity of a wire state.
    #[must_use]
    pub fn linear_velocity(&self, s: &BodyState) -> Vec3 {
        self.linear_velocity.dequantize(s.linear_velocity)
    }

    /// The angular velocity of a wire state.
    #[must_use]
    pub fn angular_velocity(&self, s: &BodyState) -> Vec3 {
        self.angular_velocity.dequantize(s.angular_velocity)
    }
}
