//! Snapshots: a restored world is the world it was taken from, bit for bit, and a bad
//! image is refused without touching the world.
//!
//! "The same world" is checked two ways at every step: `state_hash` (every body's pose and
//! velocities) and the worlds' own snapshots compared byte for byte, which also covers
//! contacts, warm-start impulses, the broad-phase trees, free lists and settings.

use crate::common::DT;
use joule_jobs::JobSystem;
use joule_physics::body::{BodyDesc, BodyId, LockedAxes, MotionQuality};
use joule_physics::error::PhysicsError;
use joule_physics::filter::LayerTable;
use joule_physics::joint::{AxisLimit, JointDesc, JointId, JointKind, OrientationDrive};
use joule_physics::math::{Quat, Vec3};
use joule_physics::shape::Shape;
use joule_physics::snapshot::{SNAPSHOT_VERSION, Snapshot, SnapshotError};
use joule_physics::world::{World, WorldDesc};

/// Bytes before the payload (magic, version, payload length) and of the checksum.
const HEADER: usize = 20;
const CHECKSUM: usize = 8;

/// The same 64-bit FNV-1a the format specifies, to build images with valid checksums.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Rewrites the payload length and checksum of a hand-edited image.
fn reseal(mut image: Vec<u8>) -> Vec<u8> {
    image.truncate(image.len() - CHECKSUM);
    let payload = (image.len() - HEADER) as u64;
    image[12..HEADER].copy_from_slice(&payload.to_le_bytes());
    let sum = fnv1a(&image);
    image.extend_from_slice(&sum.to_le_bytes());
    image
}

fn jobs(threads: usize) -> JobSystem {
    JobSystem::new(threads).expect("job system")
}

/// A pile of every finite shape kind on a half-space, a static box, boxes far away that
/// fall asleep, a spinning kinematic paddle that keeps the pile awake, and a fast
/// LinearCast sphere created just before the snapshot.
struct Scene {
    world: World,
    /// Every body created, live or removed, in creation order.
    ids: Vec<BodyId>,
    /// Removed before the snapshot (their slots are free).
    removed: Vec<BodyId>,
    sleepers: Vec<BodyId>,
    settling: BodyId,
    /// The swing-twist joint with an orientation drive.
    driven: JointId,
}

