//! `supportdesk users create|invite|reset-password|list`: agent accounts
//! from the command line, against the test app's database.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use super::{PASSWORD, agent_with_password, login_with, sign_in};
use crate::backend_tests;
use crate::platform::{cli, cli_json};
use crate::support::{Backend, TestApp};

backend_tests!(
    users_create_makes_an_agent_who_signs_in_with_the_password_from_stdin,
    users_invite_prints_a_link_that_sets_the_first_password,
    users_reset_password_sets_the_password,
    users_reset_password_ends_the_users_sessions,
    users_list_prints_the_companys_users,
);

const NEW_PASSWORD: &str = "a passphrase from stdin";

/// Runs the binary with `args` and `input` on stdin, which must succeed.
fn cli_with_stdin(app: &TestApp, args: &[&str], input: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_supportdesk"))
        .args(args)
        .env("DATABASE_URL", &app.config.database_url)
        .env("SUPPORTDESK_DATA_DIR", &app.config.data_dir)
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let output = child.wait_with_output().expect("the binary ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?} failed: {stderr}");
}

async fn users_create_makes_an_agent_who_signs_in_with_the_password_from_stdin(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id.to_string();
    let args = [
        "users",
        "create",
        "--company",
        &company,
        "--email",
        "Cli@Example.com",
        "--role",
        "viewer",
        "--password-stdin",
        "--json",
    ];
    cli_with_stdin(&app, &args, &format!("{NEW_PASSWORD}\n"));

    let r = login_with(
        &app,
        json!({"email": "cli@example.com", "password": NEW_PASSWORD}),
        None,
    )
    .await;

    let me = r.assert_status(200);
    assert_eq!(
        (&me["user"]["email"], &me["user"]["roleName"]),
        (&json!("cli@example.com"), &json!("viewer"))
    );
}

async fn users_invite_prints_a_link_that_sets_the_first_password(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id.to_string();
    cli_json(
        &app,
        &[
            "users",
            "create",
            "--company",
            &company,
            "--email",
            "bea@example.com",
            "--json",
        ],
    );

    let (ok, stdout, stderr) = cli(
        &app,
        &[
            "users",
            "invite",
            "--company",
            &company,
            "--email",
            "bea@example.com",
        ],
    );

    assert!(ok, "{stderr}");
    let (_, after) = stdout.split_once("#token=").expect("a link with a token");
    let token = after.split_whitespace().next().expect("the token");
    let body = json!({"token": token, "password": NEW_PASSWORD});
    let accepted = app
        .client
        .post(app.url("/api/v1/auth/invitations/accept"))
        .json(&body)
        .send()
        .await
        .expect("sent");
    assert_eq!(accepted.status(), 200);
}

/// Ada (an agent) signed in once, then her password reset by the CLI.
async fn reset_by_cli(app: &TestApp) {
    let acme = app.company().await;
    agent_with_password(app, &acme, "ada@example.com", "agent").await;
    sign_in(app, "ada@example.com", "live").await;
    let company = acme.company.id.to_string();
    let args = [
        "users",
        "reset-password",
        "--company",
        &company,
        "--email",
        "ada@example.com",
    ];
    cli_with_stdin(app, &args, &format!("{NEW_PASSWORD}\n"));
}

async fn users_reset_password_sets_the_password(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    reset_by_cli(&app).await;

    let old = json!({"email": "ada@example.com", "password": PASSWORD});
    let new = json!({"email": "ada@example.com", "password": NEW_PASSWORD});
    login_with(&app, old, None)
        .await
        .assert_error(401, "invalid_credentials");
    login_with(&app, new, None).await.assert_status(200);
}

/// The store's sessions, as a new sign-in lists them (a node may serve the
/// old one from its cache for up to 10 s: the CLI reaches no node's cache
/// without Redis).
async fn users_reset_password_ends_the_users_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    reset_by_cli(&app).await;
    let after = login_with(
        &app,
        json!({"email": "ada@example.com", "password": NEW_PASSWORD}),
        None,
    )
    .await;
    let cookie = super::session_pair(&after);

    let listed = app
        .client
        .get(app.url("/api/v1/auth/sessions"))
        .header("Cookie", cookie)
        .send()
        .await
        .expect("sent");
    let listed: serde_json::Value = listed.json().await.expect("JSON");

    let ids: Vec<_> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|session| session["id"].clone())
        .collect();
    assert_eq!(ids, [after.body["sessionId"].clone()]);
}

async fn users_list_prints_the_companys_users(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    agent_with_password(&app, &other, "bob@example.com", "agent").await;
    let company = acme.company.id.to_string();

    let listed = cli_json(&app, &["users", "list", "--company", &company, "--json"]);

    let emails: Vec<_> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|user| user["email"].clone())
        .collect();
    assert!(emails.contains(&json!("ada@example.com")), "{listed}");
    assert!(!emails.contains(&json!("bob@example.com")), "{listed}");
}
