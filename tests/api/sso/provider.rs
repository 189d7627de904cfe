//! Starting the Node issuers of tests/oidc, and configuring a company's SSO
//! against one.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::{TestApp, TestCompany};

/// The client our service is registered as at the real provider.
pub const CLIENT_ID: &str = "supportdesk";
pub const CLIENT_SECRET: &str = "a-client-secret";

/// A running issuer; killed when dropped.
pub struct Issuer {
    pub url: String,
    _child: Child,
}

fn oidc_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oidc")
}

impl Issuer {
    /// `oidc-provider` with our client, whose redirect URI is `app`'s callback.
    pub async fn real(app: &TestApp) -> Issuer {
        let redirect = app.url("/api/v1/auth/sso/callback");
        Self::start(
            "provider.mjs",
            &[
                ("OIDC_CLIENT_ID", CLIENT_ID),
                ("OIDC_CLIENT_SECRET", CLIENT_SECRET),
                ("OIDC_REDIRECT_URI", &redirect),
            ],
        )
        .await
    }

    /// The broken issuer; the client id picks what is wrong with its token.
    pub async fn fake() -> Issuer {
        Self::start("fake.mjs", &[]).await
    }

    /// How many requests the fake issuer has had at `path`.
    pub async fn requests(&self, path: &str) -> u64 {
        let counts: Value = reqwest::get(format!("{}/_requests", self.url))
            .await
            .expect("the fake issuer answers")
            .json()
            .await
            .expect("a JSON object");
        counts[path].as_u64().unwrap_or(0)
    }

    /// Makes the fake issuer sign with a new key, which its JWKS now holds.
    pub async fn rotate_keys(&self) {
        let r = reqwest::Client::new()
            .post(format!("{}/_rotate", self.url))
            .send()
            .await
            .expect("the fake issuer answers");
        assert!(r.status().is_success(), "{}", r.status());
    }

    async fn start(script: &str, env: &[(&str, &str)]) -> Issuer {
        let dir = oidc_dir();
        assert!(
            dir.join("node_modules/oidc-provider").is_dir(),
            "the SSO tests need Node and `npm ci` in {} (.ci/run does it)",
            dir.display()
        );
        let mut child = Command::new("node")
            .arg(script)
            .current_dir(&dir)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the issuer says where it listens within 30 s")
            .expect("stdout read")
            .expect("a line");
        // Keep reading: a closed pipe would end the provider at its next
        // line of output.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let said: Value = serde_json::from_str(&line).expect("a JSON line");
        Issuer {
            url: said["issuer"].as_str().expect("issuer").to_string(),
            _child: child,
        }
    }
}

/// The SSO configuration `PUT /settings/sso` takes, for `issuer`.
pub fn settings(slug: &str, issuer: &str, client_id: &str) -> Value {
    json!({
        "slug": slug,
        "issuerUrl": issuer,
        "clientId": client_id,
        "clientSecret": CLIENT_SECRET,
    })
}

/// Stores `body` (with `extra` merged in) as the company's configuration.
pub async fn configure(app: &TestApp, company: &TestCompany, body: Value, extra: Value) {
    let mut body = body;
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    app.put("/settings/sso", &company.key, body)
        .await
        .assert_status(200);
}
