//! SQL for the ticket report: aggregate queries (counts, days, resolution
//! percentiles, escalations, SLA achievement), each answered by the
//! database but the SLA first-response percentiles.
//! Where the dialects differ (day of a timestamp, durations, percentiles,
//! JSON) each backend gets its own text, computing the same figures.

use crate::tickets::model::{Priority, TicketStatus};
use std::collections::HashMap;

use super::model::{
    Day, Escalations, FirstResponseTime, MEDIAN, P90, ReportQuery, ResolutionTime, SlaAchievement,
    SlaReport, TicketCounts, TicketReport, ms_to_seconds, one_decimal, percentile,
};
use crate::auth::Tenant;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, Query};
use crate::error::StoreError;
use crate::sla::clocks::Metric;
use crate::tags::store::{self as tag_store, Tagged};

/// `sql` (written with `scope`'s placeholders, which it may use more than
/// once) with `$1` company, `$2` mode, `$3` from, `$4` to, then the
/// filters' values as `filters` numbers them.
fn scoped(sql: String, tenant: &Tenant, report: &ReportQuery) -> Query {
    let mut query = Query::new(sql)
        .bind_tenant(tenant)
        .bind(report.from)
        .bind(report.to);
    if let Some(entity) = report.entity_id {
        query = query.bind(entity);
    }
    for tag in report.tags.values() {
        query = query.bind(tag);
    }
    for value in field_store::filter_values(&report.fields) {
        query = query.bind(value);
    }
    query
}

/// `WHERE` for the tenant's tickets (alias `t`) whose `column` falls in the
/// period, and the number of the last placeholder used.
fn scope(column: &str, report: &ReportQuery) -> (String, usize) {
    let (filters, last) = filters(report);
    let sql = format!(
        " WHERE t.company_id = $1 AND t.mode = $2 AND t.{column} >= $3 AND t.{column} < $4\
         {filters}"
    );
    (sql, last)
}

/// The report's optional filters on tickets (alias `t`): the entity (`$5`)
/// then the tags and the custom fields (as `GET /tickets` filters them, from
/// the next placeholder on); and the number of the last placeholder used.
fn filters(report: &ReportQuery) -> (String, usize) {
    let mut sql = String::new();
    let mut last = 4;
    if report.entity_id.is_some() {
        sql.push_str(" AND t.entity_id = $5");
        last = 5;
    }
    sql.push_str(&tag_store::filter_sql(
        Tagged::Ticket,
        "t.id",
        &report.tags,
        last + 1,
    ));
    let last = last + report.tags.values().count();
    sql.push_str(&field_store::filter_sql(
        Recorded::Ticket,
        "t.id",
        &report.fields,
        last + 1,
    ));
    (sql, last + field_store::filter_placeholders(&report.fields))
}

/// The UTC calendar day (`YYYY-MM-DD`) of a timestamp column.
fn day_of(backend: Backend, column: &str) -> String {
    match backend {
        Backend::Postgres => format!("to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')"),
        Backend::Sqlite => format!("date({column})"),
    }
}

pub async fn ticket_report(
    db: &Db,
    tenant: &Tenant,
    report: &ReportQuery,
) -> Result<TicketReport, StoreError> {
    let (tickets, daily) = counts(db, tenant, report).await?;
    let resolution_time = resolution_time(db, tenant, report).await?;
    let escalations = escalations(db, tenant, report).await?;
    let sla = sla(db, tenant, report).await?;
    // Ratings of chats and tickets alike, by when they were first
    // submitted; the tag and custom field filters select tickets only.
    let csat =
        crate::csat::store::summary(db, tenant, report.entity_id, report.from, report.to).await?;
    Ok(TicketReport {
        from: report.from,
        to: report.to,
        entity_id: report.entity_id,
        tickets,
        daily,
        resolution_time,
        escalations,
        sla,
        csat,
    })
}

