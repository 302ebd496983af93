//! The baseline for `run.sh`: one axum 0.8 route, `GET /hello`, on the same
//! tokio multi-thread runtime `snowflake serve` uses, with nothing else on
//! it (no tracing, no metrics, no limits). Whatever `snowflake serve` costs
//! above this per request is its own.
//!
//! Usage: `bare-hello PORT` — listens on 127.0.0.1:PORT until killed.

#[tokio::main]
async fn main() {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        Some(Ok(port)) => port,
        _ => {
            eprintln!("usage: bare-hello PORT");
            std::process::exit(2);
        }
    };
    snowflake_http_bench::serve(port, snowflake_http_bench::hello()).await;
}
