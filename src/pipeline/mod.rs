//! pipeline (under construction).
#![forbid(unsafe_code)]
