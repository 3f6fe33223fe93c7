//! Dynamic-state snapshots: what a step changes, copied into reused buffers, so a game
//! can save every step and roll back within a frame's budget.
//!
//! A full [`Snapshot`](super::Snapshot) is a wire format: settings, shapes, every body's
//! cold record, encoded and checksummed, so it can leave the process. Rollback needs
//! none of that: it restores the same world, in the same process, a few steps back. So a
//! [`DynamicSnapshot`] is an in-memory copy of only the parts a step writes, taken with
//! plain copies into vectors it keeps (a warm save or restore allocates nothing), the
//! large ones split across the job system's threads in disjoint chunks (pure copying,
//! so the same whichever thread writes which chunk):
//!
//! ```text
//!  part                              why it is enough
//!  step count                        the step's only counter
//!  per body slot: set, position in   sleeping and waking move bodies between sets; the
//!    its set, sleep timer            timer decides when an island sleeps
//!  every non-static set's hot        poses, velocities, the integrator's carry, and each
//!    records' changing part, the     record's body, in the dense order the solver walks
//!    free-set list                   (awake and sleeping islands: a sleeping island may
//!                                    wake and move); the constants (inverse mass and
//!                                    inertia, local centre) once per structure, per body
//!                                    slot, for a restore after bodies changed sets
//!  the moving tree, its moved list   refit and reinserted every step; the pair search
//!    and flags, its reinsert count   reads the moved list and the count decides rebuilds
//!  every contact slot, the free      manifolds, warm-start impulses, flags, pair caches;
//!    list, the pair map, the active  contacts begin and end each step, and their ids
//!    list, the slot ends             (slot order) are the order everything walks them
//!  per joint slot: enabled,          warm-start impulses, the last step's reaction (what
//!    impulses, force, torque         breaking reads); breaking disables
//! ```
//!
//! Everything else a step reads is left alone because no step changes it: settings,
//! shapes, materials, mass, filters, joint descriptions, exclusions, fixed bodies and the
//! static tree, and the slot arrays' free lists (only creating or removing changes them).
//! Scratch buffers are refilled by every step before they are read, as for full
//! snapshots. Each body's list of its contacts is rebuilt on restore from the contacts,
//! as a full restore does (cheaper than copying a small vector per body; every reader
//! sorts it or goes through the sorted active list, so its order cannot reach results). Forces added with `add_force` are cleared on restore, as a step clears
//! them: save before the frame's input, and apply it again after restoring.
//!
//! The invariant: a dynamic snapshot is restored only onto the structure it was taken
//! from. Every call that changes structure (creating or removing a body or joint, new
//! mass properties, a joint of another kind, an exclusion, moving a fixed body by hand,
//! a full restore) gives the world a new process-unique stamp; a snapshot whose stamp
//! differs is refused with [`PhysicsError::SnapshotStructureChanged`] before anything
//! changes. Settings changed by hand since the save (materials, constant forces, a
//! motor's target, locked axes, orientation drives) are not undone: they are the game's
//! input, like an impulse.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use joule_jobs::JobSystem;

use crate::body::{AWAKE_SET, BodySet, BodySim};

use crate::collision::broad_phase::{BroadPhase, BroadPhaseProxy};
use crate::contact::{Contact, ContactManager, ContactManifold, PairMap};
use crate::error::PhysicsError;
use crate::geometry::dynamic_tree::{DynamicTree, Node};
use crate::joint::{Joint, JointImpulses};
use crate::math::{Isometry, Mat3A, Vec3A};
use crate::world::World;

/// The next structure stamp; 0 is never issued (it marks an empty snapshot).
static NEXT_STRUCTURE: AtomicU64 = AtomicU64::new(1);

/// A structure stamp no world in this process has had.
pub(crate) fn new_structure() -> u64 {
    // Relaxed: only uniqueness matters, which every read-modify-write gives.
    NEXT_STRUCTURE.fetch_add(1, Ordering::Relaxed)
}

/// What a step changes in a body's cold record.
#[derive(Clone, Copy, Debug)]
struct SlotState {
    set: u32,
    local: u32,
    sleep_time: f32,
}

