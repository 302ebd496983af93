//! The command line, as clap sees it. Values that depend on the layout (field
//! values, times) arrive as text and are checked by the core's parsers, so the
//! CLI and the HTTP API give the same errors; numbers that do not (counts,
//! timeouts, limits) are parsed by clap, with the value parsers below.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Parser, Subcommand};
use snowflake::{Error, Layout, TextForm};

use snowflake_io::{parse_time, resolve_layout};
use snowflake_server::Config;

/// Where `serve` listens, and `healthcheck` asks, unless told otherwise.
const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Compose, decode and generate Snowflake IDs.
#[derive(Debug, Parser)]
#[command(name = "snowflake", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build one ID from a time and field values, and show its 64 bits.
    Compose(ComposeArgs),
    /// Show what IDs are made of: time, fields and bits.
    Decode(DecodeArgs),
    /// The smallest and largest ID of a time window, for `WHERE id BETWEEN`.
    Bounds(BoundsArgs),
    /// The preset layouts: widths, epoch, when each runs out and the time
    /// left, capacity.
    Layouts(LayoutsArgs),
    /// Propose a layout for a peak rate, a number of nodes and a lifetime,
    /// or check one (--layout) against them.
    Plan(PlanArgs),
    /// Read a dump of IDs after an incident: duplicates, each node's IDs and
    /// their order, IDs from the future, saturated time units.
    ///
    /// Duplicates are found exactly, in memory bounded by the distinct IDs:
    /// 8 bytes each in a vector that is sorted and rid of its copies
    /// whenever it fills, at most 32 bytes per distinct ID in all, plus
    /// about 100 bytes per node and 40 per duplicated value.
    Audit(AuditArgs),
    /// Ask a running service whether it is healthy (/healthz) and ready
    /// (/readyz): exit 0 when every answer is 2xx, for container health checks.
    Healthcheck(HealthcheckArgs),
    /// Issue fresh IDs from a generator, one per line.
    Generate(GenerateArgs),
    /// Run the web tool and the JSON API that hands out IDs.
    Serve(Box<ServeArgs>),
    /// Cluster mode on etcd: which nodes hold which slots.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Print SQL for PostgreSQL or MySQL/MariaDB: functions that decode and compose a layout's IDs, a generator of them, partitions by ID range.
    Sql(SqlArgs),
    /// Mask IDs for the public: a keyed permutation that hides their time,
    /// node and order, in the layout's width.
    Mask(MaskArgs),
    /// Turn masked IDs back into the IDs that were masked, with the key.
    Unmask(UnmaskArgs),
    /// Masking keys: `mask-key new PATH` writes one.
    #[command(subcommand)]
    MaskKey(MaskKeyCommand),
    /// Print a completion script for a shell.
    Completions(CompletionsArgs),
    /// Print the manual page (roff), for `man -l -`.
    Man,
    /// The web page as one self-contained HTML file that works opened from
    /// disk, offline: `snowflake page > snowflake.html`.
    Page,
    /// Print a reference page in Markdown, made from its source: the
    /// commands and flags, the HTTP API, or the preset layouts.
    Reference(ReferenceArgs),
}

/// `reference PAGE`.
#[derive(Debug, Args)]
pub struct ReferenceArgs {
    /// Which page.
    #[arg(value_enum)]
    pub page: ReferencePage,
}

/// A page of `docs/reference/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReferencePage {
    /// Every command and flag, from the argument parser.
    Cli,
    /// Every route of the service, from its OpenAPI document.
    HttpApi,
    /// The preset layouts, from the core's table.
    Layouts,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// List the slots in use, by whom and since when.
    Status(ClusterStatusArgs),
}

