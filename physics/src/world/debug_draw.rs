//! Debug drawing: the world described as coloured lines, triangles, points and labels.
//!
//! The engine draws nothing itself. A game (or the recorder, or a test) implements
//! [`DebugRenderer`] over its own line renderer and calls [`World::debug_draw`] once a
//! frame; [`DebugDrawOptions`] chooses what is described. This is Jolt's `DebugRenderer`
//! and Rapier's `DebugRenderPipeline` idea: the physics side knows the shapes and
//! contacts, the renderer side knows the GPU, and the trait is the only thing between.
//!
//! Drawing reads the world from outside, like a query: it never changes it, and it emits
//! primitives in a deterministic order (bodies by slot, contacts by body ids), so two
//! draws of the same world produce the same command list.
//!
//! ```
//! use joule_physics::prelude::*;
//! use joule_physics::debug_draw::{Color, DebugDrawOptions, DebugRenderer};
//!
//! /// Counts the lines it is given (a real renderer would buffer them for the GPU).
//! #[derive(Default)]
//! struct LineCounter(usize);
//! impl DebugRenderer for LineCounter {
//!     fn line(&mut self, _a: Vec3, _b: Vec3, _color: Color) {
//!         self.0 += 1;
//!     }
//! }
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! world.create_body(&BodyDesc::dynamic(Shape::cuboid(Vec3::splat(0.5))?, Vec3::ZERO))?;
//! let mut lines = LineCounter::default();
//! world.debug_draw(&mut lines, &DebugDrawOptions::default());
//! assert_eq!(lines.0, 12, "a box's wireframe is its 12 edges");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::body::{FIRST_SLEEPING_SET, MotionQuality, MotionType, STATIC_SET};
use crate::contact::ContactFlags;
use crate::math::{Isometry, Quat, Vec3, Vec3A};
use crate::shape::Shape;
use crate::world::World;

/// An RGBA colour, 8 bits a channel (sRGB, alpha 255 = opaque).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Color {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Alpha (255 = opaque).
    pub a: u8,
}

impl Color {
    /// An opaque colour.
    #[must_use]
    pub const fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color { r, g, b, a: 255 }
    }

    /// White.
    pub const WHITE: Color = Color::rgb(255, 255, 255);
    /// Grey, for static bodies.
    pub const GREY: Color = Color::rgb(128, 128, 128);
    /// Dark blue, for sleeping bodies.
    pub const SLEEPING: Color = Color::rgb(60, 80, 160);
    /// Red, for contact points.
    pub const RED: Color = Color::rgb(230, 40, 40);
    /// Green, for contact normals.
    pub const GREEN: Color = Color::rgb(40, 200, 60);
    /// Yellow, for impulses.
    pub const YELLOW: Color = Color::rgb(240, 220, 40);
    /// Orange, for kinematic bodies and CCD sweeps.
    pub const ORANGE: Color = Color::rgb(250, 140, 30);
    /// Cyan, for bounding boxes.
    pub const CYAN: Color = Color::rgb(40, 200, 220);
    /// Blue, for joint frame Z axes.
    pub const BLUE: Color = Color::rgb(50, 90, 240);
    /// Magenta, for sensors.
    pub const MAGENTA: Color = Color::rgb(220, 60, 220);

    /// A bright colour picked from `key` by the golden-ratio hue walk: neighbouring keys
    /// get clearly different hues, and the same key always gets the same colour.
    #[must_use]
    pub fn from_key(key: u32) -> Color {
        let hue = (key as f32 * 0.618_034).fract() * 6.0;
        let x = 1.0 - (hue % 2.0 - 1.0).abs();
        let (r, g, b) = match hue as u32 {
            0 => (1.0, x, 0.0),
            1 => (x, 1.0, 0.0),
            2 => (0.0, 1.0, x),
            3 => (0.0, x, 1.0),
            4 => (x, 0.0, 1.0),
            _ => (1.0, 0.0, x),
        };
        // Lift the floor so no body is drawn near-black against a dark background.
        let channel = |c: f32| (60.0 + c * 195.0) as u8;
        Color::rgb(channel(r), channel(g), channel(b))
    }
}

/// Where debug drawing goes. Only [`line`](Self::line) is required; the others fall back
/// to lines (a triangle as its outline, a point as a small cross, a label as nothing).
pub trait DebugRenderer {
    /// A line segment from `a` to `b`.
    fn line(&mut self, a: Vec3, b: Vec3, color: Color);

