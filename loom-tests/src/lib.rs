//! loom models of joule's lock-free parts live in `tests/`.
