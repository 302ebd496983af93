//! The tokenizer: IDs read one at a time from any reader, each with the
//! line it starts on, in constant memory.

use std::io::{self, BufRead};

use snowflake::{Error, Id, TextForm};

/// The longest ID text read whole; longer ones become an error record, and
/// only this much of them is kept.
pub const MAX_ID_LEN: usize = 256;

/// IDs read one at a time from any reader, with the line each is on.
#[derive(Debug)]
pub struct Tokens<R> {
    reader: R,
    line: u64,
    token: Vec<u8>,
    /// Bytes of the reader's buffer that the last token lent out, consumed
    /// when the next is asked for.
    lent: usize,
}

/// One whitespace-separated piece of the input.
#[derive(Debug)]
pub struct Token<'a> {
    /// The 1-based line it starts on.
    pub line: u64,
    /// The bytes, or why they cannot be an ID at all (too long). They are
    /// not checked to be UTF-8 here: [`Id::parse_bytes`] does that only for
    /// an ID it cannot read.
    pub text: Result<&'a [u8], Error>,
}

impl Token<'_> {
    /// The ID in the token, read in `form` (or decimal and `0x` hex).
    pub fn id(&self, form: Option<TextForm>) -> Result<Id, Error> {
        match &self.text {
            Ok(bytes) => Id::parse_bytes(bytes, form),
            Err(err) => Err(err.clone()),
        }
    }

    /// The token as text, for error records; invalid UTF-8 replaced.
    pub fn input(&self) -> std::borrow::Cow<'_, str> {
        match &self.text {
            Ok(bytes) => String::from_utf8_lossy(bytes),
            Err(_) => std::borrow::Cow::Borrowed(""),
        }
    }
}

/// A token copied piece by piece: whether it has begun, on which line, and
/// whether it ran past [`MAX_ID_LEN`].
struct Gathered {
    started: bool,
    start_line: u64,
    too_long: bool,
}

impl Gathered {
    /// Takes what `buf` holds of the token into `token` (up to
    /// [`MAX_ID_LEN`] bytes), counting the line breaks before it into
    /// `line`; returns how many bytes were used and whether the token ended.
    fn take(&mut self, buf: &[u8], token: &mut Vec<u8>, line: &mut u64) -> (usize, bool) {
        let mut i = 0;
        while i < buf.len() {
            let byte = buf[i];
            if byte.is_ascii_whitespace() {
                if self.started {
                    return (i, true);
                }
                if byte == b'\n' {
                    *line += 1;
                }
                i += 1;
                continue;
            }
            if !self.started {
                self.started = true;
                self.start_line = *line;
            }
            let end = buf[i..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(buf.len(), |p| i + p);
            let room = MAX_ID_LEN.saturating_sub(token.len());
            let take = (end - i).min(room);
            token.extend_from_slice(&buf[i..i + take]);
            self.too_long |= end - i > room;
            i = end;
        }
        (i, false)
    }
}

impl<R: BufRead> Tokens<R> {
    /// Reads tokens from `reader`, counting lines from 1.
    pub fn new(reader: R) -> Self {
        Tokens {
            reader,
            line: 1,
            token: Vec::with_capacity(64),
            lent: 0,
        }
    }

    /// The next token, or `None` at the end of the input.
    pub fn next_token(&mut self) -> io::Result<Option<Token<'_>>> {
        self.reader.consume(std::mem::take(&mut self.lent));
        // The common case: the whole token, and the whitespace after it,
        // already in the reader's buffer. It is lent from there, not copied.
        if let Some((start, end, lines)) = self.whole_token()? {
            // The buffer is asked for again only so that the token can
            // borrow it; nothing was consumed, so it holds the same bytes (a
            // reader that broke that promise gets an error, not a panic).
            let buf = self.reader.fill_buf()?;
            let text = buf
                .get(start..end)
                .ok_or_else(|| io::Error::other("the reader's buffer changed between two looks"))?;
            self.line += lines;
            self.lent = end;
            return Ok(Some(Token {
                line: self.line,
                text: Ok(text),
            }));
        }
        self.copied_token()
    }

