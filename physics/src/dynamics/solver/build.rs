//! The constraint build: each colour's contacts prepared into SIMD bundles (anchors,
//! effective masses, softness), in parallel runs of bundles.

use super::*;
use crate::contact::PairCache;
use crate::dynamics::constraint_graph::GraphColor;

pub(super) fn build_constraints(
    jobs: &JobSystem,
    bodies: &Bodies,
    contacts: &ContactManager,
    joints: &Joints,
    soft: Softness,
    s: &mut SolverScratch,
) {
    s.entries.clear();
    s.rolling_entries.clear();
    // Fewest and most points of the coloured contacts' manifolds.
    let mut points = (u8::MAX, 0u8);
    if s.points_of.len() < contacts.contacts.len() {
        s.points_of.resize(contacts.contacts.len(), 0);
    }
    // The contacts the narrow phase listed (in block order, so in id order), then those
    // that touched a sleeping body then, read now: their island may have woken since.
    for block in contacts.changes.read() {
        for sc in &block.solver {
            let entry = GraphEntry {
                kind: ConstraintKind::Contact,
                id: sc.id,
                body_a: sc.bodies[0],
                body_b: sc.bodies[1],
            };
            if sc.rolling {
                s.rolling_entries.push(entry);
            } else {
                points = (points.0.min(sc.points), points.1.max(sc.points));
                s.points_of[sc.id as usize] = sc.points;
                s.entries.push(entry);
            }
        }
    }
    for block in contacts.changes.read() {
        for &id in &block.sleepers {
            let c = &contacts.contacts[id as usize];
            if !c.alive
                || c.manifold.points.is_empty()
                || c.flags.contains(ContactFlags::SENSOR)
                || !c.flags.contains(ContactFlags::TOUCHING)
            {
                continue;
            }
            let entry = GraphEntry {
                kind: ConstraintKind::Contact,
                id,
                body_a: solver_index(bodies, c.body_a),
                body_b: solver_index(bodies, c.body_b),
            };
            if c.rolling.rolling > 0.0 || c.rolling.spinning > 0.0 {
                s.rolling_entries.push(entry);
            } else {
                let n = c.manifold.points.len() as u8;
                points = (points.0.min(n), points.1.max(n));
                s.points_of[id as usize] = n;
                s.entries.push(entry);
            }
        }
    }
    joint_stage::push_entries(bodies, joints, &s.trees.member, &mut s.entries);
    s.graph.build(s.bodies.len(), s.entries.iter().copied());
    joint_stage::take_entries(&mut s.graph, &mut s.joints);
    // Manifolds of equal point counts share bundles: a bundle loops over its largest
    // manifold's points, and lanes lacking one are masked, so a sphere's one-point contact
    // beside a box's four cost four masked points. A colour's constraints share no
    // dynamic body, so their order within it changes which lanes they get, never a bit
    // of the result; grouping by point count, in colouring order within a count, keeps it
    // independent of thread timing. (Skipped when every manifold has as many points: a
    // pile of boxes. Colours are grouped in parallel, keyed by the compact `points_of`.)
    if points.0 < points.1 {
        let points_of = &s.points_of;
        jobs.parallel_for_slice(&mut s.graph.colors, 1, |_, colors| {
            for color in colors {
                color.group_by::<{ MAX_MANIFOLD_POINTS + 1 }>(|e| {
                    usize::from(points_of[e.id as usize])
                });
            }
        });
    }
    for e in s.entries.iter().chain(&s.rolling_entries) {
        for i in [e.body_a, e.body_b].into_iter().flatten() {
            s.params[i as usize].free = false;
        }
    }
    for &i in joint_tree::bodies(&s.trees) {
        s.params[i].free = false;
    }
    // Which passes each block of bodies needs: a scene of free bodies runs no substep
    // pass at all, a pile of touching bodies no free-flight pass.
    s.block_work.clear();
    s.block_work
        .extend(s.params.chunks(BODY_BLOCK).map(|block| BlockWork {
            substeps: block.iter().any(|p| !p.free),
            free: block.iter().any(|p| p.free),
        }));

    let awake_sims = bodies.awake();
    let make = |e: &GraphEntry, s_bodies: &[SolverBody], masses: &[BodyMass]| {
        let c = &contacts.contacts[e.id as usize];
        // A moving side's solver index is its place in the awake set: its hot record is
        // read from there, not found through its cold body record.
        let sim = |solver: Option<u32>, body: u32| {
            solver.map_or_else(|| bodies.sim_of(body), |i| &awake_sims[i as usize])
        };
        let (sa, sb) = (sim(e.body_a, c.body_a), sim(e.body_b, c.body_b));
        let n = c.solve_normal;
        // A kept manifold's lever arms are those of its last full computation (see
        // `PairCache`): anchors turning with a leaning body tip soft piles over.
        let (turn_a, turn_b) = if c.cache.valid {
            (
                PairCache::turn_back(sa.transform.rotation, c.cache.rotation_a),
                PairCache::turn_back(sb.transform.rotation, c.cache.rotation_b),
            )
        } else {
            (None, None)
        };
        let mut points = arrayvec::ArrayVec::new();
        for (p, imp) in c.manifold.points.iter().zip(&c.impulses) {
            let pa = sa.transform.transform_point(p.local_a);
            let pb = sb.transform.transform_point(p.local_b);
            let mid = (pa + pb) * 0.5;
            let (r_a, r_b) = (mid - sa.center, mid - sb.center);
            let r_a = turn_a.map_or(r_a, |m| m * r_a);
            let r_b = turn_b.map_or(r_b, |m| m * r_b);
            points.push(ConstraintPoint {
                r_a,
                r_b,
                separation: p.separation,
                normal_impulse: imp.normal,
                tangent_impulse: [imp.tangent1, imp.tangent2],
                relative_velocity: imp.approach,
                normal_tally: -imp.normal,
                tangent_tally: [-imp.tangent1, -imp.tangent2],
                ..ConstraintPoint::default()
            });
        }
        let tangents = tangent_basis(n);
        let cc = ContactConstraint {
            contact: e.id,
            body_a: e.body_a,
            body_b: e.body_b,
            // Read only for a side the solver does not move (see `velocity_a`), so the
            // cold body record is not fetched for the others.
            fixed_a: if e.body_a.is_none() {
                fixed_velocity(bodies, c.body_a)
            } else {
                (Vec3A::ZERO, Vec3A::ZERO)
            },
            fixed_b: if e.body_b.is_none() {
                fixed_velocity(bodies, c.body_b)
            } else {
                (Vec3A::ZERO, Vec3A::ZERO)
            },
            pose_a: (Vec3A::ZERO, Quat::IDENTITY),
            pose_b: (Vec3A::ZERO, Quat::IDENTITY),
            normal: n,
            tangents,
            friction: c.solve_friction,
            restitution: c.solve_restitution,
            tangent_speed: [
                c.tangent_velocity.dot(tangents[0]),
                c.tangent_velocity.dot(tangents[1]),
            ],
            rolling: RollingRows {
                rolling: c.rolling.rolling,
                spinning: c.rolling.spinning,
                ..RollingRows::default()
            },
            softness: soft,
            mass_a: e.body_a.map_or(BodyMass::FIXED, |i| masses[i as usize]),
            mass_b: e.body_b.map_or(BodyMass::FIXED, |i| masses[i as usize]),
            points,
            patch: Patch::default(),
            // The cold body records are read only while some body reports forces.
            force_threshold: if bodies.force_reporters == 0 {
                f32::INFINITY
            } else {
                let t = |i: u32| bodies.bodies[i as usize].contact_force_threshold;
                t(c.body_a).min(t(c.body_b))
            },
        };
        let a = e.body_a.map_or(SolverBody::FIXED, |i| s_bodies[i as usize]);
        let b = e.body_b.map_or(SolverBody::FIXED, |i| s_bodies[i as usize]);
        (cc, a, b)
    };

    let active = s.graph.colors.len();
    if s.colors.len() < active {
        s.colors.resize_with(active, ColorWork::default);
    }
    let awake = s.bodies.len();
    let blocks = color_blocks(jobs);
    // Per colour, one colour to an item (each colour's blocks, plan positions and plan
    // of the bodies it writes are its own, and depend only on its constraints): block
    // boundaries, each constraint's plan positions, and the plan, whose check of distinct
    // bodies reads every body of the colour (run serially, colour after colour, these
    // were about 160 us of rain4k's one-thread step, half of the stage's serial time).
    let graph_colors = &s.graph.colors;
    jobs.parallel_for_slice(&mut s.colors[..active], 1, |first, works| {
        for (k, work) in works.iter_mut().enumerate() {
            let color = &graph_colors[first + k];
            color_layout(work, color, blocks, awake);
        }
    });
    let (s_bodies, masses) = (&s.bodies, &s.masses);
    // In parallel, every colour in one fork: each bundle is prepared from its own
    // constraints only (anchors, effective masses, packing), so the bits do not depend on
    // who fills it. Bundles are reused in place (see `ContactBundle::clear`). The items
    // (a run of one colour's bundles each) sit on the stack: at most `BUILD_ITEMS` runs
    // of `per` bundles, plus one short run per colour.
    let total: usize = s.colors.iter().map(|w| w.bundles.len()).sum();
    let per = 4.max(total.div_ceil(BUILD_ITEMS));
    let mut items: arrayvec::ArrayVec<BuildItem<'_>, { BUILD_ITEMS + COLOR_COUNT }> =
        arrayvec::ArrayVec::new();
    for (work, color) in s.colors.iter_mut().zip(&s.graph.colors) {
        let ColorWork { bundles, slots, .. } = work;
        for (k, run) in bundles.chunks_mut(per).enumerate() {
            items.push((k * per, run, &color.entries, slots));
        }
    }
    jobs.parallel_for_slice(&mut items, 1, |_, claimed| {
        let path = simd::path();
        for (first, bundles, entries, slots) in claimed.iter_mut() {
            for (j, bundle) in bundles.iter_mut().enumerate() {
                let k0 = (*first + j) * LANES;
                // Constraints name contacts and bodies in colour order, scattered in
                // memory: ask for the contacts two bundles ahead and, for the next bundle
                // (whose contacts were asked for one bundle ago), the bodies they name.
                for e in entries.iter().skip(k0 + 2 * LANES).take(LANES) {
                    prefetch::<_, 8>(&contacts.contacts[e.id as usize]);
                }
                for e in entries.iter().skip(k0 + LANES).take(LANES) {
                    for i in [e.body_a, e.body_b].into_iter().flatten() {
                        prefetch::<_, 2>(&awake_sims[i as usize]);
                        prefetch::<_, 1>(&s_bodies[i as usize]);
                        prefetch::<_, 1>(&masses[i as usize]);
                    }
                }
                bundle.clear();
                let mut start = StartVelocities::default();
                for k in k0..(k0 + LANES).min(entries.len()) {
                    let (c, a, b) = make(&entries[k], s_bodies, masses);
                    bundle.push(&c, slots[k], (&a, &b), &mut start);
                }
                simd::prepare(path, bundle, &start);
            }
        }
    });
    drop(items);
    s.overflow.clear();
    for e in s.graph.overflow.iter().chain(&s.rolling_entries) {
        let (mut c, a, b) = make(e, &s.bodies, &s.masses);
        c.prepare(&a, &b);
        s.overflow.push(c);
    }
}

