//! The broad phase: which pairs of bodies are close enough to need the narrow phase.
//!
//! Two dynamic trees (see `dynamic_tree.rs`): one for static bodies, one for moving ones
//! (dynamic and kinematic, awake or asleep). Each proxy's box is the body's tight box
//! fattened by `margin` (and stretched along its last displacement, Box2D-style), so a
//! slowly moving body stays inside its fat box for many steps and costs one containment
//! test per step. Only proxies that left their fat box (or were just created) are
//! reinserted and recorded in the *move buffer*.
//!
//! Pair finding queries each moved proxy's fat box against both trees. It takes `&self`
//! only, so a job system can run it on disjoint chunks of the move buffer in parallel;
//! the chunks' outputs are concatenated, sorted by body ids and deduplicated, so the
//! result never depends on the split. A pair of two moved proxies is reported once (by
//! the one with the lower body id); static-static pairs never.

use crate::geometry::aabb::Aabb;
use crate::geometry::dynamic_tree::DynamicTree;
use crate::math::Vec3A;

pub use crate::body::{BroadPhaseProxy, ProxyKind};

/// A candidate pair of body slots, `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BodyPair {
    /// Lower body slot.
    pub a: u32,
    /// Higher body slot.
    pub b: u32,
}

/// The broad phase.
#[derive(Clone, Debug)]
pub struct BroadPhase {
    /// Fattening of proxy boxes, in metres (Box2D's `b2_aabbMargin` is 0.1).
    pub margin: f32,
    pub(crate) static_tree: DynamicTree,
    pub(crate) moving_tree: DynamicTree,
    /// Proxies that were created or left their fat box since the last pair update,
    /// with their body slot.
    pub(crate) moved: Vec<(u32, BroadPhaseProxy)>,
    /// Per moving-tree leaf: whether it is in `moved`.
    pub(crate) moved_flag: Vec<bool>,
    /// Moving-tree reinsertions since the last rebuild.
    pub(crate) reinsertions: usize,
}

impl Default for BroadPhase {
    fn default() -> Self {
        Self::new()
    }
}

impl BroadPhase {
    /// An empty broad phase.
    #[must_use]
    pub fn new() -> Self {
        Self {
            margin: 0.1,
            static_tree: DynamicTree::new(),
            moving_tree: DynamicTree::new(),
            moved: Vec::new(),
            moved_flag: Vec::new(),
            reinsertions: 0,
        }
    }

    fn tree(&self, kind: ProxyKind) -> &DynamicTree {
        match kind {
            ProxyKind::Static => &self.static_tree,
            ProxyKind::Moving => &self.moving_tree,
        }
    }

    fn mark_moved(&mut self, body: u32, proxy: BroadPhaseProxy) {
        let i = proxy.id.0 as usize;
        if proxy.kind == ProxyKind::Moving {
            if self.moved_flag.len() <= i {
                self.moved_flag.resize(i + 1, false);
            }
            if self.moved_flag[i] {
                return;
            }
            self.moved_flag[i] = true;
        }
        self.moved.push((body, proxy));
    }

    /// Adds a body's proxy from its tight box.
    pub fn create_proxy(&mut self, aabb: Aabb, body: u32, kind: ProxyKind) -> BroadPhaseProxy {
        let fat = aabb.expanded(self.margin);
        let id = match kind {
            ProxyKind::Static => self.static_tree.create_proxy(fat, body),
            ProxyKind::Moving => self.moving_tree.create_proxy(fat, body),
        };
        let proxy = BroadPhaseProxy { kind, id };
        self.mark_moved(body, proxy);
        proxy
    }

    /// Adds many bodies' proxies at once from their tight boxes (`(box, body, tree)`),
    /// each tree's new proxies built as one subtree (see
    /// [`DynamicTree::create_proxies`]); appends the proxies to `out` in input order and
    /// queues them for the pair search, as [`create_proxy`](Self::create_proxy) does.
    pub fn create_proxies(
        &mut self,
        items: &[(Aabb, u32, ProxyKind)],
        out: &mut Vec<BroadPhaseProxy>,
    ) {
        let start = out.len();
        out.resize(
            start + items.len(),
            BroadPhaseProxy {
                kind: ProxyKind::Static,
                id: crate::geometry::dynamic_tree::ProxyId(0),
            },
        );
        let mut boxes = Vec::with_capacity(items.len());
        let mut ids = Vec::with_capacity(items.len());
        for kind in [ProxyKind::Static, ProxyKind::Moving] {
            boxes.clear();
            ids.clear();
            boxes.extend(
                items
                    .iter()
                    .filter(|item| item.2 == kind)
                    .map(|&(aabb, body, _)| (aabb.expanded(self.margin), body)),
            );
            match kind {
                ProxyKind::Static => self.static_tree.create_proxies(&boxes, &mut ids),
                ProxyKind::Moving => self.moving_tree.create_proxies(&boxes, &mut ids),
            }
            let slots = items.iter().enumerate().filter(|(_, item)| item.2 == kind);
            for ((i, &(_, body, _)), &id) in slots.zip(&ids) {
                let proxy = BroadPhaseProxy { kind, id };
                out[start + i] = proxy;
                self.mark_moved(body, proxy);
            }
        }
    }