/// What a step changes in a hot record: the pose, velocities and the integrator's carry.
/// The rest of the record is constant while the structure stamp is (see [`SimConstants`]).
#[derive(Clone, Copy, Debug)]
struct SimState {
    transform: Isometry,
    center: Vec3A,
    center0: Vec3A,
    linear_velocity: Vec3A,
    angular_velocity: Vec3A,
    velocity_carry: Vec3A,
}

/// What no step changes in a hot record: only creating a body or new mass properties do,
/// and both give the world a new structure stamp.
#[derive(Clone, Copy, Debug)]
struct SimConstants {
    inv_mass: f32,
    inv_inertia_local: Mat3A,
    local_center: Vec3A,
}

impl SimConstants {
    /// The entry of a body slot with no record in a moving set (never read).
    const NONE: SimConstants = SimConstants {
        inv_mass: 0.0,
        inv_inertia_local: Mat3A::ZERO,
        local_center: Vec3A::ZERO,
    };
}

/// A moving set as saved: its records' bodies in dense order and what steps change of
/// them.
#[derive(Clone, Debug, Default)]
struct SetState {
    bodies: Vec<u32>,
    sims: Vec<SimState>,
}

/// Splits a hot record into what steps change and what they do not. Destructured without
/// `..`: a new field does not compile until someone decides which part it belongs to.
#[inline]
fn split_sim(sim: &BodySim) -> (u32, SimState, SimConstants) {
    let BodySim {
        transform,
        center,
        center0,
        linear_velocity,
        angular_velocity,
        velocity_carry,
        inv_mass,
        inv_inertia_local,
        local_center,
        body,
    } = *sim;
    (
        body,
        SimState {
            transform,
            center,
            center0,
            linear_velocity,
            angular_velocity,
            velocity_carry,
        },
        SimConstants {
            inv_mass,
            inv_inertia_local,
            local_center,
        },
    )
}

/// Writes what steps change into a record that already holds the same body.
#[inline]
fn put_state(sim: &mut BodySim, s: &SimState) {
    sim.transform = s.transform;
    sim.center = s.center;
    sim.center0 = s.center0;
    sim.linear_velocity = s.linear_velocity;
    sim.angular_velocity = s.angular_velocity;
    sim.velocity_carry = s.velocity_carry;
}

/// A whole record from its parts.
#[inline]
fn join_sim(body: u32, s: &SimState, c: &SimConstants) -> BodySim {
    BodySim {
        transform: s.transform,
        center: s.center,
        center0: s.center0,
        linear_velocity: s.linear_velocity,
        angular_velocity: s.angular_velocity,
        velocity_carry: s.velocity_carry,
        inv_mass: c.inv_mass,
        inv_inertia_local: c.inv_inertia_local,
        local_center: c.local_center,
        body,
    }
}

/// What a step changes in a joint.
#[derive(Clone, Copy, Debug)]
struct JointState {
    enabled: bool,
    impulses: JointImpulses,
    force: Vec3A,
    torque: Vec3A,
}

/// A dynamic tree without its rebuild scratch.
#[derive(Clone, Debug, Default)]
struct TreeState {
    nodes: Vec<Node>,
    root: u32,
    free: u32,
    leaves: usize,
}

