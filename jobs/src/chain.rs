//! A chain of disjoint plans over one slice, run as one ordered team stage.
//!
//! A graph-coloured solver pass runs colour after colour: within a colour no two blocks
//! reach the same element (a [`DisjointPlan`] checks it), and between colours a
//! barrier makes every block of one colour wait for every block of the colour before.
//! A [`PlanChain`] keeps the order but drops the barriers: it is built from the colours'
//! plans and block bounds, and gives every block (an item of one ordered stage,
//! [`TeamScope::run_ordered`]) the blocks of earlier colours that last reached one of its
//! elements as dependencies. Every element then sees the same blocks in the same order as
//! with barriers, each after the one before has finished, so a deterministic pass stays
//! deterministic, bit for bit; only threads no longer wait for whole colours, and a pass
//! hands off once instead of once a colour.
//!
//! The chain is safe to use: it computes the dependencies itself and, when run, checks
//! that it is run with the plans (by their number, which every [`DisjointPlan::set`]
//! renews) and bounds it was built from.

use crate::disjoint::{DisjointChunk, DisjointError, DisjointPlan, SharedSlice};
use crate::team::TeamScope;
use crate::team_core::StageOrder;
use crate::trace::{ITEM_LABEL, ORDERED_GROUP_LABEL, ORDERED_PHASE_LABEL};

/// No item.
const NONE: u32 = u32::MAX;

/// The dependencies between the blocks of a chain of plans: each block of a plan waits
/// for the blocks of earlier plans that last reached one of its elements, so one ordered
/// team stage runs the whole chain in plan order, element by element. Build it when the
/// plans change ([`build`](Self::build)) and run it as often as they hold
/// ([`TeamScope::run_chain`]); it keeps its buffers.
#[derive(Clone, Debug, Default)]
pub struct PlanChain {
    order: StageOrder,
    /// Per item, its group and its block in the group.
    items: Vec<(u32, u32)>,
    /// Per group, the plan's number and where its bounds start in `bounds`.
    groups: Vec<(u64, usize)>,
    /// Every group's block bounds, one after the other.
    bounds: Vec<usize>,
    /// The length of the slice the plans are for.
    len: usize,
    /// Per element, the last item that reached it (scratch of `build`).
    last: Vec<u32>,
    /// Per item, the last item whose dependencies named it already (scratch of `build`).
    seen: Vec<u32>,
    /// The dependencies of the item being built (scratch of `build`).
    deps: Vec<u32>,
    /// Per group, the address of its items while it runs (scratch of `run_chain`, kept
    /// so a run allocates nothing).
    owned: Vec<usize>,
}

/// One group (a solver's colour) of a chain when it runs: its plan and block bounds as it
/// was built with, and per block the items it owns (`items[starts[k]..starts[k + 1]]`
/// for block `k`: a colour's constraint bundles).
#[derive(Debug)]
pub struct ChainGroup<'a, B> {
    /// The plan of the elements the group reaches.
    pub plan: &'a DisjointPlan,
    /// Block bounds in plan positions (as for [`DisjointPlan::chunks`]).
    pub bounds: &'a [usize],
    /// What the blocks own.
    pub items: &'a mut [B],
    /// Block bounds in `items` (one more than blocks, non-decreasing, within `items`).
    pub starts: &'a [usize],
}

impl PlanChain {
    /// An empty chain.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Blocks in the chain (items of its stage).
    #[must_use]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the chain has no block.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Forgets every group.
    pub fn clear(&mut self) {
        self.order.clear();
        self.items.clear();
        self.groups.clear();
        self.bounds.clear();
    }

