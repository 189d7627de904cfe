//! List filters on custom fields: `?cf.plan=pro`,
//! `?cf.order_total[gte]=100&cf.order_total[lt]=500`, and the same as a
//! JSON condition (`{"plan": "pro", "order_total": {"gte": 100}}`) for
//! rules and reports. Values are parsed by the field's type, so the store
//! compares numbers as numbers and dates and datetimes by time.

use serde_json::Value;

use super::values::{parse_date, parse_datetime};
use super::{Definition, FieldType, RecordKind};
use crate::error::FieldError;
use crate::validate::problem;

/// How a condition compares the record's value with the given one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// Equal; for a multiselect, "contains".
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
}

impl Operator {
    fn parse(name: &str) -> Option<Operator> {
        match name {
            "gt" => Some(Operator::Gt),
            "gte" => Some(Operator::Gte),
            "lt" => Some(Operator::Lt),
            "lte" => Some(Operator::Lte),
            _ => None,
        }
    }

    /// The SQL comparison.
    pub fn sql(self) -> &'static str {
        match self {
            Operator::Eq => "=",
            Operator::Gt => ">",
            Operator::Gte => ">=",
            Operator::Lt => "<",
            Operator::Lte => "<=",
        }
    }
}

/// A value to compare with, in the column its type is stored in.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterValue {
    /// Text, booleans (`true` / `false`), dates, datetimes (UTC,
    /// milliseconds, `Z`) and options.
    Text(String),
    Number(f64),
}

/// One condition on one field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldCondition {
    pub key: String,
    pub operator: Operator,
    pub value: FilterValue,
}

/// Records matching every condition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldFilter {
    pub conditions: Vec<FieldCondition>,
}

impl FieldFilter {
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }
}

/// The `cf.<key>` and `cf.<key>[op]` parameters of a raw query string,
/// checked against the definitions applying to `kind`; an empty value is
/// no filter. Problems are on `cf.<key>`.
pub fn field_filter(
    raw_query: Option<&str>,
    definitions: &[Definition],
    kind: RecordKind,
) -> Result<FieldFilter, Vec<FieldError>> {
    let mut filter = FieldFilter::default();
    let mut problems = Vec::new();
    let pairs = form_urlencoded::parse(raw_query.unwrap_or_default().as_bytes());
    for (name, value) in pairs {
        let Some(rest) = name.strip_prefix("cf.") else {
            continue;
        };
        if value.is_empty() {
            continue;
        }
        let (key, operator) = match rest.split_once('[') {
            None => (rest, Some(Operator::Eq)),
            Some((key, op)) => (key, op.strip_suffix(']').and_then(Operator::parse)),
        };
        let field = format!("cf.{key}");
        let Some(operator) = operator else {
            problems.push(problem(&field, "operators are [gt], [gte], [lt] and [lte]"));
            continue;
        };
        match condition(definitions, kind, &field, key, operator, &value) {
            Ok(condition) => filter.conditions.push(condition),
            Err(err) => problems.push(err),
        }
    }
    if problems.is_empty() {
        Ok(filter)
    } else {
        Err(problems)
    }
}

/// A JSON condition: `{key: value}` for equality, `{key: {op: value}}` with
/// ops `eq`, `gt`, `gte`, `lt`, `lte`; problems on `<field>.<key>`.
pub fn json_filter(
    field: &str,
    value: &Value,
    definitions: &[Definition],
    kind: RecordKind,
) -> Result<FieldFilter, Vec<FieldError>> {
    let Value::Object(fields) = value else {
        return Err(vec![problem(field, "must be an object")]);
    };
    let mut filter = FieldFilter::default();
    let mut problems = Vec::new();
    for (key, wanted) in fields {
        let name = format!("{field}.{key}");
        let pairs: Vec<(Option<Operator>, &Value)> = match wanted {
            Value::Object(ops) => ops
                .iter()
                .map(|(op, v)| {
                    let operator = match op.as_str() {
                        "eq" => Some(Operator::Eq),
                        other => Operator::parse(other),
                    };
                    (operator, v)
                })
                .collect(),
            scalar => vec![(Some(Operator::Eq), scalar)],
        };
        for (operator, raw) in pairs {
            let text = match raw {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => String::new(),
            };
            let checked = match operator {
                None => Err(problem(&name, "operators are eq, gt, gte, lt and lte")),
                Some(_) if text.is_empty() => {
                    Err(problem(&name, "must be a string, number or boolean"))
                }
                Some(op) => condition(definitions, kind, &name, key, op, &text),
            };
            match checked {
                Ok(condition) => filter.conditions.push(condition),
                Err(err) => problems.push(err),
            }
        }
    }
    if problems.is_empty() {
        Ok(filter)
    } else {
        Err(problems)
    }
}

