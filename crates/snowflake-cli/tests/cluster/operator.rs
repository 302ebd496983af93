//! What only an operator can mend: a damaged mark keeps its slot unused,
//! and its 503 does not tell clients to retry.

use super::*;

/// A node fixed to a slot whose mark in etcd is damaged (not a time), once
/// it has said, at error level, that an operator must act.
fn node_on_a_damaged_mark(scene: &Scene, slot: &str) -> Node {
    scene.etcd.put(&mark_key(slot), b"12x");
    let args = slot_args(slot);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let node = scene.node(&args);
    poll(
        Duration::from_secs(20),
        "the node never said an operator must mend the mark",
        || {
            let log = node.log();
            (log.contains("ERROR") && log.contains("an operator must")).then_some(())
        },
        || node.describe(),
    );
    node
}

/// A damaged mark is never taken for "no mark": the node does not issue
/// from the slot, names the key in its log, and leaves the slot free; once
/// the operator sets a mark after the slot's last ID, the node takes the
/// slot without a restart, above that mark.
#[test]
fn a_damaged_mark_keeps_its_slot_unused_until_an_operator_mends_it() {
    let scene = Scene::start();
    let slot = "datacenter=1,machine=2";
    let mut node = node_on_a_damaged_mark(&scene, slot);
    assert!(
        node.log()
            .contains(&format!("the mark {} in etcd is \"12x\"", mark_key(slot))),
        "{}",
        node.describe()
    );
    assert!(matches!(node.ask(1), Reply::Refused(_)));
    assert!(matches!(node.readyz(), Some((503, _))));
    let mended = now_ms() + 500;
    scene
        .etcd
        .put(&mark_key(slot), mended.to_string().as_bytes());
    node.wait_ready(Duration::from_secs(TTL_S + 10));
    let ids = node.ids(1000);
    assert!(
        ids.iter().all(|id| time_of(*id) > mended),
        "the node issued at or below the mended mark {mended}"
    );
}

/// Waiting does not mend a damaged mark, so the 503 must not tell clients
/// to retry shortly.
#[test]
fn a_damaged_marks_503_does_not_tell_clients_to_retry() {
    let scene = Scene::start();
    let mut node = node_on_a_damaged_mark(&scene, "datacenter=1,machine=2");
    match node.ask(1) {
        Reply::Refused(answer) => assert_eq!(
            answer.header("retry-after"),
            None,
            "{answer:?}\n{}",
            node.describe()
        ),
        other => panic!("{other:?}"),
    }
}
