//! Debug drawing describes the world faithfully: shapes where the bodies are, contacts
//! where they touch, the same commands at any thread count.

use joule_physics::debug_draw::{Color, ColorMode, DebugDrawOptions, DebugRenderer};
use joule_physics::math::{Isometry, Vec2, Vec3A};
use joule_physics::prelude::*;

/// One recorded draw command, floats kept as bits so lists compare exactly.
#[derive(Clone, Debug, PartialEq)]
enum Cmd {
    Line([u32; 6], Color),
    Tri([u32; 9], Color),
    Point([u32; 3], Color),
    Text(String, Color),
}

#[derive(Default)]
struct Recorder {
    cmds: Vec<Cmd>,
    lines: Vec<(Vec3, Vec3, Color)>,
}

fn bits(v: &[Vec3]) -> Vec<u32> {
    v.iter()
        .flat_map(|p| p.to_array())
        .map(f32::to_bits)
        .collect()
}

impl DebugRenderer for Recorder {
    fn line(&mut self, a: Vec3, b: Vec3, color: Color) {
        self.cmds
            .push(Cmd::Line(bits(&[a, b]).try_into().unwrap(), color));
        self.lines.push((a, b, color));
    }
    fn triangle(&mut self, a: Vec3, b: Vec3, c: Vec3, color: Color) {
        self.cmds
            .push(Cmd::Tri(bits(&[a, b, c]).try_into().unwrap(), color));
    }
    fn point(&mut self, p: Vec3, _size: f32, color: Color) {
        self.cmds
            .push(Cmd::Point(bits(&[p]).try_into().unwrap(), color));
    }
    fn text(&mut self, _p: Vec3, text: &str, color: Color) {
        self.cmds.push(Cmd::Text(text.to_owned(), color));
    }
}

fn world(threads: usize) -> World {
    World::new(WorldDesc::default(), JobSystem::new(threads).unwrap())
}

#[test]
fn box_wireframe_is_its_twelve_edges_at_the_corners() {
    let mut w = world(0);
    let h = Vec3::new(0.5, 1.0, 1.5);
    let pos = Vec3::new(1.0, 2.0, 3.0);
    let rot = Quat::from_rotation_y(0.7);
    let id = w
        .create_body(&BodyDesc::dynamic(Shape::cuboid(h).unwrap(), pos))
        .unwrap();
    w.set_rotation(id, rot).unwrap();
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &DebugDrawOptions::default());
    assert_eq!(r.lines.len(), 12);
    for &(a, b, _) in &r.lines {
        for p in [a, b] {
            // Every endpoint is a corner: in the box's frame each coordinate is ±h.
            let local = rot.inverse() * (p - pos);
            assert!((local.abs() - h).abs().max_element() < 1e-5, "{local}");
        }
        // Every edge is parallel to one box axis, so its length is 2 h along that axis.
        let len = (b - a).length();
        assert!(
            [1.0, 2.0, 3.0].iter().any(|l| (len - l).abs() < 1e-5),
            "{len}"
        );
    }
}

#[test]
fn solid_box_is_twelve_triangles() {
    let mut w = world(0);
    w.create_body(&BodyDesc::dynamic(
        Shape::cuboid(Vec3::ONE).unwrap(),
        Vec3::ZERO,
    ))
    .unwrap();
    let mut r = Recorder::default();
    let options = DebugDrawOptions {
        solid: true,
        ..DebugDrawOptions::default()
    };
    w.debug_draw(&mut r, &options);
    let tris = r.cmds.iter().filter(|c| matches!(c, Cmd::Tri(..))).count();
    assert_eq!(tris, 12, "six faces, two triangles each");
}

