//! The collision pipeline's stages, as functions over the world's parts.
//!
//! ```text
//!  update_broad_phase   awake bodies' AABBs in parallel, then refit proxies that left
//!                       their fat boxes (serial, cheap: most stay inside)
//!  find_new_contacts    moved proxies queried against both trees in parallel chunks,
//!                       pairs merged and sorted by body ids, filtered, contacts created
//!  update_contacts      narrow phase in parallel over contact blocks (each job writes
//!                       only its own contacts)
//!  finish_contacts      serial pass in contact-id order: destroy disjoint pairs, turn
//!                       touching changes into events
//! ```
//!
//! The stages take the parts they touch as arguments, never the world, so the step graph
//! can declare exactly what each one reads and writes.

use crate::math::rotate;
use joule_jobs::{DisjointChunk, JobSystem};

use crate::body::filter::{ExclusionList, LayerTable};
use crate::body::{AWAKE_SET, Bodies, Body, BodySim, FIRST_SLEEPING_SET, MotionType};
use crate::collision::broad_phase::{BodyPair, BroadPhase};
use crate::collision::narrow_phase::{ContactManifold, collide};
use crate::contact::hooks::{self, ContactModifier};
use crate::contact::{
    self, BlockChanges, ChangedContact, Contact, ContactFlags, ContactHit, ContactManager,
    ContactReport, PairCache, SolverContact, motion_types_collide,
};
use crate::events::{ContactEvent, ContactEventKind, Events, SensorEvent};
use crate::geometry::aabb::Aabb;
use crate::geometry::prefetch::prefetch;
use crate::material::MaterialMixing;
use crate::math::Vec3A;

/// Settings the collision stages read.
#[derive(Clone, Copy, Debug)]
pub struct CollisionSettings {
    /// Speculative contact margin (m) of a pair at rest; it grows with the pair's speed
    /// (see `speculative_margin`).
    pub margin: f32,
    /// Report `Persist` events.
    pub report_persist: bool,
    /// The step's time (s): the speculative margin covers how far a pair can close in it.
    pub dt: f32,
    /// The world's gravity: a begin event's approach speed is carried to the instant of
    /// touch under it (see `ContactHit::of`).
    pub gravity: Vec3A,
}

/// The speculative margin of a pair: the fixed margin plus how far the two bodies can
/// approach each other during the step (Box2D v3's speculative distance, Jolt's
/// velocity-expanded bounds). The bound is the relative speed of the centres of mass
/// plus each body's spin times its farthest point from its centre: no point of B can
/// close on A faster. Without it a body moving more than the fixed margin per step gets
/// its first contact only once it is already inside the other, and its rebound starts
/// below the surface (a 2 m drop at e = 0.3 came back to 0.068 of the height instead of
/// e² = 0.09).
fn speculative_margin(
    (ba, sa): (&Body, &BodySim),
    (bb, sb): (&Body, &BodySim),
    settings: &CollisionSettings,
) -> f32 {
    let swept = |body: &Body| body.motion_quality == crate::body::MotionQuality::LinearCast;
    // A body swept by CCD gets its first contact from the sweep; growing its margin too
    // only made speculative points it never used (a 200 m/s bullet looked 3 m ahead at
    // 60 Hz, and the bullets bench took 1.5 times as long).
    if settings.dt == 0.0 || swept(ba) || swept(bb) {
        return settings.margin;
    }
    let reach = |body: &Body, sim: &BodySim| {
        let spin = sim.angular_velocity.length();
        if spin == 0.0 {
            // Also keeps a half-space's huge box out of the product.
            return (sim.linear_velocity, 0.0);
        }
        let aabb = body.shape.local_aabb();
        let far = (aabb.max - sim.local_center)
            .abs()
            .max((aabb.min - sim.local_center).abs())
            .length();
        (sim.linear_velocity, spin * far)
    };
    let (va, spin_a) = reach(ba, sa);
    let (vb, spin_b) = reach(bb, sb);
    let speed = (vb - va).length() + spin_a + spin_b;
    settings.margin + (speed * settings.dt).min(MAX_SPECULATIVE_GROWTH)
}

