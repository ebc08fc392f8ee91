//! The error of a stage that could not answer, which denies the call (fail closed).
#![forbid(unsafe_code)]

/// Why a stage could not give an answer. Every one of these denies the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StageError {
    /// The stage returned an error.
    #[error("{stage} `{name}` failed: {message}")]
    Failed {
        /// The stage.
        stage: &'static str,
        /// The listener, guard, hook or handler.
        name: String,
        /// Its error.
        message: String,
    },
    #[error("{stage} `{name}` panicked")]
    /// The stage panicked.
    Panicked {
        /// The stage.
        stage: &'static str,
        /// The listener, guard, hook or handler.
        name: String,
    },
    /// The stage did not answer within its budget.
    #[error("{stage} `{name}` timed out after {after_ms} ms")]
    TimedOut {
        /// The stage.
        stage: &'static str,
        /// The listener, guard, hook or handler.
        name: String,
        /// The budget.
        after_ms: u64,
    },
}

impl StageError {
    /// A stage's failure with its message.
    pub fn failed(stage: &'static str, name: &str, message: impl Into<String>) -> Self {
        StageError::Failed {
            stage,
            name: name.to_string(),
            message: message.into(),
        }
    }
}
