//! The solver: Box2D v3's soft step, in 3D, over a graph-coloured set of constraints.
//!
//! Why this solver: among the two candidates the issue names (a soft-step solver with
//! substeps, or a Jolt-style velocity + position solve), the soft step keeps tall stacks
//! and pyramids stable with few iterations because each substep integrates positions and
//! the soft contacts never overshoot; it also needs no separate position pass, which halves
//! the passes over constraint memory. Box2D v3 and Box3D measure it as the most robust of
//! the family ("Solver2D", Catto 2024).
//!
//! What we measured choosing the settings (physics/tests/behaviour/stacking.rs, examples/tests/scenes.rs):
//! - A soft contact is a spring: under a load it settles at `load * g / omega²` of overlap,
//!   so a pile sags by the sum over its layers. At Box2D's 30 Hz and 4 substeps the 10-box
//!   stack sank 2.5 cm, pyramid20 3 cm and pyramid_big 12 cm before creeping apart.
//! - Stiffer springs are only stable while `h * omega` stays below about 1 (`h` the substep):
//!   at 4 substeps, 60 Hz already made a 10-box pyramid rock and walk, and Box2D's doubled
//!   stiffness for static contacts did the same to a 4-box one. Dropping the spring's
//!   memory (rigid, Baumgarte-like contacts) rocked even a plain stack with 4 iterations.
//! - So stiffness is bought with substeps: 10 substeps at 90 Hz (`h * omega` = 0.94, the
//!   [`SolverSettings::stiff`] preset) keep the 10-stack within 3 mm, pyramid20 within
//!   4 mm and pyramid_big within 14 mm, at about twice the solver time of 4 substeps. The
//!   default, 6 substeps at 54 Hz, sags pyramid_big 3.7 cm (the peers: 11 cm) at 0.65-0.7
//!   of that cost (the table on [`SolverSettings`]). The hertz is capped at
//!   [`MAX_HERTZ_PER_SUBSTEP_RATE`] of the substep rate so fewer substeps stay stable.
//! - Friction is solved in the relax pass only (as Box2D v3 does): 8 % of the step,
//!   and no change in sag, drift, or the friction tests.
//!
//! ```text
//!  step(dt):  prepare contacts (anchors, masses)          once
//!             for each of N substeps (h = dt / N):
//!                integrate velocities  (gravity, forces, damping)   parallel over bodies
//!                warm start            (last impulses)              per colour, parallel
//!                solve                 (soft normal, position bias) per colour, parallel
//!                integrate positions                                parallel over bodies
//!                relax                 (friction, normal without bias)
//!             store impulses for the next step's warm start
//!
//!  restitution: inside the solve and relax passes, once per point and step, when a
//!  bouncy point first pushes while touching (sequential pairwise collisions, so chains
//!  such as Newton's cradle carry the striker's speed; see `ContactConstraint::solve`)
//! ```
//!
//! Each colour of the constraint graph is one parallel stage: its constraints share no
//! dynamic body, so blocks of them are solved by different jobs at once, each job holding
//! a [`joule_jobs::DisjointChunk`] of exactly the bodies its block touches. Within a
//! colour, consecutive constraints are bundled eight to a SIMD lane set
//! (`contact_bundle.rs`, Box2D v3's wide contact solver); each lane computes exactly what
//! the scalar [`contact::ContactConstraint`] would, so bundling changes speed, not results.
//! The overflow colour is solved serially, scalar, after the others. Joints are coloured
//! in the same graph; in each pass a colour's joints run as a stage of their own before
//! the contacts (`joint_stage.rs`, scalar rows from `joint.rs`). Trees of ball joints with
//! unequal masses leave the graph: each is solved exactly, first in every pass
//! (`joint_tree.rs`). Colouring and bundle
//! boundaries depend only on constraint order, and a colour's blocks (how many depends
//! on the thread count) only decide who solves which bundles, so results are identical
//! for any thread count.

mod angular_bundle;
mod ball_bundle;
mod build;
pub mod contact;
mod contact_bundle;
mod force_events;
mod integrate;
pub mod joint;
pub(crate) mod joint_stage;
pub(crate) mod joint_tree;
mod simd;
mod wide;

use joule_jobs::{DisjointChunk, DisjointPlan, JobSystem, Team, TeamScope};
use smallvec::SmallVec;

