//! Bodies: generational ids, descriptors, and storage split hot and cold.
//!
//! Storage follows Box2D v3's solver sets. The cold record (`Body`: shape, material,
//! filter, user data) lives in one array indexed by [`BodyId::index`]. The hot record
//! (`BodySim`: transform, centre of mass, velocities, inverse mass) lives in the array of
//! the *set* the body belongs to:
//!
//! ```text
//!   set 0: static bodies        never visited by the step
//!   set 1: awake bodies         the only set the step iterates (dense, cache friendly)
//!   set 2..: one per sleeping island, parked until something wakes the island
//! ```
//!
//! Moving a body between sets is a swap-remove from one dense array and a push onto
//! another; the cold record remembers `(set, local)` so lookups by id stay O(1). A step
//! therefore costs in proportion to the awake bodies, never the static or sleeping ones.
//!
//! Ids carry a generation that is bumped when a slot is freed, so an id kept after its
//! body was removed is detected ([`PhysicsError::StaleBodyId`]) instead of silently
//! naming the slot's next occupant. Free slots are reused last-in first-out, so the ids a
//! sequence of operations produces depend only on that sequence (determinism).

pub mod builder;
pub mod filter;
pub mod locked_axes;
pub mod mass;

use crate::body::filter::{CollisionFilter, ObjectLayer};
pub use crate::body::locked_axes::LockedAxes;
use crate::body::mass::MassSpec;
use crate::error::PhysicsError;
use crate::geometry::dynamic_tree::ProxyId;
use crate::material::{MaterialId, SurfaceMaterial};
use crate::math::quat_dot;
use crate::math::{Isometry, Mat3A, Quat, Vec3, Vec3A};
use crate::shape::{MassProperties, Shape, Sphere};

/// Which tree a proxy lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProxyKind {
    /// Static bodies.
    Static,
    /// Dynamic and kinematic bodies.
    Moving,
}

/// A body's broad-phase handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BroadPhaseProxy {
    /// The tree.
    pub kind: ProxyKind,
    /// The leaf in that tree.
    pub id: ProxyId,
}

/// A handle to a body: slot index plus generation. Small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId {
    index: u32,
    generation: u32,
}

/// `body 2 (generation 0)`: the slot index and the generation, as error messages show
/// an id.
impl std::fmt::Display for BodyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "body {} (generation {})", self.index, self.generation)
    }
}

impl BodyId {
    /// The id of slot `index` at `generation` (for restoring saved state).
    pub(crate) fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The slot index (dense, reused after removal).
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The slot's generation when this id was issued.
    #[must_use]
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// How a body moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MotionType {
    /// Never moves; infinite mass. Costs nothing per step. Made by [`BodyDesc::fixed`]
    /// (Rapier's name; formerly `MotionType::Static`, still accepted).
    Fixed,
    /// Moved by its velocity only (set by the user); infinite mass, pushes dynamic bodies.
    Kinematic,
    /// Moved by forces, gravity and contacts.
    #[default]
    Dynamic,
}

impl MotionType {
    /// The old name of [`MotionType::Fixed`], kept so that code written against it still
    /// compiles, in expressions and in patterns.
    #[allow(non_upper_case_globals)]
    #[deprecated(note = "renamed `MotionType::Fixed`, as `BodyDesc::fixed` makes it")]
    pub const Static: MotionType = MotionType::Fixed;
}

/// How a moving body's motion is checked for tunnelling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MotionQuality {
    /// Positions are checked at the end of each step only; fast thin objects may tunnel.
    #[default]
    Discrete,
    /// A fast body is swept from its old to its new pose (continuous collision detection).
    LinearCast,
}