/// SLA achievement of the tickets created in the period: met and breached
/// clocks per metric and priority (one GROUP BY), and the business time
/// their first responses took, from the clocks' used time (percentiles
/// computed here over that one column, the same on both backends).
async fn sla(db: &Db, tenant: &Tenant, report: &ReportQuery) -> Result<SlaReport, StoreError> {
    let (created, _) = scope("created_at", report);
    let sql = format!(
        "SELECT s.metric, t.priority, \
         SUM(CASE WHEN s.breached_at IS NULL AND s.fulfilled_at IS NOT NULL THEN 1 ELSE 0 END), \
         SUM(CASE WHEN s.breached_at IS NOT NULL THEN 1 ELSE 0 END) \
         FROM tickets t JOIN ticket_sla s ON s.ticket_id = t.id{created} \
         GROUP BY s.metric, t.priority"
    );
    let groups: Vec<(Metric, Priority, i64, i64)> =
        scoped(sql, tenant, report).fetch_all(db).await?;
    let mut achievement: Vec<SlaAchievement> = groups
        .into_iter()
        .filter(|(_, _, met, breached)| met + breached > 0)
        .map(|(metric, priority, met, breached)| SlaAchievement {
            metric: metric.api_name(),
            priority,
            met,
            breached,
            percent_met: one_decimal(100.0 * met as f64 / (met + breached) as f64),
        })
        .collect();
    let order = |a: &SlaAchievement| {
        let metric = Metric::ALL.iter().position(|m| m.api_name() == a.metric);
        let priority = Priority::ALL.iter().position(|p| *p == a.priority);
        (metric, priority)
    };
    achievement.sort_by_key(order);

    let sql = format!(
        "SELECT s.used_seconds FROM tickets t JOIN ticket_sla s ON s.ticket_id = t.id{created} \
         AND s.metric = 'first_response' AND s.fulfilled_at IS NOT NULL \
         ORDER BY s.used_seconds"
    );
    let used: Vec<i64> = scoped(sql, tenant, report).fetch_column(db).await?;
    let minutes: Vec<f64> = used.iter().map(|s| *s as f64 / 60.0).collect();
    Ok(SlaReport {
        achievement,
        first_response: FirstResponseTime {
            count: minutes.len() as i64,
            median_business_minutes: percentile(&minutes, MEDIAN).map(one_decimal),
            p90_business_minutes: percentile(&minutes, P90).map(one_decimal),
        },
    })
}

/// Tickets created in the period by status and priority (one GROUP BY),
/// then created and resolved per day (one GROUP BY each, in one query).
async fn counts(
    db: &Db,
    tenant: &Tenant,
    report: &ReportQuery,
) -> Result<(TicketCounts, Vec<Day>), StoreError> {
    let (created, _) = scope("created_at", report);
    let sql = format!(
        "SELECT t.status, t.priority, COUNT(*) FROM tickets t{created} \
         GROUP BY t.status, t.priority"
    );
    let groups: Vec<(TicketStatus, Priority, i64)> =
        scoped(sql, tenant, report).fetch_all(db).await?;
    let mut counts = TicketCounts::default();
    for (status, priority, n) in groups {
        counts.created += n;
        counts.by_status.add(status, n);
        counts.by_priority.add(priority, n);
    }

    let (resolved, _) = scope("resolved_at", report);
    let backend = db.backend();
    let created_day = day_of(backend, "t.created_at");
    let resolved_day = day_of(backend, "t.resolved_at");
    let sql = format!(
        "SELECT 'created' AS kind, {created_day} AS day, COUNT(*) AS n FROM tickets t{created} \
         GROUP BY {created_day} \
         UNION ALL \
         SELECT 'resolved' AS kind, {resolved_day} AS day, COUNT(*) AS n FROM tickets t{resolved} \
         GROUP BY {resolved_day}"
    );
    let rows: Vec<(String, String, i64)> = scoped(sql, tenant, report).fetch_all(db).await?;
    let mut per_day: HashMap<(String, String), i64> = HashMap::new();
    for (kind, day, n) in rows {
        if kind == "resolved" {
            counts.resolved += n;
        }
        per_day.insert((kind, day), n);
    }
    let daily = report
        .days()
        .into_iter()
        .map(|date| {
            let date = date.to_string();
            let count = |kind: &str| {
                per_day
                    .get(&(kind.to_string(), date.clone()))
                    .copied()
                    .unwrap_or(0)
            };
            Day {
                created: count("created"),
                resolved: count("resolved"),
                date,
            }
        })
        .collect();
    Ok((counts, daily))
}

