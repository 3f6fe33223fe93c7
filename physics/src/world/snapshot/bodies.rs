//! Bodies and their shapes in the image.
//!
//! ```text
//!  hulls    every convex hull a live body uses, once (bodies sharing an Arc share it
//!           again after restore), with its full internal data: vertices, faces, box,
//!           unit mass properties, inner radius; never rebuilt from points
//!  slots    per body slot: alive, generation; a live slot adds its cold record
//!  free     the free slot list, in order (the next ids issued depend on it)
//!  sets     every set's hot records in their dense order (the step's order)
//!  free     the free sleeping-set list, in order
//! ```
//!
//! A removed slot keeps only its generation: nothing reads the rest of a dead record, and
//! `Bodies::insert` overwrites all of it. Decoding checks every link the engine indexes
//! by (slot ↔ set and position, free lists) so a bad image is refused here instead of
//! panicking in a later step.

use crate::math::quat_dot;
use std::collections::HashMap;
use std::sync::Arc;

use crate::body::filter::{CollisionFilter, LayerTable};
use crate::body::mass::MassSpec;
use crate::body::{
    Bodies, Body, BodyId, BodySet, BodySim, FIRST_SLEEPING_SET, LockedAxes, MotionQuality,
    MotionType, STATIC_SET,
};
use crate::collision::broad_phase::{BroadPhaseProxy, ProxyKind};
use crate::geometry::dynamic_tree::ProxyId;
use crate::material::MaterialId;
use crate::math::{Isometry, Mat3A, Vec3A};
use crate::shape::{
    Capsule, ConvexHull, Cuboid, Cylinder, HalfSpace, HullFace, MassProperties, Shape, Sphere,
};

use super::SnapshotError;
use super::wire::{Reader, Writer, check};

/// Convex hulls in order of first use by a live body.
#[derive(Default)]
pub(super) struct HullTable {
    hulls: Vec<Arc<ConvexHull>>,
    index: HashMap<*const ConvexHull, u32>,
}

impl HullTable {
    fn collect(bodies: &Bodies) -> Self {
        let mut t = Self::default();
        for b in bodies.bodies.iter().filter(|b| b.alive) {
            t.add(&b.shape);
            if let Shape::Compound(c) = &b.shape {
                for child in c.children() {
                    t.add(&child.shape);
                }
            }
        }
        t
    }

    fn add(&mut self, shape: &Shape) {
        if let Shape::ConvexHull(h) = shape {
            let next = self.hulls.len() as u32;
            self.index.entry(Arc::as_ptr(h)).or_insert_with(|| {
                self.hulls.push(Arc::clone(h));
                next
            });
        }
    }
}

pub(super) fn write_bodies(w: &mut Writer, bodies: &Bodies) {
    let Bodies {
        bodies: slots,
        free,
        sets,
        free_sets,
        live: _,
        // Derived: counted again from the bodies on restore.
        force_reporters: _,
    } = bodies;
    let hulls = HullTable::collect(bodies);
    w.count(hulls.hulls.len());
    for h in &hulls.hulls {
        write_hull(w, h);
    }
    w.count(slots.len());
    for b in slots {
        w.bool(b.alive);
        w.u32(b.generation);
        if b.alive {
            write_body(w, b, &hulls);
        }
    }
    write_indices(w, free);
    w.count(sets.len());
    for set in sets {
        w.count(set.sims.len());
        for sim in &set.sims {
            write_sim(w, sim);
        }
    }
    write_indices(w, free_sets);
}

pub(super) fn read_bodies(
    r: &mut Reader<'_>,
    layers: &LayerTable,
) -> Result<Bodies, SnapshotError> {
    let hull_count = r.count(4)?;
    let mut hulls = Vec::with_capacity(hull_count);
    for _ in 0..hull_count {
        hulls.push(Arc::new(read_hull(r)?));
    }
    let slot_count = r.count(5)?;
    let mut slots = Vec::with_capacity(slot_count);
    for _ in 0..slot_count {
        let alive = r.bool()?;
        let generation = r.u32()?;
        slots.push(if alive {
            read_body(r, generation, &hulls, layers)?
        } else {
            dead_body(generation)
        });
    }
    let free = read_indices(r)?;
    let set_count = r.count(4)?;
    check(set_count >= 2, "fewer than the static and awake sets")?;
    let mut sets = Vec::with_capacity(set_count);
    for _ in 0..set_count {
        let n = r.count(SIM_BYTES)?;
        let mut sims = Vec::with_capacity(n);
        for _ in 0..n {
            sims.push(read_sim(r)?);
        }
        sets.push(BodySet { sims });
    }
    let free_sets = read_indices(r)?;
    let live = slots.iter().filter(|b| b.alive).count();
    let force_reporters = slots
        .iter()
        .filter(|b| b.alive && b.contact_force_threshold.is_finite())
        .count() as u32;
    let bodies = Bodies {
        bodies: slots,
        free,
        sets,
        free_sets,
        live,
        force_reporters,
    };
    check_links(&bodies)?;
    Ok(bodies)
}