/// One colour's layout: its block boundaries (in constraints and in plan positions), each
/// constraint's bodies' positions in the plan, room for its bundles, and the plan of the
/// bodies it writes. Reads only the colour's own constraints.
fn color_layout(work: &mut ColorWork, color: &GraphColor, blocks: usize, awake: usize) {
    work.bounds.clear();
    work.blocks.clear();
    work.slots.clear();
    work.bounds.push(0);
    work.blocks.push(0);
    let mut pos = 0u32;
    let block = BLOCK
        .max(color.entries.len().div_ceil(blocks))
        .next_multiple_of(LANES);
    for (k, e) in color.entries.iter().enumerate() {
        let slot_a = e.body_a.map(|_| {
            pos += 1;
            pos - 1
        });
        let slot_b = e.body_b.map(|_| {
            pos += 1;
            pos - 1
        });
        work.slots.push((slot_a, slot_b));
        if (k + 1).is_multiple_of(block) || k + 1 == color.entries.len() {
            work.bounds.push(pos as usize);
            work.blocks.push((k + 1).div_ceil(LANES));
        }
    }
    work.bundles
        .resize_with(color.entries.len().div_ceil(LANES), ContactBundle::new);
    let indices = color
        .entries
        .iter()
        .flat_map(|e| [e.body_a, e.body_b])
        .flatten()
        .map(|i| i as usize);
    work.plan
        .set(awake, indices)
        .expect("constraint colouring guarantees distinct bodies per colour");
}
