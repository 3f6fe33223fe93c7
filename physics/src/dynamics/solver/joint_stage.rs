//! The joint passes of the solver: joints join the contacts' constraint graph, and each
//! colour's joints are solved as one parallel stage before that colour's contacts.
//!
//! ```text
//!   build:  graph entries = contacts (by id), then enabled joints (by slot)
//!           colour all of them together (no colour shares a dynamic body)
//!           take the joint entries back out of each colour -> JointColor
//!   substep: warm start joints (per colour) -> warm start contacts
//!            solve joints (per colour)      -> solve contacts
//!            integrate positions
//!            relax joints (per colour)      -> relax contacts
//!   finish: impulses back to the joints; forces past a threshold break the joint
//! ```
//!
//! Because a joint and a contact of the same colour never share a dynamic body, running a
//! colour's joints as their own stage just before its contacts gives the same result as
//! interleaving them, and every constraint is still in exactly one colour. Within a
//! colour, joints are grouped by kind: ball joints solve eight to a SIMD bundle
//! (`ball_bundle.rs`, bit for bit the scalar rows), swing-twist joints and hinges with at
//! most a limit likewise (`angular_bundle.rs`: a ragdoll's joints), the rest scalar
//! (`joint.rs`), a block of them per team item. Which path a joint takes and the block
//! boundaries depend only on the joints and the colouring, so results are identical for
//! any thread count.

use joule_jobs::{DisjointPlan, JobSystem, TeamScope};
use smallvec::SmallVec;

use crate::body::Bodies;
use crate::dynamics::constraint_graph::{ConstraintGraph, ConstraintKind, GraphEntry};
use crate::joint::{JointEvent, JointImpulses, JointKind, Joints};
use crate::math::Vec3A;

use super::angular_bundle::{AngularBundle, AngularKind};
use super::ball_bundle::{BallBundle, BallLane};
use super::contact::{BodyMass, Softness, SolverBody};
use super::joint::{
    JOINT_DAMPING_RATIO, JOINT_HERTZ, JointConstraint, JointParams, JointStart,
    MAX_JOINT_HERTZ_PER_SUBSTEP_RATE, Pass,
};
use super::wide::LANES;
use super::{MAX_BLOCKS, fixed_velocity, joint_takes_part, pair_mut, solver_index};

/// Fewest joints per block within a colour.
const BLOCK: usize = 64;

/// One colour's joints and the plan of the bodies they write.
#[derive(Clone, Debug, Default)]
struct JointColor {
    /// In [`group`] order: ball joints, swing-twist joints, limit-only hinges, the
    /// others (by slot within each).
    entries: Vec<GraphEntry>,
    /// The ball joints, [`LANES`] to a bundle.
    balls: Vec<BallBundle>,
    /// The swing-twist joints' bundles, then the hinges'.
    angular: Vec<AngularBundle>,
    /// The other joints.
    constraints: Vec<JointConstraint>,
    plan: DisjointPlan,
    /// Plan positions at block boundaries.
    bounds: Vec<usize>,
    /// Ball bundle, angular bundle and other constraint index at block boundaries.
    ball_blocks: Vec<usize>,
    angular_blocks: Vec<usize>,
    blocks: Vec<usize>,
    /// Plan positions of each joint's dynamic bodies.
    slots: Vec<(Option<u32>, Option<u32>)>,
}

/// The joints of one step, coloured; kept between steps so warm steps do not allocate.
#[derive(Clone, Debug, Default)]
pub(crate) struct JointScratch {
    colors: Vec<JointColor>,
    overflow_entries: Vec<GraphEntry>,
    overflow: Vec<JointConstraint>,
    params: JointParams,
    /// Step length, for the forces reported.
    dt: f32,
}

