//! Search text is words, never syntax: FTS operators and quotes answer 200
//! on both lists (operators are plain words), and punctuation around a word
//! finds what the word finds. `q` is checked like every text parameter: a
//! NUL byte or more than 500 characters is a 400 on `q`, never a 500.

use super::*;

backend_tests!(
    fts_syntax_in_q_answers_200_like_plain_words,
    a_q_with_nul_or_over_500_characters_is_400_on_q
);

const SYNTAX: [&str; 13] = [
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
    "'",
    "^",
    "{subject}",
];

async fn fts_syntax_in_q_answers_200_like_plain_words(backend: Backend) {
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

async fn a_q_with_nul_or_over_500_characters_is_400_on_q(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let longest = "a".repeat(500);
    let too_long = "a".repeat(501);
    for list in ["/tickets", "/chat/sessions"] {
        app.get(&format!("{list}?q={longest}"), &acme.key)
            .await
            .assert_status(200);
        for q in [too_long.as_str(), "refund%00", "%00"] {
            let r = app.get(&format!("{list}?q={q}"), &acme.key).await;
            r.assert_error(400, "validation_failed");
            assert_eq!(r.body["details"][0]["field"], "q", "{}", r.text);
        }
    }
}