/// Everything needed to create a body. `Default` gives a dynamic sphere of
/// radius 0.5 at the origin, density 1000, friction 0.5, restitution 0.
#[derive(Clone, Debug)]
pub struct BodyDesc {
    /// Collision shape (shared cheaply: hulls are behind an `Arc`).
    pub shape: Shape,
    /// Static, kinematic or dynamic.
    pub motion_type: MotionType,
    /// Position of the body's origin (the shape's local origin) in world space.
    pub position: Vec3,
    /// Orientation; must be a unit quaternion.
    pub rotation: Quat,
    /// Initial linear velocity of the centre of mass (m/s).
    pub linear_velocity: Vec3,
    /// Initial angular velocity (rad/s, world axes).
    pub angular_velocity: Vec3,
    /// Density in kg/m³, used for dynamic bodies' mass and inertia when `mass` is
    /// [`MassSpec::FromShape`].
    pub density: f32,
    /// Where a dynamic body's mass, inertia and centre of mass come from (default: the
    /// shape and `density`). See [`crate::body::mass`].
    pub mass: MassSpec,
    /// Moves the centre of mass by this offset (body axes) from where `mass` puts it; the
    /// inertia follows by the parallel-axis theorem. Zero by default.
    pub center_of_mass_offset: Vec3,
    /// A body without a collision shape: `shape` is ignored, nothing collides with it and
    /// queries never hit it (an anchor for joints). A dynamic one needs
    /// [`MassSpec::Properties`].
    pub shapeless: bool,
    /// Friction coefficient (>= 0).
    pub friction: f32,
    /// Restitution (bounciness) in [0, 1].
    pub restitution: f32,
    /// Rolling resistance as a length (m, >= 0; 0 by default): contacts resist rolling
    /// with a torque up to this times the normal force (`torque = b N`, the textbook
    /// coefficient of rolling friction; a ball of radius `r` slows at `(5/7) (b / r) g`).
    /// A contact takes the larger of its two bodies' values.
    pub rolling_friction: f32,
    /// Spinning (torsional) resistance as a length (m, >= 0; 0 by default): contacts
    /// resist turning about their normal with a torque up to this times the normal force.
    /// A contact takes the larger of its two bodies' values.
    pub spinning_friction: f32,
    /// Material id, the key of the world's per-material-pair table
    /// ([`crate::material::MaterialMixing`]); with no entry for a pair, the friction and
    /// restitution above are mixed by the world's rules.
    pub material: MaterialId,
    /// Linear damping per second (>= 0).
    pub linear_damping: f32,
    /// Angular damping per second (>= 0).
    pub angular_damping: f32,
    /// Multiplies the world's gravity for this body.
    pub gravity_scale: f32,
    /// Largest linear speed the integrator allows (m/s).
    pub max_linear_speed: f32,
    /// Largest angular speed the integrator allows (rad/s).
    pub max_angular_speed: f32,
    /// A sensor reports overlaps but never pushes or is pushed.
    pub is_sensor: bool,
    /// Object layer (index into the world's layer table).
    pub layer: ObjectLayer,
    /// Group and mask bits.
    pub filter: CollisionFilter,
    /// Whether the body may fall asleep when it comes to rest.
    pub allow_sleep: bool,
    /// Tunnelling protection.
    pub motion_quality: MotionQuality,
    /// World axes a dynamic body may not translate along or rotate about (none by
    /// default; see [`LockedAxes`]).
    pub locked_axes: LockedAxes,
    /// Free for the user (an entity id, say).
    pub user_data: u64,
    /// Contact force events: a contact of this body reports a
    /// [`ContactForceEvent`](crate::events::ContactForceEvent) for every step in which its
    /// average normal force (the pair's total normal impulse over the step divided by the
    /// step) exceeds this many newtons (>= 0, not NaN). A pair uses the lower of its two
    /// bodies' thresholds. `f32::INFINITY`, the default, reports none.
    pub contact_force_threshold: f32,
}

