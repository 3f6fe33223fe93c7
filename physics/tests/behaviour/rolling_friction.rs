//! Rolling and spinning resistance against their closed forms.
//!
//! Model (see `RollingRows`): contacts resist rolling with a torque up to `b N` and
//! spinning about their normal with a torque up to `c N` (`b`, `c` lengths in metres).
//! A solid ball (I = 2/5 m r²) rolling without slipping then obeys
//! `m a = f` and `I dω/dt = r f - b N` with `a = r dω/dt`, so it slows at
//! `a = b N r / (I + m r²) = (5/7) (b / r) g`; a body spinning on a face with no other
//! friction slows at `dω/dt = c m g / I`.

use crate::common::{DT, G, world};
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::error::PhysicsError;
use joule_physics::material::{MaterialId, RollingMaterial};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::world::World;

fn ground(w: &mut World, friction: f32) -> BodyId {
    w.create_body(&BodyDesc {
        friction,
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(100.0, 0.5, 100.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        )
    })
    .unwrap()
}

/// A ball of radius `r` rolling along x at `v0` without slipping.
fn rolling_ball(w: &mut World, r: f32, v0: f32, rolling: f32) -> BodyId {
    w.create_body(
        &BodyDesc::dynamic(Shape::sphere(r).unwrap(), Vec3::new(-40.0, r, 0.0))
            .linear_velocity(Vec3::new(v0, 0.0, 0.0))
            .angular_velocity(Vec3::new(0.0, 0.0, -v0 / r))
            .rolling_friction(rolling, 0.0),
    )
    .unwrap()
}

/// Mean deceleration of `b` along x over `steps` steps, after 10 settling steps.
fn deceleration(w: &mut World, b: BodyId, steps: usize) -> f32 {
    for _ in 0..10 {
        w.step(DT);
    }
    let v1 = w.linear_velocity(b).unwrap().x;
    for _ in 0..steps {
        w.step(DT);
    }
    let v2 = w.linear_velocity(b).unwrap().x;
    (v1 - v2) / (steps as f32 * DT)
}

#[test]
fn a_rolling_ball_slows_at_five_sevenths_b_over_r_g() {
    // Tolerance 3%: the soft contact's small bias on the normal force (the bound's N).
    for (r, b) in [(0.5f32, 0.01f32), (0.25, 0.01), (0.5, 0.03)] {
        let mut w = world(1);
        ground(&mut w, 0.8);
        let ball = rolling_ball(&mut w, r, 4.0, b);
        let a = deceleration(&mut w, ball, 60);
        let expected = 5.0 / 7.0 * b / r * G;
        assert!(
            (a - expected).abs() < 0.03 * expected,
            "r {r} b {b}: a = {a}, expected {expected}"
        );
        // Still rolling, not sliding: v = ω r.
        let (v, wz) = (
            w.linear_velocity(ball).unwrap().x,
            w.angular_velocity(ball).unwrap().z,
        );
        assert!((v + wz * r).abs() < 0.03, "rolls: v {v}, ω r {}", -wz * r);
    }
}

#[test]
fn without_rolling_friction_a_ball_rolls_on() {
    // The default is 0 (ground and ball): no deceleration beyond float noise.
    let mut w = world(1);
    ground(&mut w, 0.8);
    let ball = rolling_ball(&mut w, 0.5, 4.0, 0.0);
    let a = deceleration(&mut w, ball, 60);
    assert!(a.abs() < 1e-3, "a = {a}");
}

#[test]
fn a_box_spinning_on_its_face_slows_at_c_m_g_over_i() {
    // Frictionless surfaces, so only spinning resistance acts: a 1 × 0.2 × 1 m box
    // (I_y = m (a² + c²) / 3 with half sides a = c = 0.5, i.e. m / 6) spinning at
    // 5 rad/s with c = 0.05 m slows at 0.05 · 6 · g = 2.943 rad/s². Tolerance 3%.
    let mut w = world(1);
    ground(&mut w, 0.0);
    let c = 0.05;
    let b = w
        .create_body(
            &BodyDesc::dynamic(
                Shape::cuboid(Vec3::new(0.5, 0.1, 0.5)).unwrap(),
                Vec3::new(0.0, 0.1, 0.0),
            )
            .friction(0.0)
            .angular_velocity(Vec3::new(0.0, 5.0, 0.0))
            .rolling_friction(0.0, c),
        )
        .unwrap();
    for _ in 0..5 {
        w.step(DT);
    }
    let w1 = w.angular_velocity(b).unwrap().y;
    for _ in 0..30 {
        w.step(DT);
    }
    let w2 = w.angular_velocity(b).unwrap().y;
    let alpha = (w1 - w2) / (30.0 * DT);
    let expected = c * 6.0 * G;
    assert!(
        (alpha - expected).abs() < 0.03 * expected,
        "α = {alpha}, expected {expected}"
    );
    // It stops after 5 / 2.943 = 1.7 s, and stays stopped (the bound holds it, no
    // reversal).
    for _ in 0..120 {
        w.step(DT);
    }
    let w_end = w.angular_velocity(b).unwrap();
    assert!(w_end.y.abs() < 1e-3, "stopped: ω = {w_end}");
}

