//! Handing a slot on above every ID issued in it, because of the slot's
//! mark and not the time that passed: after a kill, a clean stop, the slot's
//! key deleted by hand, and to a node whose clock is behind the mark.

use super::*;

/// A killed node leaves its mark; the heir, whose clock is set *behind* the
/// dead node's last ID, must start above that ID: only the mark can make it
/// do so, not the time that passed while the lease ran out.
#[test]
fn a_killed_nodes_slot_is_taken_over_above_its_ids_because_of_the_mark() {
    let scene = Scene::start();
    let (dead, slot) = scene.holder(10_000);
    signal(dead.pid(), "KILL");
    let max_dead = *dead.issued.iter().max().unwrap();
    // A clock two seconds behind the dead node's last ID, and a reserve
    // wide enough that the heir waits for the mark rather than refusing it.
    let clock = Arc::new(ManualClock::new(time_of(max_dead) - 2_000));
    let config = in_process::config(&scene.etcd, &slot, clock).with_reserve_ms(30_000);
    let heir = InProcess::start(config);
    let holding = heir.holding(Duration::from_secs(TTL_S + 15), || dead.describe());
    assert_eq!(holding.slot.to_string(), slot);
    let ids = heir.ids(&holding, 1000);
    let below = ids.iter().filter(|id| **id <= max_dead).count();
    assert_eq!(
        below, 0,
        "the heir issued {below} IDs at or below the dead node's last ID {max_dead}"
    );
}

/// With one slot for two nodes, a node shut down cleanly lowers its slot's
/// mark to its last ID before it lets go. The mark read back from etcd lies
/// between that ID's time and now (not lowered too far, not deleted, not
/// left a TTL ahead); the next holder, whose clock is set behind that ID,
/// takes the slot well within the stopped node's TTL and starts above the
/// ID: only the mark can put it there.
#[test]
fn a_cleanly_stopped_nodes_slot_is_free_at_once_and_its_mark_covers_its_ids() {
    let scene = Scene::start();
    let slot = "datacenter=3,machine=9";
    // A long lease: without the lowered mark the next holder would wait
    // about 11 s (the reserve plus the TTL) before it could issue.
    let one_slot = ["--datacenter", "3", "--machine", "9", "--lease-ttl", "10"];
    let mut first = scene.node(&one_slot);
    first.wait_ready(Duration::from_secs(20));
    for _ in 0..10 {
        first.ids(1000);
    }
    // Idle past the generator's own reserve window (1 s), as a node about
    // to be stopped often is: its last ID must still be found.
    std::thread::sleep(Duration::from_millis(1500));
    signal(first.pid(), "TERM");
    let status = first.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "{status}\n{}", first.describe());
    let stopped = Instant::now();
    let last = *first.issued.iter().max().unwrap();
    let mark = stored_mark(&scene, slot);
    let now = now_ms();
    assert!(
        time_of(last) <= mark && mark <= now,
        "the mark after a clean stop is {mark}; the last ID's time is {}, now is {now}\n{}",
        time_of(last),
        first.describe()
    );
    let clock = Arc::new(ManualClock::new(time_of(last) - 2_000));
    let config = in_process::config(&scene.etcd, slot, clock).with_reserve_ms(30_000);
    let heir = InProcess::start(config);
    let holding = heir.holding(Duration::from_secs(5), || first.describe());
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "the slot was taken {:?} after the clean stop",
        stopped.elapsed()
    );
    let ids = heir.ids(&holding, 1000);
    assert!(
        ids.iter().all(|id| *id > last),
        "the next holder issued at or below the stopped node's last ID {last}"
    );
}

/// `etcdctl del` of a running node's slot key (a clean-up script, a
/// restore): the node gives the slot up at once (not ready, nothing more
/// from that slot), and takes a slot again without a restart; the next
/// holder of the deleted slot starts above its mark, which the node could
/// no longer raise once its key was gone.
#[test]
fn a_node_whose_slot_key_is_deleted_gives_the_slot_up_at_once_and_takes_one_again() {
    let scene = Scene::start();
    let (mut node, slot) = scene.holder(1000);
    let mut heir = scene.heir_of(&slot);
    assert!(
        scene.etcd.delete(&slot_key(&slot)),
        "the slot key was not there"
    );
    // Read at once: neither the node (its key is gone) nor the heir (the
    // mark is ahead of its clock) can have moved it since.
    let mark = stored_mark(&scene, &slot);
    // The slot is given up on the watch's event, a round trip to etcd; half
    // the TTL is far more than that takes, and far less than the seconds
    // for which a node that did not notice would stay ready.
    poll(
        Duration::from_secs(TTL_S) / 2,
        "the node still said ready after its slot key was deleted",
        || matches!(node.readyz(), Some((503, _))).then_some(()),
        || node.describe(),
    );
    let since = node.issued.len();
    assert!(
        node.log().contains("its key was deleted from etcd"),
        "{}",
        node.describe()
    );
    // It takes a slot again without a restart.
    let ready = node.wait_ready(Duration::from_secs(TTL_S + 10));
    for _ in 0..5 {
        node.ids(1000);
    }
    let from_old_slot: Vec<u64> = node.issued[since..]
        .iter()
        .copied()
        .filter(|id| slot_of(*id) == slot && time_of(*id) <= mark)
        .collect();
    assert!(
        from_old_slot.is_empty(),
        "the node issued {} IDs in {slot} at or below its mark {mark} after giving it up (now on {})",
        from_old_slot.len(),
        ready["slot"]
    );
    // The heir takes the deleted slot, above the mark.
    let taken = heir.wait_ready(Duration::from_secs(TTL_S + 15));
    assert_eq!(taken["slot"], slot.as_str());
    heir.ids(1000);
    assert_handed_on_above(&node, &heir, &format!("the mark {mark}"), |id| {
        time_of(id) > mark
    });
}

/// In process, with a clock that is an hour behind the mark the slot's last
/// holder left: the node does not issue into the past, says why, and takes
/// the slot once its clock has passed the mark.
#[test]
fn a_node_behind_the_slots_mark_does_not_issue_into_the_past() {
    let scene = Scene::start();
    let now = now_ms();
    let mark = now + 3_600_000;
    let slot = "datacenter=0,machine=0";
    scene.etcd.put(&mark_key(slot), mark.to_string().as_bytes());
    let clock = Arc::new(ManualClock::new(now));
    let node = InProcess::start(in_process::config(&scene.etcd, slot, clock.clone()));
    poll(
        Duration::from_secs(10),
        "the node never said it is behind the mark",
        || {
            let state = node.cluster.status().state;
            state.contains("behind the high-water mark").then_some(())
        },
        || format!("{:?}", node.cluster.status()),
    );
    assert!(node.cluster.current().is_err());
    // The clock catches up: the node takes the slot, above the mark.
    clock.set(mark + 1);
    let holding = node.holding(Duration::from_secs(10), String::new);
    let ids = node.ids(&holding, 1);
    assert!(time_of(ids[0]) > mark);
}
