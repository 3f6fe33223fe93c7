//! A dynamic AABB tree (bounding volume hierarchy) for the broad phase.
//!
//! Leaves hold fattened AABBs of proxies; internal nodes hold the union of their children.
//! Insertion walks down choosing the child whose enlargement costs least by surface area
//! (the SAH cost of Goldsmith & Salmon, as in Box2D), then walks back up refitting and
//! applying tree rotations that reduce the area of the grandchildren (Kopta et al., "Fast,
//! Effective BVH Updates for Animated Scenes", 2012) so the tree stays shallow without a
//! full AVL balance. `rebuild` rebuilds the whole tree top-down with a binned SAH, for
//! quality after many moves.
//!
//! Nodes live in a `Vec` with a free list: no allocation per operation once warm.
//! Queries use a fixed stack on the call frame.

use crate::geometry::aabb::Aabb;
use crate::math::Vec3A;

/// A leaf handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProxyId(pub u32);

pub(crate) const NULL: u32 = u32::MAX;
/// Deepest query stack; a tree of 2^32 leaves balanced within a factor 2 fits.
pub(crate) const STACK: usize = 256;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) aabb: Aabb,
    pub(crate) parent: u32,
    pub(crate) child1: u32,
    pub(crate) child2: u32,
    /// Leaf: user data. Free node: next free.
    pub(crate) user_data: u32,
    pub(crate) height: i32,
}

impl Node {
    pub(crate) fn is_leaf(&self) -> bool {
        self.child1 == NULL
    }
}

/// A dynamic AABB tree.
#[derive(Clone, Debug)]
pub struct DynamicTree {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: u32,
    pub(crate) free: u32,
    pub(crate) leaves: usize,
    /// The rebuild's buffers, kept so a warm rebuild does not allocate (not part of the
    /// tree's state).
    pub(crate) scratch: RebuildScratch,
}

/// Buffers of [`DynamicTree::rebuild`].
#[derive(Clone, Debug, Default)]
pub(crate) struct RebuildScratch {
    leaves: Vec<u32>,
    stack: Vec<u32>,
}

impl Default for DynamicTree {
    fn default() -> Self {
        Self::new()
    }
}

