//! Ending sessions: the store's change, then every node told at once (the
//! session caches forget them, their sockets close) rather than after the
//! cache's 10 s or the sockets' re-check.

use uuid::Uuid;

use super::AccountDeps;
use super::sessions;
use crate::auth::cache::Invalidation;
use crate::db::Db;
use crate::error::ApiResult;
use crate::realtime::credentials;

/// Ends every open session of user `user_id` of `company_id` but `keep`: a
/// new password, a second factor turned on or off, a deactivation or a role
/// change. `db` is the handle of whoever ends them (the audit log's actor).
pub async fn all_sessions_of(
    state: &AccountDeps,
    db: &Db,
    company_id: Uuid,
    user_id: Uuid,
    keep: Option<Uuid>,
) -> ApiResult<()> {
    let mut tx = db.begin().await?;
    let ended = sessions::end_all_of_user(&mut tx, user_id, keep, state.clock.now()).await?;
    tx.commit().await?;
    let bus = &state.realtime.bus;
    state
        .access
        .invalidate(bus, Invalidation::User(user_id))
        .await;
    credentials::sessions_ended(bus, company_id, &ended).await;
    Ok(())
}

/// Ends user `user_id`'s session `session_id` of `company_id`; whether it
/// was open.
pub async fn one_session(
    state: &AccountDeps,
    db: &Db,
    company_id: Uuid,
    user_id: Uuid,
    session_id: Uuid,
) -> ApiResult<bool> {
    let ended = sessions::end(db, user_id, session_id, state.clock.now()).await?;
    if ended {
        let bus = &state.realtime.bus;
        let what = Invalidation::Session(session_id);
        state.access.invalidate(bus, what).await;
        credentials::sessions_ended(bus, company_id, &[session_id]).await;
    }
    Ok(ended)
}