    /// The next token, copied out of the reader's buffer a piece at a
    /// time: one that spans two fills of it, or is too long to lend.
    fn copied_token(&mut self) -> io::Result<Option<Token<'_>>> {
        self.token.clear();
        let mut gathered = Gathered {
            started: false,
            start_line: self.line,
            too_long: false,
        };
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if buf.is_empty() {
                break;
            }
            let (used, ended) = gathered.take(buf, &mut self.token, &mut self.line);
            self.reader.consume(used);
            if ended {
                break;
            }
        }
        if !gathered.started {
            return Ok(None);
        }
        let text = if gathered.too_long {
            let shown: String = String::from_utf8_lossy(&self.token)
                .chars()
                .take(32)
                .collect();
            Err(Error::invalid_value(
                "id",
                &format!("\"{shown}...\""),
                "an ID is at most 256 characters",
            ))
        } else {
            Ok(&self.token[..])
        };
        Ok(Some(Token {
            line: gathered.start_line,
            text,
        }))
    }

    /// Where the next token lies in the reader's buffer, and how many line
    /// breaks come before it, if all of it and the whitespace that ends it
    /// are there and it is not too long. Nothing is consumed or counted
    /// here: the caller does both once it has lent the token out.
    fn whole_token(&mut self) -> io::Result<Option<(usize, usize, u64)>> {
        let buf = match self.reader.fill_buf() {
            Ok(buf) => buf,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => return Ok(None),
            Err(err) => return Err(err),
        };
        let mut start = 0;
        let mut lines = 0;
        while let Some(&byte) = buf.get(start) {
            if !byte.is_ascii_whitespace() {
                break;
            }
            lines += u64::from(byte == b'\n');
            start += 1;
        }
        // A byte above the space is never whitespace: one comparison for
        // each character of an ID.
        let end = buf[start..]
            .iter()
            .position(|&b| b <= b' ' && b.is_ascii_whitespace())
            .map(|p| start + p);
        match end {
            Some(end) if end > start && end - start <= MAX_ID_LEN => Ok(Some((start, end, lines))),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: &[u8], capacity: usize) -> Vec<(u64, Result<String, String>)> {
        let reader = io::BufReader::with_capacity(capacity, input);
        let mut tokens = Tokens::new(reader);
        let mut out = Vec::new();
        while let Some(t) = tokens.next_token().unwrap() {
            out.push((
                t.line,
                t.text
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .map_err(|e| e.to_string()),
            ));
        }
        out
    }

    /// A reader interrupted by a signal on every other read loses nothing.
    #[test]
    fn an_interrupted_read_is_retried() {
        struct Flaky<'a> {
            data: &'a [u8],
            interrupt: bool,
        }
        impl io::Read for Flaky<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.interrupt = !self.interrupt;
                if self.interrupt {
                    return Err(io::ErrorKind::Interrupted.into());
                }
                // Three bytes at a time, so that tokens straddle reads.
                let n = buf.len().min(3).min(self.data.len());
                buf[..n].copy_from_slice(&self.data[..n]);
                self.data = &self.data[n..];
                Ok(n)
            }
        }
        let input = b"4194439168 12\n\n0xfa021000\n";
        let reader = io::BufReader::with_capacity(
            8,
            Flaky {
                data: input,
                interrupt: false,
            },
        );
        let mut tokens = Tokens::new(reader);
        let mut got = Vec::new();
        while let Some(t) = tokens.next_token().unwrap() {
            got.push((
                t.line,
                String::from_utf8_lossy(t.text.unwrap()).into_owned(),
            ));
        }
        assert_eq!(
            got,
            [
                (1, "4194439168".to_string()),
                (1, "12".to_string()),
                (3, "0xfa021000".to_string())
            ]
        );
    }

    #[test]
    fn tokens_carry_their_line_whatever_the_buffer_size() {
        let input = b"  1 22\n\n333\t4444\r\n 55555 \n";
        let expected: Vec<(u64, Result<String, String>)> =
            [(1, "1"), (1, "22"), (3, "333"), (3, "4444"), (4, "55555")]
                .into_iter()
                .map(|(l, t)| (l, Ok(t.to_string())))
                .collect();
        // A one-byte buffer splits every token across reads.
        for capacity in [1, 2, 3, 7, 64] {
            assert_eq!(tokens(input, capacity), expected, "capacity {capacity}");
        }
        assert!(tokens(b"", 8).is_empty());
        assert!(tokens(b" \n\t ", 8).is_empty());
    }

    #[test]
    fn overlong_and_non_utf8_tokens_are_errors_that_do_not_stop_the_rest() {
        let mut input = vec![b'9'; 10_000];
        input.extend_from_slice(b"\n\xff\xfe 7\n");
        let got = tokens(&input, 100);
        assert_eq!(got.len(), 3);
        let long = got[0].1.as_ref().unwrap_err();
        assert!(long.starts_with("id \"99999999"), "{long}");
        assert!(
            long.ends_with("is not allowed; an ID is at most 256 characters"),
            "{long}"
        );
        assert!(long.len() < 120, "{long}");
        assert_eq!(got[1], (2, Ok("\u{fffd}\u{fffd}".to_string())));
        let bad = Token {
            line: 2,
            text: Ok(b"\xff\xfe"),
        };
        assert!(
            bad.id(None)
                .unwrap_err()
                .to_string()
                .contains("an ID is text in UTF-8")
        );
        assert_eq!(bad.input(), "\u{fffd}\u{fffd}");
        assert_eq!(got[2], (2, Ok("7".to_string())));
    }
}
