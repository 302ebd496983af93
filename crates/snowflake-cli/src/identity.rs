//! Which node `serve` issues as, where each of its values came from, and
//! where the service refuses to start without one.
//!
//! # Where the line is
//!
//! Two services that issue as the same node hand out the same IDs, and
//! nothing in either can see the other. A node left out is node 0, so every
//! replica started the same way without one is the same node.
//!
//! - A service only this machine can reach (a loopback address) may issue
//!   as node 0 by default: that is the README's first command, one service
//!   for one person, with no flag to learn first. It says so at start-up.
//! - A service others can reach (any other address: `0.0.0.0`, a host's
//!   own) is what replicas are, so it does not start without a node of its
//!   own: a node value given (any one, `--machine 0` too: a node chosen on
//!   purpose), or cluster mode, which leases each replica one.
//! - Loopback does not prove there is one replica: containers on the host's
//!   network, or each behind its own proxy, listen on loopback too. So
//!   `--require-node` (`SNOWFLAKE_REQUIRE_NODE`) asks for a node wherever
//!   the service listens, and the container image turns it on.
//!
//! A refusal is a usage error (exit status 2) that says how to give a node.

use std::net::SocketAddr;

use snowflake::Layout;

use crate::args::NodeArgs;
use crate::failure::Failure;

/// The node a service issues as.
#[derive(Debug)]
pub struct Identity {
    /// The layout's node fields in order, each with the value given and
    /// where it came from, or `None` for one left out.
    fields: Vec<(String, Option<(u64, String)>)>,
    /// Whether the fields left out come from a slot leased on etcd.
    clustered: bool,
}

impl Identity {
    /// The identity of `given` node values (name, value, where from) under
    /// `layout`; a name given twice, or one that is no node field of it
    /// (the sequence), is the generator's to refuse.
    pub fn new(layout: &Layout, given: &[(&str, u64, String)], clustered: bool) -> Identity {
        let fields = layout
            .node_fields()
            .map(|field| {
                let value = given
                    .iter()
                    .find(|(name, ..)| *name == field.name())
                    .map(|(_, value, from)| (*value, from.clone()));
                (field.name().to_string(), value)
            })
            .collect();
        Identity { fields, clustered }
    }

    /// Whether the service has a node of its own: a value given, or a
    /// slot from the cluster.
    fn is_own(&self) -> bool {
        self.clustered || self.fields.iter().any(|(_, value)| value.is_some())
    }

    /// Whether the service issues as node 0 because nothing said otherwise:
    /// worth a warning at start-up.
    pub fn is_default(&self) -> bool {
        !self.is_own()
    }

    /// Refuses a service without a node of its own that others can reach
    /// at `listen`, or anywhere when `require_node` asks; see the module's
    /// rules.
    pub fn check(&self, listen: SocketAddr, require_node: bool) -> Result<(), Failure> {
        if self.is_own() {
            return Ok(());
        }
        let why = if require_node {
            "serve was given no node, and --require-node (SNOWFLAKE_REQUIRE_NODE, which the \
             container image sets) asks for one"
                .to_string()
        } else if !listen.ip().to_canonical().is_loopback() {
            format!(
                "serve listens on {listen}, where other machines can reach it, but was given no node"
            )
        } else {
            return Ok(());
        };
        let names: Vec<&str> = self.fields.iter().map(|(name, _)| name.as_str()).collect();
        if names.is_empty() {
            return Err(Failure::Refused(format!(
                "{why}: its layout has no node field, so every replica of it would hand out the \
                 same IDs; run it in cluster mode (--etcd URL, or SNOWFLAKE_ETCD), where one \
                 replica at a time holds the layout's only slot, or use a layout with a node \
                 field"
            )));
        }
        let (flags, env) = NodeArgs::how_to_give(&names);
        Err(Failure::Refused(format!(
            "{why}: it would issue as {zeros}, as would every replica started the same way, and \
             they would hand out the same IDs; give it a node of its own with {flags} (or \
             {env} in the environment; a 0 given on purpose counts), or join a cluster with \
             --etcd URL (SNOWFLAKE_ETCD), which leases each replica a node of its own",
            zeros = names
                .iter()
                .map(|name| format!("{name} 0"))
                .collect::<Vec<_>>()
                .join(", "),
        )))
    }

