//! Networked simulation (feature `net`): the wire codec, and a server with clients over
//! the simulated network.

mod codec;
mod relevance;
mod replication;
mod session;
mod timing;
