//! `GET /tickets?tag=…&anyTag=…`: exactly the tickets carrying the tags,
//! with the other filters and paging, and the right `total`.

use super::*;

backend_tests!(
    tag_filters_give_exactly_the_matching_tickets,
    bad_tag_filters_are_400
);

/// Ids of every ticket a filtered list answers, page by page, and the
/// `total` each page reported.
async fn listed(app: &TestApp, key: &str, query: &str) -> (Vec<String>, Vec<i64>) {
    let (mut ids, mut totals) = (Vec::new(), Vec::new());
    for offset in (0..).step_by(3) {
        let r = app
            .get(&format!("/tickets?{query}&limit=3&offset={offset}"), key)
            .await;
        let body = r.assert_status(200);
        totals.push(body["total"].as_i64().expect("total"));
        let data = body["data"].as_array().expect("data");
        if data.is_empty() {
            break;
        }
        ids.extend(data.iter().map(id_of));
    }
    (ids, totals)
}

async fn tag_filters_give_exactly_the_matching_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    // Every combination of three tags, twice: once OPEN, once HIGH.
    let all_tags = ["vip", "billing", "eu"];
    let mut tickets: Vec<(String, Vec<&str>, &str)> = Vec::new();
    for mask in 0..8u32 {
        let tags: Vec<&str> = (0..3)
            .filter(|bit| mask & (1 << bit) != 0)
            .map(|bit| all_tags[bit])
            .collect();
        for priority in ["LOW", "HIGH"] {
            let t = ticket(&app, &acme, json!({"tags": tags, "priority": priority})).await;
            tickets.push((id_of(&t), tags.clone(), priority));
        }
    }
    // Another company's tickets with the same tags stay out.
    ticket(&app, &other, json!({"tags": all_tags})).await;

    type Want = fn(&[&str], &str) -> bool;
    let cases: [(&str, Want); 6] = [
        ("tag=vip", |t, _| t.contains(&"vip")),
        ("tag=vip&tag=billing", |t, _| {
            t.contains(&"vip") && t.contains(&"billing")
        }),
        ("tag=VIP,billing&tag=eu", |t, _| t.len() == 3),
        ("anyTag=billing,eu", |t, _| {
            t.contains(&"billing") || t.contains(&"eu")
        }),
        ("tag=vip&anyTag=billing,eu&priority=HIGH", |t, p| {
            t.contains(&"vip") && (t.contains(&"billing") || t.contains(&"eu")) && p == "HIGH"
        }),
        ("tag=nobody", |_, _| false),
    ];
    for (query, want) in cases {
        // Newest first: the reverse of creation order.
        let expected: Vec<String> = tickets
            .iter()
            .rev()
            .filter(|(_, tags, priority)| want(tags, priority))
            .map(|(id, _, _)| id.clone())
            .collect();
        let (ids, totals) = listed(&app, &acme.key, query).await;
        assert_eq!(ids, expected, "{query}");
        assert!(
            totals.iter().all(|t| *t == expected.len() as i64),
            "{query}: totals {totals:?}, expected {}",
            expected.len()
        );
    }
}

async fn bad_tag_filters_are_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app.get("/tickets?tag=a%20b", &acme.key).await;
    assert_invalid(&r, &["tag"]);
    let r = app.get("/tickets?anyTag=ok,no!", &acme.key).await;
    assert_invalid(&r, &["anyTag"]);
}
