//! Recordings keep what the world was, read back exactly, and are compact.

use joule_physics::prelude::*;
use joule_physics::recording::{
    CONTACT_FLOATS, POSE_FLOATS, RecordOptions, RecordedShape, Recorder, Recording, RecordingError,
    STATE_REMOVED, STATE_SLEEPING, STATE_STATIC,
};

const DT: f32 = 1.0 / 60.0;

fn pyramid(threads: usize, base: usize) -> World {
    pyramid_ids(threads, base).0
}

/// A triangle wall of unit boxes on a ground box, and the ids in creation order.
fn pyramid_ids(threads: usize, base: usize) -> (World, Vec<BodyId>) {
    let mut w = World::new(WorldDesc::default(), JobSystem::new(threads).unwrap());
    let ground = Shape::cuboid(Vec3::new(30.0, 0.5, 5.0)).unwrap();
    let mut ids = vec![
        w.create_body(&BodyDesc::fixed(ground, Vec3::new(0.0, -0.5, 0.0)))
            .unwrap(),
    ];
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    for row in 0..base {
        let n = base - row;
        for j in 0..n {
            let x = j as f32 - (n as f32 - 1.0) / 2.0;
            ids.push(
                w.create_body(&BodyDesc::dynamic(
                    cube.clone(),
                    Vec3::new(x, 0.5 + row as f32, 0.0),
                ))
                .unwrap(),
            );
        }
    }
    (w, ids)
}

fn record(world: &mut World, steps: usize, traced: bool) -> Vec<u8> {
    let mut rec = Recorder::new(Vec::new(), world, DT, RecordOptions::default()).unwrap();
    for _ in 0..steps {
        if traced {
            let trace = world.step_traced(DT);
            rec.record(world, Some(&trace)).unwrap();
        } else {
            world.step(DT);
            rec.record(world, None).unwrap();
        }
    }
    rec.finish().unwrap()
}

#[test]
fn poses_read_back_bit_for_bit() {
    let (mut w, ids) = pyramid_ids(0, 5);
    let mut rec = Recorder::new(Vec::new(), &w, DT, RecordOptions::default()).unwrap();
    for _ in 0..30 {
        w.step(DT);
        rec.record(&w, None).unwrap();
    }
    let bytes = rec.finish().unwrap();
    let r = Recording::read(&bytes).unwrap();
    assert_eq!(r.header.dt, DT);
    assert_eq!(r.frames.len(), 30);
    assert_eq!(r.bodies.len(), 16, "ground + 15 boxes");
    assert_eq!(
        r.frames[0].new_bodies.len(),
        16,
        "all bodies appear in the first frame"
    );
    assert!(r.frames[1].new_bodies.is_empty(), "and only once");
    assert_eq!(
        r.bodies[1].shape,
        RecordedShape::Box {
            half_extents: [0.5; 3]
        }
    );
    assert_eq!(r.bodies[0].motion, 0);
    assert_eq!(r.bodies[1].motion, 2);
    let last = r.frames.last().unwrap();
    assert_eq!(last.step, 30);
    assert_eq!(last.poses.len(), 16 * POSE_FLOATS);
    // The last frame's poses are the world's, exactly (f32 stored as its 4 bytes).
    for (k, body) in r.bodies.iter().enumerate() {
        let id = ids[k];
        assert_eq!(body.index, id.index());
        let p = w.position(id).unwrap();
        let q = w.rotation(id).unwrap();
        let got = &last.poses[k * POSE_FLOATS..(k + 1) * POSE_FLOATS];
        let want = [p.x, p.y, p.z, q.x, q.y, q.z, q.w];
        assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }
    assert_eq!(last.states[0], STATE_STATIC);
    // Touching boxes form one island: every box has the same island key.
    let keys: Vec<u32> = last.states[1..].to_vec();
    assert!(keys.iter().all(|&k| k == keys[0]), "{keys:?}");
    // Contacts: every point's normal is a unit vector; the bottom row rests on y = 0.
    assert!(!last.contacts.is_empty());
    for c in last.contacts.chunks(CONTACT_FLOATS) {
        let n = Vec3::new(c[3], c[4], c[5]);
        assert!((n.length() - 1.0).abs() < 1e-4);
    }
}

#[test]
fn recordings_are_identical_at_any_thread_count() {
    let a = record(&mut pyramid(0, 8), 40, false);
    let b = record(&mut pyramid(3, 8), 40, false);
    assert!(
        a == b,
        "same inputs, same bytes (the trace is off here: times differ)"
    );
}

