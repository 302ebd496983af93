//! `snowflake serve`: flags and environment into a source of IDs and the
//! server's settings, logging, and a runtime to run them on. This is the one
//! place that wires the server to where its IDs come from: a standalone
//! generator, or (with the `cluster` feature) a slot leased on etcd.

use std::sync::Arc;
use std::time::Duration;

use snowflake::{Clock, Generator, Layout, SystemClock};
use snowflake_io::parse_fields;
use snowflake_mask::Masker;
use snowflake_server::{Config, IdSource, Standalone};
use snowflake_store::FileMarkStore;

use crate::args::{LogFormat, ServeArgs};
use crate::failure::Failure;
use crate::identity::Identity;
use crate::usage::UsageError;

/// `given`: the node values as `NodeArgs::given` reads them, each with the
/// flag or variable it came from.
pub fn run(args: &ServeArgs, given: &[(&str, &str, String)]) -> Result<(), Failure> {
    let layout = args.layout.resolve()?;
    let pairs: Vec<(&str, &str)> = given.iter().map(|(name, text, _)| (*name, *text)).collect();
    let values = parse_fields(&layout, &pairs)?;
    let node: Vec<(String, u64)> = values
        .iter()
        .map(|(name, value)| (name.to_string(), *value))
        .collect();
    let clustered = !args.etcd.etcd.is_empty();
    let sourced: Vec<(&str, u64, String)> = values
        .iter()
        .zip(given)
        .map(|((name, value), (_, _, from))| (*name, *value, from.clone()))
        .collect();
    let identity = Identity::new(&layout, &sourced, clustered);
    // Before anything else is read or bound: a replica without a node of
    // its own never starts (see identity.rs for where the line is).
    identity.check(args.listen, args.require_node)?;
    if clustered {
        crate::cluster::available()?;
        if let Some(path) = &args.state_file {
            return Err(Failure::Argument(UsageError::new(
                "state_file",
                &path.display().to_string(),
                "with --etcd the mark lives in etcd; leave out --state-file",
            )));
        }
    }
    // The key is read, and the layout checked against it, before anything
    // listens: a bad key file is a usage error, not a service that refuses.
    let masker = match &args.mask_key_file {
        Some(path) => Some(Arc::new(crate::mask::masker(path, &layout)?)),
        None => None,
    };
    let config = config(args, masker);
    init_logging(args.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| Failure::Runtime(format!("cannot start the runtime: {err}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|err| Failure::Runtime(format!("cannot listen on {}: {err}", args.listen)))?;
        let source: Arc<dyn IdSource> = if clustered {
            let addr = listener.local_addr().map_err(Failure::from)?;
            crate::cluster::source(args, &layout, node, addr)?
        } else {
            standalone(args, layout, &node)?
        };
        if identity.is_default() {
            tracing::warn!("{}", identity.line());
        } else {
            tracing::info!("{}", identity.line());
        }
        snowflake_server::serve(listener, source, config)
            .await
            .map_err(|err| Failure::Runtime(err.to_string()))
    })
}

/// The server's settings from the flags, the one place they are built.
fn config(args: &ServeArgs, masker: Option<Arc<Masker>>) -> Config {
    let secs = Duration::from_secs;
    let config = Config::new()
        .with_request_timeout(secs(args.request_timeout))
        .with_max_concurrency(args.max_concurrency)
        .with_max_large_batches(args.max_large_batches)
        .with_header_timeout(secs(args.header_timeout))
        .with_idle_timeout(secs(args.idle_timeout))
        .with_max_connections(args.max_connections)
        .with_shutdown_timeout(secs(args.shutdown_timeout))
        .with_cors_origins(args.cors_origins.clone())
        .with_allowed_hosts(args.allowed_hosts.clone())
        .with_http2(args.http2)
        .with_allow_unmask(args.allow_unmask)
        .with_require_clock_sync(args.require_clock_sync);
    match masker {
        Some(masker) => config.with_masker(masker),
        None => config,
    }
}

/// One generator with a fixed node identity, on the system clock: a request
/// costs far more than a reading of the real clock, so the cheaper clocks
/// gain nothing here, every ID's time is exact, and no refresh thread
/// competes for the CPU.
fn standalone(
    args: &ServeArgs,
    layout: Layout,
    node: &[(String, u64)],
) -> Result<Arc<dyn IdSource>, Failure> {
    let node: Vec<(&str, u64)> = node.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let builder = Generator::builder(layout).node(&node).clock(clock);
    let generator = match &args.state_file {
        Some(path) => builder.store(FileMarkStore::new(path)).build()?,
        None => {
            tracing::warn!(
                "no --state-file: a restart with the clock set back could repeat IDs; \
                 give one in production"
            );
            builder.build()?
        }
    };
    Ok(Standalone::new(generator))
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only where a person reads it, never into a log file.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        );
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};
    use snowflake_server::Config;

    use super::config;
    use crate::args::{Cli, Command, ServeArgs};

    /// `serve` with `flags`, its variables ignored: what the environment of
    /// the test run holds must not decide it.
    fn serve(flags: &[&str]) -> ServeArgs {
        let command =
            Cli::command().mut_subcommand("serve", |serve| serve.mut_args(|arg| arg.env(None)));
        let argv = ["snowflake", "serve"].iter().chain(flags);
        let matches = command.try_get_matches_from(argv).unwrap();
        match Cli::from_arg_matches(&matches).unwrap().command {
            Command::Serve(args) => *args,
            _ => unreachable!("the serve subcommand parsed as another"),
        }
    }

    /// Every setting `serve` leaves at its default is the server's own
    /// default: clap's defaults are the server's constants, not copies.
    #[test]
    fn the_flags_defaults_are_the_servers() {
        assert_eq!(
            format!("{:?}", config(&serve(&[]), None)),
            format!("{:?}", Config::new())
        );
    }

    /// `--require-clock-sync` without a bound takes the server's default
    /// bound, the figure its help gives.
    #[test]
    fn require_clock_sync_alone_takes_the_default_bound() {
        let bound = Config::DEFAULT_MAX_CLOCK_ERROR_MS;
        assert_eq!(
            serve(&["--require-clock-sync"]).require_clock_sync,
            Some(bound)
        );
        let help = Cli::command()
            .find_subcommand_mut("serve")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains(&format!("(default {bound})")), "{help}");
    }
}
