//! Software prefetch hints for the serial dispatch loops.
//!
//! The hardware prefetcher alone does not keep a streaming dispatcher fed once the request stream
//! is larger than the caches, so the dispatch loops prefetch their next chunk themselves.

/// Hints the CPU to load the cache line holding `item` into L1; a no-op elsewhere than x86-64.
#[inline(always)]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a hint: it never faults and changes no state the program
    // can observe, and the pointer comes from a reference to a live value.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((item as *const T).cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Hints the CPU to load every cache line of `items` into L1.
#[inline]
pub fn prefetch_slice<T>(items: &[T]) {
    const LINE: usize = 64;
    let step = (LINE / std::mem::size_of::<T>().max(1)).max(1);
    for item in items.iter().step_by(step) {
        prefetch(item);
    }
}
