//! The materials part of the surface: per-body surfaces and materials, the pair and
//! part tables, mixing rules and rolling friction, and re-mixing the live contacts when
//! one of them changes.

use super::*;

impl World {
    /// The material rules and pair table contacts mix by.
    #[must_use]
    pub fn material_mixing(&self) -> &MaterialMixing {
        &self.mixing
    }

    /// Sets the friction and restitution every contact between a body of material `a` and
    /// one of material `b` uses (either order), in place of the mixed values. Applies to
    /// existing contacts from the next step. Refuses values out of range
    /// ([`PhysicsError::InvalidMaterial`]) and then changes nothing.
    pub fn set_material_pair(
        &mut self,
        a: MaterialId,
        b: MaterialId,
        material: SurfaceMaterial,
    ) -> Result<(), PhysicsError> {
        self.mixing.set_pair(a, b, material)?;
        self.remix_pair(a, b);
        Ok(())
    }

    /// Removes a pair entry (the mixing rules apply to the pair again); returns whether
    /// there was one.
    pub fn remove_material_pair(&mut self, a: MaterialId, b: MaterialId) -> bool {
        let removed = self.mixing.remove_pair(a, b);
        if removed {
            self.remix_pair(a, b);
        }
        removed
    }

    /// Sets the friction and restitution of the parts of composite shapes (mesh triangles,
    /// compound children) whose material id is `id`: a contact touching such a part uses
    /// them, and the id, in place of its body's (see [`crate::material`]). Applies to
    /// existing contacts from the next step. Refuses values out of range
    /// ([`PhysicsError::InvalidMaterial`]) and then changes nothing.
    pub fn set_part_surface(
        &mut self,
        id: MaterialId,
        surface: SurfaceMaterial,
    ) -> Result<(), PhysicsError> {
        self.mixing.set_surface(id, surface)?;
        self.remix_where(|_, _, parts| parts != [None, None]);
        Ok(())
    }

    /// Removes the values set for parts of material `id` (they take their body's values
    /// again); returns whether there were some.
    pub fn remove_part_surface(&mut self, id: MaterialId) -> bool {
        let removed = self.mixing.remove_surface(id);
        if removed {
            self.remix_where(|_, _, parts| parts != [None, None]);
        }
        removed
    }

    /// Sets the rolling and spinning resistance of every contact between bodies of
    /// materials `a` and `b` (either order), in place of the larger of the bodies' own.
    /// Applies to existing contacts from the next step; refuses negative or non-finite
    /// lengths ([`PhysicsError::InvalidMaterial`]) and then changes nothing.
    pub fn set_rolling_pair(
        &mut self,
        a: MaterialId,
        b: MaterialId,
        rolling: RollingMaterial,
    ) -> Result<(), PhysicsError> {
        self.mixing.set_rolling_pair(a, b, rolling)?;
        self.remix_pair(a, b);
        Ok(())
    }

    /// Sets a body's own rolling and spinning resistance (and its contacts', from the next
    /// step). Refuses negative or non-finite lengths and then changes nothing.
    pub fn set_rolling_friction(
        &mut self,
        id: BodyId,
        rolling: RollingMaterial,
    ) -> Result<(), PhysicsError> {
        rolling.validate()?;
        let body = self.bodies.get_mut(id)?;
        body.rolling_friction = rolling.rolling;
        body.spinning_friction = rolling.spinning;
        self.remix_body(id.index());
        Ok(())
    }

    /// A body's own rolling and spinning resistance.
    pub fn rolling_friction(&self, id: BodyId) -> Result<RollingMaterial, PhysicsError> {
        let b = self.bodies.get(id)?;
        Ok(RollingMaterial {
            rolling: b.rolling_friction,
            spinning: b.spinning_friction,
        })
    }

    /// Replaces the rules that mix two bodies' friction and restitution where the pair
    /// table has no entry. Applies to existing contacts from the next step.
    pub fn set_mixing_rules(&mut self, friction: MixRule, restitution: MixRule) {
        self.mixing.set_rules(friction, restitution);
        self.remix_where(|_, _, _| true);
    }

    /// Sets a body's own friction and restitution (and with them its contacts' mixed
    /// values, from the next step). Refuses values out of range and then changes nothing.
    pub fn set_surface(
        &mut self,
        id: BodyId,
        surface: SurfaceMaterial,
    ) -> Result<(), PhysicsError> {
        surface.validate()?;
        let body = self.bodies.get_mut(id)?;
        body.friction = surface.friction;
        body.restitution = surface.restitution;
        self.new_look(id.index());
        self.remix_body(id.index());
        Ok(())
    }

    /// Sets a body's material id (the key of the pair table).
    pub fn set_material(&mut self, id: BodyId, material: MaterialId) -> Result<(), PhysicsError> {
        self.bodies.get_mut(id)?.material = material;
        self.new_look(id.index());
        self.remix_body(id.index());
        Ok(())
    }

    /// A body's own friction and restitution and its material id.
    pub fn surface(&self, id: BodyId) -> Result<(SurfaceMaterial, MaterialId), PhysicsError> {
        let b = self.bodies.get(id)?;
        Ok((b.surface(), b.material))
    }

    /// Recomputes the mixed material of every live contact whose bodies pass `which`.
    /// `which` also sees the material ids of the composite parts the contact touches.
    fn remix_where(&mut self, which: impl Fn(&Body, &Body, [Option<u32>; 2]) -> bool) {
        for id in 0..self.contacts.contacts.len() as u32 {
            let c = &self.contacts.contacts[id as usize];
            if c.alive
                && which(
                    &self.bodies.bodies[c.body_a as usize],
                    &self.bodies.bodies[c.body_b as usize],
                    c.manifold.materials,
                )
            {
                self.remix(id);
            }
        }
    }

    /// Recomputes the contacts between bodies of materials `a` and `b` (either order).
    fn remix_pair(&mut self, a: MaterialId, b: MaterialId) {
        let key = MaterialMixing::key(a, b);
        // A contact touching a composite part mixes by the part's id: remix those too.
        self.remix_where(|ba, bb, parts| {
            parts != [None, None] || MaterialMixing::key(ba.material, bb.material) == key
        });
    }

    /// Recomputes the contacts of the body in slot `slot` (its own contact list).
    pub(super) fn remix_body(&mut self, slot: u32) {
        for id in self.contacts.contacts_of(slot) {
            self.remix(id);
        }
    }

    /// Recomputes one contact's mixed friction and restitution from its bodies.
    fn remix(&mut self, id: u32) {
        let c = &mut self.contacts.contacts[id as usize];
        let mixed = self.mixing.mix_parts(
            &self.bodies.bodies[c.body_a as usize],
            &self.bodies.bodies[c.body_b as usize],
            c.manifold.materials,
        );
        c.friction = mixed.friction;
        c.restitution = mixed.restitution;
        // A woken contact may be solved before the narrow phase visits it again.
        c.solve_friction = mixed.friction;
        c.solve_restitution = mixed.restitution;
        c.rolling = self.mixing.mix_rolling(
            &self.bodies.bodies[c.body_a as usize],
            &self.bodies.bodies[c.body_b as usize],
        );
    }
}
