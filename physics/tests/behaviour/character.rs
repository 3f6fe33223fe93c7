//! The kinematic character controller against geometry (issue 31): ramps, a slope too
//! steep to climb, steps, stairs down, walls, a thin wall at speed, platforms, slopes,
//! a V-shaped crease, crates, many characters at once. Expected values come from the
//! geometry: a capsule of half height 0.6 and radius 0.3 stands with its centre
//! 0.6 + 0.3 + skin (0.02) above the ground.

use joule_physics::body::mass::MassSpec;
use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::character::{
    CharacterController, CharacterDesc, CharacterError, CharacterInput, GroundState,
    update_characters,
};
use joule_physics::math::{Quat, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::shape::Shape;
use joule_physics::world::World;

use crate::common::{self, DT};

/// Centre height of the default capsule standing on y = 0.
const STAND: f32 = 0.92;

fn flat_world() -> World {
    let mut w = common::world(0);
    w.create_body(&BodyDesc::fixed(
        Shape::half_space(Vec3::Y, 0.0).unwrap(),
        Vec3::ZERO,
    ))
    .unwrap();
    w
}

/// A fixed slab whose top face is the plane through `through` rising at `deg` degrees
/// towards +X (a ramp, a slope), `len` m long each way from `through`.
fn slope(w: &mut World, through: Vec3, deg: f32, len: f32) -> BodyId {
    let rot = Quat::from_rotation_z(deg.to_radians());
    let n = rot * Vec3::Y;
    w.create_body(&BodyDesc {
        rotation: rot,
        ..BodyDesc::fixed(
            Shape::cuboid(Vec3::new(len, 0.5, 5.0)).unwrap(),
            through - n * 0.5,
        )
    })
    .unwrap()
}

/// A fixed box from `min` to `max`.
fn block(w: &mut World, min: Vec3, max: Vec3) -> BodyId {
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid((max - min) * 0.5).unwrap(),
        (max + min) * 0.5,
    ))
    .unwrap()
}

fn walk(v: Vec3) -> CharacterInput {
    CharacterInput {
        velocity: v,
        ..CharacterInput::default()
    }
}

/// Steps the world and updates the character `n` times, calling `each` after each.
fn drive(
    w: &mut World,
    c: &mut CharacterController,
    input: CharacterInput,
    n: usize,
    mut each: impl FnMut(&World, &CharacterController),
) {
    for _ in 0..n {
        w.step(DT);
        c.update(w, DT, &input, &QueryFilter::default()).unwrap();
        each(w, c);
    }
}

fn character(p: Vec3) -> CharacterController {
    CharacterController::new(CharacterDesc::default(), p).unwrap()
}

#[test]
fn walks_up_a_30_degree_ramp_at_the_commanded_horizontal_speed() {
    let mut w = flat_world();
    slope(&mut w, Vec3::ZERO, 30.0, 10.0);
    let mut c = character(Vec3::new(-3.0, STAND, 0.0));
    let speed = 2.0;
    let mut on_ramp = Vec::new();
    drive(
        &mut w,
        &mut c,
        walk(Vec3::new(speed, 0.0, 0.0)),
        240,
        |_, c| {
            let p = c.position();
            if (1.5..6.0).contains(&p.x) {
                on_ramp.push((p, c.ground().state));
            }
        },
    );
    assert!(on_ramp.len() > 60, "it reached the ramp: {}", on_ramp.len());
    let (a, b) = (on_ramp[0].0, on_ramp[on_ramp.len() - 1].0);
    #[allow(clippy::cast_precision_loss)]
    let t = (on_ramp.len() - 1) as f32 * DT;
    let vx = (b.x - a.x) / t;
    assert!(
        (vx / speed - 1.0).abs() < 0.02,
        "horizontal speed {vx} vs {speed}"
    );
    let climb = (b.y - a.y) / (b.x - a.x);
    let tan30 = 30f32.to_radians().tan();
    assert!(
        (climb - tan30).abs() < 0.01,
        "follows the ramp: slope {climb}"
    );
    assert!(on_ramp.iter().all(|(_, s)| *s == GroundState::Grounded));
}

