//! Standard scenes shared by examples, tests and benches.
#![forbid(unsafe_code)]
