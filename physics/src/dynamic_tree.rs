//! Dynamic AABB tree (being written).