/// Most the speculative margin grows (m): enough for a 10 m/s approach at 20 Hz; faster
/// bodies are CCD's job.
const MAX_SPECULATIVE_GROWTH: f32 = 0.5;

/// Buffers reused from step to step so the pipeline does not allocate once warm.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    aabbs: Vec<Aabb>,
    pair_chunks: Vec<Vec<BodyPair>>,
    pairs: Vec<BodyPair>,
}

/// Bodies per job in the parallel stages.
const BODY_BLOCK: usize = 256;
/// Contacts per job in the narrow phase.
const CONTACT_BLOCK: usize = 64;
/// Moved proxies per pair-finding job.
const MOVED_BLOCK: usize = 64;

/// Recomputes the AABBs of awake bodies and refits the proxies that left their fat box.
pub(crate) fn update_broad_phase(
    jobs: &JobSystem,
    bodies: &Bodies,
    broad: &mut BroadPhase,
    scratch: &mut Scratch,
) {
    let awake = bodies.awake();
    scratch.aabbs.clear();
    scratch.aabbs.resize(awake.len(), Aabb::EMPTY);
    {
        // The job captures one shared reference, its block index and its output: small
        // enough to be stored inline in the job, so spawning allocates nothing. Each
        // block also checks its boxes against the fat boxes, read-only: a box its fat box
        // still holds (most of them) is left `Aabb::EMPTY`, and the serial pass below
        // skips it.
        let shared = (&bodies.bodies, awake, &*broad);
        let shared = &shared;
        jobs.scope(|s| {
            for (i, out) in scratch.aabbs.chunks_mut(BODY_BLOCK).enumerate() {
                s.spawn_labeled("body aabbs", move |_| {
                    let (cold, awake, broad) = *shared;
                    let sims = &awake[i * BODY_BLOCK..];
                    for (sim, out) in sims.iter().zip(out) {
                        let body = &cold[sim.body as usize];
                        let aabb = body.shape.world_aabb(&sim.transform);
                        *out = match body.proxy {
                            Some(proxy) if !broad.still_holds(proxy, &aabb) => aabb,
                            _ => Aabb::EMPTY,
                        };
                    }
                });
            }
        });
    }
    for (sim, aabb) in bodies.awake().iter().zip(&scratch.aabbs) {
        if *aabb == Aabb::EMPTY {
            continue;
        }
        let body = &bodies.bodies[sim.body as usize];
        if let Some(proxy) = body.proxy {
            broad.refit_proxy(proxy, *aabb, sim.center - sim.center0);
        }
    }
}

