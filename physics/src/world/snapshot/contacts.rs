//! Contacts in the image: every slot in id order (the narrow phase, solver and events walk
//! them in that order), each live one with its manifold, feature ids, warm-start impulses
//! and flags, then the free list in order (the next contact ids depend on it).
//!
//! The pair map and the per-body contact lists are not saved: they are rebuilt from the
//! live contacts (the map is only looked up, the lists are only read through the sorted
//! active list). A destroyed slot keeps nothing: `ContactManager::create` overwrites
//! all of it and nothing reads it before.

use arrayvec::ArrayVec;

use crate::body::Bodies;
use crate::collision::broad_phase::{BroadPhaseProxy, ProxyKind};
use crate::collision::narrow_phase::{ContactManifold, ContactPoint, MAX_MANIFOLD_POINTS};
use crate::contact::{
    Contact, ContactFlags, ContactHit, ContactImpulse, ContactManager, PairCache, pair_key,
};
use crate::geometry::dynamic_tree::{NULL, ProxyId};
use crate::math::Vec3A;

use super::SnapshotError;
use super::bodies::{
    distinct, read_id, read_indices, read_proxy, write_id, write_indices, write_proxy,
};
use super::wire::{Reader, Writer, check};

pub(super) fn write_contacts(w: &mut Writer, contacts: &ContactManager) {
    let ContactManager {
        contacts,
        free,
        // Rebuilt from the live contacts on restore (lookups only, never iterated).
        pairs: _,
        // Rebuilt from the live contacts on restore; read only through `active`, which
        // is sorted, so their order cannot reach results.
        body_contacts: _,
        // Rebuilt by every step before it is read.
        active: _,
        ends: _,
        awake_bits: _,
        active_plan: _,
        active_bounds: _,
        changes: _,
        pruned: _,
    } = contacts;
    w.count(contacts.len());
    for c in contacts {
        w.bool(c.alive);
        if c.alive {
            write_contact(w, c);
        }
    }
    write_indices(w, free);
}

pub(super) fn read_contacts(
    r: &mut Reader<'_>,
    bodies: &Bodies,
) -> Result<ContactManager, SnapshotError> {
    let n = r.count(1)?;
    let mut m = ContactManager::default();
    m.contacts.reserve(n);
    for id in 0..n as u32 {
        if !r.bool()? {
            m.contacts.push(dead_contact());
            continue;
        }
        let c = read_contact(r, bodies)?;
        check(
            m.pairs.insert(pair_key(c.body_a, c.body_b), id).is_none(),
            "two contacts for one pair of bodies",
        )?;
        m.contacts.push(c);
        m.link(id);
    }
    m.free = read_indices(r)?;
    check(
        m.free.len() == n - m.pairs.len()
            && distinct(&m.free, n)
            && m.free.iter().all(|&i| !m.contacts[i as usize].alive),
        "the free contact list is not the destroyed contacts",
    )?;
    Ok(m)
}

fn write_contact(w: &mut Writer, c: &Contact) {
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
        alive: _,
        // Read only by the events of the step that set it.
        hit: _,
    } = c;
    w.u32(*body_a);
    w.u32(*body_b);
    write_id(w, *id_a);
    write_id(w, *id_b);
    write_proxy(w, *proxy_a);
    write_proxy(w, *proxy_b);
    let ContactManifold {
        normal,
        points,
        materials,
    } = manifold;
    w.vec3(*normal);
    for m in materials {
        w.bool(m.is_some());
        w.u32(m.unwrap_or(0));
    }
    w.count(points.len());
    for p in points {
        let ContactPoint {
            local_a,
            local_b,
            separation,
            feature,
        } = p;
        w.vec3(*local_a);
        w.vec3(*local_b);
        w.f32(*separation);
        w.u32(*feature);
    }
    w.count(impulses.len());
    for i in impulses {
        let ContactImpulse {
            normal,
            tangent1,
            tangent2,
            max_normal,
            approach,
            relative_velocity,
        } = i;
        for x in [
            *normal,
            *tangent1,
            *tangent2,
            *max_normal,
            *approach,
            *relative_velocity,
        ] {
            w.f32(x);
        }
    }
    w.f32(*friction);
    w.f32(*restitution);
    w.f32(*solve_friction);
    w.f32(*solve_restitution);
    w.vec3(*tangent_velocity);
    w.vec3(*solve_normal);
    w.f32(rolling.rolling);
    w.f32(rolling.spinning);
    w.u8(flags.bits());
    let PairCache {
        position,
        rotation,
        normal,
        valid,
        rotation_a,
        rotation_b,
    } = cache;
    w.vec3(*position);
    w.quat(*rotation);
    w.vec3(*normal);
    w.bool(*valid);
    w.quat(*rotation_a);
    w.quat(*rotation_b);
}