#[test]
fn sphere_and_capsule_outlines_lie_on_their_surfaces() {
    let mut w = world(0);
    let c = Vec3::new(-2.0, 1.0, 0.5);
    w.create_body(&BodyDesc::dynamic(Shape::sphere(0.75).unwrap(), c))
        .unwrap();
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &DebugDrawOptions::default());
    assert!(!r.lines.is_empty());
    for &(a, b, _) in &r.lines {
        for p in [a, b] {
            assert!(((p - c).length() - 0.75).abs() < 1e-5);
        }
    }

    let mut w = world(0);
    w.create_body(&BodyDesc::dynamic(Shape::capsule(1.0, 0.25).unwrap(), c))
        .unwrap();
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &DebugDrawOptions::default());
    for &(a, b, _) in &r.lines {
        for p in [a, b] {
            // Distance to the capsule's core segment (local Y from -1 to 1) is the radius.
            let d = p - c;
            let core = Vec3::new(0.0, d.y.clamp(-1.0, 1.0), 0.0);
            assert!(((d - core).length() - 0.25).abs() < 1e-5, "{p}");
        }
    }
}

/// A box resting on the ground: its contact points lie on the ground plane, its normals
/// point up, and the normal impulses add up to the box's weight times the substep `h`
/// (the stored impulse is the last substep's, as in Box2D v3's soft step: at rest the
/// ground gives the box m g h each substep).
#[test]
fn resting_box_contacts_sit_on_the_ground_and_carry_its_weight() {
    let mut w = world(0);
    let ground = Shape::cuboid(Vec3::new(5.0, 0.5, 5.0)).unwrap();
    w.create_body(&BodyDesc::fixed(ground, Vec3::new(0.0, -0.5, 0.0)))
        .unwrap();
    let b = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::splat(0.5)).unwrap(),
            Vec3::new(0.0, 0.5, 0.0),
        ))
        .unwrap();
    let dt = 1.0 / 60.0;
    for _ in 0..30 {
        w.step(dt);
    }
    let options = DebugDrawOptions {
        shapes: false,
        contact_points: true,
        contact_normals: true,
        contact_impulses: true,
        ..DebugDrawOptions::default()
    };
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &options);
    let points: Vec<_> = r
        .cmds
        .iter()
        .filter(|c| matches!(c, Cmd::Point(..)))
        .collect();
    assert_eq!(points.len(), 4, "a face-face manifold has four points");
    let normals: Vec<_> = r.lines.iter().filter(|l| l.2 == Color::GREEN).collect();
    assert_eq!(normals.len(), 4);
    for (a, b, _) in normals {
        assert!(
            a.y.abs() < 0.02,
            "point on the ground plane (within the 2 cm margin): {a}"
        );
        let n = (*b - *a) / options.normal_length;
        assert!(
            (n - Vec3::Y).length() < 1e-3,
            "normal from ground (A) up to the box: {n}"
        );
    }
    let h = dt / w.desc().solver.substeps as f32;
    let weight_dt = w.mass(b).unwrap() * 9.81 * h;
    let impulse: f32 = r
        .lines
        .iter()
        .filter(|l| l.2 == Color::YELLOW)
        .map(|(a, b, _)| (*b - *a).length() / options.impulse_scale)
        .sum();
    assert!(
        (impulse - weight_dt).abs() < 0.05 * weight_dt,
        "impulse {impulse} vs m g h {weight_dt}"
    );
}

fn pyramid(threads: usize) -> World {
    let mut w = world(threads);
    w.create_body(&BodyDesc::fixed(
        Shape::cuboid(Vec3::new(20.0, 0.5, 20.0)).unwrap(),
        Vec3::new(0.0, -0.5, 0.0),
    ))
    .unwrap();
    let cube = Shape::cuboid(Vec3::splat(0.5)).unwrap();
    for row in 0..6 {
        for i in 0..(6 - row) {
            let x = i as f32 * 1.0 - (6 - row) as f32 * 0.5;
            w.create_body(&BodyDesc::dynamic(
                cube.clone(),
                Vec3::new(x, 0.5 + row as f32, 0.0),
            ))
            .unwrap();
        }
    }
    // A second, separate stack far away: its own island.
    w.create_body(&BodyDesc::dynamic(cube.clone(), Vec3::new(10.0, 0.5, 0.0)))
        .unwrap();
    w.create_body(&BodyDesc::dynamic(cube, Vec3::new(10.0, 1.5, 0.0)))
        .unwrap();
    for _ in 0..20 {
        w.step(1.0 / 60.0);
    }
    w
}