    /// A filled triangle (counter-clockwise seen from outside the shape).
    fn triangle(&mut self, a: Vec3, b: Vec3, c: Vec3, color: Color) {
        self.line(a, b, color);
        self.line(b, c, color);
        self.line(c, a, color);
    }

    /// A point drawn `size` metres across.
    fn point(&mut self, p: Vec3, size: f32, color: Color) {
        let h = 0.5 * size;
        self.line(p - Vec3::X * h, p + Vec3::X * h, color);
        self.line(p - Vec3::Y * h, p + Vec3::Y * h, color);
        self.line(p - Vec3::Z * h, p + Vec3::Z * h, color);
    }

    /// A text label anchored at `p`.
    fn text(&mut self, p: Vec3, text: &str, color: Color) {
        let _ = (p, text, color);
    }
}

/// How bodies are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ColorMode {
    /// Each body its own colour (from its slot index); static grey, sleeping dark blue.
    #[default]
    Body,
    /// By state: awake dynamic white, sleeping dark blue, kinematic orange, static grey.
    SleepState,
    /// Each island (bodies joined by touching contacts) its own colour; static grey.
    Island,
}

/// What [`World::debug_draw`] describes. `Default` draws wireframe shapes coloured by
/// body and nothing else.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DebugDrawOptions {
    /// Draw each body's shape.
    pub shapes: bool,
    /// Shapes as filled triangles instead of wireframe edges.
    pub solid: bool,
    /// How shapes are coloured.
    pub color_mode: ColorMode,
    /// Draw each body's world bounding box.
    pub bounding_boxes: bool,
    /// Draw each touching contact's points.
    pub contact_points: bool,
    /// Draw each touching contact's normal (from A to B), `normal_length` long.
    pub contact_normals: bool,
    /// Draw each contact point's accumulated normal impulse as a segment along the
    /// normal, `impulse_scale` metres per N·s. The impulse is the last substep's (a box
    /// at rest shows its weight times the substep, `m g dt / substeps`).
    pub contact_impulses: bool,
    /// Draw CCD: the swept motion of each linear-cast body this step, and each hit.
    pub ccd: bool,
    /// Label each body with its id.
    pub labels: bool,
    /// Draw each joint: a line from each body's origin to its anchor (the joint frame's
    /// origin on that body), and both joint frames' axes (X red, Y green, Z blue),
    /// `joint_axis_length` long. Disabled (broken) joints are drawn grey.
    pub joints: bool,
    /// Length of drawn joint frame axes (m).
    pub joint_axis_length: f32,
    /// Length of drawn contact normals (m).
    pub normal_length: f32,
    /// Metres of segment per N·s of impulse.
    pub impulse_scale: f32,
    /// Half the side of the square drawn for an infinite half-space (m).
    pub half_space_extent: f32,
}

impl Default for DebugDrawOptions {
    fn default() -> Self {
        Self {
            shapes: true,
            solid: false,
            color_mode: ColorMode::Body,
            bounding_boxes: false,
            contact_points: false,
            contact_normals: false,
            contact_impulses: false,
            ccd: false,
            labels: false,
            joints: false,
            joint_axis_length: 0.2,
            normal_length: 0.25,
            impulse_scale: 0.05,
            half_space_extent: 20.0,
        }
    }
}

impl DebugDrawOptions {
    /// Everything on (wireframe shapes, boxes, contacts, CCD, labels, joints).
    #[must_use]
    pub fn all() -> Self {
        Self {
            bounding_boxes: true,
            contact_points: true,
            contact_normals: true,
            contact_impulses: true,
            ccd: true,
            labels: true,
            joints: true,
            ..Self::default()
        }
    }
}

/// Segments used for a full circle: enough to read as round at debug-view distances.
const CIRCLE_SEGMENTS: usize = 16;

