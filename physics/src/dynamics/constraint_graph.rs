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
//! count. The body sets are kept the other way round: per awake body, a bit mask of the
//! colours it is in, so a constraint's lowest free colour is the lowest clear bit of its
//! two bodies' masks, one step instead of a look at every colour's set.

/// Number of colours before the overflow colour. Box2D uses 24; a 2D pyramid needs about
/// 6, a dense 3D pile up to 12.
pub const COLOR_COUNT: usize = 16;
/// The colours a body may be in, as a mask (`BodyColors`).
const ALL_COLORS: BodyColors = BodyColors::MAX >> (BodyColors::BITS as usize - COLOR_COUNT);
/// A set of colours, bit `c` for colour `c`.
type BodyColors = u16;
const _: () = assert!(
    COLOR_COUNT <= BodyColors::BITS as usize,
    "a mask holds every colour"
);

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
    /// Entries of this colour.
    pub entries: Vec<GraphEntry>,
    /// Scratch of [`GraphColor::group_by`], kept so a warm step does not allocate.
    spare: Vec<GraphEntry>,
}

impl GraphColor {
    /// Reorders the entries by `key` (below `KEYS`), keeping their order within a key: a
    /// counting sort, two passes over the entries.
    ///
    /// # Panics
    /// If `key` gives `KEYS` or more.
    pub fn group_by<const KEYS: usize>(&mut self, key: impl Fn(&GraphEntry) -> usize) {
        let mut start = [0usize; KEYS];
        for e in &self.entries {
            start[key(e)] += 1;
        }
        let mut sum = 0;
        for s in &mut start {
            (*s, sum) = (sum, sum + *s);
        }
        // Every slot is overwritten below; the copy only sizes the buffer.
        self.spare.clone_from(&self.entries);
        for e in &self.entries {
            let k = key(e);
            self.spare[start[k]] = *e;
            start[k] += 1;
        }
        std::mem::swap(&mut self.entries, &mut self.spare);
    }
}

/// The coloured constraint graph of one step.
#[derive(Clone, Debug)]
pub struct ConstraintGraph {
    /// The colours, `COLOR_COUNT` of them.
    pub colors: Vec<GraphColor>,
    /// Constraints that fit no colour, solved serially.
    pub overflow: Vec<GraphEntry>,
    /// Per awake body, the colours holding a constraint on it (scratch of `build`).
    body_colors: Vec<BodyColors>,
}

impl Default for ConstraintGraph {
    fn default() -> Self {
        Self {
            colors: vec![GraphColor::default(); COLOR_COUNT],
            overflow: Vec::new(),
            body_colors: Vec::new(),
        }
    }
}

impl ConstraintGraph {
    /// Colours `entries` (in the given order) for `awake_count` awake bodies, replacing the
    /// previous colouring. Buffers are reused.
    pub fn build(&mut self, awake_count: usize, entries: impl IntoIterator<Item = GraphEntry>) {
        for c in &mut self.colors {
            c.entries.clear();
        }
        self.overflow.clear();
        self.body_colors.clear();
        self.body_colors.resize(awake_count, 0);
        let masks = &mut self.body_colors;
        for e in entries {
            // A constraint with no dynamic body constrains nothing the solver moves.
            if e.body_a.is_none() && e.body_b.is_none() {
                continue;
            }
            let used = |b: Option<u32>| b.map_or(0, |b| masks[b as usize]);
            let free = !(used(e.body_a) | used(e.body_b)) & ALL_COLORS;
            if free == 0 {
                self.overflow.push(e);
                continue;
            }
            let color = free.trailing_zeros() as usize;
            for b in [e.body_a, e.body_b].into_iter().flatten() {
                masks[b as usize] |= 1 << color;
            }
            self.colors[color].entries.push(e);
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

    /// The greedy colouring as the docs state it, colour by colour: the reference the
    /// mask-based `build` must match entry for entry.
    fn reference(awake: usize, entries: &[GraphEntry]) -> (Vec<Vec<GraphEntry>>, Vec<GraphEntry>) {
        let mut colors = vec![(vec![false; awake], Vec::new()); COLOR_COUNT];
        let mut overflow = Vec::new();
        'entries: for &e in entries {
            let bodies = [e.body_a, e.body_b];
            if bodies.iter().all(Option::is_none) {
                continue;
            }
            for (used, list) in &mut colors {
                if bodies.iter().flatten().all(|&b| !used[b as usize]) {
                    for &b in bodies.iter().flatten() {
                        used[b as usize] = true;
                    }
                    list.push(e);
                    continue 'entries;
                }
            }
            overflow.push(e);
        }
        (colors.into_iter().map(|(_, l)| l).collect(), overflow)
    }

    #[test]
    fn colouring_matches_the_greedy_reference_on_random_graphs() {
        // A small LCG: dense random graphs with static sides, lone bodies and hubs that
        // overflow, on a reused graph so stale masks would show.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u32| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) % u64::from(n)) as u32
        };
        let mut g = ConstraintGraph::default();
        for round in 0..20 {
            let awake = 5 + next(200) as usize;
            let entries: Vec<GraphEntry> = (0..(round * 60 + 30))
                .map(|id| {
                    let mut body = || match next(10) {
                        0 => None,
                        1 => Some(0), // a hub: more constraints than colours
                        _ => Some(next(awake as u32)),
                    };
                    let (a, b) = (body(), body());
                    entry(id, a, b.filter(|&b| Some(b) != a))
                })
                .collect();
            g.build(awake, entries.iter().copied());
            let (colors, overflow) = reference(awake, &entries);
            for (c, expected) in g.colors.iter().zip(&colors) {
                assert_eq!(&c.entries, expected, "round {round}");
            }
            assert_eq!(g.overflow, overflow, "round {round}");
        }
    }

    #[test]
    fn grouping_by_key_is_a_stable_counting_sort() {
        let mut c = GraphColor::default();
        let keys = [3usize, 1, 4, 1, 0, 3, 4, 2, 1, 0, 4];
        c.entries = (0..keys.len() as u32)
            .map(|id| entry(id, Some(id), None))
            .collect();
        let mut expected = c.entries.clone();
        expected.sort_by_key(|e| keys[e.id as usize]);
        c.group_by::<5>(|e| keys[e.id as usize]);
        assert_eq!(c.entries, expected);
        // Reused: an empty colour stays empty.
        c.entries.clear();
        c.group_by::<5>(|e| keys[e.id as usize]);
        assert!(c.entries.is_empty());
    }
}