/// Where the cluster lives on etcd.
#[derive(Debug, Args, Clone)]
pub struct EtcdArgs {
    /// etcd endpoints, comma-separated: http://10.0.0.1:2379,http://10.0.0.2:2379.
    #[arg(
        long,
        value_name = "URL[,URL...]",
        env = "SNOWFLAKE_ETCD",
        value_delimiter = ','
    )]
    pub etcd: Vec<String>,
    /// The cluster's name; clusters with other names share nothing.
    #[arg(
        long,
        default_value = "default",
        env = "SNOWFLAKE_CLUSTER",
        value_name = "NAME"
    )]
    pub cluster: String,
    /// A PEM CA certificate to trust for https:// endpoints, instead of the
    /// system's roots.
    #[arg(long, value_name = "PATH", env = "SNOWFLAKE_ETCD_CA")]
    pub etcd_ca: Option<PathBuf>,
    /// A PEM client certificate for etcd's --client-cert-auth (mTLS); needs
    /// --etcd-key and https:// endpoints.
    #[arg(
        long,
        value_name = "PATH",
        env = "SNOWFLAKE_ETCD_CERT",
        requires = "etcd_key"
    )]
    pub etcd_cert: Option<PathBuf>,
    /// The PEM private key of --etcd-cert.
    #[arg(
        long,
        value_name = "PATH",
        env = "SNOWFLAKE_ETCD_KEY",
        requires = "etcd_cert"
    )]
    pub etcd_key: Option<PathBuf>,
    /// etcd user; the password comes from SNOWFLAKE_ETCD_PASSWORD. Refused
    /// over http:// endpoints unless --etcd-allow-plaintext-password.
    #[arg(long, value_name = "USER", env = "SNOWFLAKE_ETCD_USER")]
    pub etcd_user: Option<String>,
    /// Send the etcd password over http:// endpoints, in clear text, on
    /// purpose (a trusted local network, a sidecar on loopback).
    #[arg(long, env = "SNOWFLAKE_ETCD_ALLOW_PLAINTEXT_PASSWORD")]
    pub etcd_allow_plaintext_password: bool,
}

#[derive(Debug, Args)]
pub struct ClusterStatusArgs {
    #[command(flatten)]
    pub etcd: EtcdArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The help of `--layout`, naming the presets from the core's table.
fn layout_help() -> String {
    format!(
        "A preset ({}) or a custom layout, most significant first: \
         time:41,datacenter:5,machine:5,sequence:12",
        Layout::PRESETS.join(", ")
    )
}

/// Which layout, with optional overrides.
#[derive(Debug, Args)]
pub struct LayoutArgs {
    #[arg(
        long,
        short = 'l',
        default_value = "twitter",
        env = "SNOWFLAKE_LAYOUT",
        help = layout_help()
    )]
    pub layout: String,
    /// Override the layout's epoch: Unix milliseconds or an RFC 3339 date.
    #[arg(
        long,
        value_name = "MS",
        env = "SNOWFLAKE_EPOCH",
        allow_negative_numbers = true
    )]
    pub epoch: Option<String>,
    /// Override the layout's tick: milliseconds per time unit.
    #[arg(
        long,
        value_name = "N",
        env = "SNOWFLAKE_TICK_MS",
        allow_negative_numbers = true
    )]
    pub tick_ms: Option<String>,
}

impl LayoutArgs {
    pub fn resolve(&self) -> Result<Layout, Error> {
        resolve_layout(&self.layout, self.epoch.as_deref(), self.tick_ms.as_deref())
    }
}

/// Field values, by shorthand or by name.
#[derive(Debug, Args)]
pub struct FieldArgs {
    /// Shorthand for -f datacenter=N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub datacenter: Option<String>,
    /// Shorthand for -f machine=N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub machine: Option<String>,
    /// A field's value by name, for any layout: -f worker=1 -f process=0.
    #[arg(
        short = 'f',
        long = "field",
        value_name = "NAME=VALUE",
        allow_negative_numbers = true
    )]
    pub fields: Vec<String>,
}

impl FieldArgs {
    /// Every (name, text) pair, shorthands first, in the order given.
    pub fn pairs<'a>(&'a self, sequence: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
        field_pairs(
            self.datacenter.as_deref(),
            self.machine.as_deref(),
            sequence,
            &self.fields,
        )
    }
}

