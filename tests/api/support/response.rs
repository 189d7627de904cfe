//! A response read whole, and the assertions on the error shape.

use serde_json::Value;

/// A response read whole: status, headers and the body as JSON (Null if
/// the body is not JSON; `text` keeps it raw).
#[derive(Debug)]
pub struct TestResponse {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub body: Value,
}

impl TestResponse {
    pub async fn from(result: reqwest::Result<reqwest::Response>) -> TestResponse {
        let response = result.expect("request sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        TestResponse {
            status,
            headers,
            text,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the error shape of docs/api.md ("Errors") with this status and code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "status of {}", self.text);
        assert_eq!(self.body["code"], code, "code of {}", self.text);
        assert_eq!(self.body["status"], status, "status field of {}", self.text);
        assert!(
            self.body["error"].is_string(),
            "error message in {}",
            self.text
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "content type of {}",
            self.text
        );
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "status of {}", self.text);
        &self.body
    }
}

/// Asserts a 400 `validation_failed` whose details name exactly `fields`,
/// in that order.
#[track_caller]
pub fn assert_invalid(r: &TestResponse, fields: &[&str]) {
    r.assert_error(400, "validation_failed");
    let named: Vec<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    assert_eq!(named, fields, "{}", r.text);
}
