//! The hooks' setters: the pair filter and the contact modifier a game installs (see
//! [`crate::contact::hooks`] for what they are asked and when).

use std::sync::Arc;

use crate::body::BodyId;
use crate::collision::pipeline;
use crate::contact::hooks::{ContactModification, ContactModifier, PairFilter};
use crate::world::World;

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
                pipeline::remove_contact(&mut self.contacts, c, &mut self.events);
            }
        }
    }

    /// Removes the pair filter (every pair the other filters accept may collide again,
    /// found as their bodies next move).
    pub fn clear_pair_filter(&mut self) {
        self.exclusions.pair_filter = None;
    }
}

impl World {
    /// Sets the contact modifier (see [`crate::contact::hooks`]): called every step for
    /// every non-sensor contact that has points, from the narrow phase's jobs. Applies
    /// from the next step.
    pub fn set_contact_modifier(
        &mut self,
        modifier: impl Fn(&mut ContactModification) + Send + Sync + 'static,
    ) {
        self.exclusions.contact_modifier = Some(ContactModifier(Arc::new(modifier)));
    }

    /// Removes the contact modifier: contacts use their mixed values again from the next
    /// step.
    pub fn clear_contact_modifier(&mut self) {
        self.exclusions.contact_modifier = None;
    }
}