#[test]
fn stops_at_the_foot_of_a_50_degree_slope_and_slides_down_it() {
    let mut w = flat_world();
    slope(&mut w, Vec3::new(2.0, 0.0, 0.0), 50.0, 8.0);
    let mut c = character(Vec3::new(0.0, STAND, 0.0));
    let mut highest = f32::MIN;
    drive(
        &mut w,
        &mut c,
        walk(Vec3::new(3.0, 0.0, 0.0)),
        300,
        |_, c| {
            highest = highest.max(c.position().y);
            assert_eq!(c.ground().state, GroundState::Grounded);
        },
    );
    assert!(
        highest < STAND + 0.01,
        "never climbs it: highest centre {highest}"
    );
    // Stopped against it: the capsule's lower sphere (centre 0.32 up) a skin from the
    // slope, whose foot is at x = 2.
    let x = c.position().x;
    assert!(x < 2.0 && x > 1.0, "at the foot: x = {x}");
    // Put on the slope, it slides down.
    let start = Vec3::new(4.0, 2.0 * 50f32.to_radians().tan() + 1.5, 0.0);
    c.set_position(start).unwrap();
    let mut steep = 0;
    drive(&mut w, &mut c, walk(Vec3::ZERO), 120, |_, c| {
        if c.ground().state == GroundState::OnSteepGround {
            steep += 1;
        }
    });
    assert!(steep > 10, "it was on steep ground for {steep} frames");
    let end = c.position();
    assert!(
        end.y < start.y - 1.0 && end.x < start.x - 1.0,
        "slid down: {end}"
    );
}

/// A staircase of `n` steps of `rise` up, each `tread` deep, starting at x = 1.
fn stairs(w: &mut World, n: usize, rise: f32, tread: f32) {
    for k in 0..n {
        #[allow(clippy::cast_precision_loss)]
        let (x0, top) = (1.0 + k as f32 * tread, (k + 1) as f32 * rise);
        block(w, Vec3::new(x0, -1.0, -3.0), Vec3::new(x0 + 20.0, top, 3.0));
    }
}

#[test]
fn climbs_30_cm_steps_with_a_35_cm_step_height_and_not_50_cm_steps() {
    for (rise, climbs) in [(0.3, true), (0.5, false)] {
        let mut w = flat_world();
        stairs(&mut w, 5, rise, 0.6);
        let mut c = character(Vec3::new(-1.0, STAND, 0.0));
        drive(
            &mut w,
            &mut c,
            walk(Vec3::new(1.5, 0.0, 0.0)),
            360,
            |_, _| {},
        );
        let p = c.position();
        if climbs {
            assert!(
                (p.y - (5.0 * rise + STAND)).abs() < 0.01,
                "on the top step: {p}"
            );
            assert!(p.x > 4.0, "{p}");
        } else {
            assert!((p.y - STAND).abs() < 0.01, "still at the bottom: {p}");
            assert!(p.x < 1.0, "{p}");
        }
        assert_eq!(c.ground().state, GroundState::Grounded);
    }
}

#[test]
fn walks_down_stairs_without_leaving_the_ground() {
    let mut w = flat_world();
    // Steps down towards +X: the top (1.5 m) at x < 1, 0.3 m lower every 0.6 m.
    for k in 0..5 {
        #[allow(clippy::cast_precision_loss)]
        let (x1, top) = (1.0 + k as f32 * 0.6, 1.5 - k as f32 * 0.3);
        block(
            &mut w,
            Vec3::new(-10.0, -1.0, -3.0),
            Vec3::new(x1, top, 3.0),
        );
    }
    let mut c = character(Vec3::new(-1.0, 1.5 + STAND, 0.0));
    let mut airborne = 0;
    drive(
        &mut w,
        &mut c,
        walk(Vec3::new(1.5, 0.0, 0.0)),
        240,
        |_, c| {
            if c.ground().state != GroundState::Grounded {
                airborne += 1;
            }
        },
    );
    assert_eq!(airborne, 0, "frames off the ground");
    let p = c.position();
    assert!(
        p.x > 5.0 && (p.y - STAND).abs() < 0.01,
        "at the bottom: {p}"
    );
}

