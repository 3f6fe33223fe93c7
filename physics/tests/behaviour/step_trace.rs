//! The trace of one step names every stage, in order, with times on real threads.

use crate::common::{DT, cube, ground, world};
use joule_physics::STAGES;
use joule_physics::math::Vec3;

#[test]
fn a_traced_step_shows_every_stage_and_the_jobs_they_ran() {
    let mut w = world(2);
    ground(&mut w, 0.5);
    for i in 0..50 {
        cube(
            &mut w,
            0.5,
            Vec3::new((i % 10) as f32 * 1.1, 0.5 + (i / 10) as f32, 0.0),
        );
    }
    w.step(DT);
    let before = w.state_hash();
    let trace = w.step_traced(DT);
    assert_ne!(w.state_hash(), before, "step_traced steps");
    let names: Vec<&str> = trace.graph.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, STAGES);
    let mut last_end = 0;
    for (i, run) in trace.tasks.iter().enumerate() {
        let run = run.unwrap_or_else(|| panic!("stage {} ran", STAGES[i]));
        assert!(run.start_ns >= last_end, "stages run in pipeline order");
        assert!(run.end_ns >= run.start_ns);
        assert!(run.thread < trace.threads.len());
        last_end = run.end_ns;
    }
    // The narrow phase and the solver ran jobs, recorded as spans of their stages.
    let narrow = STAGES.iter().position(|s| *s == "narrow phase").unwrap();
    let solve = STAGES.iter().position(|s| *s == "solve").unwrap();
    assert!(trace.spans.iter().filter(|s| s.task == narrow).count() >= 2);
    // The solve runs its stages on a team: the leader's body span, plus a span per
    // helper that joined (how many join depends on the machine's load).
    let solve_run = trace.tasks[solve].unwrap();
    let solve_spans: Vec<_> = trace.spans.iter().filter(|s| s.task == solve).collect();
    assert!(!solve_spans.is_empty());
    for s in solve_spans {
        assert!(solve_run.start_ns <= s.start_ns && s.start_ns <= solve_run.end_ns);
    }
    let json = trace.to_chrome_json();
    for s in STAGES {
        assert!(json.contains(s), "{s} in the Chrome trace");
    }
    assert!(trace.to_svg().starts_with("<svg") || trace.to_svg().contains("<svg"));
    // The step is a joule-graph graph whose tasks are the stages, in order.
    let graph_tasks: Vec<&str> = w.step_graph().task_names().collect();
    assert_eq!(graph_tasks, STAGES);
    assert!(w.step_graph().to_dot().contains("narrow phase"));
    // Tracing is off again afterwards.
    assert!(!w.jobs().tracing());
}

/// On one thread every moment of the step has at most one thread working, so the summary's
/// serial time is the whole wall time; waits (none possible with nobody to wait for)
/// never count as work.
#[test]
fn on_one_thread_the_whole_step_is_serial_and_waits_are_not_work() {
    for threads in [0, 2] {
        let mut w = world(threads);
        ground(&mut w, 0.5);
        for i in 0..40 {
            cube(
                &mut w,
                0.5,
                Vec3::new((i % 8) as f32 * 1.1, 0.5 + (i / 8) as f32, 0.0),
            );
        }
        w.step(DT);
        let trace = w.step_traced(DT);
        let s = trace.summary();
        assert!(s.serial_ns <= s.wall_ns, "{s}");
        let waits = trace.spans.iter().filter(|s| s.is_wait()).count();
        if threads == 0 {
            assert_eq!(s.serial_ns, s.wall_ns, "{s}");
            assert_eq!(waits, 0, "a lone thread has nobody to wait for");
        }
        let busy: u64 = s.busy.iter().map(|b| b.busy_ns).sum();
        assert_eq!(busy, s.work_ns, "busy time and work both leave waits out");
    }
}
