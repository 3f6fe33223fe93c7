//! Jolt Physics 5.0 (joltc-sys 0.3.1, the C++ library built from its vendored sources) with
//! its default solver settings (10 velocity and 2 position iterations, its default convex
//! radius of 0.05 m on boxes; damping off, as SCENES.md's bodies are undamped), one collision step per 1/60 s update, and its own
//! `JobSystemThreadPool` of `threads - 1` workers (the updating thread helps while it waits).
//! Two object layers as in Jolt's HelloWorld: non-moving and moving.
//!
//! FFI is the one reason this crate holds `unsafe`: the peers are C and C++ libraries.

use std::ffi::{c_uint, c_void};
use std::ptr;
use std::sync::Once;

use joltc_sys::*;

use joule_examples::scenes::{SceneDesc, ShapeDesc};
use joule_physics::math::{Quat, Vec3};

use super::Engine;

// joltc-sys 0.3.1 links its static Jolt library but not the C++ runtime that library needs.
#[link(name = "stdc++")]
unsafe extern "C" {}

const OL_NON_MOVING: JPC_ObjectLayer = 0;
const OL_MOVING: JPC_ObjectLayer = 1;
const BPL_NON_MOVING: JPC_BroadPhaseLayer = 0;
const BPL_MOVING: JPC_BroadPhaseLayer = 1;

unsafe extern "C" fn bpl_count(_this: *const c_void) -> c_uint {
    2
}

unsafe extern "C" fn bpl_of(_this: *const c_void, layer: JPC_ObjectLayer) -> JPC_BroadPhaseLayer {
    if layer == OL_NON_MOVING {
        BPL_NON_MOVING
    } else {
        BPL_MOVING
    }
}

unsafe extern "C" fn object_vs_bpl(
    _this: *const c_void,
    layer: JPC_ObjectLayer,
    bpl: JPC_BroadPhaseLayer,
) -> bool {
    layer == OL_MOVING || bpl == BPL_MOVING
}

unsafe extern "C" fn object_vs_object(
    _this: *const c_void,
    a: JPC_ObjectLayer,
    b: JPC_ObjectLayer,
) -> bool {
    a == OL_MOVING || b == OL_MOVING
}

const BPL: JPC_BroadPhaseLayerInterfaceFns = JPC_BroadPhaseLayerInterfaceFns {
    GetNumBroadPhaseLayers: Some(bpl_count),
    GetBroadPhaseLayer: Some(bpl_of),
};
const OVB: JPC_ObjectVsBroadPhaseLayerFilterFns = JPC_ObjectVsBroadPhaseLayerFilterFns {
    ShouldCollide: Some(object_vs_bpl),
};
const OVO: JPC_ObjectLayerPairFilterFns = JPC_ObjectLayerPairFilterFns {
    ShouldCollide: Some(object_vs_object),
};

fn v3(a: Vec3) -> JPC_Vec3 {
    JPC_Vec3 {
        x: a.x,
        y: a.y,
        z: a.z,
        _w: a.z,
    }
}

fn rv3(a: Vec3) -> JPC_RVec3 {
    JPC_RVec3 {
        x: a.x,
        y: a.y,
        z: a.z,
        _w: a.z,
    }
}

/// A Jolt physics system and everything it borrows.
pub struct JoltEngine {
    system: *mut JPC_PhysicsSystem,
    temp: *mut JPC_TempAllocatorImpl,
    jobs: *mut JPC_JobSystemThreadPool,
    bpl: *mut JPC_BroadPhaseLayerInterface,
    ovb: *mut JPC_ObjectVsBroadPhaseLayerFilter,
    ovo: *mut JPC_ObjectLayerPairFilter,
    dynamic: Vec<JPC_BodyID>,
    dt: f32,
}

fn shape(s: Option<&ShapeDesc>, density: f32) -> Result<*mut JPC_Shape, String> {
    let Some(s) = s else {
        return Err("a body without a shape (joltc-sys makes bodies from shapes)".into());
    };
    if let ShapeDesc::HeightField { .. } | ShapeDesc::TriangleMesh { .. } | ShapeDesc::Compound(_) =
        s
    {
        return Err("this adapter builds spheres, boxes and capsules only".into());
    }
    let mut out: *mut JPC_Shape = ptr::null_mut();
    let mut err: *mut JPC_String = ptr::null_mut();
    // SAFETY: the settings are default-initialised by joltc-sys and outlive the call; Jolt
    // writes the shape or the error string through the two out pointers.
    let ok = unsafe {
        match s {
            ShapeDesc::Sphere { radius } => JPC_SphereShapeSettings_Create(
                &JPC_SphereShapeSettings {
                    Radius: *radius,
                    Density: density,
                    ..Default::default()
                },
                &mut out,
                &mut err,
            ),
            ShapeDesc::Cuboid { half } => JPC_BoxShapeSettings_Create(
                &JPC_BoxShapeSettings {
                    HalfExtent: v3(*half),
                    Density: density,
                    ..Default::default()
                },
                &mut out,
                &mut err,
            ),
            ShapeDesc::Capsule {
                half_height,
                radius,
            } => JPC_CapsuleShapeSettings_Create(
                &JPC_CapsuleShapeSettings {
                    Radius: *radius,
                    HalfHeightOfCylinder: *half_height,
                    Density: density,
                    ..Default::default()
                },
                &mut out,
                &mut err,
            ),
            _ => unreachable!("returned above"),
        }
    };
    if ok {
        Ok(out)
    } else {
        Err("Jolt refused a shape".into())
    }
}