/// Appends a graph entry for every enabled joint with a body the solver moves, in slot
/// order (after the contacts, so colouring depends only on creation order), except those
/// solved in trees (`member`, see `joint_tree.rs`).
pub(crate) fn push_entries(
    bodies: &Bodies,
    joints: &Joints,
    member: &[bool],
    entries: &mut Vec<GraphEntry>,
) {
    for (i, j) in joints.joints.iter().enumerate() {
        if !joint_takes_part(bodies, j) || member.get(i) == Some(&true) {
            continue;
        }
        entries.push(GraphEntry {
            kind: ConstraintKind::Joint,
            id: i as u32,
            body_a: j.body_a.and_then(|a| solver_index(bodies, a)),
            body_b: solver_index(bodies, j.body_b),
        });
    }
}

/// Moves the joint entries out of the coloured graph (the contact passes then see only
/// contacts), keeping each joint's colour.
pub(crate) fn take_entries(graph: &mut ConstraintGraph, s: &mut JointScratch) {
    if s.colors.len() < graph.colors.len() {
        s.colors
            .resize_with(graph.colors.len(), JointColor::default);
    }
    for (color, jc) in graph.colors.iter_mut().zip(&mut s.colors) {
        jc.entries.clear();
        jc.entries.extend(
            color
                .entries
                .iter()
                .filter(|e| e.kind == ConstraintKind::Joint),
        );
        if !jc.entries.is_empty() {
            color.entries.retain(|e| e.kind == ConstraintKind::Contact);
        }
    }
    s.overflow_entries.clear();
    s.overflow_entries.extend(
        graph
            .overflow
            .iter()
            .filter(|e| e.kind == ConstraintKind::Joint),
    );
    if !s.overflow_entries.is_empty() {
        graph.overflow.retain(|e| e.kind == ConstraintKind::Contact);
    }
}

/// A side the solver does not move, at its own velocity (a kinematic body's).
fn stand_in(bodies: &Bodies, index: u32) -> SolverBody {
    let (v, w) = fixed_velocity(bodies, index);
    SolverBody {
        v,
        w,
        ..SolverBody::FIXED
    }
}

fn make(e: &GraphEntry, bodies: &Bodies, joints: &Joints, masses: &[BodyMass]) -> JointConstraint {
    JointConstraint::new(start(e, bodies, joints, masses))
}

/// A joint's frames, masses and impulses at the start of the step.
fn start(e: &GraphEntry, bodies: &Bodies, joints: &Joints, masses: &[BodyMass]) -> JointStart {
    let j = &joints.joints[e.id as usize];
    let sb = bodies.sim_of(j.body_b);
    let fb = sb.transform.mul_isometry(&j.desc.frame_b);
    let (fa, center_a, fixed_a) = match j.body_a {
        Some(a) => {
            let sa = bodies.sim_of(a);
            (
                sa.transform.mul_isometry(&j.desc.frame_a),
                sa.center,
                stand_in(bodies, a),
            )
        }
        None => (
            j.desc.frame_a,
            j.desc.frame_a.translation,
            SolverBody::FIXED,
        ),
    };
    JointStart {
        joint: e.id,
        kind: j.desc.kind,
        fixed_a,
        fixed_b: stand_in(bodies, j.body_b),
        mass_a: e.body_a.map_or(BodyMass::FIXED, |i| masses[i as usize]),
        mass_b: e.body_b.map_or(BodyMass::FIXED, |i| masses[i as usize]),
        anchor_a: fa.translation,
        anchor_b: fb.translation,
        center_a,
        center_b: sb.center,
        q_a: fa.rotation,
        q_b: fb.rotation,
        impulses: j.impulses,
        drive: j.drive,
    }
}

/// A joint's group within its colour: 0 ball joints, 1 swing-twist joints, 2 limit-only
/// hinges (each group bundled, `ball_bundle.rs` and `angular_bundle.rs`), 3 the others
/// (scalar).
fn group(kind: &JointKind) -> u8 {
    match (kind, AngularKind::of(kind)) {
        (JointKind::Ball, _) => 0,
        (_, Some(AngularKind::SwingTwist)) => 1,
        (_, Some(AngularKind::Hinge)) => 2,
        _ => 3,
    }
}