#[test]
fn slides_along_a_wall_with_the_tangential_part_of_its_velocity() {
    let mut w = flat_world();
    block(
        &mut w,
        Vec3::new(2.0, 0.0, -20.0),
        Vec3::new(3.0, 3.0, 20.0),
    );
    let mut c = character(Vec3::new(0.0, STAND, 0.0));
    let v = Vec3::new(3.0, 0.0, 1.0);
    drive(&mut w, &mut c, walk(v), 60, |_, _| {});
    let a = c.position();
    drive(&mut w, &mut c, walk(v), 60, |_, c| {
        // Against the wall: radius plus skin away from x = 2.
        assert!(
            (c.position().x - (2.0 - 0.3 - 0.02)).abs() < 2e-3,
            "{}",
            c.position()
        );
    });
    let b = c.position();
    let vz = (b.z - a.z) / (60.0 * DT);
    assert!((vz - 1.0).abs() < 0.02, "tangential speed {vz}");
}

#[test]
fn never_ends_behind_a_5_cm_wall_at_50_m_s() {
    let mut w = flat_world();
    block(
        &mut w,
        Vec3::new(4.975, 0.0, -50.0),
        Vec3::new(5.025, 3.0, 50.0),
    );
    for dir in [Vec3::X, Vec3::new(1.0, 0.0, 0.3).normalize()] {
        let mut c = character(Vec3::new(0.0, STAND, 0.0));
        drive(&mut w, &mut c, walk(dir * 50.0), 60, |_, c| {
            assert!(
                c.position().x < 4.975 - 0.3 + 1e-3,
                "through the wall: {}",
                c.position()
            );
        });
    }
}

#[test]
fn rides_a_rotating_platform_within_1_cm_for_10_s() {
    for dynamic in [false, true] {
        let mut w = flat_world();
        let shape = Shape::cuboid(Vec3::new(4.0, 0.25, 4.0)).unwrap();
        let at = Vec3::new(0.0, 1.0, 0.0);
        let w0 = Vec3::new(0.0, 1.0, 0.0);
        let desc = if dynamic {
            // Spinning in the air with gravity off and no damping.
            BodyDesc {
                angular_velocity: w0,
                gravity_scale: 0.0,
                angular_damping: 0.0,
                linear_damping: 0.0,
                allow_sleep: false,
                ..BodyDesc::dynamic(shape, at)
            }
        } else {
            BodyDesc {
                angular_velocity: w0,
                ..BodyDesc::kinematic(shape, at)
            }
        };
        let platform = w.create_body(&desc).unwrap();
        let mut c = character(Vec3::new(2.5, 1.25 + STAND, 0.0));
        let local = |w: &World, c: &CharacterController| {
            let t = w.transform(platform).unwrap();
            Vec3::from(t.inverse_transform_point(Vec3A::from(c.position())))
        };
        drive(&mut w, &mut c, walk(Vec3::ZERO), 10, |_, _| {});
        let spot = local(&w, &c);
        let mut worst = 0.0f32;
        drive(&mut w, &mut c, walk(Vec3::ZERO), 600, |w, c| {
            worst = worst.max((local(w, c) - spot).length());
            assert_eq!(c.ground().body, Some(platform));
        });
        assert!(
            worst < 0.01,
            "drift in the platform's frame {worst} m (dynamic: {dynamic})"
        );
        let turned = w.rotation(platform).unwrap();
        assert!(turned.w.abs() < 0.9, "the platform turned: {turned}");
    }
}

