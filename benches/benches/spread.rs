//! How work spreads: the share of 10,000 jobs of about 1 µs each, spawned into one scope
//! by the calling thread, that other threads run (issue 12 item 7), and how long the
//! scope takes; joule beside rayon (`rayon::scope` inside `install` on a pool of the same
//! size) in the same run.
//!
//! Not a criterion bench: the share is a count, not a time. Each configuration runs a few
//! warm-up scopes, then `ROUNDS` measured ones; it prints the mean share and the median
//! scope time.
//!
//! ```text
//! cargo bench -p joule-benches --bench spread
//! ```

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use joule_jobs::JobSystem;

const JOBS: usize = 10_000;
const ROUNDS: usize = 30;
const WARM_UP: usize = 5;

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

/// Runs `round` (which returns how many jobs ran off the calling thread) and reports.
/// With `idle` the workers are given time to fall asleep before each round (a frame that
/// starts after the machine idled), otherwise rounds follow each other at once.
fn measure(name: &str, idle: bool, mut round: impl FnMut() -> usize) -> (f64, f64) {
    for _ in 0..WARM_UP {
        round();
    }
    let mut shares = 0.0;
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        if idle {
            std::thread::sleep(Duration::from_millis(3));
        }
        let t0 = Instant::now();
        let off = round();
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        shares += off as f64 / JOBS as f64;
    }
    times.sort_by(f64::total_cmp);
    let share = shares / ROUNDS as f64;
    let median = times[ROUNDS / 2];
    let name = format!("{name}{}", if idle { " (after idle)" } else { "" });
    println!(
        "{name:<44} off-caller share {:5.1} %   median scope {median:6.2} ms",
        share * 100.0
    );
    (share, median)
}

fn main() {
    let threads_list: Vec<usize> = std::env::var("SPREAD_THREADS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![2, 4]);
    for idle in [false, true] {
        for &threads in &threads_list {
            run(threads, idle);
        }
    }
}

fn run(threads: usize, idle: bool) {
    {
        let jobs = JobSystem::builder()
            .workers(threads - 1)
            .build()
            .expect("job system");
        measure(&format!("scope_10k_1us/t{threads} joule"), idle, || {
            let off = AtomicUsize::new(0);
            let caller = std::thread::current().id();
            jobs.scope(|s| {
                for i in 0..JOBS {
                    let off = &off;
                    s.spawn(move |_| {
                        black_box(one_microsecond(i as u64));
                        if std::thread::current().id() != caller {
                            off.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
            off.into_inner()
        });
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("rayon pool");
        measure(&format!("scope_10k_1us/t{threads} rayon"), idle, || {
            pool.install(|| {
                let off = AtomicUsize::new(0);
                let caller = std::thread::current().id();
                rayon::scope(|s| {
                    for i in 0..JOBS {
                        let off = &off;
                        s.spawn(move |_| {
                            black_box(one_microsecond(i as u64));
                            if std::thread::current().id() != caller {
                                off.fetch_add(1, Ordering::Relaxed);
                            }
                        });
                    }
                });
                off.into_inner()
            })
        });
        // The same scope opened by a job on a worker (a frame task that fans out): the
        // workers are woken by a worker's pushes, not the caller's.
        measure(
            &format!("scope_10k_1us_in_job/t{threads} joule"),
            idle,
            || {
                let off = std::sync::Arc::new(AtomicUsize::new(0));
                let done = joule_jobs::Counter::new();
                let (j, o) = (jobs.downgrade(), off.clone());
                jobs.spawn_counted(&done, move || {
                    let jobs = j.upgrade().expect("live");
                    let opener = std::thread::current().id();
                    jobs.scope(|s| {
                        for i in 0..JOBS {
                            let off = &o;
                            s.spawn(move |_| {
                                black_box(one_microsecond(i as u64));
                                if std::thread::current().id() != opener {
                                    off.fetch_add(1, Ordering::Relaxed);
                                }
                            });
                        }
                    });
                });
                jobs.wait(&done);
                off.load(Ordering::Relaxed)
            },
        );
        measure(
            &format!("parallel_for_10k_1us/t{threads} joule"),
            idle,
            || {
                let off = AtomicUsize::new(0);
                let caller = std::thread::current().id();
                jobs.parallel_for(0..JOBS, 1, |r| {
                    let n = r.len();
                    for i in r {
                        black_box(one_microsecond(i as u64));
                    }
                    if std::thread::current().id() != caller {
                        off.fetch_add(n, Ordering::Relaxed);
                    }
                });
                off.into_inner()
            },
        );
    }
}
