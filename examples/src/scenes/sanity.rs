//! SCENES.md's sanity check of a finished run, from the dynamic bodies' final positions
//! alone, so it judges every engine's run the same way.

use joule_physics::math::Vec3;

use super::desc::SceneDesc;
use super::terrain::terrain_height;
use super::{CHAIN_LINKS, SceneKind};

/// What a finished run looks like: SCENES.md's sanity line and whether the scene stood.
#[derive(Clone, Debug)]
pub struct Sanity {
    /// The line to print.
    pub line: String,
    /// False when the engine failed the scene's check (its time does not count).
    pub ok: bool,
}

/// SCENES.md's sanity check from the dynamic bodies' final positions (creation order),
/// the number asleep and the simulated time since the start.
///
/// # Panics
/// When `positions` does not hold one position per dynamic body of `desc`.
#[must_use]
pub fn sanity(desc: &SceneDesc, positions: &[Vec3], asleep: usize, elapsed: f32) -> Sanity {
    let dynamic = desc.dynamic_indices();
    assert_eq!(
        dynamic.len(),
        positions.len(),
        "one position per dynamic body"
    );
    let start = |k: usize| desc.bodies[dynamic[k]].position;
    match desc.kind {
        SceneKind::Pyramid20 | SceneKind::PyramidBig | SceneKind::ManyPyramids => {
            let moved = (0..positions.len())
                .filter(|&k| positions[k].distance(start(k)) > 0.25)
                .count();
            // Each top's index among the dynamic bodies (the ground is body 0).
            let sags: Vec<f32> = desc
                .tops
                .iter()
                .filter_map(|t| dynamic.binary_search(t).ok())
                .map(|k| start(k).y - positions[k].y)
                .collect();
            let standing = sags.iter().filter(|s| s.abs() < 0.25).count();
            let sag = sags.iter().copied().fold(0.0f32, f32::max);
            Sanity {
                line: format!(
                    "tops near start height {standing}/{}; largest top sag {:.1} cm; \
                     boxes moved > 0.25 m: {moved}; asleep {asleep}",
                    sags.len(),
                    sag * 100.0
                ),
                ok: moved == 0,
            }
        }
        SceneKind::Free10k => {
            let ok = (0..positions.len())
                .filter(|&k| {
                    let v = desc.bodies[dynamic[k]].linear_velocity;
                    positions[k].distance(start(k) + v * elapsed) < 0.01
                })
                .count();
            Sanity {
                line: format!(
                    "spheres within 1 cm of x0 + v t: {ok}/{}; asleep {asleep}",
                    positions.len()
                ),
                ok: ok == positions.len(),
            }
        }
        SceneKind::Rain4k | SceneKind::Ragdolls => {
            let highest = positions
                .iter()
                .map(|p| p.y)
                .fold(f32::NEG_INFINITY, f32::max);
            let below = positions.iter().filter(|p| p.y < 0.0).count();
            Sanity {
                line: format!("highest y {highest:.2}; below ground {below}; asleep {asleep}"),
                ok: below == 0,
            }
        }
        SceneKind::ChainJoints => {
            let (stretch, lowest) = chain_stretch(&desc.chain_tops, positions);
            Sanity {
                line: format!(
                    "largest link stretch {:.3} mm; lowest y {lowest:.2}; asleep {asleep}",
                    stretch * 1e3
                ),
                // A chain that comes apart: more than 10 cm on a 0.5 m link.
                ok: stretch < 0.1,
            }
        }
        SceneKind::Terrain => {
            let below = positions
                .iter()
                .filter(|p| p.y < terrain_height(p.x, p.z) - 0.1)
                .count();
            let outside = positions
                .iter()
                .filter(|p| p.x.abs() > 64.0 || p.z.abs() > 64.0)
                .count();
            Sanity {
                line: format!(
                    "below the terrain surface {below}; outside the walls {outside}; \
                     asleep {asleep}"
                ),
                ok: below == 0 && outside == 0,
            }
        }
    }
}

/// chain_joints' figures from its chains' tops and its links' positions (creation
/// order, [`CHAIN_LINKS`] per chain): the largest link stretch (distance between
/// consecutive links, or the first link and its chain's top, minus its rest length:
/// 0.5 m, 0.25 m for the first) and the lowest y.
#[must_use]
pub fn chain_stretch(chain_tops: &[Vec3], positions: &[Vec3]) -> (f32, f32) {
    let mut stretch = 0.0f32;
    for (top, links) in chain_tops.iter().zip(positions.chunks(CHAIN_LINKS)) {
        let mut prev = *top;
        for (l, p) in links.iter().enumerate() {
            let rest = if l == 0 { 0.25 } else { 0.5 };
            stretch = stretch.max(p.distance(prev) - rest);
            prev = *p;
        }
    }
    let lowest = positions.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    (stretch, lowest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenes::describe;

    fn starts(desc: &SceneDesc) -> Vec<Vec3> {
        desc.bodies
            .iter()
            .filter(|b| b.is_dynamic())
            .map(|b| b.position)
            .collect()
    }

    #[test]
    fn sanity_flags_a_fallen_pyramid() {
        let desc = describe(SceneKind::Pyramid20);
        let mut pos = starts(&desc);
        assert!(sanity(&desc, &pos, 0, 1.0).ok);
        pos[100].y -= 0.5;
        assert!(!sanity(&desc, &pos, 0, 1.0).ok);
    }

    #[test]
    fn sanity_flags_a_broken_chain() {
        // At the start every link is at its rest length from the one before.
        let desc = describe(SceneKind::ChainJoints);
        let mut pos = starts(&desc);
        let (stretch, lowest) = chain_stretch(&desc.chain_tops, &pos);
        assert!(stretch.abs() < 1e-5, "stretch at rest {stretch}");
        assert_eq!(lowest, 20.0);
        assert!(sanity(&desc, &pos, 0, 0.0).ok);
        pos[CHAIN_LINKS + 7].x += 0.2;
        assert!(!sanity(&desc, &pos, 0, 0.0).ok);
    }

    #[test]
    fn sanity_flags_a_body_through_the_terrain() {
        let desc = describe(SceneKind::Terrain);
        let mut pos = starts(&desc);
        assert!(sanity(&desc, &pos, 0, 0.0).ok);
        let p = pos[5];
        pos[5].y = terrain_height(p.x, p.z) - 0.2;
        assert!(!sanity(&desc, &pos, 0, 0.0).ok);
    }
}
