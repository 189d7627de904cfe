//! Scenario 15: agents signed in with a session cookie. Authentication by
//! cookie alone (an unrouted path, as scenario 3 measures a key's) against
//! `/healthz` and against a key, and the cheap GET of scenario 3 by cookie
//! against the same GET by key, each in alternating slices on one server;
//! then sign-in itself under load (argon2id is paid there and only there).
//!
//! Each agent has an allowance of its own per rate-limit window, so the
//! load spreads over [`AGENTS`] signed-in agents of the benchmark company,
//! enough that none runs out within a run.

use std::sync::Arc;

use anyhow::Context;
use futures_util::{StreamExt, TryStreamExt};
use hyper::StatusCode;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::rows::RowBuilder;
use super::{Baseline, Ctx, measure};
use crate::http::{Conn, Load, MakeRequest, Req};
use crate::setup::{Sql, psql};

const AGENTS: usize = 1024;
const PASSWORD: &str = "bench-password-123";

impl Ctx {
    pub async fn session_cookie(&mut self) -> anyhow::Result<()> {
        let emails = self.agents_with_password().await?;
        let server = self.start("s15-service", &self.service).await?;
        // Signed in a few at a time: each costs an argon2id verification.
        let cookies: Vec<String> = futures_util::stream::iter(&emails)
            .map(|email| sign_in(&server, email))
            .buffered(4)
            .try_collect()
            .await?;
        let cookies: Arc<[String]> = cookies.into();

        let by_cookie = |path: String| -> MakeRequest {
            let cookies = cookies.clone();
            Arc::new(move |seq| {
                Req::get(&path).header("cookie", cookies[seq as usize % cookies.len()].clone())
            })
        };
        let bench_key = self.key().to_string();
        let by_key = |path: String| -> MakeRequest {
            let key = bench_key.clone();
            Arc::new(move |_| Req::get(&path).key(&key))
        };

        // (a) What the cookie costs: authentication, the agent's rate limit
        // and tracing alone on a path no route serves (404), as scenario 3
        // measures a key's, against `/healthz` and against the key.
        let unrouted = "/api/v1/bench-unrouted".to_string();
        let health: MakeRequest = Arc::new(|_| Req::get("/healthz"));
        let (m, mut bases) = self
            .compare_each(
                &server,
                StatusCode::NOT_FOUND,
                by_cookie(unrouted.clone()),
                vec![
                    Baseline::Http(health, StatusCode::OK),
                    Baseline::Http(by_key(unrouted), StatusCode::NOT_FOUND),
                ],
            )
            .await?;
        let (key, health) = (
            bases.pop().context("key run")?,
            bases.pop().context("healthz run")?,
        );
        self.throughput_note("scenario 15 unrouted 404 by session cookie", &m);
        self.throughput_note("scenario 15 unrouted 404 by key", &key);
        self.throughput_note("scenario 15 /healthz", &health);
        self.rows.push(
            RowBuilder::throughput(
                "15 auth by session cookie + rate limit + tracing alone (`GET /api/v1/bench-unrouted`, 404) vs `/healthz`",
                &m,
                &health.t,
                "req/s",
                "/healthz",
            )
            .goal("≥ 85% of /healthz", 0.85)
            .build(),
        );
        self.rows.push(
            RowBuilder::throughput(
                "15 auth by session cookie alone (unrouted, 404) vs by key",
                &m,
                &key.t,
                "req/s",
                "the same request by key",
            )
            .build(),
        );

        // (b) The cheap GET of scenario 3 by cookie against the same GET by
        // key: a cookie costs no more than a key.
        let entity = format!("/api/v1/entities/{}", self.seed.entity);
        let (m, key) = self
            .compare(
                &server,
                StatusCode::OK,
                by_cookie(entity.clone()),
                Baseline::Http(by_key(entity), StatusCode::OK),
            )
            .await?;
        self.throughput_note("scenario 15 GET /entities/{id} by session cookie", &m);
        self.throughput_note("scenario 15 GET /entities/{id} by key", &key);
        self.rows.push(
            RowBuilder::throughput(
                "15 `GET /api/v1/entities/{id}` by session cookie vs by key",
                &m,
                &key.t,
                "req/s",
                "the same GET by key",
            )
            .goal("≥ 95% of the key's", 0.95)
            .build(),
        );

        // Sign-in under load: every connection signs agents in, round robin.
        let login_emails: Arc<[String]> = emails.into();
        let login: MakeRequest = Arc::new(move |seq| {
            let email = &login_emails[seq as usize % login_emails.len()];
            Req::post_json(
                "/api/v1/auth/login",
                &json!({"email": email, "password": PASSWORD}),
            )
        });
        let load = Load {
            conns: self.load.conns,
            warmup: self.load.warmup,
            duration: self.load.duration / self.slices.max(1),
        };
        let signing_in = measure(&server, load, StatusCode::OK, login).await?;
        server.stop().await;
        self.throughput_note("scenario 15 POST /auth/login", &signing_in);
        self.rows.push(
            RowBuilder::new(format!(
                "15 `POST /api/v1/auth/login` under load ({} connections)",
                load.conns
            ))
            .service(crate::stats::fmt_rate(signing_in.t.rate(), "sign-ins/s"))
            .latency_pair(&signing_in.t, None)
            .rss_kib(signing_in.peak_rss_kib)
            .build(),
        );
        Ok(())
    }

