//! The broad phase against brute force.

use std::collections::BTreeSet;

use joule_physics::aabb::Aabb;
use joule_physics::broad_phase::{BodyPair, BroadPhase, BroadPhaseProxy, ProxyKind};
use joule_physics::dynamic_tree::DynamicTree;
use joule_physics::math::Vec3A;

struct Rng(u64);

impl Rng {
    fn f(&mut self) -> f32 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }
    fn v(&mut self, lo: f32, hi: f32) -> Vec3A {
        Vec3A::new(self.f(), self.f(), self.f()) * (hi - lo) + Vec3A::splat(lo)
    }
}

fn random_box(r: &mut Rng, lo: f32, hi: f32) -> Aabb {
    let center = r.v(lo, hi);
    Aabb::from_center_half_extents(center, r.v(0.1, 1.0))
}

#[test]
fn tree_queries_and_ray_casts_equal_brute_force() {
    let mut r = Rng(7);
    let mut tree = DynamicTree::new();
    let mut boxes = Vec::new();
    for i in 0..2000u32 {
        let b = random_box(&mut r, -50.0, 50.0);
        boxes.push((tree.create_proxy(b, i), b));
    }
    // Random removals, moves and enlargements in place keep the structure valid, and
    // queries exact before and after a rebuild.
    for k in 0..600 {
        let i = (r.f() * boxes.len() as f32) as usize % boxes.len();
        let b = random_box(&mut r, -50.0, 50.0);
        match k % 3 {
            0 => {
                tree.destroy_proxy(boxes[i].0);
                boxes.swap_remove(i);
            }
            1 => {
                tree.move_proxy(boxes[i].0, b);
                boxes[i].1 = b;
            }
            _ => {
                tree.enlarge_proxy(boxes[i].0, b);
                boxes[i].1 = b;
            }
        }
    }
    tree.validate();
    check(&tree, &boxes, &mut r);
    tree.rebuild();
    tree.validate();
    check(&tree, &boxes, &mut r);
}

