//! Contacts: one per pair of bodies whose fat AABBs overlap and whose filters allow them
//! to collide, kept from step to step while the broad phase says they are close.
//!
//! Life of a contact:
//! 1. The broad phase reports a new pair (sorted by body ids); the filter accepts it; a
//!    contact is created with an id from a LIFO free list (deterministic).
//! 2. Each step the narrow phase recomputes its manifold in parallel (each contact writes
//!    only itself). A new point whose feature id matches one of last step's points takes
//!    over that point's accumulated impulses (warm starting).
//! 3. A contact whose fat AABBs stopped overlapping is destroyed in the serial pass that
//!    follows, which also turns "touching" flag changes into begin/end events.
//!
//! The serial pass walks contacts in id order and events are then sorted by body ids, so
//! no result depends on how the parallel narrow phase was split across threads.

pub mod hooks;

use crate::math::{Mat3A, cross, quat_dot, quat_mul};
use std::collections::HashMap;

use arrayvec::ArrayVec;
use bitflags::bitflags;
use joule_jobs::DisjointPlan;
use smallvec::SmallVec;

use crate::body::{Bodies, BodyId, BodySim, BroadPhaseProxy, MotionType};
use crate::math::{Isometry, Quat, Vec3, Vec3A};

/// Most points a manifold keeps.
pub const MAX_MANIFOLD_POINTS: usize = 4;

/// One contact point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactPoint {
    /// The point on shape A's surface, in A's body frame.
    pub local_a: Vec3A,
    /// The point on shape B's surface, in B's body frame.
    pub local_b: Vec3A,
    /// Signed distance along the normal (negative: penetration; positive: a speculative
    /// point closer than the margin).
    pub separation: f32,
    /// Which features touch, stable across frames while the same features touch (used to
    /// carry impulses over for warm starting).
    pub feature: u32,
}

/// A contact manifold: a shared normal and its points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactManifold {
    /// World-space unit normal from A towards B.
    pub normal: Vec3A,
    /// At most four points.
    pub points: ArrayVec<ContactPoint, MAX_MANIFOLD_POINTS>,
    /// Per side (A, B), the material id of the part of a composite shape the manifold
    /// touches (a mesh triangle's or a compound child's; the part with the deepest
    /// point), or `None` where the shape is not composite or its parts carry no ids.
    /// The contact's friction and restitution mix with it in place of the body's
    /// [`MaterialId`](crate::material::MaterialId) (see [`crate::material`]).
    pub materials: [Option<u32>; 2],
}

bitflags! {
    /// State bits of a contact.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct ContactFlags: u8 {
        /// The manifold has at least one point (within the speculative margin).
        const TOUCHING = 1 << 0;
        /// One of the bodies is a sensor: report overlap, never push.
        const SENSOR = 1 << 1;
        /// The broad phase no longer overlaps this pair: destroy it in the serial pass.
        const DISJOINT = 1 << 2;
        /// Touching was false last step and is true now.
        const STARTED = 1 << 3;
        /// Touching was true last step and is false now.
        const STOPPED = 1 << 4;
        /// With `SENSOR`: body A is the sensor (else body B).
        const SENSOR_IS_A = 1 << 5;
        /// Not a sensor, and the surfaces touch: a point is within
        /// [`TOUCHING_SEPARATION`] or pushed in the last step (see `surfaces_touch`);
        /// speculative points that did not push leave it clear. Begin, persist and end
        /// events follow this bit; `STARTED` and `STOPPED` are its changes.
        const SURFACES_TOUCH = 1 << 6;
    }
}

