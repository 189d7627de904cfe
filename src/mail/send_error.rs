//! Why a send failed, as the mailer and a channel's relay both report it.

/// Why a send failed; `permanent` failures (a bad address, an SMTP 5xx)
/// are not retried.
#[derive(Debug)]
pub struct SendError {
    pub message: String,
    pub permanent: bool,
}

impl SendError {
    pub(crate) fn permanent(message: impl Into<String>) -> Self {
        SendError {
            message: message.into(),
            permanent: true,
        }
    }

    pub(crate) fn transient(message: impl Into<String>) -> Self {
        SendError {
            message: message.into(),
            permanent: false,
        }
    }
}
