//! Creating and removing many bodies in one call (issue 30, item 7).
//!
//! `create_bodies` checks every description before it adds any (a batch with one bad
//! description adds nothing and names it), then stores the bodies in order (their ids
//! are those a loop of `create_body` would give) and adds their proxies to each tree as
//! one subtree, sorted along a Morton curve and built by halving, inserted whole (Jolt's
//! `AddBodiesPrepare` / `AddBodiesFinalize`), instead of one descent and refit per body.
//! The bodies behave as if made one at a time: the pair search sorts what it finds, so a
//! tree's shape never reaches results.
//!
//! What it saves is the tree work, which grows with the batch: 10,000 bodies into an
//! empty world took 0.6 of a loop's time on the 2-core VM; a wave of 1,000 into a world
//! of 10,000 took 0.93 of it (the rest of a body's creation, the same either way,
//! dominates). See `benches/RESULTS.md`.

use crate::body::{AWAKE_SET, BodyDesc, BodyId, MotionType, STATIC_SET};
use crate::collision::broad_phase::ProxyKind;
use crate::error::PhysicsError;
use crate::world::{World, snapshot};

impl World {
    /// Creates one body per description, in order, and returns their ids. Every
    /// description is checked first: a bad one is refused with
    /// [`PhysicsError::InvalidBatchBody`] (its index and why) and no body is created.
    /// Cheaper per body than [`create_body`](Self::create_body) in a loop (see the
    /// module docs; `benches/benches/bulk.rs` measures it).
    pub fn create_bodies(&mut self, descs: &[BodyDesc]) -> Result<Vec<BodyId>, PhysicsError> {
        let mut ids = Vec::with_capacity(descs.len());
        self.create_bodies_into(descs, &mut ids)?;
        Ok(ids)
    }

    /// [`create_bodies`](Self::create_bodies) appending the ids to the caller's `ids`
    /// (which, on an error, is left as it was).
    pub fn create_bodies_into(
        &mut self,
        descs: &[BodyDesc],
        ids: &mut Vec<BodyId>,
    ) -> Result<(), PhysicsError> {
        let new_slots = descs.len().saturating_sub(self.bodies.free.len());
        if self.bodies.bodies.len() + new_slots >= (u32::MAX - 1) as usize {
            return Err(PhysicsError::TooManyBodies);
        }
        // Room first, before the records below are allocated: a store that grows later
        // is copied (the allocator cannot extend it in place past them).
        self.bodies.bodies.reserve(new_slots);
        let moving = descs
            .iter()
            .filter(|d| d.motion_type != MotionType::Fixed)
            .count();
        self.bodies.sets[AWAKE_SET as usize].sims.reserve(moving);
        self.bodies.sets[STATIC_SET as usize]
            .sims
            .reserve(descs.len() - moving);
        let records = descs
            .iter()
            .enumerate()
            .map(|(index, desc)| {
                self.body_records(desc)
                    .map_err(|e| PhysicsError::InvalidBatchBody {
                        index,
                        error: Box::new(e),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let start = ids.len();
        ids.reserve(descs.len());
        let mut proxies = Vec::with_capacity(descs.len());
        for (body, sim) in records {
            let moving = body.motion_type != MotionType::Fixed;
            let set = if moving { AWAKE_SET } else { STATIC_SET };
            let transform = sim.transform;
            let shaped = body.has_shape().then(|| body.shape.world_aabb(&transform));
            let id = self
                .bodies
                .insert(body, sim, set)
                .expect("room for the batch was checked above");
            ids.push(id);
            if let Some(aabb) = shaped {
                let kind = if moving {
                    ProxyKind::Moving
                } else {
                    ProxyKind::Static
                };
                proxies.push((aabb, id.index(), kind));
            }
        }
        let mut made = Vec::with_capacity(proxies.len());
        self.broad_phase.create_proxies(&proxies, &mut made);
        for (&(_, slot, _), proxy) in proxies.iter().zip(made) {
            self.bodies.bodies[slot as usize].proxy = Some(proxy);
        }
        if ids.len() > start {
            self.structure = snapshot::dynamic::new_structure();
        }
        Ok(())
    }

    /// Removes every body in `ids`, in order, as [`remove_body`](Self::remove_body) does
    /// (their contacts end with events, their joints go). Every id is checked first: a
    /// stale or repeated one is refused ([`PhysicsError::StaleBodyId`]) and no body is
    /// removed.
    pub fn remove_bodies(&mut self, ids: &[BodyId]) -> Result<(), PhysicsError> {
        let mut seen = vec![false; self.bodies.bodies.len()];
        for &id in ids {
            self.bodies.get(id)?;
            if std::mem::replace(&mut seen[id.index() as usize], true) {
                return Err(PhysicsError::StaleBodyId(id));
            }
        }
        for &id in ids {
            self.remove_body(id)?;
        }
        Ok(())
    }
}
