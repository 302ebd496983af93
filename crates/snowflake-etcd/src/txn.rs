//! The transactions on a slot's keys. Each compares before it writes, so
//! that what a node does to a slot takes effect only while it holds it.

use etcd_client::{Client, Compare, CompareOp, PutOptions, Txn, TxnOp};

use crate::config::NodeInfo;

/// Writes the slot key if nobody holds it, attached to `lease`: two live
/// nodes never hold one slot.
pub(crate) async fn create_slot(
    client: &mut Client,
    key: &str,
    info: &NodeInfo,
    lease: i64,
) -> Result<bool, etcd_client::Error> {
    let value = serde_json::to_vec(info).unwrap_or_default();
    let txn = Txn::new()
        .when([Compare::create_revision(key, CompareOp::Equal, 0)])
        .and_then([TxnOp::put(
            key,
            value,
            Some(PutOptions::new().with_lease(lease)),
        )]);
    Ok(client.txn(txn).await?.succeeded())
}

/// Deletes the slot key if `lease` still holds it; whether it is known to
/// be gone.
pub(crate) async fn release_slot(client: &mut Client, key: &str, lease: i64) -> bool {
    let txn = Txn::new()
        .when([Compare::lease(key, CompareOp::Equal, lease)])
        .and_then([TxnOp::delete(key, None)]);
    client.txn(txn).await.is_ok_and(|r| r.succeeded())
}

/// Stores `mark_ms` under `mark_key` if `lease` still holds `slot_key`: a
/// node whose slot was given away cannot move the mark.
pub(crate) async fn put_mark(
    client: &mut Client,
    slot_key: &str,
    mark_key: &str,
    lease: i64,
    mark_ms: i64,
) -> Result<bool, etcd_client::Error> {
    let txn = Txn::new()
        .when([Compare::lease(slot_key, CompareOp::Equal, lease)])
        .and_then([TxnOp::put(mark_key, mark_ms.to_string(), None)]);
    Ok(client.txn(txn).await?.succeeded())
}
