//! An agent's public reply on an email ticket reaches the customer by
//! SMTP from the channel's address, threaded: `In-Reply-To` is the
//! customer's last Message-ID, `Reply-To` carries the ticket's token, the
//! subject the ticket number. An internal note is never mailed.

use serde_json::json;

use super::{DESK, deliver, first_message, imap_channel, message, opened, reply_token};
use crate::backend_tests;
use crate::outbound::support::{drive_until, fast_retries};
use crate::support::{Backend, TestApp};

backend_tests!(
    an_agents_public_reply_is_mailed_in_reply_to_the_customers_last_message,
    an_internal_note_is_not_mailed,
);

/// An in-process SMTP server keeping every message it receives.
pub(super) mod sink {
    use std::net::IpAddr;
    use std::sync::{Arc, Mutex};

    use mailin_embedded::{Handler, Response, Server, response};

    /// Cloned for each connection: each has its own message in progress
    /// (the outbox may send two at once), all share what was received.
    #[derive(Clone, Default)]
    pub struct Sink {
        pub received: Arc<Mutex<Vec<Vec<u8>>>>,
        current: Vec<u8>,
    }

    impl Handler for Sink {
        fn helo(&mut self, _ip: IpAddr, _domain: &str) -> Response {
            response::OK
        }

        fn data_start(
            &mut self,
            _domain: &str,
            _from: &str,
            _is8bit: bool,
            _to: &[String],
        ) -> Response {
            self.current.clear();
            response::OK
        }

        fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
            self.current.extend_from_slice(buf);
            Ok(())
        }

        fn data_end(&mut self) -> Response {
            let message = std::mem::take(&mut self.current);
            self.received.lock().expect("received").push(message);
            response::OK
        }
    }

    impl Sink {
        /// The first message received whose text contains `text`.
        pub fn containing(&self, text: &str) -> Option<String> {
            self.received
                .lock()
                .expect("received")
                .iter()
                .map(|m| String::from_utf8_lossy(m).into_owned())
                .find(|m| m.contains(text))
        }
    }

    pub fn start() -> (Sink, u16) {
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
}

/// The message containing `text` that the outbox delivers to `sink`
/// (driven until it arrives).
pub(super) async fn delivered_containing(app: &TestApp, sink: &sink::Sink, text: &str) -> String {
    let waiting = sink.clone();
    drive_until(app, "the reply at the SMTP server", move || {
        waiting.containing(text).is_some()
    })
    .await;
    sink.containing(text).expect("the reply")
}

/// The header `name` of a raw message (unfolded).
pub(super) fn header(raw: &str, name: &str) -> Option<String> {
    let prefix = format!("{name}:").to_ascii_lowercase();
    let mut lines = raw.split("\r\n").peekable();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            break;
        }
        if line.to_ascii_lowercase().starts_with(&prefix) {
            let mut value = line[prefix.len()..].trim().to_string();
            while let Some(next) = lines.peek().filter(|l| l.starts_with([' ', '\t'])) {
                value.push(' ');
                value.push_str(next.trim());
                lines.next();
            }
            return Some(value);
        }
    }
    None
}

async fn an_agents_public_reply_is_mailed_in_reply_to_the_customers_last_message(backend: Backend) {
    let (sink, port) = sink::start();
    let app = TestApp::spawn_with(backend, |c| {
        fast_retries(c);
        c.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
    })
    .await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("o1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let again = message(
        "ada@shop.example",
        DESK,
        "o2@shop.example",
        "Re: Printer",
        "In-Reply-To: <o1@shop.example>\r\n",
        "Any news?",
    );
    deliver(&app, &acme, &channel, &again).await;
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Please try a new cartridge."}),
    )
    .await
    .assert_status(201);
    let token = reply_token(&app, &acme, &id).await;

    let raw = delivered_containing(&app, &sink, "Please try a new cartridge.").await;
    let number = app.get(&format!("/tickets/{id}"), &acme.key).await.body["ticketNumber"]
        .as_str()
        .expect("number")
        .to_string();
    assert_eq!(
        (
            header(&raw, "In-Reply-To"),
            header(&raw, "Reply-To"),
            header(&raw, "From"),
            header(&raw, "Subject").is_some_and(|s| s.contains(&number)),
            header(&raw, "References").is_some_and(|r| r.contains("<o1@shop.example>")),
        ),
        (
            Some("<o2@shop.example>".to_string()),
            Some(format!("support+{token}@acme.example")),
            Some(DESK.to_string()),
            true,
            true,
        ),
        "{raw}"
    );
}

async fn an_internal_note_is_not_mailed(backend: Backend) {
    let app = TestApp::spawn_with(backend, fast_retries).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("n1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Customer seems upset", "isInternal": true}),
    )
    .await
    .assert_status(201);
    let mut tx = app.state.db.begin().await.expect("begin");
    let (ids, _) = supportdesk::email::store::messages::history(
        &mut tx,
        &super::tenant(&acme),
        id.parse().expect("uuid"),
        20,
    )
    .await
    .expect("history");
    tx.commit().await.expect("commit");
    assert_eq!(ids, ["n1@shop.example"]);
}
