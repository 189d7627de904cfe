//! The node's shutdown signal, as the workers and passes wait on it.

/// Resolves once shutdown has begun.
pub(crate) async fn stopping(shutdown: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}
