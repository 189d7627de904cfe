//! Requests whose body the service refuses before reading it all.
//!
//! The service answers 413 as soon as a body crosses its limit and then
//! closes the connection with the rest unread, so a client still writing
//! gets a broken pipe. reqwest reports that failed write rather than the
//! answer that came before it, so these requests go over a plain socket:
//! the body is written from a task of its own (its failure ignored) while
//! the answer is read.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{TestApp, TestResponse};

/// POSTs `chunks` (sent one after the other, `Content-Length` their sum) to
/// `/api/v1{path}` with `key` and answers what the service said.
pub async fn post_refused_body(
    app: &TestApp,
    path: &str,
    key: &str,
    content_type: &str,
    chunks: Vec<Vec<u8>>,
) -> TestResponse {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", app.port))
        .await
        .expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let length: usize = chunks.iter().map(Vec::len).sum();
    let head = format!(
        "POST /api/v1{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: {key}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    );
    let writing = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        for chunk in chunks {
            writer.write_all(&chunk).await?;
        }
        writer.flush().await
    });
    let answer = read_answer(&mut reader).await;
    writing.abort();
    parse(&answer)
}

/// The service's answer, read until it is complete or the connection ends.
async fn read_answer(reader: &mut tokio::net::tcp::OwnedReadHalf) -> Vec<u8> {
    let mut answer = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            // A reset after the answer arrived ends it like a close does.
            Err(_) if complete(&answer) => break,
            Err(e) => panic!("reading the answer: {e}"),
        }
        if complete(&answer) {
            break;
        }
    }
    answer
}

/// How long a test waits for an answer to a body it left unfinished.
const UNFINISHED_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// POSTs to `path` with `headers`, a body said to be `length` bytes long of
/// which only `sent` is written (`pause` between two chunks), then keeps
/// the connection open sending nothing more, and answers what the service
/// said. A service that waits for the rest of the body (holding what it
/// got) never answers: that fails the test after 30 s.
pub async fn post_unfinished_body(
    app: &TestApp,
    path: &str,
    headers: &[(&str, &str)],
    length: usize,
    sent: Vec<Vec<u8>>,
    pause: std::time::Duration,
) -> TestResponse {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", app.port))
        .await
        .expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let mut head = format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {length}\r\n\r\n"));
    // The writer is kept (not dropped, which would end the body) until
    // the answer has been read.
    let (done, finished) = tokio::sync::oneshot::channel::<()>();
    let writing = tokio::spawn(async move {
        let written = async {
            writer.write_all(head.as_bytes()).await?;
            writer.flush().await?;
            for chunk in sent {
                // The slow client the test plays.
                tokio::time::sleep(pause).await;
                writer.write_all(&chunk).await?;
                writer.flush().await?;
            }
            Ok::<_, std::io::Error>(())
        };
        // A write refused once the service answered is expected.
        let _ = written.await;
        let _ = finished.await;
        drop(writer);
    });
    let answer = tokio::time::timeout(UNFINISHED_WAIT, read_answer(&mut reader))
        .await
        .expect("an answer while the body was still unfinished");
    let _ = done.send(());
    let _ = writing.await;
    parse(&answer)
}

/// Whether `answer` holds a head and the whole body its Content-Length gives.
fn complete(answer: &[u8]) -> bool {
    split(answer).is_some_and(|(head, body)| content_length(head).is_some_and(|n| body.len() >= n))
}

fn split(answer: &[u8]) -> Option<(&str, &[u8])> {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&answer[..end]).ok()?;
    Some((head, &answer[end + 4..]))
}

fn content_length(head: &str) -> Option<usize> {
    head.lines().skip(1).find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })
}

fn parse(answer: &[u8]) -> TestResponse {
    let (head, body) = split(answer).expect("an HTTP answer with a head");
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let mut headers = reqwest::header::HeaderMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes());
            let value = reqwest::header::HeaderValue::from_str(value.trim());
            if let (Ok(name), Ok(value)) = (name, value) {
                headers.append(name, value);
            }
        }
    }
    let length = content_length(head).unwrap_or(body.len()).min(body.len());
    let text = String::from_utf8_lossy(&body[..length]).into_owned();
    let body = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    TestResponse {
        status,
        headers,
        text,
        body,
    }
}
