//! Recordings: a run written step by step to a compact file, to play back in the viewer
//! (`examples/viewer/`) or to inspect offline, like Jolt's JoltViewer recordings.
//!
//! # What is recorded
//! - Once per body, in the frame where it first appears: its shape, motion type and
//!   material ([`RecordedBody`]). A body changed by hand later (`World::set_shape`,
//!   `set_motion_type`, `set_sensor`, `set_enabled`, `set_friction`, `set_restitution`,
//!   `set_material`) is recorded anew in the next frame, as if removed and created in its
//!   slot: its old record's poses turn NaN and a new record with its new look follows.
//!   A disabled body's pose stands still.
//! - Every recorded step ([`Frame`]): each body's pose, and what [`RecordOptions`] asked
//!   for: sleep/island state, contact points with normals and impulses, the step's job
//!   trace (stages and the jobs they ran, per thread), so a slow frame and its bodies are
//!   seen together.
//!
//! # Format
//! The 8-byte magic [`MAGIC`], then a [`RecordingHeader`], then one [`Frame`] after
//! another, each a postcard message. postcard (serde's compact binary format) was chosen
//! over a hand-written format and over bincode: it is well kept, has a stable
//! specification, writes f32 as 4 little-endian bytes and integers as varints (a body
//! index or step number costs one or two bytes), and a file is a plain sequence of
//! messages, so the recorder streams frames out as the run goes and a cut-off file still
//! reads up to its last whole frame. The viewer's server decodes it with this module and
//! hands the page flat little-endian arrays.
//!
//! # Cost
//! A frame copies seven floats and one state word per body into reused buffers and
//! encodes them; `benches/benches/recording.rs` measures it against the step (the budget
//! is 10 % of a pyramid_big step).
//!
//! ```
//! use joule_physics::prelude::*;
//! use joule_physics::recording::{RecordOptions, Recorder, Recording};
//!
//! let mut world = World::new(WorldDesc::default(), JobSystem::new(0)?);
//! world.create_body(&BodyDesc::dynamic(Shape::sphere(0.5)?, Vec3::Y))?;
//! let mut recorder = Recorder::new(Vec::new(), &world, 1.0 / 60.0, RecordOptions::default())?;
//! for _ in 0..10 {
//!     world.step(1.0 / 60.0);
//!     recorder.record(&world, None)?;
//! }
//! let bytes = recorder.finish()?;
//! let recording = Recording::read(&bytes)?;
//! assert_eq!(recording.frames.len(), 10);
//! assert_eq!(recording.bodies.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::body::{FIRST_SLEEPING_SET, MotionType, STATIC_SET};
use crate::contact::ContactFlags;
use crate::shape::Shape;
use crate::world::World;

/// The first bytes of a recording file.
pub const MAGIC: [u8; 8] = *b"JOULEREC";

/// The format version this build writes and reads.
/// Version 2 added [`RecordedShape::Compound`] and [`RecordedShape::Mesh`] (compounds,
/// triangle meshes and heightfields were [`RecordedShape::Bounds`] before).
pub const RECORDING_VERSION: u32 = 2;

/// Floats per body per frame in [`Frame::poses`]: position x, y, z, rotation x, y, z, w.
pub const POSE_FLOATS: usize = 7;

/// Floats per contact point in [`Frame::contacts`]: point x, y, z, normal x, y, z (from
/// body A to body B), normal impulse of the last substep.
pub const CONTACT_FLOATS: usize = 7;

/// [`Frame::states`] bit: the body sleeps.
pub const STATE_SLEEPING: u32 = 1 << 31;
/// [`Frame::states`] bit: the body is static.
pub const STATE_STATIC: u32 = 1 << 30;
/// [`Frame::states`] bit: the body was removed (its pose is NaN).
pub const STATE_REMOVED: u32 = 1 << 29;
/// [`Frame::states`] mask of the island key: for an awake body the record index of its
/// island's lowest body, for a sleeping one its sleeping island's number.
pub const STATE_ISLAND_MASK: u32 = (1 << 29) - 1;