/// Accumulated impulses of one contact point, kept across steps for warm starting.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactImpulse {
    /// Along the normal (>= 0).
    pub normal: f32,
    /// Along the first friction direction.
    pub tangent1: f32,
    /// Along the second friction direction.
    pub tangent2: f32,
    /// Largest normal impulse of the last step (reported to the user).
    pub max_normal: f32,
    /// Approach speed (relative normal velocity, < 0) of a point whose bounce was due at
    /// the end of the last step but had not happened, 0 otherwise: a bouncy point that
    /// approached at the restitution threshold or faster and pushed, but had not touched
    /// yet (a speculative point that stopped a fast body a substep short of the surface).
    /// The next step's restitution starts from it, so the bounce answers the speed of the
    /// impact and not the slowed remainder. Nothing else is carried, so a resting contact
    /// never remembers an old impact.
    pub approach: f32,
    /// Relative normal velocity of the point in the last solve (< 0: approaching): at
    /// the start of the step, or lower where the solver recorded the approach at the
    /// moment the point started to push (bouncy contacts). What a begin event reports
    /// as the approach speed of the step the surfaces met (see
    /// [`ContactEvent::approach_speed`](crate::events::ContactEvent::approach_speed)).
    pub relative_velocity: f32,
}

/// The largest separation (m) at which a contact point counts as touching: 5.5 mm.
///
/// Zero would be the textbook line, but the solver brings a landing body to rest with its
/// gap closed only up to rounding (a speculative point is stopped at zero separation, not
/// past it), and continuous collision stops a fast body at its impact with a skin of
/// [`CCD_SKIN`](crate::ccd::CCD_SKIN) (5 mm) left between the shapes, from which it may
/// bounce straight back: a strict zero would report such touches a step late, flicker at
/// rest, or miss a CCD impact altogether. The skin plus half a millimetre (Box2D's linear
/// slop is 5 mm too) is well below the speculative margin's few centimetres.
pub const TOUCHING_SEPARATION: f32 = 5.5e-3;

/// Whether a point of contact `c` is within [`TOUCHING_SEPARATION`]. The narrow phase
/// also counts as touching a contact whose solver pushed in the last step: a collision
/// resolved across a speculative gap, so the surfaces never met (two bodies that bounce
/// apart in the step they would have met: restitution acts as the points start to push,
/// gap or not) collided all the same. A speculative point that did not push is no touch.
pub(crate) fn surfaces_touch(c: &Contact) -> bool {
    c.manifold
        .points
        .iter()
        .any(|p| p.separation <= TOUCHING_SEPARATION)
}

/// Where and how hard two surfaces met, recorded by the narrow phase in the step their
/// contact starts touching (Box2D v3's hit events) and carried by the begin event.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ContactHit {
    /// World position of the deepest point, midway between the surfaces.
    pub point: Vec3A,
    /// World unit normal from A towards B.
    pub normal: Vec3A,
    /// How fast the surfaces approached along the normal (m/s, >= 0).
    pub approach_speed: f32,
}

impl ContactHit {
    /// The hit of contact `c` between bodies at `sa` and `sb`: its deepest point, and
    /// the faster of the approach now (two bodies that met without a speculative step
    /// before) and the approach its solver saw last step (the step that stopped the
    /// bodies, for a landing caught by speculative points). The latter is the relative
    /// normal velocity `v` at the start of that step, `gap` apart: carried to the
    /// instant of touch under the bodies' relative gravity `fall` (`v² + 2 a gap`,
    /// constant acceleration), as a step of gravity is 4 % of a 1 m drop's speed at 60 Hz.
    pub(crate) fn of(c: &Contact, sa: &BodySim, sb: &BodySim, gap: f32, fall: Vec3A) -> Self {
        let n = c.manifold.normal;
        let deepest = (0..c.manifold.points.len()).min_by(|&i, &j| {
            let (p, q) = (&c.manifold.points[i], &c.manifold.points[j]);
            p.separation.total_cmp(&q.separation)
        });
        let Some(i) = deepest else {
            return Self::default();
        };
        let p = &c.manifold.points[i];
        let point = (sa.transform.transform_point(p.local_a)
            + sb.transform.transform_point(p.local_b))
            * 0.5;
        let velocity =
            |s: &BodySim| s.linear_velocity + cross(s.angular_velocity, point - s.center);
        let now = (velocity(sb) - velocity(sa)).dot(n);
        let mut last = c.impulses.get(i).map_or(0.0, |imp| imp.relative_velocity);
        let closing = -fall.dot(n);
        if last < 0.0 && gap.is_finite() && gap > 0.0 {
            last = -(last * last + 2.0 * closing * gap).max(0.0).sqrt();
        }
        Self {
            point,
            normal: n,
            approach_speed: (-now.min(last)).max(0.0),
        }
    }
}

