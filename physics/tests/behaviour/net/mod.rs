//! Networked simulation (feature `net`): the wire codec.

mod codec;
