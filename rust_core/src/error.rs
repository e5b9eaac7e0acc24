//! The one error type of the core. The Python glue maps each variant to one exception
//! class, and the service maps those to gRPC status codes.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The request could not be decoded or names something that cannot exist
    /// (bad protobuf bytes, a cell out of range, a seat that is not in the match).
    Malformed(String),
    /// A game option or player count the game does not support.
    InvalidOption(String),
    /// A well-formed action that the rules refuse now. `reason` is a stable,
    /// machine-readable code (e.g. `NOT_YOUR_TURN`, `ILLEGAL_PLAY`); `message` is for people.
    /// Both must be computable from what the acting seat may know.
    Rule {
        reason: &'static str,
        message: String,
    },
    /// The game does not offer this capability (e.g. no position evaluator).
    Unsupported(String),
    /// A stored event does not apply to the state it follows: the log is corrupt or was
    /// written by an incompatible core.
    Corrupt(String),
}

impl CoreError {
    pub fn malformed(msg: impl Into<String>) -> Self {
        CoreError::Malformed(msg.into())
    }
    pub fn option(msg: impl Into<String>) -> Self {
        CoreError::InvalidOption(msg.into())
    }
    pub fn rule(reason: &'static str, msg: impl Into<String>) -> Self {
        CoreError::Rule {
            reason,
            message: msg.into(),
        }
    }
    pub fn corrupt(msg: impl Into<String>) -> Self {
        CoreError::Corrupt(msg.into())
    }
    /// The standard refusal for a seat that has nothing to decide now.
    pub fn not_your_turn() -> Self {
        CoreError::rule("NOT_YOUR_TURN", "it is not this seat's turn to act")
    }
    pub fn game_over() -> Self {
        CoreError::rule("GAME_OVER", "the match is over")
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Malformed(m) => write!(f, "malformed: {m}"),
            CoreError::InvalidOption(m) => write!(f, "invalid option: {m}"),
            CoreError::Rule { reason, message } => write!(f, "{reason}: {message}"),
            CoreError::Unsupported(m) => write!(f, "unsupported: {m}"),
            CoreError::Corrupt(m) => write!(f, "corrupt event log: {m}"),
        }
    }
}

impl std::error::Error for CoreError {}

pub type CoreResult<T> = Result<T, CoreError>;

/// `Corrupt(what)` unless `ok`: for `evolve`, checking that a stored event fits the state.
pub fn ensure(ok: bool, what: &str) -> CoreResult<()> {
    if ok {
        Ok(())
    } else {
        Err(CoreError::corrupt(what))
    }
}
