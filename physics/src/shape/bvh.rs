//! A static bounding-volume hierarchy over the parts of a composite shape (compound
//! children, mesh triangles).
//!
//! Built once, top down: each node splits its items at the median of their box centres
//! along the longest axis of the centres' bounds, down to leaves of at most
//! [`LEAF_SIZE`] items. Nodes sit in one array in depth-first order (a node's left child
//! follows it), so a query walks memory forwards. Median splits keep the tree balanced
//! (depth ~log2(n / 4)); they are not as tight as SAH, but building is O(n log n) with
//! no tuning, and the parts of a level mesh are of similar size anyway. Ties in the
//! median are broken by item index, so the same input builds the same tree.

use crate::geometry::aabb::Aabb;
use crate::math::Vec3A;

/// Most items per leaf.
const LEAF_SIZE: usize = 4;

/// How much [`Bvh::ray`] widens each box, relative to the size of the coordinates:
/// about 80 `f32` ulps.
const RAY_PAD: f32 = 1e-5;

#[derive(Clone, Debug, PartialEq)]
struct Node {
    aabb: Aabb,
    /// Leaf: first index into `items`; inner node: index of the right child.
    start_or_right: u32,
    /// Leaf: number of items (> 0); inner node: 0.
    count: u32,
}

/// A static tree of item boxes.
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    nodes: Vec<Node>,
    items: Vec<u32>,
    /// `boxes[k]` is the box of `items[k]` (leaf order), so leaves test each item.
    boxes: Vec<Aabb>,
}

impl Bvh {
    /// Builds the tree over `boxes` (item `i` has box `boxes[i]`).
    #[must_use]
    pub fn new(boxes: &[Aabb]) -> Self {
        let mut bvh = Bvh {
            nodes: Vec::with_capacity(2 * boxes.len() / LEAF_SIZE + 1),
            items: (0..boxes.len() as u32).collect(),
            boxes: Vec::new(),
        };
        if !boxes.is_empty() {
            let mut items = std::mem::take(&mut bvh.items);
            bvh.build(boxes, &mut items, 0);
            bvh.items = items;
        }
        bvh.boxes = bvh.items.iter().map(|&i| boxes[i as usize]).collect();
        bvh
    }

    fn build(&mut self, boxes: &[Aabb], items: &mut [u32], offset: usize) -> usize {
        let mut aabb = boxes[items[0] as usize];
        let mut lo = aabb.center();
        let mut hi = lo;
        for &i in items.iter() {
            let b = &boxes[i as usize];
            aabb = aabb.union(b);
            lo = lo.min(b.center());
            hi = hi.max(b.center());
        }
        let me = self.nodes.len();
        self.nodes.push(Node {
            aabb,
            start_or_right: offset as u32,
            count: items.len() as u32,
        });
        if items.len() <= LEAF_SIZE {
            return me;
        }
        let ext = hi - lo;
        let axis = if ext.x >= ext.y && ext.x >= ext.z {
            0
        } else if ext.y >= ext.z {
            1
        } else {
            2
        };
        let mid = items.len() / 2;
        items.select_nth_unstable_by(mid, |&a, &b| {
            let (ca, cb) = (
                boxes[a as usize].center()[axis],
                boxes[b as usize].center()[axis],
            );
            ca.total_cmp(&cb).then(a.cmp(&b))
        });
        let (left, right) = items.split_at_mut(mid);
        self.build(boxes, left, offset);
        let r = self.build(boxes, right, offset + mid);
        self.nodes[me].start_or_right = r as u32;
        self.nodes[me].count = 0;
        me
    }

    /// The box around every item (empty tree: a degenerate box at the origin).
    #[must_use]
    pub fn root_aabb(&self) -> Aabb {
        self.nodes
            .first()
            .map_or(Aabb::new(Vec3A::ZERO, Vec3A::ZERO), |n| n.aabb)
    }

    /// Calls `f(item)` for every item whose box overlaps `aabb`, in tree order (the same
    /// for the same tree and box). `f` returns false to stop.
    pub fn query(&self, aabb: &Aabb, mut f: impl FnMut(u32) -> bool) {
        let mut stack = [0u32; 64];
        let mut top = usize::from(!self.nodes.is_empty());
        while top > 0 {
            top -= 1;
            let k = stack[top] as usize;
            let n = &self.nodes[k];
            if !n.aabb.overlaps(aabb) {
                continue;
            }
            if n.count > 0 {
                let s = n.start_or_right as usize;
                for k in s..s + n.count as usize {
                    if self.boxes[k].overlaps(aabb) && !f(self.items[k]) {
                        return;
                    }
                }
            } else {
                // Right first so the left child is popped next (depth-first order).
                stack[top] = n.start_or_right;
                stack[top + 1] = k as u32 + 1;
                top += 2;
            }
        }
    }