use crate::body::{Bodies, BodySim, LockedAxes, MotionType};
use crate::contact::{ContactFlags, ContactManager, MAX_MANIFOLD_POINTS};
use crate::dynamics::constraint_graph::{COLOR_COUNT, ConstraintGraph, ConstraintKind, GraphEntry};
use crate::geometry::prefetch::prefetch;
use crate::joint::Joints;
use crate::math::{self, Mat3A, Quat, Vec3A};

use contact::{
    BodyMass, ConstraintPoint, ContactConstraint, Patch, RollingRows, Softness, SolverBody,
    tangent_basis,
};
use contact_bundle::{ContactBundle, SolveParams, StartVelocities};
use wide::LANES;

use build::build_constraints;
pub(crate) use force_events::force_events;
use integrate::{
    integrate_free, integrate_positions, integrate_velocities, load_bodies, store_bodies,
};

/// Contact stiffness is capped at this fraction of the substep rate (`h * omega` <= 0.94,
/// the stability limit measured above).
pub const MAX_HERTZ_PER_SUBSTEP_RATE: f32 = 0.15;

/// Solver settings.
///
/// The default is stiffer than the peers' at about 0.7 of the step time of
/// [`SolverSettings::stiff`]: 6 substeps at 54 Hz (the most the stability cap allows at
/// that substep rate). After 6 s the top of pyramid_big (40 layers) sags 3.7 cm and the
/// pile stands without creeping for 20 s and more; Rapier, Box3D and Jolt sag 10.8-11.5
/// cm there. What the candidates measured (pyramid_big, 1 thread, same run):
///
/// | substeps, hertz | top sag at 6 s | worst drift at 20 s | step time vs `stiff()` |
/// |---|---|---|---|
/// | 10, 90 (`stiff()`) | 1.3 cm | 0.1 cm | 1 |
/// | 7, 63 | 2.7 cm | 0.4 cm | 0.78 |
/// | **6, 54 (default)** | 3.7 cm | 0.6 cm | 0.65 |
/// | 5, 45 | 5.4 cm | 64 cm: the one-box-thick wall leans over | 0.55 |
/// | 4, 36 | 9.3 cm | falls | 0.48 |
/// | 4, 30 (Box3D's, static 60 Hz) | 11.9 cm | falls | 0.47 |
///
/// Since a kept contact manifold keeps the lever arms it was computed with (issue 33;
/// `PairCache` in the contact module), the wall stands at every row (measured on
/// `wall_probe`, pyramid_big's wall alone, drift at 20 s): 5, 45 sags 5.3 cm and
/// drifts 0.47 cm; 4, 36 sags 8.3 cm, drifts 0.91 cm and leans 1 cm at most in 60 s;
/// 4, 30 sags 11.7 cm and drifts 1.4 cm. The default stays at 6 substeps: at 4, 36 nine
/// behaviour tests fail, among them a load of 100 links' mass on a light chain (its
/// length off by metres), a whipping chain, a door's hinge, a ten-box stack (1.9 cm of
/// drift against 1 cm), dropped crossed boards (tilted 1.02 degrees against 1), a
/// sliding box's and a rolling ball's deceleration.
///
/// Stiffer springs at 4 substeps are unstable (see the module header), doubling the
/// stiffness of static contacts only shaved 0.4 cm off the sag (the ground carries one
/// layer of 40), and solving friction in the relax pass only saved 8 % of the step with
/// no change in sag or drift, so it is always on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverSettings {
    /// Substeps per step.
    pub substeps: u32,
    /// Stiffness of contacts, in Hz (capped at [`MAX_HERTZ_PER_SUBSTEP_RATE`] of the substep
    /// rate). Static contacts use the same stiffness.
    pub contact_hertz: f32,
    /// Damping ratio of contacts.
    pub contact_damping_ratio: f32,
    /// Fastest speed at which overlap is pushed apart (m/s).
    pub max_push_out_speed: f32,
    /// Approach speed at and above which restitution applies (m/s): a contact that closes
    /// at exactly this speed bounces, a slower one does not (Box2D v3's and Box3D's rule:
    /// a Newton's cradle struck at exactly 1 m/s is elastic). It is compared with the
    /// approach at the contact, which gravity may have changed during the step.
    pub restitution_threshold: f32,
    /// Trees of ball joints whose heaviest body has at least this many times the mass of
    /// the lightest are solved exactly, each tree as one sparse linear system
    /// (`joint_tree.rs`), instead of joint by joint: iterating loses most of a heavy
    /// load's weight at every light link, so a 100:1 load sags its chain by centimetres.
    /// 1 solves every ball-joint tree exactly, `f32::INFINITY` none. Per link the exact
    /// solve costs about as much as the iterative one plus a factorisation per substep.
    pub joint_tree_mass_ratio: f32,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            substeps: 6,
            contact_hertz: 54.0,
            contact_damping_ratio: 10.0,
            max_push_out_speed: 3.0,
            restitution_threshold: 1.0,
            joint_tree_mass_ratio: 4.0,
        }
    }
}

