//! A three-member etcd cluster on loopback, and what an operator does to it
//! by hand (read, write and delete keys, kill or pause members), through
//! etcd's own JSON gateway.
//!
//! Ports: a member is told its peers' URLs before any of them starts, so it
//! cannot be started on port 0 and asked afterwards; its ports are picked
//! free and may be taken by another process before etcd binds them. That is
//! sound because nothing is taken on trust: etcd exits when it cannot bind,
//! and a member counts as started only when the process is still running
//! and the member answering on its client port says it is that member of
//! this cluster (its name and peer URL, from `member/list` and `status`).
//! Otherwise the whole cluster is started again on new ports.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use snowflake::Layout;
use snowflake_etcd::ClusterConfig;

use crate::scenario::{scratch, signal, unique};
use crate::support::{free_port, http};

struct Member {
    name: String,
    client: String,
    peer: String,
    args: Vec<String>,
    log: PathBuf,
    child: Option<Child>,
}

/// A three-member etcd cluster in temporary directories; killed and removed
/// when dropped, whatever the test did.
pub struct Etcd {
    members: Vec<Member>,
    dir: PathBuf,
}

impl Etcd {
    pub fn start() -> Etcd {
        assert!(
            Command::new("etcd").arg("--version").output().is_ok(),
            "etcd is not installed: run ./scripts/test, or apt-get install etcd-server"
        );
        let mut failures = Vec::new();
        for attempt in 0..3 {
            match Etcd::try_start(attempt) {
                Ok(etcd) => return etcd,
                Err(why) => failures.push(why),
            }
        }
        panic!(
            "etcd did not start in three tries:\n{}",
            failures.join("\n")
        );
    }

    /// Starts a cluster on ports that were free a moment ago; another
    /// process may take one in between, so the caller tries again.
    fn try_start(attempt: u32) -> Result<Etcd, String> {
        let token = unique();
        let dir = scratch().join(format!("etcd-{token}-{attempt}"));
        std::fs::create_dir_all(&dir).unwrap();
        let ports: Vec<(u16, u16)> = (0..3).map(|_| (free_port(), free_port())).collect();
        let initial: Vec<String> = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
            .collect();
        let mut members = Vec::new();
        for (i, (client, peer)) in ports.iter().enumerate() {
            let client = format!("http://127.0.0.1:{client}");
            let peer = format!("http://127.0.0.1:{peer}");
            let args = vec![
                format!("--name=m{i}"),
                format!("--data-dir={}", dir.join(format!("m{i}")).display()),
                format!("--listen-client-urls={client}"),
                format!("--advertise-client-urls={client}"),
                format!("--listen-peer-urls={peer}"),
                format!("--initial-advertise-peer-urls={peer}"),
                format!("--initial-cluster={}", initial.join(",")),
                "--initial-cluster-state=new".into(),
                format!("--initial-cluster-token=snowflake-{token}"),
                // Fast elections, so that losing the leader costs well under
                // a lease.
                "--heartbeat-interval=50".into(),
                "--election-timeout=500".into(),
                "--logger=zap".into(),
                "--log-level=error".into(),
            ];
            members.push(Member {
                name: format!("m{i}"),
                client,
                peer,
                args,
                log: dir.join(format!("m{i}.log")),
                child: None,
            });
        }
        let mut etcd = Etcd { members, dir };
        for i in 0..3 {
            etcd.spawn(i);
        }
        etcd.wait_healthy()?;
        Ok(etcd)
    }

