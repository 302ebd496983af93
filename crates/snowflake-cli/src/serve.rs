//! `snowflake serve`: flags and environment into a server config, logging,
//! and a runtime to run it on.

use std::time::Duration;

use snowflake::Error;
use snowflake_server::Config;
use snowflake_server::input::parse_fields;

use crate::Failure;
use crate::args::{LogFormat, ServeArgs};

pub fn run(args: &ServeArgs) -> Result<(), Failure> {
    let mut config = config(args)?;
    if !args.etcd.etcd.is_empty() {
        if args.state_file.is_some() {
            let path = args.state_file.as_deref().map(|p| p.display().to_string());
            return Err(Failure::Usage(Error::invalid_value(
                "state_file",
                &path.unwrap_or_default(),
                "with --etcd the mark lives in etcd; leave out --state-file",
            )));
        }
        config.cluster = Some(crate::cluster::config(
            &args.etcd,
            &config.layout,
            config.node.clone(),
            &args.lease_ttl,
        )?);
    }
    init_logging(args.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| Failure::Runtime(format!("cannot start the runtime: {err}")))?;
    runtime
        .block_on(snowflake_server::serve(config))
        .map_err(|err| match err {
            snowflake_server::ServeError::Generator(err) => Failure::from(err),
            other => Failure::Runtime(other.to_string()),
        })
}

fn config(args: &ServeArgs) -> Result<Config, Error> {
    let layout = args.layout.resolve()?;
    let listen = args.listen.trim().parse().map_err(|_| {
        Error::invalid_value(
            "listen",
            &args.listen,
            "give an address and port, such as 127.0.0.1:8080 or [::1]:8080",
        )
    })?;
    let field_args = args.field_args();
    let pairs = field_args.pairs(None);
    let node = parse_fields(&layout, &pairs)?
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    let request_timeout = args
        .request_timeout
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|s| (1..=3600).contains(s))
        .ok_or_else(|| {
            Error::invalid_value(
                "request_timeout",
                &args.request_timeout,
                "a timeout is 1 to 3600 seconds",
            )
        })?;
    let max_concurrency = args
        .max_concurrency
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=1_000_000).contains(n))
        .ok_or_else(|| {
            Error::invalid_value(
                "max_concurrency",
                &args.max_concurrency,
                "a limit is 1 to 1000000",
            )
        })?;
    Ok(Config {
        listen,
        layout,
        node,
        state_file: args.state_file.clone(),
        request_timeout: Duration::from_secs(request_timeout),
        max_concurrency,
        cluster: None,
    })
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