impl SolverSettings {
    /// The stiff preset: 10 substeps at 90 Hz, about 1.4 times the default's step time on
    /// pyramid_big (1.25 on many_pyramids).
    /// pyramid_big's top sags 1.3 cm after 6 s, pyramid20's 3.5 mm, a 10-box stack's
    /// under 3 mm; for tall stacks and towers that must look rigid.
    #[must_use]
    pub fn stiff() -> Self {
        Self {
            substeps: 10,
            contact_hertz: 90.0,
            ..Self::default()
        }
    }

    /// The peers' pass count: 4 substeps at 36 Hz, about 0.74 of the default's step time
    /// on pyramid_big (the table above). Box piles stand as on the default, softer: a
    /// kept manifold keeps its lever arms (issue 33), so pyramid_big's one-box-deep wall
    /// stands with its top 8-9 cm down after 6 s (Rapier's, Box3D's and Jolt's: 10.8-11.5
    /// cm) and no box creeping. Joints and friction are less exact than on the default: a
    /// heavy load on a light chain stretches it, a whipping chain's joints open by
    /// millimetres, and a sliding box decelerates about 2 % slower than `μg` (the
    /// behaviour tests that hold the default to those bounds fail here), so it is a preset
    /// for scenes of boxes and loose bodies, not the default.
    #[must_use]
    pub fn fast() -> Self {
        Self {
            substeps: 4,
            contact_hertz: 36.0,
            ..Self::default()
        }
    }
}

/// Per awake body, the step's constant inputs to velocity integration.
#[derive(Clone, Copy, Debug, Default)]
struct BodyParams {
    /// Velocity change per substep from gravity and forces.
    dv: Vec3A,
    /// Compensation of the rounding of `v + dv` (see `BodySim::velocity_carry`).
    carry: Vec3A,
    /// Angular velocity change per substep from torques.
    dw: Vec3A,
    linear_damping: f32,
    angular_damping: f32,
    max_linear_speed: f32,
    max_angular_speed: f32,
    dynamic: bool,
    /// The inertia is not isotropic, so a spinning body feels the gyroscopic torque
    /// `-w × (I w)` (see `gyroscopic_substep`); false for spheres and cubes, which skip it.
    gyroscopic: bool,
    /// Rotation at the start of the step (the current one is `dq * rotation0`).
    rotation0: Quat,
    /// Inertia about the centre of mass in local axes (zero unless `gyroscopic`).
    inertia_local: Mat3A,
    /// A dynamic body in no constraint this step: all its substeps are integrated at once
    /// (see `free_flight`) and the per-substep passes skip it.
    free: bool,
    /// Substep length and count (copies of the step constants, so a job needs no more
    /// than its two chunks).
    h: f32,
    substeps: u32,
    /// The body's locked axes (empty unless dynamic): their velocity components are
    /// zeroed after each velocity substep and before each position substep.
    locks: LockedAxes,
}

/// One colour's constraints, [`LANES`] to a bundle, and the plan of bodies they write.
#[derive(Clone, Debug, Default)]
struct ColorWork {
    bundles: Vec<ContactBundle>,
    plan: DisjointPlan,
    /// Plan positions at block boundaries.
    bounds: Vec<usize>,
    /// Bundle index at block boundaries.
    blocks: Vec<usize>,
    /// Per constraint of the colour, its bodies' positions in `plan` (none for a fixed
    /// side).
    slots: Vec<(Option<u32>, Option<u32>)>,
}