/// Reads a live contact, checking that it names two live bodies (lower slot first) by
/// their current ids and proxies. Manifold and impulse values are the engine's own
/// intermediate results and are taken bit for bit.
fn read_contact(r: &mut Reader<'_>, bodies: &Bodies) -> Result<Contact, SnapshotError> {
    let body_a = r.u32()?;
    let body_b = r.u32()?;
    let id_a = read_id(r)?;
    let id_b = read_id(r)?;
    let proxy_a = read_proxy(r)?;
    let proxy_b = read_proxy(r)?;
    let names = |slot: u32, id: crate::body::BodyId, proxy: BroadPhaseProxy| {
        id.index() == slot && bodies.get(id).is_ok_and(|b| b.proxy == Some(proxy))
    };
    check(
        body_a < body_b && names(body_a, id_a, proxy_a) && names(body_b, id_b, proxy_b),
        "a contact names bodies that are not there",
    )?;
    let normal = r.vec3()?;
    let mut materials = [None, None];
    for m in &mut materials {
        let some = r.bool()?;
        let id = r.u32()?;
        check(
            some || id == 0,
            "a manifold's absent part material has an id",
        )?;
        *m = some.then_some(id);
    }
    let n = r.count(28)?;
    check(n <= MAX_MANIFOLD_POINTS, "a manifold has too many points")?;
    let mut points = ArrayVec::new();
    for _ in 0..n {
        points.push(ContactPoint {
            local_a: r.vec3()?,
            local_b: r.vec3()?,
            separation: r.f32()?,
            feature: r.u32()?,
        });
    }
    let n = r.count(24)?;
    check(n <= MAX_MANIFOLD_POINTS, "a contact has too many impulses")?;
    let mut impulses = ArrayVec::new();
    for _ in 0..n {
        impulses.push(ContactImpulse {
            normal: r.f32()?,
            tangent1: r.f32()?,
            tangent2: r.f32()?,
            max_normal: r.f32()?,
            approach: r.f32()?,
            relative_velocity: r.f32()?,
        });
    }
    let friction = r.f32()?;
    let restitution = r.f32()?;
    let solve_friction = r.f32()?;
    let solve_restitution = r.f32()?;
    let tangent_velocity = r.vec3()?;
    let solve_normal = r.vec3()?;
    let rolling = crate::material::RollingMaterial {
        rolling: r.f32()?,
        spinning: r.f32()?,
    };
    check(
        rolling.is_valid(),
        "a contact's rolling values are out of range",
    )?;
    check(
        [friction, solve_friction]
            .iter()
            .all(|f| f.is_finite() && *f >= 0.0)
            && [restitution, solve_restitution]
                .iter()
                .all(|e| (0.0..=1.0).contains(e))
            && tangent_velocity.is_finite()
            && solve_normal.is_finite(),
        "a contact's material values are out of range",
    )?;
    let flags =
        ContactFlags::from_bits(r.u8()?).ok_or(SnapshotError::Corrupt("unknown contact flags"))?;
    let cache = PairCache {
        position: r.vec3()?,
        rotation: r.quat()?,
        normal: r.vec3()?,
        valid: r.bool()?,
        rotation_a: r.quat()?,
        rotation_b: r.quat()?,
    };
    Ok(Contact {
        body_a,
        body_b,
        id_a,
        id_b,
        proxy_a,
        proxy_b,
        manifold: ContactManifold {
            normal,
            points,
            materials,
        },
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
        alive: true,
        hit: ContactHit::default(),
    })
}

/// A destroyed slot (its content is never read; see the module header).
pub(crate) fn dead_contact() -> Contact {
    let nowhere = BroadPhaseProxy {
        kind: ProxyKind::Static,
        id: ProxyId(NULL),
    };
    let nobody = crate::body::BodyId::new(NULL, 0);
    Contact {
        body_a: NULL,
        body_b: NULL,
        id_a: nobody,
        id_b: nobody,
        proxy_a: nowhere,
        proxy_b: nowhere,
        manifold: ContactManifold {
            normal: Vec3A::ZERO,
            points: ArrayVec::new(),
            materials: [None, None],
        },
        impulses: ArrayVec::new(),
        hit: ContactHit::default(),
        friction: 0.0,
        restitution: 0.0,
        solve_friction: 0.0,
        solve_restitution: 0.0,
        tangent_velocity: Vec3A::ZERO,
        solve_normal: Vec3A::ZERO,
        rolling: Default::default(),
        flags: ContactFlags::empty(),
        cache: PairCache::EMPTY,
        alive: false,
    }
}
