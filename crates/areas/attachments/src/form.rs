//! The `multipart/form-data` form of an upload: its `file` part is streamed
//! to storage like a raw body, and the rest of the form is bounded.
//!
//! multer bounds the whole stream and each part's content (`Constraints`),
//! but not the text before a part's content: it buffers the preamble and a
//! part's headers until the line that ends them arrives, and it pulls every
//! chunk the body has ready before it parses any. A body that never shows
//! its boundary, or a part header that never ends, would then be held whole.
//! [`Paced`] is the bound multer lacks: it hands multer at most
//! [`HEAD_MAX`] bytes while a part is being looked for (the form is refused
//! with 413 past that) and lets it parse every [`PACE`] bytes, so a form
//! costs about that much memory however it is framed.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Stream;

use super::ingest::{IngestError, Ingested, ingest};
use super::storage::Storage;

/// The most bytes between the previous part's content (or the start of the
/// body) and a part's content: the preamble, the boundary line and the
/// part's headers.
pub const HEAD_MAX: u64 = 16 * 1024;
/// What the form may add to its file: its framing and other small parts.
pub const FORM_ALLOWANCE: u64 = 64 * 1024;
/// Bytes handed to multer before it must parse what it holds.
const PACE: u64 = 64 * 1024;

/// What a form went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FormBound {
    /// The whole body, at most the file's limit plus [`FORM_ALLOWANCE`].
    #[error("the form is larger than {0} bytes")]
    Whole(u64),
    /// The text before a part's content, [`HEAD_MAX`].
    #[error("a part's headers (with the text before them) are longer than {HEAD_MAX} bytes")]
    PartHead,
}

/// The name, the claimed type and the stored bytes of the form's `file`
/// part; other parts are read past.
pub async fn receive_form<S, E>(
    storage: &Storage,
    body: S,
    boundary: String,
    limit: u64,
) -> Result<(Option<String>, Option<String>, Ingested), IngestError>
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let whole = limit.saturating_add(FORM_ALLOWANCE);
    let constraints = multer::Constraints::new().size_limit(
        multer::SizeLimit::new()
            .whole_stream(whole)
            .per_field(FORM_ALLOWANCE)
            // The file's own limit is `ingest`'s, with its own message.
            .for_field("file", u64::MAX),
    );
    let phase = Arc::new(AtomicU64::new(0));
    let paced = Paced::new(body, phase.clone());
    let mut form = multer::Multipart::with_constraints(paced, boundary, constraints);
    loop {
        // Odd: a part is being looked for; even: a part's content is read.
        phase.fetch_add(1, Ordering::Relaxed);
        let field = form
            .next_field()
            .await
            .map_err(|err| form_error(err, whole))?;
        phase.fetch_add(1, Ordering::Relaxed);
        let Some(mut field) = field else {
            return Err(IngestError::NoFilePart);
        };
        if field.name() != Some("file") {
            // Read past it here, as content, not while the next part is
            // looked for.
            while field
                .chunk()
                .await
                .map_err(|err| form_error(err, whole))?
                .is_some()
            {}
            continue;
        }
        let name = field.file_name().map(str::to_string);
        let claimed = field.content_type().map(|mime| mime.to_string());
        let content = futures::StreamExt::map(field, move |chunk| {
            chunk.map_err(|err| form_error(err, whole))
        });
        let ingested = ingest(storage, content, limit).await?;
        return Ok((name, claimed, ingested));
    }
}

fn form_error(err: multer::Error, whole: u64) -> IngestError {
    match err {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            IngestError::Form(FormBound::Whole(whole))
        }
        multer::Error::StreamReadFailed(cause) => match cause.downcast_ref::<FormBound>() {
            Some(bound) => IngestError::Form(*bound),
            None => IngestError::Client(cause.to_string()),
        },
        other => IngestError::Client(format!("malformed form: {other}")),
    }
}

