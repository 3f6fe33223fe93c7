//! The decoders of `joule_physics::net` (server packets, client packets, shape definitions)
//! take millions of random and mutated packets
//! without a panic, a hang or an allocation the packet's length does not bound (issue 32
//! §Packet validation; STYLE.md: bytes from outside are hostile).
//!
//! The packets come from a seeded generator (no nightly fuzzer here): valid packets of
//! every kind, then mutated (bits flipped, truncated, extended, a span set to all ones so
//! a count or a width becomes huge), and pure noise. The largest single allocation made
//! while decoding is measured with a global allocator wrapping the system one; this file
//! is its own test binary, as `no_alloc.rs` is, so nothing else allocates while it counts.
#![cfg(feature = "net")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use joule_physics::joint::{AxisDrive, AxisLimit, Dof, JointKind, Motor, SixDof, Spring};
use joule_physics::math::{Isometry, Quat, Vec2, Vec3};
use joule_physics::net::shapes::SHAPE_PART_BYTES;
use joule_physics::net::{
    Action, BodyState, ChildDef, ClientMessage, Codec, InputFrame, JointSpawn, NetConfig,
    NetMotion, ServerMessage, ShapeDef, SnapshotState, Spawn,
};

struct Measuring;

static MEASURING: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the measure only
// adds relaxed loads and a relaxed max (read on the same thread after the decode).
unsafe impl GlobalAlloc for Measuring {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MEASURING.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if MEASURING.load(Ordering::Relaxed) {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Measuring = Measuring;

/// xorshift64*: small, seeded, the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn f32(&mut self, scale: f32) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
    }
}

fn random_state(rng: &mut Rng, codec: &Codec) -> BodyState {
    codec.quantize(
        Vec3::new(rng.f32(900.0), rng.f32(90.0), rng.f32(900.0)),
        Quat::from_xyzw(
            rng.f32(1.0),
            rng.f32(1.0),
            rng.f32(1.0),
            rng.f32(1.0) + 0.01,
        )
        .normalize(),
        Vec3::new(rng.f32(20.0), rng.f32(20.0), rng.f32(20.0)),
        Vec3::new(rng.f32(5.0), rng.f32(5.0), rng.f32(5.0)),
    )
}

fn random_snapshot(rng: &mut Rng, codec: &Codec, tick: u32, n: u64) -> SnapshotState {
    let mut id = rng.below(10) as u32;
    let mut bodies = Vec::new();
    for _ in 0..rng.below(n) {
        let spread = if rng.below(4) == 0 { 1000 } else { 3 };
        id += 1 + rng.below(spread) as u32;
        bodies.push((id, random_state(rng, codec)));
    }
    SnapshotState { tick, bodies }
}

/// The next state of a baseline: some bodies move, some leave, some arrive.
fn evolve(rng: &mut Rng, codec: &Codec, base: &SnapshotState) -> SnapshotState {
    let mut bodies: Vec<(u32, BodyState)> = Vec::new();
    for &(id, mut s) in &base.bodies {
        if rng.below(10) == 0 {
            continue;
        }
        if rng.below(3) == 0 {
            s.position[0] = s.position[0].saturating_sub(rng.below(300) as u32);
            s.linear_velocity[1] = s.linear_velocity[1]
                .saturating_add(rng.below(50) as u32)
                .min(25_600);
        }
        bodies.push((id, s));
    }
    let last = bodies.last().map_or(0, |&(id, _)| id);
    for k in 0..rng.below(4) as u32 {
        bodies.push((last + 1 + k, random_state(rng, codec)));
    }
    SnapshotState {
        tick: base.tick + 1,
        bodies,
    }
}

fn random_vec(rng: &mut Rng, scale: f32) -> Vec3 {
    Vec3::new(rng.f32(scale), rng.f32(scale), rng.f32(scale))
}

fn random_pose(rng: &mut Rng) -> Isometry {
    let q = Quat::from_xyzw(
        rng.f32(1.0),
        rng.f32(1.0),
        rng.f32(1.0),
        rng.f32(1.0) + 0.01,
    );
    Isometry::new(random_vec(rng, 5.0), q.normalize())
}

