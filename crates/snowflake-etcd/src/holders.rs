//! Who holds which slot, as `snowflake cluster status` lists it.

use etcd_client::GetOptions;
use serde::Serialize;
use snowflake::UnixMillis;

use crate::config::{ClusterConfig, NodeInfo, connect};
use crate::error::Error;

/// A slot in use, as `snowflake cluster status` lists it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SlotHolder {
    /// The slot, e.g. `datacenter=1,machine=7`.
    pub slot: String,
    /// Its holder.
    #[serde(flatten)]
    pub node: NodeInfo,
    /// When it claimed the slot, as a date.
    pub since: String,
    /// The slot's high-water mark, Unix ms.
    pub mark_ms: Option<i64>,
}

/// Lists the slots in use and their holders.
pub async fn holders(config: &ClusterConfig) -> Result<Vec<SlotHolder>, Error> {
    let mut client = connect(config).await?;
    let prefix = config.prefix();
    let slots = client
        .get(
            format!("{prefix}slots/"),
            Some(GetOptions::new().with_prefix()),
        )
        .await
        .map_err(Error::Read)?;
    let marks = client
        .get(
            format!("{prefix}marks/"),
            Some(GetOptions::new().with_prefix()),
        )
        .await
        .map_err(Error::Read)?;
    let mut out = Vec::new();
    for kv in slots.kvs() {
        let slot = String::from_utf8_lossy(kv.key())
            .trim_start_matches(&format!("{prefix}slots/"))
            .to_string();
        let Ok(node) = serde_json::from_slice::<NodeInfo>(kv.value()) else {
            continue;
        };
        let mark_key = config.mark_key(&slot);
        let mark_ms = marks
            .kvs()
            .iter()
            .find(|m| m.key() == mark_key.as_bytes())
            .and_then(|m| std::str::from_utf8(m.value()).ok()?.trim().parse().ok());
        out.push(SlotHolder {
            since: UnixMillis(node.since_ms).to_string(),
            slot,
            node,
            mark_ms,
        });
    }
    Ok(out)
}
