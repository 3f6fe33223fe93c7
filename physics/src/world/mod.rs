//! The user's surface: one `World` owning bodies, broad phase, contacts and events.
//!
//! The world validates every request before it changes anything (a refused call leaves
//! the world exactly as it was) and hands its parts to the pipeline stages.

mod body_api;
mod body_change;
mod body_settings;
pub mod body_view;
mod bulk;
pub mod contact_force;
pub mod contact_view;
pub mod debug_draw;
pub mod event_queue;
mod hooks;
mod joint_api;
mod joint_drive_api;
mod materials;
pub mod ray;
#[cfg(feature = "recording")]
pub mod recording;
mod runtime;
pub mod shape_query;
pub mod snapshot;
pub mod step_async;

use crate::math::quat_normalize;
use joule_jobs::JobSystem;

use crate::body::filter::ExclusionList;
use crate::body::{
    AWAKE_SET, Bodies, Body, BodyDesc, BodyId, BodySim, MotionQuality, MotionType, STATIC_SET,
    validate_position, validate_rotation, validate_vector,
};
use crate::collision::broad_phase::{BroadPhase, ProxyKind};
use crate::collision::ccd::CcdState;
use crate::collision::pipeline::{self, CollisionSettings};
use crate::contact::{ContactInfo, ContactManager};
use crate::dynamics::island::{self, IslandScratch, SleepEvent};
use crate::dynamics::solver::SolverScratch;
use crate::error::PhysicsError;
use crate::events::Events;
use crate::geometry::aabb::Aabb;
use crate::joint::Joints;
use crate::material::{MaterialId, MaterialMixing, MixRule, RollingMaterial, SurfaceMaterial};
use crate::math::{Isometry, Mat3A, Quat, Vec3, Vec3A};
use crate::shape::ShapeKind;
use crate::step;
use crate::step::listener::{StepListenerContext, StepListenerId, StepListeners, StepPhase};

pub use crate::settings::WorldDesc;
pub use step_async::StepHandle;

/// FNV-1a over 32-bit words, finished with a SplitMix64 mix: stable across platforms and
/// releases (unlike `std`'s `DefaultHasher`, which is allowed to change).
struct StateHasher(u64);

impl StateHasher {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write_u32(&mut self, x: u32) {
        for byte in x.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A physics world.
pub struct World {
    pub(crate) desc: WorldDesc,
    pub(crate) jobs: JobSystem,
    pub(crate) bodies: Bodies,
    pub(crate) broad_phase: BroadPhase,
    pub(crate) contacts: ContactManager,
    pub(crate) joints: Joints,
    pub(crate) exclusions: ExclusionList,
    pub(crate) mixing: MaterialMixing,
    pub(crate) events: Events,
    pub(crate) scratch: pipeline::Scratch,
    pub(crate) solver_scratch: SolverScratch,
    pub(crate) island_scratch: IslandScratch,
    pub(crate) sleep_events: Vec<SleepEvent>,
    pub(crate) step_count: u64,
    pub(crate) listeners: StepListeners,
    pub(crate) ccd: CcdState,
    pub(crate) step_graph: joule_graph::Graph,
    pub(crate) step_ctx: joule_graph::Context,
    pub(crate) event_queue: crate::world::event_queue::EventQueue,
    /// Stamp of the world's structure (bodies, shapes, joints, exclusions), unique in the
    /// process: a dynamic snapshot restores only onto the structure it was taken from.
    pub(crate) structure: u64,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("bodies", &self.bodies.len())
            .field("contacts", &self.contacts.len())
            .finish()
    }
}

/// The context's value of type `T`, inserted (default) the first time.
fn slot<T: Default + Send + Sync + 'static>(ctx: &mut joule_graph::Context) -> &mut T {
    if !ctx.contains::<T>() {
        ctx.insert(T::default());
    }
    ctx.get_mut::<T>()
        .expect("inserted just above when it was missing")
}

