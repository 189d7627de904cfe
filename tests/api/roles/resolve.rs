//! What a role resolves to for a session (`roles::store::resolve`): a
//! built-in role its fixed scopes, a custom role its stored scopes and
//! `teamsOnly`, an unknown name nothing.

use supportdesk::auth::{Scope, ScopeSet};
use supportdesk::error::StoreError;
use supportdesk::roles::{BuiltInRole, store};

use super::custom_role;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_built_in_role_resolves_to_its_scopes,
    a_custom_role_resolves_to_its_scopes_and_teams_only,
    an_unknown_role_resolves_to_not_found,
);

async fn a_built_in_role_resolves_to_its_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let viewer = store::resolve(&app.state.db, acme.company.id, "viewer")
        .await
        .expect("resolved");
    assert_eq!(viewer, BuiltInRole::Viewer.resolved());
}

async fn a_custom_role_resolves_to_its_scopes_and_teams_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(&app, &acme, "Leads", &["tickets:read", "macros:read"]).await;
    app.patch(
        &super::path_of("roles", &role),
        &acme.key,
        serde_json::json!({"teamsOnly": true}),
    )
    .await
    .assert_status(200);
    let resolved = store::resolve(&app.state.db, acme.company.id, "Leads")
        .await
        .expect("resolved");
    assert_eq!(
        (resolved.scopes, resolved.teams_only),
        (
            ScopeSet::from_scopes([Scope::TicketsRead, Scope::MacrosRead]),
            true
        )
    );
}

async fn an_unknown_role_resolves_to_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    custom_role(&app, &other, "Leads", &["tickets:read"]).await;
    let resolved = store::resolve(&app.state.db, acme.company.id, "Leads").await;
    assert!(
        matches!(resolved, Err(StoreError::NotFound)),
        "{resolved:?}"
    );
}
