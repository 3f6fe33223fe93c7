//! The constraint graph: constraints coloured so that no two constraints of one colour
//! share a dynamic body.
//!
//! ```text
//!   colour 0: c0(A,B)  c3(C,D)  c5(E,ground) ...   <- one parallel stage, no shared body
//!   colour 1: c1(B,C)  c4(D,E) ...                 <- next stage
//!   ...
//!   overflow: constraints that fit no colour, solved serially after the colours
//! ```
//!
//! Static bodies do not count: a thousand boxes resting on one ground box can all be in
//! colour 0, because nobody writes the ground's velocity. Kinematic bodies do not count
//! either (their velocity is never written by the solver).
//!
//! Colours are assigned serially, in constraint order (contacts sorted by id, joints after
//! them), each to the lowest colour whose body set contains neither of its dynamic bodies
//! (Box2D v3's greedy colouring). The result depends only on that order, never on thread
//! count. Body sets are bitsets over awake-body indices, reused step to step.

/// Number of colours before the overflow colour. Box2D uses 24; a 2D pyramid needs about
/// 6, a dense 3D pile up to 12.
pub const COLOR_COUNT: usize = 16;

/// What kind of constraint a graph entry is (joints join the same graph later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConstraintKind {
    /// A contact manifold.
    Contact,
    /// A joint.
    Joint,
}

/// One constraint to colour: its id and the awake-body indices of its dynamic bodies
/// (`None` for a static, kinematic or sleeping side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphEntry {
    /// Contact or joint.
    pub kind: ConstraintKind,
    /// Index in the contact or joint array.
    pub id: u32,
    /// Awake index of the first body if it is dynamic.
    pub body_a: Option<u32>,
    /// Awake index of the second body if it is dynamic.
    pub body_b: Option<u32>,
}

/// One colour: the constraints in it, in colouring order.
#[derive(Clone, Debug, Default)]
pub struct GraphColor {
    /// Bit per awake body: used by a constraint of this colour.
    bodies: Vec<u64>,
    /// Entries of this colour.
    pub entries: Vec<GraphEntry>,
}

impl GraphColor {
    #[inline]
    fn uses(&self, b: u32) -> bool {
        self.bodies[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    #[inline]
    fn mark(&mut self, b: u32) {
        self.bodies[(b / 64) as usize] |= 1 << (b % 64);
    }
}

/// The coloured constraint graph of one step.
#[derive(Clone, Debug)]
pub struct ConstraintGraph {
    /// The colours, `COLOR_COUNT` of them.
    pub colors: Vec<GraphColor>,
    /// Constraints that fit no colour, solved serially.
    pub overflow: Vec<GraphEntry>,
}

impl Default for ConstraintGraph {
    fn default() -> Self {
        Self {
            colors: vec![GraphColor::default(); COLOR_COUNT],
            overflow: Vec::new(),
        }
    }
}

impl ConstraintGraph {
    /// Colours `entries` (in the given order) for `awake_count` awake bodies, replacing the
    /// previous colouring. Buffers are reused.
    pub fn build(&mut self, awake_count: usize, entries: impl IntoIterator<Item = GraphEntry>) {
        let words = awake_count.div_ceil(64);
        for c in &mut self.colors {
            c.entries.clear();
            c.bodies.clear();
            c.bodies.resize(words, 0);
        }
        self.overflow.clear();
        'entries: for e in entries {
            // A constraint with no dynamic body constrains nothing the solver moves.
            if e.body_a.is_none() && e.body_b.is_none() {
                continue;
            }
            for c in &mut self.colors {
                let free =
                    e.body_a.is_none_or(|b| !c.uses(b)) && e.body_b.is_none_or(|b| !c.uses(b));
                if free {
                    if let Some(b) = e.body_a {
                        c.mark(b);
                    }
                    if let Some(b) = e.body_b {
                        c.mark(b);
                    }
                    c.entries.push(e);
                    continue 'entries;
                }
            }
            self.overflow.push(e);
        }
    }

    /// Number of coloured (non-overflow) constraints.
    #[must_use]
    pub fn colored_len(&self) -> usize {
        self.colors.iter().map(|c| c.entries.len()).sum()
    }

    /// The colours that hold at least one constraint.
    pub fn active_colors(&self) -> impl Iterator<Item = (usize, &GraphColor)> {
        self.colors
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.entries.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u32, a: Option<u32>, b: Option<u32>) -> GraphEntry {
        GraphEntry {
            kind: ConstraintKind::Contact,
            id,
            body_a: a,
            body_b: b,
        }
    }

    #[test]
    fn no_colour_shares_a_dynamic_body_and_statics_do_not_count() {
        // A chain 0-1-2-3-...-99 plus every body touching the ground (static).
        let mut entries = Vec::new();
        for i in 0..99u32 {
            entries.push(entry(i, Some(i), Some(i + 1)));
        }
        for i in 0..100u32 {
            entries.push(entry(100 + i, Some(i), None));
        }
        let mut g = ConstraintGraph::default();
        g.build(100, entries.iter().copied());
        assert_eq!(g.colored_len() + g.overflow.len(), entries.len());
        for c in &g.colors {
            let mut seen = std::collections::HashSet::new();
            for e in &c.entries {
                for b in [e.body_a, e.body_b].into_iter().flatten() {
                    assert!(seen.insert(b), "body {b} twice in one colour");
                }
            }
        }
        // A chain needs 2 colours, the ground contacts one more each: 3 colours at most.
        assert!(g.active_colors().count() <= 3);
        assert!(g.overflow.is_empty());
    }

    #[test]
    fn too_many_constraints_on_one_body_overflow_deterministically() {
        // 40 constraints all on body 0: each colour can take only one.
        let entries: Vec<_> = (0..40u32).map(|i| entry(i, Some(0), Some(i + 1))).collect();
        let mut g = ConstraintGraph::default();
        g.build(41, entries.iter().copied());
        assert_eq!(g.colored_len(), COLOR_COUNT);
        assert_eq!(g.overflow.len(), 40 - COLOR_COUNT);
        let ids: Vec<u32> = g.overflow.iter().map(|e| e.id).collect();
        assert_eq!(
            ids,
            (COLOR_COUNT as u32..40).collect::<Vec<_>>(),
            "overflow keeps order"
        );
        let mut g2 = ConstraintGraph::default();
        g2.build(41, entries.iter().copied());
        assert_eq!(g.overflow, g2.overflow);
    }
}