impl ContactImpulse {
    /// The [`approach`](Self::approach) a point hands to the next step: it ended the step
    /// with `relative_velocity` (the lowest approach it saw), `pushed` (a positive normal
    /// impulse) and `bounced` or not, under `restitution` and the solver's
    /// `restitution_threshold`.
    #[must_use]
    pub(crate) fn carried_approach(
        relative_velocity: f32,
        pushed: bool,
        bounced: bool,
        restitution: f32,
        restitution_threshold: f32,
    ) -> f32 {
        let due = restitution != 0.0 && relative_velocity <= -restitution_threshold;
        if due && pushed && !bounced {
            relative_velocity
        } else {
            0.0
        }
    }
}

/// The relative pose at which a contact's manifold was last computed (Jolt's body pair
/// cache): while B stays within [`PairCache::MAX_SHIFT`] and
/// [`PairCache::MAX_TURN_COS_HALF`] of that pose relative to A, the narrow phase keeps the
/// manifold's points (fixed in the bodies' frames) and only recomputes their separations
/// and the normal, instead of running the full collision routine. A pile at rest pays
/// almost nothing for its contacts; as the tolerance is against the pose of the last full
/// computation (not the last step), drift cannot accumulate past it.
///
/// While the manifold is kept, its points' lever arms (the solver's anchors, offsets from
/// the centres of mass in world axes) are the ones the bodies had at that computation:
/// the solver turns the current offsets back by each body's rotation since then
/// ([`PairCache::rotation_a`], [`PairCache::rotation_b`]; Box3D's recycled contacts keep
/// their anchors the same way). Anchors that turn with the bodies make a soft contact's
/// normal forces follow a leaning body's tilt, a destabilising moment of `load × lever
/// shift` that its springs must beat: a one-box-deep wall of soft contacts at 4 substeps,
/// 30 Hz leaned over and fell once it was 30 boxes wide at the base (issue 33;
/// `benches/RESULTS.md`). Each body must also stay within [`PairCache::MAX_TURN_COS_HALF`]
/// of its own rotation at that computation, so a pair turning together (a pile on a
/// turntable, a wall falling as one) gets fresh anchors every degree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PairCache {
    /// B's origin in A's frame.
    pub position: Vec3A,
    /// B's rotation relative to A.
    pub rotation: Quat,
    /// The manifold normal in A's frame.
    pub normal: Vec3A,
    /// False until the first full computation (and for sensors, which never reuse).
    pub valid: bool,
    /// A's world rotation at the last full computation.
    pub rotation_a: Quat,
    /// B's world rotation at the last full computation.
    pub rotation_b: Quat,
}

impl PairCache {
    /// How far B may move relative to A before the manifold is recomputed (m).
    pub const MAX_SHIFT: f32 = 1.0e-3;
    /// Cosine of half the largest relative turn before recomputing (a 1 degree turn).
    pub const MAX_TURN_COS_HALF: f32 = 0.999_961_9;
    /// An empty cache (the first update computes the manifold).
    pub const EMPTY: PairCache = PairCache {
        position: Vec3A::ZERO,
        rotation: Quat::IDENTITY,
        normal: Vec3A::ZERO,
        valid: false,
        rotation_a: Quat::IDENTITY,
        rotation_b: Quat::IDENTITY,
    };