/// Finds new overlapping pairs among moved proxies and creates contacts for the allowed
/// ones, in body-id order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_new_contacts(
    jobs: &JobSystem,
    bodies: &Bodies,
    broad: &mut BroadPhase,
    contacts: &mut ContactManager,
    exclusions: &ExclusionList,
    layers: &LayerTable,
    mixing: &MaterialMixing,
    scratch: &mut Scratch,
) {
    broad.sort_moved();
    let moved = broad.moved_proxies();
    let chunks = moved.len().div_ceil(MOVED_BLOCK);
    if scratch.pair_chunks.len() < chunks {
        scratch.pair_chunks.resize_with(chunks, Vec::new);
    }
    {
        // Pairs that already have a contact are dropped in the jobs (a read-only lookup),
        // so the serial sort and pass below see only new ones; they skipped them anyway.
        // One shared reference keeps the job's captures within its inline buffer, so
        // spawning allocates nothing.
        let shared = (&*broad, &*contacts);
        let shared = &shared;
        jobs.scope(|s| {
            for (m, out) in moved
                .chunks(MOVED_BLOCK)
                .zip(scratch.pair_chunks.iter_mut())
            {
                out.clear();
                s.spawn_labeled("find pairs", move |_| {
                    let (broad, existing) = *shared;
                    broad.find_pairs_for(m, out);
                    out.retain(|p| !existing.contains(p.a, p.b));
                });
            }
        });
    }
    scratch.pairs.clear();
    BroadPhase::finish_pairs(scratch.pair_chunks[..chunks].iter_mut(), &mut scratch.pairs);
    broad.clear_moved();

    for pair in &scratch.pairs {
        let (a, b) = (pair.a, pair.b);
        debug_assert!(
            !contacts.contains(a, b),
            "the pair jobs dropped existing pairs"
        );
        if !pair_allowed(bodies, exclusions, layers, a, b) {
            continue;
        }
        let (ba, bb) = (&bodies.bodies[a as usize], &bodies.bodies[b as usize]);
        let sensor = ba.is_sensor || bb.is_sensor;
        let (ida, idb) = (bodies.id_of(a), bodies.id_of(b));
        let mut flags = ContactFlags::empty();
        if sensor {
            flags |= ContactFlags::SENSOR;
            if ba.is_sensor {
                flags |= ContactFlags::SENSOR_IS_A;
            }
        }
        let mixed = mixing.mix_bodies(ba, bb);
        contacts.create(Contact {
            body_a: a,
            body_b: b,
            id_a: ida,
            id_b: idb,
            proxy_a: ba.proxy.expect("live bodies have proxies"),
            proxy_b: bb.proxy.expect("live bodies have proxies"),
            manifold: ContactManifold::default(),
            impulses: Default::default(),
            cache: PairCache::EMPTY,
            friction: mixed.friction,
            restitution: mixed.restitution,
            solve_friction: mixed.friction,
            solve_restitution: mixed.restitution,
            tangent_velocity: Vec3A::ZERO,
            solve_normal: Vec3A::ZERO,
            rolling: mixing.mix_rolling(ba, bb),
            flags,
            alive: true,
            hit: ContactHit::default(),
        });
    }
}

/// Whether the filters let the live bodies in slots `a` and `b` collide: their motion
/// types, sensor flags, layers, group and mask bits, the exclusion list and the user's
/// pair filter. Asked of every new pair, and of existing ones when a body's filter
/// changes.
pub(crate) fn pair_allowed(
    bodies: &Bodies,
    exclusions: &ExclusionList,
    layers: &LayerTable,
    a: u32,
    b: u32,
) -> bool {
    let (ba, bb) = (&bodies.bodies[a as usize], &bodies.bodies[b as usize]);
    let sensor = ba.is_sensor || bb.is_sensor;
    motion_types_collide(ba.motion_type, bb.motion_type, sensor)
        && !(ba.is_sensor && bb.is_sensor)
        && layers.collides(ba.layer, bb.layer)
        && ba.filter.collides(&bb.filter)
        && !exclusions.contains(bodies.id_of(a), bodies.id_of(b))
}

