//! Joints on the wire: their descriptions (kind with its limits, springs and motors,
//! frames, bodies by net id, collision and break settings), not their impulses, created
//! and destroyed on the reliable channel in [`ServerMessage::World`](super::ServerMessage::World).
//!
//! Decoding checks every field: kind and option tags in range, floats finite (a break
//! threshold may also be infinite: "never breaks", sent as a flag), frames with finite
//! translations and unit rotations, and the kind's own rules
//! ([`JointKind::is_valid`]: limits with lower <= upper, positive frequencies, angles in
//! range), so the client's `create_joint` never refuses what the decoder let through.

use crate::joint::{AxisDrive, AxisLimit, Dof, JointKind, Motor, SixDof, Spring};
use crate::math::Isometry;

use super::bits::{BitReader, BitWriter};
use super::error::WireError;
use super::shapes::{read_pose, write_pose};

/// The largest magnitude of a joint's numbers on the wire (a force limit, a speed, a
/// distance).
pub const MAX_JOINT_VALUE: f32 = 1.0e12;

/// A joint entering a client's view: both its bodies are in view (or body A is the
/// world).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointSpawn {
    /// The joint's net id (the server's, never reused).
    pub net_id: u32,
    /// Body A's net id, `None` for the world.
    pub body_a: Option<u32>,
    /// Body B's net id.
    pub body_b: u32,
    /// What it constrains.
    pub kind: JointKind,
    /// Its frame in body A's space (world space without body A).
    pub frame_a: Isometry,
    /// Its frame in body B's space.
    pub frame_b: Isometry,
    /// Whether the two bodies still collide.
    pub collide_connected: bool,
    /// Break force (N), `f32::INFINITY` for never.
    pub break_force: f32,
    /// Break torque (N·m), `f32::INFINITY` for never.
    pub break_torque: f32,
}

fn write_opt<T>(w: &mut BitWriter, v: Option<&T>, f: impl FnOnce(&mut BitWriter, &T)) {
    w.write_bool(v.is_some());
    if let Some(v) = v {
        f(w, v);
    }
}

fn write_limit(w: &mut BitWriter, l: &AxisLimit) {
    w.write_f32(l.lower);
    w.write_f32(l.upper);
}

fn write_spring(w: &mut BitWriter, s: &Spring) {
    w.write_f32(s.hertz);
    w.write_f32(s.damping_ratio);
    w.write_f32(s.rest);
}

fn write_motor(w: &mut BitWriter, m: &Motor) {
    match *m {
        Motor::Velocity { speed, max_force } => {
            w.write(0, 1);
            w.write_f32(speed);
            w.write_f32(max_force);
        }
        Motor::Position {
            target,
            hertz,
            damping_ratio,
            max_force,
        } => {
            w.write(1, 1);
            for v in [target, hertz, damping_ratio, max_force] {
                w.write_f32(v);
            }
        }
    }
}

fn write_drive(w: &mut BitWriter, d: &AxisDrive) {
    write_opt(w, d.limit.as_ref(), write_limit);
    write_opt(w, d.spring.as_ref(), write_spring);
    write_opt(w, d.motor.as_ref(), write_motor);
}

fn write_dof(w: &mut BitWriter, d: &Dof) {
    match d {
        Dof::Free => w.write(0, 2),
        Dof::Locked => w.write(1, 2),
        Dof::Limited(l) => {
            w.write(2, 2);
            write_limit(w, l);
        }
    }
}

fn write_threshold(w: &mut BitWriter, v: f32) {
    let finite = v.is_finite();
    w.write_bool(finite);
    if finite {
        w.write_f32(v);
    }
}

fn f(r: &mut BitReader<'_>, field: &'static str) -> Result<f32, WireError> {
    r.read_f32(MAX_JOINT_VALUE, field)
}

fn read_limit(r: &mut BitReader<'_>) -> Result<AxisLimit, WireError> {
    Ok(AxisLimit {
        lower: f(r, "joint.limit")?,
        upper: f(r, "joint.limit")?,
    })
}

fn read_spring(r: &mut BitReader<'_>) -> Result<Spring, WireError> {
    Ok(Spring {
        hertz: f(r, "joint.spring")?,
        damping_ratio: f(r, "joint.spring")?,
        rest: f(r, "joint.spring")?,
    })
}

fn read_motor(r: &mut BitReader<'_>) -> Result<Motor, WireError> {
    Ok(if r.read_bool("joint.motor.kind")? {
        Motor::Position {
            target: f(r, "joint.motor")?,
            hertz: f(r, "joint.motor")?,
            damping_ratio: f(r, "joint.motor")?,
            max_force: f(r, "joint.motor")?,
        }
    } else {
        Motor::Velocity {
            speed: f(r, "joint.motor")?,
            max_force: f(r, "joint.motor")?,
        }
    })
}

