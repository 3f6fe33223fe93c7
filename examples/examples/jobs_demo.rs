//! A tour of joule-jobs: build a job system with the thread count you want, then time a
//! parallel loop, fork-join recursion, a burst of small jobs and a "main thread only" job,
//! and print a short trace summary.
//!
//! `cargo run --release -p joule-examples --example jobs_demo -- --threads 3`

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use joule_jobs::{Counter, JobSystem};

fn parse_threads() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1))
        })
}

fn fib(jobs: &JobSystem, n: u64) -> u64 {
    if n < 12 {
        return (1..=n).fold((0u64, 1u64), |(a, b), _| (b, a + b)).0;
    }
    let (a, b) = jobs.join(|| fib(jobs, n - 1), || fib(jobs, n - 2));
    a + b
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workers = parse_threads();
    let jobs = JobSystem::builder()
        .threads(workers)
        .thread_name(|i| format!("demo-worker-{i}"))
        .build()?;
    println!(
        "joule-jobs demo: {} workers + the main thread = {} threads",
        jobs.num_workers(),
        jobs.num_threads()
    );

    let mut data = vec![1.0f32; 4_000_000];
    let t = Instant::now();
    {
        let chunks: Vec<&mut [f32]> = data.chunks_mut(64 * 1024).collect();
        jobs.scope(|s| {
            for c in chunks {
                s.spawn(move |_| c.iter_mut().for_each(|x| *x = *x * 1.0001 + 1.0));
            }
        });
    }
    println!(
        "scope over 4M floats:          {:>8.3} ms (x[0] = {})",
        t.elapsed().as_secs_f64() * 1e3,
        data[0]
    );

    let sum = AtomicU64::new(0);
    let t = Instant::now();
    jobs.parallel_for(0..10_000_000, 4096, |r| {
        let s: u64 = r.map(|i| (i as u64) & 7).sum();
        sum.fetch_add(s, Ordering::Relaxed);
    });
    println!(
        "parallel_for over 10M indices: {:>8.3} ms (sum = {})",
        t.elapsed().as_secs_f64() * 1e3,
        sum.load(Ordering::Relaxed)
    );

    let t = Instant::now();
    let f = fib(&jobs, 32);
    println!(
        "fork-join fib(32):             {:>8.3} ms (= {f})",
        t.elapsed().as_secs_f64() * 1e3
    );

    jobs.set_tracing(true);
    let counter = Counter::new();
    let main = jobs.register_current_thread();
    let t = Instant::now();
    for i in 0..100_000u64 {
        // A weak handle, not a clone: a queued job holding a strong one would keep the
        // system alive, and it stops upgrading once the system shuts down.
        let j = jobs.downgrade();
        jobs.spawn_counted(&counter, move || {
            if i == 99_999
                && let Some(j) = j.upgrade()
            {
                j.spawn_on(main, || {
                    println!("  (this line was printed by a job sent to the main thread)")
                })
                .expect("main thread is registered");
            }
        });
    }
    jobs.wait(&counter);
    jobs.run_pending();
    println!(
        "100k counted jobs:             {:>8.3} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    jobs.set_tracing(false);

    let trace = jobs.take_trace();
    let names = jobs.thread_names();
    let mut per_thread = vec![(0usize, 0u64); names.len()];
    for e in &trace {
        per_thread[e.thread].0 += 1;
        per_thread[e.thread].1 += e.duration_ns();
    }
    println!("trace of the 100k burst: {} events", trace.len());
    for (name, (n, ns)) in names.iter().zip(per_thread) {
        println!("  {name:<16} {n:>7} jobs  {:>8.3} ms busy", ns as f64 / 1e6);
    }
    Ok(())
}
