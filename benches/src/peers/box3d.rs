//! Box3D (boxddd-sys 0.4, the C library built from its vendored sources) with its default
//! world settings and 4 substeps per step, as Box3D's samples run. With more than one
//! thread its task callbacks run on a joule `JobSystem` of `threads - 1` workers: each
//! enqueued task becomes one counted joule job, and finishing a task waits on its counter
//! (the waiting thread runs other jobs meanwhile, so the step's forks never deadlock).
//!
//! FFI is the one reason this crate holds `unsafe`: the peers are C and C++ libraries.

use std::ffi::{c_char, c_void};

use boxddd_sys::ffi as b3;
use joule_jobs::{Counter, JobSystem};

use joule_examples::scenes::{JointFrames, JointType, Motion, SceneDesc, ShapeDesc};
use joule_physics::math::{Quat, Vec3};

use super::Engine;

/// Box3D's substeps per step (its samples' default).
pub const SUBSTEPS: i32 = 4;

/// A Box3D world and the ids of the scene's dynamic bodies.
pub struct Box3dEngine {
    world: b3::b3WorldId,
    dynamic: Vec<b3::b3BodyId>,
    dt: f32,
    /// Heightfields and meshes the world's shapes point at (Box3D does not copy them),
    /// destroyed after the world.
    geometry: Vec<Geometry>,
    /// Borrowed by the task callbacks through `userTaskContext`; boxed so its address is
    /// stable, and dropped only after the world is destroyed.
    _jobs: Box<JobSystem>,
}

/// Geometry a Box3D shape points at, owned by the engine.
enum Geometry {
    HeightField(*mut b3::b3HeightFieldData),
    Mesh(*mut b3::b3MeshData),
}

/// A Box3D task and its context, moved into a joule job.
struct Task {
    run: unsafe extern "C" fn(*mut c_void),
    context: *mut c_void,
}

// SAFETY: Box3D hands each task to the scheduler to run on any worker thread (its
// `b3TaskCallback` contract) and keeps `context` alive until `finish_task` returns for it.
unsafe impl Send for Task {}

unsafe extern "C" fn enqueue_task(
    task: b3::b3TaskCallback,
    task_context: *mut c_void,
    user_context: *mut c_void,
    _name: *const c_char,
) -> *mut c_void {
    // SAFETY: `user_context` is the `Box<JobSystem>` this engine owns, alive for the world's
    // whole life (the world is destroyed first in `drop`).
    let jobs = unsafe { &*(user_context as *const JobSystem) };
    let Some(run) = task else {
        return std::ptr::null_mut();
    };
    let t = Task {
        run,
        context: task_context,
    };
    let counter = Box::new(Counter::new());
    jobs.spawn_counted(&counter, move || {
        let t = t;
        // SAFETY: Box3D's task callback with the context it gave us; it runs exactly once.
        unsafe { (t.run)(t.context) }
    });
    Box::into_raw(counter).cast()
}

unsafe extern "C" fn finish_task(user_task: *mut c_void, user_context: *mut c_void) {
    // SAFETY: as in `enqueue_task`.
    let jobs = unsafe { &*(user_context as *const JobSystem) };
    // SAFETY: `user_task` is the `Box<Counter>` `enqueue_task` leaked, and Box3D finishes each
    // task exactly once.
    let counter = unsafe { Box::from_raw(user_task.cast::<Counter>()) };
    jobs.wait(&counter);
}

fn v3(a: Vec3) -> b3::b3Vec3 {
    b3::b3Vec3 {
        x: a.x,
        y: a.y,
        z: a.z,
    }
}

fn quat(q: Quat) -> b3::b3Quat {
    b3::b3Quat {
        v: v3(q.xyz()),
        s: q.w,
    }
}