/// What a recording keeps besides poses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordOptions {
    /// Sleep and island state per body ([`Frame::states`]).
    pub states: bool,
    /// Contact points, normals and impulses ([`Frame::contacts`]).
    pub contacts: bool,
    /// The step's job trace when the caller passes one ([`Frame::trace`]).
    pub trace: bool,
}

impl Default for RecordOptions {
    /// States and traces on, contacts on: what the viewer shows.
    fn default() -> Self {
        Self {
            states: true,
            contacts: true,
            trace: true,
        }
    }
}

/// Written once at the start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// [`RECORDING_VERSION`] of the writer.
    pub version: u32,
    /// The time step the run used (s).
    pub dt: f32,
    /// Gravity (m/s²).
    pub gravity: [f32; 3],
    /// What the frames keep.
    pub options: RecordOptions,
}

/// A shape as recorded (local frame).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RecordedShape {
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius: f32,
    },
    /// A box.
    Box {
        /// Half extents (m).
        half_extents: [f32; 3],
    },
    /// A capsule along local Y.
    Capsule {
        /// Half the length of the core segment (m).
        half_height: f32,
        /// Radius (m).
        radius: f32,
    },
    /// A cylinder along local Y.
    Cylinder {
        /// Half the height (m).
        half_height: f32,
        /// Radius (m).
        radius: f32,
    },
    /// A convex hull.
    ConvexHull {
        /// Vertices.
        vertices: Vec<[f32; 3]>,
        /// Faces as vertex index loops (counter-clockwise from outside).
        faces: Vec<Vec<u32>>,
    },
    /// A half-space `normal · x <= offset`.
    HalfSpace {
        /// Outward unit normal.
        normal: [f32; 3],
        /// Offset along the normal (m).
        offset: f32,
    },
    /// A compound: its children, each at its pose in the compound's frame.
    Compound {
        /// The children, in the compound's order.
        children: Vec<RecordedChild>,
    },
    /// A triangle mesh or a heightfield, as triangles (a heightfield's holes left out).
    /// Written once, with the body that first uses it.
    Mesh {
        /// Vertices (a heightfield's samples, row by row along X).
        vertices: Vec<[f32; 3]>,
        /// Triangles as vertex indices, counter-clockwise seen from the front.
        triangles: Vec<[u32; 3]>,
    },
    /// A shape kind this version does not record in detail, shown as its local box.
    Bounds {
        /// Minimum corner of the local bounding box.
        min: [f32; 3],
        /// Maximum corner.
        max: [f32; 3],
    },
}

/// One child of a [`RecordedShape::Compound`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedChild {
    /// The child's shape.
    pub shape: RecordedShape,
    /// Its position in the compound's frame.
    pub position: [f32; 3],
    /// Its rotation in the compound's frame (x, y, z, w).
    pub rotation: [f32; 4],
}