impl World {
    /// Describes the world to `renderer` as `options` ask: shapes, bounding boxes,
    /// contacts, CCD sweeps and labels, in a deterministic order. Reads the world only.
    pub fn debug_draw<R: DebugRenderer + ?Sized>(
        &self,
        renderer: &mut R,
        options: &DebugDrawOptions,
    ) {
        let islands = if options.color_mode == ColorMode::Island {
            self.island_roots()
        } else {
            Vec::new()
        };
        for (index, body) in self.bodies.bodies.iter().enumerate() {
            // A disabled body takes no part in the world, so it is not drawn either.
            if !body.alive || body.disabled {
                continue;
            }
            let index = index as u32;
            let sim = self.bodies.sim_of(index);
            let color = self.body_color(index, options.color_mode, &islands);
            if options.shapes {
                draw_shape(
                    renderer,
                    &body.shape,
                    &sim.transform,
                    color,
                    options.solid,
                    options.half_space_extent,
                );
            }
            if options.bounding_boxes && body.shape.kind() != crate::shape::ShapeKind::HalfSpace {
                let aabb = body.shape.world_aabb(&sim.transform);
                draw_box_edges(
                    renderer,
                    Vec3::from(aabb.min),
                    Vec3::from(aabb.max),
                    Color::CYAN,
                );
            }
            if options.labels {
                let id = self.bodies.id_of(index);
                let label = format!("{}:{}", id.index(), id.generation());
                renderer.text(sim.transform.translation.into(), &label, Color::WHITE);
            }
            if options.ccd
                && body.motion_quality == MotionQuality::LinearCast
                && body.motion_type == MotionType::Dynamic
            {
                renderer.line(sim.center0.into(), sim.center.into(), Color::ORANGE);
            }
        }
        if options.contact_points || options.contact_normals || options.contact_impulses {
            self.draw_contacts(renderer, options);
        }
        if options.joints {
            self.draw_joints(renderer, options);
        }
        if options.ccd {
            let mut hits = self.ccd.hits.clone();
            hits.sort_by_key(|h| (h.body, h.other));
            for hit in &hits {
                let p = Vec3::from(hit.point);
                renderer.point(p, 0.1, Color::ORANGE);
                renderer.line(
                    p,
                    p + Vec3::from(hit.normal) * options.normal_length,
                    Color::ORANGE,
                );
            }
        }
    }

    fn draw_contacts<R: DebugRenderer + ?Sized>(
        &self,
        renderer: &mut R,
        options: &DebugDrawOptions,
    ) {
        for contact in self.contacts() {
            let normal = contact.normal;
            for (k, &(point, _separation)) in contact.points.iter().enumerate() {
                let p = point;
                if options.contact_points {
                    renderer.point(p, 0.05, Color::RED);
                }
                if options.contact_normals {
                    renderer.line(p, p + normal * options.normal_length, Color::GREEN);
                }
                if options.contact_impulses {
                    let impulse = contact.normal_impulses.get(k).copied().unwrap_or(0.0);
                    if impulse > 0.0 {
                        renderer.line(
                            p,
                            p + normal * impulse * options.impulse_scale,
                            Color::YELLOW,
                        );
                    }
                }
            }
        }
    }

    /// Each live joint, by slot: body origin to anchor on each side, then the frames.
    fn draw_joints<R: DebugRenderer + ?Sized>(&self, renderer: &mut R, options: &DebugDrawOptions) {
        for (index, joint) in self.joints.joints.iter().enumerate() {
            if !joint.alive {
                continue;
            }
            let id = self.joints.id_of(index as u32);
            let Ok((frame_a, frame_b)) = self.joint_frames(id) else {
                continue;
            };
            let color = if joint.enabled {
                Color::WHITE
            } else {
                Color::GREY
            };
            // A joint to the world has no body A: its frame is already in world space.
            if let Some(a) = joint.body_a {
                let origin = self.bodies.sim_of(a).transform.translation;
                renderer.line(origin.into(), frame_a.translation.into(), color);
            }
            let origin = self.bodies.sim_of(joint.body_b).transform.translation;
            renderer.line(origin.into(), frame_b.translation.into(), color);
            for frame in [frame_a, frame_b] {
                let p = Vec3::from(frame.translation);
                let l = options.joint_axis_length;
                renderer.line(p, p + frame.rotation * Vec3::X * l, Color::RED);
                renderer.line(p, p + frame.rotation * Vec3::Y * l, Color::GREEN);
                renderer.line(p, p + frame.rotation * Vec3::Z * l, Color::BLUE);
            }
        }
    }

