//! Compiles the BPF side (bpf/classifier.bpf.c) with clang into OUT_DIR, where the crate
//! embeds it. Without clang (or the kernel and libbpf headers) the object is left empty and
//! every `superlinear xdp` command says so in one line at run time; the rest of the project
//! builds and works as before.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("classifier.bpf.o");
    let src = "bpf/classifier.bpf.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CLANG");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".to_string());
    let arch = std::env::consts::ARCH;
    let status = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-I/usr/include/{arch}-linux-gnu"))
        .args(["-c", src, "-o"])
        .arg(&out)
        .status();
    let why = match status {
        Ok(s) if s.success() => None,
        Ok(s) => Some(format!("{clang} failed on {src} ({s})")),
        Err(e) => Some(format!("{clang} not found ({e})")),
    };
    if let Some(why) = why {
        println!("cargo:warning=XDP datapath not built: {why}; install clang and libbpf-dev, then rebuild");
        std::fs::write(&out, b"").expect("write empty BPF object");
        // Installing clang later changes nothing cargo watches, so "then rebuild" would keep the
        // empty object: a path that never exists makes cargo run this script again on every
        // build until the object compiles.
        println!("cargo:rerun-if-changed={}", out.with_extension("retry").display());
        println!("cargo:rustc-env=SUPERLINEAR_XDP_BUILD_ERROR={why}");
    } else {
        println!("cargo:rustc-env=SUPERLINEAR_XDP_BUILD_ERROR=");
    }
}
