//! Name tables the classifier consults. Kept apart so that a reader can
//! review what is trusted without reading the logic.

mod code;
mod env;
mod files;
pub(crate) mod git;
mod programs;
pub(crate) mod project;
mod read_only;

pub(crate) use code::{DECODERS, FOREIGN_SHELLS, INTERPRETERS, SHELLS};
pub(crate) use env::exec_env;
pub(crate) use files::{RC_FILES, SECRET_NAMES, SECRET_PARTS, SYSTEM_DIRS};
pub(crate) use git::git_exec_key;
pub(crate) use programs::{
    DESTRUCTIVE, EDITORS, LEADING_OPTIONS, NETWORK, PACKAGE_MANAGERS, PRIVILEGE, version_only,
};
pub(crate) use read_only::READ_ONLY;
