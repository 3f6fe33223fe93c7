//! Collision filtering: which pairs of bodies may collide.
//!
//! Three layers of filtering, cheapest first, all evaluated when the broad phase reports a
//! new pair (never per step for an existing contact):
//! 1. **Object layers** with a symmetric layer-pair table (Jolt): "debris never hits
//!    debris", "the player's layer ignores triggers".
//! 2. **Group and mask bits** per body (Edyn, Box2D): `a` and `b` collide only if
//!    `a.group & b.mask != 0` and `b.group & a.mask != 0`.
//! 3. **An exclusion list** of body pairs (a ragdoll's limbs, a weapon and its holder).
//!
//! Two bodies that are both static or kinematic never collide (nothing could respond).

use std::collections::BTreeSet;

use crate::body::BodyId;

/// A body's object layer: an index into the [`LayerTable`].
pub type ObjectLayer = u16;

/// A symmetric table saying which object layers collide with which.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerTable {
    pub(crate) count: u16,
    /// Row-major `count x count` bits.
    pub(crate) bits: Vec<u64>,
}

impl Default for LayerTable {
    /// One layer (0) that collides with itself.
    fn default() -> Self {
        Self::all_colliding(1)
    }
}

impl LayerTable {
    /// `count` layers, every pair colliding.
    #[must_use]
    pub fn all_colliding(count: u16) -> Self {
        let n = count as usize;
        let mut t = Self {
            count,
            bits: vec![0; (n * n).div_ceil(64).max(1)],
        };
        for a in 0..count {
            for b in 0..count {
                t.set(a, b, true);
            }
        }
        t
    }

    /// Number of layers.
    #[must_use]
    pub fn count(&self) -> u16 {
        self.count
    }

    /// Sets whether layers `a` and `b` collide (both orders). Panics if either is not below
    /// [`count`](Self::count) (a programming error in the table's setup).
    pub fn set(&mut self, a: ObjectLayer, b: ObjectLayer, collide: bool) {
        assert!(a < self.count && b < self.count, "layer out of range");
        for (x, y) in [(a, b), (b, a)] {
            let i = x as usize * self.count as usize + y as usize;
            if collide {
                self.bits[i / 64] |= 1 << (i % 64);
            } else {
                self.bits[i / 64] &= !(1 << (i % 64));
            }
        }
    }

    /// Whether layers `a` and `b` collide (false for a layer out of range).
    #[must_use]
    #[inline]
    pub fn collides(&self, a: ObjectLayer, b: ObjectLayer) -> bool {
        if a >= self.count || b >= self.count {
            return false;
        }
        let i = a as usize * self.count as usize + b as usize;
        self.bits[i / 64] & (1 << (i % 64)) != 0
    }
}

/// Per-body group and mask bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollisionFilter {
    /// The groups this body belongs to.
    pub group: u32,
    /// The groups this body collides with.
    pub mask: u32,
}

impl Default for CollisionFilter {
    /// In every group, colliding with every group.
    fn default() -> Self {
        Self {
            group: u32::MAX,
            mask: u32::MAX,
        }
    }
}

impl CollisionFilter {
    /// Whether two filters let their bodies collide.
    #[must_use]
    #[inline]
    pub fn collides(&self, other: &Self) -> bool {
        self.group & other.mask != 0 && other.group & self.mask != 0
    }
}

/// A set of body pairs that never collide, and the user's pair filter (see
/// [`World::set_pair_filter`](crate::world::World::set_pair_filter)).
#[derive(Clone, Debug, Default)]
pub struct ExclusionList {
    pub(crate) pairs: BTreeSet<(BodyId, BodyId)>,
    /// Code, not data: not saved in snapshots, kept across a restore.
    pub(crate) pair_filter: Option<crate::contact::hooks::PairFilter>,
    /// The contact modifier (code, like the pair filter).
    pub(crate) contact_modifier: Option<crate::contact::hooks::ContactModifier>,
}

impl ExclusionList {
    fn key(a: BodyId, b: BodyId) -> (BodyId, BodyId) {
        if a <= b { (a, b) } else { (b, a) }
    }

    /// Excludes the pair (either order). Returns false if it was already excluded.
    pub fn insert(&mut self, a: BodyId, b: BodyId) -> bool {
        self.pairs.insert(Self::key(a, b))
    }

    /// Allows the pair again. Returns whether it was excluded.
    pub fn remove(&mut self, a: BodyId, b: BodyId) -> bool {
        self.pairs.remove(&Self::key(a, b))
    }

    /// Whether the pair is excluded: listed, or refused by the pair filter (which is
    /// asked with the lower id first, so its answer cannot depend on the order the caller
    /// found the pair in).
    #[must_use]
    pub fn contains(&self, a: BodyId, b: BodyId) -> bool {
        let key = Self::key(a, b);
        (!self.pairs.is_empty() && self.pairs.contains(&key))
            || self
                .pair_filter
                .as_ref()
                .is_some_and(|f| !(f.0)(key.0, key.1))
    }

    /// Drops every pair involving `body` (when it is removed).
    pub fn remove_body(&mut self, body: BodyId) {
        self.pairs.retain(|&(a, b)| a != body && b != body);
    }

    /// Number of excluded pairs.
    #[must_use]
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no pair is excluded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_table_is_symmetric() {
        let mut t = LayerTable::all_colliding(3);
        t.set(0, 2, false);
        assert!(!t.collides(0, 2) && !t.collides(2, 0));
        assert!(t.collides(1, 2) && t.collides(0, 0));
        assert!(!t.collides(0, 7), "out-of-range layers never collide");
    }

    #[test]
    fn group_mask_both_ways() {
        let player = CollisionFilter {
            group: 0b01,
            mask: 0b10,
        };
        let enemy = CollisionFilter {
            group: 0b10,
            mask: 0b01,
        };
        let ghost = CollisionFilter {
            group: 0b10,
            mask: 0b00,
        };
        assert!(player.collides(&enemy));
        assert!(!player.collides(&ghost), "ghost's mask rejects the player");
        assert!(!enemy.collides(&ghost));
    }
}
