//! The slots a node can claim: every combination of the layout's node
//! fields, less those the user fixed.

use std::fmt;

use snowflake::{Error, Layout};

/// One combination of node-field values, e.g. `datacenter=1,machine=7`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Slot(pub Vec<(String, u64)>);

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

/// The slots a node of `layout` may claim with `fixed` field values.
#[derive(Debug, Clone)]
pub struct SlotSpace {
    fixed: Vec<(String, u64)>,
    free: Vec<(String, u64)>,
    order: Vec<String>,
    len: u128,
}

impl SlotSpace {
    /// How many slots there are.
    pub fn len(&self) -> u128 {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `index`-th slot, counting the free fields as a mixed-radix number.
    pub fn get(&self, mut index: u128) -> Slot {
        let mut values = self.fixed.clone();
        for (name, size) in self.free.iter().rev() {
            let size = u128::from(*size);
            values.push((name.clone(), (index % size) as u64));
            index /= size;
        }
        values.sort_by_key(|(name, _)| self.order.iter().position(|n| n == name));
        Slot(values)
    }
}

/// Every slot of the layout's node fields, with `fixed` ones held to their
/// values (checked against the layout).
pub fn slot_space(layout: &Layout, fixed: &[(String, u64)]) -> Result<SlotSpace, Error> {
    let pairs: Vec<(&str, u64)> = fixed.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    if let Some(seq) = layout.sequence()
        && pairs.iter().any(|(n, _)| *n == seq.name())
    {
        return Err(Error::invalid_value(
            "sequence",
            seq.name(),
            "the sequence is the generator's; fix only node fields",
        ));
    }
    layout.compose(layout.epoch_ms(), &pairs)?;
    let mut free = Vec::new();
    let mut len: u128 = 1;
    for field in layout.node_fields() {
        if !fixed.iter().any(|(n, _)| n == field.name()) {
            free.push((field.name().to_string(), field.max() + 1));
            len = len.saturating_mul(u128::from(field.max()) + 1);
        }
    }
    Ok(SlotSpace {
        fixed: fixed.to_vec(),
        free,
        order: layout.node_fields().map(|f| f.name().to_string()).collect(),
        len,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn twitter_has_1024_slots_and_fixing_a_datacenter_leaves_32() {
        let twitter = Layout::twitter();
        let all = slot_space(&twitter, &[]).unwrap();
        assert_eq!(all.len(), 1024);
        let mut seen = HashSet::new();
        for i in 0..all.len() {
            assert!(seen.insert(all.get(i).to_string()));
        }
        assert_eq!(all.get(0).to_string(), "datacenter=0,machine=0");
        let one = slot_space(&twitter, &[("datacenter".into(), 3)]).unwrap();
        assert_eq!(one.len(), 32);
        assert_eq!(one.get(5).to_string(), "datacenter=3,machine=5");
        assert!(slot_space(&twitter, &[("datacenter".into(), 32)]).is_err());
        assert!(slot_space(&twitter, &[("sequence".into(), 1)]).is_err());
    }
}