impl Default for BodyDesc {
    fn default() -> Self {
        Self {
            shape: Shape::Sphere(Sphere { radius: 0.5 }),
            motion_type: MotionType::Dynamic,
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            density: 1000.0,
            mass: MassSpec::FromShape,
            center_of_mass_offset: Vec3::ZERO,
            shapeless: false,
            friction: 0.5,
            restitution: 0.0,
            rolling_friction: 0.0,
            spinning_friction: 0.0,
            material: MaterialId::DEFAULT,
            linear_damping: 0.0,
            angular_damping: 0.0,
            gravity_scale: 1.0,
            max_linear_speed: 500.0,
            max_angular_speed: 0.25 * std::f32::consts::PI * 60.0,
            is_sensor: false,
            layer: 0,
            filter: CollisionFilter::default(),
            allow_sleep: true,
            motion_quality: MotionQuality::Discrete,
            locked_axes: LockedAxes::empty(),
            user_data: 0,
            contact_force_threshold: f32::INFINITY,
        }
    }
}

impl BodyDesc {
    /// A dynamic body with `shape` at `position`.
    #[must_use]
    pub fn dynamic(shape: Shape, position: Vec3) -> Self {
        Self {
            shape,
            position,
            ..Self::default()
        }
    }

    /// A static body with `shape` at `position`.
    #[must_use]
    pub fn fixed(shape: Shape, position: Vec3) -> Self {
        Self {
            shape,
            position,
            motion_type: MotionType::Fixed,
            ..Self::default()
        }
    }

    /// A static body with no shape at `position`, unrotated: an anchor for joints, never
    /// collided with or hit by queries. [`BodyDesc::anchor_at`] gives it a rotation too
    /// (a joint frame given in the anchor's local axes turns with it).
    #[must_use]
    pub fn anchor(position: Vec3) -> Self {
        Self {
            position,
            motion_type: MotionType::Fixed,
            shapeless: true,
            ..Self::default()
        }
    }

    /// A static body with no shape at `position`, turned by the unit `rotation`: an
    /// anchor for joints whose frames are given in its local axes.
    ///
    /// ```
    /// use joule_physics::prelude::*;
    ///
    /// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
    /// let tilt = Quat::from_rotation_z(0.3);
    /// let anchor = world.create_body(&BodyDesc::anchor_at(Vec3::new(0.0, 2.0, 0.0), tilt))?;
    /// assert_eq!(world.body(anchor)?.rotation(), tilt);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn anchor_at(position: Vec3, rotation: Quat) -> Self {
        Self {
            rotation,
            ..Self::anchor(position)
        }
    }

    /// A dynamic body with no shape at `position`, moved only by gravity, forces and
    /// (later) joints, with the given mass properties.
    #[must_use]
    pub fn shapeless(position: Vec3, mass: MassProperties) -> Self {
        Self {
            position,
            shapeless: true,
            mass: MassSpec::Properties(mass),
            ..Self::default()
        }
    }

    /// A kinematic body with `shape` at `position`.
    #[must_use]
    pub fn kinematic(shape: Shape, position: Vec3) -> Self {
        Self {
            shape,
            position,
            motion_type: MotionType::Kinematic,
            ..Self::default()
        }
    }
}

/// Checks that a position is finite.
pub(crate) fn validate_position(p: Vec3) -> Result<(), PhysicsError> {
    if p.is_finite() {
        Ok(())
    } else {
        Err(PhysicsError::NonFinitePosition)
    }
}

/// Checks that a rotation is finite and of unit length.
pub(crate) fn validate_rotation(q: Quat) -> Result<(), PhysicsError> {
    if !q.is_finite() {
        return Err(PhysicsError::NonFiniteRotation);
    }
    if (quat_dot(q, q) - 1.0).abs() > 2e-3 {
        return Err(PhysicsError::NonNormalizedRotation);
    }
    Ok(())
}

/// Checks that a velocity-like vector is finite.
pub(crate) fn validate_vector(v: Vec3) -> Result<(), PhysicsError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(PhysicsError::NonFiniteVelocity)
    }
}

/// The set holding static bodies.
pub(crate) const STATIC_SET: u32 = 0;
/// The set holding awake (moving) bodies.
pub(crate) const AWAKE_SET: u32 = 1;
/// The first set index used for sleeping islands.
pub(crate) const FIRST_SLEEPING_SET: u32 = 2;

