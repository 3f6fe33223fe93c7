//! PhysX 5 (physx-sys 0.11, the SDK built from its vendored C++ sources with clang++) with
//! its default scene and body settings (the PGS solver, 4 position and 1 velocity
//! iterations per body, its default sleep threshold; angular damping set to 0, as
//! SCENES.md's bodies are undamped), one `simulate` per 1/60 s step. Its default CPU
//! dispatcher runs the tasks: `threads` worker threads when more than one is asked (the
//! calling thread only waits in `fetchResults`), none for one thread (tasks then run on
//! the calling thread).
//!
//! FFI is the one reason this crate holds `unsafe`: the peers are C and C++ libraries.

use std::ptr::null_mut;

use physx_sys::*;

use joule_examples::scenes::{JointFrames, JointType, SceneDesc, ShapeDesc};
use joule_physics::math::{Quat, Vec3};

use super::Engine;

/// A PhysX scene and the scene's dynamic actors.
pub struct PhysxEngine {
    foundation: *mut PxFoundation,
    physics: *mut PxPhysics,
    dispatcher: *mut PxDefaultCpuDispatcher,
    scene: *mut PxScene,
    dynamic: Vec<*mut PxRigidDynamic>,
    dt: f32,
}

fn v3(a: Vec3) -> PxVec3 {
    PxVec3 {
        x: a.x,
        y: a.y,
        z: a.z,
    }
}

impl PhysxEngine {
    /// Builds `desc` with `threads` threads in total.
    pub fn new(desc: &SceneDesc, threads: usize) -> Result<Self, String> {
        let first = desc.bodies.first().cloned().unwrap_or_default();
        if desc
            .bodies
            .iter()
            .any(|b| b.friction != first.friction || b.restitution != first.restitution)
        {
            return Err("this adapter gives every body one material".into());
        }
        if desc.bodies.iter().any(|b| b.rotation != Quat::IDENTITY) {
            return Err("this adapter builds unrotated bodies only".into());
        }
        let workers = if threads > 1 { threads as u32 } else { 0 };
        // SAFETY: the SDK's constructors, called once each in this order (one foundation
        // per process: the compare runner times each engine in a child process); every
        // pointer is checked before use.
        unsafe {
            let foundation = physx_create_foundation();
            if foundation.is_null() {
                return Err("PxCreateFoundation failed".into());
            }
            let physics = physx_create_physics(foundation);
            if physics.is_null() {
                return Err("PxCreatePhysics failed".into());
            }
            if !desc.joints.is_empty() && !phys_PxInitExtensions(physics, null_mut()) {
                return Err("PxInitExtensions failed".into());
            }
            let mut sd = PxSceneDesc_new(PxPhysics_getTolerancesScale(physics));
            sd.gravity = v3(desc.gravity);
            let dispatcher = phys_PxDefaultCpuDispatcherCreate(
                workers,
                null_mut(),
                PxDefaultCpuDispatcherWaitForWorkMode::WaitForWork,
                0,
            );
            sd.cpuDispatcher = dispatcher.cast();
            sd.filterShader = get_default_simulation_filter_shader();
            let scene = PxPhysics_createScene_mut(physics, &sd);
            if scene.is_null() {
                return Err("PxPhysics::createScene failed".into());
            }
            let material = PxPhysics_createMaterial_mut(
                physics,
                first.friction,
                first.friction,
                first.restitution,
            );
            let identity = PxTransform_new_2(PxIDENTITY::PxIdentity);
            let mut dynamic = Vec::new();
            let mut all: Vec<*mut PxRigidActor> = Vec::new();
            for (i, spec) in desc.bodies.iter().enumerate() {
                let pose = PxTransform_new_1(&v3(spec.position));
                let shape = desc.shape_of(i);
                if shape.is_none() && !spec.is_dynamic() {
                    // A fixed anchor (chain_joints): a static actor without shapes.
                    let anchor = PxPhysics_createRigidStatic_mut(physics, &pose);
                    if anchor.is_null() {
                        return Err("PxPhysics::createRigidStatic failed".into());
                    }
                    PxScene_addActor_mut(scene, anchor.cast(), null_mut());
                    all.push(anchor.cast());
                    continue;
                }
                let sphere;
                let cuboid;
                let geometry: *const PxGeometry = match shape {
                    Some(ShapeDesc::Sphere { radius }) => {
                        sphere = PxSphereGeometry_new(*radius);
                        (&raw const sphere).cast()
                    }
                    Some(ShapeDesc::Cuboid { half }) => {
                        cuboid = PxBoxGeometry_new(half.x, half.y, half.z);
                        (&raw const cuboid).cast()
                    }
                    Some(_) => return Err("this adapter builds spheres and boxes only".into()),
                    None => {
                        return Err("a dynamic body without a shape has no mass in PhysX".into());
                    }
                };
                let actor: *mut PxRigidActor = if spec.is_dynamic() {
                    let body = phys_PxCreateDynamic(
                        physics,
                        &pose,
                        geometry,
                        material,
                        spec.density,
                        &identity,
                    );
                    if body.is_null() {
                        return Err("PxCreateDynamic failed".into());
                    }
                    PxRigidBody_setAngularDamping_mut(body.cast(), 0.0);
                    PxRigidDynamic_setLinearVelocity_mut(body, &v3(spec.linear_velocity), true);
                    PxRigidDynamic_setAngularVelocity_mut(body, &v3(spec.angular_velocity), true);
                    if !spec.can_sleep {
                        PxRigidDynamic_setSleepThreshold_mut(body, 0.0);
                    }
                    dynamic.push(body);
                    body.cast()
                } else {
                    let body = phys_PxCreateStatic(physics, &pose, geometry, material, &identity);
                    if body.is_null() {
                        return Err("PxCreateStatic failed".into());
                    }
                    body.cast()
                };
                PxScene_addActor_mut(scene, actor.cast(), null_mut());
                all.push(actor);
            }
            for j in &desc.joints {
                let (JointType::Ball, JointFrames::Local { a, b }) = (j.kind, j.frames) else {
                    return Err("this adapter builds ball joints only".into());
                };
                let frame_a = PxTransform_new_1(&v3(a));
                let frame_b = PxTransform_new_1(&v3(b));
                let joint =
                    phys_PxSphericalJointCreate(physics, all[j.a], &frame_a, all[j.b], &frame_b);
                if joint.is_null() {
                    return Err("PxSphericalJointCreate failed".into());
                }
            }
            Ok(Self {
                foundation,
                physics,
                dispatcher,
                scene,
                dynamic,
                dt: desc.dt,
            })
        }
    }
}

