//! Test helper: a real memcached process on a free loopback port, killed on drop. Tests that
//! need one skip (with a message) when the binary is not installed; CI installs it.

#![allow(dead_code)]

use std::collections::HashSet;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use superlinear_cachetier::Endpoint;

pub struct Memcached {
    pub port: u16,
    child: Option<Child>,
}

fn binary() -> Option<&'static str> {
    ["/usr/bin/memcached", "/usr/local/bin/memcached"].into_iter().find(|p| std::path::Path::new(p).exists())
}

/// Ports handed out in this test process. Tests run in parallel threads, and the OS may offer
/// the same free port to two of them once the probing listener is closed: two servers would
/// then race for it, and one test would talk to (and be reset by) the other test's server.
static TAKEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

fn free_port() -> u16 {
    let mut taken = TAKEN.lock().unwrap();
    let taken = taken.get_or_insert_with(HashSet::new);
    loop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if taken.insert(port) {
            return port;
        }
    }
}

/// Whether a memcached serves on `port`: a whole `version` round trip, not just an accepted TCP
/// connection (which the kernel completes before the server is ready, and which a connect to a
/// free port in the ephemeral range can even make with itself).
fn answers_version(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut reply = [0u8; 8];
    s.write_all(b"version\r\n").is_ok() && s.read_exact(&mut reply).is_ok() && &reply == b"VERSION "
}

impl Memcached {
    /// Starts memcached with `mb` MiB, or returns None (and says why) if it is not installed.
    pub fn start(mb: u32) -> Option<Self> {
        let Some(bin) = binary() else {
            eprintln!("SKIP: memcached not installed (apt-get install -y memcached)");
            return None;
        };
        let mut m = Memcached { port: free_port(), child: None };
        m.spawn(bin, mb);
        Some(m)
    }

    fn spawn(&mut self, bin: &str, mb: u32) {
        let mut cmd = Command::new(bin);
        cmd.args(["-l", "127.0.0.1", "-p", &self.port.to_string(), "-m", &mb.to_string(), "-t", "1", "-U", "0"]);
        // SAFETY: geteuid has no preconditions and only reads the process credentials.
        if unsafe { libc::geteuid() } == 0 {
            cmd.args(["-u", "nobody"]);
        }
        let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn memcached");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !answers_version(self.port) {
            assert!(
                child.try_wait().expect("memcached status").is_none(),
                "memcached exited: port {} taken?",
                self.port
            );
            assert!(Instant::now() < deadline, "memcached did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        self.child = Some(child);
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint::Tcp { host: "127.0.0.1".into(), port: self.port }
    }

    /// Kills the process (a crash).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again, empty, on the same port.
    pub fn restart(&mut self, mb: u32) {
        self.kill();
        self.spawn(binary().unwrap(), mb);
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        self.kill();
    }
}