/// This node's identity for `generate` and `serve`: the same flags and
/// environment variables for both.
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// Shorthand for -f datacenter=N.
    #[arg(
        long,
        value_name = "N",
        env = "SNOWFLAKE_DATACENTER",
        allow_negative_numbers = true
    )]
    pub datacenter: Option<String>,
    /// Shorthand for -f machine=N.
    #[arg(
        long,
        value_name = "N",
        env = "SNOWFLAKE_MACHINE",
        allow_negative_numbers = true
    )]
    pub machine: Option<String>,
    /// A node field's value by name; several as NAME=VALUE,NAME=VALUE in the environment.
    #[arg(
        short = 'f',
        long = "field",
        value_name = "NAME=VALUE",
        env = "SNOWFLAKE_FIELDS",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub fields: Vec<String>,
}

impl NodeArgs {
    /// The node's fields as (name, text) pairs, as `FieldArgs` gives them.
    pub fn pairs(&self) -> Vec<(&str, &str)> {
        field_pairs(
            self.datacenter.as_deref(),
            self.machine.as_deref(),
            None,
            &self.fields,
        )
    }

    /// The flags' own definitions above, for the names messages give them.
    fn definitions() -> clap::Command {
        NodeArgs::augment_args(clap::Command::new("node"))
    }

    /// The same pairs, each with where it came from: the flag
    /// (`--machine`) or the variable (`SNOWFLAKE_MACHINE`) that gave it, as
    /// `matches` (those of the command these arguments are part of) say.
    pub fn given<'a>(&'a self, matches: &ArgMatches) -> Vec<(&'a str, &'a str, String)> {
        let flags = NodeArgs::definitions();
        let from = |id: &str| {
            let arg = flags.get_arguments().find(|arg| arg.get_id() == id);
            let env = arg.and_then(|arg| arg.get_env());
            let long = arg.and_then(|arg| arg.get_long()).unwrap_or(id);
            match (matches.value_source(id), env) {
                (Some(ValueSource::EnvVariable), Some(env)) => env.to_string_lossy().into_owned(),
                _ => format!("--{long}"),
            }
        };
        let mut given = Vec::new();
        if let Some(v) = self.datacenter.as_deref() {
            given.push(("datacenter", v, from("datacenter")));
        }
        if let Some(v) = self.machine.as_deref() {
            given.push(("machine", v, from("machine")));
        }
        let fields = from("fields");
        for (name, text) in field_pairs(None, None, None, &self.fields) {
            given.push((name, text, fields.clone()));
        }
        given
    }

    /// How to give each of the node fields `names`, as flags and as
    /// variables: a field's own flag where it has one (`--machine N`,
    /// `SNOWFLAKE_MACHINE=N`), `-f NAME=N` and `SNOWFLAKE_FIELDS` otherwise;
    /// read from the flags' definitions, so that a new shorthand shows here.
    pub fn how_to_give(names: &[&str]) -> (String, String) {
        let flags = NodeArgs::definitions();
        let env_of = |arg: &clap::Arg| {
            arg.get_env()
                .map_or_else(String::new, |env| env.to_string_lossy().into_owned())
        };
        let (mut given, mut env, mut fields) = (Vec::new(), Vec::new(), Vec::new());
        for name in names {
            match flags.get_arguments().find(|arg| arg.get_id() == *name) {
                Some(arg) => {
                    given.push(format!("--{} N", arg.get_long().unwrap_or(name)));
                    env.push(format!("{}=N", env_of(arg)));
                }
                None => {
                    given.push(format!("-f {name}=N"));
                    fields.push(format!("{name}=N"));
                }
            }
        }
        if let Some(arg) = flags.get_arguments().find(|arg| arg.get_id() == "fields")
            && !fields.is_empty()
        {
            env.push(format!("{}={}", env_of(arg), fields.join(",")));
        }
        (given.join(" "), env.join(" "))
    }
}

/// Every (name, text) pair, shorthands first, in the order given.
fn field_pairs<'a>(
    datacenter: Option<&'a str>,
    machine: Option<&'a str>,
    sequence: Option<&'a str>,
    fields: &'a [String],
) -> Vec<(&'a str, &'a str)> {
    let mut pairs = Vec::new();
    if let Some(v) = datacenter {
        pairs.push(("datacenter", v));
    }
    if let Some(v) = machine {
        pairs.push(("machine", v));
    }
    if let Some(v) = sequence {
        pairs.push(("sequence", v));
    }
    for f in fields {
        match f.split_once('=') {
            Some((name, value)) => pairs.push((name.trim(), value.trim())),
            // Reported by the parser as a missing value for that name.
            None => pairs.push((f.as_str(), "")),
        }
    }
    pairs
}

