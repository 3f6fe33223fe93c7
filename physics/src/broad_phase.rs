//! Broad phase (being written).
