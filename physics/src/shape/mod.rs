//! Shapes (being written).
