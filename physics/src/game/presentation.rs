//! What the game draws: every body's pose between the last two steps, or beyond the last.
//!
//! Two buffers of samples indexed by body slot, `previous` and `current`; [`record`]
//! swaps them and overwrites `current` from the world, so reading never waits and, once
//! the buffers have grown to the world's slot count, recording never allocates. A sample
//! holds the body's id (its generation tells a reused slot from the same body), pose,
//! centre of mass, velocities and [`teleport_count`]. Between two samples of the same body
//! with the same teleport count the pose is interpolated (translation linearly, rotation
//! by shortest-arc [`slerp`]); otherwise the body jumped, or is new, and the latest pose
//! is shown as it is.
//!
//! A step run beside the game ([`World::step_async`]) borrows the world, not the
//! presentation: the game reads the last finished pair while the step runs (no lock, no
//! allocation: it is the game's own object) and records once the step's handle is
//! finished.
//!
//! [`record`]: Presentation::record
//! [`teleport_count`]: crate::world::World::teleport_count
//! [`slerp`]: crate::math::slerp
//! [`World::step_async`]: crate::world::World::step_async

use crate::body::BodyId;
use crate::error::PhysicsError;
use crate::math::{Isometry, Quat, Vec3, Vec3A};
use crate::math::{quat_mul, quat_normalize, rotate};
use crate::world::World;

/// One body after one step.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// `None` for a slot with no live body.
    id: Option<BodyId>,
    pose: Isometry,
    center_of_mass: Vec3A,
    linear_velocity: Vec3A,
    angular_velocity: Vec3A,
    teleports: u32,
}

const EMPTY: Sample = Sample {
    id: None,
    pose: Isometry::IDENTITY,
    center_of_mass: Vec3A::ZERO,
    linear_velocity: Vec3A::ZERO,
    angular_velocity: Vec3A::ZERO,
    teleports: 0,
};

/// The poses and velocities of every body after the last two recorded steps, to draw each
/// body at the fraction `alpha` between them (see the [module header](self)).
///
/// ```
/// use joule_physics::prelude::*;
///
/// let desc = WorldDesc { gravity: Vec3::ZERO, ..WorldDesc::default() };
/// let mut world = World::new(desc, JobSystem::new(0)?);
/// let id = world.create_body(
///     &BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::ZERO).linear_velocity(Vec3::X * 6.0),
/// )?;
/// let mut presentation = Presentation::new();
/// for _ in 0..2 {
///     world.step(0.1);
///     presentation.record(&world);
/// }
/// // The steps left it at x = 0.6 and 1.2: a quarter of the way is 0.75.
/// let x = presentation.pose(id, 0.25)?.translation.x;
/// assert!((x - 0.75).abs() < 1e-5, "x = {x}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Presentation {
    previous: Vec<Sample>,
    current: Vec<Sample>,
    len: usize,
    records: u64,
}

impl Presentation {
    /// An empty presentation: [`record`](Self::record) the world after each step.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the world's state as the latest step, the one before becoming the previous.
    /// Call it after every step ([`FixedStep::frame`](super::FixedStep::frame) does).
    /// Allocates only while the world's slot count grows past what it has seen.
    pub fn record(&mut self, world: &World) {
        std::mem::swap(&mut self.previous, &mut self.current);
        for sample in &mut self.current {
            sample.id = None;
        }
        let mut len = 0;
        for body in world.bodies() {
            let slot = body.id().index() as usize;
            if slot >= self.current.len() {
                self.current.resize(slot + 1, EMPTY);
            }
            self.current[slot] = Sample {
                id: Some(body.id()),
                pose: body.transform(),
                center_of_mass: body.center_of_mass().into(),
                linear_velocity: body.linear_velocity().into(),
                angular_velocity: body.angular_velocity().into(),
                teleports: body.teleport_count(),
            };
            len += 1;
        }
        self.len = len;
        self.records += 1;
    }

    /// How many times [`record`](Self::record) was called.
    #[must_use]
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bodies in the latest record.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the latest record holds no body (or nothing was recorded).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The body's pose at `alpha` between the last two steps: 0 is the previous step, 1
    /// the latest (values outside extrapolate along the same line and arc). A body
    /// teleported between them, created in the latest step, or seen in one record only,
    /// is at its latest pose for every `alpha`.
    /// [`PhysicsError::NotPresented`] if the body is not in the latest record.
    pub fn pose(&self, id: BodyId, alpha: f32) -> Result<Isometry, PhysicsError> {
        let current = self.latest_sample(id)?;
        Ok(self.present(current, alpha))
    }

    /// The body's pose in the latest record.
    pub fn latest(&self, id: BodyId) -> Result<Isometry, PhysicsError> {
        Ok(self.latest_sample(id)?.pose)
    }

    /// The body's pose `t` seconds after the latest step, moved by its latest velocities
    /// as a free rigid body (the centre of mass along the linear velocity, the body turned
    /// about it by the angular velocity). No lag, unlike [`pose`](Self::pose), but it
    /// overshoots where the velocity is about to change (a bounce, a collision).
    pub fn extrapolated(&self, id: BodyId, t: f32) -> Result<Isometry, PhysicsError> {
        let s = self.latest_sample(id)?;
        let turn = Quat::from_scaled_axis((s.angular_velocity * t).into());
        let center = s.center_of_mass + s.linear_velocity * t;
        Ok(Isometry::new(
            center + rotate(turn, s.pose.translation - s.center_of_mass),
            quat_normalize(quat_mul(turn, s.pose.rotation)),
        ))
    }

    /// The body's linear velocity (of its centre of mass, m/s) in the latest record.
    pub fn linear_velocity(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.latest_sample(id)?.linear_velocity.into())
    }

    /// The body's angular velocity (rad/s, world axes) in the latest record.
    pub fn angular_velocity(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.latest_sample(id)?.angular_velocity.into())
    }

    /// Every body of the latest record with its pose at `alpha` (as [`pose`](Self::pose)),
    /// in body order, without allocating.
    #[must_use]
    pub fn iter(&self, alpha: f32) -> PresentedPoses<'_> {
        PresentedPoses {
            presentation: self,
            slot: 0,
            alpha,
        }
    }

    fn latest_sample(&self, id: BodyId) -> Result<&Sample, PhysicsError> {
        match self.current.get(id.index() as usize) {
            Some(s) if s.id == Some(id) => Ok(s),
            _ => Err(PhysicsError::NotPresented(id)),
        }
    }

    /// `current` at `alpha`, from the previous sample of the same body if it did not jump.
    fn present(&self, current: &Sample, alpha: f32) -> Isometry {
        let slot = current.id.map_or(usize::MAX, |id| id.index() as usize);
        match self.previous.get(slot) {
            Some(previous)
                if previous.id == current.id && previous.teleports == current.teleports =>
            {
                previous.pose.slerp(&current.pose, alpha)
            }
            _ => current.pose,
        }
    }
}

/// Every presented body and its pose: see [`Presentation::iter`].
#[derive(Clone, Debug)]
pub struct PresentedPoses<'p> {
    presentation: &'p Presentation,
    slot: usize,
    alpha: f32,
}

impl Iterator for PresentedPoses<'_> {
    type Item = (BodyId, Isometry);

    fn next(&mut self) -> Option<(BodyId, Isometry)> {
        while let Some(sample) = self.presentation.current.get(self.slot) {
            self.slot += 1;
            if let Some(id) = sample.id {
                return Some((id, self.presentation.present(sample, self.alpha)));
            }
        }
        None
    }
}