/// The narrow phase: recomputes every live contact's manifold, in parallel.
pub(crate) fn update_contacts(
    jobs: &JobSystem,
    bodies: &Bodies,
    broad: &BroadPhase,
    mixing: &MaterialMixing,
    exclusions: &ExclusionList,
    contacts: &mut ContactManager,
    settings: &CollisionSettings,
) {
    // Only contacts with an awake body: sleeping islands cost nothing.
    contacts.build_active(bodies.awake().iter().map(|sim| sim.body));
    let ContactManager {
        contacts: slots,
        active,
        active_plan: plan,
        active_bounds: bounds,
        changes,
        ..
    } = contacts;
    plan.set(slots.len(), active.iter().map(|&id| id as usize))
        .expect("active contact ids are distinct slots");
    bounds.clear();
    bounds.extend((0..active.len()).step_by(CONTACT_BLOCK));
    bounds.push(active.len());
    let chunks = plan
        .chunks(slots, bounds)
        .expect("bounds cover the plan in order");
    let blocks = bounds.len() - 1;
    let changes = &mut changes.0;
    if changes.len() < blocks {
        changes.resize_with(blocks, Default::default);
    }
    for block in &mut changes[..] {
        let block = block
            .get_mut()
            .expect("no job panicked holding a block's changes");
        block.changed.clear();
        block.sleepers.clear();
        block.links.clear();
        block.solver.clear();
    }
    // A job captures its chunk and one shared reference: small enough to be stored inline
    // in the job, so spawning allocates nothing. (Its block's changes are found from the
    // chunk's first position, behind an uncontended lock, to stay within that size.)
    let modifier = exclusions.contact_modifier.as_ref();
    let shared = (
        bodies,
        broad,
        mixing,
        modifier,
        *settings,
        &**active,
        &changes[..],
    );
    let shared = &shared;
    jobs.scope(|s| {
        for mut chunk in chunks {
            s.spawn_labeled("narrow phase", move |_| {
                let (bodies, broad, mixing, modifier, settings, active, changes) = shared;
                let block = chunk.positions().start / CONTACT_BLOCK;
                let mut out = changes[block]
                    .lock()
                    .expect("no job panicked holding a block's changes");
                let mut manifold = ContactManifold::default();
                let positions = chunk.positions();
                for p in positions.clone() {
                    prefetch_ahead(bodies, broad, &mut chunk, p);
                    let c = chunk.get_mut(p);
                    update_contact(bodies, broad, mixing, *modifier, c, settings, &mut manifold);
                    let flags = c.flags;
                    if flags.intersects(
                        ContactFlags::DISJOINT | ContactFlags::STARTED | ContactFlags::STOPPED,
                    ) {
                        out.changed.push(ChangedContact {
                            position: p as u32,
                            id: active[p],
                            report: ContactReport::of(c),
                        });
                    }
                    if flags.contains(ContactFlags::TOUCHING)
                        && !flags.contains(ContactFlags::SENSOR)
                    {
                        let (a, b) = (
                            &bodies.bodies[c.body_a as usize],
                            &bodies.bodies[c.body_b as usize],
                        );
                        if a.set >= FIRST_SLEEPING_SET || b.set >= FIRST_SLEEPING_SET {
                            out.sleepers.push(active[p]);
                            continue;
                        }
                        if let (Some(a), Some(b)) = (a.island_index(), b.island_index()) {
                            out.links.push([a, b]);
                        }
                        if !c.manifold.points.is_empty() {
                            out.solver.push(SolverContact {
                                id: active[p],
                                bodies: [a.solver_index(), b.solver_index()],
                                rolling: c.rolling.rolling > 0.0 || c.rolling.spinning > 0.0,
                                points: c.manifold.points.len() as u8,
                            });
                        }
                    }
                }
            });
        }
    });
}