    /// Removes a proxy.
    pub fn destroy_proxy(&mut self, proxy: BroadPhaseProxy) {
        let i = proxy.id.0 as usize;
        // A static proxy may be queued more than once (it has no flag): drop every entry.
        self.moved.retain(|(_, p)| *p != proxy);
        if proxy.kind == ProxyKind::Moving && i < self.moved_flag.len() {
            self.moved_flag[i] = false;
        }
        match proxy.kind {
            ProxyKind::Static => self.static_tree.destroy_proxy(proxy.id),
            ProxyKind::Moving => self.moving_tree.destroy_proxy(proxy.id),
        }
    }

    /// Whether the proxy's fat box still holds `aabb` (then [`BroadPhase::update_proxy`]
    /// would do nothing). Read-only, so bodies are checked in parallel.
    #[must_use]
    pub fn still_holds(&self, proxy: BroadPhaseProxy, aabb: &Aabb) -> bool {
        self.tree(proxy.kind).fat_aabb(proxy.id).contains(aabb)
    }

    /// Updates a proxy after its body moved. If the tight box still lies in the fat box
    /// nothing happens (the common case); otherwise [`BroadPhase::refit_proxy`]. Returns
    /// whether the fat box changed.
    pub fn update_proxy(
        &mut self,
        proxy: BroadPhaseProxy,
        aabb: Aabb,
        displacement: Vec3A,
    ) -> bool {
        if self.still_holds(proxy, &aabb) {
            return false;
        }
        self.refit_proxy(proxy, aabb, displacement);
        true
    }

    /// Gives a proxy whose tight box `aabb` left its fat box a new fat box, stretched
    /// along `displacement`, and puts it in the move buffer (for callers that already
    /// checked [`BroadPhase::still_holds`]).
    pub fn refit_proxy(&mut self, proxy: BroadPhaseProxy, aabb: Aabb, displacement: Vec3A) {
        let mut fat = aabb.expanded(self.margin);
        // Predict: stretch the box along the motion so a steadily moving body stays in it
        // for a few steps.
        let d = displacement * 4.0;
        fat.min = fat.min.min(fat.min + d);
        fat.max = fat.max.max(fat.max + d);
        let body = self.tree(proxy.kind).user_data(proxy.id);
        match proxy.kind {
            ProxyKind::Static => self.static_tree.move_proxy(proxy.id, fat),
            ProxyKind::Moving => {
                // Enlarged in place; `rebuild_if_needed` rebuilds the tree once as many
                // proxies moved as it holds.
                self.moving_tree.enlarge_proxy(proxy.id, fat);
                self.reinsertions += 1;
            }
        }
        self.mark_moved(body, proxy);
    }

    /// Puts a proxy in the move buffer without moving it, so its pairs are found again.
    pub fn touch_proxy(&mut self, proxy: BroadPhaseProxy) {
        let body = self.tree(proxy.kind).user_data(proxy.id);
        self.mark_moved(body, proxy);
    }

    /// The move buffer sorted by body slot (sorting makes the result independent of the
    /// order updates happened in).
    #[must_use]
    pub fn moved_proxies(&self) -> &[(u32, BroadPhaseProxy)] {
        &self.moved
    }

    /// Sorts the move buffer by body slot. Call before `moved_proxies` is split.
    pub fn sort_moved(&mut self) {
        self.moved.sort_unstable();
    }

    fn is_moved(&self, proxy: BroadPhaseProxy) -> bool {
        proxy.kind == ProxyKind::Moving
            && self
                .moved_flag
                .get(proxy.id.0 as usize)
                .copied()
                .unwrap_or(false)
    }