fn scene(threads: usize) -> Scene {
    let mut world = World::new(WorldDesc::default(), jobs(threads));
    let mut ids = Vec::new();
    let mut add = |w: &mut World, desc: BodyDesc| {
        let id = w.create_body(&desc).unwrap();
        ids.push(id);
        id
    };
    add(
        &mut world,
        BodyDesc::fixed(Shape::half_space(Vec3::Y, 0.0).unwrap(), Vec3::ZERO),
    );
    add(
        &mut world,
        BodyDesc::fixed(
            Shape::cuboid(Vec3::new(0.5, 1.0, 2.0)).unwrap(),
            Vec3::new(6.0, 1.0, 0.0),
        ),
    );
    // One hull shared by several bodies (an Arc the image must keep shared).
    let hull = Shape::convex_hull(&[
        Vec3::new(-0.4, -0.3, -0.35),
        Vec3::new(0.45, -0.3, -0.3),
        Vec3::new(0.4, -0.3, 0.4),
        Vec3::new(-0.35, -0.3, 0.45),
        Vec3::new(0.0, 0.45, 0.05),
        Vec3::new(0.1, 0.3, -0.2),
    ])
    .unwrap();
    let shapes = [
        Shape::cuboid(Vec3::new(0.4, 0.3, 0.35)).unwrap(),
        Shape::sphere(0.35).unwrap(),
        Shape::capsule(0.3, 0.25).unwrap(),
        hull.clone(),
        Shape::cylinder(0.3, 0.35).unwrap(),
        hull,
    ];
    let mut pile = Vec::new();
    for layer in 0..3 {
        for i in 0..4 {
            let k = layer * 4 + i;
            let p = Vec3::new(
                -1.5 + 0.95 * i as f32 + 0.07 * layer as f32,
                0.5 + 0.9 * layer as f32,
                0.1 * (k % 3) as f32,
            );
            let rotation = Quat::from_axis_angle(Vec3::new(0.3, 1.0, 0.2).normalize(), k as f32);
            pile.push(add(
                &mut world,
                BodyDesc {
                    rotation,
                    friction: 0.6,
                    restitution: if k % 5 == 0 { 0.3 } else { 0.0 },
                    user_data: 1000 + k as u64,
                    ..BodyDesc::dynamic(shapes[k % shapes.len()].clone(), p)
                },
            ));
        }
    }
    let sleepers: Vec<BodyId> = (0..4)
        .map(|i| {
            add(
                &mut world,
                BodyDesc::dynamic(
                    Shape::cuboid(Vec3::splat(0.5)).unwrap(),
                    Vec3::new(-12.0 + 1.5 * i as f32, 0.5, -8.0),
                ),
            )
        })
        .collect();
    // Locked axes (issue 30): a capsule that never tips and a box in the XY plane, both
    // in reach of the paddle.
    add(
        &mut world,
        BodyDesc::dynamic(
            Shape::capsule(0.4, 0.25).unwrap(),
            Vec3::new(2.3, 0.65, 0.3),
        )
        .locked_axes(LockedAxes::ROTATION),
    );
    add(
        &mut world,
        BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.3)).unwrap(),
            Vec3::new(-2.3, 1.5, 0.2),
        )
        .rotation(Quat::from_rotation_z(0.3))
        .locked_axes(LockedAxes::PLANE_XY),
    );
    // A limb on a swing-twist joint above the fixed box, driven toward a pose (issue 30):
    // the image carries the drive.
    let limb = add(
        &mut world,
        BodyDesc::dynamic(Shape::capsule(0.3, 0.1).unwrap(), Vec3::new(6.0, 2.5, 0.0)),
    );
    let (fa, fb) = world
        .joint_frames_at(None, limb, Vec3::new(6.0, 2.1, 0.0), Vec3::Y)
        .unwrap();
    let st = world
        .create_joint(&JointDesc::new(
            JointKind::SwingTwist {
                swing_half_angle: 1.2,
                twist: AxisLimit {
                    lower: -0.5,
                    upper: 0.5,
                },
            },
            None,
            limb,
            fa,
            fb,
        ))
        .unwrap();
    world
        .set_joint_drive(
            st,
            Some(OrientationDrive::Spring {
                target: Quat::from_rotation_z(0.8),
                hertz: 2.0,
                damping_ratio: 0.3,
                max_torque: 50.0,
            }),
        )
        .unwrap();
    // Lands at about step 80 and is still counting towards sleep at the snapshot.
    let settling = add(
        &mut world,
        BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(-12.0, 8.5, 8.0),
        ),
    );
    add(
        &mut world,
        BodyDesc {
            angular_velocity: Vec3::new(0.0, 1.5, 0.0),
            ..BodyDesc::kinematic(
                Shape::cuboid(Vec3::new(2.5, 0.15, 0.15)).unwrap(),
                Vec3::new(0.0, 0.15, 0.0),
            )
        },
    );

    for _ in 0..100 {
        world.step(DT);
    }

    // State only reachable between steps: bodies just created (a non-empty broad-phase
    // move buffer: the crate resting on the ground finds the ground only through it), a
    // fast CCD body on its way through the pile, removed bodies (free slots, woken
    // neighbours), an excluded pair and a pending force.
    add(
        &mut world,
        BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.4)).unwrap(),
            Vec3::new(8.0, 0.4, 6.0),
        ),
    );
    add(
        &mut world,
        BodyDesc {
            linear_velocity: Vec3::new(60.0, 0.0, 0.0),
            motion_quality: MotionQuality::LinearCast,
            gravity_scale: 0.0,
            ..BodyDesc::dynamic(Shape::sphere(0.1).unwrap(), Vec3::new(-20.0, 1.0, 0.0))
        },
    );
    let removed = vec![pile[5], pile[10]];
    for &id in &removed {
        world.remove_body(id).unwrap();
    }
    world.exclude_pair(pile[0], pile[4]).unwrap();
    world.add_force(pile[8], Vec3::new(30.0, 0.0, 0.0)).unwrap();
    Scene {
        world,
        ids,
        removed,
        sleepers,
        settling,
        driven: st,
    }
}

/// Steps the world `n` times, returning its hash and image after each step.
fn record(world: &mut World, n: usize) -> Vec<(u64, Snapshot)> {
    (0..n)
        .map(|_| {
            world.step(DT);
            (world.state_hash(), world.snapshot())
        })
        .collect()
}

fn assert_same_run(name: &str, reference: &[(u64, Snapshot)], run: &[(u64, Snapshot)]) {
    assert_eq!(reference.len(), run.len());
    for (step, (a, b)) in reference.iter().zip(run).enumerate() {
        assert_eq!(a.0, b.0, "{name}: state hash differs at step {step}");
        assert!(a.1 == b.1, "{name}: world image differs at step {step}");
    }
}