/// A whole number within `range`, or the sentence that says what is allowed.
fn whole_in(text: &str, range: RangeInclusive<u64>, allowed: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| allowed.to_string())
}

fn count(text: &str) -> Result<u64, String> {
    whole_in(text, 0..=u64::MAX, "a count is a whole number, 0 or more")
}

fn timeout_secs(text: &str) -> Result<u64, String> {
    whole_in(text, 1..=3600, "a timeout is 1 to 3600 seconds")
}

fn concurrency(text: &str) -> Result<usize, String> {
    whole_in(text, 1..=1_000_000, "a limit is 1 to 1000000").map(|n| n as usize)
}

fn listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    text.trim()
        .parse()
        .map_err(|_| "give an address and port, such as 127.0.0.1:8080 or [::1]:8080".to_string())
}

fn origin(text: &str) -> Result<String, String> {
    let text = text.trim().trim_end_matches('/');
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains('/') => Ok(text.to_string()),
        _ => Err("an origin is a scheme and a host, such as https://app.example.com".to_string()),
    }
}

fn lease_secs(text: &str) -> Result<u64, String> {
    whole_in(text, 2..=600, "a lease lives 2 to 600 seconds")
}

#[derive(Debug, Args)]
pub struct ComposeArgs {
    /// The time: Unix milliseconds or an RFC 3339 date; now when left out.
    #[arg(long, short = 't', value_name = "MS", allow_negative_numbers = true)]
    pub timestamp: Option<String>,
    #[command(flatten)]
    pub fields: FieldArgs,
    /// Shorthand for -f sequence=N.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub sequence: Option<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub form: WriteForm,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// IDs in decimal or 0x hexadecimal (or in --format); `-`, or none with
    /// stdin not a terminal, reads them from stdin, whitespace-separated.
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Print one JSON object per ID, one per line.
    #[arg(long)]
    pub json: bool,
    /// Print CSV: a header row, then one row per ID.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    #[command(flatten)]
    pub form: ReadForm,
}

#[derive(Debug, Args)]
pub struct BoundsArgs {
    /// Start of the window: Unix milliseconds or an RFC 3339 date.
    #[arg(long, value_name = "TIME", allow_negative_numbers = true)]
    pub from: String,
    /// End of the window, inclusive: Unix milliseconds or an RFC 3339 date.
    #[arg(long, value_name = "TIME", allow_negative_numbers = true)]
    pub to: String,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

impl BoundsArgs {
    pub fn window(&self) -> Result<(i64, i64), Error> {
        Ok((parse_time("from", &self.from)?, parse_time("to", &self.to)?))
    }
}

/// `--format` on a command that reads IDs (and writes them back in the
/// same form).
#[derive(Debug, Args)]
pub struct ReadForm {
    /// Read IDs in this text form, and write them in it. Without it,
    /// decimal and 0x hex are read.
    #[arg(long, value_name = "FORM", value_parser = FormParser)]
    pub format: Option<TextForm>,
}

/// `--format` on a command that writes IDs it made.
#[derive(Debug, Args)]
pub struct WriteForm {
    /// Write the IDs in this text form (decimal by default).
    #[arg(long, value_name = "FORM", value_parser = FormParser)]
    pub format: Option<TextForm>,
}

impl WriteForm {
    /// The form asked for, decimal by default.
    pub fn or_decimal(&self) -> TextForm {
        self.format.unwrap_or(TextForm::Decimal)
    }
}

/// `--format`: read by the core's parser, so that the CLI and the HTTP API
/// refuse a form in the same words, and listed from the core's list of
/// forms, so that `--help`, the man page and the completions show them and
/// a new form needs no edit here.
#[derive(Clone, Copy, Debug)]
pub struct FormParser;

impl clap::builder::TypedValueParser for FormParser {
    type Value = TextForm;