/// Which integration passes a block of `BODY_BLOCK` bodies needs.
#[derive(Clone, Copy, Debug, Default)]
struct BlockWork {
    /// A body that is not free: the substep passes visit the block.
    substeps: bool,
    /// A free body: `integrate_free` visits the block.
    free: bool,
}

/// Buffers kept between steps so the solver does not allocate once warm.
#[derive(Clone, Debug, Default)]
pub(crate) struct SolverScratch {
    bodies: Vec<SolverBody>,
    /// Per block of `BODY_BLOCK` bodies: which integration passes have work in it.
    block_work: Vec<BlockWork>,
    /// Masses of `bodies`, read when constraints are prepared.
    masses: Vec<BodyMass>,
    params: Vec<BodyParams>,
    graph: ConstraintGraph,
    entries: Vec<GraphEntry>,
    /// Contacts with rolling or spinning resistance: solved with the overflow (scalar,
    /// serial, after the colours), since the SIMD bundles have no angular rows. Few
    /// contacts have them (balls, wheels).
    rolling_entries: Vec<GraphEntry>,
    /// Manifold point count by contact id, for the contacts coloured this step (a compact
    /// key for ordering colours; other ids hold stale values and are never read).
    points_of: Vec<u8>,
    colors: Vec<ColorWork>,
    overflow: Vec<ContactConstraint>,
    constants: StepConstants,
    /// The joints of the step, coloured with the contacts (`joint_stage.rs`).
    joints: joint_stage::JointScratch,
    /// The trees of ball joints, solved directly (`joint_tree.rs`).
    trees: joint_tree::TreeScratch,
    /// The workers that run the substeps' stages (see `solve`).
    team: SolverTeam,
    /// The plan of `store_impulses`' writes (kept so a warm step does not allocate).
    store: StorePlan,
}

/// `store_impulses`' plan of disjoint writes to the contacts, its block boundaries and
/// each block's bundles (colour, bundle range).
#[derive(Clone, Debug, Default)]
struct StorePlan {
    plan: DisjointPlan,
    bounds: Vec<usize>,
    blocks: Vec<(usize, std::ops::Range<usize>)>,
}

/// The solver's [`Team`], kept between steps (creating one allocates; running it does
/// not). A clone of the scratch gets a team of its own.
#[derive(Debug, Default)]
struct SolverTeam(Option<Team>);

impl Clone for SolverTeam {
    fn clone(&self) -> Self {
        Self(None)
    }
}

/// Fewest constraints per block within a colour (a whole number of bundles).
const BLOCK: usize = 32;
const _: () = assert!(BLOCK.is_multiple_of(LANES), "blocks hold whole bundles");

/// How many blocks a colour is cut into at most on `jobs` (blocks hold at least
/// [`BLOCK`] constraints): [`MAX_BLOCKS`] where threads share a colour, and one where a
/// lone thread solves it, which then claims nothing and hands nothing off (a colour of
/// rain4k was 58 claims of 0.7 us on one thread too). A traced lone thread is cut as more
/// threads would be, so that a scaling model reads from its trace the pieces they would
/// share. Blocks never change a result: each bundle is solved from its own constraints
/// and bodies. (Cutting by thread count, about four blocks per thread, was tried too: on
/// the loaded 2-core machine it could not be told apart from this, and coarse blocks
/// leave a thread that runs slower, on a shared core, holding the stage's last block.)
fn color_blocks(jobs: &JobSystem) -> usize {
    if jobs.num_threads() == 1 && !jobs.tracing() {
        1
    } else {
        MAX_BLOCKS
    }
}

/// Most blocks per colour (larger colours get larger blocks): the blocks of a colour are
/// handed to the workers from an array on the stack, so solving allocates nothing.
pub(crate) const MAX_BLOCKS: usize = 64;
/// Most runs of bundles the constraint build hands out (see `build_constraints`).
const BUILD_ITEMS: usize = 256;
/// One run of a colour's bundles to build: the first bundle's index in the colour, the
/// bundles, and the colour's entries and plan slots.
type BuildItem<'a> = (
    usize,
    &'a mut [ContactBundle],
    &'a [GraphEntry],
    &'a [(Option<u32>, Option<u32>)],
);
/// Bodies per job in integration.
const BODY_BLOCK: usize = 256;

