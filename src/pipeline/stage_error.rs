//! The error of a stage that could not answer, which denies the call (fail closed).
#![forbid(unsafe_code)]

/// Why a stage could not give an answer. Every one of these denies the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StageError {
    #[error("{stage} `{name}` failed: {message}")]
    Failed {
        stage: &'static str,
        name: String,
        message: String,
    },
    #[error("{stage} `{name}` panicked")]
    Panicked { stage: &'static str, name: String },
    #[error("{stage} `{name}` timed out after {after_ms} ms")]
    TimedOut {
        stage: &'static str,
        name: String,
        after_ms: u64,
    },
}

impl StageError {
    pub fn failed(stage: &'static str, name: &str, message: impl Into<String>) -> Self {
        StageError::Failed {
            stage,
            name: name.to_string(),
            message: message.into(),
        }
    }
}
