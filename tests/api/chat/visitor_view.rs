//! Visitors see an agent's name, never the agent's user id: not in the
//! widget's REST answers, not in any frame of the visitor's socket (the
//! session's messages, its assignment and status, typing, presence).
//! Agents' sockets get the same events with the ids, as before.

use serde_json::{Value, json};
use uuid::Uuid;

use super::client::Client;
use super::{agent, id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    a_visitor_reads_an_agents_message_with_the_name_only,
    a_visitor_hears_the_assignment_and_the_session_without_the_assignee_id,
    a_visitor_hears_an_agent_typing_without_the_user_id,
    a_visitor_hears_presence_by_name_only,
    the_widget_reads_a_chat_without_user_ids,
    an_agents_socket_still_gets_the_user_ids,
);

/// A company with its agent Ann, a chat, and the chat's visitor socket
/// subscribed to the session.
struct Chat {
    app: TestApp,
    acme: TestCompany,
    ann: Uuid,
    id: String,
    token: String,
    visitor: Client,
}

async fn chat(backend: Backend) -> Chat {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let id = id_of(&session);
    let token = session["visitorToken"].as_str().expect("token").to_string();
    let mut visitor = Client::token(&app, &token).await;
    visitor.subscribe(&format!("session:{id}")).await;
    Chat {
        app,
        acme,
        ann,
        id,
        token,
        visitor,
    }
}

impl Chat {
    async fn agent_says(&self, body: &str) {
        self.app
            .post(
                &format!("/chat/sessions/{}/messages", self.id),
                &self.acme.key,
                json!({"body": body, "senderType": "agent", "senderId": self.ann}),
            )
            .await
            .assert_status(201);
    }

    async fn assign_to_ann(&self) {
        self.app
            .patch(
                &format!("/chat/sessions/{}", self.id),
                &self.acme.key,
                json!({"assigneeId": self.ann}),
            )
            .await
            .assert_status(200);
    }
}

#[track_caller]
fn assert_no_user_id(value: &Value, ann: Uuid) {
    assert!(
        !value.to_string().contains(&ann.to_string()),
        "no user id in {value}"
    );
}

async fn a_visitor_reads_an_agents_message_with_the_name_only(backend: Backend) {
    let mut chat = chat(backend).await;
    chat.agent_says("Hello").await;
    let frame = chat.visitor.next_of("chat.message").await;
    assert_eq!(frame["data"]["senderName"], "Ann", "{frame}");
    assert_no_user_id(&frame, chat.ann);
}

async fn a_visitor_hears_the_assignment_and_the_session_without_the_assignee_id(backend: Backend) {
    let mut chat = chat(backend).await;
    chat.assign_to_ann().await;
    let assignment = chat.visitor.next_of("assignment").await;
    assert_eq!(
        assignment["data"],
        json!({"sessionId": chat.id, "assigned": true, "assigneeName": "Ann"})
    );
    chat.app
        .patch(
            &format!("/chat/sessions/{}", chat.id),
            &chat.acme.key,
            json!({"status": "CLOSED"}),
        )
        .await
        .assert_status(200);
    let closed = chat.visitor.next_of("chat.session").await;
    assert_eq!(closed["data"]["status"], "CLOSED", "{closed}");
    assert_no_user_id(&closed, chat.ann);
}

async fn a_visitor_hears_an_agent_typing_without_the_user_id(backend: Backend) {
    let mut chat = chat(backend).await;
    let mut console = Client::key(&chat.app, &chat.acme.key).await;
    console
        .send(json!({"type": "typing", "sessionId": chat.id, "senderId": chat.ann}))
        .await;
    let typing = chat.visitor.next_of("typing").await;
    assert_eq!(
        typing["data"],
        json!({"sessionId": chat.id, "senderType": "agent"})
    );
}

async fn a_visitor_hears_presence_by_name_only(backend: Backend) {
    let mut chat = chat(backend).await;
    chat.visitor.subscribe("presence").await;
    chat.app
        .post(
            "/chat/agent-presence",
            &chat.acme.key,
            json!({"userId": chat.ann}),
        )
        .await
        .assert_status(200);
    let presence = chat.visitor.next_of("presence").await;
    assert_eq!(presence["data"]["name"], "Ann", "{presence}");
    assert_eq!(presence["data"]["online"], true, "{presence}");
    assert_no_user_id(&presence, chat.ann);
}

async fn the_widget_reads_a_chat_without_user_ids(backend: Backend) {
    let chat = chat(backend).await;
    chat.assign_to_ann().await;
    chat.agent_says("Hello").await;
    let read = TestResponse::from(
        chat.app
            .client
            .get(chat.app.url(&format!("/widget/v1/sessions/{}", chat.id)))
            .header("Authorization", format!("Bearer {}", chat.token))
            .send()
            .await,
    )
    .await;
    let body = read.assert_status(200);
    assert_eq!(body["messages"][0]["senderName"], "Ann", "{body}");
    assert!(body["assignedAt"].is_string(), "{body}");
    assert_no_user_id(body, chat.ann);
}

async fn an_agents_socket_still_gets_the_user_ids(backend: Backend) {
    let chat = chat(backend).await;
    let mut console = Client::key(&chat.app, &chat.acme.key).await;
    console.subscribe(&format!("session:{}", chat.id)).await;
    chat.assign_to_ann().await;
    let assignment = console.next_of("assignment").await;
    assert_eq!(assignment["data"]["assigneeId"], json!(chat.ann));
    chat.agent_says("Hello").await;
    let message = console.next_of("chat.message").await;
    assert_eq!(message["data"]["senderId"], json!(chat.ann));
}