/// Count, median and 90th percentile of `resolved_at - created_at` (whole
/// milliseconds) over the tickets resolved in the period. Postgres has
/// `percentile_cont`; SQLite computes the same interpolation with
/// ROW_NUMBER over the sorted durations: for a fraction p of n values, the
/// position p·(n−1) (0-based) falls between ranks k = ⌊p·(n−1)⌋ and the
/// next, and the result is v[k] + (v[k+1] − v[k])·(p·(n−1) − k).
async fn resolution_time(
    db: &Db,
    tenant: &Tenant,
    report: &ReportQuery,
) -> Result<ResolutionTime, StoreError> {
    let (resolved, last) = scope("resolved_at", report);
    let (p50, p90) = (format!("${}", last + 1), format!("${}", last + 2));
    let sql = match db.backend() {
        Backend::Postgres => format!(
            "WITH d AS (SELECT ROUND(EXTRACT(EPOCH FROM (t.resolved_at - t.created_at)) * 1000)\
             ::float8 AS ms FROM tickets t{resolved}) \
             SELECT COUNT(*), percentile_cont({p50}::float8) WITHIN GROUP (ORDER BY ms), \
             percentile_cont({p90}::float8) WITHIN GROUP (ORDER BY ms) FROM d"
        ),
        Backend::Sqlite => {
            let percentile = |p: &str| {
                format!(
                    "(SELECT lo + (hi - lo) * (pos - k) FROM (SELECT q.pos, q.k, \
                     (SELECT v FROM r WHERE r.i = q.k) AS lo, \
                     (SELECT v FROM r WHERE r.i = q.k + (q.pos > q.k)) AS hi \
                     FROM (SELECT {p} * (n - 1) AS pos, CAST({p} * (n - 1) AS INTEGER) AS k \
                     FROM cnt WHERE n > 0) q))"
                )
            };
            format!(
                "WITH d AS (SELECT CAST(ROUND((julianday(t.resolved_at) - julianday(t.created_at)) \
                 * 86400000.0) AS INTEGER) AS ms FROM tickets t{resolved}), \
                 r AS (SELECT CAST(ms AS REAL) AS v, ROW_NUMBER() OVER (ORDER BY ms) - 1 AS i \
                 FROM d), \
                 cnt AS (SELECT COUNT(*) AS n FROM d) \
                 SELECT n, {}, {} FROM cnt",
                percentile(&p50),
                percentile(&p90)
            )
        }
    };
    let (count, median, p90): (i64, Option<f64>, Option<f64>) = scoped(sql, tenant, report)
        .bind(MEDIAN)
        .bind(P90)
        .fetch_one(db)
        .await?;
    Ok(ResolutionTime {
        count,
        median_seconds: median.map(ms_to_seconds),
        p90_seconds: p90.map(ms_to_seconds),
    })
}

/// Escalations recorded in the period (timeline entries), split by their
/// `automatic` flag.
async fn escalations(
    db: &Db,
    tenant: &Tenant,
    report: &ReportQuery,
) -> Result<Escalations, StoreError> {
    let automatic = match db.backend() {
        Backend::Postgres => "a.details->>'automatic' = 'true'",
        Backend::Sqlite => "json_extract(a.details, '$.automatic') = 1",
    };
    let (filters, _) = filters(report);
    let join = if filters.is_empty() {
        ""
    } else {
        " JOIN tickets t ON t.id = a.ticket_id"
    };
    let sql = format!(
        "SELECT COUNT(*), COUNT(*) FILTER (WHERE {automatic}) FROM ticket_activities a{join} \
         WHERE a.company_id = $1 AND a.mode = $2 AND a.kind = 'escalated' \
         AND a.created_at >= $3 AND a.created_at < $4{filters}"
    );
    let (total, automatic): (i64, i64) = scoped(sql, tenant, report).fetch_one(db).await?;
    Ok(Escalations {
        total,
        manual: total - automatic,
        automatic,
    })
}
