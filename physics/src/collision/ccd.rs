//! Continuous collision detection (CCD): fast bodies marked `MotionQuality::LinearCast`
//! do not tunnel through thin walls or through each other.
//!
//! ```text
//!  candidates   after integration: awake dynamic LinearCast bodies that moved more than
//!               CCD_MOTION_FRACTION of their inner radius this step (in awake order)
//!  find         one job per candidate: sweep its shape from the start pose to the end
//!               pose against everything near the sweep (static, kinematic, sleeping and
//!               dynamic bodies, other fast bodies included) by conservative advancement
//!               on the GJK distance; keep the earliest hit
//!  resolve      serial, hits sorted by (fraction, body): move the body back to the time
//!               of impact ("time stealing", as Jolt does: the rest of its motion this step
//!               is dropped); a fast body it hit that has not been resolved yet is moved
//!               back to the same time; then the collision impulse (restitution, friction)
//!               is applied at the contact point, waking a sleeping body that was hit
//! ```
//!
//! The bodies now sit [`CCD_SKIN`] apart, inside the speculative contact margin, so the next
//! step's collision stages create the contact (its begin event) and its solver keeps them
//! apart. The impact itself is resolved here, not by the next step's soft solver: warm
//! starting re-applies a substep's impulse in the next substep, which after an impact at
//! 240 m/s left the bodies a few m/s of spurious separation speed.
//!
//! Two moving bodies are cast with their relative motion (A's translation minus B's from
//! B's start pose), which is exact for linear motion: two fast boxes flying at each other
//! meet where they really meet. Rotation during the step is not swept (the end rotation
//! is used over the whole sweep): a thin rod spinning fast can still pass through a thin
//! wall. That is the documented limit of a linear cast.
//!
//! Determinism: candidates are in awake order, each job's result depends only on its body,
//! and the resolve pass sorts hits before moving anything, so the outcome is the same for
//! any thread count.

use crate::body::filter::{ExclusionList, LayerTable};
use crate::body::{AWAKE_SET, Bodies, BodySim, LockedAxes, MotionQuality, MotionType};
use crate::collision::broad_phase::BroadPhase;
use crate::collision::narrow_phase::{ContactManifold, closest_points, collide};
use crate::contact::motion_types_collide;
use crate::dynamics::island::{self, SleepEvent};
use crate::geometry::aabb::Aabb;
use crate::geometry::support::ConvexSupport;
use crate::material::MaterialMixing;
use crate::math::{Isometry, Mat3A, Vec3A};
use crate::math::{cross, rotate};
use crate::shape::{HalfSpace, Shape, for_each_triangle};

/// A body is cast when it moved more than this fraction of its inner radius in a step.
pub const CCD_MOTION_FRACTION: f32 = 0.5;
/// Gap left between the shapes at the time of impact (inside the contact margin, so the
/// next step's narrow phase sees the contact).
pub const CCD_SKIN: f32 = 0.005;
// A body stopped at its impact touches, as contact events and views report it.
const _: () = assert!(CCD_SKIN < crate::contact::TOUCHING_SEPARATION);
/// A pair already touching at the start of the sweep only stops the body when it would
/// sink this fraction of the body's inner radius deeper (bodies resting or sliding on a
/// surface must keep moving).
const CCD_TOUCHING_ALLOWANCE: f32 = 0.25;
/// Conservative-advancement iterations before giving up with the safe (earlier) time.
const MAX_ITERATIONS: usize = 32;

/// The earliest hit of one fast body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CcdHit {
    /// Slot index of the fast body.
    pub body: u32,
    /// Slot index of the body it hit.
    pub other: u32,
    /// Fraction of the step's motion at the time of impact.
    pub fraction: f32,
    /// Contact normal at the time of impact (from the fast body towards the other).
    pub normal: Vec3A,
    /// World contact point on the fast body at the time of impact.
    pub point: Vec3A,
}