#[test]
fn stands_on_a_30_degree_slope_for_10_s_without_creeping() {
    let mut w = flat_world();
    slope(&mut w, Vec3::ZERO, 30.0, 10.0);
    let x = 3.0;
    let mut c = character(Vec3::new(x, x * 30f32.to_radians().tan() + 1.5, 0.0));
    drive(&mut w, &mut c, walk(Vec3::ZERO), 60, |_, _| {});
    assert_eq!(c.ground().state, GroundState::Grounded);
    let rest = c.position();
    drive(&mut w, &mut c, walk(Vec3::ZERO), 600, |_, c| {
        assert!(
            (c.position() - rest).length() < 1e-4,
            "crept: {}",
            c.position() - rest
        );
    });
}

#[test]
fn does_not_oscillate_in_a_v_shaped_crease() {
    for deg in [30.0, 60.0] {
        let mut w = common::world(0);
        slope(&mut w, Vec3::ZERO, deg, 6.0);
        slope(&mut w, Vec3::ZERO, -deg, 6.0);
        let mut c = character(Vec3::new(0.3, 3.0, 0.0));
        drive(&mut w, &mut c, walk(Vec3::ZERO), 120, |_, _| {});
        let rest = c.position();
        drive(&mut w, &mut c, walk(Vec3::ZERO), 180, |_, c| {
            let d = (c.position() - rest).length();
            assert!(d < 1e-4, "{deg}°: moved {d}");
        });
        // Walking into one side while wedged does not make it bounce either.
        drive(
            &mut w,
            &mut c,
            walk(Vec3::new(0.0, 0.0, 1.0)),
            60,
            |_, _| {},
        );
        let a = c.position();
        drive(
            &mut w,
            &mut c,
            walk(Vec3::new(0.0, 0.0, 1.0)),
            60,
            |_, c| {
                assert!((c.position().x - a.x).abs() < 1e-3 && (c.position().y - a.y).abs() < 1e-3);
            },
        );
    }
}

#[test]
fn pushes_a_10_kg_crate_but_not_a_wall_or_a_heavy_block() {
    let mut w = flat_world();
    let crate_at = Vec3::new(2.0, 0.5, 0.0);
    let crate_body = w
        .create_body(&BodyDesc {
            mass: MassSpec::Mass(10.0),
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), crate_at)
        })
        .unwrap();
    // 20 t on friction 0.5 needs ~98 kN to slide; the character pushes with at most 1 kN.
    let heavy_at = Vec3::new(2.0, 0.5, 4.0);
    let heavy = w
        .create_body(&BodyDesc {
            mass: MassSpec::Mass(20_000.0),
            ..BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5)).unwrap(), heavy_at)
        })
        .unwrap();
    let wall = block(&mut w, Vec3::new(2.0, 0.0, 7.5), Vec3::new(3.0, 2.0, 8.5));
    let mut chars = vec![
        character(Vec3::new(0.0, STAND, 0.0)),
        character(Vec3::new(0.0, STAND, 4.0)),
        character(Vec3::new(0.0, STAND, 8.0)),
    ];
    let inputs = [walk(Vec3::new(1.5, 0.0, 0.0)); 3];
    for _ in 0..180 {
        w.step(DT);
        update_characters(&mut w, &mut chars, &inputs, DT, &QueryFilter::default()).unwrap();
    }
    let moved = w.position(crate_body).unwrap() - crate_at;
    assert!(moved.x > 2.0, "the crate slid ahead: {moved}");
    assert!(chars[0].position().x > 2.0, "the character followed it");
    let moved = (w.position(heavy).unwrap() - heavy_at).length();
    assert!(moved < 0.01, "the heavy block stayed: {moved}");
    assert!(chars[1].position().x < 1.3, "and blocked its character");
    assert!(
        chars[2].position().x < 1.7,
        "the wall blocks: {}",
        chars[2].position()
    );
    assert_eq!(w.position(wall).unwrap(), Vec3::new(2.5, 1.0, 8.0));
}