/// The part of a world's state that steps change, for rollback: restore it onto the same
/// world (see the [module header](self) for what it holds and why that is enough).
///
/// Keep one per step you may roll back to (a ring of 8 for 8 steps) and reuse them: once
/// each has held a state of the world's size, [`World::save_dynamic`] and
/// [`World::restore_dynamic`] allocate nothing.
///
/// ```
/// use joule_physics::prelude::*;
///
/// let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
/// let ball = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y))?;
/// let mut saved = DynamicSnapshot::new();
/// world.save_dynamic(&mut saved);
/// let hash = world.state_hash();
/// world.apply_impulse(ball, Vec3::X)?; // a guess at the input...
/// world.step(1.0 / 60.0);
/// world.restore_dynamic(&saved)?; // ...was wrong: back one step
/// assert_eq!(world.state_hash(), hash);
/// world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Z))?;
/// assert!(world.restore_dynamic(&saved).is_err(), "the structure changed");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct DynamicSnapshot {
    /// The world structure it was taken from; 0 while empty.
    structure: u64,
    step_count: u64,
    slots: Vec<SlotState>,
    /// Sets 1.. of the world (awake, then sleeping), what steps change of them; only the
    /// first `set_count` are in use, the rest keep their buffers for later saves.
    sets: Vec<SetState>,
    set_count: usize,
    /// Per body slot, the constant part of its hot record, taken when this buffer first
    /// saves a world of structure `constants_structure` (a ring saving every step of the
    /// same world copies them once), and read by a restore only where a body is no
    /// longer where it was (an island fell asleep or woke since the save).
    constants: Vec<SimConstants>,
    constants_structure: u64,
    free_sets: Vec<u32>,
    moving_tree: TreeState,
    moved: Vec<(u32, BroadPhaseProxy)>,
    moved_flag: Vec<bool>,
    reinsertions: usize,
    contacts: Vec<Contact>,
    contact_free: Vec<u32>,
    pairs: PairMap,
    active: Vec<u32>,
    ends: Vec<[u32; 2]>,
    joints: Vec<JointState>,
}

impl std::fmt::Debug for DynamicSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicSnapshot")
            .field("step_count", &self.step_count())
            .field("bodies", &self.slots.len())
            .field("contacts", &self.pairs.len())
            .field("size_bytes", &self.size_bytes())
            .finish()
    }
}

impl DynamicSnapshot {
    /// An empty snapshot (restoring it is an error until something is saved into it).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing was saved into it yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.structure == 0
    }

    /// The world's [`step_count`](World::step_count) when it was saved (`None` while
    /// empty).
    #[must_use]
    pub fn step_count(&self) -> Option<u64> {
        (!self.is_empty()).then_some(self.step_count)
    }

    /// Bytes a save copies: each part's length times its element size (capacity kept for
    /// later saves is not counted; the pair map counts its entries). The constant part
    /// of the hot records (inverse mass and inertia, local centre: 68 bytes per moving
    /// body) is held too but copied once per structure, and not counted.
    #[must_use]
    pub fn size_bytes(&self) -> usize {
        use std::mem::size_of;
        let sims: usize = self.sets[..self.set_count]
            .iter()
            .map(|s| s.sims.len())
            .sum();
        self.slots.len() * size_of::<SlotState>()
            + sims * (size_of::<SimState>() + 4)
            + self.free_sets.len() * 4
            + self.moving_tree.nodes.len() * size_of::<Node>()
            + self.moved.len() * size_of::<(u32, BroadPhaseProxy)>()
            + self.moved_flag.len()
            + self.contacts.len() * size_of::<Contact>()
            + self.contact_free.len() * 4
            + self.pairs.len() * size_of::<(u64, u32)>()
            + self.active.len() * 4
            + self.ends.len() * size_of::<[u32; 2]>()
            + self.joints.len() * size_of::<JointState>()
    }
}