/// The CCD stage's buffers, reused from step to step.
#[derive(Clone, Debug, Default)]
pub(crate) struct CcdState {
    /// Slot indices of the bodies to cast this step, in awake order.
    pub candidates: Vec<u32>,
    /// Largest motion of an awake body that is not a candidate this step: a cast widens
    /// its broad-phase query (boxes of the step's start poses) by it, so it also finds a
    /// slow body that moved into its path.
    pub slow_motion: f32,
    /// Per candidate position, the other candidates whose swept boxes meet its own
    /// (`partners[partner_start[i]..partner_start[i + 1]]`, ascending): fast bodies find
    /// each other here, by a sweep and prune over their swept boxes, instead of through
    /// tree queries widened by the fastest motion.
    pub partners: Vec<u32>,
    pub partner_start: Vec<u32>,
    /// Hits found this step (any order; sorted by `resolve`).
    pub hits: Vec<CcdHit>,
    /// Per body slot: 1 for a candidate, 2 once moved back this step.
    marks: Vec<u8>,
    /// Sweep-and-prune scratch: candidates' swept boxes, the sweep order, the pairs found.
    boxes: Vec<Aabb>,
    order: Vec<u32>,
    open: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

const FAST: u8 = 1;
const MOVED: u8 = 2;

/// The pose of a body at the start of the step (start centre, end rotation).
fn start_pose(bodies: &Bodies, index: u32) -> Isometry {
    let sim = bodies.sim_of(index);
    Isometry {
        rotation: sim.transform.rotation,
        translation: sim.center0 - rotate(sim.transform.rotation, sim.local_center),
    }
}

/// This step's translation of a body's centre of mass (zero for bodies that did not move:
/// static and sleeping bodies keep `center0 == center`).
fn motion(bodies: &Bodies, index: u32) -> Vec3A {
    let sim = bodies.sim_of(index);
    sim.center - sim.center0
}

/// Collects this step's candidates into `state`.
pub(crate) fn collect_candidates(bodies: &Bodies, state: &mut CcdState) {
    state.candidates.clear();
    state.hits.clear();
    state.slow_motion = 0.0;
    for sim in bodies.awake() {
        let b = &bodies.bodies[sim.body as usize];
        let moved = (sim.center - sim.center0).length();
        if b.motion_quality == MotionQuality::LinearCast
            && b.motion_type == MotionType::Dynamic
            && !b.is_sensor
            && moved > CCD_MOTION_FRACTION * b.shape.inner_radius()
        {
            state.candidates.push(sim.body);
        } else {
            state.slow_motion = state.slow_motion.max(moved);
        }
    }
    state.marks.clear();
    state.marks.resize(bodies.bodies.len(), 0);
    for &c in &state.candidates {
        state.marks[c as usize] = FAST;
    }
    find_fast_pairs(bodies, state);
}

/// Sweep and prune over the candidates' swept boxes (start to end pose) along the axis
/// where their centres spread most; fills `partners` / `partner_start`. The order of
/// everything depends only on the boxes and candidate positions.
fn find_fast_pairs(bodies: &Bodies, state: &mut CcdState) {
    let CcdState {
        candidates,
        partners,
        partner_start,
        boxes,
        order,
        open,
        pairs,
        ..
    } = state;
    boxes.clear();
    for &c in candidates.iter() {
        let shape = &bodies.bodies[c as usize].shape;
        let start = start_pose(bodies, c);
        let end = Isometry {
            rotation: start.rotation,
            translation: start.translation + motion(bodies, c),
        };
        boxes.push(shape.world_aabb(&start).union(&shape.world_aabb(&end)));
    }
    // The axis with the largest variance of box centres separates the most.
    let n = boxes.len().max(1) as f32;
    let mean = boxes.iter().fold(Vec3A::ZERO, |m, b| m + b.center()) / n;
    let var = boxes.iter().fold(Vec3A::ZERO, |v, b| {
        let d = b.center() - mean;
        v + d * d
    });
    let axis = if var.x >= var.y && var.x >= var.z {
        0
    } else if var.y >= var.z {
        1
    } else {
        2
    };
    order.clear();
    order.extend(0..boxes.len() as u32);
    order.sort_unstable_by(|&i, &j| {
        boxes[i as usize].min[axis]
            .total_cmp(&boxes[j as usize].min[axis])
            .then(i.cmp(&j))
    });
    open.clear();
    pairs.clear();
    for &i in order.iter() {
        let bi = &boxes[i as usize];
        open.retain(|&j| boxes[j as usize].max[axis] >= bi.min[axis]);
        for &j in open.iter() {
            if boxes[j as usize].overlaps(bi) {
                pairs.push((i, j));
                pairs.push((j, i));
            }
        }
        open.push(i);
    }
    pairs.sort_unstable();
    partners.clear();
    partner_start.clear();
    let mut k = 0;
    for i in 0..candidates.len() as u32 {
        partner_start.push(partners.len() as u32);
        while k < pairs.len() && pairs[k].0 == i {
            partners.push(candidates[pairs[k].1 as usize]);
            k += 1;
        }
    }
    partner_start.push(partners.len() as u32);
}

/// Sweeps the candidate at position `position` of `state.candidates` from its start to
/// its end pose and returns its earliest hit.
pub(crate) fn cast_body(
    bodies: &Bodies,
    broad_phase: &BroadPhase,
    layers: &LayerTable,
    exclusions: &ExclusionList,
    state: &CcdState,
    position: usize,
) -> Option<CcdHit> {
    let index = state.candidates[position];
    let body = &bodies.bodies[index as usize];
    let pose_a = start_pose(bodies, index);
    let delta_a = motion(bodies, index);
    let end_a = Isometry {
        rotation: pose_a.rotation,
        translation: pose_a.translation + delta_a,
    };
    let swept = body
        .shape
        .world_aabb(&pose_a)
        .union(&body.shape.world_aabb(&end_a));
    let query = swept.expanded(state.slow_motion);
    let allowance = CCD_TOUCHING_ALLOWANCE * body.shape.inner_radius();
    let id_a = bodies.id_of(index);

    let mut best: Option<CcdHit> = None;
    let mut consider = |other: u32| {
        let ob = &bodies.bodies[other as usize];
        if ob.is_sensor
            || !motion_types_collide(body.motion_type, ob.motion_type, false)
            || !layers.collides(body.layer, ob.layer)
            || !body.filter.collides(&ob.filter)
            || exclusions.contains(id_a, bodies.id_of(other))
        {
            return;
        }
        let pose_b = start_pose(bodies, other);
        let delta_b = if ob.set == AWAKE_SET {
            motion(bodies, other)
        } else {
            Vec3A::ZERO
        };
        // Cheap reject in B's frame of motion: A's start box swept by the relative
        // motion must meet B's start box (bullets flying side by side never do).
        let rel = delta_a - delta_b;
        let start_a = body.shape.world_aabb(&pose_a);
        let rel_swept = start_a.union(&Aabb::new(start_a.min + rel, start_a.max + rel));
        if !rel_swept.overlaps(&ob.shape.world_aabb(&pose_b)) {
            return;
        }
        let settings = CastSettings {
            max_fraction: best.map_or(1.0, |h| h.fraction),
            skin: CCD_SKIN,
            allowance,
            floor: f32::INFINITY,
        };
        if let Some(CastHit {
            fraction,
            normal,
            point,
            ..
        }) = linear_cast(&body.shape, &pose_a, rel, &ob.shape, &pose_b, &settings)
        {
            let better = best.is_none_or(|h| {
                fraction < h.fraction || (fraction == h.fraction && other < h.other)
            });
            if better {
                best = Some(CcdHit {
                    body: index,
                    other,
                    fraction,
                    normal,
                    // The cast moved A by the relative motion with B held at its start;
                    // in the world B has moved too by then.
                    point: point + delta_b * fraction,
                });
            }
        }
    };
    // Slow, static and sleeping bodies from the tree; fast ones from the sweep and prune
    // (the hit kept does not depend on the order: earliest fraction, then lowest slot).
    broad_phase.query_aabb(&query, |_, other| {
        if other != index && state.marks[other as usize] != FAST {
            consider(other);
        }
        true
    });
    let (from, to) = (
        state.partner_start[position] as usize,
        state.partner_start[position + 1] as usize,
    );
    for &other in &state.partners[from..to] {
        consider(other);
    }
    best
}

/// What [`linear_cast`] looks for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CastSettings {
    /// The latest fraction of the translation that counts.
    pub max_fraction: f32,
    /// The gap at which the shapes count as touching (CCD leaves [`CCD_SKIN`]; queries 0).
    pub skin: f32,
    /// A pair touching at the start only stops the cast once A would sink this much
    /// deeper (CCD: bodies resting on a surface keep moving); 0 stops it at once.
    pub allowance: f32,
    /// The cast stops only where the signed distance falls to this or below
    /// (`f32::INFINITY`: no floor). A query that lets a shape move away from a body it
    /// starts in contact with sets it below the start separation, so that moving along
    /// the body counts only where the shape would sink deeper than it started.
    pub floor: f32,
}

