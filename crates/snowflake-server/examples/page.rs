//! Writes the self-contained web page to stdout, as `snowflake page` does:
//! `cargo run -p snowflake-server --example page > snowflake.html`.
use std::io::Write;

fn main() -> std::io::Result<()> {
    std::io::stdout().write_all(snowflake_server::standalone_page().as_bytes())
}