    /// The colour of the body in slot `index` under `mode`.
    fn body_color(&self, index: u32, mode: ColorMode, islands: &[u32]) -> Color {
        let body = &self.bodies.bodies[index as usize];
        if body.set == STATIC_SET || body.motion_type == MotionType::Fixed {
            return Color::GREY;
        }
        if body.is_sensor {
            return Color::MAGENTA;
        }
        let sleeping = body.set >= FIRST_SLEEPING_SET;
        match mode {
            ColorMode::Body if sleeping => Color::SLEEPING,
            ColorMode::Body => Color::from_key(index),
            ColorMode::SleepState if sleeping => Color::SLEEPING,
            ColorMode::SleepState if body.motion_type == MotionType::Kinematic => Color::ORANGE,
            ColorMode::SleepState => Color::WHITE,
            // A sleeping island is one body set, so its set index names it.
            ColorMode::Island if sleeping => Color::from_key(body.set.wrapping_mul(7919)),
            ColorMode::Island => Color::from_key(islands[index as usize]),
        }
    }

    /// Per body slot, the lowest slot of its awake island (union-find over touching,
    /// non-sensor contacts between moving bodies, in contact order: deterministic).
    pub(crate) fn island_roots(&self) -> Vec<u32> {
        let n = self.bodies.bodies.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let up = parent[parent[x as usize] as usize];
                parent[x as usize] = up;
                x = up;
            }
            x
        }
        for c in &self.contacts.contacts {
            if !c.alive
                || !c.flags.contains(ContactFlags::TOUCHING)
                || c.flags.contains(ContactFlags::SENSOR)
            {
                continue;
            }
            let moving = |slot: u32| {
                let b = &self.bodies.bodies[slot as usize];
                b.alive && b.motion_type == MotionType::Dynamic
            };
            if !(moving(c.body_a) && moving(c.body_b)) {
                continue;
            }
            let (ra, rb) = (find(&mut parent, c.body_a), find(&mut parent, c.body_b));
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            parent[hi as usize] = lo;
        }
        (0..n as u32).map(|i| find(&mut parent, i)).collect()
    }
}