/// A hit of [`linear_cast`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CastHit {
    /// Fraction of the translation.
    pub fraction: f32,
    /// Unit normal from A towards B.
    pub normal: Vec3A,
    /// A's closest point (in the world, A at `fraction`).
    pub point: Vec3A,
    /// The signed distance there (negative: penetrating).
    pub separation: f32,
}

/// The first fraction `t` in `[0, settings.max_fraction]` at which shape A, moved by
/// `t * translation` from `pose_a`, comes within `settings.skin` of B at `pose_b`.
///
/// Composite shapes are cast part by part (compound children, the triangles of a mesh or
/// heightfield under the sweep), keeping the earliest hit (the first part on ties).
/// A mesh or heightfield cannot be the swept shape (they are static or kinematic and never
/// CCD candidates), nor a half-space.
pub(crate) fn linear_cast(
    a: &Shape,
    pose_a: &Isometry,
    translation: Vec3A,
    b: &Shape,
    pose_b: &Isometry,
    settings: &CastSettings,
) -> Option<CastHit> {
    let mut best: Option<CastHit> = None;
    let keep = |hit: Option<CastHit>, best: &mut Option<CastHit>| {
        if let Some(h) = hit
            && best.is_none_or(|b| h.fraction < b.fraction)
        {
            *best = Some(h);
        }
    };
    let limited = |best: &Option<CastHit>| CastSettings {
        max_fraction: best.map_or(settings.max_fraction, |h| h.fraction),
        ..*settings
    };
    match (a, b) {
        (Shape::Compound(c), _) => {
            for child in c.children() {
                let pose = pose_a.mul_isometry(&child.pose);
                let hit = linear_cast(&child.shape, &pose, translation, b, pose_b, &limited(&best));
                keep(hit, &mut best);
            }
            best
        }
        (_, Shape::Compound(c)) => {
            let swept = swept_box_in(a, pose_a, translation, pose_b, settings.skin);
            c.query(&swept, |k| {
                let child = &c.children()[k as usize];
                let pose = pose_b.mul_isometry(&child.pose);
                let hit = linear_cast(a, pose_a, translation, &child.shape, &pose, &limited(&best));
                keep(hit, &mut best);
                true
            });
            best
        }
        (_, Shape::TriangleMesh(_) | Shape::HeightField(_)) => {
            let a_convex = a.as_convex()?;
            let swept = swept_box_in(a, pose_a, translation, pose_b, settings.skin);
            for_each_triangle(b, &swept, |_, tri| {
                let hit = cast_convex(
                    a_convex,
                    pose_a,
                    translation,
                    Target::Convex(&tri),
                    pose_b,
                    &limited(&best),
                );
                keep(hit, &mut best);
                true
            });
            best
        }
        (_, Shape::HalfSpace(h)) => cast_convex(
            a.as_convex()?,
            pose_a,
            translation,
            Target::HalfSpace(h),
            pose_b,
            settings,
        ),
        _ => cast_convex(
            a.as_convex()?,
            pose_a,
            translation,
            Target::Convex(b.as_convex()?),
            pose_b,
            settings,
        ),
    }
}