impl RecordedShape {
    /// The recorded form of `shape`.
    #[must_use]
    pub fn from_shape(shape: &Shape) -> RecordedShape {
        // Shape kinds added later are recorded as their bounds until they get a variant;
        // the arm is unreachable while every kind has one.
        #[allow(unreachable_patterns)]
        match shape {
            Shape::Sphere(s) => RecordedShape::Sphere { radius: s.radius },
            Shape::Box(b) => RecordedShape::Box {
                half_extents: b.half_extents.to_array(),
            },
            Shape::Capsule(c) => RecordedShape::Capsule {
                half_height: c.half_height,
                radius: c.radius,
            },
            Shape::Cylinder(c) => RecordedShape::Cylinder {
                half_height: c.half_height,
                radius: c.radius,
            },
            Shape::ConvexHull(h) => RecordedShape::ConvexHull {
                vertices: h.vertices().iter().map(|v| v.to_array()).collect(),
                faces: h.faces().iter().map(|f| f.vertices.clone()).collect(),
            },
            Shape::HalfSpace(h) => RecordedShape::HalfSpace {
                normal: h.normal.to_array(),
                offset: h.offset,
            },
            Shape::Compound(c) => RecordedShape::Compound {
                children: c
                    .children()
                    .iter()
                    .map(|child| RecordedChild {
                        shape: RecordedShape::from_shape(&child.shape),
                        position: child.pose.translation.to_array(),
                        rotation: child.pose.rotation.to_array(),
                    })
                    .collect(),
            },
            Shape::TriangleMesh(m) => RecordedShape::Mesh {
                vertices: m.vertices().iter().map(|v| v.to_array()).collect(),
                triangles: m.indices().to_vec(),
            },
            Shape::HeightField(h) => {
                let (nx, nz) = h.sample_counts();
                let vertices = (0..nz)
                    .flat_map(|j| (0..nx).map(move |i| h.point(i, j).to_array()))
                    .collect();
                // The same split as the field's own triangles (2 c and 2 c + 1 of cell c),
                // so the viewer shows the surface the bodies collide with.
                let mut triangles = Vec::new();
                for j in 0..nz.saturating_sub(1) {
                    for i in 0..nx.saturating_sub(1) {
                        if h.is_hole(i, j) {
                            continue;
                        }
                        let v = |di: u32, dj: u32| (j + dj) * nx + i + di;
                        triangles.push([v(0, 0), v(0, 1), v(1, 0)]);
                        triangles.push([v(1, 0), v(0, 1), v(1, 1)]);
                    }
                }
                RecordedShape::Mesh {
                    vertices,
                    triangles,
                }
            }
            _ => {
                let aabb = shape.local_aabb();
                RecordedShape::Bounds {
                    min: aabb.min.to_array(),
                    max: aabb.max.to_array(),
                }
            }
        }
    }
}

/// A body as recorded when it first appears.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedBody {
    /// Its id's slot index in the world.
    pub index: u32,
    /// Its id's generation.
    pub generation: u32,
    /// 0 static, 1 kinematic, 2 dynamic.
    pub motion: u8,
    /// Whether it is a sensor.
    pub is_sensor: bool,
    /// Its shape.
    pub shape: RecordedShape,
    /// Friction coefficient.
    pub friction: f32,
    /// Restitution.
    pub restitution: f32,
    /// Material id (the key of the world's pair table).
    pub material: u16,
    /// User data.
    pub user_data: u64,
}

/// One job or stage span of a step's trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSpan {
    /// Index into [`FrameTrace::labels`].
    pub label: u32,
    /// Thread lane (index into [`FrameTrace::threads`]).
    pub thread: u32,
    /// Start, ns since the step started.
    pub start_ns: u64,
    /// End, ns since the step started.
    pub end_ns: u64,
}

/// The job trace of one recorded step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameTrace {
    /// Thread names, one per lane.
    pub threads: Vec<String>,
    /// Stage (task) names, which spans refer to by index.
    pub labels: Vec<String>,
    /// One span per job that ran, in the trace's order.
    pub spans: Vec<TraceSpan>,
    /// Wall time of the step (ns).
    pub wall_ns: u64,
}

impl FrameTrace {
    /// The recorded form of a step's trace.
    #[must_use]
    pub fn from_trace(trace: &joule_graph::Trace) -> FrameTrace {
        FrameTrace {
            threads: (0..trace.lanes()).map(|i| trace.thread_name(i)).collect(),
            labels: trace.graph.tasks.iter().map(|t| t.name.clone()).collect(),
            spans: trace
                .spans
                .iter()
                .map(|s| TraceSpan {
                    label: s.task as u32,
                    thread: s.thread as u32,
                    start_ns: s.start_ns,
                    end_ns: s.end_ns,
                })
                .collect(),
            wall_ns: trace.wall_ns(),
        }
    }
}

/// One recorded step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// The world's step count after the step.
    pub step: u64,
    /// Bodies seen for the first time in this frame; their record indices follow the
    /// bodies recorded before, in order.
    pub new_bodies: Vec<RecordedBody>,
    /// [`POSE_FLOATS`] per recorded body, in record order (NaN once removed).
    pub poses: Vec<f32>,
    /// One state word per recorded body when [`RecordOptions::states`] (see
    /// [`STATE_SLEEPING`] and its siblings), else empty.
    pub states: Vec<u32>,
    /// [`CONTACT_FLOATS`] per touching contact point when [`RecordOptions::contacts`],
    /// in contact id order (deterministic).
    pub contacts: Vec<f32>,
    /// The step's trace, when one was recorded.
    pub trace: Option<FrameTrace>,
}

