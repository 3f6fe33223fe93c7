//! Trees of ball joints solved exactly: one sparse direct solve per tree and pass, in
//! place of Gauss-Seidel sweeps over its joints.
//!
//! Iterating joint by joint converges slowly when masses differ: a heavy load on a light
//! chain passes its weight up one link per sweep, losing most of it at every light link,
//! and soft joints then sag by the load over the light links' stiffness. A chain, or any
//! tree, of ball joints has a linear system with the tree's own sparsity, which Gaussian
//! elimination solves exactly in time linear in its size, leaves first (Baraff,
//! "Linear-Time Dynamics using Lagrange Multipliers", SIGGRAPH 1996). The unknowns are
//! the velocity change of every body and the impulse of every joint:
//!
//! ```text
//!   [ M   -Jᵀ ] [ Δv ]   [ 0              ]
//!   [ -J   0  ] [ Δλ ] = [ J v + bias     ]      (the joint rows: J (v + Δv) = -bias)
//! ```
//!
//! The bodies and joints of a tree form a tree of nodes (a joint's neighbours are its two
//! bodies), so ordering children before parents leaves no fill-in: each node's block
//! absorbs its children's and hands one product to its parent. The blocks depend on the
//! anchors, which turn with the bodies, so each substep factors its trees again (at its
//! warm start; a factor kept for a whole step let a whipping chain diverge), and every
//! pass then costs two sweeps over the nodes ([`run`]).
//!
//! Only trees of unequal masses take this path (`SolverSettings::joint_tree_mass_ratio`):
//! with similar masses the iteration converges within a step, at a fraction of the
//! factor's cost (chain_joints: 1.5 ms per step iterated, 2.5 ms solved exactly).
//!
//! - A joint to the world (or to a body the solver does not move) has one body. Two of
//!   them in one tree make a loop through the world, whose rows can be redundant, so
//!   such a tree, or any tree with a loop, is left to the iterative joint stage.
//! - Rows are rigid: the biased pass drives the anchors' relative velocity to
//!   `-bias_rate * separation` (less the arms' second-order turn in the coming position
//!   substep, `joint::arm_drift`) exactly and the relax pass to zero, so there is no soft
//!   spring whose sag grows with the load (the joint stiffness only sets how fast a
//!   separation closes).
//! - Other joints, contacts and ball joints outside such trees still act on the same
//!   bodies in the same passes (block Gauss-Seidel, the tree being one block).
//! - Trees share no body, so each is solved by one worker, trees in parallel. The trees,
//!   their order and their blocks come from the joints' slot order only, so results are
//!   identical at any thread count.

use crate::math::{cross, rotate};
use joule_jobs::{DisjointPlan, JobSystem, TeamScope};

use crate::body::Bodies;
use crate::joint::{JointImpulses, JointKind, Joints};
use crate::math::{Mat3A, Vec3A};

use super::contact::{BodyMass, SolverBody};
use super::joint::{JointParams, Pass, arm_drift};
use super::{MAX_BLOCKS, blocks_with_chunks, fixed_velocity, solver_index};

/// Fewest nodes per block (whole trees).
const BLOCK: usize = 64;
const NONE: u32 = u32::MAX;

/// One node of a tree: a body or a ball joint.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// How many nodes later the parent comes (children precede parents), 0 for a root.
    up: u32,
    /// The joint's slot, or [`NONE`] for a body node.
    joint: u32,
    /// A body node's plan position; a joint node's plan positions of sides A and B
    /// ([`NONE`] for a side the solver does not move).
    slot: u32,
    slot_a: u32,
    slot_b: u32,
    /// A joint node's side of its parent body: `true` for A.
    parent_is_a: bool,
    /// A joint node's anchors relative to the centres of mass at the start of the step
    /// (the Jacobian), and anchor B minus anchor A then.
    r_a: Vec3A,
    r_b: Vec3A,
    d0: Vec3A,
    /// A joint node's anchors relative to the centres of mass in the current substep.
    ra_now: Vec3A,
    rb_now: Vec3A,
    /// A body node's mass and world inertia (its block before elimination).
    mass: f32,
    inertia: Mat3A,
    /// A joint node's sides, for the warm start.
    mass_a: BodyMass,
    mass_b: BodyMass,
    /// The velocity of a side the solver does not move (a kinematic body's).
    fixed_v: Vec3A,
    fixed_w: Vec3A,
    /// The inverse of the node's eliminated block: a body's 6x6 `[p q; qᵀ r]` (`qt` is
    /// `qᵀ`), a joint's 3x3 in `p`. While factoring, the block itself.
    p: Mat3A,
    q: Mat3A,
    qt: Mat3A,
    r: Mat3A,
    /// Right-hand side and solution of the current pass (linear, angular for bodies).
    b: [Vec3A; 2],
    x: [Vec3A; 2],
    /// A joint's accumulated impulse and its impulse in the current substep.
    acc: Vec3A,
    sub: Vec3A,
}

