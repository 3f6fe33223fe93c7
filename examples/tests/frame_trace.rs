//! The whole-frame trace: a traced frame with a step beside game jobs exports as Chrome
//! trace JSON holding both the physics stages and the game's jobs, on one clock.

use joule_examples::frame_trace;
use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::prelude::*;

#[test]
fn a_traced_frame_has_physics_stages_and_game_jobs_on_one_clock() {
    let jobs = JobSystem::new(1).unwrap();
    let mut world = World::new(WorldDesc::default(), jobs.clone());
    scenes::build(SceneKind::Pyramid20, &mut world).unwrap();
    let mut presentation = Presentation::new();
    presentation.record(&world);
    let mut agents = vec![0.0f32; 64];

    jobs.set_tracing(true);
    let frame_start = jobs.now_ns();
    {
        let mut step = world.step_async(scenes::DT);
        jobs.scope(|s| {
            for chunk in agents.chunks_mut(16) {
                let presentation = &presentation;
                s.spawn_labeled("ai", move |_| {
                    for a in chunk {
                        *a += presentation
                            .iter(0.5)
                            .map(|(_, p)| p.translation.y)
                            .sum::<f32>();
                    }
                });
            }
            let _ = step.poll();
        });
        step.wait();
    }
    presentation.record(&world);
    let frame_end = jobs.now_ns();
    jobs.record_span("frame", frame_start, frame_end);
    jobs.set_tracing(false);

    let json = frame_trace::to_chrome_json(&jobs.take_trace(), &jobs.thread_names());
    let trace: serde_json::Value = serde_json::from_str(&json).unwrap();
    let events: Vec<&serde_json::Value> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    let named = |name: &'static str| events.iter().filter(move |e| e["name"] == name);
    assert!(named("ai").count() >= 4, "every AI job is in the trace");
    for stage in joule_physics::STAGES {
        assert_eq!(named(stage).next().unwrap()["cat"], "physics", "{stage}");
    }
    // One clock: every event lies within the frame's span (µs of the job system's clock).
    let (lo, hi) = (frame_start as f64 / 1e3, frame_end as f64 / 1e3);
    for e in &events {
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!(
            lo <= ts && ts + dur <= hi + 1e-3,
            "{e} outside [{lo}, {hi}]"
        );
    }
}
