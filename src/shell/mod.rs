//! shell (under construction).
#![forbid(unsafe_code)]
