//! Agent accounts: sign-in, sessions and their cookie, CSRF, one-time
//! links, the second factor, lock-outs, sessions ended everywhere, and
//! their operations in the OpenAPI document (`openapi`), the first start's
//! owner account (`first_owner`) and the `users` CLI (`cli`).

mod cli;
mod first_owner;
mod invitations;
mod links;
mod lockout;
mod lockout_limits;
mod openapi;
mod sessions;
mod sign_in;
mod socket_tokens;
mod sockets;
mod sockets_ended;
pub(crate) mod totp;
mod totp_rotation;

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use uuid::Uuid;

use crate::support::{TestApp, TestCompany, TestResponse};

pub const PASSWORD: &str = "correct horse battery";

/// Creates a user (`role`: owner, admin, agent or viewer) with `email` and
/// `PASSWORD`.
pub async fn agent_with_password(
    app: &TestApp,
    acme: &TestCompany,
    email: &str,
    role: &str,
) -> Uuid {
    let tenant = Tenant::new(acme.company.id, Mode::Live);
    let new = supportdesk::users::store::NewUser {
        id: None,
        name: format!("Agent {email}"),
        email: email.to_owned(),
        role: supportdesk::roles::RoleRef::BuiltIn(
            supportdesk::roles::BuiltInRole::named(role).expect("a built-in role"),
        ),
    };
    let now = app.state.clock.now();
    let hash = password_hash();
    let mut tx = app.state.db.begin().await.expect("tx");
    let user = supportdesk::users::store::create_in(&mut tx, &tenant, new, now)
        .await
        .expect("user");
    supportdesk::users::credentials::set_password_hash(
        &mut tx,
        acme.company.id,
        user.id,
        hash,
        now,
    )
    .await
    .expect("password set");
    tx.commit().await.expect("commit");
    user.id
}

/// `PASSWORD`'s argon2id hash for the agents the tests create, made once
/// at the lowest cost argon2 allows (64 KiB, one pass). The service checks a
/// stored hash at the cost written in it, so each sign-in of such an agent
/// costs microseconds instead of the default cost's tens of milliseconds:
/// the suite signs agents in thousands of times, and at the default cost
/// that was a fifth of its own CPU time in the accounts tests. The hashes the
/// service makes itself (a password set through a link) keep the default.
fn password_hash() -> &'static str {
    use argon2::password_hash::PasswordHasher;
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        let params = argon2::Params::new(64, 1, 1, None).expect("argon2 parameters");
        argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
            .hash_password(PASSWORD.as_bytes())
            .expect("hash")
            .to_string()
    })
}

/// A browser of one agent: the session cookie and CSRF token it holds.
pub struct Browser {
    pub cookie: String,
    pub csrf: String,
    pub me: Value,
}

/// The `sd_session=…` pair of a response's `Set-Cookie`.
pub fn session_pair(response: &TestResponse) -> String {
    let set_cookie = response.header("set-cookie").expect("a Set-Cookie header");
    set_cookie
        .split(';')
        .next()
        .expect("the cookie pair")
        .trim()
        .to_owned()
}

/// `POST /api/v1/auth/login` with `body`, carrying `cookie` if given.
pub async fn login_with(app: &TestApp, body: Value, cookie: Option<&str>) -> TestResponse {
    let mut request = app.client.post(app.url("/api/v1/auth/login")).json(&body);
    if let Some(cookie) = cookie {
        request = request.header("Cookie", cookie);
    }
    TestResponse::from(request.send().await).await
}

/// Signs `email` in with `PASSWORD` in `mode` ("live" or "test").
pub async fn sign_in(app: &TestApp, email: &str, mode: &str) -> Browser {
    let response = login_with(
        app,
        json!({"email": email, "password": PASSWORD, "mode": mode}),
        None,
    )
    .await;
    let me = response.assert_status(200).clone();
    Browser {
        cookie: session_pair(&response),
        csrf: me["csrfToken"].as_str().expect("csrfToken").to_owned(),
        me,
    }
}

impl Browser {
    /// A request with the cookie (and the CSRF token when `csrf`).
    pub async fn send(
        &self,
        app: &TestApp,
        method: Method,
        path: &str,
        body: Option<Value>,
        csrf: bool,
    ) -> TestResponse {
        let mut request = app
            .client
            .request(method, app.url(path))
            .header("Cookie", &self.cookie);
        if csrf {
            request = request.header("X-CSRF-Token", &self.csrf);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        TestResponse::from(request.send().await).await
    }

    pub async fn get(&self, app: &TestApp, path: &str) -> TestResponse {
        self.send(app, Method::GET, path, None, false).await
    }
}

/// The text of every email queued so far, oldest first.
pub async fn queued_emails(app: &TestApp) -> Vec<Value> {
    let rows: Vec<String> = supportdesk::db::Query::new(
        "SELECT CAST(payload AS TEXT) FROM outbox_jobs WHERE kind = 'email' ORDER BY run_at, id",
    )
    .fetch_column(&app.state.db)
    .await
    .expect("emails");
    rows.iter()
        .map(|row| serde_json::from_str(row).expect("email json"))
        .collect()
}

/// The `#token=` secret of the last link emailed to `to`.
pub async fn last_link_token(app: &TestApp, to: &str) -> String {
    let emails = queued_emails(app).await;
    let email = emails
        .iter()
        .rev()
        .find(|email| email["to"] == to)
        .expect("an email to the address");
    let text = email["text"].as_str().expect("text");
    let (_, after) = text.split_once("#token=").expect("a link with a token");
    after
        .split_whitespace()
        .next()
        .expect("the token")
        .to_owned()
}
