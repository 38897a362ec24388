//! Server-Sent Events framing.
