//! Surface materials: how two bodies' friction and restitution combine into a contact's.
//!
//! Every body carries its own friction and restitution and a [`MaterialId`]. When two
//! bodies touch, the contact's values come from the world's [`MaterialMixing`]:
//! - if the table holds an entry for the pair of material ids (in either order), that
//!   entry's values are used as they are (ice on steel, a rubber ball on a wooden floor);
//! - otherwise the bodies' own values are combined by the mixing rules, by default the
//!   common practice of Box2D and Jolt: friction the geometric mean, restitution the
//!   maximum.
//!
//! Parts of composite shapes (mesh triangles, compound children) may carry material ids of
//! their own (0: none). A contact touching such a part mixes as if the part's id were its
//! body's [`MaterialId`], with the part's friction and restitution taken from
//! [`MaterialMixing::set_surface`] (the body's own values where none is set): a mesh floor
//! can be ice here and rubber there. A part id above `u16::MAX` counts as none. One
//! manifold has one friction and restitution, so a shape touching parts of different
//! materials at once takes the materials of the part with the deepest point (as Jolt
//! takes its sub-shape pair's).
//!
//! The table is a sorted vector searched by binary search: its order, and so every result,
//! is independent of the order entries were inserted in. Changing the table or the rules
//! updates the contacts that already exist, so the change applies from the next step.

use crate::body::Body;
use crate::error::PhysicsError;

/// A material id. Bodies default to [`MaterialId::DEFAULT`]; give bodies that need a
/// pair rule their own ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MaterialId(pub u16);

impl MaterialId {
    /// The material of bodies that name none.
    pub const DEFAULT: MaterialId = MaterialId(0);
}

/// How two values combine when no pair entry overrides them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MixRule {
    /// `sqrt(a * b)`: one frictionless surface makes the pair frictionless.
    #[default]
    GeometricMean,
    /// `(a + b) / 2`.
    Average,
    /// The smaller value.
    Min,
    /// The larger value.
    Max,
    /// `a * b`.
    Multiply,
}

impl MixRule {
    /// Combines `a` and `b`. Symmetric in its arguments, so body order never matters.
    #[must_use]
    #[inline]
    pub fn mix(self, a: f32, b: f32) -> f32 {
        match self {
            MixRule::GeometricMean => (a * b).sqrt(),
            MixRule::Average => 0.5 * (a + b),
            MixRule::Min => a.min(b),
            MixRule::Max => a.max(b),
            MixRule::Multiply => a * b,
        }
    }
}

/// A surface's friction and restitution: a body's own, or a pair entry's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceMaterial {
    /// Friction coefficient (finite, >= 0).
    pub friction: f32,
    /// Restitution in [0, 1].
    pub restitution: f32,
}

impl SurfaceMaterial {
    /// Whether the values are in range (the same limits as `BodyDesc`).
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }

    /// [`PhysicsError::InvalidMaterial`] naming the first value out of range.
    pub(crate) fn validate(&self) -> Result<(), PhysicsError> {
        check_material("friction", self.friction, FRICTION_RANGE, |f| {
            f.is_finite() && f >= 0.0
        })?;
        check_material("restitution", self.restitution, RESTITUTION_RANGE, |e| {
            (0.0..=1.0).contains(&e)
        })
    }
}

/// What a friction coefficient must be.
pub(crate) const FRICTION_RANGE: &str = "a finite coefficient >= 0";
/// What a restitution must be.
pub(crate) const RESTITUTION_RANGE: &str = "a value in [0, 1]";
/// What a rolling or spinning resistance length must be.
pub(crate) const LENGTH_RANGE: &str = "a finite length >= 0 (m)";

/// `Ok` if `ok(value)`, else [`PhysicsError::InvalidMaterial`] naming `field`.
pub(crate) fn check_material(
    field: &'static str,
    value: f32,
    expected: &'static str,
    ok: impl Fn(f32) -> bool,
) -> Result<(), PhysicsError> {
    if ok(value) {
        Ok(())
    } else {
        Err(PhysicsError::InvalidMaterial {
            field,
            value,
            expected,
        })
    }
}