/// Why a recording could not be written or read.
#[derive(Debug)]
pub enum RecordingError {
    /// Writing failed; the error of the writer.
    Io(std::io::Error),
    /// Encoding or decoding a message failed (a corrupt or truncated header or frame).
    Format(postcard::Error),
    /// The data does not start with [`MAGIC`]: not a joule recording.
    NotARecording,
    /// Written by a newer format version; read it with a newer joule.
    UnsupportedVersion(u32),
}

impl std::fmt::Display for RecordingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "writing the recording failed: {e}"),
            Self::Format(e) => write!(f, "corrupt recording: {e}"),
            Self::NotARecording => write!(f, "not a joule recording (bad magic bytes)"),
            Self::UnsupportedVersion(v) => write!(
                f,
                "recording version {v} is newer than this build's {RECORDING_VERSION}"
            ),
        }
    }
}

impl std::error::Error for RecordingError {}

impl From<std::io::Error> for RecordingError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<postcard::Error> for RecordingError {
    fn from(e: postcard::Error) -> Self {
        Self::Format(e)
    }
}

/// Writes a recording frame by frame to `W` (a file, a buffer).
#[derive(Debug)]
pub struct Recorder<W: Write> {
    out: W,
    options: RecordOptions,
    /// Per world slot: (generation, record index) of the body last seen there.
    slots: Vec<Option<(u32, u32)>>,
    /// Record index -> (world slot, generation, revision) of the body.
    recorded: Vec<(u32, u32, u32)>,
    frame: Frame,
    buffer: Vec<u8>,
}

impl<W: Write> Recorder<W> {
    /// Starts a recording of `world` stepped with `dt`: writes the magic and the header.
    pub fn new(
        mut out: W,
        world: &World,
        dt: f32,
        options: RecordOptions,
    ) -> Result<Self, RecordingError> {
        let header = RecordingHeader {
            version: RECORDING_VERSION,
            dt,
            gravity: world.desc().gravity.to_array(),
            options,
        };
        out.write_all(&MAGIC)?;
        out.write_all(&postcard::to_stdvec(&header)?)?;
        Ok(Self {
            out,
            options,
            slots: Vec::new(),
            recorded: Vec::new(),
            frame: Frame::default(),
            buffer: Vec::new(),
        })
    }

