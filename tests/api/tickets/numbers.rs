//! Ticket numbers under concurrent creates, on one node and across two.

use super::*;

backend_tests!(concurrent_creates_get_consecutive_numbers);

async fn concurrent_creates_get_consecutive_numbers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    // 50 requests in flight at once, half of them on the second node.
    let requests = (0..50).map(|i| {
        let node = if i % 2 == 0 { &app } else { &peer };
        node.post(
            "/tickets",
            &acme.key,
            json!({"subject": format!("Rush {i}"), "entityId": acme.entity.id}),
        )
    });
    let responses = futures::future::join_all(requests).await;
    let mut numbers: Vec<String> = responses
        .iter()
        .map(|r| {
            r.assert_status(201)["ticketNumber"]
                .as_str()
                .expect("number")
                .to_string()
        })
        .collect();
    numbers.sort();
    let expected: Vec<String> = (1..=50).map(|n| format!("TKT-{n:06}")).collect();
    assert_eq!(numbers, expected, "distinct and without gaps");
    let r = app.get("/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 50);
    // The sequence goes on from there.
    let next = ticket(&peer, &acme, json!({"subject": "After the rush"})).await;
    assert_eq!(next["ticketNumber"], "TKT-000051");
}