    fn spawn(&mut self, i: usize) {
        let member = &mut self.members[i];
        let log = std::fs::File::create(&member.log).unwrap();
        member.child = Some(
            Command::new("etcd")
                .args(&member.args)
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
    }

    fn wait_healthy(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        for i in 0..self.members.len() {
            loop {
                let exited = self.members[i]
                    .child
                    .as_mut()
                    .and_then(|c| c.try_wait().ok().flatten());
                if exited.is_none() && self.is_our_member(i) {
                    break;
                }
                if exited.is_some() || Instant::now() > deadline {
                    let member = &self.members[i];
                    return Err(format!(
                        "etcd {} ({}) {}: {}",
                        member.name,
                        member.client,
                        if exited.is_some() {
                            "exited"
                        } else {
                            "not healthy in 30 s"
                        },
                        std::fs::read_to_string(&member.log).unwrap_or_default()
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(())
    }

    /// Whether member `i`'s client port is answered, healthily, by member
    /// `i` of this cluster, rather than by whatever else took the port.
    fn is_our_member(&self, i: usize) -> bool {
        let member = &self.members[i];
        let addr = member.client.trim_start_matches("http://");
        let healthy =
            matches!(http(addr, "GET", "/health", ""), Some((200, body)) if body.contains("true"));
        let answer = |path: &str| -> Option<Value> {
            match http(addr, "POST", path, "{}")? {
                (200, body) => serde_json::from_str(&body).ok(),
                _ => None,
            }
        };
        let (Some(status), Some(list)) = (
            answer("/v3/maintenance/status"),
            answer("/v3/cluster/member/list"),
        ) else {
            return false;
        };
        let me = &status["header"]["member_id"];
        healthy
            && list["members"].as_array().is_some_and(|members| {
                members.iter().any(|m| {
                    &m["ID"] == me
                        && m["name"] == member.name.as_str()
                        && m["peerURLs"]
                            .as_array()
                            .is_some_and(|urls| urls.iter().any(|u| u == member.peer.as_str()))
                })
            })
    }

    /// The client URLs of all members, comma-separated, for `--etcd`.
    pub fn endpoints(&self) -> String {
        self.members
            .iter()
            .map(|m| m.client.clone())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A node of cluster `name` of `layout` on this etcd, with
    /// `ClusterConfig::new`'s settings, which are `snowflake serve
    /// --etcd`'s: where every node the scenarios run in this process
    /// starts.
    pub fn node_config(&self, name: &str, layout: Layout) -> ClusterConfig {
        let endpoints = self.endpoints().split(',').map(String::from).collect();
        ClusterConfig::new(endpoints, layout).with_name(name)
    }

    /// Member `i`'s client URL.
    pub fn member(&self, i: usize) -> &str {
        &self.members[i].client
    }

    pub fn pid(&self, i: usize) -> u32 {
        self.members[i].child.as_ref().unwrap().id()
    }

    /// Stops (`STOP`) or resumes (`CONT`) every member.
    pub fn signal_all(&self, sig: &str) {
        for i in 0..self.members.len() {
            signal(self.pid(i), sig);
        }
    }

    /// The index of the current leader.
    pub fn leader(&self) -> usize {
        for (i, member) in self.members.iter().enumerate() {
            let addr = member.client.trim_start_matches("http://");
            if let Some((200, body)) = http(addr, "POST", "/v3/maintenance/status", "{}") {
                let v: Value = serde_json::from_str(&body).unwrap();
                if v["leader"] == v["header"]["member_id"] {
                    return i;
                }
            }
        }
        panic!("no etcd member says it is the leader");
    }

    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// One call to the JSON gateway of any member that answers.
    fn call(&self, path: &str, body: &Value) -> Value {
        for member in &self.members {
            let addr = member.client.trim_start_matches("http://");
            if let Some((200, answer)) = http(addr, "POST", path, &body.to_string()) {
                return serde_json::from_str(&answer).unwrap();
            }
        }
        panic!("no etcd member answered {path} {body}");
    }

    /// The value of `key`, as `etcdctl get` shows it.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let answer = self.call("/v3/kv/range", &json!({ "key": BASE64.encode(key) }));
        let value = answer["kvs"].as_array()?.first()?["value"]
            .as_str()
            .unwrap_or("");
        Some(BASE64.decode(value).unwrap())
    }

    /// Every key under `prefix`, sorted, as `etcdctl get --prefix
    /// --keys-only` shows them. (Keys only: the gateway sends a long answer
    /// chunked, which [`http`] does not read.)
    pub fn keys_under(&self, prefix: &str) -> Vec<String> {
        let mut end = prefix.as_bytes().to_vec();
        // The range of a prefix ends just past it: its last byte plus one.
        *end.last_mut().unwrap() += 1;
        let range = json!({
            "key": BASE64.encode(prefix),
            "range_end": BASE64.encode(end),
            "keys_only": true,
        });
        let answer = self.call("/v3/kv/range", &range);
        let kvs = answer["kvs"].as_array().cloned().unwrap_or_default();
        kvs.iter()
            .map(|kv| {
                let key = BASE64.decode(kv["key"].as_str().unwrap()).unwrap();
                String::from_utf8(key).unwrap()
            })
            .collect()
    }

    /// Writes `value` under `key`, with no lease, as `etcdctl put` does.
    pub fn put(&self, key: &str, value: &[u8]) {
        let body = json!({ "key": BASE64.encode(key), "value": BASE64.encode(value) });
        self.call("/v3/kv/put", &body);
    }

    /// Writes `value` under `key`, attached to `lease`, as `etcdctl put
    /// --lease` does.
    pub fn put_under_lease(&self, key: &str, value: &[u8], lease: i64) {
        let body = json!({
            "key": BASE64.encode(key),
            "value": BASE64.encode(value),
            "lease": lease.to_string(),
        });
        let answer = self.call("/v3/kv/put", &body);
        assert!(answer.get("error").is_none(), "{answer}");
    }

    /// The leases etcd keeps, as `etcdctl lease list` shows them.
    pub fn leases(&self) -> Vec<i64> {
        let answer = self.call("/v3/lease/leases", &json!({}));
        answer["leases"]
            .as_array()
            .map(|leases| {
                leases
                    .iter()
                    .filter_map(|l| l["ID"].as_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Deletes `key`, as `etcdctl del` does; whether there was one.
    pub fn delete(&self, key: &str) -> bool {
        let answer = self.call("/v3/kv/deleterange", &json!({ "key": BASE64.encode(key) }));
        answer["deleted"].as_str() == Some("1")
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            if let Some(child) = &self.members[i].child {
                // A stopped process must be woken to die promptly.
                let _ = Command::new("kill")
                    .args(["-CONT", &child.id().to_string()])
                    .status();
            }
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