/// Lets the bundled solver use AVX2 where the CPU has it (the default), or keeps it on the
/// baseline SSE path of an x86-64 build. Results are bit for bit the same either way: every
/// lane does the same IEEE operations in the same order on both paths (see `simd.rs`).
/// This switch exists to check that, and to compare the two paths' speed. It is global (all
/// worlds) and has no effect on other targets or in builds that already enable AVX2.
pub fn use_avx2(enabled: bool) {
    simd::allow_avx2(enabled);
}

/// Step constants the three solver stages share.
#[derive(Clone, Copy, Debug, Default)]
struct StepConstants {
    substeps: u32,
    h: f32,
    inv_h: f32,
    max_push: f32,
    restitution_threshold: f32,
    softness: Softness,
}

/// Stage "constraint graph": loads the awake bodies into solver bodies, colours the
/// touching contacts and prepares their constraints (anchors, effective masses).
#[allow(
    clippy::too_many_arguments,
    reason = "the stage's inputs, each a separate part of the world"
)]
pub(crate) fn prepare(
    jobs: &JobSystem,
    bodies: &Bodies,
    contacts: &ContactManager,
    joints: &mut Joints,
    gravity: Vec3A,
    dt: f32,
    settings: &SolverSettings,
    s: &mut SolverScratch,
) {
    let substeps = settings.substeps.max(1);
    let h = dt / substeps as f32;
    let hertz = settings
        .contact_hertz
        .min(MAX_HERTZ_PER_SUBSTEP_RATE * substeps as f32 / dt);
    let soft = Softness::new(hertz, settings.contact_damping_ratio, h);
    // Box2D doubles the stiffness against static bodies; at our cap that crosses the
    // stability limit (a 4-box pyramid rocked), so every contact uses the same springs.
    s.constants = StepConstants {
        substeps,
        h,
        inv_h: 1.0 / h,
        max_push: settings.max_push_out_speed,
        restitution_threshold: settings.restitution_threshold,
        softness: soft,
    };
    load_bodies(jobs, bodies, gravity, h, s);
    joint_tree::select(
        bodies,
        joints,
        &s.masses,
        settings.joint_tree_mass_ratio,
        &mut s.trees,
    );
    build_constraints(jobs, bodies, contacts, joints, soft, s);
    joint_stage::prepare(jobs, bodies, joints, &s.masses, dt, substeps, &mut s.joints);
    let params = joint_stage::params(&s.joints);
    joint_tree::prepare(jobs, bodies, joints, &s.masses, params, &mut s.trees);
}

/// Stage "solve": the substeps (velocity integration, warm start, solve, position
/// integration, relax, restitution within them), colour by colour. Works on the solver's copy of
/// the bodies only.
///
/// The substeps are hundreds of short parallel stages (each colour of each pass of each
/// substep), so they run on a [`Team`]: the workers join once and each stage costs one
/// atomic store and one counter to wait on, instead of a job per block and a wake-up per
/// stage (Box2D v3's solver stages). Which constraints and bodies a stage item covers
/// depends only on the constraint order, never on who runs it, so results stay
/// identical at any thread count.
pub(crate) fn solve(jobs: &JobSystem, s: &mut SolverScratch) {
    let mut team = s.team.0.take().unwrap_or_default();
    jobs.team(&mut team, jobs.num_workers(), |t| solve_on(t, s));
    s.team.0 = Some(team);
}

fn solve_on(t: &TeamScope<'_>, s: &mut SolverScratch) {
    let k = s.constants;
    let params = SolveParams {
        h: k.h,
        inv_h: k.inv_h,
        max_push: k.max_push,
        softness: k.softness,
        restitution_threshold: k.restitution_threshold,
    };
    integrate_free(t, s);
    let joints = !joint_stage::is_empty(&s.joints);
    let trees = !joint_tree::is_empty(&s.trees);
    for _ in 0..k.substeps {
        integrate_velocities(t, s);
        if trees {
            joint_tree::run(t, &mut s.trees, &mut s.bodies, joint::Pass::WarmStart);
        }
        if joints {
            joint_stage::run(t, &mut s.joints, &mut s.bodies, joint::Pass::WarmStart);
        }
        for_each_constraint(t, s, simd::warm_start, |c, a, b| c.warm_start(a, b));
        if trees {
            joint_tree::run(t, &mut s.trees, &mut s.bodies, joint::Pass::Solve(true));
        }
        if joints {
            joint_stage::run(t, &mut s.joints, &mut s.bodies, joint::Pass::Solve(true));
        }
        for_each_constraint(
            t,
            s,
            |b, chunk| simd::solve(b, chunk, &params, true),
            |c, a, b| {
                c.solve(
                    a,
                    b,
                    k.h,
                    k.inv_h,
                    k.max_push,
                    k.restitution_threshold,
                    true,
                )
            },
        );
        integrate_positions(t, s);
        if trees {
            joint_tree::run(t, &mut s.trees, &mut s.bodies, joint::Pass::Solve(false));
        }
        if joints {
            joint_stage::run(t, &mut s.joints, &mut s.bodies, joint::Pass::Solve(false));
        }
        for_each_constraint(
            t,
            s,
            |b, chunk| simd::solve(b, chunk, &params, false),
            |c, a, b| {
                c.solve(
                    a,
                    b,
                    k.h,
                    k.inv_h,
                    k.max_push,
                    k.restitution_threshold,
                    false,
                )
            },
        );
    }
}