impl DynamicTree {
    /// An empty tree.
    #[must_use]
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            root: NULL,
            free: NULL,
            leaves: 0,
            scratch: RebuildScratch::default(),
        }
    }

    fn alloc(&mut self) -> u32 {
        if self.free != NULL {
            let i = self.free;
            self.free = self.nodes[i as usize].user_data;
            return i;
        }
        self.nodes.push(Node {
            aabb: Aabb::EMPTY,
            parent: NULL,
            child1: NULL,
            child2: NULL,
            user_data: 0,
            height: 0,
        });
        (self.nodes.len() - 1) as u32
    }

    fn release(&mut self, i: u32) {
        let n = &mut self.nodes[i as usize];
        n.height = -1;
        n.child1 = NULL;
        n.child2 = NULL;
        n.parent = NULL;
        n.user_data = self.free;
        self.free = i;
    }

    /// Number of proxies.
    #[must_use]
    pub fn proxy_count(&self) -> usize {
        self.leaves
    }

    /// Inserts a proxy with the given (already fattened) box.
    pub fn create_proxy(&mut self, fat_aabb: Aabb, user_data: u32) -> ProxyId {
        let leaf = self.alloc();
        self.nodes[leaf as usize] = Node {
            aabb: fat_aabb,
            parent: NULL,
            child1: NULL,
            child2: NULL,
            user_data,
            height: 0,
        };
        self.insert_leaf(leaf);
        self.leaves += 1;
        ProxyId(leaf)
    }

    /// Inserts many proxies at once (Jolt's `AddBodiesPrepare` / `AddBodiesFinalize`):
    /// their leaves are sorted along a Morton (Z-order) curve through their centres and
    /// paired up into a balanced subtree (a linear BVH), and the subtree is inserted as
    /// one node, so the batch costs one sort and one linear build instead of `n` descents
    /// and refits with their rotations. Appends the new ids to `out`, in the order of
    /// `boxes` (each an already fattened box and its user data). The result depends only
    /// on the tree and the boxes (ties in the curve order are broken by leaf index).
    pub fn create_proxies(&mut self, boxes: &[(Aabb, u32)], out: &mut Vec<ProxyId>) {
        if boxes.is_empty() {
            return;
        }
        let mut centres = Aabb::EMPTY;
        for (b, _) in boxes {
            centres = centres.including(b.center());
        }
        let extent = centres.max - centres.min;
        let scale = Vec3A::select(
            extent.cmpgt(Vec3A::ZERO),
            Vec3A::splat(1023.0) / extent,
            Vec3A::ZERO,
        );
        let mut keyed = Vec::with_capacity(boxes.len());
        for &(fat_aabb, user_data) in boxes {
            let leaf = self.alloc();
            self.nodes[leaf as usize] = Node {
                aabb: fat_aabb,
                parent: NULL,
                child1: NULL,
                child2: NULL,
                user_data,
                height: 0,
            };
            out.push(ProxyId(leaf));
            let q = ((fat_aabb.center() - centres.min) * scale).to_array();
            keyed.push((morton(q[0] as u32, q[1] as u32, q[2] as u32), leaf));
        }
        self.leaves += boxes.len();
        keyed.sort_unstable();
        let mut leaves: Vec<u32> = keyed.into_iter().map(|(_, leaf)| leaf).collect();
        let sub = self.build_sorted(&mut leaves);
        self.nodes[sub as usize].parent = NULL;
        // `insert_leaf` places any node by its box: a subtree goes in whole.
        self.insert_leaf(sub);
    }

    /// A balanced tree over leaves already in curve order: halves, recursively.
    fn build_sorted(&mut self, leaves: &mut [u32]) -> u32 {
        if leaves.len() == 1 {
            return leaves[0];
        }
        let (left, right) = leaves.split_at_mut(leaves.len() / 2);
        let a = self.build_sorted(left);
        let b = self.build_sorted(right);
        self.join(a, b)
    }

    /// A new internal node over subtrees `a` and `b` (the batch builders' step).
    fn join(&mut self, a: u32, b: u32) -> u32 {
        let p = self.alloc();
        let (na, nb) = (self.nodes[a as usize], self.nodes[b as usize]);
        self.nodes[p as usize] = Node {
            aabb: na.aabb.union(&nb.aabb),
            parent: NULL,
            child1: a,
            child2: b,
            user_data: 0,
            height: 1 + na.height.max(nb.height),
        };
        self.nodes[a as usize].parent = p;
        self.nodes[b as usize].parent = p;
        p
    }

    /// Removes a proxy. Panics on an id that is not a live proxy (a broad-phase bug).
    pub fn destroy_proxy(&mut self, id: ProxyId) {
        assert!(
            self.is_leaf(id),
            "destroy_proxy: {id:?} is not a live proxy"
        );
        self.remove_leaf(id.0);
        self.release(id.0);
        self.leaves -= 1;
    }

    /// Gives a proxy a new box (remove and reinsert).
    pub fn move_proxy(&mut self, id: ProxyId, fat_aabb: Aabb) {
        assert!(self.is_leaf(id), "move_proxy: {id:?} is not a live proxy");
        self.remove_leaf(id.0);
        self.nodes[id.0 as usize].aabb = fat_aabb;
        self.insert_leaf(id.0);
    }

    /// Gives a proxy a new fat box without moving it in the tree (Box2D v3's enlarged
    /// proxies): its ancestors grow until one already holds the box. They keep holding
    /// the old box too, so queries stay exact but visit more nodes until the next
    /// [`DynamicTree::rebuild`]; far cheaper than a removal and reinsertion when many
    /// proxies move every step and the tree is rebuilt anyway.
    pub fn enlarge_proxy(&mut self, id: ProxyId, fat_aabb: Aabb) {
        assert!(
            self.is_leaf(id),
            "enlarge_proxy: {id:?} is not a live proxy"
        );
        self.nodes[id.0 as usize].aabb = fat_aabb;
        let mut index = self.nodes[id.0 as usize].parent;
        while index != NULL {
            let node = &mut self.nodes[index as usize];
            if node.aabb.contains(&fat_aabb) {
                break;
            }
            node.aabb = node.aabb.union(&fat_aabb);
            index = node.parent;
        }
    }

    fn is_leaf(&self, id: ProxyId) -> bool {
        self.nodes
            .get(id.0 as usize)
            .is_some_and(|n| n.height == 0 && n.is_leaf())
    }

    /// The proxy's fat box.
    #[must_use]
    pub fn fat_aabb(&self, id: ProxyId) -> Aabb {
        self.nodes[id.0 as usize].aabb
    }

    /// The proxy's user data.
    #[must_use]
    pub fn user_data(&self, id: ProxyId) -> u32 {
        self.nodes[id.0 as usize].user_data
    }

    fn insert_leaf(&mut self, leaf: u32) {
        if self.root == NULL {
            self.root = leaf;
            self.nodes[leaf as usize].parent = NULL;
            return;
        }
        let leaf_aabb = self.nodes[leaf as usize].aabb;
        // Descend by the SAH cost of inserting below each child.
        let mut index = self.root;
        while !self.nodes[index as usize].is_leaf() {
            let n = self.nodes[index as usize];
            let area = n.aabb.surface_area();
            let combined = n.aabb.union(&leaf_aabb).surface_area();
            let cost = 2.0 * combined;
            let inherited = 2.0 * (combined - area);
            let child_cost = |c: u32| {
                let cn = &self.nodes[c as usize];
                let u = cn.aabb.union(&leaf_aabb).surface_area();
                if cn.is_leaf() {
                    u + inherited
                } else {
                    u - cn.aabb.surface_area() + inherited
                }
            };
            let (c1, c2) = (child_cost(n.child1), child_cost(n.child2));
            if cost < c1 && cost < c2 {
                break;
            }
            index = if c1 <= c2 { n.child1 } else { n.child2 };
        }
        let sibling = index;
        let old_parent = self.nodes[sibling as usize].parent;
        let new_parent = self.alloc();
        let sib_aabb = self.nodes[sibling as usize].aabb;
        let sib_height = self.nodes[sibling as usize].height;
        self.nodes[new_parent as usize] = Node {
            aabb: leaf_aabb.union(&sib_aabb),
            parent: old_parent,
            child1: sibling,
            child2: leaf,
            user_data: 0,
            height: sib_height + 1,
        };
        self.nodes[sibling as usize].parent = new_parent;
        self.nodes[leaf as usize].parent = new_parent;
        if old_parent == NULL {
            self.root = new_parent;
        } else {
            let p = &mut self.nodes[old_parent as usize];
            if p.child1 == sibling {
                p.child1 = new_parent;
            } else {
                p.child2 = new_parent;
            }
        }
        self.refit_up(new_parent);
    }

    fn remove_leaf(&mut self, leaf: u32) {
        if leaf == self.root {
            self.root = NULL;
            return;
        }
        let parent = self.nodes[leaf as usize].parent;
        let grand = self.nodes[parent as usize].parent;
        let p = self.nodes[parent as usize];
        let sibling = if p.child1 == leaf { p.child2 } else { p.child1 };
        if grand == NULL {
            self.root = sibling;
            self.nodes[sibling as usize].parent = NULL;
        } else {
            let g = &mut self.nodes[grand as usize];
            if g.child1 == parent {
                g.child1 = sibling;
            } else {
                g.child2 = sibling;
            }
            self.nodes[sibling as usize].parent = grand;
            self.refit_up(grand);
        }
        self.release(parent);
        self.nodes[leaf as usize].parent = NULL;
    }

    /// Walks from `index` to the root refitting boxes and heights, rotating where it
    /// shrinks the tree.
    fn refit_up(&mut self, mut index: u32) {
        while index != NULL {
            self.rotate(index);
            let n = self.nodes[index as usize];
            let (a, b) = (self.nodes[n.child1 as usize], self.nodes[n.child2 as usize]);
            let node = &mut self.nodes[index as usize];
            node.aabb = a.aabb.union(&b.aabb);
            node.height = 1 + a.height.max(b.height);
            index = node.parent;
        }
    }

    /// Tries swapping a child of `index` with a grandchild under its other child when that
    /// lowers the other child's area (Box2D v3's tree rotation).
    fn rotate(&mut self, index: u32) {
        let n = self.nodes[index as usize];
        if n.is_leaf() {
            return;
        }
        let mut best = 0.0f32;
        let mut swap: Option<(u32, u32)> = None;
        for (keep, other) in [(n.child1, n.child2), (n.child2, n.child1)] {
            let o = self.nodes[other as usize];
            if o.is_leaf() {
                continue;
            }
            let base = o.aabb.surface_area();
            // Swap `keep` with a grandchild under `other`.
            for (g, g_other) in [(o.child1, o.child2), (o.child2, o.child1)] {
                let new_area = self.nodes[keep as usize]
                    .aabb
                    .union(&self.nodes[g_other as usize].aabb)
                    .surface_area();
                let gain = base - new_area;
                if gain > best {
                    best = gain;
                    swap = Some((keep, g));
                }
            }
        }
        let Some((a, g)) = swap else { return };
        // `a` is a child of `index`; `g` a grandchild under the other child `o`.
        let o = self.nodes[g as usize].parent;
        // Exchange a and g.
        let idx = &mut self.nodes[index as usize];
        if idx.child1 == a {
            idx.child1 = g;
        } else {
            idx.child2 = g;
        }
        let on = &mut self.nodes[o as usize];
        if on.child1 == g {
            on.child1 = a;
        } else {
            on.child2 = a;
        }
        self.nodes[a as usize].parent = o;
        self.nodes[g as usize].parent = index;
        let on = self.nodes[o as usize];
        let (c1, c2) = (
            self.nodes[on.child1 as usize],
            self.nodes[on.child2 as usize],
        );
        let on = &mut self.nodes[o as usize];
        on.aabb = c1.aabb.union(&c2.aabb);
        on.height = 1 + c1.height.max(c2.height);
    }

    /// Calls `f(proxy, user_data)` for every proxy whose fat box overlaps `aabb`, until
    /// `f` returns false.
    pub fn query(&self, aabb: &Aabb, mut f: impl FnMut(ProxyId, u32) -> bool) {
        if self.root == NULL {
            return;
        }
        let mut stack = [0u32; STACK];
        let mut top = 1;
        stack[0] = self.root;
        while top > 0 {
            top -= 1;
            let i = stack[top];
            let n = &self.nodes[i as usize];
            if !n.aabb.overlaps(aabb) {
                continue;
            }
            if n.is_leaf() {
                if !f(ProxyId(i), n.user_data) {
                    return;
                }
            } else {
                assert!(top + 2 <= STACK, "dynamic tree deeper than its query stack");
                stack[top] = n.child1;
                stack[top + 1] = n.child2;
                top += 2;
            }
        }
    }

    /// Casts the ray `origin + t * dir`, `t` in `[0, max_fraction]`. For each proxy whose
    /// box the (clipped) ray enters, calls `f(proxy, user_data, max_fraction)`, which
    /// returns the new max fraction (a hit shortens the ray; 0 stops).
    pub fn ray_cast(
        &self,
        origin: Vec3A,
        dir: Vec3A,
        max_fraction: f32,
        mut f: impl FnMut(ProxyId, u32, f32) -> f32,
    ) {
        if self.root == NULL {
            return;
        }
        let inv = dir.recip();
        let mut max_t = max_fraction;
        let mut stack = [0u32; STACK];
        let mut top = 1;
        stack[0] = self.root;
        while top > 0 {
            top -= 1;
            let i = stack[top];
            let n = &self.nodes[i as usize];
            if n.aabb.ray_hit(origin, inv, max_t).is_none() {
                continue;
            }
            if n.is_leaf() {
                let t = f(ProxyId(i), n.user_data, max_t);
                if t <= 0.0 {
                    return;
                }
                max_t = max_t.min(t);
            } else {
                assert!(top + 2 <= STACK, "dynamic tree deeper than its query stack");
                stack[top] = n.child1;
                stack[top + 1] = n.child2;
                top += 2;
            }
        }
    }

    /// Height of the tree (0 for a single leaf).
    #[must_use]
    pub fn height(&self) -> i32 {
        if self.root == NULL {
            0
        } else {
            self.nodes[self.root as usize].height
        }
    }

    /// Sum of internal node areas over root area (lower is better; for tests and tuning).
    #[must_use]
    pub fn area_ratio(&self) -> f32 {
        if self.root == NULL {
            return 0.0;
        }
        let root = self.nodes[self.root as usize].aabb.surface_area();
        let mut total = 0.0;
        self.visit(self.root, &mut |n| {
            if !n.is_leaf() {
                total += n.aabb.surface_area();
            }
        });
        total / root.max(f32::MIN_POSITIVE)
    }

    fn visit(&self, i: u32, f: &mut impl FnMut(&Node)) {
        let n = &self.nodes[i as usize];
        f(n);
        if !n.is_leaf() {
            self.visit(n.child1, f);
            self.visit(n.child2, f);
        }
    }

    /// Rebuilds the tree top-down with a binned SAH over the current leaves.
    pub fn rebuild(&mut self) {
        if self.root == NULL {
            return;
        }
        let mut leaves = std::mem::take(&mut self.scratch.leaves);
        let mut stack = std::mem::take(&mut self.scratch.stack);
        leaves.clear();
        stack.clear();
        stack.push(self.root);
        // Internal nodes are released in walk order (the free list, and so the new nodes'
        // indices, depend only on the tree).
        while let Some(i) = stack.pop() {
            let n = self.nodes[i as usize];
            if n.is_leaf() {
                leaves.push(i);
            } else {
                self.release(i);
                stack.push(n.child1);
                stack.push(n.child2);
            }
        }
        self.root = self.build_range(&mut leaves);
        self.nodes[self.root as usize].parent = NULL;
        self.scratch = RebuildScratch { leaves, stack };
    }

    fn build_range(&mut self, leaves: &mut [u32]) -> u32 {
        if leaves.len() == 1 {
            return leaves[0];
        }
        let mut centroid_box = Aabb::EMPTY;
        for &l in leaves.iter() {
            centroid_box = centroid_box.including(self.nodes[l as usize].aabb.center());
        }
        let extent = centroid_box.max - centroid_box.min;
        let axis = if extent.x >= extent.y && extent.x >= extent.z {
            0
        } else if extent.y >= extent.z {
            1
        } else {
            2
        };
        const BINS: usize = 12;
        let lo = centroid_box.min[axis];
        let width = extent[axis];
        let mid = if width <= 0.0 {
            leaves.len() / 2
        } else {
            let bin_of = |c: f32| (((c - lo) / width * BINS as f32) as usize).min(BINS - 1);
            let mut bins = [(Aabb::EMPTY, 0usize); BINS];
            for &l in leaves.iter() {
                let a = self.nodes[l as usize].aabb;
                let b = &mut bins[bin_of(a.center()[axis])];
                b.0 = b.0.union(&a);
                b.1 += 1;
            }
            // Cost of splitting after bin k: area(left) * n_left + area(right) * n_right.
            // The right sides come from one sweep down the bins and the left sides from
            // one sweep up (unions are exact min/max, so the boxes are those of a union
            // per split, in a twelfth of the work: for small ranges this loop was most
            // of a build).
            let mut right = [(Aabb::EMPTY, 0usize); BINS];
            let mut acc = (Aabb::EMPTY, 0usize);
            for k in (1..BINS).rev() {
                acc = (acc.0.union(&bins[k].0), acc.1 + bins[k].1);
                right[k] = acc;
            }
            let mut best = (f32::INFINITY, 1usize);
            let (mut la, mut ln) = (Aabb::EMPTY, 0);
            for k in 1..BINS {
                la = la.union(&bins[k - 1].0);
                ln += bins[k - 1].1;
                let (ra, rn) = right[k];
                if ln == 0 || rn == 0 {
                    continue;
                }
                let cost = la.surface_area() * ln as f32 + ra.surface_area() * rn as f32;
                if cost < best.0 {
                    best = (cost, k);
                }
            }
            if best.0.is_infinite() {
                leaves.len() / 2
            } else {
                let k = best.1;
                // Partition by bin; ties keep the input order's relative layout.
                let mut i = 0;
                for j in 0..leaves.len() {
                    let c = self.nodes[leaves[j] as usize].aabb.center()[axis];
                    if bin_of(c) < k {
                        leaves.swap(i, j);
                        i += 1;
                    }
                }
                i.clamp(1, leaves.len() - 1)
            }
        };
        let (left, right) = leaves.split_at_mut(mid);
        let a = self.build_range(left);
        let b = self.build_range(right);
        self.join(a, b)
    }

    /// Checks structure, parent links, heights and containment; panics with the broken
    /// invariant. For tests.
    pub fn validate(&self) {
        if self.root == NULL {
            assert_eq!(self.leaves, 0);
            return;
        }
        assert_eq!(
            self.nodes[self.root as usize].parent, NULL,
            "root has a parent"
        );
        let mut leaves = 0;
        let mut stack = vec![self.root];
        while let Some(i) = stack.pop() {
            let n = self.nodes[i as usize];
            if n.is_leaf() {
                assert_eq!(n.height, 0);
                leaves += 1;
                continue;
            }
            let (a, b) = (self.nodes[n.child1 as usize], self.nodes[n.child2 as usize]);
            assert_eq!(a.parent, i, "child1's parent link");
            assert_eq!(b.parent, i, "child2's parent link");
            assert_eq!(n.height, 1 + a.height.max(b.height), "height of node {i}");
            assert!(
                n.aabb.contains(&a.aabb) && n.aabb.contains(&b.aabb),
                "node {i} contains its children"
            );
            stack.push(n.child1);
            stack.push(n.child2);
        }
        assert_eq!(leaves, self.leaves, "leaf count");
    }
}

/// The Morton code of a point quantised to 10 bits per axis: the bits of x, y and z
/// interleaved, so points close on the curve are close in space.
fn morton(x: u32, y: u32, z: u32) -> u32 {
    fn spread(v: u32) -> u32 {
        let mut v = v.min(1023);
        v = (v | (v << 16)) & 0x0300_00ff;
        v = (v | (v << 8)) & 0x0300_f00f;
        v = (v | (v << 4)) & 0x030c_30c3;
        (v | (v << 2)) & 0x0924_9249
    }
    (spread(x) << 2) | (spread(y) << 1) | spread(z)
}