/// Every link the engine follows without checking: slot → (set, position) → slot, the
/// free lists, and which set a motion type may be in.
fn check_links(bodies: &Bodies) -> Result<(), SnapshotError> {
    for (index, b) in bodies.bodies.iter().enumerate() {
        if !b.alive {
            continue;
        }
        let sim = bodies
            .sets
            .get(b.set as usize)
            .and_then(|s| s.sims.get(b.local as usize));
        check(
            sim.is_some_and(|s| s.body as usize == index),
            "a body's set and position do not point back at it",
        )?;
        check(
            (b.motion_type == MotionType::Fixed || b.disabled) == (b.set == STATIC_SET),
            "a body is in the wrong set for its motion type",
        )?;
        let sim = sim.expect("checked above");
        check(
            sim.local_center.to_array().map(f32::to_bits)
                == b.local_center.to_array().map(f32::to_bits),
            "a body's hot and cold centres of mass differ",
        )?;
    }
    for (set, s) in bodies.sets.iter().enumerate() {
        for (local, sim) in s.sims.iter().enumerate() {
            let b = bodies.bodies.get(sim.body as usize);
            check(
                b.is_some_and(|b| b.alive && b.set as usize == set && b.local as usize == local),
                "a hot record names a body that is not there",
            )?;
        }
    }
    let dead = bodies.bodies.len() - bodies.live;
    check(
        bodies.free.len() == dead && distinct(&bodies.free, bodies.bodies.len()),
        "the free slot list is not the removed slots",
    )?;
    check(
        bodies
            .free
            .iter()
            .all(|&i| !bodies.bodies[i as usize].alive),
        "the free slot list holds a live body",
    )?;
    check(
        distinct(&bodies.free_sets, bodies.sets.len())
            && bodies
                .free_sets
                .iter()
                .all(|&s| s >= FIRST_SLEEPING_SET && bodies.sets[s as usize].sims.is_empty()),
        "the free set list names a set in use",
    )?;
    Ok(())
}

/// Whether `list` holds distinct values below `bound`.
pub(super) fn distinct(list: &[u32], bound: usize) -> bool {
    let mut seen = vec![false; bound];
    list.iter().all(|&i| {
        let i = i as usize;
        i < bound && !std::mem::replace(&mut seen[i], true)
    })
}

pub(super) fn write_indices(w: &mut Writer, list: &[u32]) {
    w.count(list.len());
    for &i in list {
        w.u32(i);
    }
}

pub(super) fn read_indices(r: &mut Reader<'_>) -> Result<Vec<u32>, SnapshotError> {
    let n = r.count(4)?;
    (0..n).map(|_| r.u32()).collect()
}

