//! Who holds which slot, as `snowflake cluster status` lists it.
//!
//! What is read from etcd is not trusted: a slot key whose value is not a
//! holder record is listed as occupied and unreadable (a node would not
//! claim it), never left out, which would make it look free; a mark that is
//! not a time of the layout is listed as damaged, not as absent.

use etcd_client::GetOptions;
use serde::Serialize;
use snowflake::UnixMillis;

use crate::config::{ClusterConfig, NodeInfo, connect};
use crate::error::Error;
use crate::mark::read_mark;
use crate::members::past_refusals;
use crate::skew::Offset;

/// A slot in use, as `snowflake cluster status` lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SlotHolder {
    /// The slot, e.g. `datacenter=1,machine=7`: the end of its key.
    pub slot: String,
    /// Who holds it, or why that cannot be read.
    #[serde(flatten)]
    pub holder: Holder,
    /// The slot's high-water mark, Unix ms; `None` when there is none or it
    /// cannot be read.
    pub mark_ms: Option<i64>,
    /// Why the mark cannot be read, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_error: Option<String>,
    /// The lease the slot is held under.
    #[serde(skip)]
    pub lease: i64,
    /// The holder's clock measured against the caller's (see
    /// [`probe_clocks`](crate::probe_clocks)); `None` until measured, or
    /// when the holder did not answer.
    pub clock: Option<Offset>,
}

/// Who holds a slot, as its key says.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Holder {
    /// A node, as it described itself.
    Node {
        /// Its record.
        #[serde(flatten)]
        node: NodeInfo,
        /// When it claimed the slot, as a date.
        since: String,
    },
    /// The key holds something that is not a holder record: the slot is
    /// occupied, by what cannot be said.
    Unreadable {
        /// Why the value is not a holder record.
        unreadable: String,
    },
}

impl Holder {
    /// The holder that the value of a slot key describes.
    fn read(value: &[u8]) -> Holder {
        match serde_json::from_slice::<NodeInfo>(value) {
            Ok(node) => Holder::Node {
                since: UnixMillis(node.since_ms).to_string(),
                node,
            },
            Err(err) => Holder::Unreadable {
                unreadable: format!("not a holder record: {err}"),
            },
        }
    }
}

/// Lists the slots in use and their holders.
pub async fn holders(config: &ClusterConfig) -> Result<Vec<SlotHolder>, Error> {
    let client = connect(config).await?;
    let prefix = config.prefix();
    let slot_prefix = format!("{prefix}slots/");
    let client = &client;
    let read = |under: String| {
        past_refusals(config.endpoints.len(), move || {
            let (mut client, under) = (client.clone(), under.clone());
            async move {
                let options = GetOptions::new().with_prefix();
                client.get(under, Some(options)).await
            }
        })
    };
    let slots = read(slot_prefix.clone()).await.map_err(Error::Read)?;
    let marks = read(format!("{prefix}marks/")).await.map_err(Error::Read)?;
    let mut out = Vec::new();
    for kv in slots.kvs() {
        let key = String::from_utf8_lossy(kv.key());
        let slot = key.strip_prefix(&slot_prefix).unwrap_or(&key).to_string();
        let mark_key = config.mark_key(&slot);
        let mark = marks
            .kvs()
            .iter()
            .find(|m| m.key() == mark_key.as_bytes())
            .map(|m| read_mark(m.value(), &config.layout));
        out.push(SlotHolder {
            holder: Holder::read(kv.value()),
            slot,
            mark_ms: mark.as_ref().and_then(|m| m.as_ref().ok().copied()),
            mark_error: mark.and_then(Result::err),
            lease: kv.lease(),
            clock: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_record_is_read_and_anything_else_is_unreadable() {
        let record = br#"{"hostname":"h","pid":7,"address":"http://a/","since_ms":0}"#;
        match Holder::read(record) {
            Holder::Node { node, since } => {
                assert_eq!((node.hostname.as_str(), node.pid), ("h", 7));
                assert_eq!(since, "1970-01-01T00:00:00.000Z");
            }
            other => panic!("{other:?}"),
        }
        for garbage in [&b"garbage"[..], b"", b"{}", br#"{"hostname":"h","pid":-1}"#] {
            assert!(
                matches!(Holder::read(garbage), Holder::Unreadable { .. }),
                "{garbage:?}"
            );
        }
    }

    #[test]
    fn extreme_claim_times_are_still_dates() {
        for since_ms in [i64::MIN, -1, i64::MAX] {
            let value = format!(r#"{{"hostname":"h","pid":1,"address":"","since_ms":{since_ms}}}"#);
            assert!(matches!(
                Holder::read(value.as_bytes()),
                Holder::Node { .. }
            ));
        }
    }

    #[test]
    fn an_unreadable_slot_is_listed_with_its_reason_in_json() {
        let entry = SlotHolder {
            slot: "datacenter=1,machine=2".into(),
            holder: Holder::read(b"\x00\xff"),
            mark_ms: None,
            mark_error: Some("\"x\", not a time in Unix milliseconds".into()),
            lease: 7,
            clock: None,
        };
        let json = serde_json::to_value(&entry).unwrap();
        assert!(
            json["unreadable"]
                .as_str()
                .unwrap()
                .starts_with("not a holder record")
        );
        assert_eq!(json["slot"], "datacenter=1,machine=2");
        assert!(json["mark_ms"].is_null());
        assert!(json["mark_error"].is_string());
        assert!(json.get("hostname").is_none());
    }
}