/// Attaches `shape`, placed at `position` and `rotation` in the body's frame, to `body`; a
/// compound becomes one shape per child (Box3D's runtime compound, whose mass is the sum
/// of its shapes').
///
/// Heightfields and meshes must be the body's whole shape, at its origin (Box3D places them
/// in the body's frame only); their data goes to `geometry`. Box3D's heightfield starts at
/// its first sample where joule's is centred: the caller moves the body by
/// [`height_field_corner`].
fn attach(
    body: b3::b3BodyId,
    sd: &b3::b3ShapeDef,
    shape: &ShapeDesc,
    position: Vec3,
    rotation: Quat,
    geometry: &mut Vec<Geometry>,
) -> Result<(), String> {
    match shape {
        ShapeDesc::Sphere { radius } => {
            let s = b3::b3Sphere {
                center: v3(position),
                radius: *radius,
            };
            // SAFETY: live body; the sphere is copied by the call.
            unsafe { b3::b3CreateSphereShape(body, sd, &s) };
        }
        ShapeDesc::Cuboid { half } => {
            let transform = b3::b3Transform {
                p: v3(position),
                q: quat(rotation),
            };
            // SAFETY: returns the box hull by value.
            let hull = unsafe { b3::b3MakeTransformedBoxHull(half.x, half.y, half.z, transform) };
            // SAFETY: `hull.base` is the head of the box hull whose offsets index the
            // arrays after it in the same struct, alive for the call, which clones it.
            unsafe { b3::b3CreateHullShape(body, sd, &hull.base) };
        }
        ShapeDesc::Capsule {
            half_height,
            radius,
        } => {
            let axis = rotation * Vec3::new(0.0, *half_height, 0.0);
            let c = b3::b3Capsule {
                center1: v3(position - axis),
                center2: v3(position + axis),
                radius: *radius,
            };
            // SAFETY: live body; the capsule is copied by the call.
            unsafe { b3::b3CreateCapsuleShape(body, sd, &c) };
        }
        ShapeDesc::Compound(parts) => {
            for part in parts {
                let at = position + rotation * part.position;
                attach(
                    body,
                    sd,
                    &part.shape,
                    at,
                    rotation * part.rotation,
                    geometry,
                )?;
            }
        }
        ShapeDesc::HeightField {
            nx,
            nz,
            cell,
            heights,
        } => {
            if position != Vec3::ZERO || rotation != Quat::IDENTITY {
                return Err("this adapter builds heightfields only as a body's whole shape".into());
            }
            let lo = heights.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = heights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut heights = heights.clone();
            let def = b3::b3HeightFieldDef {
                heights: heights.as_mut_ptr(),
                materialIndices: std::ptr::null_mut(),
                scale: b3::b3Vec3 {
                    x: *cell,
                    y: 1.0,
                    z: *cell,
                },
                countX: *nx as i32,
                countZ: *nz as i32,
                globalMinimumHeight: lo,
                globalMaximumHeight: hi,
                clockwiseWinding: false,
            };
            // SAFETY: `def` points at `nx * nz` heights alive for the call, which copies
            // them (quantised) into the blob it returns.
            let hf = unsafe { b3::b3CreateHeightField(&def) };
            geometry.push(Geometry::HeightField(hf));
            // SAFETY: live body; `hf` outlives the world (`Box3dEngine::drop`).
            unsafe { b3::b3CreateHeightFieldShape(body, sd, hf) };
        }
        ShapeDesc::TriangleMesh {
            vertices,
            triangles,
        } => {
            if position != Vec3::ZERO || rotation != Quat::IDENTITY {
                return Err("this adapter builds meshes only as a body's whole shape".into());
            }
            let mut verts: Vec<b3::b3Vec3> = vertices.iter().map(|&v| v3(v)).collect();
            let mut indices: Vec<i32> = triangles.iter().flatten().map(|&i| i as i32).collect();
            let def = b3::b3MeshDef {
                vertices: verts.as_mut_ptr(),
                indices: indices.as_mut_ptr(),
                materialIndices: std::ptr::null_mut(),
                weldTolerance: 0.0,
                vertexCount: verts.len() as i32,
                triangleCount: triangles.len() as i32,
                weldVertices: false,
                useMedianSplit: false,
                identifyEdges: true,
            };
            // SAFETY: `def` points at its vertices and indices, alive for the call, which
            // copies them; no degenerate-triangle list is asked for.
            let mesh = unsafe { b3::b3CreateMesh(&def, std::ptr::null_mut(), 0) };
            if mesh.is_null() {
                return Err("Box3D rejected a triangle mesh".into());
            }
            geometry.push(Geometry::Mesh(mesh));
            let one = b3::b3Vec3 {
                x: 1.0,
                y: 1.0,
                z: 1.0,
            };
            // SAFETY: live body; `mesh` outlives the world (`Box3dEngine::drop`).
            unsafe { b3::b3CreateMeshShape(body, sd, mesh, one) };
        }
    }
    Ok(())
}

