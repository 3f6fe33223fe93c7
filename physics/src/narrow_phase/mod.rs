//! Narrow phase (being written).
