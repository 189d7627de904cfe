//! A browser without a browser: follows redirects by hand, keeps the
//! provider's cookies, and fills in the development sign-in and consent
//! forms of `oidc-provider`.

use std::collections::BTreeMap;

use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use reqwest::{StatusCode, Url};

use crate::support::{TestApp, TestResponse};

pub struct Browser {
    client: reqwest::Client,
    /// The provider's cookies (our service sets none before the callback).
    cookies: BTreeMap<String, String>,
}

impl Browser {
    pub fn new() -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookies: BTreeMap::new(),
        }
    }

    /// Starts a sign-in at `slug`'s start path and goes through the
    /// provider (signing in as `login`, consenting) until it sends the
    /// browser back to our callback: that URL, not yet visited.
    pub async fn through_provider(&mut self, app: &TestApp, slug: &str, login: &str) -> String {
        let callback = app.url("/api/v1/auth/sso/callback");
        let start = app.url(&format!("/api/v1/auth/sso/{slug}/start"));
        let response = self.client.get(&start).send().await.expect("start");
        assert_eq!(response.status(), StatusCode::FOUND, "start answers 302");
        let mut url = location(&start, &response);
        for _ in 0..20 {
            if url.starts_with(&callback) {
                return url;
            }
            let response = self.send(self.client.get(&url)).await;
            if response.status().is_redirection() {
                url = location(&url, &response);
                continue;
            }
            assert_eq!(response.status(), StatusCode::OK, "provider page {url}");
            let page = response.text().await.expect("page");
            let action = attribute(&page, "action=\"").expect("a form");
            let action = Url::parse(&url)
                .and_then(|base| base.join(&action))
                .expect("form action")
                .to_string();
            let prompt = attribute(&page, "name=\"prompt\" value=\"").expect("a prompt");
            let form: String = match prompt.as_str() {
                "login" => form_urlencoded::Serializer::new(String::new())
                    .append_pair("prompt", "login")
                    .append_pair("login", login)
                    .append_pair("password", "any")
                    .finish(),
                _ => form_urlencoded::Serializer::new(String::new())
                    .append_pair("prompt", &prompt)
                    .finish(),
            };
            let posted = self
                .send(
                    self.client
                        .post(&action)
                        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                        .body(form),
                )
                .await;
            assert!(posted.status().is_redirection(), "form {prompt} accepted");
            url = location(&action, &posted);
        }
        panic!("the provider never sent the browser back to {callback}");
    }

    /// Visits our callback (as the provider's redirect made the browser do).
    pub async fn visit(&self, url: &str) -> TestResponse {
        TestResponse::from(self.client.get(url).send().await).await
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> reqwest::Response {
        let cookie = self
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        let response = request
            .header(COOKIE, cookie)
            .send()
            .await
            .expect("provider reached");
        for set in response.headers().get_all(SET_COOKIE) {
            let set = set.to_str().expect("cookie text");
            let Some((name, value)) = set.split(';').next().and_then(|p| p.split_once('=')) else {
                continue;
            };
            if value.is_empty()
                || set
                    .to_ascii_lowercase()
                    .contains("expires=thu, 01 jan 1970")
            {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        response
    }
}

/// The redirect's target, resolved against `base`.
fn location(base: &str, response: &reqwest::Response) -> String {
    let to = response
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .expect("a Location");
    Url::parse(base)
        .and_then(|base| base.join(to))
        .expect("a URL")
        .to_string()
}

/// The text after `marker` up to the next `"`, HTML entities of `&` undone.
fn attribute(page: &str, marker: &str) -> Option<String> {
    let start = page.find(marker)? + marker.len();
    let end = page[start..].find('"')? + start;
    Some(page[start..end].replace("&amp;", "&"))
}

/// `url` with its `name` query parameter set to `value`.
pub fn with_param(url: &str, name: &str, value: &str) -> String {
    let mut url = Url::parse(url).expect("a URL");
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == name {
                value.to_string()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
    url.to_string()
}
