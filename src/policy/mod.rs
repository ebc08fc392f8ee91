//! policy (under construction).
#![forbid(unsafe_code)]