/// Prepares the joint constraints of every colour and the overflow.
pub(crate) fn prepare(
    jobs: &JobSystem,
    bodies: &Bodies,
    joints: &mut Joints,
    masses: &[BodyMass],
    dt: f32,
    substeps: u32,
    s: &mut JointScratch,
) {
    joints.events.clear();
    let h = dt / substeps as f32;
    let hertz = JOINT_HERTZ.min(MAX_JOINT_HERTZ_PER_SUBSTEP_RATE * substeps as f32 / dt);
    s.params = JointParams {
        h,
        inv_h: 1.0 / h,
        softness: Softness::new(hertz, JOINT_DAMPING_RATIO, h),
    };
    s.dt = dt;
    let joints: &Joints = joints;
    // One mass per awake body.
    let awake = masses.len();
    // A body with a locked translation has a mass per axis, which only the scalar rows
    // carry (see `BodyMass::linear_axes`).
    let locked = |b: Option<u32>| b.is_some_and(|i| masses[i as usize].locks_translation());
    // So has an orientation drive (`JointConstraint::run`).
    let group_of = |e: &GraphEntry| {
        let j = &joints.joints[e.id as usize];
        if locked(e.body_a) || locked(e.body_b) || j.drive.is_some() {
            3
        } else {
            group(&j.desc.kind)
        }
    };
    for color in &mut s.colors {
        color.bounds.clear();
        color.ball_blocks.clear();
        color.angular_blocks.clear();
        color.blocks.clear();
        color.slots.clear();
        if color.entries.is_empty() {
            color.balls.clear();
            color.angular.clear();
            color.constraints.clear();
            continue;
        }
        // Grouped by kind, so each group fills whole bundles; a colour's joints share no
        // dynamic body, so their order within it changes no result. (Serial, so skipped
        // when the colour is already in that order: all of one kind.) One pass counts the
        // groups and checks the order.
        let n = color.entries.len();
        let mut ends = [0usize; 4];
        let (mut grouped, mut last) = (true, 0u8);
        for e in &color.entries {
            let g = group_of(e);
            grouped &= g >= last;
            last = g;
            ends[g as usize] += 1;
        }
        if !grouped {
            color.entries.sort_unstable_by_key(|e| (group_of(e), e.id));
        }
        for g in 1..4 {
            ends[g] += ends[g - 1];
        }
        // Serial and cheap: each joint's plan positions, and block boundaries between
        // units (a bundle, or one scalar joint).
        color.bounds.push(0);
        color.ball_blocks.push(0);
        color.angular_blocks.push(0);
        color.blocks.push(0);
        let block = BLOCK.max(n.div_ceil(MAX_BLOCKS)).next_multiple_of(LANES);
        let mut pos = 0u32;
        let (mut balls, mut angular, mut others) = (0usize, 0usize, 0usize);
        let mut k = 0usize;
        let mut since = 0usize;
        while k < n {
            let g = group_of(&color.entries[k]) as usize;
            let unit = if g < 3 { LANES.min(ends[g] - k) } else { 1 };
            for e in &color.entries[k..k + unit] {
                let mut slot = |b: Option<u32>| {
                    b.map(|_| {
                        pos += 1;
                        pos - 1
                    })
                };
                let slots = (slot(e.body_a), slot(e.body_b));
                color.slots.push(slots);
            }
            match g {
                0 => balls += 1,
                1 | 2 => angular += 1,
                _ => others += 1,
            }
            k += unit;
            since += unit;
            if since >= block || k == n {
                since = 0;
                color.bounds.push(pos as usize);
                color.ball_blocks.push(balls);
                color.angular_blocks.push(angular);
                color.blocks.push(others);
            }
        }
        // In parallel: each constraint is made from its own joint and bodies only. The
        // vectors keep their lengths between steps; every slot is overwritten.
        let (entries, slots) = (&color.entries, &color.slots);
        let make_at = |k: usize| {
            let mut c = make(&entries[k], bodies, joints, masses);
            (c.slot_a, c.slot_b) = slots[k];
            c
        };
        let n_ball = ends[0];
        color
            .balls
            .resize_with(n_ball.div_ceil(LANES), BallBundle::default);
        jobs.parallel_for_slice(&mut color.balls, 2, |first, bundles| {
            for (b, bundle) in (first..).zip(bundles.iter_mut()) {
                *bundle = BallBundle::default();
                for (i, k) in (b * LANES..n_ball.min((b + 1) * LANES)).enumerate() {
                    let s = start(&entries[k], bodies, joints, masses);
                    bundle.set_lane(i, &BallLane::new(&s, slots[k].0, slots[k].1));
                }
            }
        });
        // Angular bundles: the swing-twist group's, then the hinges'.
        let twists = (ends[1] - ends[0]).div_ceil(LANES);
        let hinges = (ends[2] - ends[1]).div_ceil(LANES);
        color
            .angular
            .resize_with(twists + hinges, || AngularBundle::new(AngularKind::Hinge));
        jobs.parallel_for_slice(&mut color.angular, 2, |first, bundles| {
            for (b, bundle) in (first..).zip(bundles.iter_mut()) {
                let (kind, from, to) = if b < twists {
                    (AngularKind::SwingTwist, ends[0] + b * LANES, ends[1])
                } else {
                    (AngularKind::Hinge, ends[1] + (b - twists) * LANES, ends[2])
                };
                *bundle = AngularBundle::new(kind);
                for (i, k) in (from..to.min(from + LANES)).enumerate() {
                    let s = start(&entries[k], bodies, joints, masses);
                    bundle.set_lane(i, &s, slots[k].0, slots[k].1);
                }
            }
        });
        let first_other = ends[2];
        let others = n - first_other;
        color.constraints.truncate(others);
        if color.constraints.len() < others {
            let first = make_at(first_other);
            color.constraints.resize(others, first);
        }
        jobs.parallel_for_slice(&mut color.constraints, 16, |first, cs| {
            for (k, c) in (first..).zip(cs.iter_mut()) {
                *c = make_at(first_other + k);
            }
        });
        let indices = color
            .entries
            .iter()
            .flat_map(|e| [e.body_a, e.body_b])
            .flatten()
            .map(|i| i as usize);
        color
            .plan
            .set(awake, indices)
            .expect("constraint colouring guarantees distinct bodies per colour");
    }
    s.overflow.clear();
    for e in &s.overflow_entries {
        let mut c = make(e, bodies, joints, masses);
        c.slot_a = e.body_a;
        c.slot_b = e.body_b;
        s.overflow.push(c);
    }
}

