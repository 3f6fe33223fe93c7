//! The wire codec: snapshots delta-coded against a baseline come back exactly, unchanged
//! bodies cost nothing, and every message of both sides round-trips; bad client packets
//! are refused with the field named.

use joule_physics::joint::{AxisDrive, AxisLimit, JointKind, Motor};
use joule_physics::math::{Isometry, Quat, Vec3};
use joule_physics::net::{
    Action, ClientMessage, Codec, InputFrame, JointSpawn, NetConfig, NetMotion, ServerMessage,
    SnapshotState, Spawn, WireError,
};

fn codec() -> Codec {
    Codec::new(NetConfig::default()).unwrap()
}

/// 1,000 bodies on a grid, each turned a little.
fn grid(codec: &Codec, tick: u32) -> SnapshotState {
    let bodies = (0..1000u32)
        .map(|i| {
            let p = Vec3::new(
                (i % 10) as f32,
                (i / 100) as f32 * 0.5 + 0.5,
                ((i / 10) % 10) as f32,
            );
            let q = Quat::from_rotation_y(i as f32 * 0.01);
            (i + 1, codec.quantize(p, q, Vec3::ZERO, Vec3::ZERO))
        })
        .collect();
    SnapshotState { tick, bodies }
}

fn decode_against(codec: &Codec, bytes: &[u8], base: &SnapshotState) -> SnapshotState {
    match ServerMessage::decode(bytes, codec, |t| (t == base.tick).then_some(base)).unwrap() {
        ServerMessage::Snapshot(s) => s,
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

#[test]
fn an_unchanged_world_costs_the_header_alone() {
    let codec = codec();
    let base = grid(&codec, 10);
    let mut same = base.clone();
    same.tick = 12;
    let bytes = ServerMessage::encode_snapshot(&codec, &same, Some(&base));
    // kind 3 + tick 32 + baseline 32 + two empty id arrays of 6 bits: 79 bits.
    assert_eq!(bytes.len(), 10, "{bytes:?}");
    assert_eq!(decode_against(&codec, &bytes, &base), same);
    // Against nothing, the same world costs every body in full.
    let full = ServerMessage::encode_snapshot(&codec, &same, None);
    assert!(full.len() > 1000 * 14, "{} bytes", full.len());
}

#[test]
fn changed_moved_removed_and_new_bodies_come_back_exactly() {
    let codec = codec();
    let base = grid(&codec, 20);
    let mut next = base.clone();
    next.tick = 22;
    // Ten bodies fall 5 mm, one turns, three leave, two arrive.
    for (_, s) in next.bodies.iter_mut().skip(100).take(10) {
        s.position[1] -= 5;
        s.linear_velocity[1] -= 33;
    }
    next.bodies[500].1.rotation = codec
        .quantize(
            Vec3::ZERO,
            Quat::from_rotation_x(1.0),
            Vec3::ZERO,
            Vec3::ZERO,
        )
        .rotation;
    next.bodies.retain(|&(id, _)| !(700..703).contains(&id));
    let arrival = codec.quantize(
        Vec3::new(3.0, 40.0, -2.0),
        Quat::IDENTITY,
        Vec3::new(0.0, -9.0, 0.0),
        Vec3::X,
    );
    next.bodies.push((5000, arrival));
    next.bodies.push((5001, arrival));
    let bytes = ServerMessage::encode_snapshot(&codec, &next, Some(&base));
    assert_eq!(decode_against(&codec, &bytes, &base), next);
    // Ten small moves (position and velocity deltas of a few bits), one rotation, two
    // arrivals in full, three removals: far below one full body per changed body.
    assert!(bytes.len() < 160, "{} bytes", bytes.len());
}

#[test]
fn a_snapshot_against_an_unknown_baseline_is_refused() {
    let codec = codec();
    let base = grid(&codec, 30);
    let mut next = base.clone();
    next.tick = 32;
    next.bodies[0].1.position[0] += 1;
    let bytes = ServerMessage::encode_snapshot(&codec, &next, Some(&base));
    let err = ServerMessage::decode(&bytes, &codec, |_| None).unwrap_err();
    assert_eq!(err, WireError::UnknownBaseline { tick: 30 });
}

#[test]
fn world_and_time_messages_round_trip() {
    let codec = codec();
    let state = codec.quantize(
        Vec3::new(1.0, 2.0, 3.0),
        Quat::from_rotation_z(0.3),
        Vec3::Y,
        Vec3::Z,
    );
    let spawn = |net_id, shape_id, motion: NetMotion| Spawn {
        net_id,
        shape_id,
        motion,
        state,
        friction: 0.6,
        restitution: 0.1,
        material: 3,
        pose: (motion == NetMotion::Static)
            .then(|| Isometry::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_z(0.3))),
    };
    let joint = JointSpawn {
        net_id: 4,
        body_a: Some(3),
        body_b: 40,
        kind: JointKind::Hinge(AxisDrive {
            limit: Some(AxisLimit {
                lower: -1.0,
                upper: 0.5,
            }),
            spring: None,
            motor: Some(Motor::Velocity {
                speed: 2.0,
                max_force: 10.0,
            }),
        }),
        frame_a: Isometry::new(Vec3::new(0.5, 0.0, 0.0), Quat::from_rotation_z(0.5)),
        frame_b: Isometry::IDENTITY,
        collide_connected: false,
        break_force: f32::INFINITY,
        break_torque: 200.0,
    };
    let world = ServerMessage::World {
        spawns: vec![
            spawn(3, 1, NetMotion::Dynamic),
            spawn(40, 9, NetMotion::Static),
        ],
        despawns: vec![1, 2],
        owned: vec![3],
        joints: vec![joint],
        joint_despawns: vec![1],
    };
    let bytes = world.encode(&codec);
    assert_eq!(
        ServerMessage::decode(&bytes, &codec, |_| None).unwrap(),
        world
    );
    let res = ServerMessage::TimeRes {
        id: 0xdead_beef,
        server_time: 12.5,
    };
    assert_eq!(
        ServerMessage::decode(&res.encode(&codec), &codec, |_| None).unwrap(),
        res
    );
    let req = ClientMessage::TimeReq { id: 77 };
    assert_eq!(ClientMessage::decode(&req.encode(), &codec).unwrap(), req);
}

fn update(frames: Vec<InputFrame>) -> Vec<u8> {
    ClientMessage::Update {
        ack: 5,
        inputs: frames,
    }
    .encode()
}

fn frame(seq: u32, impulse: Vec3) -> InputFrame {
    InputFrame {
        seq,
        time: f64::from(seq) / 60.0,
        actions: vec![Action { body: 3, impulse }],
    }
}

#[test]
fn input_histories_round_trip() {
    let codec = codec();
    let msg = ClientMessage::Update {
        ack: 99,
        inputs: (1..=16)
            .map(|s| frame(s, Vec3::new(s as f32, 0.0, -1.0)))
            .collect(),
    };
    assert_eq!(ClientMessage::decode(&msg.encode(), &codec).unwrap(), msg);
}

#[test]
fn bad_client_packets_are_refused_with_the_field_named() {
    let codec = codec();
    let nan = update(vec![frame(1, Vec3::new(f32::NAN, 0.0, 0.0))]);
    assert_eq!(
        ClientMessage::decode(&nan, &codec).unwrap_err(),
        WireError::NotFinite {
            field: "action.impulse"
        }
    );
    let inf = update(vec![frame(1, Vec3::new(0.0, f32::INFINITY, 0.0))]);
    assert!(matches!(
        ClientMessage::decode(&inf, &codec),
        Err(WireError::NotFinite { .. })
    ));
    let big = update(vec![frame(1, Vec3::new(0.0, 0.0, 2.0e4))]);
    let err = ClientMessage::decode(&big, &codec).unwrap_err();
    assert_eq!(
        err.to_string(),
        "action.impulse: expected a magnitude of at most 10000, got 20000"
    );
    let backwards = update(vec![frame(2, Vec3::X), frame(1, Vec3::X)]);
    assert_eq!(
        ClientMessage::decode(&backwards, &codec).unwrap_err(),
        WireError::NotAscending {
            field: "update.inputs.seq"
        }
    );
    let long = update((1..=17).map(|s| frame(s, Vec3::X)).collect());
    assert!(matches!(
        ClientMessage::decode(&long, &codec),
        Err(WireError::OutOfRange {
            field: "update.inputs",
            max: 16,
            actual: 17
        })
    ));
    let mut negative_time = frame(1, Vec3::X);
    negative_time.time = -1.0;
    assert!(matches!(
        ClientMessage::decode(&update(vec![negative_time]), &codec),
        Err(WireError::FloatOutOfRange {
            field: "input.time",
            ..
        })
    ));
    let good = update(vec![frame(1, Vec3::X)]);
    for keep in 0..good.len() {
        assert!(
            matches!(
                ClientMessage::decode(&good[..keep], &codec),
                Err(WireError::Truncated { .. } | WireError::OutOfRange { .. })
            ),
            "{keep} bytes"
        );
    }
    let mut longer = good.clone();
    longer.extend([0, 0]);
    assert_eq!(
        ClientMessage::decode(&longer, &codec).unwrap_err(),
        WireError::TrailingBytes { left: 2 }
    );
}