    /// The emails of [`AGENTS`] agents of the benchmark company who sign in
    /// with [`PASSWORD`]: the CLI hashes it for the first, and the others
    /// are given the same hash (one argon2id run instead of one each).
    async fn agents_with_password(&self) -> anyhow::Result<Vec<String>> {
        let emails: Vec<String> = (1..=AGENTS)
            .map(|n| format!("agent{n}@bench.example"))
            .collect();
        let mut cli = tokio::process::Command::new(&self.service.bin)
            .args([
                "users",
                "reset-password",
                "--company",
                &self.seed.company,
                "--email",
            ])
            .arg(&emails[0])
            .env("DATABASE_URL", &self.database_url)
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .context("running the CLI's users reset-password")?;
        let mut stdin = cli.stdin.take().context("the CLI's stdin")?;
        stdin.write_all(format!("{PASSWORD}\n").as_bytes()).await?;
        drop(stdin);
        anyhow::ensure!(cli.wait().await?.success(), "users reset-password failed");
        let list = emails
            .iter()
            .map(|e| format!("'{e}'"))
            .collect::<Vec<_>>()
            .join(",");
        psql(
            &self.database_url,
            Sql::Text(&format!(
                "UPDATE users SET password_hash = (SELECT password_hash FROM users \
                 WHERE company_id = '{company}' AND email = '{first}') \
                 WHERE company_id = '{company}' AND email IN ({list})",
                company = self.seed.company,
                first = emails[0],
            )),
            &[],
        )
        .await?;
        Ok(emails)
    }
}

/// Signs `email` in and answers the `Cookie` header its requests carry.
async fn sign_in(server: &crate::process::Server, email: &str) -> anyhow::Result<String> {
    let mut conn = Conn::open(0, server.addr).await?;
    let req = Req::post_json(
        "/api/v1/auth/login",
        &json!({"email": email, "password": PASSWORD}),
    );
    let (status, headers, body) = conn.send_with_headers(&req).await?;
    anyhow::ensure!(
        status == StatusCode::OK,
        "signing {email} in answered {status}: {}",
        String::from_utf8_lossy(&body[..body.len().min(200)])
    );
    let set_cookie = headers
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .context("no Set-Cookie on a sign-in")?;
    let pair = set_cookie.split(';').next().unwrap_or_default();
    anyhow::ensure!(
        pair.starts_with("sd_session="),
        "unexpected cookie {set_cookie}"
    );
    Ok(pair.to_string())
}
