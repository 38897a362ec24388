//! Unit tests of chunk expansion, one or more per rule.
