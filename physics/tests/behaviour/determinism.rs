//! Determinism: the same scene gives bit-identical states at every step for any thread
//! count (0, 1, 2, 4, 8 workers) and across runs.

use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::joint::{AxisDrive, AxisLimit, JointDesc, JointKind};
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
use joule_physics::solver::use_avx2;
use joule_physics::world::{World, WorldDesc};

const DT: f32 = 1.0 / 60.0;

fn ground(w: &mut World) {
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(40.0, 0.5, 40.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    ))
    .unwrap();
}

/// 500 spheres and boxes dropped on a jittered grid (rain4k's recipe, smaller).
fn rain(threads: usize) -> World {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(threads).unwrap());
    ground(&mut w);
    let mut state = 0x5eed_0000_0000_0500u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    };
    for idx in 0..500usize {
        let (layer, i, k) = (idx / 49, (idx / 7) % 7, idx % 7);
        let p = Vec3::new(
            -5.0 + 1.4 * i as f32 + next() * 0.4,
            2.0 + 1.5 * layer as f32,
            -5.0 + 1.4 * k as f32 + next() * 0.4,
        );
        let shape = if (i + k + layer) % 2 == 0 {
            Shape::sphere(0.5).unwrap()
        } else {
            Shape::cuboid(Vec3::splat(0.5)).unwrap()
        };
        w.create_body(&BodyDesc::dynamic(shape, p)).unwrap();
    }
    w
}

fn pyramid(threads: usize) -> World {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(threads).unwrap());
    ground(&mut w);
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    for row in 0..20 {
        let n = 20 - row;
        for j in 0..n {
            let x = j as f32 - (n as f32 - 1.0) / 2.0;
            w.create_body(&BodyDesc {
                allow_sleep: false,
                ..BodyDesc::dynamic(cube.clone(), Vec3::new(x, 0.5 + row as f32, 0.0))
            })
            .unwrap();
        }
    }
    w
}

/// 16 chains of 8 boxes falling onto the ground, each box tied to the last by a ball, a
/// swing-twist or a limited hinge joint in turn (the joint kinds the solver bundles), the
/// first hung from the world.
fn jointed(threads: usize) -> World {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(threads).unwrap());
    ground(&mut w);
    let link = Shape::cuboid(Vec3::new(0.2, 0.1, 0.1)).unwrap();
    for chain in 0..16 {
        let top = Vec3::new(
            -6.0 + 0.8 * (chain % 4) as f32 * 4.0,
            6.0,
            -6.0 + 4.0 * (chain / 4) as f32,
        );
        let mut prev = None;
        for l in 0..8 {
            let p = top + Vec3::new(0.5 * l as f32 + 0.25, 0.0, 0.1 * (chain % 3) as f32);
            let b = w.create_body(&BodyDesc::dynamic(link.clone(), p)).unwrap();
            let kind = match l % 3 {
                0 => JointKind::Ball,
                1 => JointKind::SwingTwist {
                    swing_half_angle: 0.5,
                    twist: AxisLimit {
                        lower: -0.3,
                        upper: 0.3,
                    },
                },
                _ => JointKind::Hinge(AxisDrive {
                    limit: Some(AxisLimit {
                        lower: -0.8,
                        upper: 0.8,
                    }),
                    ..AxisDrive::default()
                }),
            };
            let anchor = p - Vec3::new(0.25, 0.0, 0.0);
            let (fa, fb) = w.joint_frames_at(prev, b, anchor, Vec3::Z).unwrap();
            w.create_joint(&JointDesc::new(kind, prev, b, fa, fb))
                .unwrap();
            prev = Some(b);
        }
    }
    w
}

/// A scene built for a number of worker threads.
type Scene = fn(usize) -> World;

fn hashes(mut w: World, steps: usize) -> Vec<u64> {
    (0..steps)
        .map(|_| {
            w.step(DT);
            w.state_hash()
        })
        .collect()
}

fn check(make: Scene, name: &str) {
    let reference = hashes(make(0), 300);
    assert_ne!(reference[0], reference[299], "{name}: the scene moves");
    for threads in [1, 2, 4, 8] {
        let h = hashes(make(threads), 300);
        if let Some(step) = h.iter().zip(&reference).position(|(a, b)| a != b) {
            panic!("{name}: {threads} workers diverge from 0 workers at step {step}");
        }
    }
    assert_eq!(
        hashes(make(2), 300),
        reference,
        "{name}: a second run is identical"
    );
}

#[test]
fn rain_is_bit_identical_at_any_thread_count() {
    check(rain, "rain500");
}

#[test]
fn pyramid_is_bit_identical_at_any_thread_count() {
    check(pyramid, "pyramid20");
}

#[test]
fn jointed_chains_are_bit_identical_at_any_thread_count() {
    check(jointed, "jointed chains");
}

/// The bundled passes run compiled for AVX2 where the CPU has it and for the baseline
/// otherwise: both must compute the same bits (rain: masked contact bundles of mixed point
/// counts; pyramid: full ones; chains: the ball, swing-twist and hinge bundles).
#[test]
fn the_avx2_and_baseline_paths_compute_the_same_bits() {
    #[cfg(target_arch = "x86_64")]
    if !std::arch::is_x86_feature_detected!("avx2") {
        eprintln!("this CPU has no AVX2: both runs take the baseline path");
    }
    let scenes: [(Scene, &str); 3] = [
        (rain, "rain500"),
        (pyramid, "pyramid20"),
        (jointed, "jointed chains"),
    ];
    for (make, name) in scenes {
        use_avx2(false);
        let baseline = hashes(make(1), 200);
        use_avx2(true);
        let wide = hashes(make(1), 200);
        if let Some(step) = wide.iter().zip(&baseline).position(|(a, b)| a != b) {
            panic!("{name}: the AVX2 path diverges from the baseline at step {step}");
        }
    }
}