fn condition(
    definitions: &[Definition],
    kind: RecordKind,
    field: &str,
    key: &str,
    operator: Operator,
    raw: &str,
) -> Result<FieldCondition, FieldError> {
    let Some(definition) = definitions
        .iter()
        .find(|d| d.key == key && d.applies_to(kind))
    else {
        return Err(problem(
            field,
            format!("no custom field {key:?} applies to a {kind}"),
        ));
    };
    let ordered = matches!(
        definition.field_type,
        FieldType::Number | FieldType::Date | FieldType::Datetime
    );
    if operator != Operator::Eq && !ordered {
        return Err(problem(
            field,
            "only number, date and datetime fields compare with [gt], [gte], [lt], [lte]",
        ));
    }
    let bad = |what: &str| problem(field, format!("must be {what}"));
    let value = match definition.field_type {
        FieldType::Text => FilterValue::Text(raw.to_string()),
        FieldType::Number => match raw.trim().parse::<f64>() {
            Ok(n) if n.is_finite() => FilterValue::Number(n),
            _ => return Err(bad("a number")),
        },
        FieldType::Boolean => match raw {
            "true" | "false" => FilterValue::Text(raw.to_string()),
            _ => return Err(bad("true or false")),
        },
        FieldType::Date => {
            FilterValue::Text(parse_date(raw).ok_or_else(|| bad("a date YYYY-MM-DD"))?)
        }
        // A date alone is its midnight, UTC.
        FieldType::Datetime => {
            let at = parse_datetime(raw).or_else(|| {
                parse_date(raw).and_then(|d| parse_datetime(&format!("{d}T00:00:00Z")))
            });
            FilterValue::Text(at.ok_or_else(|| bad("an RFC 3339 date and time, or a date"))?)
        }
        FieldType::Select | FieldType::Multiselect => {
            if !definition.options.iter().any(|o| o == raw) {
                return Err(bad(&format!("one of {:?}", definition.options)));
            }
            FilterValue::Text(raw.to_string())
        }
    };
    Ok(FieldCondition {
        key: key.to_string(),
        operator,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::super::values::tests::definition;
    use super::*;
    use serde_json::json;

    fn definitions() -> Vec<Definition> {
        vec![
            definition("plan", FieldType::Select),
            definition("order_total", FieldType::Number),
            definition("renewal", FieldType::Date),
            definition("seen", FieldType::Datetime),
        ]
    }

    #[test]
    fn query_parameters_become_typed_conditions() {
        let query = "cf.plan=pro&cf.order_total%5Bgte%5D=100&cf.order_total[lt]=500\
                     &cf.renewal[lte]=2026-12-31&cf.seen[gt]=2026-01-01&status=OPEN&cf.plan=";
        let filter = field_filter(Some(query), &definitions(), RecordKind::Ticket).unwrap();
        assert_eq!(
            filter.conditions,
            [
                FieldCondition {
                    key: "plan".into(),
                    operator: Operator::Eq,
                    value: FilterValue::Text("pro".into())
                },
                FieldCondition {
                    key: "order_total".into(),
                    operator: Operator::Gte,
                    value: FilterValue::Number(100.0)
                },
                FieldCondition {
                    key: "order_total".into(),
                    operator: Operator::Lt,
                    value: FilterValue::Number(500.0)
                },
                FieldCondition {
                    key: "renewal".into(),
                    operator: Operator::Lte,
                    value: FilterValue::Text("2026-12-31".into())
                },
                FieldCondition {
                    key: "seen".into(),
                    operator: Operator::Gt,
                    value: FilterValue::Text("2026-01-01T00:00:00.000Z".into())
                },
            ]
        );
    }

    #[test]
    fn bad_filters_name_the_parameter() {
        for (query, field) in [
            ("cf.nope=1", "cf.nope"),
            ("cf.plan=gold", "cf.plan"),
            ("cf.plan[gt]=pro", "cf.plan"),
            ("cf.order_total=ten", "cf.order_total"),
            ("cf.order_total[between]=1", "cf.order_total"),
            ("cf.renewal=tomorrow", "cf.renewal"),
        ] {
            let problems =
                field_filter(Some(query), &definitions(), RecordKind::Ticket).unwrap_err();
            assert_eq!(problems[0].field, field, "{query}");
        }
    }

    #[test]
    fn json_conditions_read_like_the_query() {
        let condition = json!({"plan": "pro", "order_total": {"gte": 100, "lt": 500}});
        let filter = json_filter(
            "customFields",
            &condition,
            &definitions(),
            RecordKind::Ticket,
        )
        .unwrap();
        let operators: Vec<Operator> = filter.conditions.iter().map(|c| c.operator).collect();
        assert_eq!(operators, [Operator::Gte, Operator::Lt, Operator::Eq]);
        assert_eq!(filter.conditions[0].value, FilterValue::Number(100.0));
        let bad = json!({"order_total": {"near": 1}});
        let problems =
            json_filter("customFields", &bad, &definitions(), RecordKind::Ticket).unwrap_err();
        assert_eq!(problems[0].field, "customFields.order_total");
    }
}