/// The box swept by `a` (from `pose_a` along `translation`) in the frame `pose_b`, grown by
/// `skin`.
fn swept_box_in(
    a: &Shape,
    pose_a: &Isometry,
    translation: Vec3A,
    pose_b: &Isometry,
    skin: f32,
) -> Aabb {
    let to_b = pose_b.inverse();
    let start = to_b.mul_isometry(pose_a);
    let end = Isometry {
        rotation: start.rotation,
        translation: start.translation + to_b.transform_vector(translation),
    };
    a.world_aabb(&start)
        .union(&a.world_aabb(&end))
        .expanded(skin.max(1e-4))
}

/// What a convex shape is cast against.
enum Target<'a> {
    HalfSpace(&'a HalfSpace),
    Convex(&'a dyn ConvexSupport),
}

/// [`linear_cast`] of one convex shape against one convex target.
///
/// Conservative advancement: the distance between convex shapes under a linear
/// translation is a convex function of `t` whose slope is `-normal · translation`, so
/// stepping by `(distance - target) / approach speed` never passes the first touch. A
/// pair that already touches at `t = 0` only counts when A would sink `allowance`
/// deeper; no pair counts above `floor`.
fn cast_convex(
    a_convex: &dyn ConvexSupport,
    pose_a: &Isometry,
    translation: Vec3A,
    b: Target<'_>,
    pose_b: &Isometry,
    settings: &CastSettings,
) -> Option<CastHit> {
    // Distance, normal (A towards B) and A's closest point at fraction t.
    let distance = |t: f32| -> CastHit {
        let moved = Isometry {
            rotation: pose_a.rotation,
            translation: pose_a.translation + translation * t,
        };
        let (separation, normal, point) = match b {
            Target::HalfSpace(h) => {
                // The plane's outward normal points from B to A.
                let (d, n, deepest) = h.distance_to(pose_b, a_convex, &moved);
                (d, -n, deepest)
            }
            Target::Convex(b_convex) => {
                let cp = closest_points(a_convex, &moved, b_convex, pose_b);
                (cp.separation, cp.normal, cp.point_a)
            }
        };
        CastHit {
            fraction: t,
            normal,
            point,
            separation,
        }
    };
    let skin = settings.skin;
    let d0 = distance(0.0).separation;
    let target = if d0 > skin {
        skin
    } else {
        d0 - settings.allowance
    }
    .min(settings.floor);
    let mut t = 0.0f32;
    let mut last = None;
    for _ in 0..MAX_ITERATIONS {
        let hit = distance(t);
        last = Some(hit);
        if hit.separation <= target + 1e-4 {
            return Some(hit);
        }
        let approach = hit.normal.dot(translation);
        if approach <= 0.0 {
            // Moving apart (or parallel) at the closest points: the convex distance only
            // grows from here.
            return None;
        }
        t += (hit.separation - target) / approach;
        if t > settings.max_fraction {
            return None;
        }
    }
    // Not converged (grazing approach): the last time is still before the touch.
    last.filter(|h| h.separation <= target + skin.max(1e-3))
        .map(|h| CastHit { fraction: t, ..h })
}

/// Materials and thresholds the resolve pass needs.
pub(crate) struct CcdResponse<'a> {
    pub mixing: &'a MaterialMixing,
    pub restitution_threshold: f32,
}

