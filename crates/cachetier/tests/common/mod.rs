//! Test helper: a real memcached process on a free loopback port, killed on drop. Tests that
//! need one skip (with a message) when the binary is not installed; CI installs it.

#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use superlinear_cachetier::Endpoint;

pub struct Memcached {
    pub port: u16,
    child: Option<Child>,
}

fn binary() -> Option<&'static str> {
    ["/usr/bin/memcached", "/usr/local/bin/memcached"].into_iter().find(|p| std::path::Path::new(p).exists())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
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
        self.child = Some(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn memcached"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "memcached did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
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