    /// Whether the relative pose `rel` (B in A's frame) is close enough to the cached one,
    /// and each body's world rotation (`rotation_a`, `rotation_b`) to its cached one.
    #[inline]
    pub fn matches(&self, rel: &Isometry, rotation_a: Quat, rotation_b: Quat) -> bool {
        self.valid
            && (rel.translation - self.position).length_squared()
                < Self::MAX_SHIFT * Self::MAX_SHIFT
            && quat_dot(rel.rotation, self.rotation).abs() > Self::MAX_TURN_COS_HALF
            && quat_dot(rotation_a, self.rotation_a).abs() > Self::MAX_TURN_COS_HALF
            && quat_dot(rotation_b, self.rotation_b).abs() > Self::MAX_TURN_COS_HALF
    }

    /// The turn that takes a body's current lever arms (its points' offsets from its
    /// centre of mass, world axes) back to those it had when the cache was filled:
    /// `rotation` is the body's rotation now, `cached` its rotation then (see
    /// [`PairCache`]). `None` where the body has not turned (the offsets stay bit for
    /// bit: a static side, a body at rest, a manifold just computed).
    #[inline]
    #[must_use]
    pub fn turn_back(rotation: Quat, cached: Quat) -> Option<Mat3A> {
        (rotation != cached).then(|| Mat3A::from_quat(quat_mul(cached, rotation.conjugate())))
    }
}

/// A contact between two bodies.
#[derive(Clone, Debug)]
pub(crate) struct Contact {
    /// Slot indices, `body_a < body_b`.
    pub body_a: u32,
    pub body_b: u32,
    pub id_a: BodyId,
    pub id_b: BodyId,
    /// Broad-phase proxies of the two bodies.
    pub proxy_a: BroadPhaseProxy,
    pub proxy_b: BroadPhaseProxy,
    pub manifold: ContactManifold,
    /// One per manifold point.
    pub impulses: ArrayVec<ContactImpulse, 4>,
    /// Mixed material.
    pub friction: f32,
    pub restitution: f32,
    /// What the solver uses this step: the mixed values, or what the contact modifier
    /// made of them (see `hooks.rs`), and the target sliding velocity of B relative to A
    /// in the tangent plane (conveyor belts; zero unless a modifier set it).
    pub solve_friction: f32,
    pub solve_restitution: f32,
    pub tangent_velocity: Vec3A,
    /// The normal the solver uses this step: the manifold's, or the modifier's.
    pub solve_normal: Vec3A,
    /// Mixed rolling and spinning resistance.
    pub rolling: crate::material::RollingMaterial,
    pub flags: ContactFlags,
    /// The relative pose of the last full manifold computation.
    pub cache: PairCache,
    /// Both bodies cannot respond (static/kinematic pairs with a sensor only).
    pub alive: bool,
    /// Where the surfaces met, set in the step `STARTED` is (read by that step's events
    /// only, so snapshots do not carry it).
    pub hit: ContactHit,
}

impl Contact {
    /// Replaces the manifold with `new`, carrying impulses over by feature id.
    pub fn update_manifold(&mut self, new: &ContactManifold) {
        let mut impulses = ArrayVec::<ContactImpulse, 4>::new();
        for p in &new.points {
            let old = self
                .manifold
                .points
                .iter()
                .position(|q: &ContactPoint| q.feature == p.feature)
                .map(|i| self.impulses[i])
                .unwrap_or_default();
            impulses.push(old);
        }
        self.manifold.clone_from(new);
        self.impulses = impulses;
    }
}

/// The pair key of two body slots (order-independent).
#[inline]
pub(crate) fn pair_key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (u64::from(lo) << 32) | u64::from(hi)
}

/// Hashes a [`pair_key`] with one multiply and a fold (Fibonacci hashing): the keys are
/// body slots, not attacker input, so the standard library's SipHash buys nothing and
/// cost a few percent of a busy step's contact lookups. The map is never iterated, so
/// its order cannot leak into results either way.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // The table takes its bucket from the low bits and its tag from the high ones:
        // fold the well-mixed high half down.
        self.0 = h ^ (h >> 32);
    }
}

