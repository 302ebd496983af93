//! What the two servers share: the route they answer and how they listen.

use axum::Router;
use axum::routing::get;

/// `GET /hello`, the one route of both servers.
pub fn hello() -> Router {
    Router::new().route("/hello", get(|| async { "hello, world\n" }))
}

/// Serves `app` on 127.0.0.1:`port` until killed; a port it cannot listen
/// on, or a serve that fails, ends the process with status 1.
pub async fn serve(port: u16, app: Router) {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("cannot listen on 127.0.0.1:{port}: {err}");
            std::process::exit(1);
        }
    };
    if let Err(err) = axum::serve(listener, app).await {
        eprintln!("serve failed: {err}");
        std::process::exit(1);
    }
}
