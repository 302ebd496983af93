//! `snowflake serve` as a child process on port 0: the address it bound is
//! read back from its log, so no other process can answer in its place and
//! no two tests race for a port.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running `snowflake serve` and where it listens. Dropped without
/// [`Served::terminate`] (a test that failed first), it is killed.
pub struct Served {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    logs: Option<JoinHandle<String>>,
}

impl Served {
    /// `snowflake serve` told to listen on 127.0.0.1:0 (through
    /// `SNOWFLAKE_LISTEN`, so that `--listen` may still be given), its
    /// environment otherwise clean: add arguments and settings, then
    /// [`Served::start`] it.
    pub fn command() -> Command {
        let mut command = super::command();
        command.arg("serve").env("SNOWFLAKE_LISTEN", "127.0.0.1:0");
        command
    }

    /// [`Served::command`] with `args`, started.
    pub fn with_args(args: &[&str]) -> Served {
        let mut command = Served::command();
        command.args(args);
        Served::start(command)
    }

    /// Starts `command` (a `snowflake serve` on port 0) and waits, at most
    /// 20 s, for the line saying where it listens.
    pub fn start(mut command: Command) -> Served {
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (found, address) = mpsc::channel();
        // The whole log is read as it comes, so that a chatty server never
        // blocks on a full pipe.
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
            Ok(addr) => Served {
                child,
                addr,
                logs: Some(logs),
            },
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
        let logs = self.logs.take().unwrap().join().unwrap();
        assert!(status.success(), "{status:?}\n{logs}");
        logs
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // After terminate() the child is reaped and std sends no signal (its
        // PID may be another process's by now).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
