//! Job-system benchmarks, joule against rayon and crossbeam-deque in the same run.
//!
//! Groups are named `<workload>/t<N>`, members after the implementation (`joule`,
//! `rayon`, `crossbeam`, `sequential`). `tN` means N threads in total run jobs: joule has
//! N-1 workers plus the calling thread (which helps while it waits), rayon a pool of N
//! (the workload runs inside `install`).

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use joule_jobs::{Job, JobSystem, deque};

const THREADS: [usize; 2] = [1, 2];

fn joule(n: usize) -> JobSystem {
    JobSystem::new(n - 1).expect("job system")
}

fn rayon_pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("rayon pool")
}

fn quick(
    c: &mut Criterion,
    name: String,
) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    g
}

fn spawn_100k(c: &mut Criterion) {
    for t in THREADS {
        let jobs = joule(t);
        let pool = rayon_pool(t);
        let hits = AtomicUsize::new(0);
        let mut g = quick(c, format!("spawn_100k/t{t}"));
        g.bench_function("joule", |b| {
            b.iter(|| {
                jobs.scope(|s| {
                    for _ in 0..100_000 {
                        s.spawn(|_| {
                            hits.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                pool.install(|| {
                    rayon::scope(|s| {
                        for _ in 0..100_000 {
                            s.spawn(|_| {
                                hits.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    })
                })
            })
        });
        g.finish();
    }
}

fn fib_joule(jobs: &JobSystem, n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = jobs.join(|| fib_joule(jobs, n - 1), || fib_joule(jobs, n - 2));
    a + b
}

fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib25(c: &mut Criterion) {
    // No sequential cutoff for either: every call below n = 2 is a join.
    for t in THREADS {
        let jobs = joule(t);
        let pool = rayon_pool(t);
        let mut g = quick(c, format!("fib25/t{t}"));
        g.bench_function("joule", |b| {
            b.iter(|| black_box(fib_joule(&jobs, black_box(25))))
        });
        g.bench_function("rayon", |b| {
            b.iter(|| pool.install(|| black_box(fib_rayon(black_box(25)))))
        });
        g.finish();
    }
}

fn parallel_for_1m(c: &mut Criterion) {
    use rayon::prelude::*;
    const MIN_CHUNK: usize = 16 * 1024;
    for t in THREADS {
        let jobs = joule(t);
        let pool = rayon_pool(t);
        let mut v = vec![1.0f32; 1_000_000];
        let mut g = quick(c, format!("parallel_for_1m/t{t}"));
        g.bench_function("joule", |b| {
            b.iter(|| {
                jobs.parallel_for_slice(&mut v, MIN_CHUNK, |_, chunk| {
                    for x in chunk {
                        *x = *x * 1.0001 + 1.0;
                    }
                })
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                pool.install(|| {
                    v.par_chunks_mut(MIN_CHUNK).for_each(|chunk| {
                        for x in chunk {
                            *x = *x * 1.0001 + 1.0;
                        }
                    })
                })
            })
        });
        g.bench_function("sequential", |b| {
            b.iter(|| {
                for x in v.iter_mut() {
                    *x = *x * 1.0001 + 1.0;
                }
                black_box(&v);
            })
        });
        g.finish();
    }
}

/// About 1 µs of arithmetic on this machine class, not optimised away.
#[inline(never)]
fn one_microsecond(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn parallel_for_10k_1us(c: &mut Criterion) {
    use rayon::prelude::*;
    for t in THREADS {
        let jobs = joule(t);
        let pool = rayon_pool(t);
        let sink = AtomicUsize::new(0);
        let mut g = quick(c, format!("parallel_for_10k_1us/t{t}"));
        g.bench_function("joule", |b| {
            b.iter(|| {
                jobs.parallel_for(0..10_000, 16, |r| {
                    let mut acc = 0u64;
                    for i in r {
                        acc = acc.wrapping_add(one_microsecond(i as u64));
                    }
                    sink.fetch_add(acc as usize, Ordering::Relaxed);
                })
            })
        });
        g.bench_function("rayon", |b| {
            b.iter(|| {
                pool.install(|| {
                    (0..10_000usize)
                        .into_par_iter()
                        .with_min_len(16)
                        .for_each(|i| {
                            black_box(one_microsecond(i as u64));
                        })
                })
            })
        });
        g.bench_function("sequential", |b| {
            b.iter(|| {
                for i in 0..10_000u64 {
                    black_box(one_microsecond(i));
                }
            })
        });
        g.finish();
    }
}

fn deque_ops(c: &mut Criterion) {
    const N: usize = 200;
    let mut g = quick(c, "deque_push_pop".to_string());
    g.bench_function("joule", |b| {
        let (w, _s) = deque::new();
        b.iter(|| {
            for _ in 0..N {
                w.push(Job::new("b", || {})).unwrap();
            }
            while let Some(j) = w.pop() {
                black_box(j);
            }
        })
    });
    g.bench_function("crossbeam", |b| {
        let w = crossbeam_deque::Worker::new_lifo();
        b.iter(|| {
            for _ in 0..N {
                w.push(Job::new("b", || {}));
            }
            while let Some(j) = w.pop() {
                black_box(j);
            }
        })
    });
    g.finish();

    let mut g = quick(c, "deque_steal".to_string());
    g.bench_function("joule", |b| {
        let (w, s) = deque::new();
        b.iter_batched(
            || {
                for _ in 0..N {
                    w.push(Job::new("b", || {})).unwrap();
                }
            },
            |()| {
                while let deque::Steal::Success(j) = s.steal() {
                    black_box(j);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("crossbeam", |b| {
        let w = crossbeam_deque::Worker::new_lifo();
        let s = w.stealer();
        b.iter_batched(
            || {
                for _ in 0..N {
                    w.push(Job::new("b", || {}));
                }
            },
            |()| {
                while let crossbeam_deque::Steal::Success(j) = s.steal() {
                    black_box(j);
                }
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Spawn cost on a thread that has used (created, used, dropped) 2,000 job systems before,
/// beside a fresh thread's (issue 12 item 3: a thread used to keep an entry per dead
/// system, and every spawn searched them). Each sample runs on a new thread, which for
/// `after_2000_systems` first goes through the 2,000 cycles untimed; then 10,000 empty jobs
/// are spawned into a system with no workers and run by `run_pending`, per iteration.
fn spawn_after_history(c: &mut Criterion) {
    const SPAWNS: usize = 10_000;
    fn timed(history: usize, iters: u64) -> Duration {
        std::thread::spawn(move || {
            for _ in 0..history {
                let jobs = JobSystem::new(0).expect("job system");
                jobs.spawn(|| {});
                jobs.run_pending();
            }
            let jobs = JobSystem::new(0).expect("job system");
            jobs.run_pending(); // registers this thread, outside the timing
            let t0 = std::time::Instant::now();
            for _ in 0..iters {
                for _ in 0..SPAWNS {
                    jobs.spawn(|| {});
                }
                jobs.run_pending();
            }
            t0.elapsed()
        })
        .join()
        .expect("bench thread")
    }
    let mut g = quick(c, "spawn_10k_after_history/t1".to_string());
    g.bench_function("fresh_thread", |b| b.iter_custom(|iters| timed(0, iters)));
    g.bench_function("after_2000_systems", |b| {
        b.iter_custom(|iters| timed(2000, iters))
    });
    g.finish();
}

criterion_group!(
    benches,
    spawn_100k,
    fib25,
    parallel_for_1m,
    parallel_for_10k_1us,
    deque_ops,
    spawn_after_history
);
criterion_main!(benches);
