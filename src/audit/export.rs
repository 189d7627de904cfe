//! The audit log's exports: every matching entry, newest first, streamed a
//! page at a time as CSV rows or JSON lines, so an export of any size
//! holds one page in memory.

use axum::body::Body;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

use super::Entry;
use super::list::{self, Filters};
use crate::db::Db;
use crate::paging::After;

/// What the caller asked to receive: a page of JSON, or an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Page,
    Csv,
    Ndjson,
}

/// Entries read per statement.
const PAGE: i64 = 500;

const CSV_HEADER: &str = "id,seq,at,actorType,actorId,actorName,action,targetType,targetId,\
                          changes,requestId,ip,userAgent,hash,prevHash\n";

/// One CSV field, quoted when it holds a comma, a quote or a line break;
/// a leading `=`, `+`, `-` or `@` is escaped with a quote so a spreadsheet
/// does not read it as a formula.
fn csv_field(text: &str) -> String {
    let guarded = match text.chars().next() {
        Some('=' | '+' | '-' | '@') => format!("'{text}"),
        _ => text.to_string(),
    };
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

fn csv_row(entry: &Entry) -> String {
    let text = |value: Option<String>| value.unwrap_or_default();
    let fields = [
        entry.id.to_string(),
        text(entry.seq.map(|s| s.to_string())),
        entry.at.to_rfc3339(),
        entry.actor.kind.as_str().to_string(),
        text(entry.actor.id.map(|id| id.to_string())),
        entry.actor.name.clone(),
        entry.action.as_str().to_string(),
        entry.target.kind.as_str().to_string(),
        text(entry.target.id.map(|id| id.to_string())),
        entry.changes.to_string(),
        text(entry.request_id.clone()),
        text(entry.ip.clone()),
        text(entry.user_agent.clone()),
        text(entry.hash.clone()),
        text(entry.prev_hash.clone()),
    ];
    let mut row = fields
        .iter()
        .map(|f| csv_field(f))
        .collect::<Vec<_>>()
        .join(",");
    row.push('\n');
    row
}

fn line_of(entry: &Entry, format: Format) -> String {
    match format {
        Format::Csv => csv_row(entry),
        _ => {
            let mut line = serde_json::to_string(entry).unwrap_or_default();
            line.push('\n');
            line
        }
    }
}

/// The export of company `company_id`'s entries by `filters` in `format`.
pub fn stream(db: Db, company_id: Uuid, filters: Filters, format: Format) -> Response {
    let head = match format {
        Format::Csv => CSV_HEADER.to_string(),
        _ => String::new(),
    };
    let pages = futures::stream::unfold(
        (Some(head), None::<After>, false),
        move |(head, after, done)| {
            let (db, filters) = (db.clone(), filters.clone());
            async move {
                if let Some(head) = head {
                    return Some((Ok(head), (None, after, done)));
                }
                if done {
                    return None;
                }
                match list::page(&db, company_id, &filters, after.as_ref(), PAGE, 0).await {
                    Ok(rows) => {
                        let last = rows.last().map(|e| After {
                            created_at: e.at,
                            id: e.id,
                        });
                        let done = (rows.len() as i64) < PAGE;
                        let chunk: String = rows.iter().map(|e| line_of(e, format)).collect();
                        Some((Ok(chunk), (None, last.or(after), done)))
                    }
                    Err(err) => Some((
                        Err(std::io::Error::other(err.to_string())),
                        (None, after, true),
                    )),
                }
            }
        },
    );
    let content_type = match format {
        Format::Csv => "text/csv; charset=utf-8",
        _ => "application/x-ndjson",
    };
    (
        [(header::CONTENT_TYPE, content_type)],
        Body::from_stream(pages),
    )
        .into_response()
}
