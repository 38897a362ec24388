//! Inbound compatibility boundary.
