//! Teams: every item of every stage runs exactly once, a stage sees the writes of the
//! stages before it, panics reach the leader, helpers leave, and nothing allocates per
//! run once the team exists.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use joule_jobs::{JobSystem, Team};

/// Worker counts: none (the leader does everything), fewer and more than this machine's
/// cores (oversubscribed helpers must still let the leader run).
const WORKERS: [usize; 4] = [0, 1, 3, 8];

#[test]
fn every_item_of_every_stage_runs_exactly_once() {
    for workers in WORKERS {
        let jobs = JobSystem::new(workers).unwrap();
        let mut team = Team::new();
        let runs: Vec<AtomicU32> = (0..1000).map(|_| AtomicU32::new(0)).collect();
        for round in 0..20u32 {
            jobs.team(&mut team, workers, |t| {
                for stage in 0..50u32 {
                    let n = ((stage * 37 + round * 11) % 1000) as usize;
                    t.run(n, |i| {
                        runs[i].fetch_add(1, Ordering::Relaxed);
                    });
                    for (i, r) in runs.iter().enumerate() {
                        let want = u32::from(i < n);
                        assert_eq!(
                            r.swap(0, Ordering::Relaxed),
                            want,
                            "item {i} of {n}, stage {stage}, {workers} workers"
                        );
                    }
                }
            });
        }
    }
}

#[test]
fn a_stage_sees_what_the_stages_before_it_wrote() {
    // A ping-pong of two arrays through plain (non-atomic) writes: stage k reads its
    // neighbours' values from stage k - 1, so a missing happens-before shows as a wrong
    // sum.
    for workers in WORKERS {
        let jobs = JobSystem::new(workers).unwrap();
        let mut team = Team::new();
        let n = 4096;
        let mut a: Vec<u64> = (0..n as u64).collect();
        let mut b = vec![0u64; n];
        jobs.team(&mut team, workers, |t| {
            for _ in 0..30 {
                let src = &a;
                t.for_each_chunk_mut(&mut b, 64, |k, chunk| {
                    for (j, x) in chunk.iter_mut().enumerate() {
                        let i = k * 64 + j;
                        *x = src[(i + 1) % n] + 1;
                    }
                });
                std::mem::swap(&mut a, &mut b);
            }
        });
        // After 30 rounds a[i] = a0[(i + 30) % n] + 30.
        for (i, &x) in a.iter().enumerate() {
            assert_eq!(x, ((i + 30) % n) as u64 + 30, "{workers} workers");
        }
    }
}

#[test]
fn two_slices_are_cut_alike() {
    let jobs = JobSystem::new(2).unwrap();
    let mut team = Team::new();
    let mut v: Vec<usize> = vec![0; 1001];
    let mut w: Vec<usize> = (0..1001).collect();
    jobs.team(&mut team, 2, |t| {
        t.for_each_chunk_mut2(&mut v, &mut w, 100, |k, v, w| {
            assert!(v.len() == w.len() && v.len() <= 100);
            for (x, y) in v.iter_mut().zip(w.iter()) {
                *x = y * 2 + k;
            }
        });
    });
    for (i, x) in v.iter().enumerate() {
        assert_eq!(*x, i * 2 + i / 100);
    }
}

#[test]
fn a_panic_in_an_item_reaches_the_leader_after_the_stage_and_the_team_goes_on() {
    for workers in WORKERS {
        let jobs = JobSystem::new(workers).unwrap();
        let mut team = Team::new();
        let ran = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            jobs.team(&mut team, workers, |t| {
                t.run(100, |i| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    assert_ne!(i, 37, "item 37 fails");
                });
            });
        }));
        assert!(caught.is_err(), "the panic reaches the leader");
        assert_eq!(ran.load(Ordering::Relaxed), 100, "every item still ran");
        // The same team and the workers keep working.
        let sum = AtomicUsize::new(0);
        jobs.team(&mut team, workers, |t| {
            t.run(100, |i| {
                sum.fetch_add(i, Ordering::Relaxed);
            });
        });
        assert_eq!(sum.load(Ordering::Relaxed), 4950);
        assert_eq!(
            jobs.unobserved_panics(),
            0,
            "no panic escaped into a worker"
        );
    }
}

#[test]
fn work_spawned_inside_the_team_spreads_and_completes() {
    // The leader runs a nested parallel_for between stages: helpers waiting for the next
    // stage take its chunks, and it completes.
    let jobs = JobSystem::new(3).unwrap();
    let mut team = Team::new();
    let total = AtomicUsize::new(0);
    jobs.team(&mut team, 3, |t| {
        for _ in 0..10 {
            t.run(8, |_| {
                total.fetch_add(1, Ordering::Relaxed);
            });
            t.jobs().parallel_for(0..1000, 10, |r| {
                total.fetch_add(r.len(), Ordering::Relaxed);
            });
        }
    });
    assert_eq!(total.load(Ordering::Relaxed), 10 * (8 + 1000));
}

#[test]
fn helpers_leave_when_the_team_closes() {
    let jobs = JobSystem::new(3).unwrap();
    let mut team = Team::new();
    for _ in 0..100 {
        jobs.team(&mut team, 3, |t| t.run(10, |_| {}));
    }
    // Helpers that never got to join find their run closed and end; then no job is left
    // that a shutdown would have to run or drop.
    let ended = Arc::new(AtomicUsize::new(0));
    let e = ended.clone();
    let c = joule_jobs::Counter::new();
    jobs.spawn_counted(&c, move || {
        e.fetch_add(1, Ordering::SeqCst);
    });
    jobs.wait(&c);
    jobs.shutdown().unwrap();
    assert_eq!(ended.load(Ordering::SeqCst), 1);
}

#[test]
fn teams_led_from_many_jobs_at_once_all_finish() {
    // Six jobs each lead a team of their own at the same time, with nested parallel
    // loops: a worker's helper may find another team's leader job while it waits, and a
    // leader's wait may find a helper job. Every team finishes with every item counted.
    for workers in [1, 2, 3, 8] {
        let jobs = JobSystem::new(workers).unwrap();
        let c = joule_jobs::Counter::new();
        let sums = Arc::new((0..6).map(|_| AtomicUsize::new(0)).collect::<Vec<_>>());
        for k in 0..6 {
            let j = jobs.downgrade();
            let sums = sums.clone();
            jobs.spawn_counted(&c, move || {
                let jobs = j.upgrade().unwrap();
                let mut team = Team::new();
                for _ in 0..20 {
                    jobs.team(&mut team, 8, |t| {
                        for _ in 0..10 {
                            t.run(16, |i| {
                                sums[k].fetch_add(i, Ordering::Relaxed);
                            });
                            t.jobs().parallel_for(0..64, 4, |r| {
                                sums[k].fetch_add(r.len(), Ordering::Relaxed);
                            });
                        }
                    });
                }
            });
        }
        assert!(
            jobs.wait_timeout(&c, std::time::Duration::from_secs(120)),
            "{workers} workers: a team never finished"
        );
        for s in sums.iter() {
            assert_eq!(s.load(Ordering::Relaxed), 20 * 10 * (120 + 64));
        }
    }
}