    /// Rebuilds the chain from `groups` in order, each a plan over a slice of `len`
    /// elements and its block bounds (in plan positions, as for
    /// [`DisjointPlan::chunks`]): one pass over every plan's indices.
    ///
    /// # Errors
    /// [`DisjointError::Mismatch`] when a plan is for another length or its bounds do not
    /// cover it in order; the chain is then empty.
    pub fn build<'p>(
        &mut self,
        len: usize,
        groups: impl IntoIterator<Item = (&'p DisjointPlan, &'p [usize])>,
    ) -> Result<(), DisjointError> {
        self.clear();
        self.seen.clear();
        self.last.clear();
        self.last.resize(len, NONE);
        self.len = len;
        for (g, (plan, bounds)) in groups.into_iter().enumerate() {
            let ok = plan.slice_len() == len
                && bounds.first() == Some(&0)
                && bounds.last() == Some(&plan.indices().len())
                && bounds.windows(2).all(|w| w[0] <= w[1]);
            if !ok {
                self.clear();
                return Err(DisjointError::Mismatch);
            }
            self.groups.push((plan.id(), self.bounds.len()));
            self.bounds.extend_from_slice(bounds);
            for (k, w) in bounds.windows(2).enumerate() {
                let item = u32::try_from(self.items.len())
                    .ok()
                    .filter(|&i| i != NONE)
                    .expect("fewer than u32::MAX blocks");
                self.deps.clear();
                for &e in &plan.indices()[w[0]..w[1]] {
                    let l = self.last[e];
                    if l != NONE && self.seen[l as usize] != item {
                        self.seen[l as usize] = item;
                        self.deps.push(l);
                    }
                    self.last[e] = item;
                }
                self.seen.push(NONE);
                self.order.push(&self.deps);
                self.items.push((g as u32, k as u32));
            }
        }
        Ok(())
    }

    /// The blocks that block `i` (in chain order) waits for.
    #[must_use]
    pub fn deps(&self, i: usize) -> &[u32] {
        self.order.deps(i)
    }

    /// Whether `groups` (plans and bounds) are those the chain was built from, for a
    /// slice of `slice_len` elements.
    fn matches<'g>(
        &self,
        slice_len: usize,
        groups: impl ExactSizeIterator<Item = (&'g DisjointPlan, &'g [usize])>,
    ) -> bool {
        slice_len == self.len
            && groups.len() == self.groups.len()
            && groups.enumerate().all(|(g, (plan, bounds))| {
                let (id, start) = self.groups[g];
                let end = self.groups.get(g + 1).map_or(self.bounds.len(), |x| x.1);
                plan.id() == id && bounds == &self.bounds[start..end]
            })
    }
}

/// Whether `starts` cut `len` items into as many blocks as `bounds` has.
fn cuts(starts: &[usize], bounds: &[usize], len: usize) -> bool {
    starts.len() == bounds.len()
        && starts.first() == Some(&0)
        && starts.windows(2).all(|w| w[0] <= w[1])
        && starts.last().is_some_and(|&l| l <= len)
}

