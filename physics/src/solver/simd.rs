//! Runtime choice of the widest vector unit for the bundled contact solver's passes.
//!
//! The bundles' wide math (`wide.rs`) is plain loops over `[f32; 8]` that LLVM turns into
//! vector instructions of whatever the build targets: two 4-wide SSE operations per wide
//! operation on a baseline x86-64 build, one 8-wide AVX operation where AVX2 is enabled.
//! Most builds target the baseline, so the passes over a block of bundles are compiled a
//! second time with AVX2 enabled, and picked at run time when the CPU has it. Each lane
//! does the same IEEE operations in the same order either way (Rust never fuses a multiply
//! and an add on its own), so results are bit for bit the same on every machine, which
//! the determinism tests check on whichever path the machine takes.
//!
//! What the AVX2 copy covers is what its body inlines: the bundle passes and their
//! `#[inline(always)]` helpers. The gathers and scatters stay out of line (see
//! `ContactBundle::gather_velocities`), compiled once for the baseline.
#![allow(
    unsafe_code,
    reason = "calls of AVX2-compiled loops, after checking the CPU"
)]

use std::sync::atomic::{AtomicBool, Ordering};

use joule_jobs::DisjointChunk;

use super::SolverBody;
use super::angular_bundle::AngularBundle;
use super::ball_bundle::BallBundle;
use super::contact_bundle::{ContactBundle, SolveParams, StartVelocities};
use super::joint::{JointParams, Pass};

/// One pass of a block's bundled joints: ball joints, then swing-twist and hinge ones.
pub(crate) fn joint_bundles(
    balls: &mut [BallBundle],
    angular: &mut [AngularBundle],
    chunk: &mut DisjointChunk<'_, SolverBody>,
    pass: Pass,
    k: &JointParams,
) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `joint_bundles_avx2` needs only a CPU with AVX2, checked just above.
        unsafe { joint_bundles_avx2(balls, angular, chunk, pass, k) };
        return;
    }
    run_joint_bundles(balls, angular, chunk, pass, k);
}

#[inline(always)]
fn run_joint_bundles(
    balls: &mut [BallBundle],
    angular: &mut [AngularBundle],
    chunk: &mut DisjointChunk<'_, SolverBody>,
    pass: Pass,
    k: &JointParams,
) {
    for bundle in balls {
        bundle.run(chunk, pass, k);
    }
    for bundle in angular {
        bundle.run(chunk, pass, k);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn joint_bundles_avx2(
    balls: &mut [BallBundle],
    angular: &mut [AngularBundle],
    chunk: &mut DisjointChunk<'_, SolverBody>,
    pass: Pass,
    k: &JointParams,
) {
    run_joint_bundles(balls, angular, chunk, pass, k);
}

/// Whether the AVX2 copies may run (see [`use_avx2`](super::use_avx2)).
static AVX2_ALLOWED: AtomicBool = AtomicBool::new(true);

/// Lets the AVX2 copies run where the CPU has them, or not.
pub(crate) fn allow_avx2(allowed: bool) {
    // Relaxed: a switch between two paths that compute the same bits; a pass that still
    // sees the old value is as right as one that sees the new.
    AVX2_ALLOWED.store(allowed, Ordering::Relaxed);
}

/// Whether to take the AVX2 copies: allowed, and the CPU has AVX2 (detected once by the
/// standard library, then a cached load).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn avx2() -> bool {
    AVX2_ALLOWED.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2")
}

/// Prepares a filled bundle (see [`ContactBundle::prepare`]).
pub(crate) fn prepare(bundle: &mut ContactBundle, start: &StartVelocities) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `prepare_avx2` needs only a CPU with AVX2, checked just above.
        unsafe { prepare_avx2(bundle, start) };
        return;
    }
    bundle.prepare(start);
}

/// Warm-starts every bundle of a block.
pub(crate) fn warm_start(block: &mut [ContactBundle], chunk: &mut DisjointChunk<'_, SolverBody>) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `warm_start_avx2` needs only a CPU with AVX2, checked just above.
        unsafe { warm_start_avx2(block, chunk) };
        return;
    }
    for bundle in block {
        bundle.warm_start(chunk);
    }
}

/// One solve (`use_bias`) or relax iteration over every bundle of a block.
pub(crate) fn solve(
    block: &mut [ContactBundle],
    chunk: &mut DisjointChunk<'_, SolverBody>,
    k: &SolveParams,
    use_bias: bool,
) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: `solve_avx2` needs only a CPU with AVX2, checked just above.
        unsafe { solve_avx2(block, chunk, k, use_bias) };
        return;
    }
    for bundle in block {
        bundle.solve(chunk, k, use_bias);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn prepare_avx2(bundle: &mut ContactBundle, start: &StartVelocities) {
    bundle.prepare(start);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn warm_start_avx2(block: &mut [ContactBundle], chunk: &mut DisjointChunk<'_, SolverBody>) {
    for bundle in block {
        bundle.warm_start(chunk);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn solve_avx2(
    block: &mut [ContactBundle],
    chunk: &mut DisjointChunk<'_, SolverBody>,
    k: &SolveParams,
    use_bias: bool,
) {
    for bundle in block {
        bundle.solve(chunk, k, use_bias);
    }
}
