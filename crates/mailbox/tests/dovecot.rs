//! The reader against a real IMAP server: Dovecot, started by
//! `.ci/mail-servers.sh` (which `.ci/run` calls), on loopback, signing in
//! any user name with the password it prints. Without `TEST_IMAP_HOST`
//! these tests report themselves skipped, except under `CI=true`, where a
//! missing server fails them.

use std::time::Duration;

use supportdesk_mailbox::{Drained, Mailbox, MailboxConfig, MailboxError, Security, Woken};

struct Server {
    host: String,
    port: u16,
    tls_port: u16,
    ca_pem: String,
    password: String,
}

fn server(test: &str) -> Option<Server> {
    let Ok(host) = std::env::var("TEST_IMAP_HOST") else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true needs TEST_IMAP_HOST: the IMAP tests must run in CI"
        );
        eprintln!("SKIPPED (no TEST_IMAP_HOST): {test}");
        return None;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let ca_file = var("TEST_IMAP_CA_FILE");
    Some(Server {
        host,
        port: var("TEST_IMAP_PORT").parse().expect("TEST_IMAP_PORT"),
        tls_port: var("TEST_IMAPS_PORT").parse().expect("TEST_IMAPS_PORT"),
        ca_pem: std::fs::read_to_string(&ca_file).expect("the test server's certificate"),
        password: var("TEST_MAIL_PASSWORD"),
    })
}

/// A mailbox no other test (nor an earlier run) uses.
fn fresh_user(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_nanos();
    format!("{test}-{nanos}@example.test")
}

fn plain(server: &Server, user: &str) -> MailboxConfig {
    MailboxConfig {
        host: server.host.clone(),
        port: server.port,
        security: Security::Plain,
        username: user.to_owned(),
        password: server.password.clone(),
        folder: "INBOX".into(),
    }
}

fn message(subject: &str) -> Vec<u8> {
    format!(
        "From: customer@example.test\r\nTo: support@desk.test\r\nSubject: {subject}\r\n\
         Message-ID: <{subject}@example.test>\r\n\r\nPlease help with {subject}.\r\n"
    )
    .into_bytes()
}

/// Puts a message in the user's inbox, as a delivery would (IMAP APPEND,
/// on a connection of its own).
async fn deliver(server: &Server, user: &str, raw: &[u8]) {
    let tcp = tokio::net::TcpStream::connect((server.host.as_str(), server.port))
        .await
        .expect("connect");
    let mut client = async_imap::Client::new(tcp);
    client.read_response().await.expect("greeting");
    let mut session = client
        .login(user, &server.password)
        .await
        .map_err(|(error, _)| error)
        .expect("login");
    session
        .append("INBOX", None, None, raw)
        .await
        .expect("append");
    session.logout().await.expect("logout");
}

async fn subjects_handed_over(mailbox: &mut Mailbox) -> Vec<String> {
    let mut seen = Vec::new();
    mailbox
        .drain(|message| {
            let text = String::from_utf8_lossy(&message.raw).into_owned();
            let subject = text
                .lines()
                .find_map(|line| line.strip_prefix("Subject: "))
                .unwrap_or_default()
                .to_owned();
            seen.push(subject);
            async { Ok::<(), String>(()) }
        })
        .await
        .expect("drain");
    seen
}

#[tokio::test]
async fn a_drain_hands_over_each_new_message_once() {
    let Some(server) = server("a_drain_hands_over_each_new_message_once") else {
        return;
    };
    let user = fresh_user("once");
    deliver(&server, &user, &message("first")).await;
    deliver(&server, &user, &message("second")).await;
    let mut mailbox = Mailbox::open(&plain(&server, &user)).await.expect("open");

    assert_eq!(
        subjects_handed_over(&mut mailbox).await,
        ["first", "second"]
    );
    assert!(subjects_handed_over(&mut mailbox).await.is_empty());
}

#[tokio::test]
async fn a_message_is_handed_over_with_all_its_bytes() {
    let Some(server) = server("a_message_is_handed_over_with_all_its_bytes") else {
        return;
    };
    let user = fresh_user("bytes");
    deliver(&server, &user, &message("whole")).await;
    let mut mailbox = Mailbox::open(&plain(&server, &user)).await.expect("open");
    let uid = mailbox.unread().await.expect("unread")[0];

    let fetched = mailbox
        .fetch(uid)
        .await
        .expect("fetch")
        .expect("the message");

    assert_eq!(fetched.raw, message("whole"));
}