impl Node {
    const EMPTY: Node = Node {
        up: 0,
        joint: NONE,
        slot: NONE,
        slot_a: NONE,
        slot_b: NONE,
        parent_is_a: false,
        r_a: Vec3A::ZERO,
        r_b: Vec3A::ZERO,
        d0: Vec3A::ZERO,
        ra_now: Vec3A::ZERO,
        rb_now: Vec3A::ZERO,
        mass: 0.0,
        inertia: Mat3A::ZERO,
        mass_a: BodyMass::FIXED,
        mass_b: BodyMass::FIXED,
        fixed_v: Vec3A::ZERO,
        fixed_w: Vec3A::ZERO,
        p: Mat3A::ZERO,
        q: Mat3A::ZERO,
        qt: Mat3A::ZERO,
        r: Mat3A::ZERO,
        b: [Vec3A::ZERO; 2],
        x: [Vec3A::ZERO; 2],
        acc: Vec3A::ZERO,
        sub: Vec3A::ZERO,
    };

    fn is_joint(&self) -> bool {
        self.joint != NONE
    }

    /// A joint's Jacobian on its parent (`true`) or child side: sign and arm.
    fn side(&self, parent: bool) -> (f32, Vec3A) {
        if parent == self.parent_is_a {
            (-1.0, self.ra_now)
        } else {
            (1.0, self.rb_now)
        }
    }
}

/// `J (v, w) = s (v + w × r)`: a joint row block on a body's velocity.
fn jac(s: f32, r: Vec3A, v: [Vec3A; 2]) -> Vec3A {
    s * (v[0] + cross(v[1], r))
}

/// `Jᵀ λ = s (λ, r × λ)`.
fn jac_t(s: f32, r: Vec3A, l: Vec3A) -> [Vec3A; 2] {
    [s * l, s * cross(r, l)]
}

/// `T = -[r]×`, the angular half of a unit-sign Jacobian block (`J = s [I, T]`).
fn t_of(r: Vec3A) -> Mat3A {
    Mat3A::from_cols(
        Vec3A::new(0.0, -r.z, r.y),
        Vec3A::new(r.z, 0.0, -r.x),
        Vec3A::new(-r.y, r.x, 0.0),
    )
}

fn inverse(m: Mat3A) -> Option<Mat3A> {
    let det = m.determinant();
    (det.is_finite() && det.abs() > f32::MIN_POSITIVE).then(|| m.inverse())
}

/// The trees of ball joints of one step; kept between steps so warm steps do not
/// allocate.
#[derive(Clone, Debug, Default)]
pub(crate) struct TreeScratch {
    /// Per joint slot: whether it is solved here this step (the joint stage skips it).
    pub member: Vec<bool>,
    nodes: Vec<Node>,
    plan: DisjointPlan,
    /// Plan positions and node indices at block boundaries.
    bounds: Vec<usize>,
    blocks: Vec<usize>,
    params: JointParams,
    // Selection scratch.
    find: Vec<u32>,
    /// Per union-find root: unary joints, a loop or a body the tree cannot hold.
    unary: Vec<u32>,
    unary_joint: Vec<u32>,
    rejected: Vec<bool>,
    /// Per union-find root: the smallest and largest inverse mass.
    inv_range: Vec<(f32, f32)>,
    adjacency_start: Vec<u32>,
    adjacency: Vec<u32>,
    visited: Vec<bool>,
    /// Bodies in a set where a joint closed a loop; the next free incidence per body.
    loops: Vec<u32>,
    cursor: Vec<u32>,
    /// Per body, its plan position; per plan position, its body.
    plan_pos: Vec<u32>,
    by_pos: Vec<usize>,
    stack: Vec<(u32, u32)>,
    preorder: Vec<(u32, u32, u32)>,
}