    /// Finds the pairs of a chunk of the move buffer (read-only; run chunks in parallel).
    pub fn find_pairs_for(&self, moved: &[(u32, BroadPhaseProxy)], out: &mut Vec<BodyPair>) {
        for &(body, proxy) in moved {
            let fat = self.tree(proxy.kind).fat_aabb(proxy.id);
            // A moved moving proxy meets both trees; a moved static proxy only moving ones.
            self.moving_tree.query(&fat, |other_id, other_body| {
                let other = BroadPhaseProxy {
                    kind: ProxyKind::Moving,
                    id: other_id,
                };
                if other == proxy {
                    return true;
                }
                // Two moved proxies: the lower body id reports the pair.
                if self.is_moved(other) && other_body < body {
                    return true;
                }
                if other_body != body {
                    out.push(BodyPair {
                        a: body.min(other_body),
                        b: body.max(other_body),
                    });
                }
                true
            });
            if proxy.kind == ProxyKind::Moving {
                self.static_tree.query(&fat, |_, other_body| {
                    if other_body != body {
                        out.push(BodyPair {
                            a: body.min(other_body),
                            b: body.max(other_body),
                        });
                    }
                    true
                });
            }
        }
    }

    /// Concatenates chunk outputs into `out`, sorted by body ids, without duplicates.
    pub fn finish_pairs<'a>(
        chunks: impl Iterator<Item = &'a mut Vec<BodyPair>>,
        out: &mut Vec<BodyPair>,
    ) {
        out.clear();
        for c in chunks {
            out.append(c);
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Empties the move buffer (after pairs were found) and rebuilds the moving tree if
    /// it saw many reinsertions.
    pub fn clear_moved(&mut self) {
        for &(_, p) in &self.moved {
            if p.kind == ProxyKind::Moving
                && let Some(f) = self.moved_flag.get_mut(p.id.0 as usize)
            {
                *f = false;
            }
        }
        self.moved.clear();
        self.rebuild_if_needed();
    }

    /// Rebuilds the moving tree after more reinsertions than it has proxies: by then
    /// incremental insertion has usually degraded its quality noticeably.
    pub fn rebuild_if_needed(&mut self) {
        let n = self.moving_tree.proxy_count();
        if n > 64 && self.reinsertions > n {
            self.moving_tree.rebuild();
            self.reinsertions = 0;
        }
    }

    /// Serial convenience: find all new pairs of the move buffer into `out` and clear it.
    pub fn update_pairs(&mut self, out: &mut Vec<BodyPair>) {
        self.sort_moved();
        let mut tmp = Vec::new();
        self.find_pairs_for(&self.moved, &mut tmp);
        Self::finish_pairs(std::iter::once(&mut tmp), out);
        self.clear_moved();
    }

    /// Whether two proxies' fat boxes overlap (the contact manager keeps a contact while
    /// this holds).
    #[must_use]
    pub fn fat_overlap(&self, a: BroadPhaseProxy, b: BroadPhaseProxy) -> bool {
        self.tree(a.kind)
            .fat_aabb(a.id)
            .overlaps(&self.tree(b.kind).fat_aabb(b.id))
    }

    /// Asks the CPU to start loading a proxy's fat box (see `crate::geometry::prefetch`).
    pub fn prefetch_proxy(&self, proxy: BroadPhaseProxy) {
        crate::geometry::prefetch::prefetch::<_, 1>(
            &self.tree(proxy.kind).nodes[proxy.id.0 as usize],
        );
    }

    /// A proxy's fat box.
    #[must_use]
    pub fn fat_aabb(&self, proxy: BroadPhaseProxy) -> Aabb {
        self.tree(proxy.kind).fat_aabb(proxy.id)
    }

    /// Calls `f(proxy, body)` for every proxy in either tree whose fat box overlaps `aabb`.
    pub fn query_aabb(&self, aabb: &Aabb, mut f: impl FnMut(BroadPhaseProxy, u32) -> bool) {
        let mut go_on = true;
        self.static_tree.query(aabb, |id, body| {
            go_on = f(
                BroadPhaseProxy {
                    kind: ProxyKind::Static,
                    id,
                },
                body,
            );
            go_on
        });
        if go_on {
            self.moving_tree.query(aabb, |id, body| {
                f(
                    BroadPhaseProxy {
                        kind: ProxyKind::Moving,
                        id,
                    },
                    body,
                )
            });
        }
    }

    /// Casts a ray through both trees (see `DynamicTree::ray_cast`).
    pub fn ray_cast(
        &self,
        origin: Vec3A,
        dir: Vec3A,
        max_fraction: f32,
        mut f: impl FnMut(BroadPhaseProxy, u32, f32) -> f32,
    ) {
        let mut max = max_fraction;
        self.static_tree.ray_cast(origin, dir, max, |id, body, m| {
            let t = f(
                BroadPhaseProxy {
                    kind: ProxyKind::Static,
                    id,
                },
                body,
                m,
            );
            max = max.min(t);
            t
        });
        if max > 0.0 {
            self.moving_tree.ray_cast(origin, dir, max, |id, body, m| {
                f(
                    BroadPhaseProxy {
                        kind: ProxyKind::Moving,
                        id,
                    },
                    body,
                    m,
                )
            });
        }
    }
}