/// Moves every hit body back to its time of impact, in (fraction, body) order, and
/// applies the collision impulse there (Jolt resolves CCD contacts the same way): the
/// normal impulse stops the approach, or reverses `restitution` of it at and above the
/// restitution threshold (the solver's rule), and friction removes up to `friction * normal impulse` of the
/// sliding speed. A sleeping body that is hit wakes up.
pub(crate) fn resolve(
    bodies: &mut Bodies,
    state: &mut CcdState,
    response: &CcdResponse<'_>,
    sleep_events: &mut Vec<SleepEvent>,
) {
    let CcdState { hits, marks, .. } = state;
    if hits.is_empty() {
        return;
    }
    hits.sort_by(|x, y| x.fraction.total_cmp(&y.fraction).then(x.body.cmp(&y.body)));
    // `marks` holds FAST for every candidate since `collect_candidates`.
    for hit in hits.iter() {
        if marks[hit.body as usize] == MOVED {
            continue;
        }
        move_back(bodies, hit.body, hit.fraction);
        marks[hit.body as usize] = MOVED;
        // A fast body it hit (not moved yet) goes back to the same time: they met there.
        let other = hit.other as usize;
        if marks[other] == FAST {
            move_back(bodies, hit.other, hit.fraction);
            marks[other] = MOVED;
        }
        if bodies.bodies[other].motion_type == MotionType::Dynamic {
            island::wake_body(bodies, hit.other, sleep_events);
        }
        apply_impact(bodies, hit, hit.point, response);
    }
}