#[test]
fn drawing_is_identical_at_any_thread_count() {
    let options = DebugDrawOptions::all();
    let mut one = Recorder::default();
    pyramid(0).debug_draw(&mut one, &options);
    let mut three = Recorder::default();
    pyramid(3).debug_draw(&mut three, &options);
    assert!(one.cmds.len() > 100);
    assert!(
        one.cmds == three.cmds,
        "same world, same commands, bit for bit"
    );
}

#[test]
fn island_colours_separate_stacks_and_join_touching_bodies() {
    let w = pyramid(0);
    let options = DebugDrawOptions {
        color_mode: ColorMode::Island,
        ..DebugDrawOptions::default()
    };
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &options);
    // 12 lines per box, in body order: ground, 21 pyramid boxes, 2 stack boxes.
    let colour = |body: usize| r.lines[body * 12].2;
    let ground_lines = r.lines.len() - 23 * 12;
    assert_eq!(ground_lines, 12);
    assert_eq!(colour(0), Color::GREY);
    for body in 2..=21 {
        assert_eq!(colour(body), colour(1), "the pyramid is one island");
    }
    assert_eq!(colour(22), colour(23), "the stack is one island");
    assert_ne!(colour(1), colour(22), "two islands, two colours");
}

#[test]
fn labels_name_each_body() {
    let w = pyramid(0);
    let options = DebugDrawOptions {
        shapes: false,
        labels: true,
        ..DebugDrawOptions::default()
    };
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &options);
    let labels: Vec<_> = r
        .cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::Text(t, _) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(labels.len(), w.body_count());
    assert_eq!(labels[0], "0:0");
}

fn solid() -> DebugDrawOptions {
    DebugDrawOptions {
        solid: true,
        ..DebugDrawOptions::default()
    }
}

fn triangles(r: &Recorder) -> Vec<[Vec3; 3]> {
    r.cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::Tri(b, _) => {
                let f = b.map(f32::from_bits);
                Some([
                    Vec3::new(f[0], f[1], f[2]),
                    Vec3::new(f[3], f[4], f[5]),
                    Vec3::new(f[6], f[7], f[8]),
                ])
            }
            _ => None,
        })
        .collect()
}

/// A 4 x 3 heightfield (3 x 2 cells) with the middle cell of the first row a hole: the
/// field has 2 triangles per cell, so 2 * (6 - 1) = 10 are drawn, and every drawn vertex
/// is a sample: on the grid in X/Z and at that sample's height (to float rounding of the
/// body's rotation, 1e-5 m).
#[test]
fn heightfield_draws_its_triangles_on_the_surface_skipping_holes() {
    let (nx, nz, cell) = (4u32, 3u32, Vec2::new(1.0, 1.5));
    let height = |i: u32, j: u32| 0.25 * i as f32 - 0.5 * j as f32 + 0.1 * (i * j) as f32;
    let heights: Vec<f32> = (0..nz)
        .flat_map(|j| (0..nx).map(move |i| height(i, j)))
        .collect();
    let holes: Vec<bool> = (0..6).map(|c| c == 1).collect();
    let shape = Shape::height_field(nx, nz, cell, heights, Some(&holes)).unwrap();
    let mut w = world(0);
    let pos = Vec3::new(0.5, -1.0, 2.0);
    let rot = Quat::from_rotation_y(0.4);
    let id = w.create_body(&BodyDesc::fixed(shape, pos)).unwrap();
    w.set_rotation(id, rot).unwrap();
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &solid());
    let tris = triangles(&r);
    assert_eq!(tris.len(), 10, "2 per cell, 6 cells, 1 hole");
    for tri in &tris {
        for p in tri {
            let local = rot.inverse() * (*p - pos);
            // The field is centred on its origin: sample (i, j) sits at
            // (i - (nx-1)/2) * cell.x, (j - (nz-1)/2) * cell.y.
            let fi = local.x / cell.x + 0.5 * (nx - 1) as f32;
            let fj = local.z / cell.y + 0.5 * (nz - 1) as f32;
            let (i, j) = (fi.round(), fj.round());
            assert!((fi - i).abs() < 1e-5 && (fj - j).abs() < 1e-5, "{local}");
            assert!(
                (local.y - height(i as u32, j as u32)).abs() < 1e-5,
                "{local}"
            );
            // No vertex of the hole's own triangles: a hole cell (1, 0) is drawn only
            // through its neighbours, so a drawn triangle never spans it.
        }
        let centre = rot.inverse() * ((tri[0] + tri[1] + tri[2]) / 3.0 - pos);
        let ci = (centre.x / cell.x + 0.5 * (nx - 1) as f32).floor();
        let cj = (centre.z / cell.y + 0.5 * (nz - 1) as f32).floor();
        assert!(
            !(ci == 1.0 && cj == 0.0),
            "a triangle of the hole was drawn"
        );
    }
    // Wireframe: three edges per triangle.
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &DebugDrawOptions::default());
    assert_eq!(r.lines.len(), 30);
}

