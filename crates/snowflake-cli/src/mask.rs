//! `snowflake mask`, `snowflake unmask` and `snowflake mask-key new`.
//!
//! IDs are read as `decode` reads them: arguments all-or-nothing (the first
//! bad one is the error and nothing is printed), or a stream from stdin in
//! constant memory, where a bad line is reported with its line number and
//! the rest goes on, the exit status saying afterwards whether any was bad.
//! Each good ID gives one line: the masked or unmasked ID in the form read,
//! or with `unmask --json` the breakdown `decode --json` prints.
//!
//! The key is read from the file named by `--key-file` and goes nowhere
//! else: no message here holds it, and the crate's errors never do.

use snowflake::{Error, Id, Layout, TextForm};
use snowflake_io::Format;
use snowflake_mask::{KeyFile, Masker};

use crate::args::{MaskArgs, MaskKeyNewArgs, MaskingArgs, UnmaskArgs};
use crate::failure::Failure;
use crate::id_stream::{self, Joined, from_stdin};
use crate::output::{emit, json_line, report};

/// Which way the IDs go.
#[derive(Clone, Copy)]
enum Way {
    Mask,
    Unmask,
}

impl Way {
    fn apply(self, masker: &Masker, id: Id) -> Result<Id, Error> {
        match self {
            Way::Mask => masker.mask(id),
            Way::Unmask => masker.unmask(id),
        }
    }

    fn done(self) -> &'static str {
        match self {
            Way::Mask => "masked",
            Way::Unmask => "unmasked",
        }
    }
}

/// How each good ID is written.
#[derive(Clone, Copy)]
enum Output {
    /// The ID alone, in a text form.
    Id(TextForm),
    /// Its breakdown as one JSON object.
    Json,
}

pub fn mask(args: &MaskArgs) -> Result<(), Failure> {
    let output = Output::Id(args.masking.form.format.unwrap_or(TextForm::Decimal));
    run(&args.ids, &args.masking, Way::Mask, output)
}

pub fn unmask(args: &UnmaskArgs) -> Result<(), Failure> {
    let output = if args.json {
        Output::Json
    } else {
        Output::Id(args.masking.form.format.unwrap_or(TextForm::Decimal))
    };
    run(&args.ids, &args.masking, Way::Unmask, output)
}

pub fn new_key(args: &MaskKeyNewArgs) -> Result<(), Failure> {
    let file = KeyFile::create_new(&args.path)?;
    emit(&format!(
        "wrote a new 256-bit masking key to {}, readable by you alone; keep it secret and keep \
         a copy: without it, masked IDs cannot be unmasked\n",
        file.name()
    ))
}

fn run(ids: &[String], masking: &MaskingArgs, way: Way, output: Output) -> Result<(), Failure> {
    let form = masking.form.format;
    let layout = masking.layout.resolve()?;
    let stream = from_stdin(ids)?;
    let masker = masker(&masking.key.key_file, &layout)?;
    if !stream {
        return arguments(ids, &masker, form, way, output);
    }
    let input = id_stream::stdin();
    let bad = match output {
        Output::Id(written) => {
            let joined = Joined {
                between: "",
                after: "\n",
            };
            id_stream::text(input, form, joined, |id| {
                Ok(way.apply(&masker, id)?.to_text(written))
            })?
        }
        // Only `unmask` writes breakdowns.
        Output::Json => id_stream::records(
            input,
            masker.layout(),
            form,
            Format::Ndjson,
            TextForm::Decimal,
            |id| way.apply(&masker, id),
        )?,
    };
    id_stream::outcome(bad, way.done(), matches!(output, Output::Json))
}

/// The masker for the key in the file at `path`, after a warning on stderr
/// if others may read the file: for `mask`, `unmask` and `serve`.
pub fn masker(path: &std::path::Path, layout: &Layout) -> Result<Masker, Failure> {
    let file = KeyFile::read(path)?;
    if let Some(warning) = file.warning() {
        report(&format!("warning: {warning}"));
    }
    Ok(Masker::new(layout, file.key())?)
}

/// IDs given as arguments: every one must go through, or nothing is printed.
fn arguments(
    ids: &[String],
    masker: &Masker,
    form: Option<TextForm>,
    way: Way,
    output: Output,
) -> Result<(), Failure> {
    let mut text = String::new();
    for raw in ids {
        let id = way.apply(masker, Id::parse_as(raw, form)?)?;
        match output {
            Output::Id(written) => {
                text.push_str(&id.to_text(written));
                text.push('\n');
            }
            Output::Json => text.push_str(&json_line(&masker.layout().decode(id)?)),
        }
    }
    emit(&text)
}
