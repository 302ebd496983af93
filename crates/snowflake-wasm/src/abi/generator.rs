//! The core's generator on JavaScript's clock.

use snowflake::{Generator, Id};

use super::{field_values, with_layout};
use crate::clock::JsClock;
use crate::registry::GENERATORS;
use crate::reply;

/// The core's generator for the layout, on the JavaScript clock `clock`
/// (0 `Date.now()`, 1 `performance`), for the node whose fields the input
/// holds as `name\0value…` (fields left out are 0). `tolerance_ms` below 0
/// keeps the core's default. Returns its handle.
#[unsafe(no_mangle)]
pub extern "C" fn sf_generator_new(layout: i32, clock: u32, tolerance_ms: i64) -> i32 {
    let Some(clock) = JsClock::new(clock) else {
        return reply::stale("clock");
    };
    with_layout(layout, |layout| {
        let built = reply::with_input(|input| {
            let node = field_values(layout, input)?;
            let mut builder = Generator::builder(layout.clone()).node(&node).clock(clock);
            if let Ok(tolerance) = u64::try_from(tolerance_ms) {
                builder = builder.tolerance_ms(tolerance);
            }
            builder.build()
        });
        match built {
            Ok(generator) => GENERATORS
                .with(|generators| generators.borrow_mut().insert(generator))
                .unwrap_or_else(|| reply::stale("generator")),
            Err(err) => reply::core_error(&err),
        }
    })
}

/// Frees a generator.
#[unsafe(no_mangle)]
pub extern "C" fn sf_generator_free(generator: i32) {
    GENERATORS.with(|generators| generators.borrow_mut().remove(generator));
}

/// The generator's next ID, the first number; or the core's refusal: a
/// clock behind by more than the tolerance, a time field used up.
#[unsafe(no_mangle)]
pub extern "C" fn sf_generator_next(generator: i32) -> i32 {
    GENERATORS.with(|generators| match generators.borrow().get(generator) {
        Some(generator) => reply::number_or_error(generator.next_id().map(Id::get)),
        None => reply::stale("generator"),
    })
}