/// Asks for the records the narrow phase reads for the contacts a few positions after
/// `p`, in the order it reads them: the contact at `p + 8`, the body records and fat boxes
/// it names at `p + 4` (its lines asked for four contacts ago), their hot records at
/// `p + 2`. Active contacts lie scattered in memory, and each waited for its record and
/// then its bodies' in turn: this cut rain4k's single-threaded step by about 13 %.
fn prefetch_ahead(
    bodies: &Bodies,
    broad: &BroadPhase,
    chunk: &mut DisjointChunk<'_, Contact>,
    p: usize,
) {
    let end = chunk.positions().end;
    if p + 8 < end {
        prefetch::<_, 8>(&*chunk.get_mut(p + 8));
    }
    if p + 4 < end {
        let c = &*chunk.get_mut(p + 4);
        for (i, proxy) in [(c.body_a, c.proxy_a), (c.body_b, c.proxy_b)] {
            prefetch::<_, 2>(&bodies.bodies[i as usize]);
            broad.prefetch_proxy(proxy);
        }
    }
    if p + 2 < end {
        let c = &*chunk.get_mut(p + 2);
        prefetch::<_, 2>(bodies.sim_of(c.body_a));
        prefetch::<_, 2>(bodies.sim_of(c.body_b));
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "the narrow phase's shared inputs, each a separate part of the world"
)]
fn update_contact(
    bodies: &Bodies,
    broad: &BroadPhase,
    mixing: &MaterialMixing,
    modifier: Option<&ContactModifier>,
    c: &mut Contact,
    settings: &CollisionSettings,
    manifold: &mut ContactManifold,
) {
    let was_touching = c.flags.contains(ContactFlags::TOUCHING);
    let surfaces_touched = c.flags.contains(ContactFlags::SURFACES_TOUCH);
    // The gap at the start of the last step (the manifold is the last narrow phase's),
    // for a begin's approach speed: only a contact whose surfaces did not touch can begin,
    // so the touching majority skips the walk.
    let gap_before = if surfaces_touched {
        f32::INFINITY
    } else {
        c.manifold
            .points
            .iter()
            .fold(f32::INFINITY, |gap, p| gap.min(p.separation))
    };
    // Whether the solver pushed last step: the surfaces touched, gap or not (see
    // `contact::surfaces_touch`), even where the bodies have parted since.
    let pushed = c.impulses.iter().any(|i| i.max_normal > 0.0);
    c.flags
        .remove(ContactFlags::STARTED | ContactFlags::STOPPED);
    if !broad.fat_overlap(c.proxy_a, c.proxy_b) {
        c.flags.insert(ContactFlags::DISJOINT);
        // Bodies whose solver pushed them apart last step across a speculative gap, and
        // that are already out of reach (a fast bounce): they touched, and part in the
        // same step, so the contact reports its begin before its end.
        if !c.flags.contains(ContactFlags::SENSOR) && !surfaces_touched && pushed {
            c.flags
                .insert(ContactFlags::SURFACES_TOUCH | ContactFlags::STARTED);
            let (ba, bb) = (
                &bodies.bodies[c.body_a as usize],
                &bodies.bodies[c.body_b as usize],
            );
            let fall = relative_gravity(ba, bb, settings.gravity);
            let (sa, sb) = (bodies.sim_of(c.body_a), bodies.sim_of(c.body_b));
            c.hit = ContactHit::of(c, sa, sb, gap_before, fall);
        }
        return;
    }
    let (ba, bb) = (
        &bodies.bodies[c.body_a as usize],
        &bodies.bodies[c.body_b as usize],
    );
    // Contacts between two bodies that are not awake keep their state: nothing moved.
    if ba.set != AWAKE_SET && bb.set != AWAKE_SET {
        return;
    }
    let (sa, sb) = (bodies.sim_of(c.body_a), bodies.sim_of(c.body_b));
    let sensor = c.flags.contains(ContactFlags::SENSOR);
    // A collision the solver resolved last step before the surfaces met: its hit is
    // where the points were, before the new manifold replaces them.
    let fall = || relative_gravity(ba, bb, settings.gravity);
    let early_hit = (!sensor && !surfaces_touched && pushed)
        .then(|| ContactHit::of(c, sa, sb, gap_before, fall()));
    // B's pose in A's frame: if it barely changed since the manifold was computed, move
    // the manifold with the bodies instead of recomputing it (see `PairCache`).
    let rel = sa.transform.inverse().mul_isometry(&sb.transform);
    let mut touching = if !sensor
        && c.cache
            .matches(&rel, sa.transform.rotation, sb.transform.rotation)
    {
        let n = rotate(sa.transform.rotation, c.cache.normal);
        c.manifold.normal = n;
        for p in &mut c.manifold.points {
            let pa = sa.transform.transform_point(p.local_a);
            let pb = sb.transform.transform_point(p.local_b);
            p.separation = (pb - pa).dot(n);
        }
        !c.manifold.points.is_empty()
    } else {
        let margin = if sensor {
            0.0
        } else {
            speculative_margin((ba, sa), (bb, sb), settings)
        };
        manifold.clear();
        let touching = collide(
            &ba.shape,
            &sa.transform,
            &bb.shape,
            &sb.transform,
            margin,
            manifold,
        ) && !manifold.points.is_empty();
        if sensor {
            c.manifold.points.clear();
            c.manifold.normal = manifold.normal;
        } else {
            let parts_before = c.manifold.materials;
            c.update_manifold(manifold);
            // Touching another material's part of a mesh or compound: mix anew.
            if c.manifold.materials != parts_before {
                let mixed = mixing.mix_parts(ba, bb, c.manifold.materials);
                c.friction = mixed.friction;
                c.restitution = mixed.restitution;
            }
            c.cache = PairCache {
                position: rel.translation,
                rotation: rel.rotation,
                normal: rotate(sa.transform.rotation.inverse(), manifold.normal),
                valid: true,
                rotation_a: sa.transform.rotation,
                rotation_b: sb.transform.rotation,
            };
        }
        touching
    };
    if !sensor {
        // The user's contact modifier, every step while the contact has points.
        c.solve_friction = c.friction;
        c.solve_restitution = c.restitution;
        c.tangent_velocity = Vec3A::ZERO;
        c.solve_normal = c.manifold.normal;
        if touching && let Some(modify) = modifier {
            touching = hooks::modify_contact(modify, ba, bb, sa, sb, c);
        }
    }
    c.flags.set(ContactFlags::TOUCHING, touching);
    // Sensors report overlap; other contacts begin and end with their surfaces' touch,
    // not with speculative points (see `ContactFlags::SURFACES_TOUCH`).
    let (now, before) = if sensor {
        (touching, was_touching)
    } else {
        let surfaces_touch = (touching && contact::surfaces_touch(c)) || pushed;
        c.flags.set(ContactFlags::SURFACES_TOUCH, surfaces_touch);
        (surfaces_touch, surfaces_touched)
    };
    if now && !before {
        c.flags.insert(ContactFlags::STARTED);
        if !sensor {
            c.hit = early_hit.unwrap_or_else(|| ContactHit::of(c, sa, sb, gap_before, fall()));
        }
    } else if !now && before {
        c.flags.insert(ContactFlags::STOPPED);
    }
}