#[tokio::test]
async fn a_failed_handler_leaves_its_message_for_the_next_drain() {
    let Some(server) = server("a_failed_handler_leaves_its_message_for_the_next_drain") else {
        return;
    };
    let user = fresh_user("failed");
    deliver(&server, &user, &message("retry")).await;
    let mut mailbox = Mailbox::open(&plain(&server, &user)).await.expect("open");
    let first = mailbox
        .drain(|_| async { Err::<(), _>("the database is down") })
        .await
        .expect("drain");
    assert_eq!(
        first,
        Drained {
            handled: 0,
            failed: 1
        }
    );

    assert_eq!(subjects_handed_over(&mut mailbox).await, ["retry"]);
}

#[tokio::test]
async fn a_reader_gone_between_fetch_and_mark_finds_the_message_unread_again() {
    let Some(server) =
        server("a_reader_gone_between_fetch_and_mark_finds_the_message_unread_again")
    else {
        return;
    };
    let user = fresh_user("crash");
    deliver(&server, &user, &message("crash")).await;
    let config = plain(&server, &user);
    {
        let mut mailbox = Mailbox::open(&config).await.expect("open");
        let uid = mailbox.unread().await.expect("unread")[0];
        mailbox
            .fetch(uid)
            .await
            .expect("fetch")
            .expect("the message");
        // Dropped here without a sign-out or a mark: the connection is cut,
        // as by a crash before the ticket change committed.
    }
    let mut reopened = Mailbox::open(&config).await.expect("reopen");

    assert_eq!(subjects_handed_over(&mut reopened).await, ["crash"]);
}

#[tokio::test]
async fn idle_wakes_the_reader_when_a_message_arrives() {
    let Some(server) = server("idle_wakes_the_reader_when_a_message_arrives") else {
        return;
    };
    let user = fresh_user("idle");
    let mailbox = Mailbox::open(&plain(&server, &user)).await.expect("open");
    assert!(mailbox.has_idle());
    let idling = mailbox.idle_start().await.expect("idle");
    deliver(&server, &user, &message("wake")).await;

    let (mut mailbox, woken) = idling.wait(Duration::from_secs(60)).await.expect("wait");

    assert_eq!(woken, Woken::Changed);
    assert_eq!(subjects_handed_over(&mut mailbox).await, ["wake"]);
}

#[tokio::test]
async fn tls_with_the_servers_certificate_trusted_signs_in() {
    let Some(server) = server("tls_with_the_servers_certificate_trusted_signs_in") else {
        return;
    };
    let user = fresh_user("tls");
    deliver(&server, &user, &message("secure")).await;
    let config = MailboxConfig {
        port: server.tls_port,
        security: Security::Tls {
            trusted_roots: Some(server.ca_pem.clone()),
        },
        ..plain(&server, &user)
    };
    let mut mailbox = Mailbox::open(&config).await.expect("open over TLS");

    assert_eq!(subjects_handed_over(&mut mailbox).await, ["secure"]);
}

#[tokio::test]
async fn tls_refuses_a_certificate_nobody_vouches_for() {
    let Some(server) = server("tls_refuses_a_certificate_nobody_vouches_for") else {
        return;
    };
    let config = MailboxConfig {
        port: server.tls_port,
        security: Security::Tls {
            trusted_roots: None,
        },
        ..plain(&server, &fresh_user("untrusted"))
    };

    let opened = Mailbox::open(&config).await;

    assert!(
        matches!(opened, Err(MailboxError::Tls(..))),
        "{:?}",
        opened.err()
    );
}

#[tokio::test]
async fn a_wrong_password_is_a_refused_sign_in() {
    let Some(server) = server("a_wrong_password_is_a_refused_sign_in") else {
        return;
    };
    let config = MailboxConfig {
        password: "not-the-password".into(),
        ..plain(&server, &fresh_user("refused"))
    };

    let opened = Mailbox::open(&config).await;

    assert!(
        matches!(opened, Err(MailboxError::SignIn(_))),
        "{:?}",
        opened.err()
    );
}

#[tokio::test]
async fn a_message_marked_read_elsewhere_is_not_handed_over() {
    let Some(server) = server("a_message_marked_read_elsewhere_is_not_handed_over") else {
        return;
    };
    let user = fresh_user("elsewhere");
    deliver(&server, &user, &message("read")).await;
    let mut mailbox = Mailbox::open(&plain(&server, &user)).await.expect("open");
    let uid = mailbox.unread().await.expect("unread")[0];
    mailbox.mark_read(uid).await.expect("mark");

    let unread: Vec<u32> = mailbox.unread().await.expect("unread");

    assert!(unread.is_empty());
}