impl World {
    /// A world that runs its work on `jobs`.
    #[must_use]
    pub fn new(desc: WorldDesc, jobs: JobSystem) -> World {
        let mut broad_phase = BroadPhase::new();
        broad_phase.margin = desc.broad_phase_margin;
        World {
            desc,
            jobs,
            bodies: Bodies::default(),
            broad_phase,
            contacts: ContactManager::default(),
            joints: Joints::default(),
            exclusions: ExclusionList::default(),
            mixing: MaterialMixing::new(),
            events: Events::default(),
            scratch: pipeline::Scratch::default(),
            solver_scratch: SolverScratch::default(),
            island_scratch: IslandScratch::default(),
            sleep_events: Vec::new(),
            step_count: 0,
            listeners: StepListeners::default(),
            ccd: CcdState::default(),
            step_graph: step::build()
                .expect("the step graph's stages are ordered and their access does not conflict"),
            step_ctx: joule_graph::Context::new(),
            event_queue: crate::world::event_queue::EventQueue::default(),
            structure: snapshot::dynamic::new_structure(),
        }
    }

    /// The job system the world runs on.
    #[must_use]
    pub fn jobs(&self) -> &JobSystem {
        &self.jobs
    }

    /// The settings.
    #[must_use]
    pub fn desc(&self) -> &WorldDesc {
        &self.desc
    }

    /// Creates a body. Every field is validated first; on error nothing is created.
    pub fn create_body(&mut self, desc: &BodyDesc) -> Result<BodyId, PhysicsError> {
        let (body, sim) = self.body_records(desc)?;
        let moving = body.motion_type != MotionType::Fixed;
        let set = if moving { AWAKE_SET } else { STATIC_SET };
        let transform = sim.transform;
        let id = self.bodies.insert(body, sim, set)?;
        self.structure = snapshot::dynamic::new_structure();
        if desc.shapeless {
            // No proxy: the broad phase never pairs it and queries never see it.
            return Ok(id);
        }
        let aabb = desc.shape.world_aabb(&transform);
        let kind = if moving {
            ProxyKind::Moving
        } else {
            ProxyKind::Static
        };
        let proxy = self.broad_phase.create_proxy(aabb, id.index(), kind);
        self.bodies.bodies[id.index() as usize].proxy = Some(proxy);
        Ok(id)
    }

    /// Validates a description and builds the body's cold and hot records (not yet stored:
    /// no slot, no set, no proxy). Shared by `create_body` and `create_bodies`.
    pub(crate) fn body_records(&self, desc: &BodyDesc) -> Result<(Body, BodySim), PhysicsError> {
        validate_position(desc.position)?;
        validate_rotation(desc.rotation)?;
        validate_vector(desc.linear_velocity)?;
        validate_vector(desc.angular_velocity)?;
        validate_body_materials(desc)?;
        crate::world::contact_force::validate_threshold(desc.contact_force_threshold)?;
        if desc.layer >= self.desc.layers.count() {
            return Err(PhysicsError::InvalidLayer(desc.layer));
        }
        let is_half_space = !desc.shapeless && desc.shape.kind() == ShapeKind::HalfSpace;
        if is_half_space && desc.motion_type != MotionType::Fixed {
            return Err(PhysicsError::InfiniteShapeOnMovingBody);
        }
        let (mass, local_center, inv_inertia) = if desc.motion_type == MotionType::Dynamic {
            let shape = (!desc.shapeless).then_some(&desc.shape);
            let mp = crate::body::mass::resolve(
                shape,
                desc.density,
                desc.mass,
                desc.center_of_mass_offset,
            )?;
            (mp.mass, mp.center_of_mass, mp.inertia.inverse())
        } else {
            (0.0, Vec3A::ZERO, Mat3A::ZERO)
        };

        let transform = Isometry::new(desc.position, quat_normalize(desc.rotation));
        let center = transform.transform_point(local_center);
        let moving = desc.motion_type != MotionType::Fixed;
        // Locks bind dynamic bodies only (a kinematic one moves as its velocity says).
        let locks = if desc.motion_type == MotionType::Dynamic {
            desc.locked_axes
        } else {
            crate::body::LockedAxes::empty()
        };
        let body = Body {
            generation: 0,
            alive: true,
            set: 0,
            local: 0,
            motion_type: desc.motion_type,
            shape: desc.shape.clone(),
            shapeless: desc.shapeless,
            density: desc.density,
            mass_spec: desc.mass,
            center_of_mass_offset: desc.center_of_mass_offset.into(),
            disabled: false,
            local_center,
            mass,
            friction: desc.friction,
            restitution: desc.restitution,
            rolling_friction: desc.rolling_friction,
            spinning_friction: desc.spinning_friction,
            material: desc.material,
            linear_damping: desc.linear_damping,
            angular_damping: desc.angular_damping,
            gravity_scale: desc.gravity_scale,
            max_linear_speed: desc.max_linear_speed,
            max_angular_speed: desc.max_angular_speed,
            is_sensor: desc.is_sensor,
            layer: desc.layer,
            filter: desc.filter,
            allow_sleep: desc.allow_sleep,
            // Nothing to sweep without a shape.
            motion_quality: if desc.shapeless {
                MotionQuality::Discrete
            } else {
                desc.motion_quality
            },
            locked_axes: desc.locked_axes,
            user_data: desc.user_data,
            contact_force_threshold: desc.contact_force_threshold,
            proxy: None,
            sleep_time: 0.0,
            force: Vec3A::ZERO,
            torque: Vec3A::ZERO,
            constant_force: Vec3A::ZERO,
            constant_torque: Vec3A::ZERO,
            teleports: 0,
            revision: 0,
        };
        let sim = BodySim {
            transform,
            center,
            center0: center,
            linear_velocity: if moving {
                locks.free_linear(desc.linear_velocity.into())
            } else {
                Vec3A::ZERO
            },
            angular_velocity: if moving {
                locks.free_angular(desc.angular_velocity.into())
            } else {
                Vec3A::ZERO
            },
            velocity_carry: Vec3A::ZERO,
            inv_mass: if mass > 0.0 { 1.0 / mass } else { 0.0 },
            inv_inertia_local: inv_inertia,
            local_center,
            body: 0,
        };
        Ok((body, sim))
    }

