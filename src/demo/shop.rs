//! The demo's made-up shop ("Teapot Emporium"): `index.html` of the demo,
//! a customer's page that embeds the widget with the one script tag of the
//! docs. It is served on its own port (another origin than the API), so the
//! widget runs cross-origin exactly as on a customer's site, under a CSP
//! that allows the API's origin in `script-src` and `frame-src` only.
//!
//! Its "sign in as a customer" button asks `identity-token` for a signed
//! identity token, standing in for the shop's own backend. That route, like
//! the shop's port, exists only when the demo is enabled: it signs tokens
//! with the demo company's identity secret for anyone holding the public
//! widget key, which only a demo may do, and for no other company.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Assets, store};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;
use crate::time::Clock;
use crate::widget::{identity, store as widget_store};

/// The customer the sign-in button signs in. A fixed, `demo-` prefixed
/// `sub`: the demo can never speak for a real customer of the shop.
const CUSTOMER_ID: &str = "demo-customer-1";
const CUSTOMER_NAME: &str = "Dana Demo";
const CUSTOMER_EMAIL: &str = "dana@teapots.example";
/// How long a demo identity token verifies (at most 24 h is accepted).
const TOKEN_LIFETIME_SECS: i64 = 3600;

/// The shop's own origin: its page, its files, its "backend".
pub fn router(api_origin: Arc<str>) -> Router<AppState> {
    let page_origin = api_origin.clone();
    Router::new()
        .route(
            "/",
            get(move |State(db): State<Db>| async move { page(&db, &page_origin).await }),
        )
        .route("/identity-token", post(identity_token))
        .route(
            "/{*path}",
            get(
                move |Path(path): Path<String>, headers: HeaderMap| async move {
                    file(&path, &headers, &api_origin)
                },
            ),
        )
}

/// The shop page: the script tag names the API's origin and the TEST
/// widget key of the demo company's entity (none without a demo company).
pub async fn page(db: &Db, api_origin: &str) -> Response {
    let widget_key = match store::demo_widget_key(db).await {
        Ok(key) => key.unwrap_or_default(),
        Err(error) => return ApiError::from(error).into_response(),
    };
    let Some(template) = Assets::get("index.html") else {
        return ApiError::not_found().into_response();
    };
    let html = String::from_utf8_lossy(&template.data)
        .replace("{{API_ORIGIN}}", &escape(api_origin))
        .replace("{{WIDGET_KEY}}", &escape(&widget_key));
    let mut response = Html(html).into_response();
    headers(response.headers_mut(), api_origin);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The page's styles, scripts and icon, from the demo's files.
fn file(path: &str, request: &HeaderMap, api_origin: &str) -> Response {
    let Some(mut response) = crate::embedded::serve::<Assets>(path, request) else {
        return ApiError::not_found().into_response();
    };
    headers(response.headers_mut(), api_origin);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The policy a customer's page would have: its own origin for everything,
/// and the API's origin in exactly the two directives the docs name.
fn headers(out: &mut HeaderMap, api_origin: &str) {
    let csp = format!(
        "default-src 'self'; script-src 'self' {api_origin}; frame-src {api_origin}; \
         img-src 'self' data:; base-uri 'none'; object-src 'none'; frame-ancestors 'self'"
    );
    if let Ok(value) = HeaderValue::from_str(&csp) {
        out.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    out.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenRequest {
    widget_key: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoToken {
    token: String,
    visitor: DemoVisitor,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DemoVisitor {
    external_id: &'static str,
    email: &'static str,
    name: &'static str,
}

/// A token for the demo customer, signed with the entity's current
/// identity secret (one is made when the entity has none yet). The demo
/// company's entity and its TEST widget key only: the demo signs for no
/// one else, writes no secret into anyone else's entity and never touches
/// live data.
pub async fn identity_token(
    State(db): State<Db>,
    State(clock): State<Clock>,
    Json(request): Json<TokenRequest>,
) -> ApiResult<Json<DemoToken>> {
    let key = request.widget_key.trim();
    let not_the_demo = || {
        ApiError::invalid_field(
            "widgetKey",
            "is not the TEST widget key of the demo company's entity",
        )
    };
    // The demo entity's TEST key (`wk_test_…`) resolves to that entity in
    // TEST mode: comparing the key is the whole check.
    if store::demo_widget_key(&db).await?.as_deref() != Some(key) {
        return Err(not_the_demo());
    }
    let target = widget_store::resolve(&db, key, clock.now())
        .await?
        .ok_or_else(not_the_demo)?;
    let secret = match target.secrets.first() {
        Some(secret) => secret.clone(),
        None => {
            let secret = identity::new_secret();
            widget_store::rotate_secret(
                &db,
                target.tenant.company_id,
                target.entity_id,
                &secret,
                Duration::ZERO,
                clock.now(),
            )
            .await?;
            secret
        }
    };
    let issued = clock.now().0.timestamp();
    let claims = json!({
        "sub": CUSTOMER_ID,
        "email": CUSTOMER_EMAIL,
        "name": CUSTOMER_NAME,
        "iat": issued,
        "exp": issued + TOKEN_LIFETIME_SECS,
    });
    Ok(Json(DemoToken {
        token: identity::sign(&claims, &secret),
        visitor: DemoVisitor {
            external_id: CUSTOMER_ID,
            email: CUSTOMER_EMAIL,
            name: CUSTOMER_NAME,
        },
    }))
}
