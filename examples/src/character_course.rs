//! A character course on SCENES.md's terrain level (issue 31): the level's fixed bodies
//! (heightfield, walls, the mesh ramp, the bowl) and a plaza added at the ramp's foot
//! with stairs, a steep slope, three crates and a turntable. A scripted character walks
//! it: crates, up and down the ramp, onto the turntable and a ride, up and down the
//! stairs, into the steep slope (which it must not climb), and back.
//!
//! The fixed part is a [`SceneDesc`], so the character bench builds the same level in
//! Rapier; the turntable (kinematic) is joule's only.

use joule_physics::body::{BodyDesc, BodyId};
use joule_physics::character::{
    CharacterController, CharacterDesc, CharacterInput, GroundState, update_characters,
};
use joule_physics::error::PhysicsError;
use joule_physics::math::{Quat, Vec3, Vec3A};
use joule_physics::query::QueryFilter;
use joule_physics::shape::Shape;
use joule_physics::world::World;

use crate::scenes::{self, BodySpec, Motion, SceneDesc, SceneKind, ShapeDesc};

/// The plaza's top (y, m).
pub const PLAZA_TOP: f32 = 3.0;
/// Height of each stair (m) and their count.
pub const STAIR_RISE: f32 = 0.25;
/// Number of stairs.
pub const STAIRS: usize = 6;
/// The steep slope's angle (degrees), above the character's 45° limit.
pub const STEEP_DEG: f32 = 55.0;
/// Where the steep slope's foot runs (x, m; it rises towards -X).
pub const STEEP_FOOT_X: f32 = -46.0;
/// The turntable's centre on the plaza and its angular speed (rad/s about +Y).
pub const TURNTABLE_AT: Vec3 = Vec3::new(-34.0, PLAZA_TOP + 0.1, 32.0);
/// The turntable's angular speed (rad/s).
pub const TURNTABLE_SPIN: f32 = 0.5;
/// The character's start (its shape's centre).
pub const START: Vec3 = Vec3::new(-24.0, PLAZA_TOP + 0.92, 43.0);

fn cuboid(desc: &mut SceneDesc, min: Vec3, max: Vec3) {
    let s = desc.add_shape(ShapeDesc::Cuboid {
        half: (max - min) * 0.5,
    });
    desc.add_body(BodySpec::fixed(s, (max + min) * 0.5));
}

/// The course's level: the terrain scene's fixed bodies, the plaza, the stairs, the steep
/// slope, then the three crates (dynamic, 10 kg each).
#[must_use]
pub fn course_desc() -> SceneDesc {
    let mut desc = scenes::describe(SceneKind::Terrain);
    desc.bodies.retain(|b| b.motion == Motion::Fixed);
    // The plaza: x in [-60, -20], z in [20, 45], meeting the ramp's low end (z = 20, y = 3).
    cuboid(
        &mut desc,
        Vec3::new(-60.0, PLAZA_TOP - 2.0, 20.0),
        Vec3::new(-20.0, PLAZA_TOP, 45.0),
    );
    // Stairs rising towards -X from x = -44, z in [36, 40].
    for k in 0..STAIRS {
        #[allow(clippy::cast_precision_loss)]
        let (x, top) = (
            -44.0 - 0.5 * k as f32,
            PLAZA_TOP + STAIR_RISE * (k + 1) as f32,
        );
        cuboid(
            &mut desc,
            Vec3::new(-58.0, PLAZA_TOP - 1.0, 36.0),
            Vec3::new(x, top, 40.0),
        );
    }
    // The steep slope: a slab whose top face leaves the plaza at x = STEEP_FOOT_X rising
    // towards -X at STEEP_DEG, z in [22, 30].
    let rot = Quat::from_rotation_z(-STEEP_DEG.to_radians());
    let n = rot * Vec3::Y;
    let along = rot * Vec3::NEG_X;
    let foot = Vec3::new(STEEP_FOOT_X, PLAZA_TOP, 26.0);
    let slab = desc.add_shape(ShapeDesc::Cuboid {
        half: Vec3::new(4.0, 0.5, 4.0),
    });
    desc.add_body(BodySpec {
        rotation: rot,
        ..BodySpec::fixed(slab, foot + along * 4.0 - n * 0.5)
    });
    // Crates of 0.8 m, 10 kg (density 10 / 0.512), in the first leg's way.
    let crate_shape = desc.add_shape(ShapeDesc::Cuboid {
        half: Vec3::splat(0.4),
    });
    for at in [
        Vec3::new(-24.0, PLAZA_TOP + 0.4, 38.0),
        Vec3::new(-23.6, PLAZA_TOP + 0.4, 36.0),
        Vec3::new(-24.4, PLAZA_TOP + 0.4, 33.5),
    ] {
        desc.add_body(BodySpec {
            density: 10.0 / 0.512,
            ..BodySpec::dynamic(crate_shape, at)
        });
    }
    desc
}