#[test]
fn walks_over_mesh_and_heightfield_internal_edges_without_snagging() {
    for field in [false, true] {
        let mut w = common::world(0);
        let shape = if field {
            common::level::height_field(41, 0.5, |_, _| 0.0)
        } else {
            common::level::grid_mesh(40, 40, 0.5, -10.0, -10.0)
        };
        w.create_body(&BodyDesc::fixed(shape, Vec3::ZERO)).unwrap();
        let mut c = character(Vec3::new(-8.0, STAND, -7.0));
        drive(
            &mut w,
            &mut c,
            walk(Vec3::new(3.0, 0.0, 2.3)),
            150,
            |_, c| {
                assert!(
                    (c.position().y - STAND).abs() < 1e-3,
                    "bumped: {}",
                    c.position()
                );
                assert_eq!(c.ground().state, GroundState::Grounded);
            },
        );
        let v = c.velocity();
        assert!(
            (v - Vec3::new(3.0, 0.0, 2.3)).length() < 1e-3,
            "full speed: {v}"
        );
    }
}

#[test]
fn many_characters_give_the_same_result_at_any_thread_count() {
    let mut finals = Vec::new();
    for threads in [0, 1, 3] {
        let mut w = common::world(threads);
        w.create_body(&BodyDesc::fixed(
            common::level::height_field(33, 1.0, |x, z| 0.4 * (0.4 * x).sin() * (0.3 * z).cos()),
            Vec3::ZERO,
        ))
        .unwrap();
        slope(&mut w, Vec3::new(5.0, 0.0, 0.0), 25.0, 4.0);
        let mut chars: Vec<CharacterController> = (0..40)
            .map(|k| {
                #[allow(clippy::cast_precision_loss)]
                let (x, z) = ((k % 8) as f32 * 1.5 - 6.0, (k / 8) as f32 * 1.5 - 4.0);
                character(Vec3::new(x, 2.5, z))
            })
            .collect();
        let inputs: Vec<CharacterInput> = (0..40)
            .map(|k| {
                #[allow(clippy::cast_precision_loss)]
                let a = k as f32 * 0.7;
                walk(Vec3::new(a.cos(), 0.0, a.sin()) * 2.0)
            })
            .collect();
        for _ in 0..120 {
            w.step(DT);
            update_characters(&mut w, &mut chars, &inputs, DT, &QueryFilter::default()).unwrap();
        }
        let bits: Vec<[u32; 3]> = chars
            .iter()
            .map(|c| c.position().to_array().map(f32::to_bits))
            .collect();
        finals.push(bits);
    }
    assert_eq!(finals[0], finals[1]);
    assert_eq!(finals[0], finals[2]);
}

#[test]
fn bad_settings_and_inputs_are_refused_with_the_field_named() {
    let err = CharacterController::new(
        CharacterDesc {
            max_slope: 2.0,
            ..CharacterDesc::default()
        },
        Vec3::ZERO,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "character: max_slope must be in [0, pi/2) rad, got 2"
    );
    let err = CharacterController::new(
        CharacterDesc {
            shape: Shape::half_space(Vec3::Y, 0.0).unwrap(),
            ..CharacterDesc::default()
        },
        Vec3::ZERO,
    )
    .unwrap_err();
    assert_eq!(err, CharacterError::ShapeNotConvex);
    let mut w = flat_world();
    let mut c = character(Vec3::new(0.0, STAND, 0.0));
    let err = c
        .update(
            &mut w,
            0.0,
            &CharacterInput::default(),
            &QueryFilter::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("dt"), "{err}");
    let err = c
        .update(
            &mut w,
            DT,
            &walk(Vec3::new(f32::NAN, 0.0, 0.0)),
            &QueryFilter::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("input.velocity"), "{err}");
    assert_eq!(
        c.position(),
        Vec3::new(0.0, STAND, 0.0),
        "a refused update moves nothing"
    );
}