#[test]
fn a_frame_keeps_the_step_trace() {
    let bytes = record(&mut pyramid(2, 6), 5, true);
    let r = Recording::read(&bytes).unwrap();
    for f in &r.frames {
        let t = f.trace.as_ref().expect("traced");
        assert!(
            t.labels.iter().any(|l| l.contains("solve")),
            "{:?}",
            t.labels
        );
        assert!(!t.spans.is_empty());
        for s in &t.spans {
            assert!(s.start_ns <= s.end_ns && s.end_ns <= t.wall_ns + 1_000_000);
            assert!((s.thread as usize) < t.threads.len());
            assert!((s.label as usize) < t.labels.len());
        }
    }
}

/// Compact: a frame costs little more than its raw pose and state words. Bound: 7 f32 +
/// a state varint (at most 5 bytes) per body, plus the contact floats, plus 64 bytes of
/// framing.
#[test]
fn frames_are_compact() {
    let mut w = pyramid(0, 10);
    let n = w.body_count();
    let bytes = record(&mut w, 20, false);
    let r = Recording::read(&bytes).unwrap();
    let last = r.frames.last().unwrap();
    let shapes = 200 * n; // generous bound for the first frame's body table
    let per_frame = n * (POSE_FLOATS * 4 + 5) + last.contacts.len() * 4 + 64;
    assert!(
        bytes.len() < shapes + 20 * per_frame,
        "{} bytes",
        bytes.len()
    );
}

#[test]
fn removed_bodies_turn_to_nan_and_new_ones_are_appended() {
    let (mut w, ids) = pyramid_ids(0, 2);
    let mut rec = Recorder::new(Vec::new(), &w, DT, RecordOptions::default()).unwrap();
    w.step(DT);
    rec.record(&w, None).unwrap();
    let top = ids[3];
    w.remove_body(top).unwrap();
    w.create_body(&BodyDesc::dynamic(
        Shape::sphere(0.3).unwrap(),
        Vec3::new(0.0, 5.0, 0.0),
    ))
    .unwrap();
    w.step(DT);
    rec.record(&w, None).unwrap();
    let r = Recording::read(&rec.finish().unwrap()).unwrap();
    assert_eq!(r.bodies.len(), 5, "4 first, then the sphere");
    let f = &r.frames[1];
    assert_eq!(f.new_bodies.len(), 1);
    assert_eq!(f.new_bodies[0].shape, RecordedShape::Sphere { radius: 0.3 });
    assert!(f.poses[3 * POSE_FLOATS].is_nan());
    assert_eq!(f.states[3], STATE_REMOVED);
    assert!(
        f.poses[4 * POSE_FLOATS + 1] > 4.9,
        "the sphere starts at y = 5"
    );
    assert_eq!(f.states[4] & STATE_SLEEPING, 0);
}

#[test]
fn bad_files_are_typed_errors() {
    assert!(matches!(
        Recording::read(b"nope"),
        Err(RecordingError::NotARecording)
    ));
    let bytes = record(&mut pyramid(0, 3), 4, false);
    // A cut-off file reads up to its last whole frame.
    let cut = Recording::read(&bytes[..bytes.len() - 10]).unwrap();
    assert_eq!(cut.frames.len(), 3);
    let mut future = bytes.clone();
    future[8] = 99; // the header's version varint
    assert!(matches!(
        Recording::read(&future),
        Err(RecordingError::UnsupportedVersion(99))
    ));
}

