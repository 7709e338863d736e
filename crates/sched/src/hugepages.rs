//! Transparent huge pages for the large preallocated arrays of the queue (element pool, bucket
//! heads): with random priorities every operation touches a random element, and 4 KiB pages
//! turn most of those touches into TLB misses. Advice only: where the kernel ignores it (THP
//! off, other platforms) nothing changes but speed.

/// Huge pages are 2 MiB on x86-64 and aarch64 Linux.
const HUGE: usize = 2 << 20;

/// Advises the kernel to back the (still untouched) spare capacity of `v` with huge pages.
/// Call it right after `Vec::with_capacity` and before filling the vector.
pub fn advise<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let aligned = (start + HUGE - 1) & !(HUGE - 1);
        let end = (start + bytes) & !(HUGE - 1);
        if end > aligned {
            // SAFETY: [aligned, end) lies inside the vector's own allocation (rounded inwards to
            // whole huge pages), which stays alive for the duration of the call. MADV_HUGEPAGE
            // only changes how the kernel backs these pages, never their contents or validity,
            // so no Rust-visible memory is affected; a failure is harmless and ignored.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
            }
        }
    }
}
