//! A game embeds the physics step as a subgraph of its own frame graph, beside its own
//! tasks, and gets exactly what `World::step` gives.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::{DT, cube, ground, world};
use joule_graph::{Context, Graph, Write};
use joule_physics::math::Vec3;

struct Ai(u32);

#[test]
fn the_step_as_a_subgraph_matches_world_step() {
    let build = || {
        let mut w = world(2);
        ground(&mut w, 0.5);
        for i in 0..30 {
            cube(
                &mut w,
                0.5,
                Vec3::new((i % 6) as f32 * 1.2, 0.5 + (i / 6) as f32 * 1.1, 0.0),
            );
        }
        w
    };
    let mut direct = build();
    let mut embedded = build();

    let ran_after = Arc::new(AtomicUsize::new(0));
    let mut b = Graph::builder();
    let ai = b.task("ai", |mut ai: Write<Ai>| ai.0 += 1).id();
    let physics = b.subgraph("physics", embedded.step_graph()).id();
    let r = ran_after.clone();
    b.task("render prep", move || {
        r.fetch_add(1, Ordering::SeqCst);
    })
    .after([ai, physics]);
    let frame = b
        .build()
        .expect("the game's tasks and the physics stages do not conflict");

    let mut ctx = Context::new().with(Ai(0));
    let jobs = embedded.jobs().clone();
    for _ in 0..120 {
        direct.step(DT);
        embedded.lend_to(&mut ctx, DT);
        frame.run(&jobs, &mut ctx);
        embedded.take_back(&mut ctx);
        assert_eq!(direct.state_hash(), embedded.state_hash());
    }
    assert_eq!(ctx.get_mut::<Ai>().unwrap().0, 120);
    assert_eq!(ran_after.load(Ordering::SeqCst), 120);
}