impl Engine for PhysxEngine {
    fn step(&mut self) {
        // SAFETY: the scene is live; `simulate` and `fetchResults(block = true)` pair up,
        // so no simulation runs outside this call.
        unsafe {
            PxScene_simulate_mut(self.scene, self.dt, null_mut(), null_mut(), 0, true);
            let mut error = 0u32;
            PxScene_fetchResults_mut(self.scene, true, &mut error);
        }
    }

    fn dynamic_positions(&self) -> Vec<[f32; 3]> {
        self.dynamic
            .iter()
            .map(|&b| {
                // SAFETY: every actor is a live member of the live scene, read between steps.
                let pose = unsafe { PxRigidActor_getGlobalPose(b.cast()) };
                [pose.p.x, pose.p.y, pose.p.z]
            })
            .collect()
    }

    fn asleep(&self) -> usize {
        self.dynamic
            .iter()
            // SAFETY: as in `dynamic_positions`.
            .filter(|&&b| unsafe { PxRigidDynamic_isSleeping(b) })
            .count()
    }
}

impl Drop for PhysxEngine {
    fn drop(&mut self) {
        // SAFETY: releases each SDK object once, scene before its dispatcher, physics
        // before its foundation; the actors go with the scene.
        unsafe {
            PxScene_release_mut(self.scene);
            PxDefaultCpuDispatcher_release_mut(self.dispatcher);
            PxPhysics_release_mut(self.physics);
            PxFoundation_release_mut(self.foundation);
        }
    }
}
