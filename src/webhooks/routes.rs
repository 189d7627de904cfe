//! HTTP routes of this area.

use crate::auth::routes::ApiRouter;

pub fn router() -> ApiRouter {
    ApiRouter::new()
}