fn check(tree: &DynamicTree, boxes: &[(joule_physics::dynamic_tree::ProxyId, Aabb)], r: &mut Rng) {
    for _ in 0..50 {
        let q = random_box(r, -50.0, 50.0).expanded(3.0);
        let mut got = BTreeSet::new();
        tree.query(&q, |id, _| {
            got.insert(id);
            true
        });
        let want: BTreeSet<_> = boxes
            .iter()
            .filter(|(_, b)| b.overlaps(&q))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(got, want);
        let (o, d) = (r.v(-60.0, 60.0), r.v(-60.0, 60.0));
        let mut got = BTreeSet::new();
        tree.ray_cast(o, d, 1.0, |id, _, max| {
            got.insert(id);
            max
        });
        let want: BTreeSet<_> = boxes
            .iter()
            .filter(|(_, b)| b.ray_hit(o, d.recip(), 1.0).is_some())
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn live_pairs_equal_brute_force_over_100_random_moves() {
    // 2,000 boxes (every tenth static); each step moves some a little (most stay inside
    // their fat box) and a few far. The test plays the contact manager: it keeps the new
    // pairs and drops those whose fat boxes stopped overlapping; the live set must equal
    // brute force over fat boxes, and contain every pair of overlapping tight boxes.
    let mut r = Rng(11);
    let mut bp = BroadPhase::new();
    let mut bodies: Vec<(Aabb, BroadPhaseProxy, bool)> = Vec::new();
    for i in 0..2000u32 {
        let is_static = i % 10 == 0;
        let b = random_box(&mut r, -40.0, 40.0);
        let kind = if is_static {
            ProxyKind::Static
        } else {
            ProxyKind::Moving
        };
        bodies.push((b, bp.create_proxy(b, i, kind), is_static));
    }
    let mut live: BTreeSet<BodyPair> = BTreeSet::new();
    let mut pairs = Vec::new();
    for step in 0..100 {
        if step > 0 {
            for (b, proxy, is_static) in bodies.iter_mut() {
                if *is_static {
                    continue;
                }
                let roll = r.f();
                let delta = if roll < 0.05 {
                    r.v(-20.0, 20.0)
                } else if roll < 0.6 {
                    r.v(-0.05, 0.05)
                } else {
                    continue;
                };
                *b = Aabb::new(b.min + delta, b.max + delta);
                bp.update_proxy(*proxy, *b, delta);
            }
        }
        bp.update_pairs(&mut pairs);
        assert!(
            pairs.windows(2).all(|w| w[0] < w[1]),
            "pairs sorted and unique"
        );
        live.extend(pairs.iter().copied());
        live.retain(|p| bp.fat_overlap(bodies[p.a as usize].1, bodies[p.b as usize].1));
        let mut brute = BTreeSet::new();
        for a in 0..bodies.len() {
            for b in a + 1..bodies.len() {
                if bodies[a].2 && bodies[b].2 {
                    continue;
                }
                if bp.fat_aabb(bodies[a].1).overlaps(&bp.fat_aabb(bodies[b].1)) {
                    brute.insert(BodyPair {
                        a: a as u32,
                        b: b as u32,
                    });
                }
            }
        }
        assert_eq!(live, brute, "step {step}");
        for a in 0..bodies.len() {
            for b in a + 1..bodies.len() {
                if !(bodies[a].2 && bodies[b].2) && bodies[a].0.overlaps(&bodies[b].0) {
                    assert!(live.contains(&BodyPair {
                        a: a as u32,
                        b: b as u32
                    }));
                }
            }
        }
    }
}

#[test]
fn pair_finding_does_not_depend_on_how_the_move_buffer_is_split() {
    let mut r = Rng(3);
    let mut bp = BroadPhase::new();
    for i in 0..1500u32 {
        let b = random_box(&mut r, -20.0, 20.0);
        bp.create_proxy(
            b,
            i,
            if i % 7 == 0 {
                ProxyKind::Static
            } else {
                ProxyKind::Moving
            },
        );
    }
    bp.sort_moved();
    let moved = bp.moved_proxies().to_vec();
    let mut outputs = Vec::new();
    for chunks in [1usize, 3, 7] {
        let size = moved.len().div_ceil(chunks);
        let mut parts: Vec<Vec<BodyPair>> = moved
            .chunks(size)
            .map(|c| {
                let mut out = Vec::new();
                bp.find_pairs_for(c, &mut out);
                out
            })
            .collect();
        let mut all = Vec::new();
        BroadPhase::finish_pairs(parts.iter_mut(), &mut all);
        outputs.push(all);
    }
    assert!(!outputs[0].is_empty());
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
}

/// Proxies added in one batch (built as a subtree and inserted whole) leave a valid tree
/// that finds exactly what brute force finds, added to an empty tree and to a full one.
#[test]
fn a_batch_of_proxies_is_found_like_single_ones() {
    let mut r = Rng(7);
    let mut tree = DynamicTree::new();
    let mut all: Vec<(Aabb, u32)> = Vec::new();
    for batch in 0..3u32 {
        let boxes: Vec<(Aabb, u32)> = (0..300)
            .map(|i| (random_box(&mut r, -30.0, 30.0), batch * 1000 + i))
            .collect();
        if batch == 1 {
            for &(aabb, user) in &boxes {
                tree.create_proxy(aabb, user);
            }
        } else {
            let mut ids = Vec::new();
            tree.create_proxies(&boxes, &mut ids);
            assert_eq!(ids.len(), boxes.len());
            for (id, &(aabb, user)) in ids.iter().zip(&boxes) {
                assert_eq!(tree.user_data(*id), user);
                assert_eq!(tree.fat_aabb(*id), aabb);
            }
        }
        all.extend(&boxes);
        tree.validate();
        assert_eq!(tree.proxy_count(), all.len());
        for _ in 0..50 {
            let q = random_box(&mut r, -30.0, 30.0);
            let mut found = BTreeSet::new();
            tree.query(&q, |_, user| {
                found.insert(user);
                true
            });
            let expected: BTreeSet<u32> = all
                .iter()
                .filter(|(a, _)| a.overlaps(&q))
                .map(|&(_, user)| user)
                .collect();
            assert_eq!(found, expected);
        }
    }
}
