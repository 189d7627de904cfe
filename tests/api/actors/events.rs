//! Every event kind names its actor in its webhook body; the change feed
//! names the actor of each change it carries.

use std::collections::BTreeMap;

use chrono::Duration;
use serde_json::{Value, json};
use supportdesk::events::EVENT_NAMES;
use uuid::Uuid;

use super::{fast_policy, high_ticket, key_actor, sla_pass, system_actor};
use crate::backend_tests;
use crate::csat::{open_chat, rate};
use crate::outbound::support::create_webhook;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    every_event_kind_names_its_actor_in_its_webhook_body,
    the_change_feed_names_who_made_each_change,
    a_webhook_test_ping_names_the_key_that_asked,
);

/// Schedulers off: the passes run when the test runs them, and deliveries
/// stay queued with the bodies they will send.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// The queued delivery bodies of the company, by event name, oldest first.
async fn bodies(app: &TestApp, acme: &TestCompany) -> BTreeMap<String, Vec<Value>> {
    let rows: Vec<(String, String)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
        "SELECT event, body FROM webhook_deliveries WHERE company_id = $1 \
         ORDER BY created_at, id")
        .bind(acme.company.id)
        .fetch_all(c)
        .await
        .expect("deliveries"));
    let mut by_event: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (event, body) in rows {
        let body = serde_json::from_str(&body).expect("a JSON body");
        by_event.entry(event).or_default().push(body);
    }
    by_event
}

/// Seals the company's audit entries now (the sealer's pass).
async fn seal(app: &TestApp, acme: &TestCompany) {
    let company = acme.company.id;
    supportdesk::audit::sealer::seal_company(&app.state.db, &app.state.clock, company)
        .await
        .expect("sealed");
}

/// The snooze wake pass, as its worker runs it.
async fn wake_pass(app: &TestApp) {
    let signer = app.state.link_signer();
    supportdesk::tickets::store::wake_due(&app.state.db, app.state.clock.now(), &signer)
        .await
        .expect("wake pass");
}

