//! No ghost collisions: bodies sliding or rolling over the internal edges of a flat (or
//! evenly sloped) mesh or heightfield move as on one flat plane. The reference is the
//! same body on one big box (a single face, no internal edges) stepped beside it: every
//! step the height must match the reference's within 2 mm, the velocity along the normal
//! within 3 cm/s and the spin within 0.05 rad/s (a box catching on an edge at 8 m/s gets
//! tens of cm/s of normal velocity and rad/s of spin).
//!
//! What these prove, and what not: they pass even with the per-triangle internal-edge
//! rule switched off (checked by forcing every edge active), because the composite merge
//! already hides ghost normals on a flat or evenly sloped surface: the part with the
//! deepest point (the triangle under the body) gives the manifold's normal, and part
//! normals more than 60° off it are dropped. They guard the end-to-end behaviour; the
//! rule itself, for what the merge does not cover (a body whose nearest part lies beyond
//! a seam, ghost normals within 60°), is tested on single triangles in
//! `narrow_phase/composite.rs` (those tests fail with the rule off).

use crate::common::level;

use crate::common::{DT, world};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;
use joule_physics::world::World;

use level::{grid_mesh, height_field};

/// The flat surfaces under test: a 1 m-triangle mesh and a 1 m-cell heightfield, both
/// 60 m along x and 8 m along z, top at y = 0 (in the body's frame).
fn surfaces() -> Vec<(&'static str, Shape)> {
    vec![
        ("mesh", grid_mesh(60, 8, 1.0, -30.0, -4.0)),
        // 61 x 61 samples 1 m apart: x and z in [-30, 30].
        ("heightfield", height_field(61, 1.0, |_, _| 0.0)),
    ]
}

/// The one-face reference: a box whose top face is the surface's plane (y = 0 in the
/// frame `rotation`), with the given friction.
fn reference_ground(w: &mut World, rotation: Quat, friction: f32) {
    w.create_body(&BodyDesc {
        friction,
        rotation,
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(40.0, 0.5, 40.0)).unwrap(),
            rotation * Vec3::new(0.0, -0.5, 0.0),
        )
    })
    .unwrap();
}

/// Steps both worlds `steps` times, checking every step that `body`'s height along
/// `normal` (within 2 mm), its spin and (unless `by_height`) its velocity along `normal`
/// match the reference body's; returns the distance `body` went along the surface.
///
/// A rolling sphere is checked `by_height`: on the reference box too, the velocity the
/// soft contact reports for it wobbles by up to g dt (its height stays within 0.3 mm), so
/// its height is the sharper test of a hop.
fn watch(
    (w, body): (&mut World, BodyId),
    (r, reference): (&mut World, BodyId),
    normal: Vec3,
    steps: usize,
    by_height: bool,
) -> f32 {
    let start = w.position(body).unwrap();
    for step in 0..steps {
        w.step(DT);
        r.step(DT);
        let (v, vr) = (
            w.linear_velocity(body).unwrap(),
            r.linear_velocity(reference).unwrap(),
        );
        let (s, sr) = (
            w.angular_velocity(body).unwrap(),
            r.angular_velocity(reference).unwrap(),
        );
        let at = w.position(body).unwrap();
        let (h, hr) = (at.dot(normal), r.position(reference).unwrap().dot(normal));
        assert!(
            (h - hr).abs() < 0.002,
            "step {step}: height {h} (reference {hr}) at {at}"
        );
        assert!(
            by_height || (v.dot(normal) - vr.dot(normal)).abs() < 0.03 && v.dot(normal).abs() < 0.2,
            "step {step}: normal velocity {} (reference {}) at {at}",
            v.dot(normal),
            vr.dot(normal)
        );
        assert!(
            (s - sr).length() < 0.05,
            "step {step}: spin {s} (reference {sr}) at {at}"
        );
    }
    let d = w.position(body).unwrap() - start;
    (d - normal * d.dot(normal)).length()
}

#[test]
fn a_box_slides_20_m_over_a_flat_mesh_and_heightfield_without_bumping() {
    for (name, surface) in surfaces() {
        let (mut w, mut r) = (world(1), world(1));
        w.create_body(&BodyDesc {
            friction: 0.0,
            ..BodyDesc::fixed(surface, Vec3::ZERO)
        })
        .unwrap();
        reference_ground(&mut r, Quat::IDENTITY, 0.0);
        // Diagonal in x-z so it crosses cell edges and the cells' diagonals.
        let slider = BodyDesc {
            friction: 0.0,
            linear_velocity: Vec3::new(8.0, 0.0, 1.0),
            ..BodyDesc::dynamic(
                Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                Vec3::new(-25.0, 0.5, -2.0),
            )
        };
        let b = w.create_body(&slider).unwrap();
        let rb = r.create_body(&slider).unwrap();
        // 20 m at ~8.06 m/s takes ~149 steps.
        let d = watch((&mut w, b), (&mut r, rb), Vec3::Y, 150, false);
        assert!(d > 20.0, "{name}: slid {d} m");
        let v = w.linear_velocity(b).unwrap();
        assert!((v.x - 8.0).abs() < 0.05, "{name}: slowed to {v}");
    }
}

#[test]
fn a_box_slides_down_a_gentle_slope_without_bumping() {
    for (name, surface) in surfaces() {
        let (mut w, mut r) = (world(1), world(1));
        // The surface tilted 5° about z: downhill is +x.
        let tilt = Quat::from_rotation_z(-5f32.to_radians());
        w.create_body(&BodyDesc {
            friction: 0.0,
            rotation: tilt,
            ..BodyDesc::fixed(surface, Vec3::ZERO)
        })
        .unwrap();
        reference_ground(&mut r, tilt, 0.0);
        let normal = tilt * Vec3::Y;
        let start = tilt * Vec3::new(-26.0, 0.5, -1.0);
        let slider = BodyDesc {
            friction: 0.0,
            rotation: tilt,
            linear_velocity: tilt * Vec3::new(4.0, 0.0, 0.5),
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), start)
        };
        let b = w.create_body(&slider).unwrap();
        let rb = r.create_body(&slider).unwrap();
        // From 4 m/s at g sin 5° = 0.855 m/s², 20 m takes 3.6 s (216 steps).
        let d = watch((&mut w, b), (&mut r, rb), normal, 240, false);
        assert!(d > 20.0, "{name}: slid {d} m");
    }
}

#[test]
fn a_sphere_rolls_over_a_flat_mesh_and_heightfield_without_hopping() {
    for (name, surface) in surfaces() {
        let (mut w, mut r) = (world(1), world(1));
        w.create_body(&BodyDesc::fixed(surface, Vec3::ZERO))
            .unwrap();
        reference_ground(&mut r, Quat::IDENTITY, 0.6);
        let ball = BodyDesc {
            linear_velocity: Vec3::new(6.0, 0.0, 0.0),
            // Rolling without slipping: ω = v / r about -z.
            angular_velocity: Vec3::new(0.0, 0.0, -12.0),
            ..BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::new(-25.0, 0.5, 0.3))
        };
        let b = w.create_body(&ball).unwrap();
        let rb = r.create_body(&ball).unwrap();
        let d = watch((&mut w, b), (&mut r, rb), Vec3::Y, 240, true);
        assert!(d > 20.0, "{name}: rolled {d} m");
        let (y, yr) = (w.position(b).unwrap().y, r.position(rb).unwrap().y);
        assert!((y - yr).abs() < 0.005, "{name}: height {y}, reference {yr}");
    }
}