/// The `ends` of a free contact slot.
const DEAD_END: u32 = u32::MAX;

/// The pair → contact map.
pub(crate) type PairMap = HashMap<u64, u32, std::hash::BuildHasherDefault<PairHasher>>;

/// All contacts: a slot array with a free list, plus a pair → contact map for lookups
/// (never iterated, so its order cannot leak into results).
///
/// Sleeping and static bodies cost nothing per step: each body slot lists its contacts
/// (`body_contacts`), and each step the passes over contacts (narrow phase, events,
/// constraint graph, islands) walk only [`active`](Self::active), the contacts of awake
/// bodies, built from the awake bodies' lists. A contact between two sleeping bodies, or
/// a sleeping and a static one, is not visited at all until its island wakes.
#[derive(Clone, Debug, Default)]
pub(crate) struct ContactManager {
    pub contacts: Vec<Contact>,
    pub(crate) free: Vec<u32>,
    pub(crate) pairs: PairMap,
    /// Per body slot, the ids of its live contacts (in no meaningful order: every reader
    /// goes through `active`, which is sorted).
    pub(crate) body_contacts: Vec<SmallVec<[u32; 6]>>,
    /// Ids of the live contacts with at least one awake body, ascending; rebuilt by
    /// `build_active` after new contacts are found, pruned by `finish_contacts`.
    pub(crate) active: Vec<u32>,
    /// Per contact slot, its two body slots (`[DEAD_END; 2]` for a free slot): what
    /// `build_active` reads, packed so the pass does not touch the contacts themselves.
    pub(crate) ends: Vec<[u32; 2]>,
    /// One bit per body slot, the scratch of `build_active`: the awake bodies.
    pub(crate) awake_bits: Vec<u64>,
    /// The narrow phase's plan of disjoint writes to `active` contacts, and its block
    /// boundaries (kept so a warm step does not allocate).
    pub(crate) active_plan: DisjointPlan,
    pub(crate) active_bounds: Vec<usize>,
    /// What each narrow-phase block saw that the serial passes after it must act on (see
    /// [`BlockChanges`]), in block order; reused from step to step.
    pub(crate) changes: ChangeBlocks,
    /// Scratch of `finish_contacts`: positions in `active` of the contacts it destroyed.
    pub(crate) pruned: Vec<u32>,
}

/// What one narrow-phase block saw, so the serial passes after it visit only those
/// contacts instead of every active one (Box2D v3 keeps per-worker bit sets of the same).
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockChanges {
    /// The contacts that became disjoint, or started or stopped touching, by ascending
    /// position in `active`, with what the serial pass reports of them (so it does not
    /// fetch each contact again, a cache miss apiece).
    pub changed: Vec<ChangedContact>,
    /// Ids of touching, non-sensor contacts with a body in a sleeping set: the contacts
    /// that may wake an island, ascending.
    pub sleepers: Vec<u32>,
    /// Awake-set indices of the two bodies of each touching, non-sensor contact between
    /// two awake bodies that are not fixed: the island links (see `island::update_sleep`).
    pub links: Vec<[u32; 2]>,
    /// The touching contacts with points and no sleeping body, as the solver takes them.
    pub solver: Vec<SolverContact>,
}

/// What events report of a contact: its state bits and its bodies' ids.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContactReport {
    pub flags: ContactFlags,
    pub id_a: BodyId,
    pub id_b: BodyId,
    /// Where the surfaces met (for a begin).
    pub hit: ContactHit,
}

impl ContactReport {
    pub(crate) fn of(c: &Contact) -> Self {
        Self {
            flags: c.flags,
            id_a: c.id_a,
            id_b: c.id_b,
            hit: c.hit,
        }
    }
}

/// A contact that changed in the narrow phase, as the serial pass after it needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChangedContact {
    /// Position in `active`.
    pub position: u32,
    /// Contact id.
    pub id: u32,
    /// Its state bits and body ids, for events.
    pub report: ContactReport,
}