    fn parse_ref(
        &self,
        _: &clap::Command,
        _: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<TextForm, clap::Error> {
        let text = value.to_string_lossy();
        text.parse::<TextForm>().map_err(|err| {
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{err}\n"))
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            TextForm::ALL
                .iter()
                .map(|form| clap::builder::PossibleValue::new(form.name())),
        ))
    }
}

#[derive(Debug, Args)]
pub struct LayoutsArgs {
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub now: NowArgs,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// How many IDs to issue.
    #[arg(
        short = 'n',
        long,
        default_value = "1",
        value_name = "COUNT",
        allow_negative_numbers = true,
        value_parser = count
    )]
    pub count: u64,
    #[command(flatten)]
    pub node: NodeArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Keep a high-water mark here, so that a rerun never repeats an ID.
    #[arg(long, value_name = "PATH", env = "SNOWFLAKE_STATE_FILE")]
    pub state_file: Option<PathBuf>,
    /// Print each ID's JSON breakdown, one object per line.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub form: WriteForm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; loopback unless told otherwise.
    #[arg(
        long,
        default_value = DEFAULT_LISTEN,
        env = "SNOWFLAKE_LISTEN",
        value_name = "ADDR",
        value_parser = listen_addr
    )]
    pub listen: std::net::SocketAddr,
    #[command(flatten)]
    pub node: NodeArgs,
    /// Refuse to start without a node of its own (node values, or cluster
    /// mode) wherever it listens, not only beyond loopback: for replicas
    /// that listen on loopback too (the container image sets it).
    #[arg(long, env = "SNOWFLAKE_REQUIRE_NODE")]
    pub require_node: bool,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// Keep a high-water mark here, so that a restart never repeats an ID.
    #[arg(long, value_name = "PATH", env = "SNOWFLAKE_STATE_FILE")]
    pub state_file: Option<PathBuf>,
    /// Log lines as text or JSON.
    #[arg(long, value_enum, default_value = "text", env = "SNOWFLAKE_LOG_FORMAT")]
    pub log_format: LogFormat,
    /// Seconds one request may take.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_REQUEST_TIMEOUT.as_secs(),
        env = "SNOWFLAKE_REQUEST_TIMEOUT",
        value_name = "SECS",
        value_parser = timeout_secs
    )]
    pub request_timeout: u64,
    /// Requests served at once; more wait their turn.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_MAX_CONCURRENCY,
        env = "SNOWFLAKE_MAX_CONCURRENCY",
        value_name = "N",
        value_parser = concurrency
    )]
    pub max_concurrency: usize,
    /// Chunks of large requests (more IDs than one time unit holds) made at
    /// once, so they cannot crowd out small ones.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_MAX_LARGE_BATCHES,
        env = "SNOWFLAKE_MAX_LARGE_BATCHES",
        value_name = "N",
        value_parser = concurrency
    )]
    pub max_large_batches: usize,
    /// Seconds a client may take to send a request's headers; an HTTP/1
    /// connection waiting for its next request is bound by it too.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_HEADER_TIMEOUT.as_secs(),
        env = "SNOWFLAKE_HEADER_TIMEOUT",
        value_name = "SECS",
        value_parser = timeout_secs
    )]
    pub header_timeout: u64,
    /// Seconds a connection may go without a byte moving either way.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_IDLE_TIMEOUT.as_secs(),
        env = "SNOWFLAKE_IDLE_TIMEOUT",
        value_name = "SECS",
        value_parser = timeout_secs
    )]
    pub idle_timeout: u64,
    /// Connections open at once; more wait in the listen backlog.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_MAX_CONNECTIONS,
        env = "SNOWFLAKE_MAX_CONNECTIONS",
        value_name = "N",
        value_parser = concurrency
    )]
    pub max_connections: usize,
    /// Seconds requests in flight get after SIGTERM before their
    /// connections are closed.
    #[arg(
        long,
        default_value_t = Config::DEFAULT_SHUTDOWN_TIMEOUT.as_secs(),
        env = "SNOWFLAKE_SHUTDOWN_TIMEOUT",
        value_name = "SECS",
        value_parser = timeout_secs
    )]
    pub shutdown_timeout: u64,
    /// An origin whose pages may ask for IDs (https://app.example.com);
    /// repeat for more. Pages from other origins are refused.
    #[arg(
        long = "cors-origin",
        value_name = "ORIGIN",
        env = "SNOWFLAKE_CORS_ORIGINS",
        value_delimiter = ',',
        value_parser = origin
    )]
    pub cors_origins: Vec<String>,
    /// Speak HTTP/2 (cleartext, prior knowledge) beside HTTP/1.1: off by
    /// default, since no browser uses it without TLS and each connection
    /// may then hold 8 requests' worth of memory.
    #[arg(long, env = "SNOWFLAKE_HTTP2")]
    pub http2: bool,
    /// A file holding the masking key (64 hexadecimal characters, as
    /// `snowflake mask-key new` writes it): `/api/v1/ids?masked=true` then
    /// hands out IDs through it.
    #[arg(
        long,
        value_name = "PATH",
        env = "SNOWFLAKE_MASK_KEY_FILE",
        hide_env_values = true
    )]
    pub mask_key_file: Option<PathBuf>,
    /// Answer `/api/v1/unmask/{id}`, which gives back what masking hides:
    /// only for a service that trusted callers alone can reach.
    #[arg(long, env = "SNOWFLAKE_ALLOW_UNMASK", requires = "mask_key_file")]
    pub allow_unmask: bool,
    /// Fail readiness while the kernel says the clock is not synchronised,
    /// or puts its maximum error above MAX_ERROR_MS (default 100). Without
    /// it, the clock is only reported (in /readyz, /metrics and the log).
    // The default and the help's figure are `Config::DEFAULT_MAX_CLOCK_ERROR_MS`
    // (clap takes no typed missing value): `serve::tests` holds them equal.
    #[arg(
        long,
        value_name = "MAX_ERROR_MS",
        env = "SNOWFLAKE_REQUIRE_CLOCK_SYNC",
        num_args = 0..=1,
        default_missing_value = "100",
        value_parser = clock_error_ms
    )]
    pub require_clock_sync: Option<u64>,
    /// A host name to answer to besides loopback ones when listening on
    /// loopback (a name in /etc/hosts, say); repeat for more.
    #[arg(
        long = "allowed-host",
        value_name = "NAME",
        env = "SNOWFLAKE_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    #[command(flatten)]
    pub etcd: EtcdArgs,
    /// Cluster mode: seconds the slot's lease lives without renewal.
    #[arg(
        long,
        default_value = "10",
        env = "SNOWFLAKE_LEASE_TTL",
        value_name = "SECS",
        value_parser = lease_secs
    )]
    pub lease_ttl: u64,
    /// Cluster mode: warn when another node's clock is certainly further
    /// than this from this node's (IDs from the two then do not sort by
    /// time). Only a warning: readiness does not depend on it.
    #[arg(
        long,
        default_value = "100",
        env = "SNOWFLAKE_MAX_CLOCK_SKEW_MS",
        value_name = "MS",
        allow_negative_numbers = true,
        value_parser = clock_skew_ms
    )]
    pub max_clock_skew_ms: u64,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The database the functions are written for.
    #[arg(long, value_enum, value_name = "DIALECT")]
    pub dialect: crate::sql::Dialect,
    #[command(flatten)]
    pub layout: LayoutArgs,
    /// The start of every function name, as in twitter_time(id): 1 to 40
    /// letters, digits and _, starting with a letter. Default: the preset's
    /// name, or snowflake for a custom layout.
    #[arg(long, value_name = "NAME")]
    pub prefix: Option<String>,
    /// Also install a generator, <prefix>_next_id(), whose IDs carry the node
    /// fields given (every one of them, with -f NAME=VALUE).
    #[arg(long, conflicts_with = "partitions")]
    pub generator: bool,
    #[command(flatten)]
    pub node: FieldArgs,
    /// Print partitions of TABLE by ID range instead of functions, one for
    /// each period from --from to --to.
    #[arg(
        long,
        value_name = "TABLE",
        requires_all = ["from", "to", "every"],
        conflicts_with = "prefix"
    )]
    pub partitions: Option<String>,
    /// The first day partitioned, YYYY-MM-DD: its period is the first.
    #[arg(long, value_name = "DATE", value_parser = date, requires = "partitions")]
    pub from: Option<jiff::civil::Date>,
    /// The last day partitioned, YYYY-MM-DD: its period is the last.
    #[arg(long, value_name = "DATE", value_parser = date, requires = "partitions")]
    pub to: Option<jiff::civil::Date>,
    /// How long each partition's period is: a day, a week from Monday, a
    /// calendar month.
    #[arg(long, value_enum, value_name = "PERIOD", requires = "partitions")]
    pub every: Option<crate::sql::Period>,
    /// The time zone whose midnights begin the periods: an IANA name.
    #[arg(
        long,
        value_name = "ZONE",
        default_value = "UTC",
        value_parser = time_zone,
        requires = "partitions"
    )]
    pub time_zone: jiff::tz::TimeZone,
}

