//! Joints in the image: every slot in slot order (the solver colours them in that
//! order), each live one with its description, enabled flag, warm-start impulses, last
//! force and torque and orientation drive, then the free list in order (the next joint ids depend on it). The
//! joint events of the last step are dropped like the other events.

use crate::body::Bodies;
use crate::joint::{
    AxisDrive, AxisLimit, Dof, Joint, JointDesc, JointImpulses, JointKind, Joints, Motor,
    OrientationDrive, ROWS, SixDof, Spring,
};
use crate::math::{Isometry, Vec3A};

use super::SnapshotError;
use super::bodies::{distinct, read_id, read_indices, write_id, write_indices};
use super::wire::{Reader, Writer, check};

pub(super) fn write_joints(w: &mut Writer, joints: &Joints) {
    let Joints {
        joints,
        free,
        // Dropped: the last step's output.
        events: _,
        // Recounted on restore.
        count: _,
    } = joints;
    w.count(joints.len());
    for j in joints {
        let Joint {
            generation,
            alive,
            enabled,
            desc,
            // Derived from the description's ids.
            body_a: _,
            body_b: _,
            impulses,
            force,
            torque,
            drive,
        } = j;
        w.u32(*generation);
        w.bool(*alive);
        if *alive {
            w.bool(*enabled);
            write_desc(w, desc);
            w.vec3(impulses.point);
            w.vec3(impulses.angular);
            for &x in &impulses.rows {
                w.f32(x);
            }
            w.vec3(*force);
            w.vec3(*torque);
            write_orientation_drive(w, drive.as_ref());
        }
    }
    write_indices(w, free);
}

/// An orientation drive: a tag (0 none, 1 spring, 2 velocity) and its values.
fn write_orientation_drive(w: &mut Writer, drive: Option<&OrientationDrive>) {
    match drive {
        None => w.u8(0),
        Some(&OrientationDrive::Spring {
            target,
            hertz,
            damping_ratio,
            max_torque,
        }) => {
            w.u8(1);
            w.quat(target);
            w.f32(hertz);
            w.f32(damping_ratio);
            w.f32(max_torque);
        }
        Some(&OrientationDrive::Velocity {
            angular_velocity,
            max_torque,
        }) => {
            w.u8(2);
            w.vec3(angular_velocity.into());
            w.f32(max_torque);
        }
    }
}

fn read_orientation_drive(r: &mut Reader<'_>) -> Result<Option<OrientationDrive>, SnapshotError> {
    let drive = match r.u8()? {
        0 => return Ok(None),
        1 => OrientationDrive::Spring {
            target: r.quat()?,
            hertz: r.f32()?,
            damping_ratio: r.f32()?,
            max_torque: r.f32()?,
        },
        2 => OrientationDrive::Velocity {
            angular_velocity: r.vec3()?.into(),
            max_torque: r.f32()?,
        },
        _ => return Err(SnapshotError::Corrupt("unknown orientation drive")),
    };
    check(drive.validate().is_ok(), "an orientation drive is invalid")?;
    Ok(Some(drive))
}