    /// Removes a body, its contacts (an `End` event is reported for each touching one) and
    /// its joints (a `JointEvent::Removed` is reported for each).
    /// A stale id (removed twice) is an error and changes nothing.
    pub fn remove_body(&mut self, id: BodyId) -> Result<(), PhysicsError> {
        self.bodies.get(id)?;
        self.remove_joints_of(id);
        for c in self.contacts.contacts_of(id.index()) {
            let other = {
                let c = &self.contacts.contacts[c as usize];
                if c.body_a == id.index() {
                    c.body_b
                } else {
                    c.body_a
                }
            };
            island::wake_body(&mut self.bodies, other, &mut self.sleep_events);
            pipeline::remove_contact(&mut self.contacts, c, &mut self.events);
        }
        self.exclusions.remove_body(id);
        let body = self.bodies.remove(id)?;
        self.structure = snapshot::dynamic::new_structure();
        if let Some(proxy) = body.proxy {
            self.broad_phase.destroy_proxy(proxy);
        }
        Ok(())
    }

    /// Whether `id` names a live body.
    #[must_use]
    pub fn contains(&self, id: BodyId) -> bool {
        self.bodies.get(id).is_ok()
    }

    /// Number of live bodies.
    #[must_use]
    pub fn body_count(&self) -> usize {
        self.bodies.len()
    }

    /// Number of live contacts (pairs whose broad-phase boxes overlap).
    #[must_use]
    pub fn contact_count(&self) -> usize {
        self.contacts.len()
    }

