//! The team resource: create, read, list, update, delete; validation; the
//! tenant's own members and entities only; scopes; the entity's default
//! team; a session's team.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{agents, chat, routed_team};
use crate::backend_tests;
use crate::chat::id_of;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    a_team_is_created_read_listed_updated_and_deleted,
    bad_team_fields_are_each_named_and_nothing_is_created,
    members_and_entities_must_be_the_companys,
    teams_need_their_scopes,
    a_new_chat_joins_the_entitys_default_team_and_lists_filter_by_team,
    the_entity_list_shows_each_entitys_default_team,
);

async fn a_team_is_created_read_listed_updated_and_deleted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 2).await;
    let key = acme.key.as_str();

    let created = app
        .post(
            "/teams",
            key,
            json!({"name": " Billing ", "memberIds": members}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = id_of(&created);
    let path = format!("/teams/{id}");
    assert_eq!(created["name"], "Billing");
    assert_eq!(created["memberIds"], json!(members));
    assert_eq!(created["entityIds"], json!([]));
    assert_eq!(
        created["routing"],
        json!({"mode": "manual", "chatCapacity": 3, "ticketCapacity": 20, "includeTickets": false})
    );
    assert_eq!(created["queueLength"], 0);
    assert_eq!(
        app.get(&path, key).await.assert_status(200)["id"],
        created["id"]
    );
    assert_eq!(
        app.get("/teams", key).await.assert_status(200)["data"][0]["id"],
        created["id"]
    );

    let updated = app
        .patch(
            &path,
            key,
            json!({"memberIds": [members[0]], "entityIds": [acme.entity.id],
                   "routing": {"mode": "round_robin", "chatCapacity": 5}}),
        )
        .await
        .assert_status(200)
        .clone();
    assert_eq!(updated["memberIds"], json!([members[0]]));
    assert_eq!(updated["entityIds"], json!([acme.entity.id]));
    assert_eq!(updated["routing"]["mode"], "round_robin");
    assert_eq!(updated["routing"]["chatCapacity"], 5);
    assert_eq!(updated["routing"]["ticketCapacity"], 20);

    app.delete(&path, key).await.assert_status(204);
    app.get(&path, key).await.assert_error(404, "not_found");
}

async fn bad_team_fields_are_each_named_and_nothing_is_created(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let refused = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "", "memberIds": ["nope"], "entityIds": 3,
                   "routing": {"mode": "random", "chatCapacity": -1}}),
        )
        .await;

    assert_invalid(
        &refused,
        &[
            "name",
            "memberIds",
            "entityIds",
            "routing.mode",
            "routing.chatCapacity",
        ],
    );
    assert_eq!(
        app.get("/teams", &acme.key).await.assert_status(200)["data"],
        json!([])
    );
}

async fn members_and_entities_must_be_the_companys(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let strangers = agents(&app, &other, 1).await;

    let foreign_member = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "T", "memberIds": strangers}),
        )
        .await;
    let foreign_entity = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "T", "memberIds": [], "entityIds": [other.entity.id]}),
        )
        .await;
    let theirs = routed_team(&app, &other, &strangers, "manual", 1).await;
    let foreign_team = app.get(&format!("/teams/{theirs}"), &acme.key).await;

    assert_invalid(&foreign_member, &["memberIds"]);
    assert_invalid(&foreign_entity, &["entityIds"]);
    foreign_team.assert_error(404, "not_found");
}

async fn teams_need_their_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let reader = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::TeamsRead]),
        )
        .await;
    let none = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ChatRead]),
        )
        .await;

    let read = app.get("/teams", &reader).await;
    let write = app
        .post("/teams", &reader, json!({"name": "T", "memberIds": []}))
        .await;
    let unscoped = app.get("/teams", &none).await;

    read.assert_status(200);
    write.assert_error(403, "insufficient_scope");
    unscoped.assert_error(403, "insufficient_scope");
}

async fn a_new_chat_joins_the_entitys_default_team_and_lists_filter_by_team(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &members, "manual", 1).await;
    let entity = app
        .get(&format!("/entities/{}", acme.entity.id), &acme.key)
        .await
        .assert_status(200)
        .clone();
    let created = chat(&app, &acme).await;
    let listed = app
        .get(&format!("/chat/sessions?teamId={team}"), &acme.key)
        .await
        .assert_status(200)
        .clone();

    assert_eq!(entity["defaultTeamId"], json!(team));
    assert_eq!(created["teamId"], json!(team));
    assert_eq!(listed["total"], 1);
}

async fn the_entity_list_shows_each_entitys_default_team(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &members, "manual", 1).await;

    let listed = app
        .get("/entities", &acme.key)
        .await
        .assert_status(200)
        .clone();

    let main = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|entity| entity["id"] == json!(acme.entity.id))
        .expect("the entity is listed");
    assert_eq!(main["defaultTeamId"], json!(team));
}