fn root_of(find: &mut [u32], mut i: u32) -> u32 {
    while find[i as usize] != i {
        let up = find[find[i as usize] as usize];
        find[i as usize] = up;
        i = up;
    }
    i
}

/// The solver sides of a ball joint that takes part (enabled, alive, some side moved by
/// the solver).
fn ball_sides(bodies: &Bodies, j: &crate::joint::Joint) -> Option<(Option<u32>, Option<u32>)> {
    if !super::joint_takes_part(bodies, j) || j.desc.kind != JointKind::Ball {
        return None;
    }
    let a = j.body_a.and_then(|a| solver_index(bodies, a));
    let b = solver_index(bodies, j.body_b);
    (a.is_some() || b.is_some()).then_some((a, b))
}

/// Finds this step's trees of ball joints, marks their joints in `member` and lays out
/// their nodes, children before parents, tree after tree in the order of their first
/// joint's slot. Serial: union-find and one walk over the joints.
pub(crate) fn select(
    bodies: &Bodies,
    joints: &Joints,
    masses: &[BodyMass],
    mass_ratio: f32,
    s: &mut TreeScratch,
) {
    let n = masses.len();
    let slots = joints.joints.len();
    s.member.clear();
    s.member.resize(slots, false);
    s.nodes.clear();
    s.bounds.clear();
    s.blocks.clear();
    if mass_ratio.is_nan() || mass_ratio == f32::INFINITY {
        return;
    }
    // No tree can qualify when all ball-jointed bodies together span less than the
    // ratio (chain_joints: equal links): skip the walk.
    let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
    for j in &joints.joints {
        if let Some(sides) = ball_sides(bodies, j) {
            for b in [sides.0, sides.1].into_iter().flatten() {
                let inv = masses[b as usize].inv_mass;
                (lo, hi) = (lo.min(inv), hi.max(inv));
            }
        }
    }
    if hi < mass_ratio * lo || lo == f32::INFINITY {
        return;
    }
    s.find.clear();
    s.find.extend(0..n as u32);
    s.unary.clear();
    s.unary.resize(n, 0);
    s.unary_joint.clear();
    s.unary_joint.resize(n, NONE);
    s.rejected.clear();
    s.rejected.resize(n, false);
    s.adjacency_start.clear();
    s.adjacency_start.resize(n + 1, 0);
    // Union the bodies of every two-sided ball joint; a joint within one set closes a loop.
    s.loops.clear();
    for j in &joints.joints {
        let Some(sides) = ball_sides(bodies, j) else {
            continue;
        };
        for b in [sides.0, sides.1].into_iter().flatten() {
            s.adjacency_start[b as usize + 1] += 1;
        }
        if let (Some(a), Some(b)) = sides {
            let (ra, rb) = (root_of(&mut s.find, a), root_of(&mut s.find, b));
            if ra == rb {
                s.loops.push(a);
            } else {
                s.find[ra.max(rb) as usize] = ra.min(rb);
            }
        }
    }
    for &a in &s.loops {
        let r = root_of(&mut s.find, a);
        s.rejected[r as usize] = true;
    }
    for (i, j) in joints.joints.iter().enumerate() {
        let Some(sides) = ball_sides(bodies, j) else {
            continue;
        };
        let body = match sides {
            (Some(_), Some(_)) => continue,
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => unreachable!("ball_sides keeps joints with a solver side"),
        };
        let r = root_of(&mut s.find, body) as usize;
        s.unary[r] += 1;
        s.unary_joint[r] = i as u32;
    }
    // A body whose mass the elimination cannot invert (a locked axis) keeps its
    // tree iterative, and so do trees of similar masses (the iteration converges there).
    s.inv_range.clear();
    s.inv_range.resize(n, (f32::INFINITY, 0.0));
    for (b, m) in masses.iter().enumerate() {
        let r = root_of(&mut s.find, b as u32) as usize;
        if m.inv_mass <= 0.0 || m.locks_translation() || inverse(m.inv_inertia).is_none() {
            s.rejected[r] = true;
        }
        let range = &mut s.inv_range[r];
        *range = (range.0.min(m.inv_mass), range.1.max(m.inv_mass));
    }
    for (r, &(lo, hi)) in s.inv_range.iter().enumerate() {
        // Single bodies have `hi == lo`: a joint to the world alone is iterated too.
        if hi < mass_ratio * lo {
            s.rejected[r] = true;
        }
    }
    // Incidence lists, in slot order.
    for b in 0..n {
        s.adjacency_start[b + 1] += s.adjacency_start[b];
    }
    s.adjacency.clear();
    s.adjacency.resize(s.adjacency_start[n] as usize, 0);
    s.cursor.clear();
    s.cursor.extend_from_slice(&s.adjacency_start[..n]);
    for (i, j) in joints.joints.iter().enumerate() {
        if let Some(sides) = ball_sides(bodies, j) {
            for b in [sides.0, sides.1].into_iter().flatten() {
                s.adjacency[s.cursor[b as usize] as usize] = i as u32;
                s.cursor[b as usize] += 1;
            }
        }
    }
    s.visited.clear();
    s.visited.resize(n, false);
    s.plan_pos.clear();
    s.plan_pos.resize(n, NONE);
    s.by_pos.clear();
    let mut positions = 0u32;
    // At most two nodes per joint, so at most `MAX_BLOCKS` blocks.
    let block = BLOCK.max((2 * slots).div_ceil(MAX_BLOCKS - 1));
    s.bounds.push(0);
    s.blocks.push(0);
    for j in &joints.joints {
        let Some(sides) = ball_sides(bodies, j) else {
            continue;
        };
        let any = sides.0.or(sides.1).expect("a solver side");
        let r = root_of(&mut s.find, any) as usize;
        if s.visited[any as usize] || s.rejected[r] || s.unary[r] > 1 {
            continue;
        }
        // Walk the tree from its root: its joint to the world, or this joint's body.
        s.preorder.clear();
        s.stack.clear();
        if s.unary_joint[r] != NONE {
            let root = s.unary_joint[r];
            s.preorder.push((NONE, root, NONE));
            let body = {
                let (a, b) = ball_sides(bodies, &joints.joints[root as usize]).unwrap();
                a.or(b).unwrap()
            };
            s.stack.push((body, 0));
        } else {
            s.stack.push((any, NONE));
        }
        while let Some((body, parent)) = s.stack.pop() {
            s.visited[body as usize] = true;
            let me = s.preorder.len() as u32;
            let parent_joint = if parent == NONE {
                NONE
            } else {
                s.preorder[parent as usize].1
            };
            s.preorder.push((body, NONE, parent));
            let range = s.adjacency_start[body as usize] as usize
                ..s.adjacency_start[body as usize + 1] as usize;
            for k in range.rev() {
                let ji = s.adjacency[k];
                if ji == parent_joint {
                    continue;
                }
                let (a, b) = ball_sides(bodies, &joints.joints[ji as usize]).unwrap();
                let joint_node = s.preorder.len() as u32;
                s.preorder.push((NONE, ji, me));
                let other = if a == Some(body) { b } else { a };
                let other = other.expect("a second world joint rejects the tree");
                s.stack.push((other, joint_node));
            }
        }
        // Children before parents: the walk reversed.
        let base = s.nodes.len();
        let len = s.preorder.len();
        for k in (0..len).rev() {
            let (body, joint, parent) = s.preorder[k];
            let mut node = Node::EMPTY;
            if parent != NONE {
                node.up = (k - parent as usize) as u32;
            }
            if joint == NONE {
                node.slot = positions;
                s.plan_pos[body as usize] = positions;
                s.by_pos.push(body as usize);
                positions += 1;
            } else {
                node.joint = joint;
                s.member[joint as usize] = true;
                // The parent side: the body node this joint hangs from in the walk; a
                // root joint's body is its child, the world "above" it.
                let a = joints.joints[joint as usize]
                    .body_a
                    .and_then(|a| solver_index(bodies, a));
                node.parent_is_a = if parent == NONE {
                    a.is_none()
                } else {
                    a == Some(s.preorder[parent as usize].0)
                };
            }
            s.nodes.push(node);
        }
        // Body plan positions are known now for this tree's joints.
        for node in &mut s.nodes[base..] {
            if node.is_joint() {
                let (a, b) = ball_sides(bodies, &joints.joints[node.joint as usize]).unwrap();
                node.slot_a = a.map_or(NONE, |a| s.plan_pos[a as usize]);
                node.slot_b = b.map_or(NONE, |b| s.plan_pos[b as usize]);
            }
        }
        let since = s.nodes.len() - s.blocks.last().copied().unwrap_or(0);
        if since >= block {
            s.bounds.push(positions as usize);
            s.blocks.push(s.nodes.len());
        }
    }
    if s.blocks.last() != Some(&s.nodes.len()) {
        s.bounds.push(positions as usize);
        s.blocks.push(s.nodes.len());
    }
    if s.nodes.is_empty() {
        s.bounds.clear();
        s.blocks.clear();
    }
    s.plan
        .set(n, s.by_pos.iter().copied())
        .expect("each body is in one tree once");
}

