// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A trace replayer for the throughput study: an in-kernel packet generator that needs neither
 * pktgen nor a socket per packet. User space runs sl_replay with BPF_PROG_RUN in live-frames
 * mode (BPF_F_TEST_XDP_LIVE_FRAMES, kernel 5.18+) on the sending device: every run writes the
 * next frame of the trace over the packet and returns XDP_TX, which live mode turns into a
 * transmit out of that device (for a veth, into its peer's XDP program, the dispatcher).
 *
 * Each CPU replays from its own cursor (the calling thread is pinned), so several sender
 * threads walk the trace independently from the starts user space gave them. Every frame is
 * written in full on every run: live mode recycles its pages, so what the previous run left
 * there must not matter.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FRAME_LEN 60 /* every trace frame (crates/classify trace::encode::FRAME_LEN) */
#define FRAME_SLOT 64

struct sl_frame {
	__u8 bytes[FRAME_SLOT];
};

struct sl_cursor {
	__u64 next; /* index of the next frame */
	__u64 sent; /* frames written and handed to XDP_TX */
};

/* max_entries is the trace length, set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_frame);
	__uint(max_entries, 1);
} replay_frames SEC(".maps");

/* One cursor per CPU id (max_entries: the possible CPUs, set by the loader). A plain array,
 * not a per-CPU one, so that each sender thread sets its own CPU's start without touching the
 * others'. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_cursor);
	__uint(max_entries, 1);
} replay_cursors SEC(".maps");

/* Number of frames: [0]. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} replay_settings SEC(".maps");

SEC("xdp")
int sl_replay(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + FRAME_LEN > end)
		return XDP_ABORTED;
	__u32 zero = 0;
	__u64 *frames = bpf_map_lookup_elem(&replay_settings, &zero);
	__u32 cpu = bpf_get_smp_processor_id();
	struct sl_cursor *cur = bpf_map_lookup_elem(&replay_cursors, &cpu);
	if (!frames || !cur || !*frames)
		return XDP_ABORTED;
	__u64 i = cur->next;
	if (i >= *frames)
		i = 0;
	__u32 key = (__u32)i;
	struct sl_frame *f = bpf_map_lookup_elem(&replay_frames, &key);
	if (!f)
		return XDP_ABORTED;
	__builtin_memcpy(data, f->bytes, FRAME_LEN);
	cur->next = i + 1 >= *frames ? 0 : i + 1;
	cur->sent += 1;
	return XDP_TX;
}

char _license[] SEC("license") = "Dual MIT/GPL";