    /// Records the world as it is now (call after each step), with the step's trace if
    /// `trace` is given and the options keep traces.
    pub fn record(
        &mut self,
        world: &World,
        trace: Option<&joule_graph::Trace>,
    ) -> Result<(), RecordingError> {
        let frame = &mut self.frame;
        frame.step = world.step_count;
        frame.new_bodies.clear();
        frame.poses.clear();
        frame.states.clear();
        frame.contacts.clear();
        frame.trace = None;
        let bodies = &world.bodies.bodies;
        if self.slots.len() < bodies.len() {
            self.slots.resize(bodies.len(), None);
        }
        // Bodies removed since the last frame (or replaced in their slot, or changed).
        for (slot, seen) in self.slots.iter_mut().enumerate() {
            if let Some((generation, record)) = *seen {
                let b = &bodies[slot];
                let revision = self.recorded[record as usize].2;
                if !b.alive || b.generation != generation || b.revision != revision {
                    *seen = None;
                }
            }
        }
        for (slot, b) in bodies.iter().enumerate() {
            if b.alive && self.slots[slot].is_none() {
                let record = self.recorded.len() as u32;
                self.slots[slot] = Some((b.generation, record));
                self.recorded.push((slot as u32, b.generation, b.revision));
                frame.new_bodies.push(RecordedBody {
                    index: slot as u32,
                    generation: b.generation,
                    motion: match b.motion_type {
                        MotionType::Fixed => 0,
                        MotionType::Kinematic => 1,
                        MotionType::Dynamic => 2,
                    },
                    is_sensor: b.is_sensor,
                    shape: RecordedShape::from_shape(&b.shape),
                    friction: b.friction,
                    restitution: b.restitution,
                    material: b.material.0,
                    user_data: b.user_data,
                });
            }
        }
        let islands = if self.options.states {
            world.island_roots()
        } else {
            Vec::new()
        };
        frame.poses.reserve(self.recorded.len() * POSE_FLOATS);
        for &(slot, generation, revision) in &self.recorded {
            let b = &bodies[slot as usize];
            let live = b.alive && b.generation == generation && b.revision == revision;
            if !live {
                frame.poses.extend_from_slice(&[f32::NAN; POSE_FLOATS]);
                if self.options.states {
                    frame.states.push(STATE_REMOVED);
                }
                continue;
            }
            let t = world.bodies.sim_of(slot).transform;
            let (p, q) = (t.translation, t.rotation);
            frame
                .poses
                .extend_from_slice(&[p.x, p.y, p.z, q.x, q.y, q.z, q.w]);
            if self.options.states {
                let state = if b.set == STATIC_SET {
                    STATE_STATIC
                } else if b.set >= FIRST_SLEEPING_SET {
                    STATE_SLEEPING | (b.set & STATE_ISLAND_MASK)
                } else {
                    let root = islands[slot as usize];
                    self.slots[root as usize].map_or(0, |(_, r)| r) & STATE_ISLAND_MASK
                };
                frame.states.push(state);
            }
        }
        if self.options.contacts {
            // Contact id order is deterministic (ids come from a LIFO free list in a serial
            // pass), so the contacts are walked in place: no copy, no sort.
            for c in &world.contacts.contacts {
                if !c.alive || c.flags.contains(ContactFlags::SENSOR) {
                    continue;
                }
                let (sa, sb) = (world.bodies.sim_of(c.body_a), world.bodies.sim_of(c.body_b));
                let n = c.manifold.normal;
                for (k, point) in c.manifold.points.iter().enumerate() {
                    let pa = sa.transform.transform_point(point.local_a);
                    let pb = sb.transform.transform_point(point.local_b);
                    let p = (pa + pb) * 0.5;
                    let impulse = c.impulses.get(k).map_or(0.0, |i| i.normal);
                    frame
                        .contacts
                        .extend_from_slice(&[p.x, p.y, p.z, n.x, n.y, n.z, impulse]);
                }
            }
        }
        if self.options.trace {
            frame.trace = trace.map(FrameTrace::from_trace);
        }
        self.buffer.clear();
        let buffer = std::mem::take(&mut self.buffer);
        let buffer = postcard::to_extend(&*frame, buffer)?;
        self.out.write_all(&buffer)?;
        self.buffer = buffer;
        Ok(())
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> Result<W, RecordingError> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A whole recording, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    /// The header.
    pub header: RecordingHeader,
    /// Every body recorded, in record order (the order of the pose arrays).
    pub bodies: Vec<RecordedBody>,
    /// The frames, in step order. Each frame's [`Frame::new_bodies`] is also appended to
    /// [`bodies`](Self::bodies).
    pub frames: Vec<Frame>,
}

impl Recording {
    /// Reads a recording. A file cut off inside a frame (a run that crashed) reads up to
    /// its last whole frame.
    pub fn read(mut bytes: &[u8]) -> Result<Recording, RecordingError> {
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            return Err(RecordingError::NotARecording);
        }
        bytes = &bytes[MAGIC.len()..];
        let (header, mut rest): (RecordingHeader, _) = postcard::take_from_bytes(bytes)?;
        if header.version > RECORDING_VERSION {
            return Err(RecordingError::UnsupportedVersion(header.version));
        }
        let mut bodies = Vec::new();
        let mut frames = Vec::new();
        while !rest.is_empty() {
            match postcard::take_from_bytes::<Frame>(rest) {
                Ok((frame, tail)) => {
                    bodies.extend(frame.new_bodies.iter().cloned());
                    frames.push(frame);
                    rest = tail;
                }
                Err(postcard::Error::DeserializeUnexpectedEnd) => break,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Recording {
            header,
            bodies,
            frames,
        })
    }
}