/// Stage "integrate": writes the solved velocities and poses back to the bodies and the
/// impulses back to the contacts (for the next step's warm start).
///
/// Bodies are written in parallel blocks (each body from its own solver body only), then
/// contact impulses in parallel blocks of bundles (each contact from its own lane only).
pub(crate) fn finish(
    jobs: &JobSystem,
    bodies: &mut Bodies,
    contacts: &mut ContactManager,
    joints: &mut Joints,
    s: &mut SolverScratch,
) {
    store_bodies(jobs, bodies, s);
    store_impulses(jobs, contacts, s);
    joint_stage::store(joints, &s.joints, joint_tree::results(&s.trees));
}

/// The awake index of a body if the solver may move it.
/// Whether a joint is solved this step: alive, enabled, and neither body disabled (a
/// disabled body takes no part in the step, so its joints hold nothing).
pub(crate) fn joint_takes_part(bodies: &Bodies, j: &crate::joint::Joint) -> bool {
    j.alive
        && j.enabled
        && !bodies.bodies[j.body_b as usize].disabled
        && j.body_a.is_none_or(|a| !bodies.bodies[a as usize].disabled)
}

fn solver_index(bodies: &Bodies, index: u32) -> Option<u32> {
    bodies.bodies[index as usize].solver_index()
}

fn fixed_velocity(bodies: &Bodies, index: u32) -> (Vec3A, Vec3A) {
    let b = &bodies.bodies[index as usize];
    if b.motion_type == MotionType::Kinematic {
        let sim = bodies.sim_of(index);
        (sim.linear_velocity, sim.angular_velocity)
    } else {
        (Vec3A::ZERO, Vec3A::ZERO)
    }
}