/// The body as multer reads it: paced, and bounded while a part is looked
/// for (the shared `phase` is odd then).
struct Paced<S> {
    body: S,
    phase: Arc<AtomicU64>,
    /// The phase the counts below are of.
    seen_phase: u64,
    /// Bytes handed over in this phase.
    in_phase: u64,
    /// This phase reached its bound and multer has parsed since.
    parsed_at_bound: bool,
    /// Bytes handed over since multer last parsed.
    since_parse: u64,
    /// The part of a chunk held back at the bound.
    held: Option<Bytes>,
}

impl<S> Paced<S> {
    fn new(body: S, phase: Arc<AtomicU64>) -> Self {
        Paced {
            body,
            phase,
            seen_phase: 0,
            in_phase: 0,
            parsed_at_bound: false,
            since_parse: 0,
            held: None,
        }
    }

    /// Pending with a wake: multer's read loop stops and it parses what it
    /// holds; our task is polled again at once.
    fn let_parse<T>(&mut self, cx: &mut Context<'_>) -> Poll<T> {
        self.since_parse = 0;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A body error or the bound, boxed as multer wants its stream's errors.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, E> Stream for Paced<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Into<BoxError>,
{
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let phase = this.phase.load(Ordering::Relaxed);
        if phase != this.seen_phase {
            this.seen_phase = phase;
            this.in_phase = 0;
            this.parsed_at_bound = false;
        }
        let looking = phase % 2 == 1;
        if looking && this.in_phase >= HEAD_MAX {
            if this.parsed_at_bound {
                // multer parsed all it was given and still wants more.
                return Poll::Ready(Some(Err(Box::new(FormBound::PartHead))));
            }
            this.parsed_at_bound = true;
            return this.let_parse(cx);
        }
        if this.since_parse >= PACE {
            return this.let_parse(cx);
        }
        let mut chunk = match this.held.take() {
            Some(held) => held,
            None => match Pin::new(&mut this.body).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => chunk,
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Some(Err(err.into()))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {
                    // multer parses on its own before it waits.
                    this.since_parse = 0;
                    return Poll::Pending;
                }
            },
        };
        if looking {
            let room = usize::try_from(HEAD_MAX - this.in_phase).unwrap_or(usize::MAX);
            if chunk.len() > room {
                this.held = Some(chunk.split_off(room));
            }
            this.in_phase += chunk.len() as u64;
        }
        this.since_parse += chunk.len() as u64;
        Poll::Ready(Some(Ok(chunk)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn paced(
        chunks: Vec<&'static [u8]>,
        phase: &Arc<AtomicU64>,
    ) -> Paced<impl Stream<Item = Result<Bytes, std::io::Error>> + Unpin> {
        let body = futures::stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        Paced::new(body, phase.clone())
    }

    #[tokio::test]
    async fn a_part_is_looked_for_in_at_most_head_max_bytes() {
        static BIG: [u8; 40 * 1024] = [b'a'; 40 * 1024];
        let phase = Arc::new(AtomicU64::new(1));
        let mut body = paced(vec![&BIG], &phase);
        let first = body.next().await.expect("a chunk").expect("bytes");
        assert_eq!(first.len() as u64, HEAD_MAX);
        // Over the bound: one pause to parse, then the refusal.
        let refused = body.next().await.expect("an item").expect_err("refused");
        assert!(matches!(
            refused.downcast_ref::<FormBound>(),
            Some(FormBound::PartHead)
        ));
    }

    #[tokio::test]
    async fn content_is_not_bounded_by_the_head_limit() {
        static BIG: [u8; 40 * 1024] = [b'a'; 40 * 1024];
        let phase = Arc::new(AtomicU64::new(2));
        let body = paced(vec![&BIG, &BIG, &BIG], &phase);
        let read: Vec<_> = body.collect().await;
        let total: usize = read.iter().map(|c| c.as_ref().expect("bytes").len()).sum();
        assert_eq!(total, 3 * BIG.len());
    }
}