/// The solver indices of the bodies in this step's trees.
pub(crate) fn bodies(s: &TreeScratch) -> &[usize] {
    if s.nodes.is_empty() {
        &[]
    } else {
        s.plan.indices()
    }
}

/// Whether any tree is solved this step.
pub(crate) fn is_empty(s: &TreeScratch) -> bool {
    s.nodes.is_empty()
}

/// Fills every tree's anchors and masses, trees in parallel (each substep's warm start
/// factors them).
pub(crate) fn prepare(
    jobs: &JobSystem,
    bodies: &Bodies,
    joints: &Joints,
    masses: &[BodyMass],
    params: JointParams,
    s: &mut TreeScratch,
) {
    s.params = params;
    if s.nodes.is_empty() {
        return;
    }
    let plan = s.plan.indices();
    let mut blocks: smallvec::SmallVec<[&mut [Node]; MAX_BLOCKS]> = smallvec::SmallVec::new();
    let mut rest = &mut s.nodes[..];
    for w in s.blocks.windows(2) {
        let (block, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        rest = tail;
        blocks.push(block);
    }
    jobs.parallel_for_slice(&mut blocks, 1, |_, claimed| {
        for block in claimed {
            for node in block.iter_mut() {
                fill(node, bodies, joints, masses, plan);
            }
        }
    });
}

fn fill(node: &mut Node, bodies: &Bodies, joints: &Joints, masses: &[BodyMass], plan: &[usize]) {
    if !node.is_joint() {
        let m = masses[plan[node.slot as usize]];
        node.mass = 1.0 / m.inv_mass;
        node.inertia = inverse(m.inv_inertia).expect("select keeps invertible inertias");
        return;
    }
    let j = &joints.joints[node.joint as usize];
    let sb = bodies.sim_of(j.body_b);
    let anchor_b = sb.transform.mul_isometry(&j.desc.frame_b).translation;
    let (anchor_a, center_a) = match j.body_a {
        Some(a) => {
            let sa = bodies.sim_of(a);
            (
                sa.transform.mul_isometry(&j.desc.frame_a).translation,
                sa.center,
            )
        }
        None => (j.desc.frame_a.translation, j.desc.frame_a.translation),
    };
    node.r_a = anchor_a - center_a;
    node.r_b = anchor_b - sb.center;
    node.d0 = anchor_b - anchor_a;
    node.mass_a = if node.slot_a == NONE {
        BodyMass::FIXED
    } else {
        masses[plan[node.slot_a as usize]]
    };
    node.mass_b = if node.slot_b == NONE {
        BodyMass::FIXED
    } else {
        masses[plan[node.slot_b as usize]]
    };
    (node.fixed_v, node.fixed_w) = if node.slot_a == NONE {
        j.body_a
            .map_or((Vec3A::ZERO, Vec3A::ZERO), |a| fixed_velocity(bodies, a))
    } else if node.slot_b == NONE {
        fixed_velocity(bodies, j.body_b)
    } else {
        (Vec3A::ZERO, Vec3A::ZERO)
    };
    node.acc = j.impulses.point;
    node.sub = Vec3A::ZERO;
}

/// Eliminates one block's trees, leaves first: each node's block is final once its
/// children have been folded in; its inverse replaces it, and its product goes up.
fn factor(nodes: &mut [Node]) {
    for n in nodes.iter_mut() {
        if n.is_joint() {
            // Rigid rows: a joint's block starts at zero.
            n.p = Mat3A::ZERO;
        } else {
            n.p = Mat3A::from_diagonal(glam::Vec3::splat(n.mass));
            n.q = Mat3A::ZERO;
            n.r = n.inertia;
        }
    }
    for k in 0..nodes.len() {
        let node = nodes[k];
        let mut done = node;
        if node.is_joint() {
            // A joint's block is -J D⁻¹ Jᵀ summed over its child (negative definite).
            done.p = inverse(node.p).unwrap_or(Mat3A::ZERO);
        } else {
            // A body's 6x6 block [A B; Bᵀ C] by its Schur complement.
            let a_inv = inverse(node.p).unwrap_or(Mat3A::ZERO);
            let schur = node.r - node.q.transpose() * a_inv * node.q;
            let s_inv = inverse(schur).unwrap_or(Mat3A::ZERO);
            let q = -(a_inv * node.q * s_inv);
            done.p = a_inv - q * node.q.transpose() * a_inv;
            done.q = q;
            done.qt = q.transpose();
            done.r = s_inv;
        }
        nodes[k] = done;
        if node.up == 0 {
            continue;
        }
        let pi = k + node.up as usize;
        if node.is_joint() {
            // Into the parent body: D_p -= Jᵀ E J = [E, E T; Tᵀ E, Tᵀ E T].
            let (_, r) = done.side(true);
            let t = t_of(r);
            let e = done.p;
            let parent = &mut nodes[pi];
            parent.p -= e;
            parent.q -= e * t;
            parent.r -= t.transpose() * e * t;
        } else {
            // Into the parent joint: D_p -= J D⁻¹ Jᵀ = P + T Qᵀ + Q Tᵀ + T R Tᵀ.
            let (_, r) = nodes[pi].side(false);
            let t = t_of(r);
            let tt = t.transpose();
            nodes[pi].p -= done.p + t * done.qt + done.q * tt + t * done.r * tt;
        }
    }
}

/// Applies a joint's impulse `l` on its bodies at the arms `r_a`, `r_b`.
fn apply(
    n: &Node,
    chunk: &mut joule_jobs::DisjointChunk<'_, SolverBody>,
    l: Vec3A,
    r_a: Vec3A,
    r_b: Vec3A,
) {
    if n.slot_a != NONE {
        let a = chunk.get_mut(n.slot_a as usize);
        a.v -= n.mass_a.inv_mass * l;
        a.w -= n.mass_a.inv_inertia * cross(r_a, l);
    }
    if n.slot_b != NONE {
        let b = chunk.get_mut(n.slot_b as usize);
        b.v += n.mass_b.inv_mass * l;
        b.w += n.mass_b.inv_inertia * cross(r_b, l);
    }
}

/// Multiplies a body node's inverse block by a 6-vector.
fn body_inv(n: &Node, v: [Vec3A; 2]) -> [Vec3A; 2] {
    [n.p * v[0] + n.q * v[1], n.qt * v[0] + n.r * v[1]]
}

/// One pass over every tree, blocks of trees in parallel on the team.
pub(crate) fn run(t: &TeamScope<'_>, s: &mut TreeScratch, bodies: &mut [SolverBody], pass: Pass) {
    if s.nodes.is_empty() {
        return;
    }
    let k = s.params;
    let chunks = s
        .plan
        .chunks(bodies, &s.bounds)
        .expect("plan built for these bodies and bounds");
    let mut blocks = blocks_with_chunks(&mut s.nodes, &s.blocks, chunks);
    t.for_each_mut(&mut blocks, |(nodes, chunk)| {
        let body = |chunk: &mut joule_jobs::DisjointChunk<'_, SolverBody>, slot: u32| {
            if slot == NONE {
                None
            } else {
                Some(*chunk.get_mut(slot as usize))
            }
        };
        if pass == Pass::WarmStart {
            // A new substep: the anchors have moved, so the system is factored again.
            for n in nodes.iter_mut().filter(|n| n.is_joint()) {
                n.sub = n.acc;
                n.ra_now = body(chunk, n.slot_a).map_or(n.r_a, |a| rotate(a.dq, n.r_a));
                n.rb_now = body(chunk, n.slot_b).map_or(n.r_b, |b| rotate(b.dq, n.r_b));
                apply(n, chunk, n.acc, n.ra_now, n.rb_now);
            }
            factor(nodes);
            return;
        }
        let Pass::Solve(use_bias) = pass else {
            return;
        };
        let bias_rate = if use_bias { k.softness.bias_rate } else { 0.0 };
        // Right-hand sides: the joints' velocity errors plus bias.
        for n in nodes.iter_mut() {
            n.b = [Vec3A::ZERO; 2];
            if !n.is_joint() {
                continue;
            }
            let fixed = SolverBody {
                v: n.fixed_v,
                w: n.fixed_w,
                ..SolverBody::FIXED
            };
            let a = body(chunk, n.slot_a).unwrap_or(fixed);
            let b = body(chunk, n.slot_b).unwrap_or(fixed);
            // The anchors of this substep's start (those of the factor): the relax pass
            // comes after the positions moved, by one substep's rotation.
            let (r_a, r_b) = (n.ra_now, n.rb_now);
            let cdot = (b.v + cross(b.w, r_b)) - (a.v + cross(a.w, r_a));
            let (cur_a, cur_b) = (rotate(a.dq, n.r_a), rotate(b.dq, n.r_b));
            let sep = n.d0 + (b.dp - a.dp) + (cur_b - n.r_b) - (cur_a - n.r_a);
            n.b[0] = cdot + bias_rate * sep;
            if use_bias {
                let half_h = 0.5 * k.h;
                let drift = arm_drift(b.w, cur_b, half_h) - arm_drift(a.w, cur_a, half_h);
                n.b[0] += k.inv_h * drift;
            }
        }
        // Forward: fold each node's right-hand side into its parent's.
        for i in 0..nodes.len() {
            let n = nodes[i];
            if n.up == 0 {
                continue;
            }
            let pi = i + n.up as usize;
            if n.is_joint() {
                let (s_, r) = n.side(true);
                let add = jac_t(s_, r, n.p * n.b[0]);
                let parent = &mut nodes[pi];
                parent.b[0] += add[0];
                parent.b[1] += add[1];
            } else {
                let (s_, r) = nodes[pi].side(false);
                let y = body_inv(&n, n.b);
                nodes[pi].b[0] += jac(s_, r, y);
            }
        }
        // Backward: roots first, each child from its parent's solution.
        for i in (0..nodes.len()).rev() {
            let n = nodes[i];
            let x = if n.is_joint() {
                let mut rhs = n.b[0];
                if n.up != 0 {
                    let (s_, r) = n.side(true);
                    rhs += jac(s_, r, nodes[i + n.up as usize].x);
                }
                [n.p * rhs, Vec3A::ZERO]
            } else {
                let mut rhs = n.b;
                if n.up != 0 {
                    let parent = &nodes[i + n.up as usize];
                    let (s_, r) = parent.side(false);
                    let add = jac_t(s_, r, parent.x[0]);
                    rhs[0] += add[0];
                    rhs[1] += add[1];
                }
                body_inv(&n, rhs)
            };
            nodes[i].x = x;
        }
        // The solution: velocity changes and impulses.
        for n in nodes.iter_mut() {
            if n.is_joint() {
                n.acc += n.x[0];
                n.sub += n.x[0];
            } else {
                let b = chunk.get_mut(n.slot as usize);
                b.v += n.x[0];
                b.w += n.x[1];
            }
        }
    });
}

/// The accumulated impulse and last-substep impulse of every tree joint.
pub(crate) fn results(s: &TreeScratch) -> impl Iterator<Item = (u32, JointImpulses, Vec3A)> + '_ {
    s.nodes.iter().filter(|n| n.is_joint()).map(|n| {
        (
            n.joint,
            JointImpulses {
                point: n.acc,
                ..Default::default()
            },
            n.sub,
        )
    })
}