fn write_body(w: &mut Writer, body: &Body, hulls: &HullTable) {
    let Body {
        generation: _,
        alive: _,
        set,
        local,
        motion_type,
        shape,
        shapeless,
        density,
        mass_spec,
        center_of_mass_offset,
        disabled,
        local_center,
        mass,
        friction,
        restitution,
        rolling_friction,
        spinning_friction,
        material,
        linear_damping,
        angular_damping,
        gravity_scale,
        max_linear_speed,
        max_angular_speed,
        is_sensor,
        layer,
        filter,
        allow_sleep,
        motion_quality,
        locked_axes,
        user_data,
        contact_force_threshold,
        proxy,
        sleep_time,
        force,
        torque,
        constant_force,
        constant_torque,
        // Not state: it only tells a presentation where poses jumped.
        teleports: _,
        // Not state either: it only tells a recorder that the body's look changed.
        revision: _,
    } = body;
    w.u32(*set);
    w.u32(*local);
    w.u8(match motion_type {
        MotionType::Fixed => 0,
        MotionType::Kinematic => 1,
        MotionType::Dynamic => 2,
    });
    write_shape(w, shape, hulls);
    w.bool(*shapeless);
    w.f32(*density);
    write_mass_spec(w, mass_spec);
    w.vec3(*center_of_mass_offset);
    w.bool(*disabled);
    w.vec3(*local_center);
    for x in [
        *mass,
        *friction,
        *restitution,
        *rolling_friction,
        *spinning_friction,
        *linear_damping,
        *angular_damping,
        *gravity_scale,
        *max_linear_speed,
        *max_angular_speed,
    ] {
        w.f32(x);
    }
    w.u16(material.0);
    w.bool(*is_sensor);
    w.u16(*layer);
    w.u32(filter.group);
    w.u32(filter.mask);
    w.bool(*allow_sleep);
    w.u8(match motion_quality {
        MotionQuality::Discrete => 0,
        MotionQuality::LinearCast => 1,
    });
    w.u8(locked_axes.bits());
    w.u64(*user_data);
    w.f32(*contact_force_threshold);
    // A body without a shape has no proxy.
    w.bool(proxy.is_some());
    if let Some(proxy) = proxy {
        write_proxy(w, *proxy);
    }
    w.f32(*sleep_time);
    w.vec3(*force);
    w.vec3(*torque);
    w.vec3(*constant_force);
    w.vec3(*constant_torque);
}

fn read_body(
    r: &mut Reader<'_>,
    generation: u32,
    hulls: &[Arc<ConvexHull>],
    layers: &LayerTable,
) -> Result<Body, SnapshotError> {
    let set = r.u32()?;
    let local = r.u32()?;
    let motion_type = match r.u8()? {
        0 => MotionType::Fixed,
        1 => MotionType::Kinematic,
        2 => MotionType::Dynamic,
        _ => return Err(SnapshotError::Corrupt("unknown motion type")),
    };
    let shape = read_shape(r, hulls)?;
    check(
        motion_type == MotionType::Fixed || !matches!(shape, Shape::HalfSpace(_)),
        "a moving body has a half-space shape",
    )?;
    let shapeless = r.bool()?;
    // Checked when used (a body made dynamic later refuses a bad one), as at creation.
    let density = r.f32()?;
    let mass_spec = read_mass_spec(r)?;
    let center_of_mass_offset = r.vec3()?;
    let disabled = r.bool()?;
    let local_center = r.finite_vec3("non-finite centre of mass")?;
    let material = "a mass or material value is out of range";
    let mass = r.finite(material)?;
    let friction = r.finite(material)?;
    let restitution = r.finite(material)?;
    let rolling_friction = r.finite(material)?;
    let spinning_friction = r.finite(material)?;
    let linear_damping = r.finite(material)?;
    let angular_damping = r.finite(material)?;
    let gravity_scale = r.finite(material)?;
    let max_linear_speed = r.f32()?;
    let max_angular_speed = r.f32()?;
    // The limits `World::create_body` enforces.
    check(
        mass >= 0.0
            && friction >= 0.0
            && (0.0..=1.0).contains(&restitution)
            && rolling_friction >= 0.0
            && spinning_friction >= 0.0
            && linear_damping >= 0.0
            && angular_damping >= 0.0
            && max_linear_speed > 0.0
            && max_angular_speed > 0.0,
        material,
    )?;
    let material_id = MaterialId(r.u16()?);
    let is_sensor = r.bool()?;
    let layer = r.u16()?;
    check(
        layer < layers.count(),
        "a body's layer is not in the layer table",
    )?;
    let filter = CollisionFilter {
        group: r.u32()?,
        mask: r.u32()?,
    };
    let allow_sleep = r.bool()?;
    let motion_quality = match r.u8()? {
        0 => MotionQuality::Discrete,
        1 => MotionQuality::LinearCast,
        _ => return Err(SnapshotError::Corrupt("unknown motion quality")),
    };
    let locked_axes =
        LockedAxes::from_bits(r.u8()?).ok_or(SnapshotError::Corrupt("unknown locked-axis bits"))?;
    let user_data = r.u64()?;
    let contact_force_threshold = r.f32()?;
    check(
        contact_force_threshold >= 0.0,
        "a contact force threshold is negative or NaN",
    )?;
    let proxy = if r.bool()? {
        let proxy = read_proxy(r)?;
        check(
            (proxy.kind == ProxyKind::Static) == (motion_type == MotionType::Fixed),
            "a body's proxy is in the wrong tree",
        )?;
        check(
            !shapeless && !disabled,
            "a body without a shape, or disabled, has a proxy",
        )?;
        Some(proxy)
    } else {
        None
    };
    let sleep_time = r.finite("non-finite sleep time")?;
    let force = r.finite_vec3("non-finite force")?;
    let torque = r.finite_vec3("non-finite torque")?;
    let constant_force = r.finite_vec3("non-finite force")?;
    let constant_torque = r.finite_vec3("non-finite torque")?;
    Ok(Body {
        generation,
        alive: true,
        set,
        local,
        motion_type,
        shape,
        shapeless,
        density,
        mass_spec,
        center_of_mass_offset,
        disabled,
        local_center,
        mass,
        friction,
        restitution,
        rolling_friction,
        spinning_friction,
        material: material_id,
        linear_damping,
        angular_damping,
        gravity_scale,
        max_linear_speed,
        max_angular_speed,
        is_sensor,
        layer,
        filter,
        allow_sleep,
        motion_quality,
        locked_axes,
        user_data,
        contact_force_threshold,
        proxy,
        sleep_time,
        force,
        torque,
        constant_force,
        constant_torque,
        teleports: 0,
        revision: 0,
    })
}

