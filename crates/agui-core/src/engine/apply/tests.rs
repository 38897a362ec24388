//! Unit tests of the applier, rule by rule.
