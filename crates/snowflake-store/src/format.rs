//! The mark file's text: one line that says what it is, which layout it
//! belongs to, the mark, and a checksum over all of that.
//!
//! ```text
//! snowflake-mark v2 layout=time:41,datacenter:5,machine:5,sequence:12 epoch=1288834974657 tick=1 mark=1700000000999 crc=5d0e1f2a
//! ```
//!
//! Earlier builds wrote the mark alone (`1700000000999`); that form is still
//! read, once, and the store then rewrites it in this one.

use snowflake::{Layout, UnixMillis};

const MAGIC: &str = "snowflake-mark";
const VERSION: &str = "v2";

/// A mark read back from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stored {
    pub(crate) mark_ms: i64,
    /// Written by an earlier build as a bare number, so it names no layout.
    pub(crate) plain: bool,
}

/// The file's whole text for `mark_ms` under `layout`, newline included.
pub(crate) fn encode(layout: &Layout, mark_ms: i64) -> String {
    let body = format!(
        "{MAGIC} {VERSION} layout={} epoch={} tick={} mark={mark_ms}",
        layout.spec(),
        layout.epoch_ms(),
        layout.tick_ms()
    );
    let crc = crc32(body.as_bytes());
    format!("{body} crc={crc:08x}\n")
}

/// Reads a file's text. With a layout, the file must belong to it and its
/// mark must lie within the layout's time range; without one (a store read
/// before it was opened) only the file's own integrity is checked.
///
/// The error says what is wrong, for a message that also names the file.
pub(crate) fn decode(text: &str, layout: Option<&Layout>) -> Result<Stored, String> {
    if text.is_empty() {
        return Err("it is empty, so a write was cut short".into());
    }
    let plain = is_number(text.trim_end_matches('\n'));
    // A torn write can stop inside the magic word, so a prefix of it is ours too.
    let ours = plain || text.starts_with(MAGIC) || MAGIC.starts_with(text);
    if !ours {
        return Err(format!(
            "it is not a mark file; it begins {:?}",
            text.chars().take(32).collect::<String>()
        ));
    }
    // Every form this store ever wrote ends its one line with a newline.
    let Some(line) = text.strip_suffix('\n') else {
        return Err(
            "it does not end with a newline, so a write was cut short (a torn write)".into(),
        );
    };
    if line.contains('\n') {
        return Err("it holds more than one line; a mark file holds one".into());
    }
    let stored = if plain {
        let mark_ms = line
            .parse::<i64>()
            .map_err(|_| format!("its mark {line} does not fit in 64-bit Unix milliseconds"))?;
        Stored {
            mark_ms,
            plain: true,
        }
    } else {
        decode_line(line, layout)?
    };
    if let Some(layout) = layout {
        check_range(layout, stored.mark_ms)?;
    }
    Ok(stored)
}

fn decode_line(line: &str, layout: Option<&Layout>) -> Result<Stored, String> {
    let rest = line
        .strip_prefix(MAGIC)
        .and_then(|r| r.strip_prefix(' '))
        .ok_or("it is not a mark file; its first word is not followed by a version")?;
    let version = rest.split(' ').next().unwrap_or_default();
    if version != VERSION {
        return Err(format!(
            "it is in format {version:?}, which this build cannot read; it reads {VERSION} \
             and the bare number earlier builds wrote"
        ));
    }
    // The checksum goes first: past it, a field that does not parse was
    // written that way, not damaged.
    let (body, crc_text) = line
        .rsplit_once(" crc=")
        .ok_or("it is corrupt: it has no checksum")?;
    let stated = (crc_text.len() == 8)
        .then(|| u32::from_str_radix(crc_text, 16).ok())
        .flatten()
        .ok_or_else(|| format!("it is corrupt: its checksum {crc_text:?} is not 8 hex digits"))?;
    let actual = crc32(body.as_bytes());
    if stated != actual {
        return Err(format!(
            "it is corrupt: its checksum is {stated:08x}, but its contents sum to {actual:08x}"
        ));
    }
    let (body, mark) = field(body, "mark")?;
    let (body, tick) = field(body, "tick")?;
    let (body, epoch) = field(body, "epoch")?;
    let spec = body
        .strip_prefix(MAGIC)
        .and_then(|r| r.strip_prefix(' '))
        .and_then(|r| r.strip_prefix(VERSION))
        .and_then(|r| r.strip_prefix(" layout="))
        .ok_or("its layout is missing")?;
    let mark_ms: i64 = number(mark, "mark")?;
    let epoch_ms: i64 = number(epoch, "epoch")?;
    let tick_ms: u64 = number(tick, "tick")?;
    if let Some(layout) = layout {
        let ours = (layout.spec(), layout.epoch_ms(), layout.tick_ms());
        if (spec, epoch_ms, tick_ms) != (ours.0.as_str(), ours.1, ours.2) {
            return Err(format!(
                "it belongs to layout {spec} with epoch {epoch_ms} and {tick_ms} ms ticks, \
                 not to this generator's layout {} with epoch {} and {} ms ticks",
                ours.0, ours.1, ours.2
            ));
        }
    }
    Ok(Stored {
        mark_ms,
        plain: false,
    })
}