    /// Calls `f(item)` for every item whose box the segment `origin + t * dir`,
    /// `t in [0, max_t()]`, passes through or within rounding of; `f` returns the new
    /// `max_t` (shrinking it prunes the rest of the walk).
    ///
    /// Boxes are widened by `RAY_PAD` of the coordinates' size: a ray along a face of a
    /// box (a vertical ray down a mesh's vertical seam meets the box of each triangle
    /// beside it on its face) could otherwise be rounded out of every box it touches.
    pub fn ray(&self, origin: Vec3A, dir: Vec3A, mut max_t: f32, mut f: impl FnMut(u32) -> f32) {
        let inv = dir.recip();
        let root = self.root_aabb();
        let scale = root
            .min
            .abs()
            .max(root.max.abs())
            .max(origin.abs())
            .max_element();
        let pad = RAY_PAD * scale.max(f32::MIN_POSITIVE);
        let mut stack = [0u32; 64];
        let mut top = usize::from(!self.nodes.is_empty());
        while top > 0 {
            top -= 1;
            let k = stack[top] as usize;
            let n = &self.nodes[k];
            if n.aabb.expanded(pad).ray_hit(origin, inv, max_t).is_none() {
                continue;
            }
            if n.count > 0 {
                let s = n.start_or_right as usize;
                for k in s..s + n.count as usize {
                    if self.boxes[k]
                        .expanded(pad)
                        .ray_hit(origin, inv, max_t)
                        .is_some()
                    {
                        max_t = max_t.min(f(self.items[k]));
                    }
                }
            } else {
                stack[top] = n.start_or_right;
                stack[top + 1] = k as u32 + 1;
                top += 2;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_finds_exactly_the_overlapping_items() {
        // 1000 unit boxes on a line; compare the tree against brute force.
        let boxes: Vec<Aabb> = (0..1000)
            .map(|i| {
                let c = Vec3A::new(i as f32 * 1.5, (i % 7) as f32, 0.0);
                Aabb::from_center_half_extents(c, Vec3A::splat(0.5))
            })
            .collect();
        let bvh = Bvh::new(&boxes);
        let q = Aabb::new(Vec3A::new(100.0, 0.0, -1.0), Vec3A::new(160.0, 3.0, 1.0));
        let mut got = Vec::new();
        bvh.query(&q, |i| {
            got.push(i);
            true
        });
        got.sort_unstable();
        let want: Vec<u32> = (0..1000)
            .filter(|&i| boxes[i as usize].overlaps(&q))
            .collect();
        assert_eq!(got, want);
        let mut hit = Vec::new();
        bvh.ray(Vec3A::new(-5.0, 0.0, 0.0), Vec3A::X, 20.0, |i| {
            hit.push(i);
            f32::INFINITY
        });
        hit.sort_unstable();
        // Ray along y = 0 from x = -5 to 15: items with i % 7 == 0 and x within reach.
        let want: Vec<u32> = (0..1000)
            .filter(|&i| i % 7 == 0 && (i as f32 * 1.5 - 0.5) <= 15.0)
            .collect();
        assert_eq!(hit, want);
    }

    #[test]
    fn a_ray_along_the_faces_of_boxes_finds_them() {
        // Two unit boxes side by side; a ray straight down their shared face (x = 1 on
        // both) has a zero x component, so an unpadded slab test computes 0 × ∞ there.
        let boxes = [
            Aabb::new(Vec3A::ZERO, Vec3A::ONE),
            Aabb::new(Vec3A::new(1.0, 0.0, 0.0), Vec3A::new(2.0, 1.0, 1.0)),
        ];
        let bvh = Bvh::new(&boxes);
        let mut hit = Vec::new();
        bvh.ray(Vec3A::new(1.0, 3.0, 0.5), Vec3A::NEG_Y, 10.0, |i| {
            hit.push(i);
            f32::INFINITY
        });
        hit.sort_unstable();
        assert_eq!(hit, vec![0, 1], "both boxes touch the ray");
    }
}
