//! What the team-scoped visibility tests share: a company with two teams,
//! an agent signed in whose role is limited to their teams (a member of
//! one), and a ticket (with a comment and a file) and a chat of each team
//! and of no team.

use reqwest::Method;
use serde_json::{Value, json};

use crate::accounts::{Browser, agent_with_password, sign_in};
use crate::support::{TestApp, TestCompany, TestResponse};

/// The scopes of the limited role: an agent's, and deleting tickets, so
/// that every ticket and chat route gets as far as the record.
const LIMITED_SCOPES: &[&str] = &[
    "tickets:read",
    "tickets:write",
    "tickets:delete",
    "chat:read",
    "chat:write",
    "attachments:read",
    "attachments:write",
    "users:read",
    "teams:read",
];

/// One team's records (or those of no team).
pub struct Records {
    pub ticket: String,
    pub comment: String,
    pub attachment: String,
    pub session: String,
}

impl Records {
    /// The id a route's `{id}` names: the first segment says the kind.
    pub fn named_by(&self, path: &str) -> Option<&str> {
        if path.starts_with("/tickets/{id}") {
            Some(&self.ticket)
        } else if path.starts_with("/chat/sessions/{id}") {
            Some(&self.session)
        } else if path.starts_with("/attachments/{id}") {
            Some(&self.attachment)
        } else {
            None
        }
    }

    pub fn all(&self) -> [&str; 4] {
        [&self.ticket, &self.comment, &self.attachment, &self.session]
    }
}

pub struct Desk {
    pub app: TestApp,
    pub acme: TestCompany,
    /// Signed in (TEST mode) with the role limited to their teams.
    pub limited: Browser,
    pub limited_id: String,
    /// A user of the other team.
    pub other_user: String,
    /// The limited agent's team's records.
    pub mine: Records,
    /// The other team's.
    pub theirs: Records,
    /// Records of no team.
    pub loose: Records,
}

fn id(r: &TestResponse) -> String {
    r.body["id"]
        .as_str()
        .unwrap_or_else(|| panic!("an id in {}", r.text))
        .to_string()
}

impl Desk {
    pub async fn open(app: TestApp) -> Desk {
        Desk::open_with(app, &[]).await
    }

    /// `open`, the limited role holding `more` scopes besides.
    pub async fn open_with(app: TestApp, more: &[&str]) -> Desk {
        let acme = app.company().await;
        let key = acme.key.clone();
        let scopes: Vec<&str> = LIMITED_SCOPES.iter().chain(more).copied().collect();
        app.post(
            "/roles",
            &key,
            json!({"name": "Tier 1", "scopes": scopes, "teamsOnly": true}),
        )
        .await
        .assert_status(201);
        let limited_id = agent_with_password(&app, &acme, "ada@example.com", "agent")
            .await
            .to_string();
        app.patch(
            &format!("/users/{limited_id}"),
            &key,
            json!({"roleName": "Tier 1"}),
        )
        .await
        .assert_status(200);
        let other = app
            .post(
                "/users",
                &key,
                json!({"name": "Bob", "email": "bob@example.com"}),
            )
            .await;
        let other_user = id(&other);
        let mine = team(&app, &key, "Mine", &limited_id).await;
        let theirs = team(&app, &key, "Theirs", &other_user).await;
        let entity = acme.entity.id.to_string();
        let desk_records = (
            records(&app, &key, &entity, Some(&mine)).await,
            records(&app, &key, &entity, Some(&theirs)).await,
            records(&app, &key, &entity, None).await,
        );
        let limited = sign_in(&app, "ada@example.com", "test").await;
        Desk {
            app,
            acme,
            limited,
            limited_id,
            other_user,
            mine: desk_records.0,
            theirs: desk_records.1,
            loose: desk_records.2,
        }
    }

    /// A request of the limited agent to `/api/v1{path}` (with the CSRF
    /// token).
    pub async fn limited(&self, method: Method, path: &str, body: Option<Value>) -> TestResponse {
        self.limited
            .send(&self.app, method, &format!("/api/v1{path}"), body, true)
            .await
    }
}

async fn team(app: &TestApp, key: &str, name: &str, member: &str) -> String {
    let team = app
        .post("/teams", key, json!({"name": name, "memberIds": [member]}))
        .await;
    id(&team)
}

/// A ticket (with a file and a comment) and a chat session in `team`;
/// every subject says "printer", for searches.
async fn records(app: &TestApp, key: &str, entity: &str, team: Option<&str>) -> Records {
    let upload = TestResponse::from(
        app.api(Method::POST, "/attachments?filename=a.txt", Some(key))
            .body("a file")
            .send()
            .await,
    )
    .await;
    let attachment = id(&upload);
    let mut ticket = json!({"subject": "The printer is on fire", "entityId": entity,
                            "attachmentIds": [attachment]});
    let mut session = json!({"entityId": entity, "visitorName": "Printer owner"});
    if let Some(team) = team {
        ticket["teamId"] = json!(team);
        session["teamId"] = json!(team);
    }
    let ticket = app.post("/tickets", key, ticket).await;
    ticket.assert_status(201);
    let ticket = id(&ticket);
    let comment = app
        .post(
            &format!("/tickets/{ticket}/comments"),
            key,
            json!({"body": "Have you tried turning it off?"}),
        )
        .await;
    let session = app.post("/chat/sessions", key, session).await;
    session.assert_status(201);
    Records {
        ticket,
        comment: id(&comment),
        attachment,
        session: id(&session),
    }
}
