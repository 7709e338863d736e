//! Compiles the BPF side (bpf/classifier.bpf.c, the datapath; bpf/replay.bpf.c, the throughput
//! study's trace replayer) with clang into OUT_DIR, where the crate embeds it. Without clang (or
//! the kernel and libbpf headers) the objects are left empty and every `superlinear xdp` command
//! says so in one line at run time; the rest of the project builds and works as before.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `src` into `out`; why not, when it could not.
fn compile(clang: &str, src: &str, out: &Path) -> Option<String> {
    println!("cargo:rerun-if-changed={src}");
    let arch = std::env::consts::ARCH;
    let status = Command::new(clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-I/usr/include/{arch}-linux-gnu"))
        .args(["-c", src, "-o"])
        .arg(out)
        .status();
    match status {
        Ok(s) if s.success() => None,
        Ok(s) => Some(format!("{clang} failed on {src} ({s})")),
        Err(e) => Some(format!("{clang} not found ({e})")),
    }
}

fn main() {
    let dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-env-changed=CLANG");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".to_string());
    let mut why = None;
    for name in ["classifier", "replay"] {
        let out = dir.join(format!("{name}.bpf.o"));
        if let Some(w) = compile(&clang, &format!("bpf/{name}.bpf.c"), &out) {
            std::fs::write(&out, b"").expect("write empty BPF object");
            why.get_or_insert(w);
        }
    }
    if let Some(why) = why {
        println!("cargo:warning=XDP datapath not built: {why}; install clang and libbpf-dev, then rebuild");
        // Installing clang later changes nothing cargo watches, so "then rebuild" would keep the
        // empty objects: a path that never exists makes cargo run this script again on every
        // build until the objects compile.
        println!("cargo:rerun-if-changed={}", dir.join("classifier.bpf.retry").display());
        println!("cargo:rustc-env=SUPERLINEAR_XDP_BUILD_ERROR={why}");
    } else {
        println!("cargo:rustc-env=SUPERLINEAR_XDP_BUILD_ERROR=");
    }
}