/// A mesh is drawn as its own triangles: the drawn corners are the mesh's vertices moved
/// by the body's pose, in index order.
#[test]
fn mesh_draws_its_triangles_at_its_vertices() {
    let vertices = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.0, 0.0, 2.0),
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(2.0, 0.5, 2.0),
        Vec3::new(4.0, 1.0, 0.0),
    ];
    let indices = [[0, 1, 2], [2, 1, 3], [2, 3, 4]];
    let shape = Shape::triangle_mesh(&vertices, &indices, None).unwrap();
    let mut w = world(0);
    let pos = Vec3::new(-1.0, 0.5, 3.0);
    let rot = Quat::from_rotation_x(0.3);
    let id = w.create_body(&BodyDesc::fixed(shape, pos)).unwrap();
    w.set_rotation(id, rot).unwrap();
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &solid());
    let tris = triangles(&r);
    assert_eq!(tris.len(), indices.len());
    for (tri, idx) in tris.iter().zip(indices) {
        for (p, i) in tri.iter().zip(idx) {
            let expected = pos + rot * vertices[i as usize];
            assert!((*p - expected).length() < 1e-5, "{p} vs {expected}");
        }
    }
}

/// A compound is drawn as its children: the commands equal those of each child drawn
/// alone (`draw_shape`) at the body's pose times the child's pose, in child order.
#[test]
fn compound_draws_as_its_children_at_their_poses() {
    use joule_physics::debug_draw::draw_shape;
    use joule_physics::shape::CompoundChild;
    let children = vec![
        CompoundChild {
            shape: Shape::cuboid(Vec3::new(0.5, 0.25, 0.75)).unwrap(),
            pose: Isometry::new(Vec3A::new(1.0, 0.0, 0.0), Quat::from_rotation_z(0.5)),
            material: 0,
        },
        CompoundChild {
            shape: Shape::sphere(0.4).unwrap(),
            pose: Isometry::new(Vec3A::new(-1.0, 0.5, 0.0), Quat::IDENTITY),
            material: 0,
        },
        CompoundChild {
            shape: Shape::capsule(0.5, 0.2).unwrap(),
            pose: Isometry::new(Vec3A::new(0.0, 0.0, 1.0), Quat::from_rotation_x(1.0)),
            material: 0,
        },
    ];
    let shape = Shape::compound(children.clone()).unwrap();
    let mut w = world(0);
    let id = w
        .create_body(&BodyDesc::fixed(shape, Vec3::new(2.0, 1.0, -1.0)))
        .unwrap();
    w.set_rotation(id, Quat::from_rotation_y(0.8)).unwrap();
    let pose = w.body(id).unwrap().transform();
    for options in [DebugDrawOptions::default(), solid()] {
        let mut drawn = Recorder::default();
        w.debug_draw(&mut drawn, &options);
        let mut alone = Recorder::default();
        for child in &children {
            draw_shape(
                &mut alone,
                &child.shape,
                &pose.mul_isometry(&child.pose),
                Color::GREY,
                options.solid,
                options.half_space_extent,
            );
        }
        assert!(!drawn.cmds.is_empty());
        assert_eq!(drawn.cmds, alone.cmds);
    }
}

