//! What the service keeps of a provider: its discovery document and JWKS,
//! per issuer for a while, fetched again at once when a token names a key
//! it does not hold. Counted at the fake issuer (tests/oidc/fake.mjs),
//! which tells how many requests each of its paths had.

use chrono::Duration;

use super::forged::{configured, sign_in_at};
use super::provider::Issuer;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    two_sign_ins_fetch_the_keys_once,
    a_token_signed_by_a_new_key_fetches_the_keys_again,
    the_keys_are_fetched_again_once_kept_their_time,
);

const JWKS: &str = "/jwks";

async fn two_sign_ins_fetch_the_keys_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;
    let slug = configured(&app, &issuer, "good").await;

    sign_in_at(&app, &slug).await.assert_status(200);
    sign_in_at(&app, &slug).await.assert_status(200);

    assert_eq!(issuer.requests(JWKS).await, 1);
}

async fn a_token_signed_by_a_new_key_fetches_the_keys_again(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;
    let slug = configured(&app, &issuer, "good").await;
    sign_in_at(&app, &slug).await.assert_status(200);
    issuer.rotate_keys().await;

    let r = sign_in_at(&app, &slug).await;

    assert_eq!(r.assert_status(200)["user"]["email"], "sso.fake@acme.test");
    assert_eq!(issuer.requests(JWKS).await, 2);
}

async fn the_keys_are_fetched_again_once_kept_their_time(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;
    let slug = configured(&app, &issuer, "good").await;
    sign_in_at(&app, &slug).await.assert_status(200);
    let kept = supportdesk::sso::providers::KEEP;
    app.state
        .clock
        .advance(Duration::from_std(kept).expect("a short time") + Duration::seconds(1));

    sign_in_at(&app, &slug).await.assert_status(200);

    assert_eq!(issuer.requests(JWKS).await, 2);
}