/// A compound and a heightfield are recorded in full and read back as written: the
/// compound as its children with their poses, the heightfield as its samples and the
/// triangles of its non-hole cells, which are the field's own triangles (checked
/// against `HeightField::triangle`, the surface the bodies collide with).
#[test]
fn compound_and_heightfield_round_trip() {
    use joule_physics::math::{Isometry, Vec2, Vec3A};
    use joule_physics::recording::RecordedChild;
    use joule_physics::shape::CompoundChild;
    let mut w = World::new(WorldDesc::default(), JobSystem::new(0).unwrap());
    let (nx, nz) = (4u32, 3u32);
    let heights: Vec<f32> = (0..nx * nz).map(|k| 0.1 * (k % 5) as f32).collect();
    let holes: Vec<bool> = (0..6).map(|c| c == 4).collect();
    let field =
        Shape::height_field(nx, nz, Vec2::new(1.0, 2.0), heights.clone(), Some(&holes)).unwrap();
    w.create_body(&BodyDesc::fixed(field.clone(), Vec3::ZERO))
        .unwrap();
    let rot = Quat::from_rotation_z(0.5);
    let children = vec![
        CompoundChild {
            shape: Shape::cuboid(Vec3::new(0.5, 0.25, 0.25)).unwrap(),
            pose: Isometry::new(Vec3A::new(0.75, 0.0, 0.0), rot),
            material: 0,
        },
        CompoundChild {
            shape: Shape::sphere(0.3).unwrap(),
            pose: Isometry::new(Vec3A::new(-0.75, 0.0, 0.0), Quat::IDENTITY),
            material: 0,
        },
    ];
    w.create_body(&BodyDesc::dynamic(
        Shape::compound(children).unwrap(),
        Vec3::new(0.0, 3.0, 0.0),
    ))
    .unwrap();
    let bytes = record(&mut w, 3, false);
    let r = Recording::read(&bytes).unwrap();
    assert_eq!(r.bodies.len(), 2);

    let RecordedShape::Mesh {
        vertices,
        triangles,
    } = &r.bodies[0].shape
    else {
        panic!(
            "heightfield not recorded as a mesh: {:?}",
            r.bodies[0].shape
        );
    };
    assert_eq!(vertices.len(), (nx * nz) as usize);
    for (v, h) in vertices.iter().zip(&heights) {
        assert_eq!(v[1], *h, "samples row by row along X");
    }
    assert_eq!(triangles.len(), 2 * (6 - 1), "2 per cell, 6 cells, 1 hole");
    let Shape::HeightField(hf) = &field else {
        unreachable!()
    };
    let field_tris: Vec<u32> = (0..12).filter(|t| t / 2 != 4).collect();
    for (tri, &t) in triangles.iter().zip(&field_tris) {
        let want = hf.triangle(t).vertices.map(|v| v.to_array());
        assert_eq!(tri.map(|i| vertices[i as usize]), want, "triangle {t}");
    }

    assert_eq!(
        r.bodies[1].shape,
        RecordedShape::Compound {
            children: vec![
                RecordedChild {
                    shape: RecordedShape::Box {
                        half_extents: [0.5, 0.25, 0.25]
                    },
                    position: [0.75, 0.0, 0.0],
                    rotation: rot.to_array(),
                },
                RecordedChild {
                    shape: RecordedShape::Sphere { radius: 0.3 },
                    position: [-0.75, 0.0, 0.0],
                    rotation: [0.0, 0.0, 0.0, 1.0],
                },
            ]
        }
    );
}

/// A body changed by hand is recorded anew in the next frame, in its slot: its old record
/// turns NaN (as if removed) and a new record carries its new shape and motion type.
/// Bodies not changed keep their one record.
#[test]
fn a_changed_body_is_recorded_anew() {
    let (mut w, ids) = pyramid_ids(0, 2);
    let mut r = Recorder::new(Vec::new(), &w, DT, RecordOptions::default()).unwrap();
    w.step(DT);
    r.record(&w, None).unwrap();
    let changed = ids[1];
    w.set_shape(changed, Shape::sphere(0.5).unwrap()).unwrap();
    w.set_motion_type(changed, MotionType::Kinematic).unwrap();
    w.step(DT);
    r.record(&w, None).unwrap();
    w.step(DT);
    r.record(&w, None).unwrap();
    let rec = Recording::read(&r.finish().unwrap()).unwrap();
    assert_eq!(rec.bodies.len(), ids.len() + 1, "one new record");
    let new = rec.bodies.last().unwrap();
    assert_eq!(
        (new.index, new.generation, new.motion),
        (changed.index(), changed.generation(), 1)
    );
    assert!(
        matches!(new.shape, RecordedShape::Sphere { .. }),
        "{:?}",
        new.shape
    );
    assert_eq!(rec.frames[1].new_bodies.len(), 1);
    let old = ids.iter().position(|&id| id == changed).unwrap();
    let pose = |frame: usize, record: usize| {
        rec.frames[frame].poses[record * POSE_FLOATS..(record + 1) * POSE_FLOATS].to_vec()
    };
    assert!(pose(0, old).iter().all(|x| x.is_finite()));
    assert!(
        pose(2, old).iter().all(|x| x.is_nan()),
        "the old record is gone"
    );
    assert!(
        pose(2, ids.len()).iter().all(|x| x.is_finite()),
        "the new one moves on"
    );
}
