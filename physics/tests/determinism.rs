//! Determinism: the same scene gives bit-identical states at every step for any thread
//! count (0, 1, 2, 4, 8 workers) and across runs.

use joule_jobs::JobSystem;
use joule_physics::body::BodyDesc;
use joule_physics::math::Vec3;
use joule_physics::shape::Shape;
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

fn hashes(mut w: World, steps: usize) -> Vec<u64> {
    (0..steps)
        .map(|_| {
            w.step(DT);
            w.state_hash()
        })
        .collect()
}

fn check(make: fn(usize) -> World, name: &str) {
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
