//! What the command writes: whole answers on stdout, one-line reports on
//! stderr. Shared by `main` and the commands that stream.

use std::io::Write;

use crate::failure::Failure;

/// One line on stderr. Input echoed in it is shown with its control
/// characters escaped, so a value such as `\e[31m` cannot drive the
/// terminal or split the line.
#[allow(clippy::print_stderr)]
pub fn report(line: &str) {
    eprintln!("{}", escape_controls(line));
}

/// `text` with its control characters escaped (`\n`, `\u{1b}`): what a
/// terminal shows of it is what it holds, and it stays on one line.
pub fn escape_controls(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Writes everything at once, so that an error never leaves half an answer
/// on stdout, and a closed pipe (`| head`) is not an error.
pub fn emit(text: &str) -> Result<(), Failure> {
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(out.flush()?)
}

pub fn json_line(value: &impl serde::Serialize) -> String {
    // Serialising these types cannot fail: no maps with non-string keys.
    let mut line = serde_json::to_string(value).unwrap_or_default();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            super::escape_controls("count \u{1b}[31mRED\n is not allowed"),
            "count \\u{1b}[31mRED\\n is not allowed"
        );
        assert_eq!(super::escape_controls("Maschinen-ID 32"), "Maschinen-ID 32");
    }
}
