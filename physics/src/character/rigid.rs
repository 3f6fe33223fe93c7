//! The rigid-body character (see [`RigidCharacter`]).

use crate::body::mass::MassSpec;
use crate::body::{BodyDesc, BodyId, LockedAxes};
use crate::character::desc::{
    CharacterError, CharacterGround, CharacterInput, GroundState, check, check_vector,
};
use crate::character::slide::horizontal;
use crate::collision::query::QueryFilter;
use crate::collision::shape_query::ShapeContact;
use crate::math::Vec3;
use crate::shape::Shape;
use crate::world::World;

/// How far below the shape the ground probe reaches (m).
const PROBE: f32 = 0.05;

/// A rigid-body character's settings. `Default`: the kinematic controller's capsule
/// (half height 0.6, radius 0.3), 70 kg, 45° slopes, 40 m/s² of grip on the ground and
/// 5 m/s² in the air.
#[derive(Clone, Debug)]
pub struct RigidCharacterDesc {
    /// The body's shape, convex (a capsule typically), upright along +Y.
    pub shape: Shape,
    /// Mass (kg, positive).
    pub mass: f32,
    /// The steepest slope it walks up (rad, in `[0, π/2)`).
    pub max_slope: f32,
    /// How fast it can change its velocity on the ground (m/s², at least 0).
    pub max_acceleration: f32,
    /// The same in the air (m/s², at least 0).
    pub air_acceleration: f32,
}

impl Default for RigidCharacterDesc {
    fn default() -> Self {
        RigidCharacterDesc {
            shape: Shape::capsule(0.6, 0.3).expect("a positive capsule"),
            mass: 70.0,
            max_slope: std::f32::consts::FRAC_PI_4,
            max_acceleration: 40.0,
            air_acceleration: 5.0,
        }
    }
}

/// A rigid-body character (Jolt's `Character`): a dynamic capsule the solver moves, for
/// games that want the character to weigh on what it stands on and be shoved by the
/// world. It trades the kinematic controller's exact control (steps, stick to ground,
/// exact platform riding) for physical interaction.
///
/// Each [`RigidCharacter::update`], called before [`World::step`]:
/// - probes the ground with [`collide_shape`](crate::query::SceneQuery::collide_shape)
///   (contacts within 5 cm below, each with its own normal) as the kinematic controller
///   does;
/// - steers the body's velocity relative to the ground towards the commanded one along
///   the ground plane, with at most [`RigidCharacterDesc::max_acceleration`] (the
///   body's friction is 0 so walls do not hold it; this is its grip);
/// - on walkable ground, adds a force that cancels gravity's pull along the slope, so it
///   stands on slopes without creeping; jumps set the vertical speed.
///
/// Rotation: the body's three rotations are locked ([`LockedAxes::ROTATION`]), so no
/// shove, slope or edge tips it: its orientation keeps its bits for its whole life.
#[derive(Clone, Debug)]
pub struct RigidCharacter {
    desc: RigidCharacterDesc,
    body: BodyId,
    cos_max_slope: f32,
    ground: CharacterGround,
    contacts: Vec<ShapeContact>,
}

impl RigidCharacter {
    /// Creates the character's body in `world` with its shape's centre at `position`.
    pub fn new(
        world: &mut World,
        desc: RigidCharacterDesc,
        position: Vec3,
    ) -> Result<RigidCharacter, CharacterError> {
        if desc.shape.as_convex().is_none() {
            return Err(CharacterError::ShapeNotConvex);
        }
        check_vector(position, "position")?;
        check(
            desc.mass.is_finite() && desc.mass > 0.0,
            "mass",
            "finite and > 0 kg",
            desc.mass,
        )?;
        let s = desc.max_slope;
        check(
            s.is_finite() && (0.0..std::f32::consts::FRAC_PI_2).contains(&s),
            "max_slope",
            "in [0, pi/2) rad",
            s,
        )?;
        for (x, field) in [
            (desc.max_acceleration, "max_acceleration"),
            (desc.air_acceleration, "air_acceleration"),
        ] {
            check(x.is_finite() && x >= 0.0, field, "finite and >= 0 m/s^2", x)?;
        }
        let body = world
            .create_body(&BodyDesc {
                mass: MassSpec::Mass(desc.mass),
                locked_axes: LockedAxes::ROTATION,
                friction: 0.0,
                allow_sleep: false,
                ..BodyDesc::dynamic(desc.shape.clone(), position)
            })
            .map_err(CharacterError::Body)?;
        let (_, cos) = crate::math::sin_cos(desc.max_slope);
        Ok(RigidCharacter {
            desc,
            body,
            cos_max_slope: cos,
            ground: CharacterGround {
                normal: Vec3::Y,
                ..CharacterGround::default()
            },
            contacts: Vec::with_capacity(32),
        })
    }

