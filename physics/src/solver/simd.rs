//! Runtime choice of the widest vector unit for the solver's bundled passes.
//!
//! The bundles' wide math (`wide.rs`) is plain loops over `[f32; 8]` that LLVM turns into
//! vector instructions of whatever the build targets: two 4-wide SSE operations per wide
//! operation on a baseline x86-64 build, one 8-wide AVX operation where AVX2 is enabled.
//! Most builds target the baseline, so each bundle kernel (a contact bundle's warm start,
//! solve and prepare, a joint bundle's pass) is compiled twice, once for the baseline and
//! once with AVX2 enabled, and the AVX2 copy runs when the CPU has it. Each lane does the
//! same IEEE operations in the same order either way (Rust never fuses a multiply and an
//! add on its own), so results are bit for bit the same on every machine; a determinism
//! test runs scenes on both paths and compares their hashes at every step.
//!
//! Each copy is a function of its own, kept out of line, into which the kernel and its
//! `#[inline(always)]` helpers inline (the kernels are `#[inline(always)]` for that): one
//! function holding both the masked and unmasked variants of a kernel ran 9 % slower on
//! pyramid_big than one per variant. The gathers and scatters stay out of line (see
//! `ContactBundle::gather_velocities`), compiled once, for the baseline.
#![allow(
    unsafe_code,
    reason = "calls of the AVX2-compiled kernels, each right after checking the CPU"
)]

use std::sync::atomic::{AtomicBool, Ordering};

use joule_jobs::DisjointChunk;

use super::SolverBody;
use super::angular_bundle::AngularBundle;
use super::ball_bundle::BallBundle;
use super::contact_bundle::{ContactBundle, SolveParams, StartVelocities};
use super::joint::{JointParams, Pass};

/// Whether the AVX2 copies may run (see [`use_avx2`](super::use_avx2)).
static AVX2_ALLOWED: AtomicBool = AtomicBool::new(true);

/// Lets the AVX2 copies run where the CPU has them, or not.
pub(crate) fn allow_avx2(allowed: bool) {
    // Relaxed: a switch between two paths that compute the same bits; a pass that still
    // sees the old value is as right as one that sees the new.
    AVX2_ALLOWED.store(allowed, Ordering::Relaxed);
}

/// Whether to take the AVX2 copies: allowed, and the CPU has AVX2 (detected once by the
/// standard library, then a cached load). Other targets have only the baseline copies.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn avx2() -> bool {
    AVX2_ALLOWED.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2")
}

/// Defines kernel `$name` as a dispatcher over two out-of-line copies of `$body`: one
/// compiled for the baseline, one with AVX2 enabled.
macro_rules! kernel {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name($($arg: $ty),*) {
            #[inline(never)]
            fn baseline($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            #[inline(never)]
            fn wide($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            if avx2() {
                // SAFETY: `wide` needs only a CPU with AVX2, which `avx2` just checked.
                unsafe { wide($($arg),*) };
                return;
            }
            baseline($($arg),*);
        }
    };
}

kernel! {
    /// Warm-starts a bundle whose lanes are all full (see `ContactBundle::masked`).
    fn warm_start_full(bundle: &ContactBundle, chunk: &mut DisjointChunk<'_, SolverBody>) {
        bundle.warm_start_lanes::<false>(chunk);
    }
}

kernel! {
    /// Warm-starts a masked bundle.
    fn warm_start_masked(bundle: &ContactBundle, chunk: &mut DisjointChunk<'_, SolverBody>) {
        bundle.warm_start_lanes::<true>(chunk);
    }
}

kernel! {
    /// One solve (`use_bias`) or relax iteration of a bundle whose lanes are all full.
    fn solve_full(
        bundle: &mut ContactBundle,
        chunk: &mut DisjointChunk<'_, SolverBody>,
        k: &SolveParams,
        use_bias: bool,
    ) {
        bundle.solve_lanes::<false>(chunk, k, use_bias);
    }
}

kernel! {
    /// One solve or relax iteration of a masked bundle.
    fn solve_masked(
        bundle: &mut ContactBundle,
        chunk: &mut DisjointChunk<'_, SolverBody>,
        k: &SolveParams,
        use_bias: bool,
    ) {
        bundle.solve_lanes::<true>(chunk, k, use_bias);
    }
}

kernel! {
    /// Prepares a filled bundle (see [`ContactBundle::prepare`]).
    fn prepare(bundle: &mut ContactBundle, start: &StartVelocities) {
        bundle.prepare(start);
    }
}

kernel! {
    /// One pass of a block's bundled ball joints.
    fn ball_joints(
        bundles: &mut [BallBundle],
        chunk: &mut DisjointChunk<'_, SolverBody>,
        pass: Pass,
        k: &JointParams,
    ) {
        for bundle in bundles {
            bundle.run(chunk, pass, k);
        }
    }
}

kernel! {
    /// One pass of a block's bundled swing-twist and hinge joints.
    fn angular_joints(
        bundles: &mut [AngularBundle],
        chunk: &mut DisjointChunk<'_, SolverBody>,
        pass: Pass,
        k: &JointParams,
    ) {
        for bundle in bundles {
            bundle.run(chunk, pass, k);
        }
    }
}

/// Warm-starts every bundle of a block.
pub(crate) fn warm_start(block: &mut [ContactBundle], chunk: &mut DisjointChunk<'_, SolverBody>) {
    for bundle in block {
        if bundle.masked() {
            warm_start_masked(bundle, chunk);
        } else {
            warm_start_full(bundle, chunk);
        }
    }
}

/// One solve (`use_bias`) or relax iteration over every bundle of a block.
pub(crate) fn solve(
    block: &mut [ContactBundle],
    chunk: &mut DisjointChunk<'_, SolverBody>,
    k: &SolveParams,
    use_bias: bool,
) {
    for bundle in block {
        if bundle.masked() {
            solve_masked(bundle, chunk, k, use_bias);
        } else {
            solve_full(bundle, chunk, k, use_bias);
        }
    }
}
