//! Standard scenes shared by examples, tests and benches, the character course
//! ([`character_course`]), the recording viewer's server
//! ([`viewer`]), and a whole-frame trace writer ([`frame_trace`]).
//!
//! Every scene of `../shared/SCENES.md` is built here, exactly as described there (body
//! order is creation order, which determinism depends on), so that the same scene can be
//! timed in joule and in the peer engines and compared as a ratio.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod character_course;
pub mod frame_trace;
pub mod net_args;
pub mod ragdoll;
pub mod scenes;
pub mod viewer;
