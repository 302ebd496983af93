//! The layouts, maskers and generators JavaScript holds by handle.

use std::cell::RefCell;

use snowflake::{Generator, Layout};
use snowflake_mask::Masker;

use crate::clock::JsClock;

/// Values by small integer handle; a freed slot is reused.
pub struct Table<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Table<T> {
    const fn new() -> Self {
        Table {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Keeps `value` and returns its handle, or `None` past `i32::MAX`
    /// values, which the glue cannot hold anyway.
    pub fn insert(&mut self, value: T) -> Option<i32> {
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at] = Some(value);
                at
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        };
        i32::try_from(at).ok()
    }

    pub fn get(&self, handle: i32) -> Option<&T> {
        self.slots.get(usize::try_from(handle).ok()?)?.as_ref()
    }

    /// Drops the value; a handle already freed is left alone.
    pub fn remove(&mut self, handle: i32) {
        let Ok(at) = usize::try_from(handle) else {
            return;
        };
        if let Some(slot) = self.slots.get_mut(at)
            && slot.take().is_some()
        {
            self.free.push(at);
        }
    }
}

thread_local! {
    pub static LAYOUTS: RefCell<Table<Layout>> = const { RefCell::new(Table::new()) };
    pub static MASKERS: RefCell<Table<Masker>> = const { RefCell::new(Table::new()) };
    pub static GENERATORS: RefCell<Table<Generator<JsClock>>> = const { RefCell::new(Table::new()) };
    /// The core's presets, in its order, for readings.
    pub static PRESETS: Vec<Layout> = Layout::presets().into();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_handles_are_reused_and_stay_freed() {
        let mut table = Table::new();
        let a = table.insert("a").unwrap();
        let b = table.insert("b").unwrap();
        table.remove(a);
        table.remove(a);
        assert_eq!(table.get(a), None);
        let c = table.insert("c").unwrap();
        assert_eq!(c, a);
        assert_eq!(table.insert("d"), Some(2));
        assert_eq!(table.get(b), Some(&"b"));
        assert_eq!(table.get(-1), None);
        assert_eq!(table.get(99), None);
        table.remove(-5);
    }
}
