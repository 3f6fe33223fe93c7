//! Idle workers park instead of spinning. Kept in its own test binary (its own process)
//! so that no other test's work shows up in the process CPU time it measures.

use std::time::Duration;

use joule_jobs::JobSystem;

fn process_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    // Fields after the command name: state is index 0, utime is 11, stime is 12 (ticks
    // of 10 ms on Linux).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

#[test]
fn idle_workers_sleep_instead_of_spinning() {
    // A functional property, not a speed assertion: parked threads use no CPU, while 4
    // spinning workers would burn up to 2 cores x 300 ms here. The bound (30 ms in 300 ms,
    // a tenth of one core, three clock ticks) only separates "parked" from "spinning".
    let jobs = JobSystem::new(4).unwrap();
    jobs.parallel_for(0..100_000, 100, |r| {
        std::hint::black_box(r.sum::<usize>());
    });
    std::thread::sleep(Duration::from_millis(50));
    let before = process_cpu_time();
    std::thread::sleep(Duration::from_millis(300));
    let used = process_cpu_time() - before;
    assert!(
        used < Duration::from_millis(30),
        "idle pool used {used:?} of CPU in 300 ms"
    );
    drop(jobs);
}