/// Rolling and spinning resistance lengths (m) of a body or a pair entry (see
/// [`BodyDesc::rolling_friction`](crate::body::BodyDesc::rolling_friction)). Without a
/// pair entry a contact takes the larger of its two bodies' values of each, so one
/// resisting body is enough (a ball on any floor).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RollingMaterial {
    /// Rolling resistance (m): torque up to this times the normal force.
    pub rolling: f32,
    /// Spinning resistance (m): torque about the normal up to this times the normal force.
    pub spinning: f32,
}

impl RollingMaterial {
    /// Whether both lengths are finite and >= 0.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }

    /// [`PhysicsError::InvalidMaterial`] naming the first length out of range.
    pub(crate) fn validate(&self) -> Result<(), PhysicsError> {
        let ok = |x: f32| x.is_finite() && x >= 0.0;
        check_material("rolling", self.rolling, LENGTH_RANGE, ok)?;
        check_material("spinning", self.spinning, LENGTH_RANGE, ok)
    }
}

/// The mixing rules plus the per-material-pair table (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialMixing {
    pub(crate) friction_rule: MixRule,
    pub(crate) restitution_rule: MixRule,
    /// Sorted by key, keys unique; key = (smaller id, larger id).
    pub(crate) pairs: Vec<((u16, u16), SurfaceMaterial)>,
    /// Friction and restitution of composite-shape parts by material id, sorted by id.
    pub(crate) surfaces: Vec<(u16, SurfaceMaterial)>,
    /// Rolling and spinning pair entries, keyed as `pairs`.
    pub(crate) rolling_pairs: Vec<((u16, u16), RollingMaterial)>,
}

impl Default for MaterialMixing {
    fn default() -> Self {
        Self::new()
    }
}

impl MaterialMixing {
    /// The rules Box2D and Jolt use (geometric-mean friction, maximum restitution) and an
    /// empty table.
    #[must_use]
    pub fn new() -> Self {
        Self {
            friction_rule: MixRule::GeometricMean,
            restitution_rule: MixRule::Max,
            pairs: Vec::new(),
            surfaces: Vec::new(),
            rolling_pairs: Vec::new(),
        }
    }

    /// The rule friction mixes by.
    #[must_use]
    pub fn friction_rule(&self) -> MixRule {
        self.friction_rule
    }

    /// The rule restitution mixes by.
    #[must_use]
    pub fn restitution_rule(&self) -> MixRule {
        self.restitution_rule
    }

    /// Replaces the mixing rules.
    pub fn set_rules(&mut self, friction: MixRule, restitution: MixRule) {
        self.friction_rule = friction;
        self.restitution_rule = restitution;
    }

    /// The table key of a pair: (smaller id, larger id), so either order finds it.
    pub(crate) fn key(a: MaterialId, b: MaterialId) -> (u16, u16) {
        (a.0.min(b.0), a.0.max(b.0))
    }

    /// Where the pair's entry is (`Ok`) or would be inserted (`Err`).
    fn find(&self, a: MaterialId, b: MaterialId) -> Result<usize, usize> {
        let key = Self::key(a, b);
        self.pairs.binary_search_by_key(&key, |e| e.0)
    }

    /// Sets the values used whenever a body of material `a` touches one of material `b`
    /// (either order; `a == b` is allowed). Refuses values out of range.
    pub fn set_pair(
        &mut self,
        a: MaterialId,
        b: MaterialId,
        material: SurfaceMaterial,
    ) -> Result<(), PhysicsError> {
        material.validate()?;
        match self.find(a, b) {
            Ok(i) => self.pairs[i].1 = material,
            Err(i) => self.pairs.insert(i, (Self::key(a, b), material)),
        }
        Ok(())
    }

    /// Sets the friction and restitution of the parts of composite shapes (mesh triangles,
    /// compound children) whose material id is `id`; see the module docs. Refuses values
    /// out of range.
    pub fn set_surface(
        &mut self,
        id: MaterialId,
        surface: SurfaceMaterial,
    ) -> Result<(), PhysicsError> {
        surface.validate()?;
        match self.surfaces.binary_search_by_key(&id.0, |e| e.0) {
            Ok(i) => self.surfaces[i].1 = surface,
            Err(i) => self.surfaces.insert(i, (id.0, surface)),
        }
        Ok(())
    }

