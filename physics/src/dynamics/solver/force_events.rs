//! Contact force events: after the solve, the contacts whose bodies asked for them
//! (a finite contact force threshold) report the step's total impulses when the average
//! normal force passed the threshold.
//!
//! The totals are tallied by the passes only for the contacts that report (see
//! [`ConstraintPoint::normal_tally`](super::contact::ConstraintPoint::normal_tally)), so
//! a world where no body has a threshold pays nothing but one flag test per bundle.

use super::contact::tangent_basis;
use super::*;
use crate::events::ContactForceEvent;
use crate::math::Vec3;

/// Appends a force event for every reporting contact whose average normal force over the
/// step `dt` exceeded its threshold, in constraint order (the caller sorts them).
pub(crate) fn force_events(
    contacts: &ContactManager,
    s: &SolverScratch,
    dt: f32,
    out: &mut Vec<ContactForceEvent>,
) {
    let bundled = s
        .colors
        .iter()
        .flat_map(|w| &w.bundles)
        .flat_map(|b| b.step_totals());
    for (id, threshold, points) in bundled {
        push(contacts, id, threshold, points, dt, out);
    }
    for c in &s.overflow {
        if c.force_threshold.is_finite() {
            let points = c.points.iter().map(|p| p.step_totals());
            push(contacts, c.contact, c.force_threshold, points, dt, out);
        }
    }
}

fn push(
    contacts: &ContactManager,
    id: u32,
    threshold: f32,
    points: impl Iterator<Item = (f32, [f32; 2])>,
    dt: f32,
    out: &mut Vec<ContactForceEvent>,
) {
    let (mut normal, mut t1, mut t2) = (0.0f32, 0.0f32, 0.0f32);
    for (n, [a, b]) in points {
        normal += n;
        t1 += a;
        t2 += b;
    }
    let force = normal / dt;
    if force <= threshold {
        return;
    }
    let c = &contacts.contacts[id as usize];
    let n = c.solve_normal;
    let [u, v] = tangent_basis(n);
    out.push(ContactForceEvent {
        body_a: c.id_a,
        body_b: c.id_b,
        normal: Vec3::from(n),
        normal_impulse: normal,
        friction_impulse: Vec3::from(u * t1 + v * t2),
        normal_force: force,
    });
}
