//! Roles (issue 50): the built-in roles and a company's custom roles
//! (`crud`), the role a user holds (`users`), what a role resolves to for a
//! session (`resolve`), the scopes that came with them (`scopes`) and a
//! role limited to the agent's teams (`teams_only`, `teams_only_sockets`,
//! and on the agent's personal key, `teams_only_keys`).
//! Shared helpers here.

mod crud;
mod resolve;
mod scopes;
mod scopes_cut;
pub mod team_desk;
mod teams_only;
mod teams_only_keys;
mod teams_only_sockets;
mod users;

use serde_json::{Value, json};

use crate::support::{TestApp, TestCompany};

/// Creates a custom role of the company; answers it.
async fn custom_role(app: &TestApp, acme: &TestCompany, name: &str, scopes: &[&str]) -> Value {
    app.post("/roles", &acme.key, json!({"name": name, "scopes": scopes}))
        .await
        .assert_status(201)
        .clone()
}

/// The path of a role or a user answered by the API.
fn path_of(kind: &str, record: &Value) -> String {
    format!("/{kind}/{}", record["id"].as_str().expect("id"))
}

/// Creates a user of the company holding `role_name`; answers it.
async fn user_holding(app: &TestApp, acme: &TestCompany, email: &str, role_name: &str) -> Value {
    app.post(
        "/users",
        &acme.key,
        json!({"name": "Ada", "email": email, "roleName": role_name}),
    )
    .await
    .assert_status(201)
    .clone()
}
