//! Reading contacts without allocating: [`World::contacts_of`] walks one body's contact
//! list and [`World::contact`] looks one pair up in the contact manager's pair map; each
//! yields a [`ContactView`] borrowed from the world, which computes what it is asked
//! (world points, the step's impulses) from the contact as the last step left it.
//!
//! A contact exists while two bodies' fat bounding boxes overlap; it has points while
//! their shapes are within the speculative margin (a few centimetres, more for fast
//! bodies), and it is **touching** while one of its points has a separation of at most
//! [`TOUCHING_SEPARATION`] (5.5 mm, see there) or pushed in the last step: speculative
//! points let the solver stop a body before it arrives, and while they only wait the
//! surfaces are apart; one that pushed resolved a collision across the gap (two bodies
//! that bounce apart before their surfaces meet), which counts as a touch. Games usually
//! want the touching ones, as the begin and end events report them.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ground = world.create_body(&BodyDesc::fixed(
//!     Shape::cuboid(Vec3::new(5.0, 0.5, 5.0))?,
//!     Vec3::new(0.0, -0.5, 0.0),
//! ))?;
//! let crate_ = world.create_body(&BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5))?, Vec3::Y * 0.5))?;
//! for _ in 0..30 {
//!     world.step(1.0 / 60.0);
//! }
//! for contact in world.contacts_of(crate_)? {
//!     assert_eq!(contact.other(crate_), ground);
//!     assert!(contact.is_touching());
//!     assert!(contact.normal_from(ground).y > 0.99, "the ground pushes up");
//! }
//! let on_ground = world.contact(ground, crate_)?.expect("the crate rests on the ground");
//! assert_eq!(on_ground.points().count(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::body::{BodyId, BodySim};
pub use crate::contact::TOUCHING_SEPARATION;
use crate::contact::{Contact, ContactFlags};
use crate::dynamics::solver::contact::tangent_basis;
use crate::error::PhysicsError;
use crate::math::Vec3;
use crate::world::World;

/// One contact between two bodies, borrowed from the world (see [`World::contacts_of`]
/// and [`World::contact`]).
#[derive(Clone, Copy)]
pub struct ContactView<'w> {
    contact: &'w Contact,
    sim_a: &'w BodySim,
    sim_b: &'w BodySim,
    substeps: f32,
}

/// One point of a [`ContactView`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPointView {
    /// World position, midway between the two surfaces (at the bodies' current poses).
    pub position: Vec3,
    /// Signed distance between the surfaces along the normal, as the narrow phase measured
    /// it at the start of the last step: negative when they overlap, positive for a
    /// speculative point.
    pub separation: f32,
    /// Penetration depth: `-separation` where the surfaces overlap, else 0.
    pub depth: f32,
    /// Normal impulse (N·s) the point applied over the last step, on body B along the
    /// normal (A's is the opposite). Zero for a point that did not push.
    pub normal_impulse: f32,
    /// Friction impulse (N·s) the point applied over the last step on body B, in the
    /// plane across the normal (A's is the opposite).
    pub friction_impulse: Vec3,
}

impl std::fmt::Debug for ContactView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContactView")
            .field("body_a", &self.body_a())
            .field("body_b", &self.body_b())
            .field("touching", &self.is_touching())
            .field("normal", &self.normal())
            .field("points", &self.points().collect::<Vec<_>>())
            .finish()
    }
}

impl<'w> ContactView<'w> {
    /// The body with the lower id.
    #[must_use]
    pub fn body_a(&self) -> BodyId {
        self.contact.id_a
    }

    /// The body with the higher id.
    #[must_use]
    pub fn body_b(&self) -> BodyId {
        self.contact.id_b
    }

    /// The body that is not `id` (`body_a` when `id` is neither of the two).
    #[must_use]
    pub fn other(&self, id: BodyId) -> BodyId {
        if id == self.contact.id_a {
            self.contact.id_b
        } else {
            self.contact.id_a
        }
    }

    /// Whether the surfaces touched when the narrow phase last looked (a point within
    /// [`TOUCHING_SEPARATION`], or one that pushed in the step before; see the module
    /// docs), exactly as begin and end events report it: false for a contact whose
    /// speculative points only wait, and for one a contact modifier disabled.
    #[must_use]
    pub fn is_touching(&self) -> bool {
        self.contact.flags.contains(ContactFlags::SURFACES_TOUCH)
    }