impl SqlArgs {
    /// What the arguments ask of `snowflake sql`; clap has seen to it that
    /// --partitions comes with --from, --to and --every.
    pub fn request(&self) -> crate::sql::Request<'_> {
        let partitions = match (&self.partitions, self.from, self.to, self.every) {
            (Some(table), Some(from), Some(to), Some(every)) => Some(crate::sql::Periods {
                table,
                from,
                to,
                every,
                zone: &self.time_zone,
            }),
            _ => None,
        };
        crate::sql::Request {
            dialect: self.dialect,
            prefix: self.prefix.as_deref(),
            generator: self.generator,
            node: self.node.pairs(None),
            partitions,
        }
    }
}

fn date(text: &str) -> Result<jiff::civil::Date, String> {
    let text = text.trim();
    let well_formed = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    well_formed
        .then(|| text.parse().ok())
        .flatten()
        .ok_or_else(|| "a date is YYYY-MM-DD, such as 2025-01-31".to_string())
}

fn time_zone(text: &str) -> Result<jiff::tz::TimeZone, String> {
    jiff::tz::TimeZone::get(text.trim()).map_err(|_| {
        "a time zone is an IANA name such as Europe/Berlin or America/New_York, or UTC".to_string()
    })
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells `snowflake completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

/// Where the masking key is: a file, never the key itself, which would show
/// in `ps` and in shell history.
#[derive(Debug, Args)]
pub struct KeyFileArgs {
    /// A file holding the 256-bit masking key as 64 hexadecimal characters,
    /// as `snowflake mask-key new` writes it.
    #[arg(
        long,
        value_name = "PATH",
        env = "SNOWFLAKE_MASK_KEY_FILE",
        hide_env_values = true
    )]
    pub key_file: PathBuf,
}

/// What `mask` and `unmask` alike read IDs with: the key, the layout whose
/// width the IDs are masked in, and their text form.
#[derive(Debug, Args)]
pub struct MaskingArgs {
    #[command(flatten)]
    pub key: KeyFileArgs,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub form: ReadForm,
}

#[derive(Debug, Args)]
pub struct MaskArgs {
    /// IDs in decimal or 0x hexadecimal (or in --format); `-`, or none with
    /// stdin not a terminal, reads them from stdin, whitespace-separated.
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub masking: MaskingArgs,
}

#[derive(Debug, Args)]
pub struct UnmaskArgs {
    /// Masked IDs in decimal or 0x hexadecimal (or in --format); `-`, or
    /// none with stdin not a terminal, reads them from stdin.
    #[arg(value_name = "ID", allow_negative_numbers = true)]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub masking: MaskingArgs,
    /// Print each unmasked ID's breakdown, as `decode --json` does, one
    /// object per line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum MaskKeyCommand {
    /// Write a new random key to PATH, readable by its owner only (mode
    /// 0600). An existing file is never overwritten.
    New(MaskKeyNewArgs),
}

#[derive(Debug, Args)]
pub struct MaskKeyNewArgs {
    /// Where the key goes; nothing may be there yet.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
}

// The operators' tools (issue 22): plan, audit, healthcheck, and the time
// that `layouts` and `audit` judge against.

/// The moment to judge against: the clock, or a time given.
#[derive(Debug, Args)]
pub struct NowArgs {
    /// Judge as of this time instead of the clock's now: Unix milliseconds
    /// or an RFC 3339 date.
    #[arg(long, value_name = "TIME", allow_negative_numbers = true)]
    pub now: Option<String>,
}

impl NowArgs {
    /// The time given, or the clock's.
    pub fn now_ms(&self, clock: &dyn snowflake::Clock) -> Result<i64, Error> {
        match &self.now {
            Some(text) => parse_time("now", text),
            None => Ok(clock.now_ms()),
        }
    }
}

fn clock_skew_ms(text: &str) -> Result<u64, String> {
    whole_in(
        text,
        1..=3_600_000,
        "a clock skew is 1 to 3600000 milliseconds (an hour)",
    )
}

fn clock_error_ms(text: &str) -> Result<u64, String> {
    whole_in(
        text,
        1..=86_400_000,
        "a maximum clock error is 1 to 86400000 milliseconds (a day)",
    )
}

fn rate(text: &str) -> Result<u64, String> {
    whole_in(
        text,
        1..=u64::MAX,
        "a peak rate is a whole number of IDs a second, at least 1",
    )
}

fn nodes(text: &str) -> Result<u64, String> {
    whole_in(
        text,
        1..=u64::MAX,
        "a number of nodes is a whole number, at least 1",
    )
}

fn years(text: &str) -> Result<u32, String> {
    let max = u64::from(snowflake_ops::Requirements::MAX_YEARS);
    whole_in(text, 1..=max, "a lifetime is 1 to 1000 years").map(|n| n as u32)
}

fn plan_tick(text: &str) -> Result<u64, String> {
    whole_in(
        text,
        1..=snowflake_ops::Requirements::MAX_TICK_MS,
        "a tick is 1 to 86400000 ms (a day)",
    )
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The peak rate of IDs a second on one node.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = rate)]
    pub rate: u64,
    /// How many nodes issue IDs at once.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = nodes)]
    pub nodes: u64,
    /// How many years the layout must last, from --from.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = years)]
    pub years: u32,
    /// Milliseconds per time unit of the proposed layout (default 1); with
    /// --layout, the layout's tick instead of its own.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = plan_tick)]
    pub tick_ms: Option<u64>,
    /// IDs that JavaScript holds exactly as numbers: 53 bits instead of 63.
    #[arg(long)]
    pub js_safe: bool,
    /// The start of the lifetime: a date (2025-01-01), an RFC 3339 time or
    /// Unix milliseconds. Default: now.
    #[arg(long, value_name = "DATE", allow_negative_numbers = true)]
    pub from: Option<String>,
    /// Check this layout (a preset or a custom spec) against the needs,
    /// instead of proposing one.
    #[arg(long, short = 'l', value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// With --layout: its epoch instead of its own, Unix milliseconds or an
    /// RFC 3339 date.
    #[arg(
        long,
        value_name = "MS",
        requires = "layout",
        allow_negative_numbers = true
    )]
    pub epoch: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn listed(text: &str) -> Result<usize, String> {
    whole_in(text, 0..=1_000_000, "a listing holds 0 to 1000000 IDs").map(|n| n as usize)
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Files of IDs, read in turn; `-` or none reads stdin. IDs are
    /// separated by any whitespace, as `decode -` reads them.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    pub form: ReadForm,
    #[command(flatten)]
    pub now: NowArgs,
    /// How many IDs of each kind (duplicated, from the future, from before
    /// the platform, bad) to list; the counts are always exact.
    #[arg(
        long,
        value_name = "N",
        default_value = "100",
        allow_negative_numbers = true,
        value_parser = listed
    )]
    pub list: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// What to ask: paths on the service (/readyz) or whole http:// URLs.
    /// Default: /healthz and /readyz.
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
    /// The service's address, for paths: the one `serve` listens on (an
    /// unspecified address such as 0.0.0.0 is asked on loopback).
    #[arg(
        long,
        default_value = DEFAULT_LISTEN,
        env = "SNOWFLAKE_LISTEN",
        value_name = "ADDR",
        value_parser = listen_addr
    )]
    pub listen: std::net::SocketAddr,
    /// Seconds each answer may take.
    #[arg(long, default_value = "5", value_name = "SECS", value_parser = timeout_secs)]
    pub timeout: u64,
}
