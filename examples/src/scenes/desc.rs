//! A standard scene as plain, engine-neutral data: its settings, its shapes, its bodies
//! and joints in creation order. joule builds its worlds from it ([`super::build_desc`])
//! and so does every peer engine of the benches, so a scene is changed in one place and
//! every engine steps the same thing.
//!
//! Only what the standard scenes use is here. Every quantity is in SI units and world
//! axes; a body's pose is the pose of its shape's local origin; shapes are centred on it
//! (as in joule, Rapier, Box3D, Jolt and PhysX).

use joule_physics::math::{Quat, Vec3};

use super::SceneKind;

/// Density of every standard scene's bodies (kg/m³).
pub const DENSITY: f32 = 1000.0;
/// Friction coefficient of every standard scene's bodies.
pub const FRICTION: f32 = 0.5;
/// Restitution of every standard scene's bodies.
pub const RESTITUTION: f32 = 0.0;

/// A collision shape in its body's frame.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeDesc {
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius: f32,
    },
    /// A box.
    Cuboid {
        /// Half extents (m).
        half: Vec3,
    },
    /// The segment from `-half_height` to `+half_height` on local y, swept by `radius`.
    Capsule {
        /// Half the length of the inner segment (m).
        half_height: f32,
        /// Radius (m).
        radius: f32,
    },
    /// A heightfield centred on the body's origin: `nx x nz` samples `cell` apart, sample
    /// (i, j) at x = (i - (nx - 1) / 2) cell, z = (j - (nz - 1) / 2) cell with height
    /// `heights[j * nx + i]` (rows along x, j outer). Each cell is split along the
    /// diagonal from its (x0, z1) corner to its (x1, z0) corner.
    HeightField {
        /// Samples along x.
        nx: u32,
        /// Samples along z.
        nz: u32,
        /// Distance between neighbouring samples, in x and in z (m).
        cell: f32,
        /// `nx * nz` heights (m), j outer, i inner.
        heights: Vec<f32>,
    },
    /// A triangle mesh; each triangle's normal (counter-clockwise winding) faces its
    /// solid side's outside.
    TriangleMesh {
        /// Vertices (m).
        vertices: Vec<Vec3>,
        /// Indices into `vertices`.
        triangles: Vec<[u32; 3]>,
    },
    /// Convex children at poses in the body's frame. A body's mass is the sum of the
    /// children's (their overlap counted twice).
    Compound(Vec<CompoundPart>),
}

/// One child of a [`ShapeDesc::Compound`].
#[derive(Clone, Debug, PartialEq)]
pub struct CompoundPart {
    /// Where its centre sits in the body's frame (m).
    pub position: Vec3,
    /// Its orientation in the body's frame.
    pub rotation: Quat,
    /// A convex shape (sphere, box or capsule).
    pub shape: ShapeDesc,
}

/// Index of a shape in [`SceneDesc::shapes`]: bodies that use the same shape share it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShapeId(pub usize);

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// Never moves (infinite mass).
    Fixed,
    /// Moved by gravity, contacts and joints; its mass comes from its shape and density.
    Dynamic,
}

/// One body of a scene.
#[derive(Clone, Debug, PartialEq)]
pub struct BodySpec {
    /// Fixed or dynamic.
    pub motion: Motion,
    /// Its shape, or `None` for a fixed anchor that joints hang from and nothing collides
    /// with.
    pub shape: Option<ShapeId>,
    /// Position of its origin (m).
    pub position: Vec3,
    /// Orientation (a unit quaternion).
    pub rotation: Quat,
    /// Linear velocity at the start (m/s).
    pub linear_velocity: Vec3,
    /// Angular velocity at the start (rad/s, world axes).
    pub angular_velocity: Vec3,
    /// Density (kg/m³) that gives a dynamic body its mass.
    pub density: f32,
    /// Friction coefficient.
    pub friction: f32,
    /// Restitution.
    pub restitution: f32,
    /// Whether it may fall asleep.
    pub can_sleep: bool,
}

impl Default for BodySpec {
    /// A fixed anchor without a shape at the origin, with the scenes' material.
    fn default() -> Self {
        Self {
            motion: Motion::Fixed,
            shape: None,
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            density: DENSITY,
            friction: FRICTION,
            restitution: RESTITUTION,
            can_sleep: true,
        }
    }
}

impl BodySpec {
    /// A dynamic body with `shape` at `position`, unrotated, at rest, allowed to sleep.
    #[must_use]
    pub fn dynamic(shape: ShapeId, position: Vec3) -> Self {
        Self {
            motion: Motion::Dynamic,
            shape: Some(shape),
            position,
            ..Self::default()
        }
    }

