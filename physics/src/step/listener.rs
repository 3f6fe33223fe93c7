//! Step listeners: user code that runs inside the step graph, before the collision stages
//! ("step listeners") and after the step ("finalize"), with access to the bodies (Jolt's
//! `PhysicsStepListener`). Typical uses: a character controller's forces, buoyancy,
//! wind, a game's per-step bookkeeping.
//!
//! Listeners run on whichever thread runs the stage, one after another in the order they
//! were added, so their effects are deterministic.

use std::sync::Mutex;

use crate::body::{Bodies, BodyId, MotionType, validate_vector};
use crate::collision::broad_phase::BroadPhase;
use crate::collision::query::SceneQuery;
use crate::dynamics::island::{self, SleepEvent};
use crate::error::PhysicsError;
use crate::math::{Quat, Vec3, Vec3A};

/// When a listener runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepPhase {
    /// Before the collision stages (forces added here act in this step).
    Before,
    /// After the step (positions are the step's results).
    After,
}

/// Handle of a registered listener (for [`World::remove_step_listener`](crate::world::World::remove_step_listener)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepListenerId(pub(crate) u32);

/// What a listener sees: the step's time, the bodies, and queries on the world.
pub struct StepListenerContext<'a> {
    pub(crate) bodies: &'a mut Bodies,
    pub(crate) broad: &'a BroadPhase,
    pub(crate) sleep_events: &'a mut Vec<SleepEvent>,
    pub(crate) dt: f32,
    pub(crate) phase: StepPhase,
}

impl StepListenerContext<'_> {
    /// The step's time step (s).
    #[must_use]
    pub fn dt(&self) -> f32 {
        self.dt
    }

    /// Whether this call is before or after the step.
    #[must_use]
    pub fn phase(&self) -> StepPhase {
        self.phase
    }

    /// Ray and shape queries on the world as it stands in this phase (see
    /// [`SceneQuery`] and [`shape_query`](crate::collision::shape_query)): before the
    /// step, the bodies where the last step left them (or where the listeners before this
    /// one moved them); after it, this step's results. The broad phase's boxes are the
    /// ones the step's broad phase built (each grown by the world's broad-phase margin),
    /// exactly what [`World`](crate::world::World)'s own queries use between steps, so a
    /// body that moved farther than that margin during the step may be missed after it
    /// until the next step.
    ///
    /// The view borrows the context: read what the queries found, then change bodies.
    #[must_use]
    pub fn queries(&self) -> SceneQuery<'_> {
        SceneQuery::new(self.bodies, self.broad)
    }

    /// A body's position (of its origin).
    pub fn position(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.transform.translation.into())
    }

    /// A body's linear velocity.
    pub fn linear_velocity(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.linear_velocity.into())
    }

    /// A body's rotation.
    pub fn rotation(&self, id: BodyId) -> Result<Quat, PhysicsError> {
        Ok(self.bodies.sim(id)?.transform.rotation)
    }

    /// A body's centre of mass in world space.
    pub fn center_of_mass(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.center.into())
    }

    /// A body's angular velocity (rad/s, world axes).
    pub fn angular_velocity(&self, id: BodyId) -> Result<Vec3, PhysicsError> {
        Ok(self.bodies.sim(id)?.angular_velocity.into())
    }

    /// Whether a body is asleep.
    pub fn is_sleeping(&self, id: BodyId) -> Result<bool, PhysicsError> {
        Ok(self.bodies.get(id)?.set >= crate::body::FIRST_SLEEPING_SET)
    }

    fn dynamic(&mut self, id: BodyId) -> Result<(), PhysicsError> {
        if self.bodies.get(id)?.motion_type != MotionType::Dynamic {
            return Err(PhysicsError::WrongMotionType);
        }
        island::wake_body(self.bodies, id.index(), self.sleep_events);
        Ok(())
    }

    /// Adds a force (N) at the centre of mass for this step (before) or the next (after).
    /// Wakes the body.
    pub fn add_force(&mut self, id: BodyId, force: Vec3) -> Result<(), PhysicsError> {
        validate_vector(force)?;
        self.dynamic(id)?;
        self.bodies.get_mut(id)?.force += Vec3A::from(force);
        Ok(())
    }

    /// Adds a torque (N·m) for this step (before) or the next (after). Wakes the body.
    pub fn add_torque(&mut self, id: BodyId, torque: Vec3) -> Result<(), PhysicsError> {
        validate_vector(torque)?;
        self.dynamic(id)?;
        self.bodies.get_mut(id)?.torque += Vec3A::from(torque);
        Ok(())
    }

    /// Applies an impulse (N·s) at the centre of mass. Wakes the body.
    pub fn apply_impulse(&mut self, id: BodyId, impulse: Vec3) -> Result<(), PhysicsError> {
        validate_vector(impulse)?;
        self.dynamic(id)?;
        let sim = self.bodies.sim_mut(id)?;
        sim.linear_velocity += sim.inv_mass * Vec3A::from(impulse);
        Ok(())
    }

    /// Sets a body's linear velocity. Wakes the body.
    pub fn set_linear_velocity(&mut self, id: BodyId, v: Vec3) -> Result<(), PhysicsError> {
        validate_vector(v)?;
        self.dynamic(id)?;
        self.bodies.sim_mut(id)?.linear_velocity = v.into();
        Ok(())
    }

    /// Sets a body's angular velocity (rad/s, world axes). Wakes the body.
    pub fn set_angular_velocity(&mut self, id: BodyId, w: Vec3) -> Result<(), PhysicsError> {
        validate_vector(w)?;
        self.dynamic(id)?;
        self.bodies.sim_mut(id)?.angular_velocity = w.into();
        Ok(())
    }
}

/// A listener: called with the context once per step in its phase.
pub type StepListenerFn = Box<dyn FnMut(&mut StepListenerContext<'_>) + Send>;

/// The registered listeners (a step-graph resource).
#[derive(Default)]
pub(crate) struct StepListeners {
    // A Mutex only to make the boxed closures `Sync` for the graph's context: the stage
    // that calls them holds the resource's write lock, so it is never contended.
    list: Mutex<Vec<(StepListenerId, StepPhase, StepListenerFn)>>,
    next: u32,
}

impl StepListeners {
    pub fn add(&mut self, phase: StepPhase, f: StepListenerFn) -> StepListenerId {
        let id = StepListenerId(self.next);
        self.next += 1;
        self.list
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((id, phase, f));
        id
    }

    pub fn remove(&mut self, id: StepListenerId) -> bool {
        let list = self
            .list
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = list.len();
        list.retain(|(i, _, _)| *i != id);
        list.len() != before
    }

    /// Calls every listener of `phase` in registration order.
    pub fn run(
        &mut self,
        phase: StepPhase,
        bodies: &mut Bodies,
        broad: &BroadPhase,
        sleep_events: &mut Vec<SleepEvent>,
        dt: f32,
    ) {
        let list = self
            .list
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if list.is_empty() {
            return;
        }
        let mut cx = StepListenerContext {
            bodies,
            broad,
            sleep_events,
            dt,
            phase,
        };
        for (_, p, f) in list.iter_mut() {
            if *p == phase {
                f(&mut cx);
            }
        }
    }
}
