//! The `snowflake` command: parsing, dispatch and exit codes. The work is
//! done by the `snowflake` library; this crate only reads arguments and
//! formats results.

// The doc comments of `args` are clap's help text, written for a terminal:
// an example origin is not a link there, nor `<prefix>` a tag.
#[allow(rustdoc::bare_urls, rustdoc::invalid_html_tags)]
mod args;
mod audit;
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(not(feature = "cluster"))]
#[path = "no_cluster.rs"]
mod cluster;
mod decode;
mod failure;
mod generate;
mod healthcheck;
mod id_stream;
mod identity;
mod layouts;
mod manual;
mod mask;
mod output;
mod plan;
mod reference;
mod render;
mod serve;
mod sql;
mod usage;

use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches};
use snowflake::{Clock, SystemClock};

use args::{Cli, ClusterCommand, Command, MaskKeyCommand};
use failure::Failure;
use output::{emit, json_line, report};
use snowflake_io::parse_fields;

fn main() -> ExitCode {
    // The matches are kept beside what they parse into: `serve` says where
    // each of its node values came from (a flag or the environment).
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => return clap_exit(err.format(&mut Cli::command())),
    };
    match run(cli, &matches) {
        Ok(()) | Err(Failure::PipeClosed) => ExitCode::SUCCESS,
        Err(Failure::Usage(err)) => usage_error(&err),
        Err(Failure::Argument(err)) => usage_error(&err),
        Err(Failure::Requirements(err)) => usage_error(&err),
        Err(Failure::Unsupported(message))
        | Err(Failure::BadInput(message))
        | Err(Failure::Refused(message)) => {
            report(&format!("error: {message}"));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(message)) => {
            report(&format!("error: {message}"));
            ExitCode::FAILURE
        }
    }
}

/// A usage error, whoever refused it: one line on stderr, status 2.
fn usage_error(err: &dyn std::fmt::Display) -> ExitCode {
    report(&format!("error: {err}"));
    ExitCode::from(2)
}

/// Help and version go to stdout with status 0; every usage error is one
/// line on stderr with status 2: clap's message, with what it lists on the
/// following lines (allowed values, missing arguments) folded into it.
fn clap_exit(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind as K;
    if matches!(
        err.kind(),
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = err.print();
        return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
    }
    let text = err.render().to_string();
    let line: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    report(&line.join(" "));
    ExitCode::from(2)
}

fn run(cli: Cli, matches: &ArgMatches) -> Result<(), Failure> {
    match cli.command {
        Command::Compose(args) => {
            let layout = args.layout.resolve()?;
            let timestamp = match &args.timestamp {
                Some(text) => snowflake_io::parse_time("timestamp", text)?,
                None => SystemClock.now_ms(),
            };
            let pairs = args.fields.pairs(args.sequence.as_deref());
            let values = parse_fields(&layout, &pairs)?;
            let form = args.form.or_decimal();
            let id = layout.compose(timestamp, &values)?;
            let decoded = layout.decode(id)?;
            emit(&if args.json {
                json_line(&decoded)
            } else {
                render::decoded(&decoded, form)
            })
        }
        Command::Decode(args) => decode::run(&args),
        Command::Bounds(args) => {
            let layout = args.layout.resolve()?;
            let (from, to) = args.window()?;
            let bounds = layout.bounds(from, to)?;
            emit(&if args.json {
                json_line(&bounds)
            } else {
                render::bounds(&bounds)
            })
        }
        Command::Layouts(args) => layouts::run(&args, &SystemClock),
        Command::Plan(args) => plan::run(&args, &SystemClock),
        Command::Audit(args) => audit::run(&args, &SystemClock),
        Command::Healthcheck(args) => healthcheck::run(&args),
        Command::Generate(args) => generate::run(&args),
        Command::Serve(args) => {
            let serve = matches.subcommand_matches("serve").unwrap_or(matches);
            serve::run(&args, &args.node.given(serve))
        }
        Command::Cluster(ClusterCommand::Status(args)) => emit(&cluster::status(&args)?),
        Command::Sql(args) => emit(&sql::script(&args.layout.resolve()?, &args.request())?),
        Command::Mask(args) => mask::mask(&args),
        Command::Unmask(args) => mask::unmask(&args),
        Command::MaskKey(MaskKeyCommand::New(args)) => mask::new_key(&args),
        Command::Completions(args) => emit(&manual::completions(args.shell)),
        Command::Man => emit(&manual::man_page()?),
        Command::Page => emit(&snowflake_server::standalone_page()),
        Command::Reference(args) => emit(&reference::markdown(args.page)),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