/// A ball joint between two boxes, swung for a second under gravity: the drawn joint
/// lines run from each body's origin to that body's anchor (its pose times the joint's
/// local frame, computed here from `joint_desc`), and the two anchors coincide to the
/// solver's tolerance (1 cm: a ball joint keeps the anchors together, the soft step lets
/// them drift by millimetres). Then come the two frames' three axes each.
#[test]
fn ball_joint_lines_end_at_the_bodies_anchor_points() {
    use joule_physics::joint::{JointDesc, JointKind};
    let mut w = world(0);
    let cube = || Shape::cuboid(Vec3::splat(0.25)).unwrap();
    let a = w
        .create_body(&BodyDesc::dynamic(cube(), Vec3::new(0.0, 2.0, 0.0)))
        .unwrap();
    let b = w
        .create_body(&BodyDesc::dynamic(cube(), Vec3::new(1.0, 2.0, 0.0)))
        .unwrap();
    w.set_rotation(b, Quat::from_rotation_z(0.3)).unwrap();
    let (fa, fb) = w
        .joint_frames_at(Some(a), b, Vec3::new(0.5, 2.0, 0.0), Vec3::X)
        .unwrap();
    let joint = w
        .create_joint(&JointDesc::new(JointKind::Ball, Some(a), b, fa, fb))
        .unwrap();
    // A world-anchored ball joint holding A up, so the pair swings.
    let (wa, wb) = w
        .joint_frames_at(None, a, Vec3::new(-0.5, 2.0, 0.0), Vec3::X)
        .unwrap();
    w.create_joint(&JointDesc::new(JointKind::Ball, None, a, wa, wb))
        .unwrap();
    for _ in 0..60 {
        w.step(1.0 / 60.0);
    }
    let options = DebugDrawOptions {
        shapes: false,
        joints: true,
        ..DebugDrawOptions::default()
    };
    let mut r = Recorder::default();
    w.debug_draw(&mut r, &options);
    // Joint 0: 2 anchor lines + 6 axes; joint 1 (to the world): 1 anchor line + 6 axes.
    assert_eq!(r.lines.len(), 8 + 7);
    let desc = w.joint_desc(joint).unwrap();
    let (pa, pb) = (
        w.body(a).unwrap().transform(),
        w.body(b).unwrap().transform(),
    );
    let anchor_a = Vec3::from(pa.transform_point(desc.frame_a.translation));
    let anchor_b = Vec3::from(pb.transform_point(desc.frame_b.translation));
    let close = |p: Vec3, q: Vec3| (p - q).length() < 1e-5;
    let (l0, l1) = (r.lines[0], r.lines[1]);
    assert!(
        close(l0.0, pa.translation.into()) && close(l0.1, anchor_a),
        "{l0:?}"
    );
    assert!(
        close(l1.0, pb.translation.into()) && close(l1.1, anchor_b),
        "{l1:?}"
    );
    assert!(
        (anchor_a - anchor_b).length() < 1e-2,
        "{anchor_a} {anchor_b}"
    );
    // The bodies swung: the anchors moved off their starting point, so the check above
    // is not the trivial one at rest.
    assert!((anchor_a - Vec3::new(0.5, 2.0, 0.0)).length() > 0.05);
    // Each frame's axes start at its anchor and are orthogonal, `joint_axis_length` long.
    for (k, anchor) in [(2, anchor_a), (5, anchor_b)] {
        let axes: Vec<Vec3> = r.lines[k..k + 3]
            .iter()
            .map(|&(p, q, _)| {
                assert!(close(p, anchor));
                q - p
            })
            .collect();
        for (i, x) in axes.iter().enumerate() {
            assert!((x.length() - options.joint_axis_length).abs() < 1e-5);
            assert!(x.dot(axes[(i + 1) % 3]).abs() < 1e-5);
        }
    }
}

/// A disabled body takes no part in the world and is not drawn; enabled again, it is.
#[test]
fn a_disabled_body_is_not_drawn() {
    let mut w = world(0);
    let id = w
        .create_body(&BodyDesc::dynamic(
            Shape::cuboid(Vec3::ONE).unwrap(),
            Vec3::ZERO,
        ))
        .unwrap();
    let lines = |w: &World| {
        let mut r = Recorder::default();
        w.debug_draw(&mut r, &DebugDrawOptions::default());
        r.lines.len()
    };
    assert_eq!(lines(&w), 12);
    w.set_enabled(id, false).unwrap();
    assert_eq!(lines(&w), 0);
    w.set_enabled(id, true).unwrap();
    assert_eq!(lines(&w), 12);
}