/// Splits ` name=value` off the end of `body`.
fn field<'a>(body: &'a str, name: &str) -> Result<(&'a str, &'a str), String> {
    let mut sep = String::from(" ");
    sep.push_str(name);
    sep.push('=');
    body.rsplit_once(sep.as_str())
        .ok_or_else(|| format!("its {name} is missing"))
}

fn number<T: core::str::FromStr>(text: &str, name: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("its {name} {text:?} is not a whole number"))
}

fn is_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A mark before the epoch or past the end is not "nothing issued" or "time
/// ran out": it is a file that cannot belong to this layout's generator.
fn check_range(layout: &Layout, mark_ms: i64) -> Result<(), String> {
    let epoch = layout.epoch_ms();
    if mark_ms < epoch {
        return Err(format!(
            "its mark {mark_ms} ({}) is before the layout's epoch {epoch} ({})",
            UnixMillis(mark_ms),
            UnixMillis(epoch)
        ));
    }
    let last = layout.last_timestamp_ms();
    if mark_ms > last {
        return Err(format!(
            "its mark {mark_ms} ({}) is after the last time the layout can encode, {last} ({})",
            UnixMillis(mark_ms),
            UnixMillis(last)
        ));
    }
    Ok(())
}

/// CRC-32 (IEEE 802.3, as in zip and PNG), bit by bit: the input is one short
/// line, so a table would cost more to build than it saves.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: i64 = 1_700_000_000_999;

    #[test]
    fn crc32_matches_the_published_check_value() {
        // The check value every CRC-32/ISO-HDLC implementation agrees on.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn a_written_mark_reads_back_and_names_its_layout() {
        for layout in Layout::presets() {
            let mark = layout.epoch_ms() + 12_345;
            let text = encode(&layout, mark);
            assert!(text.starts_with("snowflake-mark v2 layout="), "{text}");
            assert!(
                text.contains(&format!("layout={} ", layout.spec())),
                "{text}"
            );
            assert!(
                text.contains(&format!(" epoch={} ", layout.epoch_ms())),
                "{text}"
            );
            assert!(
                text.contains(&format!(" tick={} ", layout.tick_ms())),
                "{text}"
            );
            assert!(text.contains(&format!(" mark={mark} ")), "{text}");
            assert_eq!(text.lines().count(), 1);
            let read = decode(&text, Some(&layout)).unwrap();
            assert_eq!(
                read,
                Stored {
                    mark_ms: mark,
                    plain: false
                }
            );
            assert_eq!(decode(&text, None).unwrap().mark_ms, mark);
        }
    }

    #[test]
    fn every_torn_prefix_is_refused() {
        let layout = Layout::twitter();
        let text = encode(&layout, MARK);
        for cut in 0..text.len() {
            let err = decode(&text[..cut], Some(&layout)).unwrap_err();
            assert!(
                err.contains("cut short"),
                "a file cut to {cut} bytes was not seen as torn: {err}"
            );
        }
        // Cut to a newline-terminated prefix of the old plain form as well.
        assert!(
            decode("17000", Some(&layout))
                .unwrap_err()
                .contains("cut short")
        );
    }

    #[test]
    fn any_changed_byte_is_caught() {
        let layout = Layout::twitter();
        let text = encode(&layout, MARK);
        let body_len = text.find(" crc=").unwrap();
        for i in 0..body_len {
            let mut bytes = text.clone().into_bytes();
            // A digit becomes another digit, a letter another letter: the
            // line still parses, so only the checksum can tell.
            bytes[i] = match bytes[i] {
                b'9' => b'0',
                b'0'..=b'8' => bytes[i] + 1,
                b'z' => b'a',
                b'a'..=b'y' => bytes[i] + 1,
                _ => continue,
            };
            let damaged = String::from_utf8(bytes).unwrap();
            let Err(err) = decode(&damaged, None) else {
                panic!("byte {i} changed and still read: {damaged}");
            };
            assert!(
                err.contains("corrupt")
                    || err.contains("not a mark file")
                    || err.contains("format"),
                "{err}"
            );
        }
        let mut bad_crc = text.clone();
        bad_crc.replace_range(body_len + 5..body_len + 7, "zz");
        assert!(
            decode(&bad_crc, None)
                .unwrap_err()
                .contains("not 8 hex digits")
        );
    }

    #[test]
    fn a_file_of_another_layout_is_refused_with_both_named() {
        let theirs = Layout::discord();
        let text = encode(&theirs, theirs.epoch_ms() + 5);
        let err = decode(&text, Some(&Layout::twitter())).unwrap_err();
        assert!(err.contains("belongs to layout time:42,worker:5"), "{err}");
        assert!(
            err.contains("not to this generator's layout time:41,datacenter:5"),
            "{err}"
        );
        // Same widths, another epoch or tick: still another layout.
        let moved = Layout::twitter().with_epoch_ms(0).unwrap();
        let err = decode(&encode(&moved, MARK), Some(&Layout::twitter())).unwrap_err();
        assert!(err.contains("with epoch 0 "), "{err}");
        let slower = Layout::twitter().with_tick_ms(10).unwrap();
        let err = decode(&encode(&slower, MARK), Some(&Layout::twitter())).unwrap_err();
        assert!(err.contains("and 10 ms ticks"), "{err}");
    }

    #[test]
    fn marks_outside_the_layouts_time_are_refused() {
        let layout = Layout::twitter();
        let epoch = layout.epoch_ms();
        let last = layout.last_timestamp_ms();
        for text in [
            encode(&layout, epoch - 1),
            format!("{}\n", epoch - 1),
            "0\n".into(),
        ] {
            let err = decode(&text, Some(&layout)).unwrap_err();
            assert!(
                err.contains("is before the layout's epoch 1288834974657"),
                "{err}"
            );
        }
        for text in [encode(&layout, last + 1), format!("{}\n", last + 1)] {
            let err = decode(&text, Some(&layout)).unwrap_err();
            assert!(
                err.contains("is after the last time the layout can encode"),
                "{err}"
            );
        }
        assert_eq!(
            decode(&encode(&layout, epoch), Some(&layout))
                .unwrap()
                .mark_ms,
            epoch
        );
        assert_eq!(
            decode(&encode(&layout, last), Some(&layout))
                .unwrap()
                .mark_ms,
            last
        );
    }

    #[test]
    fn the_plain_form_of_earlier_builds_is_read_and_flagged() {
        let read = decode(&format!("{MARK}\n"), Some(&Layout::twitter())).unwrap();
        assert_eq!(
            read,
            Stored {
                mark_ms: MARK,
                plain: true
            }
        );
        let err = decode("99999999999999999999\n", None).unwrap_err();
        assert!(err.contains("does not fit"), "{err}");
    }

    #[test]
    fn other_content_is_named() {
        let layout = Layout::twitter();
        let err = decode("garbage", Some(&layout)).unwrap_err();
        assert_eq!(err, "it is not a mark file; it begins \"garbage\"");
        let err = decode(&format!("{MARK}\n{MARK}\n"), Some(&layout)).unwrap_err();
        assert!(err.contains("not a mark file"), "{err}");
        let two = format!("{}{}", encode(&layout, MARK), encode(&layout, MARK));
        assert!(
            decode(&two, Some(&layout))
                .unwrap_err()
                .contains("more than one line")
        );
        let future = encode(&layout, MARK).replacen(" v2 ", " v3 ", 1);
        let err = decode(&future, Some(&layout)).unwrap_err();
        assert!(
            err.contains("format \"v3\", which this build cannot read"),
            "{err}"
        );
        assert!(decode("", Some(&layout)).unwrap_err().contains("empty"));
    }
}
