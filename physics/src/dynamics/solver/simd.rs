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
//! Each copy is a function of its own per const variant (masked or full bundles), kept out
//! of line, into which the kernel and its `#[inline(always)]` helpers inline (the kernels
//! are `#[inline(always)]` for that): one function holding both variants of a kernel ran
//! 9 % slower on pyramid_big than one per variant. The CPU is checked once per block of
//! bundles ([`path`]). The gathers and scatters stay out of line (see
//! `ContactBundle::gather_velocities`), compiled once, for the baseline: AVX2 copies of
//! them measured no faster.
#![allow(
    unsafe_code,
    reason = "calls of the AVX2-compiled kernels, where the CPU was checked for AVX2"
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

/// Which copy of the kernels to run: the baseline's, or the AVX2 one. Made only by
/// [`path`], after the CPU check, so a `Path` that says AVX2 is proof the CPU has it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Path {
    #[cfg_attr(
        not(target_arch = "x86_64"),
        expect(dead_code, reason = "only x86-64 has a second copy")
    )]
    avx2: bool,
}

/// The copy to run now: AVX2 if allowed and the CPU has it (detected once by the standard
/// library, then a cached load). Taken once per block of bundles, not per bundle. Other
/// targets have only the baseline copies.
#[inline(always)]
pub(crate) fn path() -> Path {
    #[cfg(target_arch = "x86_64")]
    let avx2 = AVX2_ALLOWED.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let avx2 = false;
    Path { avx2 }
}

/// Defines kernel `$name(path, ...)` as a dispatcher over two out-of-line copies of
/// `$body`: one compiled for the baseline, one with AVX2 enabled.
macro_rules! kernel {
    (
        $(#[$doc:meta])*
        fn $name:ident $(<const $c:ident: $ct:ty>)? ($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name$(<const $c: $ct>)?(path: Path, $($arg: $ty),*) {
            #[inline(never)]
            fn baseline$(<const $c: $ct>)?($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            #[inline(never)]
            fn wide$(<const $c: $ct>)?($($arg: $ty),*) $body

            #[cfg(target_arch = "x86_64")]
            if path.avx2 {
                // SAFETY: `wide` needs only a CPU with AVX2, and a `Path` says AVX2 only
                // when `path()` found it.
                unsafe { wide$(::<$c>)?($($arg),*) };
                return;
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = path;
            baseline$(::<$c>)?($($arg),*);
        }
    };
}

kernel! {
    /// Warm-starts a bundle, `MASKED` as [`ContactBundle::masked`] says.
    fn warm_start_bundle<const MASKED: bool>(
        bundle: &mut ContactBundle,
        chunk: &mut DisjointChunk<'_, SolverBody>,
    ) {
        bundle.warm_start_lanes::<MASKED>(chunk);
    }
}

kernel! {
    /// One solve (`use_bias`) or relax iteration of a bundle, `MASKED` as
    /// [`ContactBundle::masked`] says.
    fn solve_bundle<const MASKED: bool>(
        bundle: &mut ContactBundle,
        chunk: &mut DisjointChunk<'_, SolverBody>,
        k: &SolveParams,
        use_bias: bool,
    ) {
        bundle.solve_lanes::<MASKED>(chunk, k, use_bias);
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
    let path = path();
    for bundle in block {
        if bundle.masked() {
            warm_start_bundle::<true>(path, bundle, chunk);
        } else {
            warm_start_bundle::<false>(path, bundle, chunk);
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
    let path = path();
    for bundle in block {
        if bundle.masked() {
            solve_bundle::<true>(path, bundle, chunk, k, use_bias);
        } else {
            solve_bundle::<false>(path, bundle, chunk, k, use_bias);
        }
    }
}