    /// The line `serve` logs at start-up: the node it issues as, field by
    /// field, and where each value came from.
    pub fn line(&self) -> String {
        if self.fields.is_empty() {
            return if self.clustered {
                "issuing from the only slot of a layout with no node field, leased on etcd"
                    .to_string()
            } else {
                "issuing with a layout that has no node field: this must be its only service"
                    .to_string()
            };
        }
        let each = |(name, value): &(String, Option<(u64, String)>)| match value {
            Some((value, from)) => format!("{name} {value} (from {from})"),
            None if self.clustered => format!("{name} from the slot"),
            None => format!("{name} 0 (by default)"),
        };
        let fields = self.fields.iter().map(each).collect::<Vec<_>>().join(", ");
        if self.clustered {
            format!("issuing from a slot leased on etcd: {fields}")
        } else if self.is_default() {
            format!(
                "issuing as {fields}: no node was given, which is right only for a service \
                 no other issues beside; give each replica its own"
            )
        } else {
            format!("issuing as {fields}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    fn refusal(identity: &Identity, listen: &str, require: bool) -> Option<String> {
        match identity.check(addr(listen), require) {
            Ok(()) => None,
            Err(Failure::Refused(message)) => Some(message),
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_node_is_refused_beyond_loopback_or_when_required() {
        let none = Identity::new(&Layout::twitter(), &[], false);
        for loopback in [
            "127.0.0.1:8080",
            "127.9.9.9:1",
            "[::1]:8080",
            "[::ffff:127.0.0.1]:80",
        ] {
            assert_eq!(refusal(&none, loopback, false), None, "{loopback}");
            assert!(refusal(&none, loopback, true).is_some(), "{loopback}");
        }
        for public in [
            "0.0.0.0:8080",
            "[::]:8080",
            "10.0.0.5:8080",
            "[::ffff:10.0.0.5]:80",
        ] {
            let message = refusal(&none, public, false).unwrap();
            assert!(message.starts_with(&format!("serve listens on {}", addr(public))));
            assert!(message.contains("datacenter 0, machine 0"), "{message}");
        }
    }

    #[test]
    fn any_value_given_or_a_cluster_is_a_node() {
        let twitter = Layout::twitter();
        let zero = Identity::new(&twitter, &[("machine", 0, "--machine".into())], false);
        let cluster = Identity::new(&twitter, &[], true);
        for identity in [&zero, &cluster] {
            assert_eq!(refusal(identity, "0.0.0.0:8080", true), None);
        }
        assert!(!zero.is_default());
        assert!(Identity::new(&twitter, &[], false).is_default());
    }

    #[test]
    fn the_refusal_says_how_to_give_the_layouts_fields() {
        let twitter = Identity::new(&Layout::twitter(), &[], false);
        let message = refusal(&twitter, "0.0.0.0:8080", false).unwrap();
        assert!(
            message.contains(
                "give it a node of its own with --datacenter N --machine N (or \
                 SNOWFLAKE_DATACENTER=N SNOWFLAKE_MACHINE=N in the environment"
            ),
            "{message}"
        );
        assert!(message.contains("--etcd URL (SNOWFLAKE_ETCD)"), "{message}");
        let discord = Identity::new(&Layout::discord(), &[], false);
        let message = refusal(&discord, "127.0.0.1:8080", true).unwrap();
        assert!(message.starts_with("serve was given no node, and --require-node"));
        assert!(
            message.contains(
                "-f worker=N -f process=N (or SNOWFLAKE_FIELDS=worker=N,process=N in the \
                 environment"
            ),
            "{message}"
        );
        let single: Layout = "time:41,sequence:22".parse().unwrap();
        let message = refusal(&Identity::new(&single, &[], false), "0.0.0.0:1", false).unwrap();
        assert!(
            message.contains("its layout has no node field"),
            "{message}"
        );
        assert_eq!(
            refusal(&Identity::new(&single, &[], true), "0.0.0.0:1", true),
            None
        );
    }

    #[test]
    fn the_line_names_each_field_and_where_it_came_from() {
        let twitter = Layout::twitter();
        let given = [
            ("datacenter", 1, "SNOWFLAKE_DATACENTER".to_string()),
            ("machine", 7, "--machine".to_string()),
        ];
        assert_eq!(
            Identity::new(&twitter, &given, false).line(),
            "issuing as datacenter 1 (from SNOWFLAKE_DATACENTER), machine 7 (from --machine)"
        );
        assert_eq!(
            Identity::new(&twitter, &given[1..], false).line(),
            "issuing as datacenter 0 (by default), machine 7 (from --machine)"
        );
        assert!(Identity::new(&twitter, &[], false).line().starts_with(
            "issuing as datacenter 0 (by default), machine 0 (by default): no node was given"
        ));
        assert_eq!(
            Identity::new(&twitter, &given[..1], true).line(),
            "issuing from a slot leased on etcd: datacenter 1 (from SNOWFLAKE_DATACENTER), \
             machine from the slot"
        );
    }
}