/// A mass source: a tag, then the mass or the full properties.
fn write_mass_spec(w: &mut Writer, spec: &MassSpec) {
    match spec {
        MassSpec::FromShape => w.u8(0),
        MassSpec::Mass(m) => {
            w.u8(1);
            w.f32(*m);
        }
        MassSpec::Properties(mp) => {
            w.u8(2);
            w.f32(mp.mass);
            w.vec3(mp.center_of_mass);
            w.mat3(mp.inertia);
        }
    }
}

fn read_mass_spec(r: &mut Reader<'_>) -> Result<MassSpec, SnapshotError> {
    Ok(match r.u8()? {
        0 => MassSpec::FromShape,
        1 => MassSpec::Mass(r.f32()?),
        2 => MassSpec::Properties(MassProperties {
            mass: r.f32()?,
            center_of_mass: r.vec3()?,
            inertia: r.mat3()?,
        }),
        _ => return Err(SnapshotError::Corrupt("unknown mass source")),
    })
}

/// The record of a removed slot: only the generation is ever read again.
fn dead_body(generation: u32) -> Body {
    Body {
        generation,
        alive: false,
        set: 0,
        local: 0,
        motion_type: MotionType::Fixed,
        shape: Shape::Sphere(Sphere { radius: 1.0 }),
        shapeless: false,
        density: 0.0,
        mass_spec: MassSpec::FromShape,
        center_of_mass_offset: Vec3A::ZERO,
        disabled: false,
        local_center: Vec3A::ZERO,
        mass: 0.0,
        friction: 0.0,
        restitution: 0.0,
        rolling_friction: 0.0,
        spinning_friction: 0.0,
        material: MaterialId::DEFAULT,
        linear_damping: 0.0,
        angular_damping: 0.0,
        gravity_scale: 0.0,
        max_linear_speed: 0.0,
        max_angular_speed: 0.0,
        is_sensor: false,
        layer: 0,
        filter: CollisionFilter::default(),
        allow_sleep: false,
        motion_quality: MotionQuality::Discrete,
        locked_axes: LockedAxes::empty(),
        user_data: 0,
        contact_force_threshold: f32::INFINITY,
        proxy: None,
        sleep_time: 0.0,
        force: Vec3A::ZERO,
        torque: Vec3A::ZERO,
        constant_force: Vec3A::ZERO,
        constant_torque: Vec3A::ZERO,
        teleports: 0,
        revision: 0,
    }
}

pub(super) fn write_proxy(w: &mut Writer, p: BroadPhaseProxy) {
    w.u8(match p.kind {
        ProxyKind::Static => 0,
        ProxyKind::Moving => 1,
    });
    w.u32(p.id.0);
}