fn read_opt<T>(
    r: &mut BitReader<'_>,
    field: &'static str,
    read: impl FnOnce(&mut BitReader<'_>) -> Result<T, WireError>,
) -> Result<Option<T>, WireError> {
    Ok(if r.read_bool(field)? {
        Some(read(r)?)
    } else {
        None
    })
}

fn read_drive(r: &mut BitReader<'_>) -> Result<AxisDrive, WireError> {
    Ok(AxisDrive {
        limit: read_opt(r, "joint.limit", read_limit)?,
        spring: read_opt(r, "joint.spring", read_spring)?,
        motor: read_opt(r, "joint.motor", read_motor)?,
    })
}

fn read_dof(r: &mut BitReader<'_>) -> Result<Dof, WireError> {
    Ok(match r.read(2, "joint.six_dof.axis")? {
        0 => Dof::Free,
        1 => Dof::Locked,
        2 => Dof::Limited(read_limit(r)?),
        tag => {
            return Err(WireError::OutOfRange {
                field: "joint.six_dof.axis",
                max: 2,
                actual: tag,
            });
        }
    })
}

fn read_threshold(r: &mut BitReader<'_>, field: &'static str) -> Result<f32, WireError> {
    if !r.read_bool(field)? {
        return Ok(f32::INFINITY);
    }
    let v = r.read_f32(f32::MAX, field)?;
    if v < 0.0 {
        return Err(WireError::FloatOutOfRange {
            field,
            max: f64::from(f32::MAX),
            actual: f64::from(v),
        });
    }
    Ok(v)
}

impl JointSpawn {
    /// Writes the joint after its net id (which the message's sorted id list carries).
    pub(super) fn write(&self, w: &mut BitWriter) {
        write_opt(w, self.body_a.as_ref(), |w, &a| w.write_var(a));
        w.write_var(self.body_b);
        match &self.kind {
            JointKind::Ball => w.write(0, 3),
            JointKind::Fixed => w.write(1, 3),
            JointKind::Hinge(d) => {
                w.write(2, 3);
                write_drive(w, d);
            }
            JointKind::Slider(d) => {
                w.write(3, 3);
                write_drive(w, d);
            }
            JointKind::Distance { min, max, spring } => {
                w.write(4, 3);
                w.write_f32(*min);
                w.write_f32(*max);
                write_opt(w, spring.as_ref(), write_spring);
            }
            JointKind::Cone { half_angle } => {
                w.write(5, 3);
                w.write_f32(*half_angle);
            }
            JointKind::SwingTwist {
                swing_half_angle,
                twist,
            } => {
                w.write(6, 3);
                w.write_f32(*swing_half_angle);
                write_limit(w, twist);
            }
            JointKind::SixDof(s) => {
                w.write(7, 3);
                for d in s.linear.iter().chain(&s.angular) {
                    write_dof(w, d);
                }
                for m in s.linear_motors.iter().chain(&s.angular_motors) {
                    write_opt(w, m.as_ref(), write_motor);
                }
            }
        }
        write_pose(w, &self.frame_a);
        write_pose(w, &self.frame_b);
        w.write_bool(self.collide_connected);
        write_threshold(w, self.break_force);
        write_threshold(w, self.break_torque);
    }

    /// Reads what [`write`](Self::write) wrote, for the joint `net_id`.
    pub(super) fn read(r: &mut BitReader<'_>, net_id: u32) -> Result<JointSpawn, WireError> {
        let body_a = read_opt(r, "joint.body_a", |r| r.read_var("joint.body_a"))?;
        let body_b = r.read_var("joint.body_b")?;
        if body_a == Some(body_b) {
            return Err(WireError::OutOfRange {
                field: "joint.body_b (a body other than body_a)",
                max: u64::from(body_b),
                actual: u64::from(body_b),
            });
        }
        let kind = match r.read(3, "joint.kind")? {
            0 => JointKind::Ball,
            1 => JointKind::Fixed,
            2 => JointKind::Hinge(read_drive(r)?),
            3 => JointKind::Slider(read_drive(r)?),
            4 => JointKind::Distance {
                min: f(r, "joint.distance")?,
                max: f(r, "joint.distance")?,
                spring: read_opt(r, "joint.spring", read_spring)?,
            },
            5 => JointKind::Cone {
                half_angle: f(r, "joint.cone")?,
            },
            6 => JointKind::SwingTwist {
                swing_half_angle: f(r, "joint.swing_twist")?,
                twist: read_limit(r)?,
            },
            _ => {
                let mut s = SixDof::default();
                for d in s.linear.iter_mut().chain(&mut s.angular) {
                    *d = read_dof(r)?;
                }
                for m in s.linear_motors.iter_mut().chain(&mut s.angular_motors) {
                    *m = read_opt(r, "joint.motor", read_motor)?;
                }
                JointKind::SixDof(s)
            }
        };
        if !kind.is_valid() {
            return Err(WireError::OutOfRange {
                field: "joint.kind (limits with lower <= upper, springs and motors with a \
                        frequency > 0 and force limits >= 0, angles in range)",
                max: 0,
                actual: 1,
            });
        }
        Ok(JointSpawn {
            net_id,
            body_a,
            body_b,
            kind,
            frame_a: read_pose(r, "joint.frame_a")?,
            frame_b: read_pose(r, "joint.frame_b")?,
            collide_connected: r.read_bool("joint.collide_connected")?,
            break_force: read_threshold(r, "joint.break_force")?,
            break_torque: read_threshold(r, "joint.break_torque")?,
        })
    }
}
