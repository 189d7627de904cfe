//! Scenario 9: the ticket list filtered by a tag, a custom field and the
//! status together, against pgbench running the same four statements (the
//! definitions the `cf.` filter is typed by, the page, the capped count, the
//! page's tags), and its p99 at half the maximum rate.

use std::sync::Arc;

use anyhow::Context;
use hyper::StatusCode;

use super::list_tickets::ListLabels;
use super::{Baseline, Ctx};
use crate::http::{MakeRequest, Req};

/// The filter values (bench/sql/seed_tickets.sql: `billing` is the most
/// common tag, `pro` the plan of 30% of the tickets).
const TAG: &str = "billing";
const PLAN: &str = "pro";
/// Rows the page query reads: the page of 20 and one more (it says whether
/// a next page exists); the tags query asks for the tags of all of them.
const PAGE_ROWS: usize = 21;

impl Ctx {
    pub async fn filtered_list(&mut self) -> anyhow::Result<()> {
        let labels = ListLabels {
            number: 9,
            scenario: "9 `GET /tickets?tag=billing&cf.plan=pro&status=OPEN&limit=20`",
            scenario_p99: "9 `GET /tickets?tag=…&cf.plan=…&status=OPEN` p99",
            baseline: "pgbench, same 4 queries",
            target: ("≥ 35% of pgbench", 0.35),
        };
        if self.seed.ticket_tags.is_none() || self.seed.field_values.is_none() {
            let reason = "no tags or custom fields seeded (areas not merged)";
            self.list_not_run(&labels, reason);
            return Ok(());
        }
        let server = self.start("s9-service", &self.service).await?;
        let query = format!("/api/v1/tickets?tag={TAG}&cf.plan={PLAN}&status=OPEN");
        let path = format!("{query}&limit=20");
        // The same list one row longer gives the ids the page query reads,
        // for the baseline's tags query.
        let longer = format!("{query}&limit={PAGE_ROWS}");
        let (status, body) = self
            .probe(&server, Req::get(&longer).key(self.key()))
            .await?;
        if status != StatusCode::OK {
            server.stop().await;
            self.list_not_run(&labels, &format!("GET /tickets answered {status}"));
            return Ok(());
        }
        let page: serde_json::Value = serde_json::from_str(&body).context("the list's JSON")?;
        let ids: Vec<String> = page["data"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|row| row["id"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        self.note(format!(
            "scenario 9: {} OPEN tickets of the benchmark company carry the tag `{TAG}` and the plan `{PLAN}` (the page's total{}); page of {}",
            page["total"],
            if page["totalIsLowerBound"] == true { ", a lower bound" } else { "" },
            ids.len().min(20)
        ));
        let Some(page_ids) = page_id_vars(&ids) else {
            server.stop().await;
            self.list_not_run(&labels, "no ticket matches the filter (seed?)");
            return Ok(());
        };
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let mut vars = self.tenant_vars();
        vars.extend([
            ("status".into(), "OPEN".into()),
            ("tag".into(), TAG.into()),
            ("cf_key".into(), "plan".into()),
            ("cf_value".into(), PLAN.into()),
        ]);
        vars.extend(page_ids);
        let baseline = Baseline::Pgbench {
            name: "tickets_filtered",
            script: "pgbench_tickets_filtered.sql",
            vars,
        };
        self.compare_list(server, &labels, make, baseline).await
    }
}

/// pgbench variables `page_id_1` … `page_id_21` for the tags query: the
/// page's ids, the last repeated when fewer matched (the script has a fixed
/// number of placeholders; a repeated id adds no row). None without ids.
fn page_id_vars(ids: &[String]) -> Option<Vec<(String, String)>> {
    let last = ids.last()?;
    Some(
        (0..PAGE_ROWS)
            .map(|i| {
                let id = ids.get(i).unwrap_or(last);
                (format!("page_id_{}", i + 1), id.clone())
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_page_gives_each_id_its_variable() {
        let ids: Vec<String> = (1..=PAGE_ROWS).map(|i| format!("id{i}")).collect();
        let vars = page_id_vars(&ids).unwrap();
        assert_eq!(vars.len(), PAGE_ROWS);
        assert_eq!(vars[0], ("page_id_1".to_string(), "id1".to_string()));
        assert_eq!(vars[20], ("page_id_21".to_string(), "id21".to_string()));
    }

    #[test]
    fn a_short_page_repeats_its_last_id() {
        let ids = vec!["a".to_string(), "b".to_string()];
        let vars = page_id_vars(&ids).unwrap();
        assert_eq!(vars.len(), PAGE_ROWS);
        assert_eq!(vars[2].1, "b");
        assert_eq!(vars[20].1, "b");
    }

    #[test]
    fn no_ids_give_no_variables() {
        assert!(page_id_vars(&[]).is_none());
    }
}
