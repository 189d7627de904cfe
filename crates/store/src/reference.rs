//! References from a request to records of the company, checked inside the
//! write transaction that stores them, so the check and the write see the
//! same data.

use uuid::Uuid;

use super::{On, Query};
use vocab::error::StoreError;

/// A table of company-wide records a request may refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Users,
    Entities,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Users => "users",
            Table::Entities => "entities",
        }
    }

    /// The 400 on `field` when the reference names no record of the company.
    pub fn invalid_reference(self, field: &str) -> StoreError {
        let requirement = match self {
            Table::Users => "must be a user of this company",
            Table::Entities => "must be an entity of this company",
        };
        StoreError::InvalidReference {
            field: field.to_string(),
            message: requirement.to_string(),
        }
    }
}

/// Checks that `id` (the request's `field`) names a record of `table` in the
/// company: InvalidReference (a 400 on `field`) otherwise.
pub async fn ensure_reference<'c>(
    on: impl Into<On<'c>>,
    company_id: Uuid,
    table: Table,
    id: Uuid,
    field: &str,
) -> Result<(), StoreError> {
    let sql = format!(
        "SELECT id FROM {} WHERE id = $1 AND company_id = $2",
        table.name()
    );
    let found: Option<(Uuid,)> = Query::new(sql)
        .bind(id)
        .bind(company_id)
        .fetch_optional(on)
        .await?;
    match found {
        Some(_) => Ok(()),
        None => Err(table.invalid_reference(field)),
    }
}