/// A shape definition of any kind, small (the fuzz stays fast).
fn random_shape(rng: &mut Rng) -> ShapeDef {
    let size = |rng: &mut Rng| rng.f32(2.0).abs() + 0.1;
    match rng.below(9) {
        0 => ShapeDef::Sphere { radius: size(rng) },
        1 => ShapeDef::Cuboid {
            half_extents: Vec3::new(size(rng), size(rng), size(rng)),
        },
        2 => ShapeDef::Capsule {
            half_height: size(rng),
            radius: size(rng),
        },
        3 => ShapeDef::Cylinder {
            half_height: size(rng),
            radius: size(rng),
        },
        4 => ShapeDef::ConvexHull {
            points: (0..4 + rng.below(12))
                .map(|_| random_vec(rng, 3.0))
                .collect(),
        },
        5 => ShapeDef::HalfSpace {
            normal: Vec3::Y,
            offset: rng.f32(10.0),
        },
        6 => ShapeDef::Compound {
            children: (0..1 + rng.below(4))
                .map(|_| ChildDef {
                    shape: ShapeDef::Sphere { radius: size(rng) },
                    pose: random_pose(rng),
                    material: rng.below(3) as u32,
                })
                .collect(),
        },
        7 => {
            let nv = 3 + rng.below(20) as u32;
            let triangles: Vec<[u32; 3]> = (0..1 + rng.below(20))
                .map(|_| [0, 1, 2].map(|_| rng.below(u64::from(nv)) as u32))
                .collect();
            let materials = if rng.below(2) == 0 {
                Vec::new()
            } else {
                triangles.iter().map(|_| rng.below(5) as u32).collect()
            };
            ShapeDef::TriangleMesh {
                vertices: (0..nv).map(|_| random_vec(rng, 10.0)).collect(),
                triangles,
                materials,
            }
        }
        _ => {
            let (nx, nz) = (2 + rng.below(6) as u32, 2 + rng.below(6) as u32);
            let cells = ((nx - 1) * (nz - 1)) as usize;
            ShapeDef::HeightField {
                nx,
                nz,
                cell: Vec2::new(size(rng), size(rng)),
                heights: (0..nx * nz).map(|_| rng.f32(3.0)).collect(),
                holes: if rng.below(2) == 0 {
                    Vec::new()
                } else {
                    (0..cells).map(|_| rng.below(4) == 0).collect()
                },
            }
        }
    }
}

fn random_joint(rng: &mut Rng, net_id: u32) -> JointSpawn {
    let limit = AxisLimit {
        lower: -rng.f32(1.0).abs(),
        upper: rng.f32(1.0).abs(),
    };
    let motor = Motor::Position {
        target: rng.f32(1.0),
        hertz: 2.0,
        damping_ratio: 1.0,
        max_force: 50.0,
    };
    let kind = match rng.below(8) {
        0 => JointKind::Ball,
        1 => JointKind::Fixed,
        2 => JointKind::Hinge(AxisDrive {
            limit: Some(limit),
            spring: None,
            motor: Some(motor),
        }),
        3 => JointKind::Slider(AxisDrive {
            limit: None,
            spring: Some(Spring {
                hertz: 1.0,
                damping_ratio: 0.5,
                rest: 0.2,
            }),
            motor: Some(Motor::Velocity {
                speed: 1.0,
                max_force: 10.0,
            }),
        }),
        4 => JointKind::Distance {
            min: 0.5,
            max: 2.0,
            spring: None,
        },
        5 => JointKind::Cone { half_angle: 0.7 },
        6 => JointKind::SwingTwist {
            swing_half_angle: 0.4,
            twist: limit,
        },
        _ => JointKind::SixDof(SixDof {
            linear: [Dof::Locked, Dof::Free, Dof::Limited(limit)],
            angular: [Dof::Free, Dof::Locked, Dof::Locked],
            linear_motors: [None, Some(motor), None],
            angular_motors: [None, None, None],
        }),
    };
    JointSpawn {
        net_id,
        body_a: (rng.below(3) != 0).then_some(1 + rng.below(10) as u32),
        body_b: 20 + rng.below(10) as u32,
        kind,
        frame_a: random_pose(rng),
        frame_b: random_pose(rng),
        collide_connected: rng.below(2) == 0,
        break_force: if rng.below(2) == 0 {
            f32::INFINITY
        } else {
            rng.f32(1.0e4).abs()
        },
        break_torque: f32::INFINITY,
    }
}

fn valid_server_packet(rng: &mut Rng, codec: &Codec, baseline: &SnapshotState) -> Vec<u8> {
    match rng.below(5) {
        0 => {
            let next = evolve(rng, codec, baseline);
            ServerMessage::encode_snapshot(codec, &next, Some(baseline))
        }
        1 => ServerMessage::encode_snapshot(codec, &random_snapshot(rng, codec, 9, 40), None),
        2 => {
            let spawns = (0..rng.below(6) as u32)
                .map(|i| {
                    let motion = [NetMotion::Static, NetMotion::Dynamic, NetMotion::Kinematic]
                        [i as usize % 3];
                    Spawn {
                        net_id: 100 + i * 3,
                        shape_id: i,
                        motion,
                        state: random_state(rng, codec),
                        friction: rng.f32(1.0).abs(),
                        restitution: rng.f32(1.0).abs(),
                        material: rng.below(4) as u16,
                        pose: (motion == NetMotion::Static).then(|| random_pose(rng)),
                    }
                })
                .collect();
            let joints = (0..rng.below(3) as u32)
                .map(|i| random_joint(rng, 7 + i * 2))
                .collect();
            ServerMessage::World {
                spawns,
                despawns: (0..rng.below(5) as u32).map(|i| i * 7).collect(),
                owned: (0..rng.below(3) as u32).collect(),
                joints,
                joint_despawns: (0..rng.below(3) as u32).map(|i| i * 5 + 1).collect(),
            }
            .encode(codec)
        }
        3 => {
            let bytes = random_shape(rng).encode();
            let offset = rng.below(bytes.len() as u64) as usize;
            let end = bytes.len().min(offset + SHAPE_PART_BYTES);
            ServerMessage::ShapePart {
                shape_id: rng.below(100) as u32,
                total: bytes.len() as u32,
                offset: offset as u32,
                data: bytes[offset..end].to_vec(),
            }
            .encode(codec)
        }
        _ => ServerMessage::TimeRes {
            id: rng.next() as u32,
            server_time: f64::from(rng.f32(1000.0).abs()),
        }
        .encode(codec),
    }
}

