//! Golden state hashes: every standard scene, run a fixed number of steps from its build,
//! must end in the checked-in [`World::state_hash`], on 0 and on 2 worker threads. Any
//! machine that runs the tests so checks that it computes the same bits as the machine
//! that blessed them: the promise of README.md's determinism section, that the step calls
//! no platform libm (`joule_physics::math`), fuses no multiply-add, and does the few
//! operations glam computes differently per back-end (cross product, quaternion product,
//! rotation, a quaternion's dot product and normalisation, a `Vec3A`'s normalisation) in
//! one order of its own (`joule_physics::math::{cross, rotate, quat_mul, normalize, ...}`).
//!
//! Promised: x86-64 with any OS, C library and CPU, and any `target-cpu`. CI builds this
//! test three ways and each must give this table: plain (SSE2), with
//! `RUSTFLAGS="-C target-cpu=x86-64-v3"` (FMA on, where glam would fuse), and with glam's
//! portable scalar back-end (`--features joule-physics/glam-scalar-math`, test only).
//!
//! aarch64 (NEON) is tested too: CI cross-builds this test for `aarch64-unknown-linux-gnu`
//! and runs it under `qemu-aarch64` (user-mode emulation of an ARMv8 CPU with NEON), on the
//! serial step only (`JOULE_GOLDEN_WORKERS=0`: emulation is slow, and agreement across
//! thread counts is already checked natively). Every hash of the table held there when it
//! was first run (2026-11-27). glam's NEON code fuses the quaternion product and sums a
//! quaternion's dot product in another order, and the step calls neither; its `Vec3A` dot
//! product, length and `try_normalize` compute SSE2's `(x + y) + z` and `1 / |v|` in scalar
//! code (its `+0`-fourth-lane sum is only behind `dot_into_vec` and `element_sum`, which the
//! step does not call).
//!
//! The worker counts run are [`WORKERS`] unless `JOULE_GOLDEN_WORKERS` names others
//! (comma-separated, e.g. `0` or `0,2`).
//!
//! # Regenerating
//!
//! The hashes change when the physics does, and only then: a commit that changes them
//! says why (what physics changed). To print a new table, in Rust, for [`GOLDEN`]:
//!
//! ```text
//! JOULE_BLESS=1 cargo test -p joule-examples --release --test golden -- --nocapture
//! ```
//!
//! With `JOULE_BLESS=1` the scene tests assert nothing; `bless` runs every scene (still
//! demanding that 0 and 2 workers agree) and prints the table to paste over [`GOLDEN`].

use joule_examples::scenes::{self, SceneKind};
use joule_jobs::JobSystem;
use joule_physics::world::{World, WorldDesc};

/// (scene, steps run, state hash after them). Regenerate as the file's doc says.
const GOLDEN: &[(&str, usize, u64)] = &[
    // BEGIN GOLDEN
    ("pyramid20", 120, 0x410e0afc5df09b1a),
    ("pyramid_big", 120, 0x4bc538f94d307613),
    ("many_pyramids", 60, 0xbfd8cf2a1f3e42d0),
    ("free10k", 60, 0x50d196497865f843),
    ("rain4k", 120, 0x1885dd49ac08f3b1),
    ("terrain", 120, 0x6f2abab84957c13d),
    ("chain_joints", 120, 0x461fb37af5bae4af),
    ("ragdolls", 120, 0x66e1fd5c3085c241),
    // END GOLDEN
];

/// The worker counts each scene runs on: the serial step and a parallel one.
const WORKERS: [usize; 2] = [0, 2];

/// [`WORKERS`], or the comma-separated counts of `JOULE_GOLDEN_WORKERS` when it is set
/// (the emulated aarch64 run uses `0`).
fn workers() -> Vec<usize> {
    match std::env::var("JOULE_GOLDEN_WORKERS") {
        Ok(list) => list
            .split(',')
            .map(|w| {
                w.trim()
                    .parse()
                    .expect("JOULE_GOLDEN_WORKERS: expected comma-separated worker counts")
            })
            .collect(),
        Err(_) => WORKERS.to_vec(),
    }
}

fn blessing() -> bool {
    std::env::var_os("JOULE_BLESS").is_some_and(|v| v == "1")
}

/// The state hash of scene `name` after `steps` steps on `workers` workers.
fn run(name: &str, steps: usize, workers: usize) -> u64 {
    let kind = SceneKind::from_name(name).expect("GOLDEN names only standard scenes");
    let desc = WorldDesc {
        gravity: kind.gravity(),
        ..WorldDesc::default()
    };
    let mut world = World::new(desc, JobSystem::new(workers).unwrap());
    scenes::build(kind, &mut world).unwrap();
    for _ in 0..steps {
        world.step(scenes::DT);
    }
    world.state_hash()
}

/// The hash of scene `name` on every worker count of [`workers`], which must agree.
fn agreed_hash(name: &str, steps: usize) -> u64 {
    let counts = workers();
    let hashes: Vec<u64> = counts.iter().map(|&w| run(name, steps, w)).collect();
    assert!(
        hashes.iter().all(|&h| h == hashes[0]),
        "{name}: {steps} steps on {counts:?} workers gave different hashes {hashes:x?}"
    );
    hashes[0]
}

fn check(name: &str) {
    if blessing() {
        return;
    }
    let &(_, steps, expected) = GOLDEN
        .iter()
        .find(|(n, ..)| *n == name)
        .expect("every standard scene has a golden hash");
    let hash = agreed_hash(name, steps);
    assert_eq!(
        hash, expected,
        "{name}: state hash after {steps} steps is {hash:#018x}, golden {expected:#018x}. \
         If the physics changed on purpose, regenerate (see tests/golden.rs) and say why \
         in the commit; if not, this machine computes different bits"
    );
}

#[test]
fn every_standard_scene_has_a_golden_hash() {
    for kind in SceneKind::ALL.into_iter().chain(SceneKind::WITH_JOINTS) {
        assert!(
            GOLDEN.iter().any(|(n, ..)| *n == kind.name()),
            "{} has no golden hash",
            kind.name()
        );
    }
}

#[test]
fn bless() {
    if !blessing() {
        return;
    }
    let mut table = String::from("    // BEGIN GOLDEN\n");
    for &(name, steps, _) in GOLDEN {
        let hash = agreed_hash(name, steps);
        table += &format!("    ({name:?}, {steps}, {hash:#018x}),\n");
    }
    table += "    // END GOLDEN";
    println!("golden hashes for examples/tests/golden.rs:\n{table}");
}

#[test]
fn golden_pyramid20() {
    check("pyramid20");
}

#[test]
fn golden_pyramid_big() {
    check("pyramid_big");
}

#[test]
fn golden_many_pyramids() {
    check("many_pyramids");
}

#[test]
fn golden_free10k() {
    check("free10k");
}

#[test]
fn golden_rain4k() {
    check("rain4k");
}

#[test]
fn golden_terrain() {
    check("terrain");
}

#[test]
fn golden_chain_joints() {
    check("chain_joints");
}

#[test]
fn golden_ragdolls() {
    check("ragdolls");
}
