//! TOTP secrets are sealed at rest; one stored before sealing still signs
//! in, and is sealed at that first use.

use crate::accounts::login_with;
use crate::accounts::totp::{code, login, with_totp};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_totp_secret_is_stored_sealed,
    a_secret_stored_before_sealing_signs_in_and_is_sealed_then,
);

/// ada@example.com's stored TOTP secret.
async fn stored_secret(app: &TestApp) -> String {
    supportdesk::db::Query::new("SELECT totp_secret FROM users WHERE email = $1")
        .bind("ada@example.com")
        .fetch_scalar::<Option<String>>(&app.state.db)
        .await
        .expect("the user")
        .expect("a secret")
}

async fn a_totp_secret_is_stored_sealed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (secret, _) = with_totp(&app).await;

    let stored = stored_secret(&app).await;

    assert!(stored.starts_with("sealed1:"), "{stored}");
    assert!(!stored.contains(&secret), "{stored}");
    let current = code(&app, &secret);
    login_with(&app, login(Some(&current)), None)
        .await
        .assert_status(200);
}

async fn a_secret_stored_before_sealing_signs_in_and_is_sealed_then(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (secret, _) = with_totp(&app).await;
    // As a build before sealing stored it: the base32 secret itself.
    supportdesk::db::Query::new("UPDATE users SET totp_secret = $1 WHERE email = $2")
        .bind(&secret)
        .bind("ada@example.com")
        .execute(&app.state.db)
        .await
        .expect("stored plain");

    let current = code(&app, &secret);
    let signed_in = login_with(&app, login(Some(&current)), None).await;

    signed_in.assert_status(200);
    let stored = stored_secret(&app).await;
    assert!(stored.starts_with("sealed1:"), "{stored}");
}