/// The course built in a joule world.
#[derive(Clone, Debug)]
pub struct Course {
    /// The crates, in order.
    pub crates: Vec<BodyId>,
    /// The turntable (kinematic, spinning about +Y).
    pub turntable: BodyId,
}

/// Builds the course into `world` (which should have the scene's gravity).
pub fn build_course(world: &mut World) -> Result<Course, PhysicsError> {
    let desc = course_desc();
    let scene = scenes::build_desc(&desc, world)?;
    let turntable = world.create_body(&BodyDesc {
        angular_velocity: Vec3::Y * TURNTABLE_SPIN,
        ..BodyDesc::kinematic(Shape::cylinder(0.1, 2.5)?, TURNTABLE_AT)
    })?;
    Ok(Course {
        crates: scene.bodies,
        turntable,
    })
}

/// One leg of the script: walk towards `target` (its x and z) at `speed`, until within
/// 0.3 m or `timeout` seconds; then stand still for `wait` seconds.
#[derive(Clone, Copy, Debug)]
pub struct Leg {
    /// What the leg shows.
    pub name: &'static str,
    /// Where it heads (y ignored).
    pub target: Vec3,
    /// Walking speed (m/s).
    pub speed: f32,
    /// Seconds before giving up.
    pub timeout: f32,
    /// Seconds to stand still after arriving (riding the turntable).
    pub wait: f32,
    /// Whether the character is meant to arrive.
    pub reachable: bool,
}

/// The script, in order.
#[must_use]
pub fn legs() -> Vec<Leg> {
    let leg = |name, x, z, timeout| Leg {
        name,
        target: Vec3::new(x, 0.0, z),
        speed: 2.5,
        timeout,
        wait: 0.0,
        reachable: true,
    };
    vec![
        leg("push the crates", -24.0, 30.0, 10.0),
        leg("to the ramp", -30.0, 21.0, 10.0),
        leg("up the ramp", -30.0, 4.0, 10.0),
        leg("down the ramp", -30.0, 21.5, 10.0),
        Leg {
            wait: 6.0,
            ..leg("onto the turntable", -33.0, 32.0, 10.0)
        },
        leg("to the stairs", -43.0, 38.0, 10.0),
        leg("up the stairs", -50.0, 38.0, 10.0),
        leg("down the stairs", -42.0, 38.0, 10.0),
        leg("to the steep slope", -44.0, 26.0, 10.0),
        Leg {
            reachable: false,
            ..leg("into the steep slope", -52.0, 26.0, 4.0)
        },
        leg("home", -24.0, 43.0, 20.0),
    ]
}

/// How one leg went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegReport {
    /// Whether the character arrived.
    pub reached: bool,
    /// Seconds walking.
    pub seconds: f32,
    /// The highest the character's centre got (m).
    pub highest: f32,
    /// Frames it was not grounded.
    pub airborne: usize,
    /// During the wait: the largest distance from where it stood, in the turntable's
    /// frame (m).
    pub ride_drift: f32,
}