pub(super) fn read_joints(r: &mut Reader<'_>, bodies: &Bodies) -> Result<Joints, SnapshotError> {
    let n = r.count(5)?;
    let mut m = Joints::default();
    for _ in 0..n {
        let generation = r.u32()?;
        let alive = r.bool()?;
        if !alive {
            m.joints.push(Joint {
                generation,
                alive,
                enabled: false,
                desc: JointDesc::new(
                    JointKind::Ball,
                    None,
                    crate::body::BodyId::new(0, 0),
                    Isometry::IDENTITY,
                    Isometry::IDENTITY,
                ),
                body_a: None,
                body_b: 0,
                impulses: JointImpulses::default(),
                force: Vec3A::ZERO,
                torque: Vec3A::ZERO,
                drive: None,
            });
            continue;
        }
        let enabled = r.bool()?;
        let desc = read_desc(r)?;
        check(desc.validate().is_ok(), "a joint description is invalid")?;
        check(
            bodies.get(desc.body_b).is_ok() && desc.body_a.is_none_or(|a| bodies.get(a).is_ok()),
            "a joint names a removed body",
        )?;
        let mut impulses = JointImpulses {
            point: r.finite_vec3("joint impulse")?,
            angular: r.finite_vec3("joint impulse")?,
            rows: [0.0; ROWS],
        };
        for x in &mut impulses.rows {
            *x = r.finite("joint impulse")?;
        }
        let force = r.finite_vec3("joint force")?;
        let torque = r.finite_vec3("joint torque")?;
        let drive = read_orientation_drive(r)?;
        check(
            drive.is_none()
                || matches!(
                    desc.kind,
                    JointKind::Cone { .. } | JointKind::SwingTwist { .. }
                ),
            "an orientation drive on a joint that is not a cone or swing-twist",
        )?;
        m.joints.push(Joint {
            generation,
            alive,
            enabled,
            body_a: desc.body_a.map(|a| a.index()),
            body_b: desc.body_b.index(),
            desc,
            impulses,
            force,
            torque,
            drive,
        });
        m.count += 1;
    }
    m.free = read_indices(r)?;
    check(
        m.free.len() == n - m.count
            && distinct(&m.free, n)
            && m.free.iter().all(|&i| !m.joints[i as usize].alive),
        "the free joint list is not the removed joints",
    )?;
    Ok(m)
}

fn write_iso(w: &mut Writer, f: &Isometry) {
    w.vec3(f.translation);
    w.quat(f.rotation);
}

fn read_iso(r: &mut Reader<'_>) -> Result<Isometry, SnapshotError> {
    Ok(Isometry::new(r.vec3()?, r.quat()?))
}

fn write_desc(w: &mut Writer, d: &JointDesc) {
    let JointDesc {
        kind,
        body_a,
        body_b,
        frame_a,
        frame_b,
        collide_connected,
        break_force,
        break_torque,
        user_data,
    } = d;
    write_kind(w, kind);
    w.bool(body_a.is_some());
    if let Some(a) = body_a {
        write_id(w, *a);
    }
    write_id(w, *body_b);
    write_iso(w, frame_a);
    write_iso(w, frame_b);
    w.bool(*collide_connected);
    w.f32(*break_force);
    w.f32(*break_torque);
    w.u64(*user_data);
}

fn read_desc(r: &mut Reader<'_>) -> Result<JointDesc, SnapshotError> {
    let kind = read_kind(r)?;
    let body_a = if r.bool()? { Some(read_id(r)?) } else { None };
    let body_b = read_id(r)?;
    let frame_a = read_iso(r)?;
    let frame_b = read_iso(r)?;
    Ok(JointDesc {
        kind,
        body_a,
        body_b,
        frame_a,
        frame_b,
        collide_connected: r.bool()?,
        break_force: r.f32()?,
        break_torque: r.f32()?,
        user_data: r.u64()?,
    })
}

fn write_limit(w: &mut Writer, l: &Option<AxisLimit>) {
    w.bool(l.is_some());
    if let Some(l) = l {
        w.f32(l.lower);
        w.f32(l.upper);
    }
}

fn read_limit(r: &mut Reader<'_>) -> Result<Option<AxisLimit>, SnapshotError> {
    Ok(if r.bool()? {
        Some(AxisLimit {
            lower: r.f32()?,
            upper: r.f32()?,
        })
    } else {
        None
    })
}

fn write_spring(w: &mut Writer, s: &Option<Spring>) {
    w.bool(s.is_some());
    if let Some(s) = s {
        w.f32(s.hertz);
        w.f32(s.damping_ratio);
        w.f32(s.rest);
    }
}

fn read_spring(r: &mut Reader<'_>) -> Result<Option<Spring>, SnapshotError> {
    Ok(if r.bool()? {
        Some(Spring {
            hertz: r.f32()?,
            damping_ratio: r.f32()?,
            rest: r.f32()?,
        })
    } else {
        None
    })
}

fn write_motor(w: &mut Writer, m: &Option<Motor>) {
    match m {
        None => w.u8(0),
        Some(Motor::Velocity { speed, max_force }) => {
            w.u8(1);
            w.f32(*speed);
            w.f32(*max_force);
        }
        Some(Motor::Position {
            target,
            hertz,
            damping_ratio,
            max_force,
        }) => {
            w.u8(2);
            w.f32(*target);
            w.f32(*hertz);
            w.f32(*damping_ratio);
            w.f32(*max_force);
        }
    }
}