/// The cold part of a body: read when pairs are created, when materials mix, by queries.
#[derive(Clone, Debug)]
pub(crate) struct Body {
    pub generation: u32,
    pub alive: bool,
    /// Which set the hot record is in, and where.
    pub set: u32,
    pub local: u32,
    pub motion_type: MotionType,
    pub shape: Shape,
    /// Made without a shape ([`BodyDesc::shapeless`]): it never has a proxy, and `shape`
    /// is only what the description held.
    pub shapeless: bool,
    /// Where its mass comes from when it is (or becomes) dynamic, as given
    /// ([`BodyDesc::density`], [`BodyDesc::mass`], [`BodyDesc::center_of_mass_offset`]):
    /// kept so that a new motion type or shape recomputes the mass the way it was asked
    /// for, and so that `World::body_desc` reads them back.
    pub density: f32,
    pub mass_spec: MassSpec,
    pub center_of_mass_offset: Vec3A,
    /// Taken out of the simulation by `World::set_enabled`: its hot record waits in the
    /// static set (which no step visits), it has no proxy and no contacts, and joints to
    /// it are not solved; it keeps its id, velocities and joints for when it comes back.
    pub disabled: bool,
    /// Centre of mass in the body's local frame.
    pub local_center: Vec3A,
    pub mass: f32,
    pub friction: f32,
    pub restitution: f32,
    pub rolling_friction: f32,
    pub spinning_friction: f32,
    pub material: MaterialId,
    pub linear_damping: f32,
    pub angular_damping: f32,
    pub gravity_scale: f32,
    pub max_linear_speed: f32,
    pub max_angular_speed: f32,
    pub is_sensor: bool,
    pub layer: ObjectLayer,
    pub filter: CollisionFilter,
    pub allow_sleep: bool,
    pub motion_quality: MotionQuality,
    /// Locked world axes (see [`LockedAxes`]); read by the solver for dynamic bodies.
    pub locked_axes: LockedAxes,
    pub user_data: u64,
    /// Newtons above which the body's contacts report force events (`INFINITY`: none).
    pub contact_force_threshold: f32,
    /// Broad-phase proxy (none only while the body is being created).
    pub proxy: Option<BroadPhaseProxy>,
    /// Seconds the body has been slow enough to sleep.
    pub sleep_time: f32,
    /// Accumulated force and torque, applied and cleared by the next step.
    pub force: Vec3A,
    pub torque: Vec3A,
    /// Force and torque applied every step until changed (thrusters, wind).
    pub constant_force: Vec3A,
    pub constant_torque: Vec3A,
    /// Times the body was moved by hand (`World::teleport_count`): not state, so not in
    /// snapshots; a restore bumps it for every body.
    pub teleports: u32,
    /// Times the body's look was changed by hand (shape, motion type, sensor flag,
    /// enabled, friction, restitution, material): a recorder records it anew when it
    /// changes. Not state, so not in snapshots; a restore bumps it for every body.
    pub revision: u32,
}

impl Body {
    /// The body's own friction and restitution.
    #[inline]
    pub(crate) fn surface(&self) -> SurfaceMaterial {
        SurfaceMaterial {
            friction: self.friction,
            restitution: self.restitution,
        }
    }

    /// Whether it has a collision shape (it was not made shapeless).
    #[inline]
    pub(crate) fn has_shape(&self) -> bool {
        !self.shapeless
    }

    /// Its index in the awake set if the solver may move it (awake and dynamic).
    #[inline]
    pub(crate) fn solver_index(&self) -> Option<u32> {
        (self.set == AWAKE_SET && self.motion_type == MotionType::Dynamic).then_some(self.local)
    }

    /// Its index in the awake set if contacts and joints link it into an island (awake
    /// and not fixed: kinematic bodies link, static ones do not).
    #[inline]
    pub(crate) fn island_index(&self) -> Option<u32> {
        (self.set == AWAKE_SET && self.motion_type != MotionType::Fixed).then_some(self.local)
    }
}