/// A contact for the solver, as the narrow phase saw it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SolverContact {
    /// Contact id.
    pub id: u32,
    /// Awake indices of the two bodies where the solver moves them (`Body::solver_index`).
    pub bodies: [Option<u32>; 2],
    /// Whether the contact has rolling or spinning resistance.
    pub rolling: bool,
    /// Points of its manifold (the solver bundles manifolds of equal size together).
    pub points: u8,
}

impl BlockChanges {
    /// A block's changes, outside the narrow phase (no job holds the lock).
    pub(crate) fn get(block: &mut std::sync::Mutex<BlockChanges>) -> &BlockChanges {
        block
            .get_mut()
            .expect("no job panicked holding a block's changes")
    }
}

/// The narrow phase's per-block changes: scratch valid from the narrow phase to the end
/// of the step's serial contact passes, so a clone starts empty.
#[derive(Debug, Default)]
pub(crate) struct ChangeBlocks(pub Vec<std::sync::Mutex<BlockChanges>>);

impl ChangeBlocks {
    /// The blocks in order, each behind its lock (uncontended once the narrow phase is
    /// done: only the serial passes after it read them).
    pub(crate) fn read(&self) -> impl Iterator<Item = std::sync::MutexGuard<'_, BlockChanges>> {
        self.0.iter().map(|block| {
            block
                .lock()
                .expect("no job panicked holding a block's changes")
        })
    }
}

impl Clone for ChangeBlocks {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl ContactManager {
    /// Whether a contact exists for the pair.
    pub fn contains(&self, a: u32, b: u32) -> bool {
        self.pairs.contains_key(&pair_key(a, b))
    }

    /// The contact id of a pair.
    pub fn find(&self, a: u32, b: u32) -> Option<u32> {
        self.pairs.get(&pair_key(a, b)).copied()
    }

    /// Creates a contact; the caller has checked the pair is new and allowed.
    pub fn create(&mut self, mut c: Contact) -> u32 {
        debug_assert!(c.body_a < c.body_b);
        c.alive = true;
        let key = pair_key(c.body_a, c.body_b);
        let id = match self.free.pop() {
            Some(id) => {
                self.contacts[id as usize] = c;
                id
            }
            None => {
                self.contacts.push(c);
                (self.contacts.len() - 1) as u32
            }
        };
        self.pairs.insert(key, id);
        self.link(id);
        id
    }

    /// Adds contact `id` to its two bodies' lists.
    pub(crate) fn link(&mut self, id: u32) {
        let c = &self.contacts[id as usize];
        let (a, b) = (c.body_a as usize, c.body_b as usize);
        let needed = a.max(b) + 1;
        if self.body_contacts.len() < needed {
            self.body_contacts.resize_with(needed, SmallVec::new);
        }
        self.body_contacts[a].push(id);
        self.body_contacts[b].push(id);
        if self.ends.len() < self.contacts.len() {
            self.ends.resize(self.contacts.len(), [DEAD_END; 2]);
        }
        self.ends[id as usize] = [a as u32, b as u32];
    }

    fn unlink(&mut self, id: u32, body: u32) {
        let list = &mut self.body_contacts[body as usize];
        let at = list
            .iter()
            .position(|&c| c == id)
            .expect("a live contact is in its bodies' lists");
        list.swap_remove(at);
    }

    /// Rebuilds [`active`](Self::active): the live contacts with a body in
    /// `awake_bodies` (slot indices), ascending by id. One pass over the compact
    /// [`ends`](Self::ends), two bit tests per contact slot: sequential reads instead of
    /// a walk through every awake body's list.
    pub(crate) fn build_active(&mut self, awake_bodies: impl Iterator<Item = u32>) {
        self.awake_bits.clear();
        for body in awake_bodies {
            let w = body as usize / 64;
            if self.awake_bits.len() <= w {
                self.awake_bits.resize(w + 1, 0);
            }
            self.awake_bits[w] |= 1 << (body % 64);
        }
        let awake = &self.awake_bits;
        let is_awake = |b: u32| {
            awake
                .get(b as usize / 64)
                .is_some_and(|w| w & (1 << (b % 64)) != 0)
        };
        self.active.clear();
        self.active.extend(
            (0u32..)
                .zip(&self.ends)
                .filter(|&(_, &[a, b])| a != DEAD_END && (is_awake(a) || is_awake(b)))
                .map(|(id, _)| id),
        );
    }