pub(super) fn read_proxy(r: &mut Reader<'_>) -> Result<BroadPhaseProxy, SnapshotError> {
    let kind = match r.u8()? {
        0 => ProxyKind::Static,
        1 => ProxyKind::Moving,
        _ => return Err(SnapshotError::Corrupt("unknown proxy tree")),
    };
    Ok(BroadPhaseProxy {
        kind,
        id: ProxyId(r.u32()?),
    })
}

pub(super) fn write_id(w: &mut Writer, id: BodyId) {
    w.u32(id.index());
    w.u32(id.generation());
}

pub(super) fn read_id(r: &mut Reader<'_>) -> Result<BodyId, SnapshotError> {
    Ok(BodyId::new(r.u32()?, r.u32()?))
}

/// Bytes of one encoded hot record.
const SIM_BYTES: usize = 4 * (7 + 3 * 5 + 1 + 9 + 3 + 1);

fn write_sim(w: &mut Writer, sim: &BodySim) {
    let BodySim {
        transform,
        center,
        center0,
        linear_velocity,
        angular_velocity,
        velocity_carry,
        inv_mass,
        inv_inertia_local,
        local_center,
        body,
    } = sim;
    w.vec3(transform.translation);
    w.quat(transform.rotation);
    for v in [
        *center,
        *center0,
        *linear_velocity,
        *angular_velocity,
        *velocity_carry,
    ] {
        w.vec3(v);
    }
    w.f32(*inv_mass);
    w.mat3(*inv_inertia_local);
    w.vec3(*local_center);
    w.u32(*body);
}

fn read_sim(r: &mut Reader<'_>) -> Result<BodySim, SnapshotError> {
    let pose = "a non-finite pose";
    let translation = r.finite_vec3(pose)?;
    let rotation = r.quat()?;
    // `validate_rotation`'s tolerance: the step renormalises every rotation it writes.
    check(
        rotation.is_finite() && (quat_dot(rotation, rotation) - 1.0).abs() <= 2e-3,
        "a rotation is not a unit quaternion",
    )?;
    let center = r.finite_vec3(pose)?;
    let center0 = r.finite_vec3(pose)?;
    let velocity = "a non-finite velocity";
    let linear_velocity = r.finite_vec3(velocity)?;
    let angular_velocity = r.finite_vec3(velocity)?;
    let velocity_carry = r.finite_vec3(velocity)?;
    let inv_mass = r.finite("a bad inverse mass")?;
    check(inv_mass >= 0.0, "a bad inverse mass")?;
    let inv_inertia_local = r.mat3()?;
    check(
        inv_inertia_local.is_finite(),
        "a non-finite inverse inertia",
    )?;
    let local_center = r.finite_vec3("non-finite centre of mass")?;
    let body = r.u32()?;
    Ok(BodySim {
        transform: Isometry::new(translation, rotation),
        center,
        center0,
        linear_velocity,
        angular_velocity,
        velocity_carry,
        inv_mass,
        inv_inertia_local,
        local_center,
        body,
    })
}

pub(super) fn write_shape(w: &mut Writer, shape: &Shape, hulls: &HullTable) {
    match shape {
        Shape::Sphere(Sphere { radius }) => {
            w.u8(0);
            w.f32(*radius);
        }
        Shape::Box(Cuboid { half_extents }) => {
            w.u8(1);
            w.vec3(*half_extents);
        }
        Shape::Capsule(Capsule {
            half_height,
            radius,
        }) => {
            w.u8(2);
            w.f32(*half_height);
            w.f32(*radius);
        }
        Shape::Cylinder(Cylinder {
            half_height,
            radius,
        }) => {
            w.u8(3);
            w.f32(*half_height);
            w.f32(*radius);
        }
        Shape::ConvexHull(h) => {
            w.u8(4);
            w.u32(hulls.index[&Arc::as_ptr(h)]);
        }
        Shape::HalfSpace(HalfSpace { normal, offset }) => {
            w.u8(5);
            w.vec3(*normal);
            w.f32(*offset);
        }
        Shape::Compound(_) | Shape::TriangleMesh(_) | Shape::HeightField(_) => {
            super::composite_shapes::write_composite(w, shape, hulls);
        }
    }
}

