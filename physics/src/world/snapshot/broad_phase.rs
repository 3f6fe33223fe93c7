//! The broad phase in the image: both trees node for node, the move buffer, the
//! reinsertion count.
//!
//! The trees are saved whole rather than rebuilt from their leaves' fat boxes. A rebuilt
//! tree has other node indices and another shape, and both reach results: a proxy id is a
//! node index (bodies and contacts store it, the move buffer sorts by it), the next proxy
//! created takes the head of the node free list, the tree's shape decides the order in
//! which queries report overlaps (CCD bounds each cast by the best hit found so far, so
//! that order can change a time of impact in its last bits), and the reinsertion count
//! decides when the moving tree is next rebuilt. Saving every node keeps all of that
//! bit-identical for 44 bytes a node.

use crate::body::{Bodies, MotionType};
use crate::collision::broad_phase::{BroadPhase, ProxyKind};
use crate::geometry::aabb::Aabb;
use crate::geometry::dynamic_tree::{DynamicTree, NULL, Node, STACK};

use super::SnapshotError;
use super::bodies::{read_proxy, write_proxy};
use super::wire::{Reader, Writer, check};

pub(super) fn write_broad_phase(w: &mut Writer, bp: &BroadPhase) {
    let BroadPhase {
        margin,
        static_tree,
        moving_tree,
        moved,
        moved_flag,
        reinsertions,
    } = bp;
    w.f32(*margin);
    write_tree(w, static_tree);
    write_tree(w, moving_tree);
    w.count(moved.len());
    for &(body, proxy) in moved {
        w.u32(body);
        write_proxy(w, proxy);
    }
    w.count(moved_flag.len());
    for &f in moved_flag {
        w.bool(f);
    }
    w.u64(*reinsertions as u64);
}

pub(super) fn read_broad_phase(
    r: &mut Reader<'_>,
    bodies: &Bodies,
) -> Result<BroadPhase, SnapshotError> {
    let margin = r.finite("a non-finite broad-phase margin")?;
    check(margin >= 0.0, "a negative broad-phase margin")?;
    let static_tree = read_tree(r)?;
    let moving_tree = read_tree(r)?;
    let n = r.count(9)?;
    let mut moved = Vec::with_capacity(n);
    for _ in 0..n {
        moved.push((r.u32()?, read_proxy(r)?));
    }
    let n = r.count(1)?;
    let moved_flag = (0..n).map(|_| r.bool()).collect::<Result<Vec<_>, _>>()?;
    let reinsertions = usize::try_from(r.u64()?)
        .map_err(|_| SnapshotError::Corrupt("a reinsertion count beyond usize"))?;
    let bp = BroadPhase {
        margin,
        static_tree,
        moving_tree,
        moved,
        moved_flag,
        reinsertions,
    };
    check_proxies(&bp, bodies)?;
    Ok(bp)
}

/// Every live body owns one leaf of the tree its motion type uses, whose user data is its
/// slot; every leaf belongs to a body; the move buffer names live bodies by their own
/// proxies, and its flags mark exactly its moving entries.
fn check_proxies(bp: &BroadPhase, bodies: &Bodies) -> Result<(), SnapshotError> {
    let mut counts = [0usize; 2];
    for (index, b) in bodies.bodies.iter().enumerate() {
        let Some(proxy) = b.proxy.filter(|_| b.alive) else {
            continue;
        };
        let tree = match proxy.kind {
            ProxyKind::Static => &bp.static_tree,
            ProxyKind::Moving => &bp.moving_tree,
        };
        let leaf = tree.nodes.get(proxy.id.0 as usize);
        check(
            leaf.is_some_and(|n| n.is_leaf() && n.height == 0 && n.user_data as usize == index),
            "a body's proxy is not its leaf in the broad phase",
        )?;
        counts[usize::from(b.motion_type != MotionType::Fixed)] += 1;
    }
    check(
        counts == [bp.static_tree.leaves, bp.moving_tree.leaves],
        "a broad-phase tree has leaves no body owns",
    )?;
    let mut flagged = 0;
    for &(body, proxy) in &bp.moved {
        let b = bodies.bodies.get(body as usize);
        check(
            b.is_some_and(|b| b.alive && b.proxy == Some(proxy)),
            "the move buffer names a proxy that is not its body's",
        )?;
        if proxy.kind == ProxyKind::Moving {
            check(
                bp.moved_flag.get(proxy.id.0 as usize) == Some(&true),
                "a moved proxy is not flagged as moved",
            )?;
            flagged += 1;
        }
    }
    check(
        bp.moved_flag.iter().filter(|&&f| f).count() == flagged,
        "the move flags do not match the move buffer",
    )
}

