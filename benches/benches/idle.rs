//! CPU time an idle pool of 2 workers burns in 1 s (process CPU time from /proc), for
//! joule and rayon. Run: `cargo bench -p joule-benches --bench idle`.

use std::time::Duration;

fn process_cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: u64 =
        fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0);
    ticks * 10
}

fn measure(name: &str, warm: impl FnOnce()) {
    warm();
    std::thread::sleep(Duration::from_millis(100));
    let before = process_cpu_ms();
    std::thread::sleep(Duration::from_secs(1));
    let used = process_cpu_ms() - before;
    println!(
        "idle_pool_2_workers/{name}: {used} ms of CPU in 1 s ({:.1}% of one core)",
        used as f64 / 10.0
    );
}

fn main() {
    let jobs = joule_jobs::JobSystem::new(2).expect("job system");
    measure("joule", || {
        jobs.parallel_for(0..100_000, 100, |r| {
            std::hint::black_box(r.sum::<usize>());
        })
    });
    drop(jobs);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("rayon");
    measure("rayon", || {
        pool.install(|| {
            use rayon::prelude::*;
            (0..100_000usize).into_par_iter().for_each(|i| {
                std::hint::black_box(i);
            })
        })
    });
}
