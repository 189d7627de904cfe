//! A person with something stored about them in every place the desk
//! keeps data (for the export and erasure tests), and the runner of a data
//! request's job.

use serde_json::{Value, json};

use super::text;
use crate::support::{TestApp, TestCompany, eventually};

/// The words that name the person, and a phrase of theirs: found nowhere
/// once they are erased.
pub const NAME: &str = "Zanzibar Quokka";
pub const EMAIL: &str = "quokka@shop.example";
pub const PHONE: &str = "+44 7700 900123";
pub const PHRASE: &str = "purple giraffe umbrella";
/// What the scan looks for (case ignored): each of the above, in a form
/// every store keeps it in (Postgres' search vectors hold single words).
pub const NEEDLES: &[&str] = &["zanzibar", "quokka", "7700 900123", "giraffe"];

/// Another customer, whose data stays.
pub const OTHER_NAME: &str = "Rosalind Pemberton";
pub const OTHER_EMAIL: &str = "rosalind@home.example";
pub const OTHER_PHRASE: &str = "teapot handle";

/// What the fixture made.
pub struct Stored {
    pub contact: String,
    pub ticket: String,
    pub file: String,
    pub other_contact: String,
    pub other_ticket: String,
}

/// Stores the person: a contact with email, phone and identity; a ticket
/// (subject, description, their comment with a file, an agent's reply
/// naming them; its creation email, written as a mail file; a webhook
/// delivery; the knowledge-base suggestions kept for its agent); a chat with their message and an agent's; a deleted ticket's
/// audit entry naming them. And another customer with a ticket.
pub async fn store(app: &TestApp, acme: &TestCompany) -> Stored {
    let hook = json!({"name": "H", "url": "http://127.0.0.1:9/hook",
        "events": ["ticket.created", "comment.created"]});
    app.post("/company/webhooks", &acme.key, hook)
        .await
        .assert_status(201);
    let contact = super::contact(
        app,
        acme,
        json!({"name": NAME, "emails": [EMAIL], "phone": PHONE, "externalId": "cust-quokka"}),
    )
    .await;
    // An article the knowledge base suggests for their ticket: the
    // suggestion kept for the agent holds the ticket's subject, their name.
    let article = json!({"title": "Where is my order", "entityId": acme.entity.id,
        "content": "Orders ship within two days.", "isPublished": true});
    app.post("/kb/articles", &acme.key, article)
        .await
        .assert_status(201);
    let ticket = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": format!("Order for {NAME}"), "entityId": acme.entity.id,
                "description": format!("My {PHRASE} broke"), "visitorEmail": EMAIL}),
        )
        .await
        .assert_status(201)
        .clone();
    let ticket_id = text(&ticket, "id").to_string();
    let file = app
        .api(reqwest::Method::POST, "/attachments", Some(&acme.key))
        .header("Content-Type", "text/plain")
        .header(
            "Content-Disposition",
            "attachment; filename=\"receipt.txt\"",
        )
        .body(format!("receipt of the {PHRASE}, {PHONE}"))
        .send()
        .await
        .expect("upload");
    let file: Value = file.json().await.expect("upload answer");
    let file_id = text(&file, "id").to_string();
    app.post(
        &format!("/tickets/{ticket_id}/comments"),
        &acme.key,
        json!({"body": format!("The {PHRASE} again, call {PHONE}"), "authorType": "customer",
            "attachmentIds": [file_id]}),
    )
    .await
    .assert_status(201);
    app.post(
        &format!("/tickets/{ticket_id}/comments"),
        &acme.key,
        json!({"body": format!("Hello {NAME}, we are on it"), "isInternal": false}),
    )
    .await
    .assert_status(201);
    let chat = super::chat_from(app, acme, EMAIL).await;
    let chat_id = text(&chat, "id").to_string();
    let agent = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Agent Smith", "email": "smith@desk.example"}),
        )
        .await
        .assert_status(201)
        .clone();
    for message in [
        json!({"body": format!("Is my {PHRASE} here?"), "senderType": "visitor"}),
        json!({"body": format!("Yes {NAME}, it is"), "senderType": "agent",
            "senderId": agent["id"]}),
    ] {
        app.post(
            &format!("/chat/sessions/{chat_id}/messages"),
            &acme.key,
            message,
        )
        .await
        .assert_status(201);
    }
    let gone = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": format!("Invoice for {NAME}"), "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201)
        .clone();
    app.delete(&format!("/tickets/{}", text(&gone, "id")), &acme.key)
        .await
        .assert_status(200);
    let other = super::contact(
        app,
        acme,
        json!({"name": OTHER_NAME, "emails": [OTHER_EMAIL]}),
    )
    .await;
    let other_ticket = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": format!("A {OTHER_PHRASE}"), "entityId": acme.entity.id,
                "visitorEmail": OTHER_EMAIL}),
        )
        .await
        .assert_status(201)
        .clone();
    // The creation emails become mail files; the webhook deliveries fail
    // (nothing listens) and stay in the log.
    supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
    seal(app, acme).await;
    Stored {
        contact: text(&contact, "id").to_string(),
        ticket: ticket_id,
        file: file_id,
        other_contact: text(&other, "id").to_string(),
        other_ticket: text(&other_ticket, "id").to_string(),
    }
}

/// Seals the company's audit entries (the sealer's pass, run now).
pub async fn seal(app: &TestApp, acme: &TestCompany) {
    supportdesk::audit::sealer::seal_company(&app.state.db, &app.state.clock, acme.company.id)
        .await
        .expect("sealed");
}

/// Asks for `what` (`export` or `erase`) on contact `id` and runs the
/// outbox until the job is done; answers the job as `GET /jobs/{id}` shows
/// it.
pub async fn run_request(app: &TestApp, acme: &TestCompany, id: &str, what: &str) -> Value {
    let job = app
        .post(&format!("/contacts/{id}/{what}"), &acme.key, json!({}))
        .await
        .assert_status(202)
        .clone();
    let path = format!("/jobs/{}", text(&job, "id"));
    eventually(&format!("the {what} job is done"), async || {
        supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
        let job = app.get(&path, &acme.key).await.assert_status(200).clone();
        (job["state"] == "done").then_some(job)
    })
    .await
}
