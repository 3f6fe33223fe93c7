//! A kinematic character controller (Jolt's `CharacterVirtual`, Rapier's
//! `KinematicCharacterController`): a convex shape, a capsule typically, that the game
//! moves with a desired velocity and that slides along the world instead of being
//! simulated by it.
//!
//! # The idea
//!
//! The character is not a body: it reads the world through its queries
//! ([`World::scene_query`](crate::world::World::scene_query)) and moves itself.
//! Each [`CharacterController::update`]:
//!
//! ```text
//!  carry ──> velocity ──> move and slide ──> ground probe ──> stick to ground ──> push
//!  (platform   (walk along   (casts; each hit     (contacts within   (walked off a    (bounded
//!   pose delta) the ground,   a plane; 1 plane:     2 skins: grounded, step or crest:  impulses on
//!               gravity in    slide, 2: crease,     steep, in air;     snap down)       dynamic
//!               the air)      3: stop; steps)       ledge rays)                         bodies hit)
//! ```
//!
//! - **Move and slide** sweeps the shape with
//!   [`cast_shape_with`](crate::query::SceneQuery::cast_shape_with), so no speed tunnels;
//!   each hit stops the shape a *skin* (2 cm) short of the surface and becomes a plane
//!   the rest of the motion is projected on. One plane: slide along it; two: along their
//!   crease; three: stop. A projection that would turn the motion back against the
//!   commanded one stops it instead, so corners and V-shaped creases do not jitter.
//! - **Slopes**: a plane within [`CharacterDesc::max_slope`] of level is ground: the
//!   motion is projected on it vertically, which keeps the commanded horizontal speed up
//!   and down ramps and lets gravity do nothing on it (no creeping). A steeper plane
//!   blocks the horizontal motion like a wall, and gravity slides the character down it.
//! - **Steps**: blocked by a steep face while grounded, the character tries the move
//!   again lifted by [`CharacterDesc::step_height`] and then set down; it keeps the
//!   stepped move when it lands on walkable ground higher than it started.
//! - **Stick to ground**: grounded before the move and not after (walking down stairs,
//!   over a crest), and not jumping, it sweeps down by
//!   [`CharacterDesc::stick_to_ground`] and lands on walkable ground if any.
//! - **Ground state**: contacts within two skins of the shape
//!   ([`collide_shape`](crate::query::SceneQuery::collide_shape), each mesh triangle
//!   with its own normal): a walkable one makes the character [`GroundState::Grounded`],
//!   an up-facing steep one [`GroundState::OnSteepGround`], none
//!   [`GroundState::InAir`]. A steep contact that is a ledge (a stair's nosing under the
//!   rounded bottom) counts as ground when a short ray just behind it finds walkable
//!   ground.
//! - **Platforms**: the character stores its ground body's pose; the next update moves it
//!   by that body's motion since (rotation included, exactly, so it does not drift on a
//!   turntable), sliding against everything but the platform.
//! - **Pushing**: a dynamic body the character walks into gets an impulse along the
//!   contact normal, the character's mass times the approach speed, at most
//!   [`CharacterDesc::max_push_force`] times the step: a crate slides, a heavy block
//!   does not.
//!
//! Everything runs in a fixed order on the character's own scratch (no allocation after
//! the first updates), so the same inputs give bit-identical results. Many characters
//! update in parallel with [`update_characters`].
//!
//! [`RigidCharacter`] is the alternative some games want (Jolt's `Character`): a dynamic
//! capsule that cannot turn, steered by its velocity, that weighs on what it stands on.

mod batch;
mod controller;
mod desc;
mod rigid;
mod slide;

pub use batch::update_characters;
pub use controller::CharacterController;
pub use desc::{
    CharacterDesc, CharacterError, CharacterGround, CharacterInput, CharacterPush, GroundState,
};
pub use rigid::{RigidCharacter, RigidCharacterDesc};