/// The hot part of a body, dense per set: what the step reads and writes every frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodySim {
    /// Pose of the body's origin.
    pub transform: Isometry,
    /// World position of the centre of mass.
    pub center: Vec3A,
    /// Centre of mass at the start of the step (for CCD and sleep checks).
    pub center0: Vec3A,
    pub linear_velocity: Vec3A,
    pub angular_velocity: Vec3A,
    /// Rounding left over from the last velocity integration (Kahan's compensated sum):
    /// without it, adding `g h` to a growing velocity every substep rounds the same way
    /// each time and a free fall drifts 1.5e-4 m from the closed form in 2 s.
    pub velocity_carry: Vec3A,
    /// 0 for static and kinematic bodies.
    pub inv_mass: f32,
    /// Inverse inertia about the centre of mass in local axes (zero when not dynamic).
    pub inv_inertia_local: Mat3A,
    /// Centre of mass in the body's local frame (copied from the cold record).
    pub local_center: Vec3A,
    /// The body's slot index (to find the cold record).
    pub body: u32,
}

impl BodySim {
    /// Inverse inertia in world axes: R · I⁻¹ · Rᵀ.
    #[must_use]
    #[inline]
    pub fn inv_inertia_world(&self) -> Mat3A {
        let m = &self.inv_inertia_local;
        // A multiple of the identity (spheres and cubes) is the same in every frame:
        // R (k 1) Rᵀ = k 1, exactly, where the products would round.
        let k = m.x_axis.x;
        if m.y_axis.y == k
            && m.z_axis.z == k
            && [
                m.x_axis.y, m.x_axis.z, m.y_axis.x, m.y_axis.z, m.z_axis.x, m.z_axis.y,
            ] == [0.0; 6]
        {
            return *m;
        }
        let r = Mat3A::from_quat(self.transform.rotation);
        r * *m * r.transpose()
    }
}

/// A dense array of hot records.
#[derive(Clone, Debug, Default)]
pub(crate) struct BodySet {
    pub sims: Vec<BodySim>,
}

/// All bodies: cold records by slot, hot records by set.
#[derive(Clone, Debug)]
pub(crate) struct Bodies {
    pub bodies: Vec<Body>,
    pub(crate) free: Vec<u32>,
    pub sets: Vec<BodySet>,
    pub(crate) free_sets: Vec<u32>,
    pub(crate) live: usize,
    /// Live bodies with a finite contact force threshold: while none, the solver tallies
    /// no step totals and no force events are looked for.
    pub(crate) force_reporters: u32,
}

impl Default for Bodies {
    fn default() -> Self {
        Self {
            bodies: Vec::new(),
            free: Vec::new(),
            sets: vec![BodySet::default(), BodySet::default()],
            free_sets: Vec::new(),
            live: 0,
            force_reporters: 0,
        }
    }
}

impl Bodies {
    /// Number of live bodies.
    pub fn len(&self) -> usize {
        self.live
    }

    /// The cold record of a live body.
    pub fn get(&self, id: BodyId) -> Result<&Body, PhysicsError> {
        match self.bodies.get(id.index as usize) {
            Some(b) if b.alive && b.generation == id.generation => Ok(b),
            _ => Err(PhysicsError::StaleBodyId(id)),
        }
    }

    /// The cold record of a live body, mutably.
    pub fn get_mut(&mut self, id: BodyId) -> Result<&mut Body, PhysicsError> {
        match self.bodies.get_mut(id.index as usize) {
            Some(b) if b.alive && b.generation == id.generation => Ok(b),
            _ => Err(PhysicsError::StaleBodyId(id)),
        }
    }

    /// The current id of the live body in slot `index`.
    pub fn id_of(&self, index: u32) -> BodyId {
        BodyId {
            index,
            generation: self.bodies[index as usize].generation,
        }
    }

    /// The hot record of a live body.
    pub fn sim(&self, id: BodyId) -> Result<&BodySim, PhysicsError> {
        let b = self.get(id)?;
        Ok(&self.sets[b.set as usize].sims[b.local as usize])
    }

