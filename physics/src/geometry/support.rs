//! The convex-shape interface the narrow phase works on.
//!
//! Every convex shape is a "core" shape shrunk by a convex radius, swept by a sphere of
//! that radius (Jolt's convex radius, seed 004): spheres and capsules are a point or a
//! segment with radius, boxes and hulls use a small radius so GJK works on the rounded
//! core and contacts stay smooth. GJK and EPA only ever ask for support points, and face
//! clipping asks for the face most aligned with a direction, so any shape that answers
//! these two questions (in its local space) can collide with any other.

use arrayvec::ArrayVec;

use crate::math::Vec3A;

/// Most vertices a support face may have (a hull face is reduced to this many).
pub const MAX_FACE_VERTICES: usize = 32;

/// A face returned by [`ConvexSupport::support_face`], vertices in counter-clockwise
/// order seen from outside.
pub type SupportFace = ArrayVec<Vec3A, MAX_FACE_VERTICES>;

/// A convex shape seen through its support function, in the shape's local space.
pub trait ConvexSupport {
    /// The point of the core shape (without convex radius) furthest along `dir`.
    /// `dir` need not be normalised and may be zero (any core point is then fine).
    fn support_core(&self, dir: Vec3A) -> Vec3A;

    /// The radius swept around the core shape.
    fn convex_radius(&self) -> f32;

    /// The point of the full shape (core plus radius) furthest along `dir`.
    fn support(&self, dir: Vec3A) -> Vec3A {
        let core = self.support_core(dir);
        let r = self.convex_radius();
        if r > 0.0 {
            core + dir.normalize_or_zero() * r
        } else {
            core
        }
    }

    /// The face of the full shape whose outward normal is most aligned with `dir`
    /// (`dir` normalised). Shapes without flat faces return one or two points (a sphere its
    /// support point, a capsule its segment pushed out by the radius when it is
    /// perpendicular to `dir`).
    fn support_face(&self, dir: Vec3A, out: &mut SupportFace);
}