/// Draws one shape at `pose`.
pub fn draw_shape<R: DebugRenderer + ?Sized>(
    renderer: &mut R,
    shape: &Shape,
    pose: &Isometry,
    color: Color,
    solid: bool,
    half_space_extent: f32,
) {
    let at = |p: Vec3A| -> Vec3 { pose.transform_point(p).into() };
    let rot = pose.rotation;
    let center: Vec3 = pose.translation.into();
    match shape {
        Shape::Sphere(s) => {
            if solid {
                draw_solid_round(renderer, center, rot, s.radius, 0.0, color);
            } else {
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    draw_circle(renderer, center, rot * axis, s.radius, color);
                }
            }
        }
        Shape::Box(b) => {
            let h = Vec3::from(b.half_extents);
            let corner = |i: usize| -> Vec3 {
                let s = Vec3::new(
                    if i & 1 == 0 { -1.0 } else { 1.0 },
                    if i & 2 == 0 { -1.0 } else { 1.0 },
                    if i & 4 == 0 { -1.0 } else { 1.0 },
                );
                at((s * h).into())
            };
            if solid {
                // Each face as two triangles, counter-clockwise seen from outside.
                const FACES: [[usize; 4]; 6] = [
                    [0, 2, 6, 4],
                    [1, 5, 7, 3],
                    [0, 4, 5, 1],
                    [2, 3, 7, 6],
                    [0, 1, 3, 2],
                    [4, 6, 7, 5],
                ];
                for f in FACES {
                    renderer.triangle(corner(f[0]), corner(f[1]), corner(f[2]), color);
                    renderer.triangle(corner(f[0]), corner(f[2]), corner(f[3]), color);
                }
            } else {
                for (a, b) in BOX_EDGES {
                    renderer.line(corner(a), corner(b), color);
                }
            }
        }
        Shape::Capsule(c) => {
            let up = rot * Vec3::Y;
            let (top, bottom) = (center + up * c.half_height, center - up * c.half_height);
            if solid {
                draw_solid_round(renderer, center, rot, c.radius, c.half_height, color);
            } else {
                draw_circle(renderer, top, up, c.radius, color);
                draw_circle(renderer, bottom, up, c.radius, color);
                for axis in [Vec3::X, Vec3::Z] {
                    let side = rot * axis * c.radius;
                    renderer.line(top + side, bottom + side, color);
                    renderer.line(top - side, bottom - side, color);
                    // Half circles over each end.
                    draw_arc(renderer, top, side, up * c.radius, color);
                    draw_arc(renderer, bottom, side, -up * c.radius, color);
                }
            }
        }
        Shape::Cylinder(c) => {
            let up = rot * Vec3::Y;
            let (top, bottom) = (center + up * c.half_height, center - up * c.half_height);
            if solid {
                let ring = |k: usize, base: Vec3| -> Vec3 {
                    let t = k as f32 / CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
                    base + rot * Vec3::new(t.cos(), 0.0, t.sin()) * c.radius
                };
                for k in 0..CIRCLE_SEGMENTS {
                    let (t0, t1) = (ring(k, top), ring(k + 1, top));
                    let (b0, b1) = (ring(k, bottom), ring(k + 1, bottom));
                    renderer.triangle(top, t1, t0, color);
                    renderer.triangle(bottom, b0, b1, color);
                    renderer.triangle(b0, t0, t1, color);
                    renderer.triangle(b0, t1, b1, color);
                }
            } else {
                draw_circle(renderer, top, up, c.radius, color);
                draw_circle(renderer, bottom, up, c.radius, color);
                for axis in [Vec3::X, Vec3::Z] {
                    let side = rot * axis * c.radius;
                    renderer.line(top + side, bottom + side, color);
                    renderer.line(top - side, bottom - side, color);
                }
            }
        }
        Shape::ConvexHull(hull) => {
            let vertices = hull.vertices();
            for face in hull.faces() {
                let v = &face.vertices;
                if v.len() < 2 {
                    continue;
                }
                if solid {
                    for k in 1..v.len().saturating_sub(1) {
                        renderer.triangle(
                            at(vertices[v[0] as usize]),
                            at(vertices[v[k] as usize]),
                            at(vertices[v[k + 1] as usize]),
                            color,
                        );
                    }
                } else {
                    // Each edge belongs to two faces; draw it from the face that lists it
                    // in ascending vertex order only, so it is drawn once.
                    for k in 0..v.len() {
                        let (a, b) = (v[k], v[(k + 1) % v.len()]);
                        if a < b {
                            renderer.line(
                                at(vertices[a as usize]),
                                at(vertices[b as usize]),
                                color,
                            );
                        }
                    }
                }
            }
        }
        Shape::HalfSpace(h) => {
            let n = Vec3::from(rot * h.normal);
            let origin = center + n * h.offset;
            let (u, w) = n.any_orthonormal_pair();
            let e = half_space_extent;
            let c = [
                origin + (u + w) * e,
                origin + (u - w) * e,
                origin + (-u - w) * e,
                origin + (-u + w) * e,
            ];
            if solid {
                renderer.triangle(c[0], c[1], c[2], color);
                renderer.triangle(c[0], c[2], c[3], color);
            } else {
                // A grid of lines a metre apart reads as a floor without hiding what rests on it.
                let steps = (2.0 * e).round().max(1.0) as i32;
                for k in 0..=steps {
                    let t = -e + 2.0 * e * k as f32 / steps as f32;
                    renderer.line(origin + u * t - w * e, origin + u * t + w * e, color);
                    renderer.line(origin + w * t - u * e, origin + w * t + u * e, color);
                }
            }
            renderer.line(origin, origin + n, color);
        }
        Shape::Compound(compound) => {
            // Each child at its pose in the compound's frame, through its own arm.
            for child in compound.children() {
                let child_pose = pose.mul_isometry(&child.pose);
                draw_shape(
                    renderer,
                    &child.shape,
                    &child_pose,
                    color,
                    solid,
                    half_space_extent,
                );
            }
        }
        Shape::TriangleMesh(mesh) => {
            let vertices = mesh.vertices();
            for tri in mesh.indices() {
                let [a, b, c] = tri.map(|i| at(vertices[i as usize]));
                draw_triangle(renderer, [a, b, c], color, solid);
            }
        }
        Shape::HeightField(field) => {
            let (nx, nz) = field.sample_counts();
            for j in 0..nz.saturating_sub(1) {
                for i in 0..nx.saturating_sub(1) {
                    if field.is_hole(i, j) {
                        continue;
                    }
                    let c = j * (nx - 1) + i;
                    for t in [2 * c, 2 * c + 1] {
                        let v = field.triangle_vertices(t).vertices.map(at);
                        draw_triangle(renderer, v, color, solid);
                    }
                }
            }
        }
    }
}

