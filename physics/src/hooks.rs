//! Hooks a game needs inside the step (Rapier's physics hooks, Jolt's
//! `ObjectLayerPairFilter`/`ContactListener::OnContactValidate`).
//!
//! **Pair filter** ([`World::set_pair_filter`]): a function asked, for every candidate
//! pair the broad phase finds (and every pair a CCD cast meets), whether the two bodies
//! may collide; `false` creates no contact. It is called with the lower body id first,
//! in the serial pair pass (in body-id order) and from CCD jobs, so it must be a pure
//! function of its arguments and of data it owns (`Fn + Send + Sync`): then the step
//! stays deterministic at any thread count. It runs after the layer table, the
//! group/mask filter and the exclusion list have accepted the pair.
//!
//! Contact modification (per-contact friction, restitution, normal, one-way platforms)
//! is not here yet: it belongs in the narrow phase, which another change is reworking.
//!
//! ```
//! use joule_physics::prelude::*;
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! let ground = world.create_body(&BodyDesc::fixed(Shape::cuboid(Vec3::new(5.0, 0.5, 5.0))?, -Vec3::Y * 0.5))?;
//! let ghost = world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y).user_data(1))?;
//! // The ghost passes through the ground: refuse that one pair.
//! world.set_pair_filter(move |a, b| !(a == ground && b == ghost));
//! for _ in 0..60 {
//!     world.step(1.0 / 60.0);
//! }
//! assert!(world.body(ghost)?.position().y < 0.0, "it fell through");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::Arc;

use crate::body::BodyId;
use crate::pipeline;
use crate::world::World;

/// A user pair filter, shared with the step's jobs.
#[derive(Clone)]
pub(crate) struct PairFilter(pub Arc<dyn Fn(BodyId, BodyId) -> bool + Send + Sync>);

impl std::fmt::Debug for PairFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairFilter(..)")
    }
}

impl World {
    /// Sets the pair filter: `filter(a, b)` (with `a < b`) returns whether the two
    /// bodies may collide. Existing contacts it refuses end now (with `End` events, as
    /// [`exclude_pair`](Self::exclude_pair)); a pair it starts to accept later is found
    /// when one of its bodies next moves out of its broad-phase box. See the module docs
    /// for what makes a filter deterministic.
    pub fn set_pair_filter(
        &mut self,
        filter: impl Fn(BodyId, BodyId) -> bool + Send + Sync + 'static,
    ) {
        self.exclusions.pair_filter = Some(PairFilter(Arc::new(filter)));
        // Walk contacts in id order so the End events come out the same every run.
        for c in 0..self.contacts.contacts.len() as u32 {
            let contact = &self.contacts.contacts[c as usize];
            let (a, b) = (contact.id_a, contact.id_b);
            // A free slot still holds its last pair; the pair map names live contacts only.
            let live = self.contacts.find(contact.body_a, contact.body_b) == Some(c);
            if live && self.exclusions.contains(a, b) {
                let removed = self.contacts.destroy(c);
                pipeline::report_removed_contact(&removed, &mut self.events);
            }
        }
    }

    /// Removes the pair filter (every pair the other filters accept may collide again,
    /// found as their bodies next move).
    pub fn clear_pair_filter(&mut self) {
        self.exclusions.pair_filter = None;
    }
}