    /// Position of the body's origin.
    pub fn position(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.transform.translation.into())
    }

    /// Orientation.
    pub fn rotation(&self, id: BodyId) -> Result<Quat, PhysicsError> {
        Ok(self.bodies.sim(id)?.transform.rotation)
    }

    /// Pose of the body's origin.
    pub fn transform(&self, id: BodyId) -> Result<Isometry, PhysicsError> {
        Ok(self.bodies.sim(id)?.transform)
    }

    /// World position of the centre of mass.
    pub fn center_of_mass(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.center.into())
    }

    /// Linear velocity of the centre of mass.
    pub fn linear_velocity(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.linear_velocity.into())
    }

    /// Angular velocity (world axes).
    pub fn angular_velocity(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.angular_velocity.into())
    }

    /// Motion type.
    pub fn motion_type(&self, id: BodyId) -> Result<MotionType, PhysicsError> {
        Ok(self.bodies.get(id)?.motion_type)
    }

    /// Mass in kg (0 for static and kinematic bodies).
    pub fn mass(&self, id: BodyId) -> Result<f32, PhysicsError> {
        Ok(self.bodies.get(id)?.mass)
    }

    /// Tunnelling protection of the body.
    pub fn motion_quality(&self, id: BodyId) -> Result<MotionQuality, PhysicsError> {
        Ok(self.bodies.get(id)?.motion_quality)
    }

    /// The user data given at creation.
    pub fn user_data(&self, id: BodyId) -> Result<u64, PhysicsError> {
        Ok(self.bodies.get(id)?.user_data)
    }

    /// Moves a body (teleport). Its broad-phase box is updated at once, and its
    /// [`teleport_count`](World::teleport_count) goes up by one (as for `set_rotation`
    /// and `set_transform`).
    pub fn set_position(&mut self, id: BodyId, position: Vec3) -> Result<(), PhysicsError> {
        validate_position(position)?;
        let rotation = self.bodies.sim(id)?.transform.rotation;
        self.set_transform(id, position, rotation)
    }

    /// Rotates a body in place.
    pub fn set_rotation(&mut self, id: BodyId, rotation: Quat) -> Result<(), PhysicsError> {
        validate_rotation(rotation)?;
        let position = self.bodies.sim(id)?.transform.translation.into();
        self.set_transform(id, position, rotation)
    }

    /// Sets position and rotation together.
    pub fn set_transform(
        &mut self,
        id: BodyId,
        position: Vec3,
        rotation: Quat,
    ) -> Result<(), PhysicsError> {
        validate_position(position)?;
        validate_rotation(rotation)?;
        let body = self.bodies.get_mut(id)?;
        body.teleports = body.teleports.wrapping_add(1);
        if body.set == STATIC_SET {
            // The static set and tree are not in dynamic snapshots (no step moves them;
            // fixed and disabled bodies wait there).
            self.structure = snapshot::dynamic::new_structure();
        }
        let local_center = body.local_center;
        let proxy = body.proxy;
        let shape = body.shape.clone();
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let sim = self.bodies.sim_mut(id)?;
        let old = sim.center;
        sim.transform = Isometry::new(position, quat_normalize(rotation));
        sim.center = sim.transform.transform_point(local_center);
        sim.center0 = sim.center;
        let displacement = sim.center - old;
        let aabb = shape.world_aabb(&sim.transform);
        if let Some(proxy) = proxy {
            self.broad_phase.update_proxy(proxy, aabb, displacement);
        }
        Ok(())
    }

    /// Sets the linear velocity of a moving body.
    pub fn set_linear_velocity(&mut self, id: BodyId, v: Vec3) -> Result<(), PhysicsError> {
        validate_vector(v)?;
        self.require_moving(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let locks = self.dynamic_locks(id)?;
        self.bodies.sim_mut(id)?.linear_velocity = locks.free_linear(v.into());
        Ok(())
    }

    /// Sets the angular velocity of a moving body.
    pub fn set_angular_velocity(&mut self, id: BodyId, w: Vec3) -> Result<(), PhysicsError> {
        validate_vector(w)?;
        self.require_moving(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        let locks = self.dynamic_locks(id)?;
        self.bodies.sim_mut(id)?.angular_velocity = locks.free_angular(w.into());
        Ok(())
    }

    /// The locks that bind `id`'s velocities: its `LockedAxes` if it is dynamic, none
    /// for a kinematic body (it moves as its velocity says). Velocity setters and impulses
    /// drop the locked components at once, so what is read back is what the step uses.
    fn dynamic_locks(&self, id: BodyId) -> Result<crate::body::LockedAxes, PhysicsError> {
        let b = self.bodies.get(id)?;
        Ok(if b.motion_type == MotionType::Dynamic {
            b.locked_axes
        } else {
            crate::body::LockedAxes::empty()
        })
    }

    fn require_moving(&self, id: BodyId) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.motion_type == MotionType::Fixed {
            return Err(PhysicsError::WrongMotionType);
        }
        Ok(())
    }

    /// The world-space bounding box of a body's shape (the point at its origin for a body
    /// without a shape).
    pub fn body_aabb(&self, id: BodyId) -> Result<Aabb, PhysicsError> {
        let b = self.bodies.get(id)?;
        let transform = self.bodies.sim(id)?.transform;
        if !b.has_shape() {
            return Ok(Aabb::new(transform.translation, transform.translation));
        }
        Ok(b.shape.world_aabb(&transform))
    }

    /// Never lets `a` and `b` collide (any existing contact ends at the next update).
    pub fn exclude_pair(&mut self, a: BodyId, b: BodyId) -> Result<(), PhysicsError> {
        self.bodies.get(a)?;
        self.bodies.get(b)?;
        self.exclusions.insert(a, b);
        self.structure = snapshot::dynamic::new_structure();
        if let Some(c) = self.contacts.find(a.index(), b.index()) {
            pipeline::remove_contact(&mut self.contacts, c, &mut self.events);
        }
        Ok(())
    }

    /// Lets an excluded pair collide again.
    pub fn include_pair(&mut self, a: BodyId, b: BodyId) -> Result<(), PhysicsError> {
        self.bodies.get(a)?;
        self.bodies.get(b)?;
        self.exclusions.remove(a, b);
        self.structure = snapshot::dynamic::new_structure();
        // The pair is found again when one of them next leaves its fat box; make that now.
        // (A body without a shape has no proxy and never pairs.)
        if let Some(proxy) = self.bodies.get(a)?.proxy {
            self.broad_phase.touch_proxy(proxy);
        }
        Ok(())
    }

    /// Advances the world by `dt` seconds: collisions, solve (with substeps), sleep.
    /// Panics if `dt` is not finite and positive (a programming error).
    pub fn step(&mut self, dt: f32) {
        let mut ctx = std::mem::take(&mut self.step_ctx);
        self.lend_to(&mut ctx, dt);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.step_graph.run(&self.jobs, &mut ctx);
        }));
        self.take_back(&mut ctx);
        self.step_ctx = ctx;
        if let Err(p) = result {
            std::panic::resume_unwind(p);
        }
    }

    /// Moves the world's parts into `ctx` for one step of `dt` seconds run by
    /// [`step_graph`](Self::step_graph), or by a game's frame graph that embeds it as a
    /// subgraph (`GraphBuilder::subgraph("physics", world.step_graph())`). Call
    /// [`take_back`](Self::take_back) after the run; in between the world is empty and its
    /// getters report no bodies. Panics if `dt` is not finite and positive.
    pub fn lend_to(&mut self, ctx: &mut joule_graph::Context, dt: f32) {
        assert!(
            dt.is_finite() && dt > 0.0,
            "World::step: dt must be finite and positive, got {dt}"
        );
        self.sleep_events.clear();
        self.events.clear();
        let lent = slot::<step::Lent>(ctx);
        assert!(
            !lent.0,
            "World::lend_to: the context already holds a world's parts"
        );
        lent.0 = true;
        self.swap_parts(ctx);
        slot::<step::StepDt>(ctx).0 = dt;
        slot::<step::CcdHits>(ctx);
    }

    /// Takes the world's parts back from `ctx` after a run of the step graph (see
    /// [`lend_to`](Self::lend_to)). Panics if they were not lent to `ctx`.
    pub fn take_back(&mut self, ctx: &mut joule_graph::Context) {
        let lent = slot::<step::Lent>(ctx);
        assert!(
            lent.0,
            "World::take_back: the world's parts are not in the context (lend_to first)"
        );
        lent.0 = false;
        self.swap_parts(ctx);
        self.step_count += 1;
        self.queue_step_events();
    }

    /// Exchanges the world's parts with the context's slots. The slots stay in the
    /// context between steps (holding empty values), so a warm step moves the parts in and
    /// out without allocating.
    fn swap_parts(&mut self, ctx: &mut joule_graph::Context) {
        std::mem::swap(slot(ctx), &mut self.bodies);
        std::mem::swap(slot(ctx), &mut self.broad_phase);
        std::mem::swap(slot(ctx), &mut self.contacts);
        std::mem::swap(slot(ctx), &mut self.joints);
        std::mem::swap(slot(ctx), &mut self.exclusions);
        std::mem::swap(slot(ctx), &mut self.mixing);
        std::mem::swap(slot(ctx), &mut self.events);
        std::mem::swap(slot(ctx), &mut self.scratch);
        std::mem::swap(slot(ctx), &mut self.solver_scratch);
        std::mem::swap(slot(ctx), &mut self.island_scratch);
        std::mem::swap(
            &mut slot::<step::SleepEvents>(ctx).0,
            &mut self.sleep_events,
        );
        std::mem::swap(slot(ctx), &mut self.listeners);
        std::mem::swap(slot(ctx), &mut self.ccd);
        std::mem::swap(slot(ctx), &mut self.desc);
    }

    /// Registers `f` to run inside every step: [`StepPhase::Before`] runs first (forces it
    /// adds act in this step), [`StepPhase::After`] runs last (it sees the step's results).
    /// Listeners of a phase run in the order they were added.
    pub fn add_step_listener(
        &mut self,
        phase: StepPhase,
        f: impl FnMut(&mut StepListenerContext<'_>) + Send + 'static,
    ) -> StepListenerId {
        self.listeners.add(phase, Box::new(f))
    }

    /// Removes a listener; returns whether it was registered.
    pub fn remove_step_listener(&mut self, id: StepListenerId) -> bool {
        self.listeners.remove(id)
    }

    /// The step's graph (its stages, edges and declared access), for inspection.
    #[must_use]
    pub fn step_graph(&self) -> &joule_graph::Graph {
        &self.step_graph
    }

    /// Steps once with tracing on and returns the trace of that step: one task per stage
    /// (in pipeline order) with the thread and time it ran, and every job the stages ran
    /// (narrow-phase blocks, solver colour blocks, integration blocks) as spans on the
    /// threads that ran them. Export it with `to_chrome_json`, `to_svg` or `summary`.
    pub fn step_traced(&mut self, dt: f32) -> joule_graph::Trace {
        let was_on = self.jobs.tracing();
        let _ = self.jobs.take_trace();
        self.jobs.set_tracing(true);
        let t0 = self.jobs.now_ns();
        self.step(dt);
        self.jobs.set_tracing(was_on);
        crate::step::trace::build(&self.jobs, t0, self.jobs.take_trace())
    }

    /// Sleep and wake events of the last step, ordered by body.
    #[must_use]
    pub fn sleep_events(&self) -> &[SleepEvent] {
        &self.sleep_events
    }

    /// Whether the body is asleep.
    pub fn is_sleeping(&self, id: BodyId) -> Result<bool, PhysicsError> {
        Ok(self.bodies.get(id)?.set >= crate::body::FIRST_SLEEPING_SET)
    }

    /// Number of awake moving bodies (the ones a step costs time for).
    #[must_use]
    pub fn awake_body_count(&self) -> usize {
        self.bodies.awake().len()
    }

    /// Wakes the body's island if it sleeps.
    pub fn wake_up(&mut self, id: BodyId) -> Result<(), PhysicsError> {
        self.bodies.get(id)?;
        island::wake_body(&mut self.bodies, id.index(), &mut self.sleep_events);
        Ok(())
    }

    /// Runs the collision pipeline (broad phase update, pair finding, narrow phase,
    /// events) without moving anything. The step runs the same stages.
    pub fn update_collisions(&mut self) {
        self.collide();
        island::wake_touched(&mut self.bodies, &mut self.contacts, &mut self.sleep_events);
    }

    fn collide(&mut self) {
        self.events.clear();
        let settings = CollisionSettings {
            margin: self.desc.contact_margin,
            report_persist: self.desc.report_persist_events,
            // Not stepping: nothing moves, so no speculative growth.
            dt: 0.0,
            gravity: self.desc.gravity.into(),
        };
        pipeline::update_broad_phase(
            &self.jobs,
            &self.bodies,
            &mut self.broad_phase,
            &mut self.scratch,
        );
        pipeline::find_new_contacts(
            &self.jobs,
            &self.bodies,
            &mut self.broad_phase,
            &mut self.contacts,
            &self.exclusions,
            &self.desc.layers,
            &self.mixing,
            &mut self.scratch,
        );
        pipeline::update_contacts(
            &self.jobs,
            &self.bodies,
            &self.broad_phase,
            &self.mixing,
            &self.exclusions,
            &mut self.contacts,
            &settings,
        );
        pipeline::finish_contacts(&mut self.contacts, &settings, &mut self.events);
        self.events.sort();
    }

    /// Steps taken since the world was made (restores set it back with the rest).
    #[must_use]
    pub fn step_count(&self) -> u64 {
        self.step_count
    }

    /// A hash of every live body's state (id, position, rotation, velocities), in id
    /// order. Equal hashes mean bit-identical states; compare across thread counts, runs
    /// or a snapshot and its restore.
    #[must_use]
    pub fn state_hash(&self) -> u64 {
        let mut h = StateHasher::new();
        for (index, b) in self.bodies.bodies.iter().enumerate() {
            if !b.alive {
                continue;
            }
            let sim = self.bodies.sim_of(index as u32);
            h.write_u32(index as u32);
            h.write_u32(b.generation);
            h.write_u32(b.set.min(2));
            if b.disabled {
                // Only then, so the hashes of worlds without disabled bodies stay as they were.
                h.write_u32(0xd15a_b1ed);
            }
            let t = sim.transform.translation;
            let q = sim.transform.rotation;
            for v in [t.x, t.y, t.z, q.x, q.y, q.z, q.w] {
                h.write_u32(v.to_bits());
            }
            let (v, w) = (sim.linear_velocity, sim.angular_velocity);
            for x in [v.x, v.y, v.z, w.x, w.y, w.z] {
                h.write_u32(x.to_bits());
            }
        }
        h.finish()
    }

    /// Events of the last update, in a deterministic order.
    #[must_use]
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// Every live contact with at least one manifold point, ordered by body ids.
    ///
    /// Builds a new `Vec` (and sorts it) at each call: a game reading contacts every
    /// frame should use [`World::contacts_of`] or [`World::contact`], which allocate
    /// nothing.
    #[must_use]
    pub fn contacts(&self) -> Vec<ContactInfo> {
        let mut out: Vec<ContactInfo> = self
            .contacts
            .contacts
            .iter()
            .filter(|c| c.alive && !c.manifold.points.is_empty())
            .map(|c| crate::contact::contact_info(&self.bodies, c))
            .collect();
        out.sort_by_key(|c| (c.body_a, c.body_b));
        out
    }
}

