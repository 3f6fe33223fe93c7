//! Geometry primitives every layer above builds on: bounding boxes, support maps, the
//! dynamic AABB tree, and the prefetch hint. They import only [`crate::math`].

pub mod aabb;
pub mod dynamic_tree;
pub(crate) mod prefetch;
pub mod support;