#[test]
fn the_scene_has_what_the_lockstep_test_needs() {
    let s = scene(0);
    let w = &s.world;
    assert!(
        s.sleepers.iter().all(|&id| w.is_sleeping(id).unwrap()),
        "the far boxes sleep"
    );
    let awake_touching = w
        .contacts()
        .iter()
        .filter(|c| {
            !c.points.is_empty()
                && !w.is_sleeping(c.body_a).unwrap()
                && !w.is_sleeping(c.body_b).unwrap()
                && c.normal_impulses.iter().any(|&j| j > 0.0)
        })
        .count();
    assert!(
        awake_touching >= 5,
        "awake bodies in contact with warm-start impulses: {awake_touching}"
    );
    assert!(s.removed.iter().all(|&id| !w.contains(id)));
    assert!(!w.is_sleeping(s.settling).unwrap());
    let mut w = s.world;
    for _ in 0..60 {
        w.step(DT);
    }
    assert!(
        w.is_sleeping(s.settling).unwrap(),
        "the settling box falls asleep within the lockstep window"
    );
}

#[test]
fn restored_worlds_step_in_lockstep_with_the_source() {
    let mut source = scene(0);
    let image = source.world.snapshot();
    let reference = record(&mut source.world, 120);
    assert_ne!(reference[0].0, reference[119].0, "the scene moves");

    // A fresh world on 2 workers.
    let mut fresh = World::from_snapshot(image.as_bytes(), jobs(2)).unwrap();
    assert_same_run(
        "from_snapshot, 2 workers",
        &reference,
        &record(&mut fresh, 120),
    );

    // A world with other settings and bodies that has already stepped, on 1 worker.
    let mut used = World::new(
        WorldDesc {
            gravity: Vec3::new(0.0, -3.0, 1.0),
            layers: LayerTable::all_colliding(3),
            contact_margin: 0.05,
            ..WorldDesc::default()
        },
        jobs(1),
    );
    for i in 0..30 {
        used.create_body(&BodyDesc::dynamic(
            Shape::sphere(0.3).unwrap(),
            Vec3::new(0.0, 1.0 + i as f32, 0.0),
        ))
        .unwrap();
    }
    for _ in 0..20 {
        used.step(DT);
    }
    used.restore(image.as_bytes()).unwrap();
    assert_eq!(used.desc().gravity, WorldDesc::default().gravity);
    assert_same_run(
        "restore into a used world",
        &reference,
        &record(&mut used, 120),
    );
}

#[test]
fn locked_axes_come_back_from_the_image() {
    let s = scene(0);
    let image = s.world.snapshot();
    let copy = World::from_snapshot(image.as_bytes(), jobs(0)).unwrap();
    let locked: Vec<_> = s
        .ids
        .iter()
        .filter(|id| s.world.contains(**id))
        .map(|&id| (id, s.world.locked_axes(id).unwrap()))
        .collect();
    assert_eq!(
        locked.iter().filter(|(_, l)| !l.is_empty()).count(),
        2,
        "the scene has two locked bodies"
    );
    for (id, axes) in locked {
        assert_eq!(copy.body(id).unwrap().locked_axes(), axes, "{id:?}");
    }
}

#[test]
fn orientation_drives_come_back_from_the_image() {
    let s = scene(0);
    let image = s.world.snapshot();
    let copy = World::from_snapshot(image.as_bytes(), jobs(0)).unwrap();
    let drive = s.world.joint_drive(s.driven).unwrap();
    assert!(drive.is_some(), "the scene has a drive");
    assert_eq!(copy.joint_drive(s.driven).unwrap(), drive);
}

#[test]
fn a_source_on_workers_matches_a_copy_on_none() {
    let mut source = scene(2);
    let image = source.world.snapshot();
    let reference = record(&mut source.world, 120);
    let mut copy = World::from_snapshot(image.as_bytes(), jobs(0)).unwrap();
    assert_same_run(
        "2 workers -> 0 workers",
        &reference,
        &record(&mut copy, 120),
    );
}

#[test]
fn restore_right_after_snapshot_changes_nothing() {
    let mut s = scene(0);
    let hash = s.world.state_hash();
    let image = s.world.snapshot();
    s.world.restore(image.as_bytes()).unwrap();
    assert_eq!(s.world.state_hash(), hash);
    assert!(
        s.world.snapshot() == image,
        "the image round-trips byte for byte"
    );

    // Going back in time: step on, then restore the earlier image.
    for _ in 0..30 {
        s.world.step(DT);
    }
    assert_ne!(s.world.state_hash(), hash);
    s.world.restore(image.as_bytes()).unwrap();
    assert_eq!(s.world.state_hash(), hash);
    assert!(s.world.snapshot() == image);
}

