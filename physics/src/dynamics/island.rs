//! Islands and sleeping.
//!
//! An island is a set of dynamic bodies connected by touching contacts and enabled
//! joints. Static bodies do not connect islands: two boxes resting on the same ground are
//! two islands. Islands are recomputed every step from the awake bodies with a union-find
//! over the touching contacts in id order (cheap, and deterministic: every island's
//! representative is its lowest awake index).
//!
//! A body whose speed stays below the sleep thresholds accumulates sleep time; an island
//! whose every body has slept for `time_to_sleep` (and allows sleep) falls asleep: its
//! bodies move from the awake set to a sleeping set of their own, where the step no longer
//! visits them. It wakes, all at once, when an awake body starts touching it, when the user
//! moves, pushes or sets the velocity of one of its bodies, or when a body it rests on is
//! removed.

use crate::body::{AWAKE_SET, Bodies, FIRST_SLEEPING_SET, MotionType};
use crate::contact::{ContactFlags, ContactManager};
use crate::joint::Joints;
use crate::math::Vec3A;

/// Sleep settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SleepSettings {
    /// Whether bodies may sleep at all.
    pub enabled: bool,
    /// Linear speed below which a body counts as resting (m/s).
    pub linear_threshold: f32,
    /// Angular speed below which a body counts as resting (rad/s).
    pub angular_threshold: f32,
    /// Seconds an island must rest before it sleeps.
    pub time_to_sleep: f32,
}

impl Default for SleepSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            linear_threshold: 0.05,
            angular_threshold: 2.0 * std::f32::consts::PI / 180.0 * 3.0,
            time_to_sleep: 0.5,
        }
    }
}

/// A body falling asleep or waking up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SleepEvent {
    /// The body.
    pub body: crate::body::BodyId,
    /// True when it fell asleep, false when it woke.
    pub asleep: bool,
}

/// Union-find scratch, reused between steps.
#[derive(Clone, Debug, Default)]
pub(crate) struct IslandScratch {
    parent: Vec<u32>,
    min_sleep: Vec<f32>,
    members: Vec<(u32, u32)>,
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        // The lower index represents: independent of the order unions happen in.
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
    }
}

/// Joins the islands of bodies `a` and `b` (body slots) when both are awake and neither
/// is fixed.
fn link(bodies: &Bodies, parent: &mut [u32], a: u32, b: u32) {
    let (a, b) = (&bodies.bodies[a as usize], &bodies.bodies[b as usize]);
    if let (Some(a), Some(b)) = (a.island_index(), b.island_index()) {
        union(parent, a, b);
    }
}

