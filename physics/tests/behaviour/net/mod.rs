//! Networked simulation (feature `net`): the wire codec, and a server with clients over
//! the simulated network.

mod codec;
mod dead_reckoning;
mod joint_state;
mod relevance;
mod replication;
mod session;
mod surfaces;
mod timing;