/// The scripted walk in progress.
#[derive(Debug)]
pub struct Walker {
    /// The character.
    pub character: CharacterController,
    legs: Vec<Leg>,
    leg: usize,
    time: f32,
    waiting: Option<(f32, Vec3)>,
    /// One report per finished leg.
    pub reports: Vec<LegReport>,
    current: LegReport,
}

impl Walker {
    /// A walker at [`START`] with the default character and its own body (so it shows in
    /// recordings and crates land on it).
    pub fn new(world: &mut World) -> Result<Walker, PhysicsError> {
        let mut character = CharacterController::new(CharacterDesc::default(), START)
            .expect("the default character is valid");
        character.attach_body(world)?;
        Ok(Walker {
            character,
            legs: legs(),
            leg: 0,
            time: 0.0,
            waiting: None,
            reports: Vec::new(),
            current: fresh(),
        })
    }

    /// Whether every leg is done.
    #[must_use]
    pub fn done(&self) -> bool {
        self.leg >= self.legs.len()
    }

    /// The input for the next update, advancing the script by `dt`.
    pub fn input(&mut self, world: &World, course: &Course, dt: f32) -> CharacterInput {
        let Some(leg) = self.legs.get(self.leg).copied() else {
            return CharacterInput::default();
        };
        let p = self.character.position();
        self.current.highest = self.current.highest.max(p.y);
        if self.character.ground().state != GroundState::Grounded {
            self.current.airborne += 1;
        }
        if let Some((left, spot)) = self.waiting {
            let local = turntable_local(world, course, p);
            self.current.ride_drift = self.current.ride_drift.max((local - spot).length());
            if left <= 0.0 {
                self.finish();
            } else {
                self.waiting = Some((left - dt, spot));
            }
            return CharacterInput::default();
        }
        self.time += dt;
        let to = Vec3::new(leg.target.x - p.x, 0.0, leg.target.z - p.z);
        let arrived = to.length() < 0.3;
        if arrived || self.time > leg.timeout {
            self.current.reached = arrived;
            self.current.seconds = self.time;
            if arrived && leg.wait > 0.0 {
                self.waiting = Some((leg.wait, turntable_local(world, course, p)));
            } else {
                self.finish();
            }
            return CharacterInput::default();
        }
        CharacterInput {
            velocity: to.normalize() * leg.speed.min(to.length() / dt),
            ..CharacterInput::default()
        }
    }

    fn finish(&mut self) {
        self.reports.push(self.current);
        self.current = fresh();
        self.leg += 1;
        self.time = 0.0;
        self.waiting = None;
    }

    /// The script's legs.
    #[must_use]
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }
}

fn fresh() -> LegReport {
    LegReport {
        reached: false,
        seconds: 0.0,
        highest: f32::MIN,
        airborne: 0,
        ride_drift: 0.0,
    }
}

fn turntable_local(world: &World, course: &Course, p: Vec3) -> Vec3 {
    world
        .transform(course.turntable)
        .map_or(p, |t| Vec3::from(t.inverse_transform_point(Vec3A::from(p))))
}

/// Steps `world` and updates the walker until the script ends (or `max_steps`), calling
/// `each` after every update.
pub fn run_course(
    world: &mut World,
    course: &Course,
    walker: &mut Walker,
    max_steps: usize,
    mut each: impl FnMut(&World),
) {
    let dt = scenes::DT;
    for _ in 0..max_steps {
        if walker.done() {
            break;
        }
        world.step(dt);
        let input = walker.input(world, course, dt);
        update_characters(
            world,
            std::slice::from_mut(&mut walker.character),
            &[input],
            dt,
            &QueryFilter::default(),
        )
        .expect("the script's input is finite");
        each(world);
    }
}
