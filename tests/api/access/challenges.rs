//! Unauthenticated requests to `/api/v1`: every 401 carries the
//! `WWW-Authenticate` challenge, and a path that merely ends in `/ws` is
//! authenticated like any other (only `/api/v1/ws` takes a token).

use reqwest::Method;
use supportdesk::auth::key;
use supportdesk::auth::{Mode, middleware::CHALLENGE};

use super::{assert_message, send};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    every_401_carries_the_challenge,
    a_path_ending_in_ws_without_a_key_is_401,
);

#[track_caller]
fn assert_challenged(response: &TestResponse) {
    assert_eq!(response.status, 401, "{}", response.text);
    assert_eq!(response.header("www-authenticate"), Some(CHALLENGE));
}

async fn every_401_carries_the_challenge(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let unknown = key::generate(Mode::Test);
    for key in [None, Some("nope"), Some(unknown.as_str())] {
        assert_challenged(&send(&app, Method::GET, "/entities", key).await);
    }
    // The socket endpoint refuses its handshake with the same challenge.
    assert_challenged(&send(&app, Method::GET, "/ws", None).await);
    assert_challenged(&send(&app, Method::GET, "/ws?token=vt_forged", None).await);
}

async fn a_path_ending_in_ws_without_a_key_is_401(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    for path in ["/tickets/ws", "/chat/sessions/ws", "/no/such/ws"] {
        let r = send(&app, Method::GET, path, None).await;
        assert_message(&r, 401, "missing_api_key", "X-API-Key header is required");
        assert_challenged(&r);
    }
}