    /// Destroys a live contact (`pipeline::remove_contact` also reports its end). Its
    /// bodies come from the packed [`ends`](Self::ends): the contact is only written,
    /// never read.
    pub fn destroy(&mut self, id: u32) {
        let [a, b] = self.ends[id as usize];
        debug_assert!(a != DEAD_END, "contact {id} is live");
        let c = &mut self.contacts[id as usize];
        c.alive = false;
        c.manifold.points.clear();
        c.impulses.clear();
        c.flags = ContactFlags::empty();
        self.pairs.remove(&pair_key(a, b));
        self.unlink(id, a);
        self.unlink(id, b);
        self.ends[id as usize] = [DEAD_END; 2];
        self.free.push(id);
    }

    /// Ids of live contacts involving body slot `body`, in id order.
    pub fn contacts_of(&self, body: u32) -> SmallVec<[u32; 6]> {
        let mut ids = self
            .body_contacts
            .get(body as usize)
            .cloned()
            .unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// Number of live contacts.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }
}

/// Whether a pair of motion types can produce a contact at all.
pub(crate) fn motion_types_collide(a: MotionType, b: MotionType, sensor: bool) -> bool {
    match (a, b) {
        (MotionType::Dynamic, _) | (_, MotionType::Dynamic) => true,
        // A kinematic sensor still reports static or kinematic bodies entering it.
        (MotionType::Kinematic, _) | (_, MotionType::Kinematic) => sensor,
        _ => false,
    }
}

/// A contact as the user sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactInfo {
    /// First body (lower id).
    pub body_a: BodyId,
    /// Second body.
    pub body_b: BodyId,
    /// World normal from A to B.
    pub normal: Vec3,
    /// World contact points (midway between the two surfaces) with their separations
    /// (negative = penetration).
    pub points: ArrayVec<(Vec3, f32), 4>,
    /// Accumulated normal impulses of last solve, per point.
    pub normal_impulses: ArrayVec<f32, 4>,
}

/// A contact's points in world space (midway between the two surfaces) with their
/// separations.
pub(crate) fn world_points<'a>(
    c: &'a Contact,
    sa: &'a BodySim,
    sb: &'a BodySim,
) -> impl Iterator<Item = (Vec3A, f32)> + 'a {
    c.manifold.points.iter().map(|p| {
        let pa = sa.transform.transform_point(p.local_a);
        let pb = sb.transform.transform_point(p.local_b);
        ((pa + pb) * 0.5, p.separation)
    })
}