/// The collision impulse of one CCD hit at world point `point`.
fn apply_impact(bodies: &mut Bodies, hit: &CcdHit, point: Vec3A, response: &CcdResponse<'_>) {
    let (ia, ib) = (hit.body, hit.other);
    let (ca, cb) = (&bodies.bodies[ia as usize], &bodies.bodies[ib as usize]);
    let mixed = response.mixing.mix_bodies(ca, cb);
    let (friction, restitution) = (mixed.friction, mixed.restitution);
    let b_dynamic = cb.motion_type == MotionType::Dynamic;
    let (sa, sb) = (*bodies.sim_of(ia), *bodies.sim_of(ib));
    // Apply the impulse at the centre of the contact patch: the cast's single closest
    // point of two faces is any point of the patch (often a corner), and an impulse there
    // would spin two boxes that hit face to face.
    let mut manifold = ContactManifold::default();
    let (point, n) = if collide(
        &ca.shape,
        &sa.transform,
        &cb.shape,
        &sb.transform,
        4.0 * CCD_SKIN,
        &mut manifold,
    ) {
        let sum = manifold.points.iter().fold(Vec3A::ZERO, |acc, p| {
            acc + 0.5
                * (sa.transform.transform_point(p.local_a)
                    + sb.transform.transform_point(p.local_b))
        });
        (sum / manifold.points.len() as f32, manifold.normal)
    } else {
        (point, hit.normal)
    };
    // Locked axes (see `LockedAxes`): the masses seen along them are infinite.
    let (la, lb) = (ca.locked_axes, cb.locked_axes);
    let (ma, inv_ia) = (sa.inv_mass, la.project_angular(sa.inv_inertia_world()));
    let (mb, inv_ib) = if b_dynamic {
        (sb.inv_mass, lb.project_angular(sb.inv_inertia_world()))
    } else {
        (0.0, Mat3A::ZERO)
    };
    let (ra, rb) = (point - sa.center, point - sb.center);
    let vel = |sa: &BodySim, sb: &BodySim| {
        (sb.linear_velocity + cross(sb.angular_velocity, rb))
            - (sa.linear_velocity + cross(sa.angular_velocity, ra))
    };
    let dv = vel(&sa, &sb);
    let vn = dv.dot(n);
    if vn >= 0.0 {
        return;
    }
    let k = |dir: Vec3A| {
        let (xa, xb) = (cross(ra, dir), cross(rb, dir));
        let along = |m: f32, l: LockedAxes| {
            if l.locks_translation() {
                m * l.free_linear(dir).dot(dir)
            } else {
                m
            }
        };
        along(ma, la) + along(mb, lb) + xa.dot(inv_ia * xa) + xb.dot(inv_ib * xb)
    };
    let e = if vn <= -response.restitution_threshold {
        restitution
    } else {
        0.0
    };
    let jn = -(1.0 + e) * vn / k(n);
    let mut impulse = jn * n;
    let vt = dv - vn * n;
    let slip = vt.length();
    if slip > 1e-6 && friction > 0.0 {
        let t = vt / slip;
        let jt = (slip / k(t)).min(friction * jn);
        impulse -= jt * t;
    }
    let a = bodies.sim_mut(bodies.id_of(ia)).expect("live fast body");
    a.linear_velocity -= ma * la.free_linear(impulse);
    a.angular_velocity -= inv_ia * cross(ra, impulse);
    if b_dynamic {
        let b = bodies.sim_mut(bodies.id_of(ib)).expect("live body hit");
        b.linear_velocity += mb * lb.free_linear(impulse);
        b.angular_velocity += inv_ib * cross(rb, impulse);
    }
}

/// Puts a body at `fraction` of this step's motion (keeping its velocity and rotation).
fn move_back(bodies: &mut Bodies, index: u32, fraction: f32) {
    let id = bodies.id_of(index);
    let locks = bodies.bodies[index as usize].locked_axes;
    let sim = bodies
        .sim_mut(id)
        .expect("CCD only moves live bodies found this step");
    sim.center = locks.keep_locked(
        sim.center,
        sim.center0 + (sim.center - sim.center0) * fraction,
    );
    let origin = sim.center - rotate(sim.transform.rotation, sim.local_center);
    sim.transform.translation = locks.keep_locked(sim.transform.translation, origin);
}