/// One group of a chain whose blocks own items of three kinds (a solver colour's joints:
/// ball bundles, angular bundles, other joints): as [`ChainGroup`], with three item
/// slices, each cut at its own `starts`.
#[derive(Debug)]
pub struct ChainGroup3<'a, A, B, C> {
    /// The plan of the elements the group reaches.
    pub plan: &'a DisjointPlan,
    /// Block bounds in plan positions (as for [`DisjointPlan::chunks`]).
    pub bounds: &'a [usize],
    /// What the blocks own, three kinds.
    pub items: (&'a mut [A], &'a mut [B], &'a mut [C]),
    /// Block bounds in each of `items` (each one more than blocks, non-decreasing, within
    /// its slice).
    pub starts: [&'a [usize]; 3],
}

/// Block `k`'s items of the slice at address `base`, cut at `starts`.
///
/// # Safety
/// `base` is the start of a live slice of at least `starts[k + 1]` `B`s that nothing else
/// reaches meanwhile, `starts[k] <= starts[k + 1]`, and no one else holds block `k`.
unsafe fn block_of<'b, B>(base: usize, starts: &[usize], k: usize) -> &'b mut [B] {
    let (first, end) = (starts[k], starts[k + 1]);
    // SAFETY: the caller's promise: in bounds, and block `k` of the slice is ours alone.
    unsafe { std::slice::from_raw_parts_mut((base as *mut B).add(first), end - first) }
}

impl TeamScope<'_> {
    /// Runs `f(block_items, chunk)` for every block of every group of `chain`, in one
    /// ordered stage: a block gets its items and the chunk of `slice` its plan gives it,
    /// after the blocks of earlier groups that last reached one of its elements (see
    /// [`PlanChain`]). Returns when all are done.
    ///
    /// # Panics
    /// When `groups` or `slice` are not what the chain was built from (their plans,
    /// bounds and slice length), or a group's `starts` do not cut its items (caller bugs:
    /// rebuild the chain when the plans change).
    pub fn run_chain<T: Send, B: Send + Sync, F>(
        &self,
        chain: &mut PlanChain,
        slice: &mut [T],
        groups: &mut [ChainGroup<'_, B>],
        f: F,
    ) where
        F: Fn(&mut [B], &mut DisjointChunk<'_, T>) + Sync,
    {
        assert!(
            chain.matches(slice.len(), groups.iter().map(|g| (g.plan, g.bounds)))
                && groups
                    .iter()
                    .all(|g| cuts(g.starts, g.bounds, g.items.len())),
            "run_chain: the groups and slice must be those the chain was built from"
        );
        let PlanChain {
            order,
            items,
            owned,
            ..
        } = chain;
        // Addresses, not pointers, so the closure is `Sync` whatever `B` is: each block's
        // items are reached by the one thread that claimed it, like a `&mut [B]` sent
        // to it, which `B: Send` allows.
        owned.clear();
        owned.extend(groups.iter_mut().map(|g| g.items.as_mut_ptr() as usize));
        let (owned, items) = (&*owned, &*items);
        let groups = &*groups;
        let shared = SharedSlice::new(slice);
        let item = |i: usize| {
            let (g, k) = (items[i].0 as usize, items[i].1 as usize);
            let group = &groups[g];
            // SAFETY: the starts cut the group's items (`cuts`, checked above), and block
            // `k` of group `g` is this item's alone: the stage claims each item once, and
            // a group's blocks are disjoint ranges of its items. The group's `&mut`
            // borrow lasts for this call, so nothing else reaches them.
            let owned = unsafe { block_of::<B>(owned[g], group.starts, k) };
            // SAFETY: the chunk reaches the elements at block `k`'s plan positions. No
            // other block of the group reaches them (the plan's indices are distinct and
            // blocks are disjoint position ranges). A block of another group that reaches
            // one of them is ordered against this one by the chain, built from these very
            // plans and bounds (`matches`): of the blocks reaching an element, each waits
            // for the one before it in chain order (its dependency, the element's last
            // reacher when it was built) to finish, so their uses happen one after the
            // other (the ordered stage's Release/Acquire on finishing).
            let mut chunk = unsafe { group.plan.shared_chunk(shared, group.bounds, k) }
                .expect("bounds checked against the chain");
            f(owned, &mut chunk);
        };
        self.drive(order, items, item);
    }

    /// [`run_chain`](Self::run_chain) for groups whose blocks own three kinds of items:
    /// `f(a, b, c, chunk)` for every block of every group, in one ordered stage.
    ///
    /// # Panics
    /// As [`run_chain`](Self::run_chain).
    pub fn run_chain3<T, A, B, C, F>(
        &self,
        chain: &mut PlanChain,
        slice: &mut [T],
        groups: &mut [ChainGroup3<'_, A, B, C>],
        f: F,
    ) where
        T: Send,
        A: Send + Sync,
        B: Send + Sync,
        C: Send + Sync,
        F: Fn(&mut [A], &mut [B], &mut [C], &mut DisjointChunk<'_, T>) + Sync,
    {
        assert!(
            chain.matches(slice.len(), groups.iter().map(|g| (g.plan, g.bounds)))
                && groups.iter().all(|g| {
                    cuts(g.starts[0], g.bounds, g.items.0.len())
                        && cuts(g.starts[1], g.bounds, g.items.1.len())
                        && cuts(g.starts[2], g.bounds, g.items.2.len())
                }),
            "run_chain3: the groups and slice must be those the chain was built from"
        );
        let PlanChain {
            order,
            items,
            owned,
            ..
        } = chain;
        // Addresses, three a group, as in `run_chain`.
        owned.clear();
        for g in groups.iter_mut() {
            owned.push(g.items.0.as_mut_ptr() as usize);
            owned.push(g.items.1.as_mut_ptr() as usize);
            owned.push(g.items.2.as_mut_ptr() as usize);
        }
        let (owned, items) = (&*owned, &*items);
        let groups = &*groups;
        let shared = SharedSlice::new(slice);
        let item = |i: usize| {
            let (g, k) = (items[i].0 as usize, items[i].1 as usize);
            let group = &groups[g];
            // SAFETY: as in `run_chain`, for each of the three slices: its starts cut it
            // (`cuts`), and block `k` of each is this item's alone.
            let a = unsafe { block_of::<A>(owned[3 * g], group.starts[0], k) };
            // SAFETY: as for `a`.
            let b = unsafe { block_of::<B>(owned[3 * g + 1], group.starts[1], k) };
            // SAFETY: as for `a`.
            let c = unsafe { block_of::<C>(owned[3 * g + 2], group.starts[2], k) };
            // SAFETY: as in `run_chain`: the chain orders every two blocks that reach a
            // common element, and it was built from these plans and bounds.
            let mut chunk = unsafe { group.plan.shared_chunk(shared, group.bounds, k) }
                .expect("bounds checked against the chain");
            f(a, b, c, &mut chunk);
        };
        self.drive(order, items, item);
    }

    /// Runs a chain's items: as one ordered stage, or, traced on one thread, in chain
    /// order with each group in a span of its own (for a scaling model).
    fn drive(&self, order: &mut StageOrder, items: &[(u32, u32)], item: impl Fn(usize) + Sync) {
        let jobs = self.jobs();
        if jobs.tracing() && jobs.num_threads() == 1 {
            // A one-thread trace for a scaling model: the items in chain order (their
            // dependencies are met by that order alone), each group in a span of its own.
            let stage = jobs.now_ns();
            let mut group = (items.first().map_or(0, |x| x.0), stage);
            for (i, &(g, _)) in items.iter().enumerate() {
                if g != group.0 {
                    let now = jobs.now_ns();
                    jobs.record_span(ORDERED_GROUP_LABEL, group.1, now);
                    group = (g, now);
                }
                let t = jobs.now_ns();
                item(i);
                jobs.record_span(ITEM_LABEL, t, jobs.now_ns());
            }
            if !items.is_empty() {
                jobs.record_span(ORDERED_GROUP_LABEL, group.1, jobs.now_ns());
            }
            jobs.record_span(ORDERED_PHASE_LABEL, stage, jobs.now_ns());
            return;
        }
        self.run_ordered(order, item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobSystem, Team};

    /// Three groups over 6 elements; element sums record the order they were reached in.
    #[test]
    fn a_chain_waits_for_the_last_reacher_of_each_element_and_matches_the_serial_order() {
        let mut plans = [
            DisjointPlan::new(),
            DisjointPlan::new(),
            DisjointPlan::new(),
        ];
        plans[0].set(6, [0, 1, 2, 3]).unwrap();
        plans[1].set(6, [4, 1, 5]).unwrap();
        plans[2].set(6, [3, 4, 0, 5]).unwrap();
        let bounds: [&[usize]; 3] = [&[0, 2, 4], &[0, 1, 3], &[0, 2, 4]];
        let mut chain = PlanChain::new();
        chain
            .build(6, plans.iter().zip(bounds.iter().copied()))
            .unwrap();
        assert_eq!(chain.len(), 6);
        // Group 1 block 0 reaches 4 (nobody before); block 1 reaches 1 (group 0 block 0)
        // and 5. Group 2 block 0 reaches 3 (group 0 block 1) and 4 (group 1 block 0);
        // block 1 reaches 0 (group 0 block 0) and 5 (group 1 block 1).
        let deps: Vec<&[u32]> = (0..6).map(|i| chain.deps(i)).collect();
        assert_eq!(deps, [&[][..], &[], &[], &[0], &[1, 2], &[0, 3]]);

        // Run with two threads many times: each element's history must be the serial one.
        let jobs = JobSystem::new(1).unwrap();
        let mut team = Team::new();
        let serial = {
            let mut v = vec![0u64; 6];
            for (g, (plan, b)) in plans.iter().zip(bounds).enumerate() {
                for (k, mut chunk) in plan.chunks(&mut v, b).unwrap().enumerate() {
                    for p in chunk.positions() {
                        let x = chunk.get_mut(p);
                        *x = *x * 7 + (g * 2 + k) as u64 + 1;
                    }
                }
            }
            v
        };
        for _ in 0..200 {
            let mut v = vec![0u64; 6];
            // Each block owns its tag (group * 2 + block + 1) and marks that it ran.
            let mut owned = [vec![1u64, 2], vec![3, 4], vec![5, 6]];
            let [o0, o1, o2] = &mut owned;
            let mut groups: Vec<ChainGroup<'_, u64>> = [o0, o1, o2]
                .into_iter()
                .zip(plans.iter().zip(bounds))
                .map(|(items, (plan, bounds))| ChainGroup {
                    plan,
                    bounds,
                    items: &mut items[..],
                    starts: &[0, 1, 2],
                })
                .collect();
            jobs.team(&mut team, 1, |t| {
                t.run_chain(&mut chain, &mut v, &mut groups, |own, chunk| {
                    let tag = own[0];
                    for p in chunk.positions() {
                        let x = chunk.get_mut(p);
                        *x = *x * 7 + tag;
                    }
                    own[0] += 100;
                });
            });
            drop(groups);
            assert_eq!(v, serial, "each element reached in chain order");
            let ran: Vec<u64> = owned.iter().flatten().copied().collect();
            assert_eq!(ran, [101, 102, 103, 104, 105, 106], "each block once");
        }
    }

    /// Two groups whose blocks own three kinds of items, cut at different places.
    #[test]
    fn a_chain_of_three_item_kinds_hands_each_block_its_own_items() {
        let (mut p0, mut p1) = (DisjointPlan::new(), DisjointPlan::new());
        p0.set(4, [0, 1, 2, 3]).unwrap();
        p1.set(4, [1, 2]).unwrap();
        let b0: &[usize] = &[0, 2, 4];
        let b1: &[usize] = &[0, 2];
        let mut chain = PlanChain::new();
        chain.build(4, [(&p0, b0), (&p1, b1)]).unwrap();
        assert_eq!(chain.deps(2), [0, 1]);
        let jobs = JobSystem::new(1).unwrap();
        let mut team = Team::new();
        for _ in 0..100 {
            let mut v = vec![1u64; 4];
            // Group 0: 3 `a`s cut 1 | 2, no `b`, 2 `c`s cut 0 | 2; group 1: one of each.
            let (mut a0, mut b0i, mut c0) = (vec![0u8; 3], Vec::<u16>::new(), vec![0u32; 2]);
            let (mut a1, mut b1i, mut c1) = (vec![0u8; 1], vec![0u16; 1], vec![0u32; 1]);
            let mut groups = [
                ChainGroup3 {
                    plan: &p0,
                    bounds: b0,
                    items: (&mut a0[..], &mut b0i[..], &mut c0[..]),
                    starts: [&[0, 1, 3][..], &[0, 0, 0][..], &[0, 0, 2][..]],
                },
                ChainGroup3 {
                    plan: &p1,
                    bounds: b1,
                    items: (&mut a1[..], &mut b1i[..], &mut c1[..]),
                    starts: [&[0, 1][..], &[0, 1][..], &[0, 1][..]],
                },
            ];
            jobs.team(&mut team, 1, |t| {
                t.run_chain3(&mut chain, &mut v, &mut groups, |a, b, c, pair| {
                    let p = pair.positions().start;
                    let (x, y) = pair.pair_mut(p, p + 1);
                    (*x, *y) = (
                        *x + *y,
                        *x * *y + (a.len() + 10 * b.len() + 100 * c.len()) as u64,
                    );
                    a.iter_mut().for_each(|n| *n += 1);
                    b.iter_mut().for_each(|n| *n += 1);
                    c.iter_mut().for_each(|n| *n += 1);
                });
            });
            // Block 0 of group 0: (2, 1 + 1) on bodies 0, 1; block 1: (2, 1 + 202) on 2, 3;
            // then group 1 on bodies 1, 2: (2 + 2, 2 * 2 + 111).
            assert_eq!(v, [2, 4, 115, 203]);
            assert!(a0.iter().chain(&a1).all(|&n| n == 1), "each `a` once");
            assert!(
                b1i == [1] && c0 == [1, 1] && c1 == [1],
                "each `b` and `c` once"
            );
        }
    }

    #[test]
    fn a_chain_refuses_other_plans_and_mismatched_bounds() {
        let mut a = DisjointPlan::new();
        a.set(4, [0, 1]).unwrap();
        let mut chain = PlanChain::new();
        assert_eq!(
            chain.build(5, [(&a, &[0, 2][..])]),
            Err(DisjointError::Mismatch),
            "a plan for another length"
        );
        assert_eq!(
            chain.build(4, [(&a, &[0, 1][..])]),
            Err(DisjointError::Mismatch),
            "bounds short of the plan"
        );
        assert!(chain.is_empty());
        chain.build(4, [(&a, &[0, 2][..])]).unwrap();
        let ok = chain.clone();
        a.set(4, [0, 1]).unwrap();
        let mut v = vec![0; 4];
        let mut items = [0u8];
        let groups = [ChainGroup {
            plan: &a,
            bounds: &[0, 2],
            items: &mut items[..],
            starts: &[0, 1],
        }];
        let plans = || groups.iter().map(|g| (g.plan, g.bounds));
        assert!(!ok.matches(v.len(), plans()), "the plan was set again");
        chain.build(4, [(&a, &[0, 2][..])]).unwrap();
        assert!(chain.matches(v.len(), plans()));
        assert!(!chain.matches(3, plans()), "another slice length");
        assert!(
            cuts(&[0, 1], &[0, 2], 1) && !cuts(&[0, 2], &[0, 2], 1),
            "starts cut items"
        );
        v.clear();
    }
}