#[test]
fn settings_come_from_the_image() {
    let mut layers = LayerTable::all_colliding(3);
    layers.set(1, 2, false);
    let desc = WorldDesc {
        gravity: Vec3::new(0.5, -4.0, 0.25),
        layers: layers.clone(),
        contact_margin: 0.03,
        broad_phase_margin: 0.2,
        report_persist_events: false,
        ..WorldDesc::default()
    };
    let mut world = World::new(desc, jobs(0));
    world
        .create_body(&BodyDesc {
            layer: 2,
            ..BodyDesc::default()
        })
        .unwrap();
    let copy = World::from_snapshot(world.snapshot().as_bytes(), jobs(0)).unwrap();
    let d = copy.desc();
    assert_eq!(d.gravity, Vec3::new(0.5, -4.0, 0.25));
    assert_eq!(d.layers, layers);
    assert_eq!(
        (
            d.contact_margin,
            d.broad_phase_margin,
            d.report_persist_events
        ),
        (0.03, 0.2, false)
    );
}

/// A small world: ground, a few bodies in contact, one removed.
fn small(threads: usize) -> World {
    let mut w = crate::common::world(threads);
    crate::common::ground(&mut w, 0.5);
    let a = crate::common::cube(&mut w, 0.5, Vec3::new(0.0, 0.5, 0.0));
    crate::common::cube(&mut w, 0.5, Vec3::new(0.2, 1.5, 0.0));
    w.create_body(&BodyDesc::dynamic(
        Shape::sphere(0.3).unwrap(),
        Vec3::new(2.0, 0.3, 0.0),
    ))
    .unwrap();
    for _ in 0..10 {
        w.step(DT);
    }
    w.remove_body(a).unwrap();
    w
}

/// Restores `bytes` into `target` and checks the error and that `target` is untouched.
fn refused(target: &mut World, bytes: &[u8], what: &str) -> SnapshotError {
    let (hash, count, image) = (target.state_hash(), target.body_count(), target.snapshot());
    let err = target
        .restore(bytes)
        .expect_err(&format!("{what}: the image is refused"));
    assert_eq!(target.state_hash(), hash, "{what}: state hash unchanged");
    assert_eq!(target.body_count(), count, "{what}: body count unchanged");
    assert!(
        target.snapshot() == image,
        "{what}: the whole world is unchanged"
    );
    err
}

/// A target world unlike the source, so a partial restore could not go unnoticed.
fn target() -> World {
    let mut t = scene(1).world;
    t.step(DT);
    t
}

/// After refusing images the target steps exactly like an untouched copy of itself.
fn still_steps(target: &mut World) {
    let mut copy = World::from_snapshot(target.snapshot().as_bytes(), jobs(0)).unwrap();
    assert_same_run(
        "target after refusals",
        &record(&mut copy, 10),
        &record(target, 10),
    );
}

#[test]
fn truncated_images_are_refused() {
    let image = small(0).snapshot().into_bytes();
    assert!(image.len() < 4000, "a small image: {} bytes", image.len());
    let mut t = target();
    for len in 0..image.len() {
        let err = refused(&mut t, &image[..len], &format!("prefix of {len} bytes"));
        assert_eq!(err, SnapshotError::Truncated, "prefix of {len} bytes");
    }
    still_steps(&mut t);
}

#[test]
fn every_flipped_byte_is_refused() {
    let image = small(0).snapshot().into_bytes();
    let mut t = target();
    for pos in 0..image.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = image.clone();
            bad[pos] ^= mask;
            let what = format!("byte {pos} ^ {mask:#x}");
            let err = refused(&mut t, &bad, &what);
            match pos {
                0..8 => assert_eq!(err, SnapshotError::BadMagic, "{what}"),
                8..12 => assert!(
                    matches!(err, SnapshotError::UnsupportedVersion { expected, .. } if expected == SNAPSHOT_VERSION),
                    "{what}: {err:?}"
                ),
                // The payload length: longer than the bytes, or the checksum is looked
                // for in the wrong place.
                12..HEADER => assert!(
                    matches!(
                        err,
                        SnapshotError::Truncated | SnapshotError::ChecksumMismatch
                    ),
                    "{what}: {err:?}"
                ),
                _ => assert_eq!(err, SnapshotError::ChecksumMismatch, "{what}"),
            }
        }
    }
    still_steps(&mut t);
}