/// One triangle of a mesh or heightfield: filled, or its three edges. Edges shared by two
/// triangles are drawn twice; deduplicating them would need a per-draw edge set, and a
/// debug view does not mind the overdraw.
fn draw_triangle<R: DebugRenderer + ?Sized>(
    renderer: &mut R,
    [a, b, c]: [Vec3; 3],
    color: Color,
    solid: bool,
) {
    if solid {
        renderer.triangle(a, b, c, color);
    } else {
        renderer.line(a, b, color);
        renderer.line(b, c, color);
        renderer.line(c, a, color);
    }
}

/// The 12 edges of a box whose corner `i` has bit 0 = +x, bit 1 = +y, bit 2 = +z.
const BOX_EDGES: [(usize, usize); 12] = [
    (0, 1),
    (2, 3),
    (4, 5),
    (6, 7),
    (0, 2),
    (1, 3),
    (4, 6),
    (5, 7),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
];

/// The edges of an axis-aligned box.
fn draw_box_edges<R: DebugRenderer + ?Sized>(renderer: &mut R, min: Vec3, max: Vec3, color: Color) {
    let corner = |i: usize| {
        Vec3::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        )
    };
    for (a, b) in BOX_EDGES {
        renderer.line(corner(a), corner(b), color);
    }
}

/// A circle of `radius` around `center` in the plane normal to `normal`.
fn draw_circle<R: DebugRenderer + ?Sized>(
    renderer: &mut R,
    center: Vec3,
    normal: Vec3,
    radius: f32,
    color: Color,
) {
    let (u, w) = normal.normalize_or(Vec3::Y).any_orthonormal_pair();
    let at = |k: usize| {
        let t = k as f32 / CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
        center + (u * t.cos() + w * t.sin()) * radius
    };
    for k in 0..CIRCLE_SEGMENTS {
        renderer.line(at(k), at(k + 1), color);
    }
}

/// Half a circle from `center + side` over `center + top` to `center - side`.
fn draw_arc<R: DebugRenderer + ?Sized>(
    renderer: &mut R,
    center: Vec3,
    side: Vec3,
    top: Vec3,
    color: Color,
) {
    let half = CIRCLE_SEGMENTS / 2;
    let at = |k: usize| {
        let t = k as f32 / half as f32 * std::f32::consts::PI;
        center + side * t.cos() + top * t.sin()
    };
    for k in 0..half {
        renderer.line(at(k), at(k + 1), color);
    }
}

/// A sphere (`half_height` 0) or capsule as triangles: a UV sphere whose two halves are
/// pulled `half_height` apart along the local Y axis, with the band between them filled.
fn draw_solid_round<R: DebugRenderer + ?Sized>(
    renderer: &mut R,
    center: Vec3,
    rot: Quat,
    radius: f32,
    half_height: f32,
    color: Color,
) {
    const RINGS: usize = 8;
    let point = |ring: usize, k: usize| -> Vec3 {
        let phi = ring as f32 / RINGS as f32 * std::f32::consts::PI;
        let t = k as f32 / CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
        let (s, y) = (phi.sin(), phi.cos());
        let shift = if ring <= RINGS / 2 {
            half_height
        } else {
            -half_height
        };
        center
            + rot
                * Vec3::new(
                    s * t.cos() * radius,
                    y * radius + shift,
                    s * t.sin() * radius,
                )
    };
    for ring in 0..RINGS {
        for k in 0..CIRCLE_SEGMENTS {
            let (a, b) = (point(ring, k), point(ring, k + 1));
            let (c, d) = (point(ring + 1, k), point(ring + 1, k + 1));
            renderer.triangle(a, b, d, color);
            renderer.triangle(a, d, c, color);
        }
    }
    if half_height > 0.0 {
        // The equator ring appears at both heights; join them with the cylinder band.
        for k in 0..CIRCLE_SEGMENTS {
            let t0 = k as f32 / CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
            let t1 = (k + 1) as f32 / CIRCLE_SEGMENTS as f32 * std::f32::consts::TAU;
            let ring =
                |t: f32, y: f32| center + rot * Vec3::new(t.cos() * radius, y, t.sin() * radius);
            let (a, b) = (ring(t0, half_height), ring(t1, half_height));
            let (c, d) = (ring(t0, -half_height), ring(t1, -half_height));
            renderer.triangle(a, c, d, color);
            renderer.triangle(a, d, b, color);
        }
    }
}