/// The per-substep constants of this step's joints.
pub(crate) fn params(s: &JointScratch) -> JointParams {
    s.params
}

/// Whether there is any joint to solve this step.
pub(crate) fn is_empty(s: &JointScratch) -> bool {
    s.overflow.is_empty()
        && s.colors
            .iter()
            .all(|c| c.constraints.is_empty() && c.balls.is_empty() && c.angular.is_empty())
}

/// Runs one pass over every joint: colour by colour (blocks of a colour in parallel on
/// the team, ball bundles then the other joints of each block), then the overflow
/// serially.
pub(crate) fn run(t: &TeamScope<'_>, s: &mut JointScratch, bodies: &mut [SolverBody], pass: Pass) {
    let k = s.params;
    for color in &mut s.colors {
        if color.entries.is_empty() {
            continue;
        }
        let chunks = color
            .plan
            .chunks(bodies, &color.bounds)
            .expect("plan built for these bodies and bounds");
        let mut blocks: SmallVec<[_; MAX_BLOCKS]> = SmallVec::new();
        let (mut balls, mut angular, mut others) = (
            &mut color.balls[..],
            &mut color.angular[..],
            &mut color.constraints[..],
        );
        for (((wb, wa), wo), chunk) in color
            .ball_blocks
            .windows(2)
            .zip(color.angular_blocks.windows(2))
            .zip(color.blocks.windows(2))
            .zip(chunks)
        {
            let (bb, rest_b) = std::mem::take(&mut balls).split_at_mut(wb[1] - wb[0]);
            let (ba, rest_a) = std::mem::take(&mut angular).split_at_mut(wa[1] - wa[0]);
            let (bo, rest_o) = std::mem::take(&mut others).split_at_mut(wo[1] - wo[0]);
            (balls, angular, others) = (rest_b, rest_a, rest_o);
            blocks.push((bb, ba, bo, chunk));
        }
        t.for_each_mut(&mut blocks, |(balls, angular, others, chunk)| {
            let path = super::simd::path();
            super::simd::ball_joints(path, balls, chunk, pass, &k);
            super::simd::angular_joints(path, angular, chunk, pass, &k);
            for c in others.iter_mut() {
                let mut a = c.fixed_a;
                let mut b = c.fixed_b;
                match (c.slot_a, c.slot_b) {
                    (Some(sa), Some(sb)) => {
                        let (ba, bb) = chunk.pair_mut(sa as usize, sb as usize);
                        c.run(ba, bb, pass, &k);
                    }
                    (Some(sa), None) => c.run(chunk.get_mut(sa as usize), &mut b, pass, &k),
                    (None, Some(sb)) => c.run(&mut a, chunk.get_mut(sb as usize), pass, &k),
                    (None, None) => {}
                }
            }
        });
    }
    for c in &mut s.overflow {
        let mut a = c.fixed_a;
        let mut b = c.fixed_b;
        match (c.slot_a, c.slot_b) {
            (Some(ia), Some(ib)) => {
                let (ba, bb) = pair_mut(bodies, ia as usize, ib as usize);
                c.run(ba, bb, pass, &k);
            }
            (Some(ia), None) => c.run(&mut bodies[ia as usize], &mut b, pass, &k),
            (None, Some(ib)) => c.run(&mut a, &mut bodies[ib as usize], pass, &k),
            (None, None) => {}
        }
    }
}

