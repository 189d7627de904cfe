//! Search text is words, never syntax: FTS operators, quotes and a NUL
//! byte answer 200 on both lists (never a 500; operators are plain words),
//! and punctuation around a word finds what the word finds.

use super::*;

backend_tests!(fts_syntax_and_nul_in_q_answer_200_like_plain_words);

const SYNTAX: [&str; 14] = [
    "\"",
    "*",
    ":",
    "&",
    "|",
    "!",
    "(",
    "-",
    "NEAR",
    "AND",
    "\0",
    "'",
    "^",
    "{subject}",
];

async fn fts_syntax_and_nul_in_q_answer_200_like_plain_words(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, json!({"subject": "Router reboots"})).await;
    let body = json!({"entityId": acme.entity.id, "visitorName": "Router Fan"});
    let session = id_of(
        app.post("/chat/sessions", &acme.key, body)
            .await
            .assert_status(201),
    );

    for syntax in SYNTAX {
        for list in ["/tickets", "/chat/sessions"] {
            // Alone: no searchable word, so nothing matches (and no 500).
            let alone = app
                .get(&format!("{list}?q={}", encoded(syntax)), &acme.key)
                .await;
            alone.assert_status(200);
            if syntax.chars().any(char::is_alphanumeric) {
                continue;
            }
            // Punctuation around and inside a word: the word's results.
            let wrapped = format!("{syntax}router{syntax} {syntax}(");
            let (ids, _) = searched(&app, &acme.key, list, &wrapped, "").await;
            let expected = if list == "/tickets" { &id } else { &session };
            assert_eq!(ids, vec![expected.clone()], "{list} q={wrapped:?}");
        }
    }
}