impl World {
    /// Saves what steps change into `into` (see [`DynamicSnapshot`]), reusing its
    /// buffers. Call it between steps, before the frame's input.
    pub fn save_dynamic(&self, into: &mut DynamicSnapshot) {
        // Destructured without `..`, as in `snapshot`: a new field does not compile until
        // someone decides whether steps change it.
        let World {
            // Changed only by the user, never by a step.
            desc: _,
            exclusions: _,
            mixing: _,
            listeners: _,
            // Not state (see `snapshot`); the copies below are split across its threads.
            jobs,
            events: _,
            sleep_events: _,
            scratch: _,
            solver_scratch: _,
            island_scratch: _,
            ccd: _,
            step_graph: _,
            step_ctx: _,
            event_queue: _,
            structure,
            step_count,
            bodies,
            broad_phase,
            contacts,
            joints,
        } = self;
        let s = into;
        s.structure = *structure;
        s.step_count = *step_count;
        let slot = |b: &crate::body::Body| SlotState {
            set: b.set,
            local: b.local,
            sleep_time: b.sleep_time,
        };
        par_map(jobs, &mut s.slots, &bodies.bodies, slot);
        let moving = &bodies.sets[AWAKE_SET as usize..];
        s.set_count = moving.len();
        if s.sets.len() < moving.len() {
            s.sets.resize_with(moving.len(), SetState::default);
        }
        for (saved, set) in s.sets.iter_mut().zip(moving) {
            par_map(jobs, &mut saved.sims, &set.sims, |sim| split_sim(sim).1);
            par_map(jobs, &mut saved.bodies, &set.sims, |sim| sim.body);
        }
        if s.constants_structure != *structure {
            s.constants.clear();
            s.constants.resize(bodies.bodies.len(), SimConstants::NONE);
            for sim in moving.iter().flat_map(|set| &set.sims) {
                let (body, _, constants) = split_sim(sim);
                s.constants[body as usize] = constants;
            }
            s.constants_structure = *structure;
        }
        s.free_sets.clone_from(&bodies.free_sets);

        let BroadPhase {
            // A setting; the static tree changes only with the structure.
            margin: _,
            static_tree: _,
            moving_tree,
            moved,
            moved_flag,
            reinsertions,
        } = broad_phase;
        save_tree(jobs, &mut s.moving_tree, moving_tree);
        s.moved.clone_from(moved);
        s.moved_flag.clone_from(moved_flag);
        s.reinsertions = *reinsertions;

        let ContactManager {
            contacts,
            free,
            pairs,
            // Rebuilt on restore (see the module header).
            body_contacts: _,
            active,
            ends,
            // Scratch of the step's contact passes.
            awake_bits: _,
            active_plan: _,
            active_bounds: _,
            changes: _,
            pruned: _,
        } = contacts;
        copy_contacts(jobs, &mut s.contacts, contacts);
        s.contact_free.clone_from(free);
        copy_pairs(&mut s.pairs, pairs);
        s.active.clone_from(active);
        s.ends.clone_from(ends);

        s.joints.clear();
        s.joints.extend(joints.joints.iter().map(|j| {
            let Joint {
                enabled,
                impulses,
                force,
                torque,
                // Structure, or set by the user.
                generation: _,
                alive: _,
                desc: _,
                drive: _,
                body_a: _,
                body_b: _,
            } = j;
            JointState {
                enabled: *enabled,
                impulses: *impulses,
                force: *force,
                torque: *torque,
            }
        }));
    }

