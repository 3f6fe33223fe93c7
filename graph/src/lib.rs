//! joule-graph: task graphs over joule-jobs (under construction).
#![forbid(unsafe_code)]