/// A user of the company, made through the API.
async fn new_user(app: &TestApp, acme: &TestCompany) -> String {
    let r = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Bob", "email": format!("bob-{}@example.com", Uuid::new_v4())}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

async fn every_event_kind_names_its_actor_in_its_webhook_body(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    fast_policy(&app, &acme).await;
    // The audit entries so far (the key's minting, by the CLI's `system`)
    // are sealed before the webhook exists, so none is forwarded.
    seal(&app, &acme).await;
    create_webhook(&app, &acme.key, "http://127.0.0.1:9/hook", EVENT_NAMES).await;
    // An automation that only mails (so every ticket event stays the key's).
    let r = app
        .post(
            "/automations",
            &acme.key,
            json!({"name": "Notify", "kind": "trigger", "events": ["ticket.created"],
                   "actions": [{"type": "email", "value": {"to": "ops@example.com",
                       "subject": "New {{ticket.number}}", "body": "{{ticket.subject}}"}}]}),
        )
        .await;
    let automation =
        json!({"type": "automation", "id": r.assert_status(201)["id"], "name": "Notify"});

    // The key's changes.
    let bob = new_user(&app, &acme).await;
    let ticket = high_ticket(&app, &acme).await;
    // The SLA pass's: the first response warns at 15 minutes, breaches at 30.
    app.state.clock.advance(Duration::minutes(20));
    sla_pass(&app).await;
    app.state.clock.advance(Duration::minutes(15));
    sla_pass(&app).await;
    // The key's again: an assignment, an escalation, a reply, and a
    // resolution within its target.
    let path = format!("/tickets/{ticket}");
    app.patch(&path, &acme.key, json!({"assignedToId": bob}))
        .await
        .assert_status(200);
    app.post(
        &format!("{path}/escalate"),
        &acme.key,
        json!({"escalateToId": bob}),
    )
    .await
    .assert_status(200);
    app.post(
        &format!("{path}/comments"),
        &acme.key,
        json!({"body": "On it", "authorId": bob}),
    )
    .await
    .assert_status(201);
    let r = app
        .post(
            "/macros",
            &acme.key,
            json!({"name": "Ack", "visibility": "shared", "actions": {"note": "Seen"}}),
        )
        .await;
    let macro_id = r.assert_status(201)["id"].as_str().expect("id").to_string();
    app.post(
        &format!("{path}/macros/{macro_id}/apply"),
        &acme.key,
        json!({}),
    )
    .await
    .assert_status(200);
    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    // A chat: its visitor starts it, the key assigns and closes it, its
    // visitor rates it twice.
    let (session, token) = open_chat(&app, &acme).await;
    let chat = format!("/chat/sessions/{session}");
    app.patch(&chat, &acme.key, json!({"assigneeId": bob}))
        .await
        .assert_status(200);
    app.patch(&chat, &acme.key, json!({"status": "CLOSED"}))
        .await
        .assert_status(200);
    rate(&app, Some(&token), json!({"score": 4}))
        .await
        .assert_status(201);
    rate(&app, Some(&token), json!({"score": 2}))
        .await
        .assert_status(200);
    // Two more tickets: the key links them, splits a comment off the
    // other and merges the first into it; the other, snoozed, is woken by
    // the wake pass.
    let other = high_ticket(&app, &acme).await;
    app.post(
        &format!("{path}/links"),
        &acme.key,
        json!({"ticketId": other, "kind": "related"}),
    )
    .await
    .assert_status(201);
    let said = app
        .post(
            &format!("/tickets/{other}/comments"),
            &acme.key,
            json!({"body": "Another matter"}),
        )
        .await;
    let said = said.assert_status(201)["id"].clone();
    app.post(
        &format!("/tickets/{other}/split"),
        &acme.key,
        json!({"commentId": said}),
    )
    .await
    .assert_status(201);
    app.post(&format!("{path}/merge"), &acme.key, json!({"into": other}))
        .await
        .assert_status(200);
    let until = (app.state.clock.now().0 + Duration::minutes(5)).to_rfc3339();
    app.patch(
        &format!("/tickets/{other}"),
        &acme.key,
        json!({"snoozedUntil": until}),
    )
    .await
    .assert_status(200);
    app.state.clock.advance(Duration::minutes(5));
    wake_pass(&app).await;
    // A contact the key makes, and another it merges into it.
    let mut contacts = Vec::new();
    for name in ["Kim", "Kim L."] {
        let r = app
            .post("/contacts", &acme.key, json!({"name": name}))
            .await;
        contacts.push(r.assert_status(201)["id"].clone());
    }
    let merge = format!("/contacts/{}/merge", contacts[1].as_str().expect("id"));
    app.post(&merge, &acme.key, json!({"into": contacts[0]}))
        .await
        .assert_status(200);
    // A contact the key has erased (a job, acting as the key).
    let erased = app
        .post("/contacts", &acme.key, json!({"name": "Pat Erased"}))
        .await
        .assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_owned();
    crate::contacts::person::run_request(&app, &acme, &erased, "erase").await;
    // A message and a bounce arriving on an email channel, of another
    // company: what a customer's mail makes (its ticket, its contact) is
    // the service's doing, not the key's.
    let mailed = app.company().await;
    create_webhook(&app, &mailed.key, "http://127.0.0.1:9/hook", EVENT_NAMES).await;
    let channel = app
        .post(
            "/channels/email",
            &mailed.key,
            json!({"address": "support@acme.example", "entityId": mailed.entity.id,
                   "inbound": {"kind": "postmark", "secret": "s3cret"}}),
        )
        .await
        .assert_status(201)["id"]
        .as_str()
        .expect("id")
        .parse::<Uuid>()
        .expect("uuid");
    let tenant = supportdesk::auth::Tenant::new(mailed.company.id, supportdesk::auth::Mode::Test);
    let channel = supportdesk::email::store::channels::find(&app.state.db, &tenant, channel)
        .await
        .expect("channel");
    let handles = supportdesk::sequences::email_inbound::Handles::from(&app.state);
    for raw in [
        "From: ann@shop.example\r\nTo: support@acme.example\r\nSubject: Help\r\n\
         Message-ID: <help@shop.example>\r\n\r\nMy order is late.\r\n",
        "From: MAILER-DAEMON@mx.example\r\nTo: support@acme.example\r\nSubject: Undelivered\r\n\
         Message-ID: <dsn@mx.example>\r\nContent-Type: multipart/report; \
         report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n\
         failed\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n\
         Reporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; gone@shop.example\r\n\
         Action: failed\r\n--b--\r\n",
    ] {
        supportdesk::sequences::email_inbound::receive(&handles, &tenant, &channel, raw.as_bytes())
            .await
            .expect("received");
    }
    // The automation's pass, on the tickets made above.
    supportdesk::sequences::automations::run_triggers(
        &app.state.db,
        app.state.clock.now(),
        &app.state.link_signer(),
    )
    .await
    .expect("trigger pass");
    // The key's audit entries (the webhook, the user), sealed and forwarded.
    seal(&app, &acme).await;

    let visitor = json!({"type": "visitor", "id": session, "name": "Zoe"});
    let system = system_actor();
    let expected = BTreeMap::from([
        ("ticket.created", &key),
        ("ticket.updated", &key),
        ("ticket.resolved", &key),
        ("ticket.escalated", &key),
        ("comment.created", &key),
        ("user.created", &key),
        ("chat.assigned", &key),
        ("chat.started", &visitor),
        ("chat.closed", &key),
        ("sla.warning", &system),
        ("sla.breached", &system),
        ("sla.fulfilled", &key),
        ("csat.submitted", &visitor),
        ("csat.updated", &visitor),
        ("contact.created", &key),
        ("contact.merged", &key),
        ("audit.entry", &key),
        ("macro.applied", &key),
        ("ticket.linked", &key),
        ("ticket.merged", &key),
        ("ticket.split", &key),
        ("ticket.unsnoozed", &system),
        ("automation.fired", &automation),
        ("contact.erased", &key),
        ("email.received", &system),
        ("email.bounced", &system),
    ]);
    let names: Vec<&str> = expected.keys().copied().collect();
    let mut every: Vec<&str> = EVENT_NAMES.to_vec();
    every.sort_unstable();
    assert_eq!(names, every, "the table names every event kind");
    let bodies_of_acme = bodies(&app, &acme).await;
    let bodies_of_mailed = bodies(&app, &mailed).await;
    for (name, actor) in expected {
        let bodies = match name.starts_with("email.") {
            true => &bodies_of_mailed,
            false => &bodies_of_acme,
        };
        let sent = bodies
            .get(name)
            .unwrap_or_else(|| panic!("no {name} was queued"));
        // The erased contact's own events are tombstones now: they name
        // no one, the person least of all.
        let tombstone = json!({"erased": true});
        let named: Vec<&Value> = sent.iter().filter(|body| **body != tombstone).collect();
        assert!(!named.is_empty(), "only tombstones of {name}");
        for body in named {
            assert_eq!(&body["actor"], actor, "{name}: {body}");
        }
    }
}

async fn the_change_feed_names_who_made_each_change(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let ticket = high_ticket(&app, &acme).await;
    let (session, _) = open_chat(&app, &acme).await;

    let r = app.get("/changes", &acme.key).await;
    let entries = r.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .clone();
    let actor_of = |id: &str| {
        entries
            .iter()
            .find(|entry| entry["id"] == id)
            .unwrap_or_else(|| panic!("an entry of {id}: {entries:?}"))["actor"]
            .clone()
    };
    assert_eq!(actor_of(&ticket), key);
    assert_eq!(
        actor_of(&session),
        json!({"type": "visitor", "id": session, "name": "Zoe"})
    );
}

async fn a_webhook_test_ping_names_the_key_that_asked(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let (webhook, _) = create_webhook(
        &app,
        &acme.key,
        "http://127.0.0.1:9/hook",
        &["user.created"],
    )
    .await;

    app.post(
        &format!("/company/webhooks/{webhook}/test"),
        &acme.key,
        json!({}),
    )
    .await;

    let bodies = bodies(&app, &acme).await;
    let ping = &bodies.get("webhook.test").expect("the ping")[0];
    assert_eq!(ping["actor"], key);
}