#[test]
fn wrong_versions_and_foreign_bytes_are_refused() {
    let image = small(0).snapshot().into_bytes();
    let mut t = target();
    for version in [0, SNAPSHOT_VERSION + 1, u32::MAX] {
        let mut bad = image.clone();
        bad[8..12].copy_from_slice(&version.to_le_bytes());
        let bad = reseal(bad);
        assert_eq!(
            refused(&mut t, &bad, "other version"),
            SnapshotError::UnsupportedVersion {
                found: version,
                expected: SNAPSHOT_VERSION
            }
        );
    }
    assert_eq!(
        refused(&mut t, b"PK\x03\x04 not a snapshot at all", "a zip file"),
        SnapshotError::BadMagic
    );
    assert_eq!(
        refused(&mut t, b"JOULE", "a cut-off magic"),
        SnapshotError::Truncated
    );
    let mut longer = image.clone();
    longer.push(0);
    assert!(matches!(
        refused(&mut t, &longer, "a byte after the checksum"),
        SnapshotError::Corrupt(_)
    ));
    still_steps(&mut t);
}

#[test]
fn malformed_payloads_with_valid_checksums_are_corrupt() {
    let image = small(0).snapshot().into_bytes();
    let mut t = target();
    let payload_end = image.len() - CHECKSUM;

    // The first payload value is gravity.x: NaN is not a setting.
    let mut bad = image.clone();
    bad[HEADER..HEADER + 4].copy_from_slice(&f32::NAN.to_bits().to_le_bytes());
    assert!(matches!(
        refused(&mut t, &reseal(bad), "NaN gravity"),
        SnapshotError::Corrupt(_)
    ));
    // The payload ends early / goes on after its last part.
    let mut short = image[..payload_end - 1].to_vec();
    short.extend_from_slice(&[0; CHECKSUM]);
    assert!(matches!(
        refused(&mut t, &reseal(short), "payload cut short"),
        SnapshotError::Corrupt(_)
    ));
    let mut long = image[..payload_end].to_vec();
    long.extend_from_slice(&[0; 1 + CHECKSUM]);
    assert!(matches!(
        refused(&mut t, &reseal(long), "payload with an extra byte"),
        SnapshotError::Corrupt(_)
    ));

    // Every payload byte changed with a valid checksum: either a valid (different) world
    // or `Corrupt`, never a panic; a refused image leaves the world as it was.
    let original = t.snapshot();
    let (mut ok, mut corrupt) = (0, 0);
    for pos in HEADER..payload_end {
        for mask in [0x01u8, 0x40, 0xff] {
            let mut bad = image.clone();
            bad[pos] ^= mask;
            let bad = reseal(bad);
            let before = t.state_hash();
            match t.restore(&bad) {
                Ok(()) => {
                    ok += 1;
                    assert!(
                        t.snapshot().as_bytes() == bad,
                        "byte {pos}: re-encodes as read"
                    );
                    t.restore(original.as_bytes()).unwrap();
                }
                Err(SnapshotError::Corrupt(_)) => {
                    corrupt += 1;
                    assert_eq!(t.state_hash(), before, "byte {pos}: unchanged");
                }
                Err(e) => panic!("byte {pos} ^ {mask:#x}: {e:?}, expected Corrupt"),
            }
        }
    }
    assert!(t.snapshot() == original);
    assert!(
        ok > 0 && corrupt > 0,
        "both outcomes occur: {ok} valid, {corrupt} corrupt"
    );
    still_steps(&mut t);
}

#[test]
fn body_ids_survive_a_restore() {
    let mut s = scene(0);
    let image = s.world.snapshot();
    let mut copy = target();
    copy.restore(image.as_bytes()).unwrap();
    assert_eq!(copy.body_count(), s.world.body_count());
    for &id in &s.ids {
        if s.removed.contains(&id) {
            assert_eq!(copy.position(id), Err(PhysicsError::StaleBodyId(id)));
            assert!(!copy.contains(id));
            continue;
        }
        assert!(copy.contains(id));
        assert_eq!(copy.transform(id).unwrap(), s.world.transform(id).unwrap());
        assert_eq!(copy.user_data(id).unwrap(), s.world.user_data(id).unwrap());
        assert_eq!(copy.mass(id).unwrap(), s.world.mass(id).unwrap());
    }
    // The free slot list came along in order: new bodies get the same ids in both
    // worlds (the removed bodies' slots, last removed first, a newer generation), and
    // the old ids stay stale.
    let desc = BodyDesc::dynamic(Shape::sphere(0.2).unwrap(), Vec3::new(0.0, 5.0, 3.0));
    for old in s.removed.iter().rev() {
        let a = s.world.create_body(&desc).unwrap();
        let b = copy.create_body(&desc).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.index(), old.index());
        assert!(a.generation() > old.generation());
        assert!(copy.remove_body(*old).is_err(), "still stale");
    }
}
