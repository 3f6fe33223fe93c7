//! Traced phases: a parallel section records one phase span on the thread that ran it,
//! and the pieces it could be cut into as items inside it, so a scaling model can read
//! a one-thread trace (joule-benches' `scaling` tool). Tracing never changes what runs.

use joule_jobs::{ITEM_LABEL, JobSystem, PHASE_LABEL, TEAM_PHASE_LABEL, Team, TraceEvent};

fn inside(e: &TraceEvent, outer: &TraceEvent) -> bool {
    e.thread == outer.thread && outer.start_ns <= e.start_ns && e.end_ns <= outer.end_ns
}

#[test]
fn a_one_thread_loop_records_one_item_per_min_chunk_run_inside_its_phase() {
    let jobs = JobSystem::new(0).unwrap();
    for (len, min_chunk) in [(1000usize, 7usize), (64, 64), (5, 1), (100_000, 1)] {
        let mut plain = vec![0u64; len];
        jobs.parallel_for_slice(&mut plain, min_chunk, |off, c| {
            for (k, x) in c.iter_mut().enumerate() {
                *x = ((off + k) as u64).wrapping_mul(2_654_435_761);
            }
        });
        jobs.set_tracing(true);
        let _ = jobs.take_trace();
        let mut traced = vec![0u64; len];
        jobs.parallel_for_slice(&mut traced, min_chunk, |off, c| {
            for (k, x) in c.iter_mut().enumerate() {
                *x = ((off + k) as u64).wrapping_mul(2_654_435_761);
            }
        });
        jobs.parallel_for(0..len, min_chunk, |r| {
            assert!(
                r.len() <= min_chunk.max(len.div_ceil(256)),
                "traced pieces are min_chunk runs"
            );
        });
        jobs.set_tracing(false);
        assert_eq!(plain, traced, "tracing does not change the results");
        let events = jobs.take_trace();
        let phases: Vec<_> = events.iter().filter(|e| e.label == PHASE_LABEL).collect();
        assert_eq!(phases.len(), 2, "one phase per loop: {events:?}");
        let items: Vec<_> = events.iter().filter(|e| e.label == ITEM_LABEL).collect();
        // Pieces of `min_chunk`, or longer so that a loop records at most 256.
        let piece = min_chunk.max(len.div_ceil(256));
        assert_eq!(
            items.len(),
            2 * len.div_ceil(piece),
            "len {len} / {min_chunk}"
        );
        for i in &items {
            assert!(phases.iter().any(|p| inside(i, p)), "{i:?} in a phase");
        }
    }
}

#[test]
fn a_traced_team_stage_records_its_items_inside_the_stage() {
    for workers in [0, 1, 3] {
        let jobs = JobSystem::new(workers).unwrap();
        let mut team = Team::new();
        jobs.set_tracing(true);
        let _ = jobs.take_trace();
        let sizes = [5usize, 1, 17];
        jobs.team(&mut team, workers, |t| {
            for n in sizes {
                t.run(n, |_| std::hint::black_box(()));
            }
        });
        jobs.set_tracing(false);
        let events = jobs.take_trace();
        let stages: Vec<_> = events
            .iter()
            .filter(|e| e.label == TEAM_PHASE_LABEL)
            .collect();
        // A one-item stage runs on the leader, not handed off: it is no phase.
        let shared: Vec<usize> = sizes.into_iter().filter(|&n| n > 1).collect();
        assert_eq!(stages.len(), shared.len(), "{workers} workers");
        let items: Vec<_> = events.iter().filter(|e| e.label == ITEM_LABEL).collect();
        assert_eq!(
            items.len(),
            shared.iter().sum::<usize>(),
            "{workers} workers"
        );
        for (s, &n) in stages.iter().zip(&shared) {
            // Every item of a stage ran within the stage's window (on whichever thread).
            let within = items
                .iter()
                .filter(|i| s.start_ns <= i.start_ns && i.end_ns <= s.end_ns)
                .count();
            assert_eq!(within, n, "{workers} workers");
        }
    }
}

#[test]
fn a_one_item_stage_runs_on_the_leader_without_a_hand_off() {
    let jobs = JobSystem::new(3).unwrap();
    let mut team = Team::new();
    let leader = std::thread::current().id();
    jobs.team(&mut team, 3, |t| {
        for _ in 0..200 {
            // Two-item stages keep the helpers busy between the one-item stages.
            t.run(2, |_| std::hint::black_box(()));
            t.run(1, |i| {
                assert_eq!(i, 0);
                assert_eq!(std::thread::current().id(), leader, "not handed off");
            });
        }
    });
}