fn valid_client_packet(rng: &mut Rng) -> Vec<u8> {
    if rng.below(4) == 0 {
        return ClientMessage::TimeReq {
            id: rng.next() as u32,
        }
        .encode();
    }
    let first = rng.below(1000) as u32 + 1;
    let inputs = (0..rng.below(17) as u32)
        .map(|k| InputFrame {
            seq: first + k,
            time: f64::from(k) / 60.0,
            actions: (0..rng.below(4))
                .map(|_| Action {
                    body: rng.below(50) as u32,
                    impulse: Vec3::new(rng.f32(10.0), rng.f32(10.0), rng.f32(10.0)),
                })
                .collect(),
        })
        .collect();
    ClientMessage::Update {
        ack: rng.next() as u32,
        inputs,
    }
    .encode()
}

fn mutate(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    match rng.below(5) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                if !bytes.is_empty() {
                    let bit = rng.below(bytes.len() as u64 * 8);
                    bytes[(bit / 8) as usize] ^= 1 << (bit % 8);
                }
            }
        }
        1 => {
            let keep = rng.below(bytes.len() as u64 + 1) as usize;
            bytes.truncate(keep);
        }
        2 => {
            for _ in 0..1 + rng.below(64) {
                bytes.push(rng.next() as u8);
            }
        }
        3 => {
            // A span of ones: a count, a width or a tag at its largest.
            if !bytes.is_empty() {
                let start = rng.below(bytes.len() as u64 * 8);
                for bit in start..(start + 6 + rng.below(33)).min(bytes.len() as u64 * 8) {
                    bytes[(bit / 8) as usize] |= 1 << (bit % 8);
                }
            }
        }
        _ => {
            let n = rng.below(300) as usize;
            bytes = (0..n).map(|_| rng.next() as u8).collect();
        }
    }
    bytes
}

/// Decodes `bytes` every way (server packet, client packet, shape definition),
/// measuring the largest allocation, and checks it against a bound of the packet's
/// length (and the baseline's, which is this side's own state).
fn decode_all(codec: &Codec, bytes: &[u8], baseline: &SnapshotState) -> [bool; 3] {
    LARGEST.store(0, Ordering::Relaxed);
    MEASURING.store(true, Ordering::Relaxed);
    let server = ServerMessage::decode(bytes, codec, |tick| {
        (tick == baseline.tick).then_some(baseline)
    });
    let client = ClientMessage::decode(bytes, codec);
    let shape = ShapeDef::decode(bytes);
    MEASURING.store(false, Ordering::Relaxed);
    let largest = LARGEST.load(Ordering::Relaxed);
    // A snapshot entry is 56 bytes in memory and costs at least 4 bits, an id 4 bytes
    // and at least 1 bit, a mesh triangle 12 bytes and at least 3 bits; a merge with the
    // baseline adds the baseline's own entries.
    let bound = 128 * bytes.len() + 64 * baseline.bodies.len() + 1024;
    assert!(
        largest <= bound,
        "decoding {} bytes allocated {largest} bytes at once (bound {bound}): {bytes:?}",
        bytes.len()
    );
    [server.is_ok(), client.is_ok(), shape.is_ok()]
}

#[test]
fn millions_of_random_and_mutated_packets_are_refused_or_read_safely() {
    let codec = Codec::new(NetConfig::default()).unwrap();
    let mut rng = Rng(0x5eed_0032);
    let rounds: u32 = std::env::var("JOULE_NET_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let mut baseline = random_snapshot(&mut rng, &codec, 41, 60);
    let (mut accepted, mut refused) = (0u64, 0u64);
    for round in 0..rounds {
        if round % 4096 == 0 {
            baseline = random_snapshot(&mut rng, &codec, 41 + round, 60);
        }
        let valid = match rng.below(5) {
            0 | 1 => valid_server_packet(&mut rng, &codec, &baseline),
            2 | 3 => valid_client_packet(&mut rng),
            _ => random_shape(&mut rng).encode(),
        };
        let packet = if round % 64 == 0 {
            valid
        } else {
            mutate(&mut rng, valid)
        };
        if decode_all(&codec, &packet, &baseline).contains(&true) {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    // Both outcomes happen: the valid packets pass and most mutations are refused.
    assert!(accepted >= u64::from(rounds / 64), "accepted {accepted}");
    assert!(refused > u64::from(rounds / 2), "refused {refused}");
    // An oversized packet is refused by its length alone.
    let huge = vec![0xffu8; joule_physics::net::MAX_PACKET_BYTES + 1];
    assert_eq!(decode_all(&codec, &huge, &baseline), [false, false, false]);
}