    /// The character's body.
    #[must_use]
    pub fn body(&self) -> BodyId {
        self.body
    }

    /// The ground found by the last update.
    #[must_use]
    pub fn ground(&self) -> &CharacterGround {
        &self.ground
    }

    /// Probes the ground and steers the body for the next step of `dt` seconds; call it
    /// before [`World::step`]. Fails if the body was removed.
    pub fn update(
        &mut self,
        world: &mut World,
        dt: f32,
        input: &CharacterInput,
    ) -> Result<(), CharacterError> {
        check(dt.is_finite() && dt > 0.0, "dt", "finite and > 0 s", dt)?;
        check_vector(input.velocity, "input.velocity")?;
        check(
            input.jump_speed.is_finite() && input.jump_speed >= 0.0,
            "input.jump_speed",
            "finite and >= 0 m/s",
            input.jump_speed,
        )?;
        let pose = world.transform(self.body).map_err(CharacterError::Body)?;
        self.probe(world, pose);
        let up = Vec3::Y;
        let v = world
            .linear_velocity(self.body)
            .map_err(CharacterError::Body)?;
        let grounded = self.ground.state == GroundState::Grounded;
        let walk = horizontal(input.velocity, up);
        let (relative, target, accel) = if grounded {
            let n = self.ground.normal;
            let along = walk - up * (walk.dot(n) / n.dot(up));
            (v - self.ground.velocity, along, self.desc.max_acceleration)
        } else {
            (horizontal(v, up), walk, self.desc.air_acceleration)
        };
        let mut dv = target - relative;
        dv = if grounded {
            // Along the ground only: the contact handles the normal direction.
            let n = self.ground.normal;
            dv - n * dv.dot(n)
        } else {
            horizontal(dv, up)
        };
        let most = accel * dt;
        if dv.length() > most {
            dv *= most / dv.length();
        }
        let mut new_v = v + dv;
        if grounded && input.jump_speed > 0.0 {
            new_v = horizontal(new_v, up) + up * input.jump_speed;
        } else if grounded {
            // Cancel gravity's pull along the ground for the coming step.
            let g = world.desc().gravity;
            let n = self.ground.normal;
            let along = g - n * g.dot(n);
            world
                .add_force(self.body, -along * self.desc.mass)
                .map_err(CharacterError::Body)?;
        }
        world
            .set_linear_velocity(self.body, new_v)
            .map_err(CharacterError::Body)?;
        Ok(())
    }

    fn probe(&mut self, world: &World, pose: crate::math::Isometry) {
        let own = self.body;
        let not_own = move |id: BodyId| id != own;
        let filter = QueryFilter {
            predicate: Some(&not_own),
            ..QueryFilter::default()
        };
        let mut contacts = std::mem::take(&mut self.contacts);
        world.collide_shape(&self.desc.shape, pose, PROBE, &filter, &mut contacts);
        let best = contacts
            .iter()
            .filter(|c| c.normal.y >= self.cos_max_slope)
            .max_by(|a, b| a.normal.y.total_cmp(&b.normal.y))
            .copied();
        self.contacts = contacts;
        self.ground = match best {
            Some(c) => CharacterGround {
                state: GroundState::Grounded,
                normal: c.normal,
                body: Some(c.body),
                point: c.point,
                velocity: body_point_velocity(world, c.body, c.point),
            },
            None => CharacterGround {
                normal: Vec3::Y,
                ..CharacterGround::default()
            },
        };
    }
}

fn body_point_velocity(world: &World, id: BodyId, p: Vec3) -> Vec3 {
    let (Ok(v), Ok(w), Ok(c)) = (
        world.linear_velocity(id),
        world.angular_velocity(id),
        world.center_of_mass(id),
    ) else {
        return Vec3::ZERO;
    };
    v + w.cross(p - c)
}