/// Bytes of one encoded node.
const NODE_BYTES: usize = 4 * 6 + 4 * 5;

fn write_tree(w: &mut Writer, tree: &DynamicTree) {
    let DynamicTree {
        nodes,
        root,
        free,
        leaves,
        scratch: _,
    } = tree;
    w.count(nodes.len());
    for n in nodes {
        let Node {
            aabb,
            parent,
            child1,
            child2,
            user_data,
            height,
        } = n;
        w.vec3(aabb.min);
        w.vec3(aabb.max);
        w.u32(*parent);
        w.u32(*child1);
        w.u32(*child2);
        w.u32(*user_data);
        w.i32(*height);
    }
    w.u32(*root);
    w.u32(*free);
    w.count(*leaves);
}

fn read_tree(r: &mut Reader<'_>) -> Result<DynamicTree, SnapshotError> {
    let n = r.count(NODE_BYTES)?;
    let mut nodes = Vec::with_capacity(n);
    for _ in 0..n {
        nodes.push(Node {
            aabb: Aabb::new(r.vec3()?, r.vec3()?),
            parent: r.u32()?,
            child1: r.u32()?,
            child2: r.u32()?,
            user_data: r.u32()?,
            height: r.i32()?,
        });
    }
    let tree = DynamicTree {
        nodes,
        root: r.u32()?,
        free: r.u32()?,
        leaves: r.u32()? as usize,
        scratch: Default::default(),
    };
    check_tree(&tree)?;
    Ok(tree)
}

/// The tree's invariants (those `DynamicTree::validate` asserts) plus what its walks rely
/// on: the free list is a chain of released nodes, the root's subtree is a tree (each node
/// reached once, parent links agree) shallow enough for the query stack, and every node is
/// in exactly one of the two.
fn check_tree(t: &DynamicTree) -> Result<(), SnapshotError> {
    const BAD: &str = "a broad-phase tree is malformed";
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        No,
        Free,
        Tree,
    }
    let n = t.nodes.len();
    let mut seen = vec![Seen::No; n];
    let mut i = t.free;
    while i != NULL {
        let node = t.nodes.get(i as usize);
        check(
            node.is_some_and(|node| node.height == -1) && seen[i as usize] == Seen::No,
            BAD,
        )?;
        seen[i as usize] = Seen::Free;
        i = t.nodes[i as usize].user_data;
    }
    let mut order = Vec::with_capacity(n);
    let mut leaves = 0;
    if t.root != NULL {
        check(
            t.nodes
                .get(t.root as usize)
                .is_some_and(|r| r.parent == NULL),
            BAD,
        )?;
        let mut stack = vec![t.root];
        while let Some(i) = stack.pop() {
            check(seen[i as usize] == Seen::No, BAD)?;
            seen[i as usize] = Seen::Tree;
            order.push(i);
            let node = &t.nodes[i as usize];
            check(!node.aabb.min.is_nan() && !node.aabb.max.is_nan(), BAD)?;
            if node.is_leaf() {
                check(node.child2 == NULL && node.height == 0, BAD)?;
                leaves += 1;
                continue;
            }
            for c in [node.child1, node.child2] {
                check(t.nodes.get(c as usize).is_some_and(|c| c.parent == i), BAD)?;
                stack.push(c);
            }
        }
    }
    // Children come after their parents in `order`: check heights and boxes bottom-up.
    for &i in order.iter().rev() {
        let node = &t.nodes[i as usize];
        if node.is_leaf() {
            continue;
        }
        let (a, b) = (
            &t.nodes[node.child1 as usize],
            &t.nodes[node.child2 as usize],
        );
        check(
            node.height == 1 + a.height.max(b.height)
                && node.aabb.contains(&a.aabb)
                && node.aabb.contains(&b.aabb),
            BAD,
        )?;
    }
    if t.root != NULL {
        // A query's stack holds at most height + 1 nodes, plus the two it pushes.
        check(
            t.nodes[t.root as usize].height <= (STACK - 2) as i32,
            "a broad-phase tree is too deep for its query stack",
        )?;
    }
    check(
        seen.iter().all(|&s| s != Seen::No),
        "a broad-phase tree node is neither in the tree nor free",
    )?;
    check(
        leaves == t.leaves,
        "a broad-phase tree's leaf count is wrong",
    )
}