    /// The hot record of a live body, mutably.
    pub fn sim_mut(&mut self, id: BodyId) -> Result<&mut BodySim, PhysicsError> {
        let b = self.get(id)?;
        let (set, local) = (b.set as usize, b.local as usize);
        Ok(&mut self.sets[set].sims[local])
    }

    /// The hot record of the body in slot `index` (which must be live).
    pub fn sim_of(&self, index: u32) -> &BodySim {
        let b = &self.bodies[index as usize];
        &self.sets[b.set as usize].sims[b.local as usize]
    }

    /// Stores a new body in `set`, returning its id.
    pub fn insert(
        &mut self,
        mut body: Body,
        mut sim: BodySim,
        set: u32,
    ) -> Result<BodyId, PhysicsError> {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                if self.bodies.len() >= (u32::MAX - 1) as usize {
                    return Err(PhysicsError::TooManyBodies);
                }
                self.bodies.len() as u32
            }
        };
        let generation = self.bodies.get(index as usize).map_or(0, |b| b.generation);
        body.generation = generation;
        body.alive = true;
        body.set = set;
        body.local = self.sets[set as usize].sims.len() as u32;
        sim.body = index;
        self.force_reporters += u32::from(body.contact_force_threshold.is_finite());
        self.sets[set as usize].sims.push(sim);
        if (index as usize) < self.bodies.len() {
            self.bodies[index as usize] = body;
        } else {
            self.bodies.push(body);
        }
        self.live += 1;
        Ok(BodyId { index, generation })
    }

    /// Removes a live body: its hot record leaves its set, its slot is freed and its
    /// generation bumped. Returns the cold record.
    pub fn remove(&mut self, id: BodyId) -> Result<Body, PhysicsError> {
        let b = self.get(id)?;
        let (set, local) = (b.set, b.local);
        self.take_sim(set, local);
        if set >= FIRST_SLEEPING_SET && self.sets[set as usize].sims.is_empty() {
            // The last body of a sleeping island: the set goes back to the pool (else
            // the set list would grow with every such removal).
            self.free_sleeping_set(set);
        }
        let b = &mut self.bodies[id.index as usize];
        let removed = b.clone();
        self.force_reporters -= u32::from(removed.contact_force_threshold.is_finite());
        b.alive = false;
        b.generation = b.generation.wrapping_add(1);
        self.free.push(id.index);
        self.live -= 1;
        Ok(removed)
    }

    /// Swap-removes the hot record at `(set, local)`, fixing the moved record's location.
    fn take_sim(&mut self, set: u32, local: u32) -> BodySim {
        let sims = &mut self.sets[set as usize].sims;
        let sim = sims.swap_remove(local as usize);
        if let Some(moved) = sims.get(local as usize) {
            self.bodies[moved.body as usize].local = local;
        }
        sim
    }

    /// Moves the body in slot `index` to `set`.
    pub fn move_to_set(&mut self, index: u32, set: u32) {
        let b = &self.bodies[index as usize];
        if b.set == set {
            return;
        }
        let sim = self.take_sim(b.set, b.local);
        let dst = &mut self.sets[set as usize].sims;
        let local = dst.len() as u32;
        dst.push(sim);
        let b = &mut self.bodies[index as usize];
        b.set = set;
        b.local = local;
    }

    /// A new, empty sleeping set.
    pub fn new_sleeping_set(&mut self) -> u32 {
        if let Some(s) = self.free_sets.pop() {
            return s;
        }
        self.sets.push(BodySet::default());
        (self.sets.len() - 1) as u32
    }

    /// Returns an emptied sleeping set to the pool.
    pub fn free_sleeping_set(&mut self, set: u32) {
        debug_assert!(set >= FIRST_SLEEPING_SET && self.sets[set as usize].sims.is_empty());
        self.free_sets.push(set);
    }

    /// The awake bodies' hot records.
    pub fn awake(&self) -> &[BodySim] {
        &self.sets[AWAKE_SET as usize].sims
    }

    /// The awake bodies' hot records, mutably.
    pub fn awake_mut(&mut self) -> &mut [BodySim] {
        &mut self.sets[AWAKE_SET as usize].sims
    }
}