/// The user-facing view of a contact.
pub(crate) fn contact_info(bodies: &Bodies, c: &Contact) -> ContactInfo {
    let (sa, sb) = (bodies.sim_of(c.body_a), bodies.sim_of(c.body_b));
    let points = world_points(c, sa, sb)
        .map(|(p, s)| (p.into(), s))
        .collect();
    ContactInfo {
        body_a: c.id_a,
        body_b: c.id_b,
        normal: c.manifold.normal.into(),
        points,
        normal_impulses: c.impulses.iter().map(|i| i.normal).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache filled with A and B at these poses.
    fn cache_at(a: &Isometry, b: &Isometry) -> PairCache {
        let rel = a.inverse().mul_isometry(b);
        PairCache {
            position: rel.translation,
            rotation: rel.rotation,
            normal: Vec3A::Y,
            valid: true,
            rotation_a: a.rotation,
            rotation_b: b.rotation,
        }
    }

    /// The cache is kept while nothing turned or moved, and refused once the pair has
    /// turned 2 degrees together (the relative pose unchanged): the kept lever arms
    /// would then be 2 degrees off, past the cache's 1-degree tolerance.
    #[test]
    fn a_pair_turning_together_refills_the_cache() {
        let a = Isometry::new(Vec3A::new(1.0, 0.5, -2.0), Quat::from_rotation_y(0.3));
        let b = a.mul_isometry(&Isometry::from_translation(Vec3A::new(0.0, 1.0, 0.0)));
        let cache = cache_at(&a, &b);
        let rel = |a: &Isometry, b: &Isometry| a.inverse().mul_isometry(b);
        assert!(cache.matches(&rel(&a, &b), a.rotation, b.rotation));
        for angle in [0.5f32, 2.0] {
            let turn = Isometry::new(Vec3A::ZERO, Quat::from_rotation_z(angle.to_radians()));
            let (a2, b2) = (turn.mul_isometry(&a), turn.mul_isometry(&b));
            let kept = cache.matches(&rel(&a2, &b2), a2.rotation, b2.rotation);
            assert_eq!(kept, angle < 1.0, "turned together by {angle} degrees");
        }
    }

    /// `turn_back` takes a body's current offset back to the one it had when the cache
    /// was filled (within rounding), and is `None` for a body that has not turned.
    #[test]
    fn turn_back_undoes_the_turn_since_the_cache() {
        let cached = Quat::from_rotation_x(0.2) * Quat::from_rotation_y(-0.7);
        assert_eq!(PairCache::turn_back(cached, cached), None);
        let now = Quat::from_rotation_z(0.01) * cached;
        let offset = Vec3A::new(0.5, -0.5, 0.5);
        let turned = crate::math::rotate(now, offset);
        let back = PairCache::turn_back(now, cached).expect("the body turned") * turned;
        let expected = crate::math::rotate(cached, offset);
        assert!(
            (back - expected).length() < 1e-6,
            "{back:?} against {expected:?}"
        );
    }

    fn contact(a: u32, b: u32) -> Contact {
        Contact {
            body_a: a,
            body_b: b,
            ..crate::world::snapshot::dead_contact()
        }
    }

    /// `active` holds exactly the live contacts with an awake body, ascending, through
    /// destroyed and reused slots, whatever order the bodies are listed in.
    #[test]
    fn active_contacts_are_the_live_ones_of_awake_bodies_in_id_order() {
        let mut m = ContactManager::default();
        // Bodies 0-2 awake, 3-5 asleep or static.
        let ids: Vec<u32> = [(0, 1), (3, 4), (2, 5), (4, 5), (1, 2), (0, 3)]
            .into_iter()
            .map(|(a, b)| m.create(contact(a, b)))
            .collect();
        m.build_active([2, 0, 1].into_iter());
        assert_eq!(m.active, [ids[0], ids[2], ids[4], ids[5]]);

        m.destroy(ids[2]);
        m.destroy(ids[1]);
        m.build_active([1, 0, 2].into_iter());
        assert_eq!(m.active, [ids[0], ids[4], ids[5]]);

        // The freed slots are reused: by a sleeping pair, then an awake one.
        let asleep = m.create(contact(3, 5));
        let awake = m.create(contact(2, 4));
        assert!([ids[1], ids[2]].contains(&asleep) && [ids[1], ids[2]].contains(&awake));
        m.build_active([0, 1, 2].into_iter());
        let mut expected = vec![ids[0], ids[4], ids[5], awake];
        expected.sort_unstable();
        assert_eq!(m.active, expected);

        // Waking body 5 activates its contacts too; with nobody awake, none is active.
        m.build_active([5, 0, 1, 2].into_iter());
        expected.push(asleep);
        expected.push(ids[3]);
        expected.sort_unstable();
        assert_eq!(m.active, expected);
        m.build_active(std::iter::empty());
        assert!(m.active.is_empty());
    }
}