/// Where Box3D's heightfield of `shape` starts in joule's frame of it (zero for any other
/// shape): joule centres a heightfield on its origin.
fn height_field_corner(shape: Option<&ShapeDesc>) -> Vec3 {
    match shape {
        Some(ShapeDesc::HeightField { nx, nz, cell, .. }) => Vec3::new(
            -0.5 * (*nx - 1) as f32 * cell,
            0.0,
            -0.5 * (*nz - 1) as f32 * cell,
        ),
        _ => Vec3::ZERO,
    }
}

impl Box3dEngine {
    /// Builds `desc` with `threads` threads in total.
    pub fn new(desc: &SceneDesc, threads: usize) -> Result<Self, String> {
        let jobs = Box::new(JobSystem::new(threads.saturating_sub(1)).map_err(|e| e.to_string())?);
        // SAFETY: plain constructors of C structs by value.
        let mut wd = unsafe { b3::b3DefaultWorldDef() };
        wd.gravity = v3(desc.gravity);
        wd.workerCount = threads.max(1) as u32;
        if threads > 1 {
            wd.enqueueTask = Some(enqueue_task);
            wd.finishTask = Some(finish_task);
            wd.userTaskContext = (&raw const *jobs).cast_mut().cast();
        }
        // SAFETY: `wd` came from `b3DefaultWorldDef` and its task context outlives the world.
        let world = unsafe { b3::b3CreateWorld(&wd) };
        // Owns the world from here, so an early return destroys it.
        let mut engine = Self {
            world,
            dynamic: Vec::new(),
            dt: desc.dt,
            geometry: Vec::new(),
            _jobs: jobs,
        };
        let mut all = Vec::new();
        for (i, spec) in desc.bodies.iter().enumerate() {
            // SAFETY: plain constructors of C structs by value.
            let (mut bd, mut sd) = unsafe { (b3::b3DefaultBodyDef(), b3::b3DefaultShapeDef()) };
            bd.type_ = match spec.motion {
                Motion::Dynamic => b3::b3BodyType_b3_dynamicBody,
                Motion::Fixed => b3::b3BodyType_b3_staticBody,
            };
            bd.position = v3(spec.position + spec.rotation * height_field_corner(desc.shape_of(i)));
            bd.rotation = quat(spec.rotation);
            bd.linearVelocity = v3(spec.linear_velocity);
            bd.angularVelocity = v3(spec.angular_velocity);
            bd.enableSleep = spec.can_sleep;
            sd.density = spec.density;
            sd.baseMaterial.friction = spec.friction;
            sd.baseMaterial.restitution = spec.restitution;
            // SAFETY: `world` is live and `bd` a default-initialised body definition.
            let body = unsafe { b3::b3CreateBody(world, &bd) };
            if let Some(shape) = desc.shape_of(i) {
                attach(
                    body,
                    &sd,
                    shape,
                    Vec3::ZERO,
                    Quat::IDENTITY,
                    &mut engine.geometry,
                )?;
            }
            if spec.is_dynamic() {
                engine.dynamic.push(body);
            }
            all.push(body);
        }
        for j in &desc.joints {
            let (JointType::Ball, JointFrames::Local { a, b }) = (j.kind, j.frames) else {
                return Err("this adapter builds ball joints only".into());
            };
            // SAFETY: plain constructor of a C struct by value.
            let mut jd = unsafe { b3::b3DefaultSphericalJointDef() };
            jd.base.bodyIdA = all[j.a];
            jd.base.bodyIdB = all[j.b];
            jd.base.localFrameA.p = v3(a);
            jd.base.localFrameB.p = v3(b);
            // SAFETY: `world` is live, both bodies are its, and `jd` is a default-initialised
            // spherical joint definition (identity frame rotations, no limits, no spring).
            unsafe { b3::b3CreateSphericalJoint(world, &jd) };
        }
        Ok(engine)
    }
}

