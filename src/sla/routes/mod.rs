//! The SLA settings: business-hours calendars and the policy list.

mod hours;
mod policies;

use crate::router::ApiRouter;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .merge(hours::router())
        .merge(policies::router())
}