/// How gravity accelerates body B relative to body A (only dynamic bodies fall).
fn relative_gravity(a: &Body, b: &Body, gravity: Vec3A) -> Vec3A {
    let scale = |body: &Body| {
        if body.motion_type == MotionType::Dynamic {
            body.gravity_scale
        } else {
            0.0
        }
    };
    gravity * (scale(b) - scale(a))
}

/// The serial pass after the narrow phase: destroys disjoint contacts and reports events.
pub(crate) fn finish_contacts(
    contacts: &mut ContactManager,
    settings: &CollisionSettings,
    events: &mut Events,
) {
    if !settings.report_persist {
        finish_changed_contacts(contacts, events);
        return;
    }
    // Persist events need every touching contact: visit them all.
    let mut active = std::mem::take(&mut contacts.active);
    active.retain(|&id| {
        let c = &contacts.contacts[id as usize];
        debug_assert!(c.alive, "active contacts are live");
        if c.flags.contains(ContactFlags::DISJOINT) {
            report_parted(ContactReport::of(c), events);
            remove_contact(contacts, id, events);
            return false;
        }
        let sensor = c.flags.contains(ContactFlags::SENSOR);
        let kind = if c.flags.contains(ContactFlags::STARTED) {
            Some(ContactEventKind::Begin)
        } else if c.flags.contains(ContactFlags::STOPPED) {
            Some(ContactEventKind::End)
        } else if settings.report_persist
            && !sensor
            && c.flags.contains(ContactFlags::SURFACES_TOUCH)
        {
            Some(ContactEventKind::Persist)
        } else {
            None
        };
        if let Some(kind) = kind {
            push_event(ContactReport::of(c), kind, events);
        }
        true
    });
    contacts.active = active;
}

