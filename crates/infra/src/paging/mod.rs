//! Cursor paging and list totals shared by every list endpoint.
//!
//! A list answers `limit` plus either `offset` (the contract's offset paging, unchanged)
//! or `after=<cursor>`, and always says where the next page starts
//! (`nextCursor`, null at the end). A cursor carries the last record's
//! place in the list's order (its sort key), never an offset, so the next
//! page is a keyset range that neither repeats nor skips a record when
//! others are inserted or deleted meanwhile, and reads the same index as the
//! first page. Cursors are sealed with a MAC over the key, the list's name,
//! the tenant and the filters: a cursor that was changed, or is replayed on
//! another list or filter set, is a 400 on `after`.

mod count;
mod cursor;
mod envelope;
mod keyset;
mod secret;

pub use count::{COUNT_CAP, Total, capped_count};
pub use cursor::{After, Cursors, ListId, SortKey, SortValue};
pub use envelope::{CursorPage, ListRequest, refuse_after_in_rank_order};
pub use keyset::{Order, push_after};