#[test]
fn a_pair_entry_sets_a_contact_s_rolling_resistance() {
    // Ball b = 0.01 on a floor of material 3; the pair entry (DEFAULT, 3) says 0.03: the
    // ball slows three times as fast as the bodies' own values give.
    let floor = MaterialId(3);
    let mut w = world(1);
    w.set_rolling_pair(
        MaterialId::DEFAULT,
        floor,
        RollingMaterial {
            rolling: 0.03,
            spinning: 0.0,
        },
    )
    .unwrap();
    let g = ground(&mut w, 0.8);
    w.set_material(g, floor).unwrap();
    let ball = rolling_ball(&mut w, 0.5, 4.0, 0.01);
    let a = deceleration(&mut w, ball, 60);
    let expected = 5.0 / 7.0 * 0.03 / 0.5 * G;
    assert!(
        (a - expected).abs() < 0.03 * expected,
        "a = {a}, expected {expected}"
    );
}

#[test]
fn bad_rolling_values_are_typed_errors_that_change_nothing() {
    let mut w = world(0);
    for bad in [-0.1f32, f32::NAN, f32::INFINITY] {
        let desc =
            BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y).rolling_friction(bad, 0.0);
        assert!(matches!(
            w.create_body(&desc),
            Err(PhysicsError::InvalidMaterial {
                field: "rolling_friction",
                ..
            })
        ));
        let desc =
            BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y).rolling_friction(0.0, bad);
        assert!(matches!(
            w.create_body(&desc),
            Err(PhysicsError::InvalidMaterial {
                field: "spinning_friction",
                ..
            })
        ));
    }
    assert_eq!(w.body_count(), 0);
    let b = w
        .create_body(&BodyDesc::dynamic(Shape::sphere(0.5).unwrap(), Vec3::Y))
        .unwrap();
    let bad = RollingMaterial {
        rolling: -1.0,
        spinning: 0.0,
    };
    assert!(matches!(
        w.set_rolling_friction(b, bad),
        Err(PhysicsError::InvalidMaterial {
            field: "rolling",
            ..
        })
    ));
    assert_eq!(w.rolling_friction(b).unwrap(), RollingMaterial::default());
    assert!(matches!(
        w.set_rolling_pair(
            MaterialId(1),
            MaterialId(2),
            RollingMaterial {
                rolling: 0.0,
                spinning: f32::NAN
            }
        ),
        Err(PhysicsError::InvalidMaterial {
            field: "spinning",
            ..
        })
    ));
}

#[test]
fn rolling_state_survives_a_snapshot_and_steps_in_lockstep() {
    let mut w = world(1);
    w.set_rolling_pair(
        MaterialId(2),
        MaterialId(2),
        RollingMaterial {
            rolling: 0.02,
            spinning: 0.01,
        },
    )
    .unwrap();
    ground(&mut w, 0.8);
    let ball = rolling_ball(&mut w, 0.5, 4.0, 0.01);
    w.set_rolling_friction(
        ball,
        RollingMaterial {
            rolling: 0.015,
            spinning: 0.002,
        },
    )
    .unwrap();
    for _ in 0..10 {
        w.step(DT);
    }
    let mut copy = World::from_snapshot(
        w.snapshot().as_bytes(),
        joule_jobs::JobSystem::new(2).unwrap(),
    )
    .unwrap();
    assert_eq!(copy.material_mixing(), w.material_mixing());
    assert_eq!(
        copy.rolling_friction(ball).unwrap(),
        w.rolling_friction(ball).unwrap()
    );
    for _ in 0..60 {
        w.step(DT);
        copy.step(DT);
        assert_eq!(copy.state_hash(), w.state_hash());
    }
}
