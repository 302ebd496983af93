//! The bytes of an answer of fresh IDs: JSON (`{"layout":…,"ids":["…",…]}`)
//! or one ID per line, each ID in the text form asked for, masked if asked.
//! Only the bytes: which IDs, and whether they may leave, is `issue`'s.

use snowflake::{Id, IdBatch, SharedGenerator, TextForm};
use snowflake_mask::Masker;

/// The media types an answer of IDs comes in (their names are the IDs
/// route's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdsMedia {
    /// `{"layout":…,"ids":[…]}`.
    Json,
    /// One ID per line.
    Lines,
}

/// How an answer of IDs is written: its media type, each ID's text form,
/// and whether the IDs go through the masking key first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdsFormat {
    pub(crate) media: IdsMedia,
    pub(crate) form: TextForm,
    pub(crate) masked: bool,
}

impl IdsFormat {
    /// Appends `batch` to `out`, each ID masked by `mask` if given; `first`
    /// says whether no ID was written yet.
    fn push(
        &self,
        batch: IdBatch,
        mask: Option<&Masker>,
        first: &mut bool,
        out: &mut Vec<u8>,
    ) -> Result<(), snowflake::Error> {
        let mut buf = [0u8; TextForm::MAX_LEN];
        for id in batch {
            let id = match mask {
                Some(masker) => masker.mask(id)?,
                None => id,
            };
            let start = self.form.write_back(id, &mut buf);
            self.push_text(&buf[start..], first, out);
        }
        Ok(())
    }

    /// Appends one ID already written as `text`: the one place where what
    /// stands between IDs (quotes and commas, or a line's end) is written.
    fn push_text(&self, text: &[u8], first: &mut bool, out: &mut Vec<u8>) {
        match self.media {
            IdsMedia::Lines => {
                out.extend_from_slice(text);
                out.push(b'\n');
            }
            IdsMedia::Json => {
                if !*first {
                    out.push(b',');
                }
                out.push(b'"');
                out.extend_from_slice(text);
                out.push(b'"');
            }
        }
        *first = false;
    }

    /// A whole body of one ID, what `start`, `push` and `end` write, in a
    /// buffer of exactly its size: `Bytes` takes such a buffer over as it
    /// is, where a larger one costs it an allocation more.
    fn one(&self, prefix: &str, id: Id) -> Vec<u8> {
        let mut buf = [0u8; TextForm::MAX_LEN];
        let start = self.form.write_back(id, &mut buf);
        let text = &buf[start..];
        let around = match self.media {
            IdsMedia::Lines => 1,
            IdsMedia::Json => prefix.len() + 4,
        };
        let mut out = Vec::with_capacity(text.len() + around);
        self.start(prefix, &mut out);
        self.push_text(text, &mut true, &mut out);
        self.end(&mut out);
        out
    }

    fn start(&self, prefix: &str, out: &mut Vec<u8>) {
        if self.media == IdsMedia::Json {
            out.extend_from_slice(prefix.as_bytes());
        }
    }

    fn end(&self, out: &mut Vec<u8>) {
        if self.media == IdsMedia::Json {
            out.extend_from_slice(b"]}");
        }
    }
}

/// The start of every JSON answer of IDs issued in the layout named `name`.
pub(crate) fn json_prefix(name: &str) -> Box<str> {
    format!(
        "{{\"layout\":{},\"ids\":[",
        serde_json::Value::from(name.to_owned())
    )
    .into()
}

/// `count` IDs from `generator`, in as many batches as time units need,
/// each masked by `mask` if given.
fn fill(
    generator: &SharedGenerator,
    format: &IdsFormat,
    mask: Option<&Masker>,
    count: u64,
    first: &mut bool,
    out: &mut Vec<u8>,
) -> Result<(), snowflake::Error> {
    let mut left = count;
    while left > 0 {
        let batch = generator.next_ids(left)?;
        left -= batch.len() as u64;
        format.push(batch, mask, first, out)?;
    }
    Ok(())
}

/// Where a piece of an answer stands in it: the JSON opening is written
/// before the first piece, the closing after the last.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub(crate) first: bool,
    pub(crate) last: bool,
}

impl Piece {
    /// The whole answer in one piece.
    pub(crate) const WHOLE: Piece = Piece {
        first: true,
        last: true,
    };
}

/// `count` fresh IDs from `generator` as `piece` of an answer whose JSON
/// opening is `prefix` ([`json_prefix`]), each masked by `mask` if given.
pub(crate) fn write(
    generator: &SharedGenerator,
    prefix: &str,
    format: &IdsFormat,
    mask: Option<&Masker>,
    count: u64,
    piece: Piece,
) -> Result<Vec<u8>, snowflake::Error> {
    let Piece { first, last } = piece;
    if count == 1 && first && last && mask.is_none() {
        // The generator's own path for one ID: a single compare-and-swap
        // when the time unit has a number left, where a batch of one takes
        // the general path.
        return Ok(format.one(prefix, generator.next_id()?));
    }
    let mut out = Vec::with_capacity(count as usize * 23 + prefix.len() + 2);
    if first {
        format.start(prefix, &mut out);
    }
    let mut fresh = first;
    fill(generator, format, mask, count, &mut fresh, &mut out)?;
    if last {
        format.end(&mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use snowflake::{Clock, Generator, Layout, ManualClock, SharedGenerator};

    use super::*;

    fn generator(at_ms: i64) -> SharedGenerator {
        let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(at_ms));
        Generator::builder(Layout::twitter())
            .node(&[("machine", 3)])
            .clock(clock)
            .build()
            .unwrap()
    }

    /// The one-ID body is what the general path writes for a count of one,
    /// byte for byte, in every form and media type, whatever the sequence
    /// had reached, and its buffer is exactly full.
    #[test]
    fn one_id_is_written_as_the_general_path_writes_it() {
        let prefix = json_prefix("twitter");
        for form in TextForm::ALL {
            for media in [IdsMedia::Json, IdsMedia::Lines] {
                let format = IdsFormat {
                    media,
                    form,
                    masked: false,
                };
                for issued_before in [0, 1, 7, 4094, 4095] {
                    let fast = generator(1_700_000_000_000);
                    let general = generator(1_700_000_000_000);
                    for _ in 0..issued_before {
                        fast.next_id().unwrap();
                        general.next_id().unwrap();
                    }
                    let body = write(&fast, &prefix, &format, None, 1, Piece::WHOLE).unwrap();
                    let mut expected = Vec::new();
                    format.start(&prefix, &mut expected);
                    fill(&general, &format, None, 1, &mut true, &mut expected).unwrap();
                    format.end(&mut expected);
                    let what = format!("{form:?}, {media:?}, after {issued_before}");
                    assert_eq!(body, expected, "{what}");
                    assert_eq!(body.len(), body.capacity(), "{what}");
                }
            }
        }
    }

    /// The opening names the layout as a JSON string, escaped.
    #[test]
    fn the_json_opening_names_the_layout() {
        assert_eq!(&*json_prefix("twitter"), r#"{"layout":"twitter","ids":["#);
        assert_eq!(&*json_prefix("a\"b"), r#"{"layout":"a\"b","ids":["#);
    }
}
