//! The first start on an empty database makes, besides the demo company and
//! its key, an owner account whose email and password it hands out (`serve`
//! prints them) and who signs in with them.

use serde_json::json;

use super::login_with;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(the_first_start_makes_an_owner_who_signs_in_with_what_it_prints);

async fn the_first_start_makes_an_owner_who_signs_in_with_what_it_prints(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.bootstrap_demo = false).await;
    let demo = supportdesk::bootstrap::ensure_demo(&app.state.db, "http://x")
        .await
        .expect("bootstrap")
        .expect("created on an empty database");

    let r = login_with(
        &app,
        json!({"email": demo.owner_email, "password": demo.owner_password, "mode": "test"}),
        None,
    )
    .await;

    assert_eq!(r.assert_status(200)["user"]["roleName"], "owner");
}