/// Updates sleep timers, groups awake bodies into islands and puts resting islands to
/// sleep. Returns the number of bodies put to sleep.
pub(crate) fn update_sleep(
    bodies: &mut Bodies,
    contacts: &ContactManager,
    joints: &Joints,
    settings: &SleepSettings,
    dt: f32,
    s: &mut IslandScratch,
    events: &mut Vec<SleepEvent>,
) -> usize {
    if !settings.enabled {
        return 0;
    }
    let n = bodies.awake().len();
    s.parent.clear();
    s.parent.extend(0..n as u32);
    s.min_sleep.clear();
    s.min_sleep.resize(n, f32::INFINITY);

    // Sleep timers.
    let (lin2, ang2) = (
        settings.linear_threshold * settings.linear_threshold,
        settings.angular_threshold * settings.angular_threshold,
    );
    // An island sleeps once every member has rested `time_to_sleep`: while no body has,
    // none can, and the union-find below is skipped (a scene in motion pays one pass).
    let mut any_ready = false;
    for i in 0..n {
        let sim = bodies.awake()[i];
        let body = &mut bodies.bodies[sim.body as usize];
        let resting = body.motion_type == MotionType::Dynamic
            && body.allow_sleep
            && sim.linear_velocity.length_squared() < lin2
            && sim.angular_velocity.length_squared() < ang2;
        body.sleep_time = if resting { body.sleep_time + dt } else { 0.0 };
        // Kinematic bodies that move keep whatever they touch awake.
        if body.motion_type == MotionType::Kinematic
            && (sim.linear_velocity != Vec3A::ZERO || sim.angular_velocity != Vec3A::ZERO)
        {
            body.sleep_time = 0.0;
        }
        any_ready |= body.sleep_time >= settings.time_to_sleep;
    }
    if !any_ready {
        return 0;
    }

    // Islands over touching contacts between awake, non-static bodies: the links the
    // narrow phase listed (bodies keep their awake index through the step: the step only
    // wakes bodies, which join at the end), then the contacts that touched a sleeping
    // body then, read now (their body may have woken since).
    for block in contacts.changes.read() {
        for &[a, b] in &block.links {
            union(&mut s.parent, a, b);
        }
        for &id in &block.sleepers {
            let c = &contacts.contacts[id as usize];
            if !c.alive {
                continue;
            }
            link(bodies, &mut s.parent, c.body_a, c.body_b);
        }
    }
    // A joint keeps its two bodies in one island (they sleep and wake together).
    for j in joints.joints.iter().filter(|j| j.alive && j.enabled) {
        let Some(ja) = j.body_a else { continue };
        link(bodies, &mut s.parent, ja, j.body_b);
    }
    for i in 0..n as u32 {
        let r = find(&mut s.parent, i) as usize;
        let body = &bodies.bodies[bodies.awake()[i as usize].body as usize];
        let t = if body.motion_type == MotionType::Kinematic && body.sleep_time == 0.0 {
            0.0
        } else {
            body.sleep_time
        };
        s.min_sleep[r] = s.min_sleep[r].min(t);
    }

    // Islands that rested long enough, by representative (= lowest awake index).
    s.members.clear();
    for i in 0..n as u32 {
        let r = find(&mut s.parent, i);
        if s.min_sleep[r as usize] >= settings.time_to_sleep {
            s.members.push((r, bodies.awake()[i as usize].body));
        }
    }
    if s.members.is_empty() {
        return 0;
    }
    s.members.sort_unstable();
    let mut slept = 0;
    let mut k = 0;
    while k < s.members.len() {
        let root = s.members[k].0;
        let set = bodies.new_sleeping_set();
        while k < s.members.len() && s.members[k].0 == root {
            let body = s.members[k].1;
            bodies.move_to_set(body, set);
            let sim =
                &mut bodies.sets[set as usize].sims[bodies.bodies[body as usize].local as usize];
            sim.linear_velocity = Vec3A::ZERO;
            sim.angular_velocity = Vec3A::ZERO;
            events.push(SleepEvent {
                body: bodies.id_of(body),
                asleep: true,
            });
            slept += 1;
            k += 1;
        }
    }
    slept
}

/// Wakes the sleeping set `set` (if it is one): every body in it returns to the awake set.
pub(crate) fn wake_set(bodies: &mut Bodies, set: u32, events: &mut Vec<SleepEvent>) {
    if set < FIRST_SLEEPING_SET {
        return;
    }
    while let Some(sim) = bodies.sets[set as usize].sims.last().copied() {
        bodies.move_to_set(sim.body, AWAKE_SET);
        bodies.bodies[sim.body as usize].sleep_time = 0.0;
        events.push(SleepEvent {
            body: bodies.id_of(sim.body),
            asleep: false,
        });
    }
    bodies.free_sleeping_set(set);
}

/// Wakes the island of the body in slot `index`, if it sleeps.
pub(crate) fn wake_body(bodies: &mut Bodies, index: u32, events: &mut Vec<SleepEvent>) {
    let set = bodies.bodies[index as usize].set;
    wake_set(bodies, set, events);
    if set == AWAKE_SET {
        bodies.bodies[index as usize].sleep_time = 0.0;
    }
}

