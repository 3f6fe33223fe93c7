//! Heap bytes per awake body and per contact in joule (issue 14 item 5), counted by a
//! global allocator that tracks live bytes.
//!
//! ```sh
//! cargo run --release -p joule-benches --bin memory
//! ```
//!
//! Per body: free10k's 10,000 awake spheres (no contacts) after its warm-up, less an
//! empty world's bytes, over 10,000. Per contact: many_pyramids after its warm-up (5,500
//! boxes touching), less what its bodies cost at the per-body figure and the empty world,
//! over its contact count. Capacities grown by doubling are included, as a user pays them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::world::{World, WorldDesc};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Live heap bytes of a world holding `kind` after its warm-up, and its contact count.
fn world_bytes(kind: Option<SceneKind>) -> (isize, usize, usize) {
    let jobs = JobSystem::new(0).expect("job system");
    let before = live();
    let mut w = World::new(
        WorldDesc {
            gravity: kind.map_or(WorldDesc::default().gravity, |k| k.gravity()),
            ..WorldDesc::default()
        },
        jobs,
    );
    let mut bodies = 0;
    if let Some(kind) = kind {
        let scene = scenes::build(kind, &mut w).expect("scene");
        bodies = scene.bodies.len();
        for _ in 0..kind.run_lengths().0 {
            w.step(scenes::DT);
        }
    } else {
        w.step(scenes::DT);
    }
    let bytes = live() - before;
    let contacts = w.contact_count();
    drop(w);
    (bytes, bodies, contacts)
}

fn main() {
    let (empty, _, _) = world_bytes(None);
    let (free, n, _) = world_bytes(Some(SceneKind::Free10k));
    let per_body = (free - empty) as f64 / n as f64;
    let (piles, m, contacts) = world_bytes(Some(SceneKind::ManyPyramids));
    let per_contact = (piles as f64 - empty as f64 - per_body * (m + 1) as f64) / contacts as f64;
    println!("empty world: {empty} bytes");
    println!("free10k: {free} bytes for {n} awake bodies: {per_body:.0} bytes per awake body");
    println!(
        "many_pyramids: {piles} bytes for {m} bodies and {contacts} contacts: {per_contact:.0} bytes per contact"
    );
}