/// Checks a description's material, damping and speed-limit values, naming the first one
/// out of range ([`PhysicsError::InvalidMaterial`]).
fn validate_body_materials(desc: &BodyDesc) -> Result<(), PhysicsError> {
    use crate::material::{LENGTH_RANGE, SurfaceMaterial, check_material};
    SurfaceMaterial {
        friction: desc.friction,
        restitution: desc.restitution,
    }
    .validate()?;
    let finite_non_negative = |x: f32| x.is_finite() && x >= 0.0;
    for (field, value, expected, ok) in [
        (
            "rolling_friction",
            desc.rolling_friction,
            LENGTH_RANGE,
            finite_non_negative as fn(f32) -> bool,
        ),
        (
            "spinning_friction",
            desc.spinning_friction,
            LENGTH_RANGE,
            finite_non_negative,
        ),
        (
            "linear_damping",
            desc.linear_damping,
            "a finite rate >= 0 (1/s)",
            finite_non_negative,
        ),
        (
            "angular_damping",
            desc.angular_damping,
            "a finite rate >= 0 (1/s)",
            finite_non_negative,
        ),
        (
            "gravity_scale",
            desc.gravity_scale,
            "a finite factor",
            f32::is_finite,
        ),
        (
            "max_linear_speed",
            desc.max_linear_speed,
            "a speed > 0 (m/s)",
            |x| x > 0.0,
        ),
        (
            "max_angular_speed",
            desc.max_angular_speed,
            "a speed > 0 (rad/s)",
            |x| x > 0.0,
        ),
    ] {
        check_material(field, value, expected, ok)?;
    }
    Ok(())
}