/// Reads a shape, checking what its constructor checks (sizes finite and positive, a
/// unit normal). Values are taken bit for bit, never renormalised.
pub(super) fn read_shape(
    r: &mut Reader<'_>,
    hulls: &[Arc<ConvexHull>],
) -> Result<Shape, SnapshotError> {
    let size = "a shape size is not finite and positive";
    let positive = |x: f32| check(x.is_finite() && x > 0.0, size).map(|()| x);
    Ok(match r.u8()? {
        0 => Shape::Sphere(Sphere {
            radius: positive(r.f32()?)?,
        }),
        1 => {
            let h = r.vec3()?;
            for x in h.to_array() {
                positive(x)?;
            }
            Shape::Box(Cuboid { half_extents: h })
        }
        2 => {
            let half_height = r.finite(size)?;
            check(half_height >= 0.0, size)?;
            Shape::Capsule(Capsule {
                half_height,
                radius: positive(r.f32()?)?,
            })
        }
        3 => Shape::Cylinder(Cylinder {
            half_height: positive(r.f32()?)?,
            radius: positive(r.f32()?)?,
        }),
        4 => {
            let i = r.u32()? as usize;
            let h = hulls.get(i).ok_or(SnapshotError::Corrupt(
                "a body names a hull that is not in the image",
            ))?;
            Shape::ConvexHull(Arc::clone(h))
        }
        5 => {
            let normal = r.finite_vec3("a non-finite half-space")?;
            check(
                (normal.length_squared() - 1.0).abs() <= 1e-4,
                "a half-space normal is not a unit vector",
            )?;
            Shape::HalfSpace(HalfSpace {
                normal,
                offset: r.finite("a non-finite half-space")?,
            })
        }
        tag @ 6..=8 => super::composite_shapes::read_composite(r, tag, hulls)?,
        _ => return Err(SnapshotError::Corrupt("unknown shape kind")),
    })
}

fn write_hull(w: &mut Writer, hull: &ConvexHull) {
    let ConvexHull {
        vertices,
        faces,
        aabb,
        unit_mass,
        inner_radius,
    } = hull;
    w.count(vertices.len());
    for &v in vertices {
        w.vec3(v);
    }
    w.count(faces.len());
    for HullFace {
        normal,
        offset,
        vertices,
    } in faces
    {
        w.vec3(*normal);
        w.f32(*offset);
        write_indices(w, vertices);
    }
    w.vec3(aabb.min);
    w.vec3(aabb.max);
    let MassProperties {
        mass,
        center_of_mass,
        inertia,
    } = unit_mass;
    w.f32(*mass);
    w.vec3(*center_of_mass);
    w.mat3(*inertia);
    w.f32(*inner_radius);
}

/// Reads a hull's internal data as it was built, checking what its users index by and
/// divide by: at least four finite vertices, faces of at least three in-range vertices
/// with finite planes, a positive unit mass.
fn read_hull(r: &mut Reader<'_>) -> Result<ConvexHull, SnapshotError> {
    let bad = "a convex hull is malformed";
    let n = r.count(12)?;
    check(n >= 4, bad)?;
    let vertices = (0..n)
        .map(|_| r.finite_vec3(bad))
        .collect::<Result<Vec<_>, _>>()?;
    let face_count = r.count(20)?;
    check(face_count >= 4, bad)?;
    let mut faces = Vec::with_capacity(face_count);
    for _ in 0..face_count {
        let normal = r.finite_vec3(bad)?;
        let offset = r.finite(bad)?;
        let indices = read_indices(r)?;
        check(
            indices.len() >= 3 && indices.iter().all(|&i| (i as usize) < n),
            bad,
        )?;
        faces.push(HullFace {
            normal,
            offset,
            vertices: indices,
        });
    }
    let aabb = crate::geometry::aabb::Aabb::new(r.finite_vec3(bad)?, r.finite_vec3(bad)?);
    let mass = r.finite(bad)?;
    let center_of_mass = r.finite_vec3(bad)?;
    let inertia: Mat3A = r.mat3()?;
    let inner_radius = r.finite(bad)?;
    check(
        mass > 0.0 && inertia.is_finite() && inner_radius >= 0.0,
        bad,
    )?;
    Ok(ConvexHull {
        vertices,
        faces,
        aabb,
        unit_mass: MassProperties {
            mass,
            center_of_mass,
            inertia,
        },
        inner_radius,
    })
}
