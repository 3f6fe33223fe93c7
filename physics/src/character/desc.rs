//! A character's settings, its input, what it reports, and its errors.

use crate::body::BodyId;
use crate::math::Vec3;
use crate::shape::Shape;

/// A character's settings. `Default`: a capsule 1.8 m tall (half height 0.6, radius
/// 0.3), up +Y, 45° maximum slope, 0.35 m steps, 2 cm skin, 70 kg, pushing with at most
/// 1 kN.
#[derive(Clone, Debug)]
pub struct CharacterDesc {
    /// The character's shape, convex (a capsule typically), kept upright along `up`: a
    /// capsule's or cylinder's axis (local Y) points along `up`.
    pub shape: Shape,
    /// The up direction (any non-zero vector; normalised). Gravity is the world's.
    pub up: Vec3,
    /// The steepest slope it walks up (rad, in `[0, π/2)`); steeper ground blocks it and
    /// it slides down.
    pub max_slope: f32,
    /// The highest step it climbs (m, at least 0).
    pub step_height: f32,
    /// How far down it follows the ground after walking off a step or over a crest (m,
    /// at least 0); farther, it falls.
    pub stick_to_ground: f32,
    /// The gap kept between the shape and what it touches (m, positive): it never rests
    /// in penetration, and casts start clear of the ground.
    pub skin: f32,
    /// The character's mass (kg, positive), for the impulses it gives dynamic bodies.
    pub mass: f32,
    /// The largest force it pushes a dynamic body with (N, at least 0; 0 never pushes).
    pub max_push_force: f32,
    /// Multiplies the world's gravity for the character (finite).
    pub gravity_scale: f32,
    /// Sweeps per move before the rest of it is dropped (at least 1).
    pub max_slide_iterations: u32,
    /// Whether dynamic bodies moving into the character push it (by their velocity along
    /// the contact normal, swept so it is not pushed through walls).
    pub pushed_by_bodies: bool,
}

impl Default for CharacterDesc {
    fn default() -> Self {
        CharacterDesc {
            shape: Shape::capsule(0.6, 0.3).expect("a positive capsule"),
            up: Vec3::Y,
            max_slope: std::f32::consts::FRAC_PI_4,
            step_height: 0.35,
            stick_to_ground: 0.35,
            skin: 0.02,
            mass: 70.0,
            max_push_force: 1000.0,
            gravity_scale: 1.0,
            max_slide_iterations: 6,
            pushed_by_bodies: false,
        }
    }
}

/// Why a character could not be made or updated. Nothing changes when one is returned.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CharacterError {
    /// A setting or input was out of its range: `field` names it, `expected` says what
    /// it must be, `actual` what it was. Fix the value in the desc or the call.
    OutOfRange {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was (a vector's first non-finite component, or its length).
        actual: f32,
    },
    /// The shape is not convex (a half-space, mesh, heightfield or compound). Use a
    /// capsule, sphere, box, cylinder or convex hull.
    ShapeNotConvex,
    /// The world refused a request about the character's body (it was removed, or its
    /// description was refused); the inner error says which.
    Body(crate::error::PhysicsError),
}

impl std::fmt::Display for CharacterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CharacterError::OutOfRange {
                field,
                expected,
                actual,
            } => write!(f, "character: {field} must be {expected}, got {actual}"),
            CharacterError::Body(e) => write!(f, "character: its body: {e}"),
            CharacterError::ShapeNotConvex => write!(
                f,
                "character: shape must be convex (capsule, sphere, box, cylinder, hull), got a \
                 half-space, mesh, heightfield or compound"
            ),
        }
    }
}

impl std::error::Error for CharacterError {}

pub(crate) fn check(
    ok: bool,
    field: &'static str,
    expected: &'static str,
    actual: f32,
) -> Result<(), CharacterError> {
    if ok {
        Ok(())
    } else {
        Err(CharacterError::OutOfRange {
            field,
            expected,
            actual,
        })
    }
}

pub(crate) fn check_vector(v: Vec3, field: &'static str) -> Result<(), CharacterError> {
    let bad = v.to_array().into_iter().find(|x| !x.is_finite());
    check(bad.is_none(), field, "finite", bad.unwrap_or(0.0))
}

impl CharacterDesc {
    pub(crate) fn validate(&self) -> Result<(), CharacterError> {
        if self.shape.as_convex().is_none() {
            return Err(CharacterError::ShapeNotConvex);
        }
        check_vector(self.up, "up")?;
        let len = self.up.length();
        check(len > 1e-6, "up", "a non-zero vector (its length)", len)?;
        let s = self.max_slope;
        check(
            s.is_finite() && (0.0..std::f32::consts::FRAC_PI_2).contains(&s),
            "max_slope",
            "in [0, pi/2) rad",
            s,
        )?;
        let nonneg = |x: f32| x.is_finite() && x >= 0.0;
        check(
            nonneg(self.step_height),
            "step_height",
            "finite and >= 0 m",
            self.step_height,
        )?;
        check(
            nonneg(self.stick_to_ground),
            "stick_to_ground",
            "finite and >= 0 m",
            self.stick_to_ground,
        )?;
        check(
            self.skin.is_finite() && self.skin > 0.0,
            "skin",
            "finite and > 0 m",
            self.skin,
        )?;
        check(
            self.mass.is_finite() && self.mass > 0.0,
            "mass",
            "finite and > 0 kg",
            self.mass,
        )?;
        check(
            nonneg(self.max_push_force),
            "max_push_force",
            "finite and >= 0 N",
            self.max_push_force,
        )?;
        check(
            self.gravity_scale.is_finite(),
            "gravity_scale",
            "finite",
            self.gravity_scale,
        )?;
        #[allow(clippy::cast_precision_loss)]
        check(
            self.max_slide_iterations >= 1,
            "max_slide_iterations",
            ">= 1",
            self.max_slide_iterations as f32,
        )
    }
}

/// What the game asks of the character for one update.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CharacterInput {
    /// The desired walking velocity (m/s); its part along `up` is ignored. On walkable
    /// ground the character follows the ground at this horizontal velocity (plus the
    /// ground's own motion); in the air it moves at it horizontally.
    pub velocity: Vec3,
    /// An upward speed (m/s) to leave the ground with; used only when grounded, 0 for
    /// none.
    pub jump_speed: f32,
}

/// Whether the character stands on something.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroundState {
    /// On walkable ground (within the maximum slope).
    Grounded,
    /// Touching only ground steeper than the maximum slope: it slides down.
    OnSteepGround,
    /// Touching no ground.
    #[default]
    InAir,
}

/// The ground under the character after an update.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CharacterGround {
    /// Grounded, on steep ground, or in the air.
    pub state: GroundState,
    /// The ground's unit normal (the walkable face's for a ledge); `up` in the air.
    pub normal: Vec3,
    /// The body stood on (`None` in the air).
    pub body: Option<BodyId>,
    /// The contact point on the ground (world).
    pub point: Vec3,
    /// The ground's velocity at that point (m/s): its linear velocity plus its angular
    /// velocity crossed with the lever from its centre of mass.
    pub velocity: Vec3,
}

/// An impulse the character gives a dynamic body it walked into (applied by
/// [`CharacterController::update`](crate::character::CharacterController::update) and [`update_characters`](crate::character::update_characters)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterPush {
    /// The body pushed.
    pub body: BodyId,
    /// The impulse (N·s).
    pub impulse: Vec3,
    /// Where it acts (world).
    pub point: Vec3,
}