impl JoltEngine {
    /// Builds `desc` with `threads` threads in total.
    pub fn new(desc: &SceneDesc, threads: usize) -> Result<Self, String> {
        if !desc.joints.is_empty() {
            return Err("joltc-sys 0.3.1 binds no constraints (its header comments \
                 JPC_BodyInterface_CreateConstraint out)"
                .into());
        }
        static INIT: Once = Once::new();
        // SAFETY: Jolt's one-time global registration, done once per process.
        INIT.call_once(|| unsafe {
            JPC_RegisterDefaultAllocator();
            JPC_FactoryInit();
            JPC_RegisterTypes();
        });
        // JoltC 0.3 cannot set the system's gravity, which stays Jolt's (0, -9.81, 0); every
        // standard scene's gravity points down, so each body's gravity factor scales it.
        if desc.gravity.x != 0.0 || desc.gravity.z != 0.0 {
            return Err("JoltC can only scale Jolt's downward gravity".into());
        }
        if desc.bodies.iter().any(|b| b.rotation != Quat::IDENTITY) {
            return Err("this adapter builds unrotated bodies only".into());
        }
        let gravity_factor = desc.gravity.y / -9.81;
        let n = desc.bodies.len() as u32 + 16;
        // SAFETY: constructors of Jolt objects; each is deleted once in `drop`, the system
        // first. The filter tables are `'static` constants.
        let mut engine = unsafe {
            let e = Self {
                system: JPC_PhysicsSystem_new(),
                temp: JPC_TempAllocatorImpl_new(256 * 1024 * 1024),
                jobs: JPC_JobSystemThreadPool_new3(
                    JPC_MAX_PHYSICS_JOBS as _,
                    JPC_MAX_PHYSICS_BARRIERS as _,
                    threads.saturating_sub(1) as i32,
                ),
                bpl: JPC_BroadPhaseLayerInterface_new(ptr::null(), BPL),
                ovb: JPC_ObjectVsBroadPhaseLayerFilter_new(ptr::null_mut(), OVB),
                ovo: JPC_ObjectLayerPairFilter_new(ptr::null_mut(), OVO),
                dynamic: Vec::new(),
                dt: desc.dt,
            };
            JPC_PhysicsSystem_Init(e.system, n, 0, 8 * n, 8 * n, e.bpl, e.ovb, e.ovo);
            e
        };
        // SAFETY: the system is initialised; the body interface lives as long as it.
        let bodies = unsafe { JPC_PhysicsSystem_GetBodyInterface(engine.system) };
        for (i, spec) in desc.bodies.iter().enumerate() {
            let settings = JPC_BodyCreationSettings {
                Position: rv3(spec.position),
                LinearVelocity: v3(spec.linear_velocity),
                AngularVelocity: v3(spec.angular_velocity),
                MotionType: if spec.is_dynamic() {
                    JPC_MOTION_TYPE_DYNAMIC
                } else {
                    JPC_MOTION_TYPE_STATIC
                },
                ObjectLayer: if spec.is_dynamic() {
                    OL_MOVING
                } else {
                    OL_NON_MOVING
                },
                AllowSleeping: spec.can_sleep,
                GravityFactor: gravity_factor,
                // SCENES.md's bodies are undamped (Jolt's default is 0.05 on both), so
                // free10k's spheres keep x0 + v t as in every other engine.
                LinearDamping: 0.0,
                AngularDamping: 0.0,
                Friction: spec.friction,
                Restitution: spec.restitution,
                Shape: shape(desc.shape_of(i), spec.density)?,
                ..Default::default()
            };
            let activation = if spec.is_dynamic() {
                JPC_ACTIVATION_ACTIVATE
            } else {
                JPC_ACTIVATION_DONT_ACTIVATE
            };
            // SAFETY: live body interface; settings hold a live shape Jolt takes a reference to.
            let id = unsafe { JPC_BodyInterface_CreateAndAddBody(bodies, &settings, activation) };
            if spec.is_dynamic() {
                engine.dynamic.push(id);
            }
        }
        // SAFETY: the system is initialised and holds every body.
        unsafe { JPC_PhysicsSystem_OptimizeBroadPhase(engine.system) };
        Ok(engine)
    }
}

impl Engine for JoltEngine {
    fn step(&mut self) {
        // SAFETY: every pointer is a live object this engine owns.
        unsafe {
            JPC_PhysicsSystem_Update(self.system, self.dt, 1, self.temp, self.jobs);
        }
    }

    fn dynamic_positions(&self) -> Vec<[f32; 3]> {
        // SAFETY: live system; every id is a body of it.
        let bodies = unsafe { JPC_PhysicsSystem_GetBodyInterface(self.system) };
        self.dynamic
            .iter()
            .map(|&id| {
                // SAFETY: as above.
                let p = unsafe { JPC_BodyInterface_GetPosition(bodies, id) };
                [p.x as f32, p.y as f32, p.z as f32]
            })
            .collect()
    }

    fn asleep(&self) -> usize {
        // SAFETY: live system; every id is a body of it.
        let bodies = unsafe { JPC_PhysicsSystem_GetBodyInterface(self.system) };
        self.dynamic
            .iter()
            // SAFETY: as above.
            .filter(|&&id| !unsafe { JPC_BodyInterface_IsActive(bodies, id) })
            .count()
    }
}

impl Drop for JoltEngine {
    fn drop(&mut self) {
        // SAFETY: each object deleted once, the system (which references the others) first.
        unsafe {
            JPC_PhysicsSystem_delete(self.system);
            JPC_BroadPhaseLayerInterface_delete(self.bpl);
            JPC_ObjectVsBroadPhaseLayerFilter_delete(self.ovb);
            JPC_ObjectLayerPairFilter_delete(self.ovo);
            JPC_JobSystemThreadPool_delete(self.jobs);
            JPC_TempAllocatorImpl_delete(self.temp);
        }
    }
}
