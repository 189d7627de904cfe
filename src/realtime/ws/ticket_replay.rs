//! `since` on the ticket channels: the events recorded after the given one
//! (the `data.id` of a frame the client saw), read from the events table
//! in the order they were recorded, filtered as the live frames are (the
//! channel's entity; internal notes only for keys that read them).

use std::collections::HashMap;

use uuid::Uuid;

use super::{Fail, REPLAY_BATCH, Socket};
use crate::error::StoreError;
use crate::realtime::protocol::Topic;
use crate::realtime::store;
use crate::realtime::tickets::{self, TicketEvent};

impl Socket {
    /// Up to `REPLAY_BATCH` ticket events of the tenant after `since`
    /// (NotFound unless `since` is one).
    pub(super) fn ticket_events_after(
        &self,
        since: Uuid,
    ) -> impl Future<Output = Result<Vec<TicketEvent>, StoreError>> + Send + 'static {
        let db = self.state.db.clone();
        let tenant = self.credential.tenant();
        async move {
            let names = tickets::carried_names();
            let rows = store::events_after(&db, &tenant, &names, since, REPLAY_BATCH).await?;
            Ok(rows.into_iter().map(TicketEvent::from).collect())
        }
    }

    /// Sends the events of the channel after `since`, batch by batch, and
    /// remembers the last ones sent so that their live copies are dropped.
    pub(super) async fn replay_tickets(
        &mut self,
        entity: Option<Uuid>,
        topic: Topic,
        mut batch: Vec<TicketEvent>,
    ) -> Result<(), Fail> {
        let name = tickets::channel_name(entity);
        let notes = self.reads_notes();
        let tenant = self.credential.tenant();
        let mut entities = HashMap::new();
        let mut recent = Vec::new();
        while !batch.is_empty() {
            recent.clear();
            for event in &batch {
                if event.is_internal() && !notes {
                    continue;
                }
                if entity.is_some()
                    && event.entity(&self.state.db, &tenant, &mut entities).await? != entity
                {
                    continue;
                }
                self.send_text(event.frame(&name, tenant.mode)).await?;
                recent.push((topic.channel, event.id));
            }
            let full = batch.len() as i64 == REPLAY_BATCH;
            batch = match batch.last() {
                Some(last) if full => self.ticket_events_after(last.id).await?,
                _ => Vec::new(),
            };
        }
        super::note_replayed(&mut self.replayed, recent);
        Ok(())
    }
}
