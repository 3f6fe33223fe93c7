//! Projecting a character's motion on the planes it has hit during one move.
//!
//! Each hit plane is one of three kinds, by its normal's angle to `up`:
//! - **ground** (within the maximum slope): the motion is projected on it along `up`,
//!   which keeps its horizontal part (walking up a ramp at the commanded speed) and
//!   cancels gravity's push into it (standing on a slope without creeping);
//! - **steep** (facing up, steeper than the maximum slope): its horizontal part is
//!   blocked as by a vertical wall through the same line, and a downward part slides
//!   down the plane (a character cannot walk up it and slides off it);
//! - **wall or ceiling** (facing sideways or down): the motion into it is removed.
//!
//! With several planes, the projection on the newest one must also keep out of the
//! others; if not, the motion follows the crease of the two planes, and with a third
//! plane in the way it stops. A result that points back against the commanded motion
//! stops too: that is what makes a character wedged in a corner or a V stand still
//! instead of bouncing between the planes.

use crate::math::Vec3;

/// Planes remembered during one move; a fifth hit stops the move.
pub(crate) const MAX_PLANES: usize = 4;

/// Motion into a plane below this (m) is rounding, not a violation.
const INTO_EPS: f32 = 1e-6;

/// How one hit plane constrains the motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Plane {
    /// The surface's unit normal (pointing at the character).
    pub normal: Vec3,
    /// Whether it is walkable ground.
    pub ground: bool,
}

/// The part of `v` along `up` removed: `v`'s horizontal part.
pub(crate) fn horizontal(v: Vec3, up: Vec3) -> Vec3 {
    v - up * v.dot(up)
}

/// Plane classification for normal `n`.
pub(crate) fn plane(n: Vec3, up: Vec3, cos_max_slope: f32) -> Plane {
    Plane {
        normal: n,
        ground: n.dot(up) >= cos_max_slope,
    }
}

/// `r` projected on one plane (see the module docs); unchanged when it leaves the plane.
pub(crate) fn project_one(r: Vec3, p: &Plane, up: Vec3) -> Vec3 {
    let n = p.normal;
    let into = r.dot(n);
    if into >= 0.0 {
        return r;
    }
    let nu = n.dot(up);
    if p.ground {
        // Along `up` onto the plane: `nu` is at least cos(max slope) > 0.
        return r - up * (into / nu);
    }
    if nu > 0.0 {
        // Steep: block the horizontal part as a wall, let a downward part slide.
        let rh = horizontal(r, up);
        let rv = up * r.dot(up);
        let wall = horizontal(n, up).normalize_or_zero();
        let rh = rh - wall * rh.dot(wall).min(0.0);
        let rv = if rv.dot(n) < 0.0 {
            rv - n * rv.dot(n)
        } else {
            rv
        };
        return rh + rv;
    }
    r - n * into
}

/// Whether `r` keeps out of plane `p` (within rounding).
fn keeps_out(r: Vec3, p: &Plane) -> bool {
    r.dot(p.normal) >= -INTO_EPS
}

/// The motion `r` after hitting `new` with `planes` hit before in this move; `commanded`
/// is the move's original motion. Adds `new` to `planes`.
pub(crate) fn project(
    r: Vec3,
    new: Plane,
    planes: &mut arrayvec::ArrayVec<Plane, MAX_PLANES>,
    commanded: Vec3,
    up: Vec3,
) -> Vec3 {
    if planes.is_full() {
        return Vec3::ZERO;
    }
    let mut out = project_one(r, &new, up);
    if let Some(other) = planes.iter().find(|p| !keeps_out(out, p)) {
        // Along the crease of the two planes.
        let crease = new.normal.cross(other.normal).normalize_or_zero();
        out = crease * r.dot(crease);
        let steep = !new.ground || !other.ground;
        if steep && out.dot(up) > r.dot(up).max(0.0) {
            // A crease with a steep side is not a way up.
            out = horizontal(out, up);
        }
        if planes.iter().any(|p| !keeps_out(out, p)) || !keeps_out(out, &new) {
            out = Vec3::ZERO;
        }
    }
    planes.push(new);
    if out.dot(commanded) <= 0.0 {
        return Vec3::ZERO;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const COS45: f32 = std::f32::consts::FRAC_1_SQRT_2;

    fn slope(deg: f32) -> Vec3 {
        let a = deg.to_radians();
        // Rising towards +X: the normal leans to -X.
        Vec3::new(-a.sin(), a.cos(), 0.0)
    }

    #[test]
    fn ground_keeps_the_horizontal_part_and_cancels_gravity() {
        let p = plane(slope(30.0), Vec3::Y, COS45);
        assert!(p.ground);
        let walk = project_one(Vec3::new(1.0, 0.0, 0.0), &p, Vec3::Y);
        assert!((walk.x - 1.0).abs() < 1e-6, "horizontal speed kept: {walk}");
        assert!(
            (walk.y - 30f32.to_radians().tan()).abs() < 1e-5,
            "up the ramp: {walk}"
        );
        let fall = project_one(Vec3::new(0.0, -1.0, 0.0), &p, Vec3::Y);
        assert!(
            fall.length() < 1e-6,
            "gravity does nothing on ground: {fall}"
        );
    }

    #[test]
    fn steep_blocks_walking_and_slides_down() {
        let p = plane(slope(50.0), Vec3::Y, COS45);
        assert!(!p.ground);
        let walk = project_one(Vec3::new(1.0, 0.0, 0.0), &p, Vec3::Y);
        assert!(walk.length() < 1e-6, "cannot walk into it: {walk}");
        let fall = project_one(Vec3::new(0.0, -1.0, 0.0), &p, Vec3::Y);
        assert!(fall.y < 0.0 && fall.x < 0.0, "slides down and away: {fall}");
        assert!(fall.dot(p.normal).abs() < 1e-6);
    }

    #[test]
    fn two_walls_give_the_crease_and_a_v_stops_gravity() {
        let mut planes = arrayvec::ArrayVec::new();
        let commanded = Vec3::new(1.0, 0.0, 1.0);
        let a = plane(Vec3::new(-1.0, 0.0, 0.0), Vec3::Y, COS45);
        let b = plane(Vec3::new(0.0, 0.0, -1.0), Vec3::Y, COS45);
        let r = project(commanded, a, &mut planes, commanded, Vec3::Y);
        assert!((r - Vec3::new(0.0, 0.0, 1.0)).length() < 1e-6);
        let r = project(r, b, &mut planes, commanded, Vec3::Y);
        assert!(r.length() < 1e-6, "a corner stops it: {r}");
        // A V of two 60° slopes facing each other: gravity finds no way down.
        let mut planes = arrayvec::ArrayVec::new();
        let g = Vec3::new(0.0, -1.0, 0.0);
        let left = plane(slope(60.0), Vec3::Y, COS45);
        let right = plane(
            Vec3::new(-slope(60.0).x, slope(60.0).y, 0.0),
            Vec3::Y,
            COS45,
        );
        let r = project(g, left, &mut planes, g, Vec3::Y);
        let r = project(r, right, &mut planes, g, Vec3::Y);
        assert!(r.length() < 1e-6, "{r}");
    }
}
