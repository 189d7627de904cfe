//! Email through the outbox: a real SMTP server, the file mailer, retries.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use mailin_embedded::{Handler, Response, Server, response};
use supportdesk::auth::Mode;
use supportdesk::mail::{self, Email};

use super::support::{self, DELIVERED_WITHIN, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually_within};

backend_tests!(
    email_reaches_a_real_smtp_server,
    file_mailer_writes_a_readable_eml,
    unsendable_email_is_retried_then_failed,
);

/// Recipients and the raw message.
type Received = (Vec<String>, Vec<u8>);

/// An in-process SMTP sink that keeps every message it receives.
#[derive(Clone, Default)]
struct Sink {
    received: Arc<Mutex<Vec<Received>>>,
    current: Arc<Mutex<Received>>,
}

impl Handler for Sink {
    fn helo(&mut self, _ip: IpAddr, _domain: &str) -> Response {
        response::OK
    }

    fn data_start(&mut self, _domain: &str, _from: &str, _is8bit: bool, to: &[String]) -> Response {
        *self.current.lock().expect("current") = (to.to_vec(), Vec::new());
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current
            .lock()
            .expect("current")
            .1
            .extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let message = std::mem::take(&mut *self.current.lock().expect("current"));
        self.received.lock().expect("received").push(message);
        response::OK
    }
}

fn start_smtp() -> (Sink, u16) {
    let sink = Sink::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind smtp");
    let port = listener.local_addr().expect("addr").port();
    let mut server = Server::new(sink.clone());
    server.with_name("sink.test").with_tcp_listener(listener);
    std::thread::spawn(move || {
        let _ = server.serve();
    });
    (sink, port)
}

fn welcome(to: &str) -> Email {
    Email {
        to: to.to_string(),
        subject: "Your ticket TKT-000042".into(),
        text: "Hello Ada, we received your ticket TKT-000042.".into(),
        html: Some("<p>Hello Ada, we received your ticket <b>TKT-000042</b>.</p>".into()),
    }
}

async fn queue(app: &TestApp, tenant: &supportdesk::auth::Tenant, email: &Email) {
    let mut tx = app.state.db.begin().await.expect("begin");
    mail::queue(&mut tx, tenant, email).await.expect("queued");
    tx.commit().await.expect("commit");
}

async fn email_reaches_a_real_smtp_server(backend: Backend) {
    let (sink, port) = start_smtp();
    let app = TestApp::spawn_with(backend, |c| {
        support::fast_retries(c);
        c.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
        c.smtp_from = "Support Desk <desk@example.com>".into();
    })
    .await;
    let acme = app.company().await;
    queue(
        &app,
        &tenant(&acme, Mode::Test),
        &welcome("ada@example.com"),
    )
    .await;

    let received = sink.received.clone();
    support::drive_until(&app, "email at the SMTP server", || {
        !received.lock().expect("received").is_empty()
    })
    .await;
    let (to, raw) = sink.received.lock().expect("received")[0].clone();
    assert_eq!(to, ["ada@example.com"]);
    let text = String::from_utf8_lossy(&raw);
    assert!(text.contains("Subject: Your ticket TKT-000042"), "{text}");
    assert!(
        text.contains("From: \"Support Desk\" <desk@example.com>"),
        "{text}"
    );
    assert!(text.contains("multipart/alternative"), "{text}");
    assert!(text.contains("text/plain"), "{text}");
    assert!(text.contains("text/html"), "{text}");
    assert!(
        text.contains("we received your ticket TKT-000042."),
        "{text}"
    );
    assert!(
        !app.config.data_dir.join("mail").exists(),
        "no file when SMTP is set"
    );
}

async fn file_mailer_writes_a_readable_eml(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let tenant = tenant(&acme, Mode::Test);
    queue(&app, &tenant, &welcome("ada@example.com")).await;
    let plain = Email {
        html: None,
        subject: "Plain only".into(),
        ..welcome("bob@example.com")
    };
    queue(&app, &tenant, &plain).await;

    let dir = app.config.data_dir.join("mail");
    let count = || -> usize {
        std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
                    .count()
            })
            .unwrap_or(0)
    };
    support::drive_until(&app, "two .eml files", || count() == 2).await;

    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("mail dir")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .map(|e| std::fs::read_to_string(e.path()).expect("readable text"))
        .collect();
    files.sort_by_key(|f| f.contains("Plain only"));
    let (rich, plain) = (&files[0], &files[1]);
    for header in [
        "From: \"Support Desk\" <support@localhost>",
        "To: ada@example.com",
        "Subject: Your ticket TKT-000042",
        "Message-ID: <",
        "Date: ",
        "MIME-Version: 1.0",
        "Content-Type: multipart/alternative",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Type: text/html; charset=utf-8",
        "Hello Ada, we received your ticket TKT-000042.",
        "<b>TKT-000042</b>",
    ] {
        assert!(rich.contains(header), "{header:?} missing in\n{rich}");
    }
    assert!(plain.contains("To: bob@example.com"), "{plain}");
    assert!(
        plain.contains("Content-Type: text/plain; charset=utf-8"),
        "{plain}"
    );
    assert!(!plain.contains("text/html"), "{plain}");
}

async fn unsendable_email_is_retried_then_failed(backend: Backend) {
    // Nothing listens on the SMTP port: every attempt fails.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let app = TestApp::spawn_with(backend, |c| {
        support::fast_retries(c);
        c.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
    })
    .await;
    let acme = app.company().await;
    let mut tx = app.state.db.begin().await.expect("begin");
    let job = supportdesk::outbox::enqueue(
        &mut tx,
        mail::JOB_KIND,
        Some(&tenant(&acme, Mode::Test)),
        &welcome("ada@example.com"),
    )
    .await
    .expect("queued");
    tx.commit().await.expect("commit");

    let (attempts, error) = eventually_within("the email fails", DELIVERED_WITHIN, async || {
        supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
        let job_state = supportdesk::outbox::store::state(&app.state.db, job)
            .await
            .expect("job");
        if job_state.status.as_str() == "failed" {
            return Some((job_state.attempts, job_state.last_error));
        }
        assert_eq!(job_state.status.as_str(), "pending");
        None
    })
    .await;
    assert_eq!(attempts, 5, "the webhook schedule: five attempts");
    assert!(error.is_some());
}
