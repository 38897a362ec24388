//! The client pipeline.
