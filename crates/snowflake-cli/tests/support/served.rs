//! `snowflake serve` as a child process on port 0: the address it bound is
//! read back from its log, so no other process can answer in its place and
//! no two tests race for a port.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running `snowflake serve` and where it listens.
pub struct Served {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    logs: JoinHandle<String>,
}

impl Served {
    /// Starts `command` (a `snowflake serve` told `--listen 127.0.0.1:0`)
    /// and waits, at most 20 s, for the line saying where it listens.
    pub fn start(mut command: Command) -> Served {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (found, address) = mpsc::channel();
        let logs = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("listening on http://").nth(1)
                    && let Some(addr) = rest.split('/').next()
                {
                    let _ = found.send(addr.to_string());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        match address.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => Served { child, addr, logs },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the server did not say where it listens:\n{}",
                    logs.join().unwrap_or_default()
                );
            }
        }
    }

    /// The server's process ID.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server with SIGTERM; it must exit 0. Its log.
    pub fn terminate(mut self) -> String {
        let kill = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = self.child.wait().unwrap();
        let logs = self.logs.join().unwrap();
        assert!(status.success(), "{status:?}\n{logs}");
        logs
    }
}