    /// A fixed body with `shape` at `position`.
    #[must_use]
    pub fn fixed(shape: ShapeId, position: Vec3) -> Self {
        Self {
            shape: Some(shape),
            position,
            ..Self::default()
        }
    }

    /// A fixed body without a shape at `position`, for joints to hang from.
    #[must_use]
    pub fn anchor(position: Vec3) -> Self {
        Self {
            position,
            ..Self::default()
        }
    }

    /// Whether it is dynamic.
    #[must_use]
    pub fn is_dynamic(&self) -> bool {
        self.motion == Motion::Dynamic
    }
}

/// What a joint lets its two bodies do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointType {
    /// Ball and socket: the two joint points coincide.
    Ball,
    /// A ball joint whose X axis may swing inside a cone and twist about itself within a
    /// range.
    SwingTwist {
        /// Half angle of the swing cone (rad).
        swing_half_angle: f32,
        /// Lowest twist angle (rad).
        twist_lower: f32,
        /// Highest twist angle (rad).
        twist_upper: f32,
    },
    /// Rotation about the X axis only, within a range.
    Hinge {
        /// Lowest angle (rad).
        lower: f32,
        /// Highest angle (rad).
        upper: f32,
    },
}

/// Where a joint attaches to its bodies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointFrames {
    /// The joint point in each body's frame, the frames unrotated (for ball joints).
    Local {
        /// The point in body A's frame (m).
        a: Vec3,
        /// The point in body B's frame (m).
        b: Vec3,
    },
    /// The joint's world point and its X axis (the twist or hinge axis) in world axes, at
    /// the bodies' start poses; each engine turns them into its bodies' local frames.
    World {
        /// The joint point (m).
        anchor: Vec3,
        /// The joint's X axis (unit length).
        axis: Vec3,
    },
}

/// A joint between two bodies of a scene. Jointed bodies do not collide with each other.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointSpec {
    /// Index of body A (the parent) in [`SceneDesc::bodies`].
    pub a: usize,
    /// Index of body B (the child).
    pub b: usize,
    /// What it constrains.
    pub kind: JointType,
    /// Where it attaches.
    pub frames: JointFrames,
}

/// A whole scene: settings, shapes, bodies and joints in creation order, and the marks
/// its sanity check needs.
#[derive(Clone, Debug)]
pub struct SceneDesc {
    /// Which standard scene.
    pub kind: SceneKind,
    /// Time step (s).
    pub dt: f32,
    /// Gravity (m/s²).
    pub gravity: Vec3,
    /// The shapes bodies use.
    pub shapes: Vec<ShapeDesc>,
    /// Bodies in creation order (which determinism depends on); the ground first where
    /// there is one.
    pub bodies: Vec<BodySpec>,
    /// Joints in creation order.
    pub joints: Vec<JointSpec>,
    /// Pyramids: index in `bodies` of each pyramid's top box.
    pub tops: Vec<usize>,
    /// chain_joints: each chain's top point; its links are the next
    /// [`CHAIN_LINKS`](super::CHAIN_LINKS) dynamic bodies, top first.
    pub chain_tops: Vec<Vec3>,
}

impl SceneDesc {
    /// An empty scene of `kind` with its time step and gravity.
    #[must_use]
    pub fn new(kind: SceneKind) -> Self {
        Self {
            kind,
            dt: super::DT,
            gravity: kind.gravity(),
            shapes: Vec::new(),
            bodies: Vec::new(),
            joints: Vec::new(),
            tops: Vec::new(),
            chain_tops: Vec::new(),
        }
    }

    /// Adds `shape`, or finds an equal one already added, and returns its id.
    pub fn add_shape(&mut self, shape: ShapeDesc) -> ShapeId {
        let i = self.shapes.iter().position(|s| *s == shape);
        ShapeId(i.unwrap_or_else(|| {
            self.shapes.push(shape);
            self.shapes.len() - 1
        }))
    }

    /// Adds a body and returns its index.
    pub fn add_body(&mut self, body: BodySpec) -> usize {
        self.bodies.push(body);
        self.bodies.len() - 1
    }

    /// The shape of body `index`, if it has one.
    #[must_use]
    pub fn shape_of(&self, index: usize) -> Option<&ShapeDesc> {
        self.bodies[index].shape.map(|s| &self.shapes[s.0])
    }

    /// The ground: the first body, when it is fixed and has a shape.
    #[must_use]
    pub fn ground(&self) -> Option<usize> {
        self.bodies
            .first()
            .filter(|b| !b.is_dynamic() && b.shape.is_some())
            .map(|_| 0)
    }

    /// Indices (into `bodies`) of the dynamic bodies, in creation order.
    #[must_use]
    pub fn dynamic_indices(&self) -> Vec<usize> {
        (0..self.bodies.len())
            .filter(|&i| self.bodies[i].is_dynamic())
            .collect()
    }
}