    /// Puts back the state saved by [`save_dynamic`](Self::save_dynamic): afterwards the
    /// world steps exactly as it did from that point (the same
    /// [`state_hash`](Self::state_hash) and full snapshot after any number of steps,
    /// given the same input). Forces added since are cleared; the last step's events are
    /// dropped. Not a teleport for a [`Presentation`](crate::game::Presentation): a
    /// rollback replays to the present, and the correction may be interpolated.
    ///
    /// Once warm it allocates nothing, unless the world has fewer sleeping islands than
    /// when it was saved (a set must be recreated).
    ///
    /// # Errors
    /// [`PhysicsError::SnapshotStructureChanged`] if the snapshot is empty, was taken from
    /// another world, or bodies or joints were created or removed since (see the
    /// [module header](crate::world::snapshot::dynamic) for every such change). Nothing
    /// changes then.
    pub fn restore_dynamic(&mut self, from: &DynamicSnapshot) -> Result<(), PhysicsError> {
        let s = from;
        if s.structure == 0
            || s.structure != self.structure
            || s.slots.len() != self.bodies.bodies.len()
            || s.joints.len() != self.joints.joints.len()
        {
            return Err(PhysicsError::SnapshotStructureChanged);
        }
        self.step_count = s.step_count;
        let jobs = &self.jobs;
        let bodies = &mut self.bodies;
        par_each(jobs, &mut bodies.bodies, &s.slots, |b, saved| {
            b.set = saved.set;
            b.local = saved.local;
            b.sleep_time = saved.sleep_time;
            b.force = Vec3A::ZERO;
            b.torque = Vec3A::ZERO;
        });
        bodies.sets.truncate(AWAKE_SET as usize + s.set_count);
        let saved_sets = &s.sets[..s.set_count];
        // Where every body is still where it was (no island slept or woke since the
        // save), only what steps change is written, in place; otherwise the sets are
        // rebuilt whole from it and the constants.
        let mut in_place = bodies.sets.len() == AWAKE_SET as usize + s.set_count;
        if in_place {
            'sets: for (set, saved) in bodies.sets[AWAKE_SET as usize..].iter_mut().zip(saved_sets)
            {
                if set.sims.len() != saved.sims.len() {
                    in_place = false;
                    break;
                }
                // A chunk that finds a body elsewhere stops; the rebuild below then
                // rewrites every set, whatever the chunks wrote.
                let moved = AtomicBool::new(false);
                let (states, ids) = (&saved.sims, &saved.bodies);
                jobs.parallel_for_slice(&mut set.sims, min_chunk::<BodySim>(), |first, sims| {
                    let pairs = states[first..].iter().zip(&ids[first..]);
                    for (sim, (state, &body)) in sims.iter_mut().zip(pairs) {
                        if sim.body != body {
                            moved.store(true, Ordering::Relaxed);
                            return;
                        }
                        put_state(sim, state);
                    }
                });
                if moved.into_inner() {
                    in_place = false;
                    break 'sets;
                }
            }
        }
        if !in_place {
            debug_assert_eq!(s.constants_structure, s.structure);
            for (i, saved) in saved_sets.iter().enumerate() {
                let index = AWAKE_SET as usize + i;
                if index == bodies.sets.len() {
                    bodies.sets.push(BodySet::default());
                }
                let sims = &mut bodies.sets[index].sims;
                sims.clear();
                sims.extend(
                    saved
                        .bodies
                        .iter()
                        .zip(&saved.sims)
                        .map(|(&body, state)| join_sim(body, state, &s.constants[body as usize])),
                );
            }
        }
        bodies.free_sets.clone_from(&s.free_sets);

        let bp = &mut self.broad_phase;
        restore_tree(jobs, &mut bp.moving_tree, &s.moving_tree);
        bp.moved.clone_from(&s.moved);
        bp.moved_flag.clone_from(&s.moved_flag);
        bp.reinsertions = s.reinsertions;

        let cm = &mut self.contacts;
        copy_contacts(jobs, &mut cm.contacts, &s.contacts);
        cm.free.clone_from(&s.contact_free);
        copy_pairs(&mut cm.pairs, &s.pairs);
        cm.active.clone_from(&s.active);
        cm.ends.clone_from(&s.ends);
        for list in &mut cm.body_contacts {
            list.clear();
        }
        for id in 0..cm.contacts.len() as u32 {
            if cm.contacts[id as usize].alive {
                cm.link(id);
            }
        }

        for (j, saved) in self.joints.joints.iter_mut().zip(&s.joints) {
            restore_joint(j, saved);
        }
        self.joints.events.clear();
        self.events.clear();
        self.sleep_events.clear();
        Ok(())
    }
}

fn restore_joint(j: &mut Joint, saved: &JointState) {
    j.enabled = saved.enabled;
    j.impulses = saved.impulses;
    j.force = saved.force;
    j.torque = saved.torque;
}

fn save_tree(jobs: &JobSystem, saved: &mut TreeState, tree: &DynamicTree) {
    let DynamicTree {
        nodes,
        root,
        free,
        leaves,
        scratch: _,
    } = tree;
    par_map(jobs, &mut saved.nodes, nodes, |n| *n);
    saved.root = *root;
    saved.free = *free;
    saved.leaves = *leaves;
}

fn restore_tree(jobs: &JobSystem, tree: &mut DynamicTree, saved: &TreeState) {
    par_map(jobs, &mut tree.nodes, &saved.nodes, |n| *n);
    tree.root = saved.root;
    tree.free = saved.free;
    tree.leaves = saved.leaves;
}

