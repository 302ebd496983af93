//! Why a node cannot hold a slot or reach the cluster.

use std::fmt;

use crate::slots::Slot;

/// Why a step of cluster mode failed: a call to etcd, the lease, or a slot
/// the node would not take.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No etcd endpoint could be reached (or TLS or login failed).
    Connect(etcd_client::Error),
    /// etcd would not grant a lease.
    Grant(etcd_client::Error),
    /// The slots in use could not be listed.
    ListSlots(etcd_client::Error),
    /// The transaction that claims a free slot failed.
    Claim(etcd_client::Error),
    /// The cluster's keys could not be read (for `cluster status`).
    Read(etcd_client::Error),
    /// The nodes could not be asked for their clocks (for `cluster status`).
    Probe(etcd_client::Error),
    /// The lease was not renewed before the node's deadline.
    LeaseNotRenewed,
    /// etcd answered a renewal saying the lease no longer exists.
    LeaseExpired,
    /// A free slot was passed over because its generator would not start
    /// there, most often because this node's clock is behind the mark the
    /// slot's last holder left.
    SlotPassedOver {
        /// The slot.
        slot: Slot,
        /// Why the generator refused it.
        reason: snowflake::Error,
    },
    /// A free slot was passed over because its mark in etcd is damaged: not
    /// a time of the layout. Waiting does not mend it; an operator must.
    DamagedMark {
        /// The slot.
        slot: Slot,
        /// What the mark is instead.
        reason: snowflake::Error,
    },
    /// The node gave its slot up: the slot's key in etcd was deleted, or now
    /// belongs to another lease, while the node still held the slot.
    SlotLost {
        /// The slot.
        slot: Slot,
        /// What happened to the key.
        why: &'static str,
    },
    /// The layout or node fields do not make a generator.
    Generator(snowflake::Error),
    /// The task starting the generator ended before it answered.
    Interrupted,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connect(err) => write!(f, "cannot reach etcd: {err}"),
            Error::Grant(err) => write!(f, "cannot get a lease: {err}"),
            Error::ListSlots(err) => write!(f, "cannot list slots: {err}"),
            Error::Claim(err) => write!(f, "cannot claim a slot: {err}"),
            Error::Read(err) => write!(f, "cannot read the cluster from etcd: {err}"),
            Error::Probe(err) => write!(f, "cannot ask the nodes for their clocks: {err}"),
            Error::LeaseNotRenewed => f.write_str("the lease could not be renewed in time"),
            Error::LeaseExpired => f.write_str("the lease expired"),
            Error::SlotPassedOver { slot, reason } => write!(f, "not taking slot {slot}: {reason}"),
            Error::DamagedMark { slot, reason } => write!(
                f,
                "not taking slot {slot}: {reason}; an operator must set it to a time \
                 after the slot's last ID, and never delete it"
            ),
            Error::SlotLost { slot, why } => write!(f, "gave up slot {slot}: {why}"),
            Error::Generator(err) => write!(f, "{err}"),
            Error::Interrupted => f.write_str("the generator's start was interrupted"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Connect(err)
            | Error::Grant(err)
            | Error::ListSlots(err)
            | Error::Claim(err)
            | Error::Read(err)
            | Error::Probe(err) => Some(err),
            Error::SlotPassedOver { reason, .. }
            | Error::DamagedMark { reason, .. }
            | Error::Generator(reason) => Some(reason),
            Error::LeaseNotRenewed
            | Error::LeaseExpired
            | Error::SlotLost { .. }
            | Error::Interrupted => None,
        }
    }
}

impl Error {
    /// Whether only an operator can clear this: retrying or waiting will
    /// not (a damaged mark in etcd).
    pub fn needs_operator(&self) -> bool {
        matches!(self, Error::DamagedMark { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_before_the_enum() {
        assert_eq!(
            Error::LeaseNotRenewed.to_string(),
            "the lease could not be renewed in time"
        );
        let slot = Slot(vec![("datacenter".into(), 1), ("machine".into(), 7)]);
        let reason = snowflake::Error::store_failure("behind the mark");
        let err = Error::SlotPassedOver { slot, reason };
        assert!(
            err.to_string()
                .starts_with("not taking slot datacenter=1,machine=7: "),
            "{err}"
        );
        assert!(std::error::Error::source(&err).is_some());
        assert!(!err.needs_operator());
    }

    #[test]
    fn only_a_damaged_mark_needs_an_operator() {
        let slot = Slot(vec![("datacenter".into(), 1), ("machine".into(), 7)]);
        let reason = snowflake::Error::store_failure("the mark is \"x\"");
        let err = Error::DamagedMark { slot, reason };
        assert!(err.needs_operator());
        let message = err.to_string();
        assert!(message.contains("an operator must"), "{message}");
        assert!(message.contains("never delete it"), "{message}");
        for transient in [
            Error::LeaseNotRenewed,
            Error::LeaseExpired,
            Error::Interrupted,
        ] {
            assert!(!transient.needs_operator(), "{transient}");
        }
    }
}