impl Box3dEngine {
    /// Sets Box3D's contact recycle distance (its default is 5 cm; 0 recomputes every
    /// manifold every step, as joule does): `wall_probe` compares the two.
    pub fn set_contact_recycle_distance(&mut self, distance: f32) {
        // SAFETY: the world is live.
        unsafe { b3::b3World_SetContactRecycleDistance(self.world, distance) };
    }

    /// The touching manifolds of dynamic body `k` (creation order among the dynamic
    /// bodies), one line per point: world point (body's centre plus anchor), separation,
    /// normal impulse; each manifold's normal and central friction first. For comparing
    /// manifolds with joule's (`wall_probe box3dpts`).
    #[must_use]
    pub fn contact_dump(&self, k: usize) -> String {
        use std::fmt::Write as _;
        let body = self.dynamic[k];
        let mut out = String::new();
        // SAFETY: `body` is a live body of the live world; the buffer holds `capacity`
        // entries and Box3D writes at most that many.
        unsafe {
            let capacity = b3::b3Body_GetContactCapacity(body);
            let mut data = Vec::with_capacity(capacity.max(0) as usize);
            let n = b3::b3Body_GetContactData(body, data.as_mut_ptr(), capacity);
            data.set_len(n.max(0) as usize);
            let c = b3::b3Body_GetWorldCenter(body);
            let _ = writeln!(out, "body centre ({:.5}, {:.5}, {:.5})", c.x, c.y, c.z);
            for d in &data {
                let a = b3::b3Shape_GetBody(d.shapeIdA);
                let ca = b3::b3Body_GetWorldCenter(a);
                for m in 0..d.manifoldCount.max(0) as usize {
                    let mf = &*d.manifolds.add(m);
                    let _ = writeln!(
                        out,
                        "normal ({:.6}, {:.6}, {:.6}) friction ({:.3}, {:.3}, {:.3}) twist {:.3}",
                        mf.normal.x,
                        mf.normal.y,
                        mf.normal.z,
                        mf.frictionImpulse.x,
                        mf.frictionImpulse.y,
                        mf.frictionImpulse.z,
                        mf.twistImpulse
                    );
                    for p in &mf.points[..mf.pointCount.max(0) as usize] {
                        let _ = writeln!(
                            out,
                            "  at ({:.5}, {:.5}, {:.5}) sep {:.5} n {:.3}",
                            ca.x + p.anchorA.x,
                            ca.y + p.anchorA.y,
                            ca.z + p.anchorA.z,
                            p.separation,
                            p.normalImpulse
                        );
                    }
                }
            }
        }
        out
    }
}

impl Engine for Box3dEngine {
    fn step(&mut self) {
        // SAFETY: the world is live; the task callbacks' job system outlives it.
        unsafe { b3::b3World_Step(self.world, self.dt, SUBSTEPS) };
    }

    fn dynamic_positions(&self) -> Vec<[f32; 3]> {
        self.dynamic
            .iter()
            .map(|&b| {
                // SAFETY: every id is a live body of the live world.
                let p = unsafe { b3::b3Body_GetPosition(b) };
                [p.x, p.y, p.z]
            })
            .collect()
    }

    fn asleep(&self) -> usize {
        self.dynamic
            .iter()
            // SAFETY: every id is a live body of the live world.
            .filter(|&&b| !unsafe { b3::b3Body_IsAwake(b) })
            .count()
    }
}

impl Drop for Box3dEngine {
    fn drop(&mut self) {
        // SAFETY: destroys the world once; `_jobs` drops after this, once no task can run.
        unsafe { b3::b3DestroyWorld(self.world) };
        for g in self.geometry.drain(..) {
            // SAFETY: each was created once by Box3D and no shape points at it any more.
            unsafe {
                match g {
                    Geometry::HeightField(h) => b3::b3DestroyHeightField(h),
                    Geometry::Mesh(m) => b3::b3DestroyMesh(m),
                }
            }
        }
    }
}
