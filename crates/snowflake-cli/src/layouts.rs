//! `snowflake layouts`: the presets, each with the time it has left.

use serde::Serialize;
use snowflake::{Clock, Layout, TimeLeft};

use crate::args::LayoutsArgs;
use crate::failure::Failure;
use crate::output::{emit, json_line};
use crate::render;

/// A layout's shared JSON form (as `GET /api/v1/layouts` writes it) with
/// the time it has left, which depends on when it is asked.
#[derive(Serialize)]
struct WithTimeLeft<'a> {
    #[serde(flatten)]
    layout: &'a Layout,
    time_left: TimeLeft,
}

pub fn run(args: &LayoutsArgs, clock: &dyn Clock) -> Result<(), Failure> {
    let now_ms = args.now.now_ms(clock)?;
    let presets = Layout::presets();
    if args.json {
        let rows: Vec<WithTimeLeft<'_>> = presets
            .iter()
            .map(|layout| WithTimeLeft {
                layout,
                time_left: layout.time_left(now_ms),
            })
            .collect();
        return emit(&json_line(&rows));
    }
    emit(&render::layouts(&presets, now_ms))
}