    /// The values set for parts of material `id`, if any.
    #[must_use]
    pub fn surface(&self, id: MaterialId) -> Option<SurfaceMaterial> {
        self.surfaces
            .binary_search_by_key(&id.0, |e| e.0)
            .ok()
            .map(|i| self.surfaces[i].1)
    }

    /// Removes the values of parts of material `id`; returns whether there were some.
    pub fn remove_surface(&mut self, id: MaterialId) -> bool {
        match self.surfaces.binary_search_by_key(&id.0, |e| e.0) {
            Ok(i) => {
                self.surfaces.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Every part surface, by id.
    pub fn surfaces(&self) -> impl ExactSizeIterator<Item = (MaterialId, SurfaceMaterial)> {
        self.surfaces.iter().map(|&(id, m)| (MaterialId(id), m))
    }

    /// Sets the rolling and spinning resistance every contact between materials `a` and
    /// `b` uses (either order), in place of the larger of the bodies' values. Refuses
    /// negative or non-finite lengths.
    pub fn set_rolling_pair(
        &mut self,
        a: MaterialId,
        b: MaterialId,
        rolling: RollingMaterial,
    ) -> Result<(), PhysicsError> {
        rolling.validate()?;
        let key = Self::key(a, b);
        match self.rolling_pairs.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => self.rolling_pairs[i].1 = rolling,
            Err(i) => self.rolling_pairs.insert(i, (key, rolling)),
        }
        Ok(())
    }

    /// Removes a rolling pair entry; returns whether there was one.
    pub fn remove_rolling_pair(&mut self, a: MaterialId, b: MaterialId) -> bool {
        let key = Self::key(a, b);
        match self.rolling_pairs.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => {
                self.rolling_pairs.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The rolling pair entry, if any.
    #[must_use]
    pub fn rolling_pair(&self, a: MaterialId, b: MaterialId) -> Option<RollingMaterial> {
        let key = Self::key(a, b);
        self.rolling_pairs
            .binary_search_by_key(&key, |e| e.0)
            .ok()
            .map(|i| self.rolling_pairs[i].1)
    }

    /// The rolling and spinning resistance of a contact between two bodies.
    pub(crate) fn mix_rolling(&self, a: &Body, b: &Body) -> RollingMaterial {
        if !self.rolling_pairs.is_empty()
            && let Some(m) = self.rolling_pair(a.material, b.material)
        {
            return m;
        }
        RollingMaterial {
            rolling: a.rolling_friction.max(b.rolling_friction),
            spinning: a.spinning_friction.max(b.spinning_friction),
        }
    }

    /// Removes the pair entry; returns whether there was one.
    pub fn remove_pair(&mut self, a: MaterialId, b: MaterialId) -> bool {
        match self.find(a, b) {
            Ok(i) => {
                self.pairs.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The pair entry, if any.
    #[must_use]
    pub fn pair(&self, a: MaterialId, b: MaterialId) -> Option<SurfaceMaterial> {
        self.find(a, b).ok().map(|i| self.pairs[i].1)
    }

    /// Every pair entry, sorted by (smaller id, larger id).
    pub fn pairs(
        &self,
    ) -> impl ExactSizeIterator<Item = (MaterialId, MaterialId, SurfaceMaterial)> {
        self.pairs
            .iter()
            .map(|&((a, b), m)| (MaterialId(a), MaterialId(b), m))
    }

    /// The contact values of two surfaces: the pair entry when there is one, else the
    /// mixed values. Symmetric in `a` and `b`.
    #[must_use]
    pub fn mix(
        &self,
        id_a: MaterialId,
        a: SurfaceMaterial,
        id_b: MaterialId,
        b: SurfaceMaterial,
    ) -> SurfaceMaterial {
        if !self.pairs.is_empty()
            && let Some(m) = self.pair(id_a, id_b)
        {
            return m;
        }
        SurfaceMaterial {
            friction: self.friction_rule.mix(a.friction, b.friction),
            restitution: self.restitution_rule.mix(a.restitution, b.restitution),
        }
    }

    /// The contact values of two bodies.
    pub(crate) fn mix_bodies(&self, a: &Body, b: &Body) -> SurfaceMaterial {
        self.mix(a.material, a.surface(), b.material, b.surface())
    }

    /// The contact values of two bodies whose touching parts carry the material ids
    /// `parts` (see the module docs); [`mix_bodies`](Self::mix_bodies) when neither does.
    pub(crate) fn mix_parts(&self, a: &Body, b: &Body, parts: [Option<u32>; 2]) -> SurfaceMaterial {
        if parts == [None, None] {
            return self.mix_bodies(a, b);
        }
        let side = |body: &Body, part: Option<u32>| match part.and_then(|p| u16::try_from(p).ok()) {
            Some(id) => {
                let id = MaterialId(id);
                (id, self.surface(id).unwrap_or_else(|| body.surface()))
            }
            None => (body.material, body.surface()),
        };
        let ((ida, sa), (idb, sb)) = (side(a, parts[0]), side(b, parts[1]));
        self.mix(ida, sa, idb, sb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn m(friction: f32, restitution: f32) -> SurfaceMaterial {
        SurfaceMaterial {
            friction,
            restitution,
        }
    }

    #[test]
    fn default_rules_are_geometric_mean_and_max() {
        let mix = MaterialMixing::new();
        let r = mix.mix(MaterialId(0), m(0.25, 0.2), MaterialId(0), m(1.0, 0.7));
        assert_eq!(r, m(0.5, 0.7));
    }

    #[test]
    fn pair_entry_overrides_in_either_order_and_keeps_the_table_sorted() {
        let mut mix = MaterialMixing::new();
        let (ice, steel, rubber) = (MaterialId(3), MaterialId(1), MaterialId(2));
        mix.set_pair(ice, steel, m(0.02, 0.1)).unwrap();
        mix.set_pair(rubber, rubber, m(1.2, 0.9)).unwrap();
        mix.set_pair(steel, ice, m(0.03, 0.1)).unwrap(); // replaces, same key
        let base = m(0.5, 0.0);
        assert_eq!(mix.mix(ice, base, steel, base), m(0.03, 0.1));
        assert_eq!(mix.mix(steel, base, ice, base), m(0.03, 0.1));
        assert_eq!(mix.mix(rubber, base, rubber, base), m(1.2, 0.9));
        // No entry: the rules apply.
        assert_eq!(mix.mix(rubber, base, steel, base), m(0.5, 0.0));
        let keys: Vec<_> = mix.pairs().map(|(a, b, _)| (a.0, b.0)).collect();
        assert_eq!(keys, vec![(1, 3), (2, 2)]);
        assert!(mix.remove_pair(ice, steel));
        assert!(!mix.remove_pair(ice, steel));
        assert_eq!(mix.mix(ice, base, steel, base), base);
    }

    #[test]
    fn out_of_range_entries_are_refused_and_change_nothing() {
        let mut mix = MaterialMixing::new();
        for bad in [m(-0.1, 0.0), m(f32::NAN, 0.0), m(0.5, 1.5), m(0.5, -0.1)] {
            assert!(matches!(
                mix.set_pair(MaterialId(1), MaterialId(2), bad),
                Err(PhysicsError::InvalidMaterial { .. })
            ));
        }
        assert_eq!(mix.pairs().len(), 0);
    }

    #[test]
    fn every_rule_is_symmetric() {
        for rule in [
            MixRule::GeometricMean,
            MixRule::Average,
            MixRule::Min,
            MixRule::Max,
            MixRule::Multiply,
        ] {
            assert_eq!(rule.mix(0.3, 0.8), rule.mix(0.8, 0.3), "{rule:?}");
        }
        assert_eq!(MixRule::Average.mix(0.2, 0.6), 0.4);
        assert_eq!(MixRule::Min.mix(0.2, 0.6), 0.2);
        assert_eq!(MixRule::Multiply.mix(0.5, 0.6), 0.3);
    }
}