/// Runs `bundled` on every bundle, colour by colour, blocks of a colour in parallel, then
/// `scalar` on the overflow constraints serially.
fn for_each_constraint(
    t: &TeamScope<'_>,
    s: &mut SolverScratch,
    bundled: impl Fn(&mut [ContactBundle], &mut DisjointChunk<'_, SolverBody>) + Sync,
    scalar: impl Fn(&mut ContactConstraint, &mut SolverBody, &mut SolverBody),
) {
    let bundled = &bundled;
    for work in &mut s.colors {
        if work.bundles.is_empty() {
            continue;
        }
        let chunks = work
            .plan
            .chunks(&mut s.bodies, &work.bounds)
            .expect("plan built for these bodies and bounds");
        let mut blocks = blocks_with_chunks(&mut work.bundles, &work.blocks, chunks);
        t.for_each_mut(&mut blocks, |(block, chunk)| bundled(block, chunk));
    }
    for c in &mut s.overflow {
        let mut fixed_a = SolverBody::FIXED;
        let mut fixed_b = SolverBody::FIXED;
        match (c.body_a, c.body_b) {
            (Some(ia), Some(ib)) => {
                let (a, b) = pair_mut(&mut s.bodies, ia as usize, ib as usize);
                scalar(c, a, b);
            }
            (Some(ia), None) => scalar(c, &mut s.bodies[ia as usize], &mut fixed_b),
            (None, Some(ib)) => scalar(c, &mut fixed_a, &mut s.bodies[ib as usize]),
            (None, None) => {}
        }
    }
}

/// Splits a colour's constraints (or bundles) at its block boundaries `starts` and pairs
/// each block with the chunk of bodies it writes, on the stack (at most [`MAX_BLOCKS`]):
/// workers claim blocks from this array, so no job is spawned per block.
pub(crate) fn blocks_with_chunks<'a, 'b, T>(
    items: &'a mut [T],
    starts: &[usize],
    chunks: impl Iterator<Item = DisjointChunk<'b, SolverBody>>,
) -> SmallVec<[(&'a mut [T], DisjointChunk<'b, SolverBody>); MAX_BLOCKS]> {
    let mut blocks = SmallVec::new();
    let mut rest = items;
    for (w, chunk) in starts.windows(2).zip(chunks) {
        let (block, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        rest = tail;
        blocks.push((block, chunk));
    }
    blocks
}

/// The two distinct bodies `ia` and `ib` of `bodies`, mutably (overflow constraints are
/// solved serially, so a plain split is enough).
pub(crate) fn pair_mut(
    bodies: &mut [SolverBody],
    ia: usize,
    ib: usize,
) -> (&mut SolverBody, &mut SolverBody) {
    debug_assert_ne!(ia, ib, "a constraint's two bodies are distinct");
    if ia < ib {
        let (lo, hi) = bodies.split_at_mut(ib);
        (&mut lo[ia], &mut hi[0])
    } else {
        let (lo, hi) = bodies.split_at_mut(ia);
        (&mut hi[0], &mut lo[ib])
    }
}

/// Contacts per job when impulses are stored: whole bundles.
const STORE_BLOCK: usize = 32 * LANES;

/// Writes the solved impulses back to their contacts, in parallel blocks of bundles: the
/// bundles' contacts are distinct, so each block writes its own contacts through a
/// [`DisjointPlan`] over the contact slots (the writes miss the cache, contact by
/// contact: serial, they were a tenth of many_pyramids' step at 2 threads).
fn store_impulses(jobs: &JobSystem, contacts: &mut ContactManager, s: &mut SolverScratch) {
    let threshold = s.constants.restitution_threshold;
    let store = &mut s.store;
    store.bounds.clear();
    store.bounds.push(0);
    store.blocks.clear();
    let mut pos = 0;
    for (color, work) in s.colors.iter().enumerate() {
        for (k, block) in work.bundles.chunks(STORE_BLOCK / LANES).enumerate() {
            pos += block.iter().map(|b| b.contacts().len()).sum::<usize>();
            store.bounds.push(pos);
            let first = k * (STORE_BLOCK / LANES);
            store.blocks.push((color, first..first + block.len()));
        }
    }
    let ids = s
        .colors
        .iter()
        .flat_map(|w| &w.bundles)
        .flat_map(|b| b.contacts())
        .map(|&id| id as usize);
    store
        .plan
        .set(contacts.contacts.len(), ids)
        .expect("each contact is in one bundle lane");
    let chunks = store
        .plan
        .chunks(&mut contacts.contacts, &store.bounds)
        .expect("bounds cover the plan in order");
    let shared = (&s.colors, &store.blocks, &store.bounds, threshold);
    let shared = &shared;
    jobs.scope(|scope| {
        for mut chunk in chunks {
            scope.spawn(move |_| {
                let (colors, blocks, bounds, threshold) = *shared;
                // The block is found from the chunk's first position: capturing its index
                // too would outgrow a job's inline payload (and allocate per job).
                let mut p = chunk.positions().start;
                let end = chunk.positions().end;
                let (color, range) = &blocks[bounds.partition_point(|&b| b <= p) - 1];
                // Lanes come in plan order: position `p` is this lane's contact.
                for bundle in &colors[*color].bundles[range.clone()] {
                    for (_, points) in bundle.impulses(threshold) {
                        if p + 8 < end {
                            prefetch::<_, 2>(&chunk.get_mut(p + 8).impulses);
                        }
                        let contact = chunk.get_mut(p);
                        for (imp, stored) in contact.impulses.iter_mut().zip(points) {
                            *imp = stored;
                        }
                        p += 1;
                    }
                }
            });
        }
    });
    for c in &s.overflow {
        let contact = &mut contacts.contacts[c.contact as usize];
        for (imp, p) in contact.impulses.iter_mut().zip(&c.points) {
            *imp = p.stored(c.restitution, threshold);
        }
    }
}
