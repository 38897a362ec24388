//! Unit tests of verification, one or more per rule.