/// Wakes sleeping islands touched by an awake body this step (new touching contacts
/// between an awake and a sleeping body). When it wakes any, the contacts of the woken
/// bodies join the active list, so this step's solver holds the woken piles up.
pub(crate) fn wake_touched(
    bodies: &mut Bodies,
    contacts: &mut ContactManager,
    events: &mut Vec<SleepEvent>,
) {
    let before = events.len();
    // Only the touching contacts with a sleeping body that the narrow phase listed.
    let mut changes = std::mem::take(&mut contacts.changes);
    for &id in changes
        .0
        .iter_mut()
        .map(crate::contact::BlockChanges::get)
        .flat_map(|b| &b.sleepers)
    {
        let c = &contacts.contacts[id as usize];
        if !c.alive
            || !c.flags.contains(ContactFlags::TOUCHING)
            || c.flags.contains(ContactFlags::SENSOR)
        {
            continue;
        }
        let (sa, sb) = (
            bodies.bodies[c.body_a as usize].set,
            bodies.bodies[c.body_b as usize].set,
        );
        let awake_mover = |i: u32| {
            let b = &bodies.bodies[i as usize];
            b.set == AWAKE_SET && b.motion_type != MotionType::Fixed
        };
        if sa >= FIRST_SLEEPING_SET && awake_mover(c.body_b) {
            wake_set(bodies, sa, events);
        } else if sb >= FIRST_SLEEPING_SET && awake_mover(c.body_a) {
            wake_set(bodies, sb, events);
        }
    }
    contacts.changes = changes;
    if events.len() > before {
        contacts.build_active(bodies.awake().iter().map(|sim| sim.body));
    }
}

#[cfg(test)]
mod tests {
    use joule_jobs::JobSystem;

    use crate::body::BodyDesc;
    use crate::math::Vec3;
    use crate::shape::Shape;
    use crate::world::{World, WorldDesc};

    #[test]
    fn removing_the_last_body_of_a_sleeping_island_frees_its_set() {
        // A box falls asleep alone on the ground (its island is a set of its own) and is
        // removed, fifty times: the same set is reused each time, so the set list stays
        // at its size after the first round.
        let mut w = World::new(WorldDesc::default(), JobSystem::new(0).unwrap());
        w.create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(10.0, 0.5, 10.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        ))
        .unwrap();
        let mut sizes = Vec::new();
        for _ in 0..50 {
            let b = w
                .create_body(&BodyDesc::dynamic(
                    Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                    Vec3::new(0.0, 0.5, 0.0),
                ))
                .unwrap();
            let mut steps = 0;
            while !w.is_sleeping(b).unwrap() {
                w.step(1.0 / 60.0);
                steps += 1;
                assert!(steps < 600, "the box falls asleep");
            }
            w.remove_body(b).unwrap();
            sizes.push(w.bodies.sets.len());
        }
        assert!(
            sizes.iter().all(|&n| n == sizes[0]),
            "set list grew: {sizes:?}"
        );
        assert_eq!(w.bodies.free_sets.len(), 1, "the freed set is in the pool");
    }

    #[test]
    fn sleeping_islands_leave_the_active_contact_list() {
        // Twenty 3-box stacks fall asleep: no contact is active, so no step pass visits
        // any. Waking one stack brings back exactly its three contacts (ground-box and
        // two box-box), in id order.
        let mut w = World::new(WorldDesc::default(), JobSystem::new(0).unwrap());
        w.create_body(&BodyDesc::fixed(
            Shape::cuboid(Vec3::new(100.0, 0.5, 100.0)).unwrap(),
            Vec3::new(0.0, -0.5, 0.0),
        ))
        .unwrap();
        let mut bottoms = Vec::new();
        for k in 0..20 {
            for level in 0..3 {
                let id = w
                    .create_body(&BodyDesc::dynamic(
                        Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                        Vec3::new(k as f32 * 3.0 - 30.0, 0.5 + level as f32, 0.0),
                    ))
                    .unwrap();
                if level == 0 {
                    bottoms.push(id);
                }
            }
        }
        for _ in 0..120 {
            w.step(1.0 / 60.0);
        }
        assert_eq!(w.awake_body_count(), 0, "every stack sleeps");
        w.step(1.0 / 60.0);
        assert_eq!(w.contact_count(), 60, "contacts are kept while asleep");
        assert!(w.contacts.active.is_empty(), "no contact is visited");
        w.wake_up(bottoms[7]).unwrap();
        w.step(1.0 / 60.0);
        let active = w.contacts.active.clone();
        assert_eq!(active.len(), 3, "the woken stack's contacts: {active:?}");
        assert!(active.windows(2).all(|p| p[0] < p[1]), "in id order");
    }
}