    /// World unit normal, from body A towards body B.
    #[must_use]
    pub fn normal(&self) -> Vec3 {
        self.contact.manifold.normal.into()
    }

    /// World unit normal pointing away from `id` towards the other body (the direction
    /// in which `id` pushes the other; the other pushes `id` the opposite way).
    #[must_use]
    pub fn normal_from(&self, id: BodyId) -> Vec3 {
        if id == self.contact.id_b {
            -self.normal()
        } else {
            self.normal()
        }
    }

    /// The deepest penetration of its points (0 when none overlaps).
    #[must_use]
    pub fn max_depth(&self) -> f32 {
        self.contact
            .manifold
            .points
            .iter()
            .fold(0.0, |d, p| d.max(-p.separation))
    }

    /// The sum of the points' normal impulses over the last step (N·s).
    #[must_use]
    pub fn total_normal_impulse(&self) -> f32 {
        self.contact.impulses.iter().map(|i| i.normal).sum::<f32>() * self.substeps
    }

    /// The points (at most four), with their separations and last step's impulses.
    ///
    /// The impulses are the solver's accumulated impulses of the step's last substep
    /// times the number of substeps: exact for a contact at rest, an estimate otherwise,
    /// which misses what the point pushed in earlier substeps (a landing, or a rolling
    /// ball that pushed early in the step and then skimmed clear reads near 0). The
    /// step's exact totals, bounces included, come with contact force events (see
    /// [`contact_force`](crate::world::contact_force)).
    pub fn points(&self) -> impl ExactSizeIterator<Item = ContactPointView> + 'w {
        let (c, sa, sb, substeps) = (self.contact, self.sim_a, self.sim_b, self.substeps);
        let tangents = tangent_basis(c.solve_normal);
        c.manifold
            .points
            .iter()
            .zip(&c.impulses)
            .map(move |(p, i)| {
                let pa = sa.transform.transform_point(p.local_a);
                let pb = sb.transform.transform_point(p.local_b);
                ContactPointView {
                    position: ((pa + pb) * 0.5).into(),
                    separation: p.separation,
                    depth: (-p.separation).max(0.0),
                    normal_impulse: i.normal * substeps,
                    friction_impulse: ((tangents[0] * i.tangent1 + tangents[1] * i.tangent2)
                        * substeps)
                        .into(),
                }
            })
    }
}

impl World {
    /// Every contact of body `id` that has points (touching or speculative; sensors
    /// report through sensor events instead), in no particular order. Allocates nothing:
    /// it walks the body's own contact list.
    ///
    /// # Errors
    /// [`PhysicsError::StaleBodyId`] if `id` is not a live body.
    pub fn contacts_of(
        &self,
        id: BodyId,
    ) -> Result<impl Iterator<Item = ContactView<'_>>, PhysicsError> {
        self.bodies.get(id)?;
        let list = self
            .contacts
            .body_contacts
            .get(id.index() as usize)
            .map_or(&[][..], |l| l.as_slice());
        Ok(list.iter().filter_map(|&c| self.view(c)))
    }

    /// The contact between `a` and `b`, if they have one with points (touching or
    /// speculative). Allocates nothing: one lookup in the pair map.
    ///
    /// # Errors
    /// [`PhysicsError::StaleBodyId`] if `a` or `b` is not a live body.
    pub fn contact(&self, a: BodyId, b: BodyId) -> Result<Option<ContactView<'_>>, PhysicsError> {
        self.bodies.get(a)?;
        self.bodies.get(b)?;
        Ok(self
            .contacts
            .find(a.index(), b.index())
            .and_then(|c| self.view(c)))
    }

    fn view(&self, id: u32) -> Option<ContactView<'_>> {
        let c = &self.contacts.contacts[id as usize];
        if !c.alive || c.flags.contains(ContactFlags::SENSOR) || c.manifold.points.is_empty() {
            return None;
        }
        Some(ContactView {
            contact: c,
            sim_a: self.bodies.sim_of(c.body_a),
            sim_b: self.bodies.sim_of(c.body_b),
            substeps: self.desc.solver.substeps as f32,
        })
    }
}
