//! Many characters at once: each plans its move in parallel on the world's job system
//! against the world as of the last step, then the pushes are applied in character order.
//!
//! A character does not see the others move during the batch (each reads only the
//! world), so the result does not depend on which thread planned which character, nor
//! on the thread count. Characters block each other through their own bodies
//! ([`CharacterController::attach_body`]): each sees the others' bodies where those
//! characters stood after the last batch (the step in between brings each body there),
//! stops a skin short of them, and two that walk into each other in the same batch are
//! pushed apart by the next one's skin restore, in character order.

use crate::character::controller::CharacterController;
use crate::character::desc::{CharacterError, CharacterInput};
use crate::collision::query::QueryFilter;
use crate::world::World;

/// Characters below this many per job are not split further.
const GRAIN: usize = 4;

/// Updates every character of `characters` with the input of the same index (like
/// [`CharacterController::update`]), planning them in parallel and then applying their
/// pushes in order. Every input is checked first: on error nothing moves.
pub fn update_characters(
    world: &mut World,
    characters: &mut [CharacterController],
    inputs: &[CharacterInput],
    dt: f32,
    filter: &QueryFilter,
) -> Result<(), CharacterError> {
    if inputs.len() != characters.len() {
        #[allow(clippy::cast_precision_loss)]
        return Err(CharacterError::OutOfRange {
            field: "inputs",
            expected: "one per character (its length)",
            actual: inputs.len() as f32,
        });
    }
    for input in inputs {
        CharacterController::check_input(dt, input)?;
    }
    let scene: &World = world;
    scene
        .jobs()
        .parallel_for_slice(characters, GRAIN, |start, chunk| {
            for (k, c) in chunk.iter_mut().enumerate() {
                c.advance(scene, dt, &inputs[start + k], filter);
            }
        });
    for c in characters.iter() {
        c.apply_pushes(world);
    }
    Ok(())
}
