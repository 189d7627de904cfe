//! The byte stream under an IMAP session: plain TCP, or TLS from the first
//! byte (IMAPS, port 993). async-imap has no TLS of its own, so the stream
//! is tokio-rustls on aws-lc-rs, the crypto the rest of the service uses.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto};

use crate::MailboxError;

/// How the connection is protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Security {
    /// TLS from the first byte, the server's certificate checked against the
    /// system's trust store, or only against `trusted_roots` (PEM
    /// certificates) when given: a company's own mail server with a private
    /// CA, or a test server's self-signed certificate.
    Tls { trusted_roots: Option<String> },
    /// No TLS: only for a server on the same host or network (a local relay,
    /// a test server). The password crosses the wire in the clear.
    Plain,
}

#[derive(Debug)]
pub(crate) enum Connection {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection {
    pub(crate) async fn open(
        host: &str,
        port: u16,
        security: &Security,
    ) -> Result<Connection, MailboxError> {
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|error| MailboxError::Connect(format!("{host}:{port}"), error))?;
        match security {
            Security::Plain => Ok(Connection::Plain(tcp)),
            Security::Tls { trusted_roots } => {
                let tls_error = |error: String| MailboxError::Tls(host.to_owned(), error);
                let config = client_config(trusted_roots.as_deref()).map_err(tls_error)?;
                let name = ServerName::try_from(host.to_owned())
                    .map_err(|error| tls_error(error.to_string()))?;
                let stream = TlsConnector::from(Arc::new(config))
                    .connect(name, tcp)
                    .await
                    .map_err(|error| tls_error(error.to_string()))?;
                Ok(Connection::Tls(Box::new(stream)))
            }
        }
    }
}

fn client_config(trusted_roots: Option<&str>) -> Result<ClientConfig, String> {
    let provider = Arc::new(crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?;
    let config = match trusted_roots {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for certificate in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let certificate = certificate.map_err(|error| format!("trusted roots: {error}"))?;
                roots
                    .add(certificate)
                    .map_err(|error| format!("trusted roots: {error}"))?;
            }
            if roots.is_empty() {
                return Err("trusted roots: no certificate in the PEM text".into());
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => {
            let verifier = rustls_platform_verifier::Verifier::new(provider)
                .map_err(|error| error.to_string())?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth()
        }
    };
    Ok(config)
}

impl AsyncRead for Connection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Connection::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Connection::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Connection::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Connection::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Connection::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Connection::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Connection::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Connection::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}