fn read_motor(r: &mut Reader<'_>) -> Result<Option<Motor>, SnapshotError> {
    Ok(match r.u8()? {
        0 => None,
        1 => Some(Motor::Velocity {
            speed: r.f32()?,
            max_force: r.f32()?,
        }),
        2 => Some(Motor::Position {
            target: r.f32()?,
            hertz: r.f32()?,
            damping_ratio: r.f32()?,
            max_force: r.f32()?,
        }),
        _ => return Err(SnapshotError::Corrupt("unknown motor kind")),
    })
}

fn write_drive(w: &mut Writer, d: &AxisDrive) {
    write_limit(w, &d.limit);
    write_spring(w, &d.spring);
    write_motor(w, &d.motor);
}

fn read_drive(r: &mut Reader<'_>) -> Result<AxisDrive, SnapshotError> {
    Ok(AxisDrive {
        limit: read_limit(r)?,
        spring: read_spring(r)?,
        motor: read_motor(r)?,
    })
}

fn write_dof(w: &mut Writer, d: &Dof) {
    match d {
        Dof::Free => w.u8(0),
        Dof::Locked => w.u8(1),
        Dof::Limited(l) => {
            w.u8(2);
            w.f32(l.lower);
            w.f32(l.upper);
        }
    }
}

fn read_dof(r: &mut Reader<'_>) -> Result<Dof, SnapshotError> {
    Ok(match r.u8()? {
        0 => Dof::Free,
        1 => Dof::Locked,
        2 => Dof::Limited(AxisLimit {
            lower: r.f32()?,
            upper: r.f32()?,
        }),
        _ => return Err(SnapshotError::Corrupt("unknown six-DOF axis mode")),
    })
}

fn write_kind(w: &mut Writer, k: &JointKind) {
    match k {
        JointKind::Ball => w.u8(0),
        JointKind::Fixed => w.u8(1),
        JointKind::Hinge(d) => {
            w.u8(2);
            write_drive(w, d);
        }
        JointKind::Slider(d) => {
            w.u8(3);
            write_drive(w, d);
        }
        JointKind::Distance { min, max, spring } => {
            w.u8(4);
            w.f32(*min);
            w.f32(*max);
            write_spring(w, spring);
        }
        JointKind::Cone { half_angle } => {
            w.u8(5);
            w.f32(*half_angle);
        }
        JointKind::SwingTwist {
            swing_half_angle,
            twist,
        } => {
            w.u8(6);
            w.f32(*swing_half_angle);
            w.f32(twist.lower);
            w.f32(twist.upper);
        }
        JointKind::SixDof(s) => {
            w.u8(7);
            for d in s.linear.iter().chain(&s.angular) {
                write_dof(w, d);
            }
            for m in s.linear_motors.iter().chain(&s.angular_motors) {
                write_motor(w, m);
            }
        }
    }
}

fn read_kind(r: &mut Reader<'_>) -> Result<JointKind, SnapshotError> {
    Ok(match r.u8()? {
        0 => JointKind::Ball,
        1 => JointKind::Fixed,
        2 => JointKind::Hinge(read_drive(r)?),
        3 => JointKind::Slider(read_drive(r)?),
        4 => JointKind::Distance {
            min: r.f32()?,
            max: r.f32()?,
            spring: read_spring(r)?,
        },
        5 => JointKind::Cone {
            half_angle: r.f32()?,
        },
        6 => JointKind::SwingTwist {
            swing_half_angle: r.f32()?,
            twist: AxisLimit {
                lower: r.f32()?,
                upper: r.f32()?,
            },
        },
        7 => {
            let mut s = SixDof::default();
            for d in s.linear.iter_mut().chain(&mut s.angular) {
                *d = read_dof(r)?;
            }
            for m in s.linear_motors.iter_mut().chain(&mut s.angular_motors) {
                *m = read_motor(r)?;
            }
            JointKind::SixDof(s)
        }
        _ => return Err(SnapshotError::Corrupt("unknown joint kind")),
    })
}