/// Copies a pair map without allocating once `to` is large enough: `clone_from` copies
/// the table whole when both have as many buckets, and would reallocate otherwise, so
/// then the entries are inserted one by one instead. The map is only looked up, never
/// iterated, so its layout cannot reach results.
fn copy_pairs(to: &mut PairMap, from: &PairMap) {
    if to.capacity() == from.capacity() {
        to.clone_from(from);
    } else {
        to.clear();
        to.extend(from.iter().map(|(&k, &v)| (k, v)));
    }
}

/// Copies contacts into kept ones in place. `clone_from` on the derived `Clone` builds
/// each 496-byte contact whole on the stack, moves it, and clones its point arrays one
/// element at a time; this writes each field once and copies only the live points and
/// impulses (a slice copy).
fn copy_contacts(jobs: &JobSystem, to: &mut Vec<Contact>, from: &[Contact]) {
    to.truncate(from.len());
    let kept = to.len();
    to.extend_from_slice(&from[kept..]);
    par_each(jobs, &mut to[..kept], from, copy_contact);
}

/// One contact, field by field. Destructured without `..`: a new field does not compile
/// until it is copied here.
#[inline]
fn copy_contact(to: &mut Contact, from: &Contact) {
    let Contact {
        body_a,
        body_b,
        id_a,
        id_b,
        proxy_a,
        proxy_b,
        manifold,
        impulses,
        friction,
        restitution,
        solve_friction,
        solve_restitution,
        tangent_velocity,
        solve_normal,
        rolling,
        flags,
        cache,
        alive,
        hit,
    } = from;
    let ContactManifold {
        normal,
        points,
        materials,
    } = manifold;
    to.body_a = *body_a;
    to.body_b = *body_b;
    to.id_a = *id_a;
    to.id_b = *id_b;
    to.proxy_a = *proxy_a;
    to.proxy_b = *proxy_b;
    to.manifold.normal = *normal;
    to.manifold.points.clone_from(points);
    to.manifold.materials = *materials;
    to.impulses.clone_from(impulses);
    to.friction = *friction;
    to.restitution = *restitution;
    to.solve_friction = *solve_friction;
    to.solve_restitution = *solve_restitution;
    to.tangent_velocity = *tangent_velocity;
    to.solve_normal = *solve_normal;
    to.rolling = *rolling;
    to.flags = *flags;
    to.cache = *cache;
    to.alive = *alive;
    to.hit = *hit;
}

/// Bytes a job copies at least: a smaller chunk is not worth handing to another thread.
const CHUNK_BYTES: usize = 64 * 1024;

/// Elements of `T` per chunk for [`par_each`].
fn min_chunk<T>() -> usize {
    (CHUNK_BYTES / std::mem::size_of::<T>().max(1)).max(1)
}

/// `g(to[i], from[i])` for every `i` of `to`, split across the job system's threads in
/// disjoint chunks (the calling thread takes part). Pure copying, so the result is the
/// same whichever thread writes which chunk.
fn par_each<S: Sync, T: Send>(
    jobs: &JobSystem,
    to: &mut [T],
    from: &[S],
    g: impl Fn(&mut T, &S) + Sync,
) {
    debug_assert!(from.len() >= to.len());
    jobs.parallel_for_slice(to, min_chunk::<T>(), |first, chunk| {
        for (t, s) in chunk.iter_mut().zip(&from[first..]) {
            g(t, s);
        }
    });
}

/// Makes `to` `from` mapped by `f`, reusing its buffer: its kept elements are
/// overwritten in parallel ([`par_each`]), a longer `from`'s tail is appended.
fn par_map<S: Sync, T: Send>(
    jobs: &JobSystem,
    to: &mut Vec<T>,
    from: &[S],
    f: impl Fn(&S) -> T + Sync,
) {
    to.truncate(from.len());
    let kept = to.len();
    to.extend(from[kept..].iter().map(&f));
    par_each(jobs, &mut to[..kept], from, |t, s| *t = f(s));
}