/// `finish_contacts` without persist events: only the contacts the narrow phase saw
/// change, in `active` order (so contacts are destroyed, and their slots freed, in the
/// same order as a pass over every contact would).
fn finish_changed_contacts(contacts: &mut ContactManager, events: &mut Events) {
    let mut changes = std::mem::take(&mut contacts.changes);
    let mut pruned = std::mem::take(&mut contacts.pruned);
    pruned.clear();
    for change in changes
        .0
        .iter_mut()
        .flat_map(|b| &BlockChanges::get(b).changed)
    {
        let flags = change.report.flags;
        if flags.contains(ContactFlags::DISJOINT) {
            report_parted(change.report, events);
            report_removed_contact(change.report, events);
            contacts.destroy(change.id);
            pruned.push(change.position);
        } else if flags.contains(ContactFlags::STARTED) {
            push_event(change.report, ContactEventKind::Begin, events);
        } else if flags.contains(ContactFlags::STOPPED) {
            push_event(change.report, ContactEventKind::End, events);
        }
    }
    if !pruned.is_empty() {
        let (mut next, mut position) = (0, 0u32);
        contacts.active.retain(|_| {
            let keep = pruned.get(next) != Some(&position);
            next += usize::from(!keep);
            position += 1;
            keep
        });
    }
    contacts.changes = changes;
    contacts.pruned = pruned;
}

fn push_event(c: ContactReport, kind: ContactEventKind, events: &mut Events) {
    if c.flags.contains(ContactFlags::SENSOR) {
        if kind == ContactEventKind::Persist {
            return;
        }
        events
            .sensors
            .push(sensor_event(c, kind == ContactEventKind::Begin));
    } else {
        let hit = if kind == ContactEventKind::Begin {
            c.hit
        } else {
            ContactHit::default()
        };
        events.contacts.push(ContactEvent {
            kind,
            body_a: c.id_a,
            body_b: c.id_b,
            point: hit.point.into(),
            normal: hit.normal.into(),
            approach_speed: hit.approach_speed,
        });
    }
}

fn sensor_event(c: ContactReport, begin: bool) -> SensorEvent {
    let (sensor, visitor) = if c.flags.contains(ContactFlags::SENSOR_IS_A) {
        (c.id_a, c.id_b)
    } else {
        (c.id_b, c.id_a)
    };
    SensorEvent {
        begin,
        sensor,
        visitor,
    }
}

/// Destroys live contact `id`, reporting its end if it was touching.
pub(crate) fn remove_contact(contacts: &mut ContactManager, id: u32, events: &mut Events) {
    report_removed_contact(ContactReport::of(&contacts.contacts[id as usize]), events);
    contacts.destroy(id);
}

/// Reports the begin of a contact the narrow phase found disjoint in the step its
/// surfaces touched (see `update_contact`); its end follows from `remove_contact`.
fn report_parted(c: ContactReport, events: &mut Events) {
    if c.flags.contains(ContactFlags::STARTED) && !c.flags.contains(ContactFlags::SENSOR) {
        push_event(c, ContactEventKind::Begin, events);
    }
}

/// Reports the end of a removed contact that was touching.
fn report_removed_contact(c: ContactReport, events: &mut Events) {
    if c.flags.contains(ContactFlags::SENSOR) {
        if c.flags.contains(ContactFlags::TOUCHING) {
            events.sensors.push(sensor_event(c, false));
        }
    } else if c.flags.contains(ContactFlags::SURFACES_TOUCH) {
        events.contacts.push(ContactEvent::end(c.id_a, c.id_b));
    }
}