/// Stores the impulses for the next step's warm start and the force and torque of the
/// last substep, for the coloured joints and those of `trees` (slot, impulses, linear
/// impulse of the last substep); disables the joints whose force or torque passed their
/// threshold and reports them.
pub(crate) fn store(
    joints: &mut Joints,
    s: &JointScratch,
    trees: impl Iterator<Item = (u32, JointImpulses, Vec3A)>,
) {
    let inv_h = s.params.inv_h;
    let all = s
        .colors
        .iter()
        .flat_map(|c| &c.constraints)
        .chain(&s.overflow)
        .map(|c| (c.joint, c.acc, c.sub_linear, c.sub_angular))
        .chain(
            s.colors
                .iter()
                .flat_map(|c| &c.balls)
                .flat_map(BallBundle::results)
                .chain(trees)
                .map(|(joint, acc, sub)| (joint, acc, sub, Vec3A::ZERO)),
        )
        .chain(
            s.colors
                .iter()
                .flat_map(|c| &c.angular)
                .flat_map(AngularBundle::results),
        );
    let mut broken: SmallVec<[u32; 8]> = SmallVec::new();
    for (index, acc, linear, angular) in all {
        let j = &mut joints.joints[index as usize];
        j.impulses = acc;
        j.force = linear * inv_h;
        j.torque = angular * inv_h;
        if j.force.length() > j.desc.break_force || j.torque.length() > j.desc.break_torque {
            j.enabled = false;
            j.impulses = Default::default();
            broken.push(index);
        }
    }
    broken.sort_unstable();
    for index in broken {
        let id = joints.id_of(index);
        joints.events.push(JointEvent::Broken(id));
    }
}