#[test]
fn characters_with_bodies_block_each_other_and_bodies_land_on_them() {
    let mut finals = Vec::new();
    for threads in [0, 2] {
        let mut w = common::world(threads);
        w.create_body(&BodyDesc::fixed(
            Shape::half_space(Vec3::Y, 0.0).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap();
        let mut chars = vec![
            character(Vec3::new(-2.0, STAND, 0.0)),
            character(Vec3::new(2.0, STAND, 0.05)),
        ];
        for c in &mut chars {
            c.attach_body(&mut w).unwrap();
        }
        // A ball dropped on the first character's head rests on it.
        let ball = w
            .create_body(&BodyDesc::dynamic(
                Shape::sphere(0.2).unwrap(),
                Vec3::new(-2.0, 3.0, 0.0),
            ))
            .unwrap();
        let inputs = [
            walk(Vec3::new(1.0, 0.0, 0.0)),
            walk(Vec3::new(-1.0, 0.0, 0.0)),
        ];
        let still = [walk(Vec3::ZERO); 2];
        for k in 0..240 {
            w.step(DT);
            let input = if k < 60 { &still } else { &inputs };
            if k == 59 {
                // The head's top is at 0.92 + 0.9 = 1.82 while the ball rests on it.
                let y = w.position(ball).unwrap().y;
                assert!(y > 1.8, "the ball is held up by the character: y = {y}");
            }
            update_characters(&mut w, &mut chars, input, DT, &QueryFilter::default()).unwrap();
            // Two capsules of radius 0.3 touch with their axes 0.6 apart.
            let apart = (chars[1].position() - chars[0].position()).length();
            assert!(
                apart > 0.59,
                "they met without passing through: axes {apart} m apart"
            );
        }
        finals.push(
            chars
                .iter()
                .map(|c| c.position().to_array().map(f32::to_bits))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(finals[0], finals[1]);
}

#[test]
fn a_sliding_box_pushes_a_character_that_allows_it() {
    for pushable in [false, true] {
        let mut w = common::world(0);
        w.create_body(&BodyDesc {
            friction: 0.0,
            ..BodyDesc::fixed(Shape::half_space(Vec3::Y, 0.0).unwrap(), Vec3::ZERO)
        })
        .unwrap();
        let box_body = w
            .create_body(&BodyDesc {
                linear_velocity: Vec3::new(2.0, 0.0, 0.0),
                friction: 0.0,
                ..BodyDesc::dynamic(
                    Shape::cuboid(Vec3::splat(0.4)).unwrap(),
                    Vec3::new(-2.0, 0.4, 0.0),
                )
            })
            .unwrap();
        let mut c = CharacterController::new(
            CharacterDesc {
                pushed_by_bodies: pushable,
                ..CharacterDesc::default()
            },
            Vec3::new(0.0, STAND, 0.0),
        )
        .unwrap();
        // How far the box's front gets into the character's back (its axis minus radius).
        let mut deepest = f32::MIN;
        drive(&mut w, &mut c, walk(Vec3::ZERO), 120, |w, c| {
            let front = w.position(box_body).unwrap().x + 0.4;
            deepest = deepest.max(front - (c.position().x - 0.3));
        });
        if pushable {
            assert!(deepest < 0.01, "pushed ahead of the box, overlap {deepest}");
            assert!(c.position().x > 2.5, "carried along: {}", c.position());
        } else {
            // Not pushable, the box passes through it: the character is not in the world.
            assert!(deepest > 0.5, "the box ran into it: overlap {deepest}");
            assert_eq!(c.position(), Vec3::new(0.0, STAND, 0.0), "it stayed put");
        }
    }
}

mod rigid {
    use joule_physics::body::BodyDesc;
    use joule_physics::body::mass::MassSpec;
    use joule_physics::character::{
        CharacterInput, GroundState, RigidCharacter, RigidCharacterDesc,
    };
    use joule_physics::math::Quat;
    use joule_physics::math::Vec3;
    use joule_physics::shape::Shape;
    use joule_physics::world::World;

    use super::{flat_world, slope, walk};
    use crate::common::DT;

    fn drive(w: &mut World, c: &mut RigidCharacter, input: CharacterInput, n: usize) {
        for _ in 0..n {
            c.update(w, DT, &input).unwrap();
            w.step(DT);
        }
    }

    #[test]
    fn walks_at_the_commanded_speed_and_stays_upright_pushing_a_crate() {
        let mut w = flat_world();
        let crate_body = w
            .create_body(&BodyDesc {
                mass: MassSpec::Mass(10.0),
                ..BodyDesc::dynamic(
                    Shape::cuboid(Vec3::splat(0.4)).unwrap(),
                    Vec3::new(4.0, 0.4, 0.2),
                )
            })
            .unwrap();
        let mut c = RigidCharacter::new(
            &mut w,
            RigidCharacterDesc::default(),
            Vec3::new(0.0, 0.9, 0.0),
        )
        .unwrap();
        drive(&mut w, &mut c, walk(Vec3::ZERO), 30);
        assert_eq!(c.ground().state, GroundState::Grounded);
        drive(&mut w, &mut c, walk(Vec3::new(2.0, 0.0, 0.0)), 30);
        let a = w.position(c.body()).unwrap();
        drive(&mut w, &mut c, walk(Vec3::new(2.0, 0.0, 0.0)), 30);
        let b = w.position(c.body()).unwrap();
        let vx = (b.x - a.x) / (30.0 * DT);
        assert!((vx / 2.0 - 1.0).abs() < 0.02, "walks at {vx} m/s");
        // Into the crate and past the time it takes to shove it along.
        drive(&mut w, &mut c, walk(Vec3::new(2.0, 0.0, 0.0)), 120);
        let crate_x = w.position(crate_body).unwrap().x;
        assert!(crate_x > 6.0, "the crate was shoved: x = {crate_x}");
        let q = w.rotation(c.body()).unwrap();
        // Its rotations are locked: the orientation keeps its bits through the shove.
        assert_eq!(q, Quat::IDENTITY, "still upright");
    }

    #[test]
    fn stands_on_a_30_degree_slope_and_jumps() {
        let mut w = flat_world();
        slope(&mut w, Vec3::ZERO, 30.0, 10.0);
        let x = 3.0;
        let at = Vec3::new(x, x * 30f32.to_radians().tan() + 1.2, 0.0);
        let mut c = RigidCharacter::new(&mut w, RigidCharacterDesc::default(), at).unwrap();
        drive(&mut w, &mut c, walk(Vec3::ZERO), 60);
        assert_eq!(c.ground().state, GroundState::Grounded);
        let rest = w.position(c.body()).unwrap();
        drive(&mut w, &mut c, walk(Vec3::ZERO), 300);
        let crept = (w.position(c.body()).unwrap() - rest).length();
        assert!(crept < 0.01, "crept {crept} m in 5 s");
        // A 4 m/s jump rises about v²/2g = 0.82 m.
        let before = w.position(c.body()).unwrap().y;
        let jump = CharacterInput {
            jump_speed: 4.0,
            ..CharacterInput::default()
        };
        drive(&mut w, &mut c, jump, 1);
        let mut top = before;
        for _ in 0..60 {
            drive(&mut w, &mut c, walk(Vec3::ZERO), 1);
            top = top.max(w.position(c.body()).unwrap().y);
        }
        assert!((top - before - 0.82).abs() < 0.08, "rose {}", top - before);
        assert_eq!(c.ground().state, GroundState::Grounded, "landed");
    }
}
