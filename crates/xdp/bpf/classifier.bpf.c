// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The self-adjusting classifier in the XDP datapath (paper §4: RSS feeding per-core MRF lists),
 * on a stock kernel, in two programs:
 *
 *  - sl_dispatch, attached to the ingress device: parses Ethernet (up to two VLAN tags) /
 *    IPv4 / the first four bytes of the transport header, hashes the chosen header fields
 *    with RSS's Toeplitz function (tables made in user space for the field set), picks a
 *    logical worker w in [0, k) as the indirection table does (hash & reta_mask) mod k, and
 *    redirects the frame through a cpumap to the CPU that w is bound to. Frames it cannot
 *    parse pass unchanged, counted by reason.
 *  - sl_worker, attached to every cpumap entry: parses and hashes again (the same w), scans
 *    logical worker w's order of the rules of the current generation under bpf_loop, and on a
 *    match moves the rule forward as MRF does (paper Alg. 1, with the dependency lists
 *    computed in user space by crates/classify deps.rs: just behind its nearest dependency
 *    ahead, which then moves the same way). The exact first-match rule, for the per-rule
 *    counters, is resolved with the same-action overlap lists of the same graph. Verdict:
 *    accept passes, every other action drops. Every loop runs under bpf_loop, SCAN_CHUNK
 *    entries per call, so its cost does not depend on a verifier bound.
 *
 * Each logical worker's order is touched only by the CPU it is bound to (w mod CPUs), so its
 * updates need no atomics. Rule sets are switched by generation: user space fills the slot
 * that is not in use, then flips `generation`; a packet reads the generation once and is
 * classified against that whole slot.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MAX_RULES 16384 /* rule ids fit u16; a power of two, for index masks */
#define RULE_MASK (MAX_RULES - 1)
#define MAX_WORKERS 1024
#define MAX_CPUS 256
#define HASH_SLOTS 13
#define GENERATIONS 2
#define SCAN_CHUNK 64 /* entries per bpf_loop step (each step is a call and a return) */
#define SHIFT_CHUNK 256 /* order entries per relabel step */
#define QUAD_CHUNK 64 /* groups of four order entries per shift step (three branches each) */
#define LABEL_BASE (1u << 31) /* order labels start here, LABEL_GAP apart (room for front moves) */
#define LABEL_GAP (1u << 16)  /* MAX_RULES labels this far apart stay below 2^32 */
#define NO_RULE 0xffffULL     /* a u16 no order entry holds (rule ids are below MAX_RULES) */
#define RULE_CHUNK 64 /* rules per scan step: at most 64 (a bit each in a mask) */
#define RULE_STEP (2 * RULE_CHUNK) /* rules per scan step: two blocks */
#define PREFIX_RULES 64 /* positions scanned before the first step: blocks of 4, 12 and 48 */
#define HIST_BUCKETS 16
#define DEFAULT_SLOT MAX_RULES /* rule_hits slot of the default policy */
#define ETH_P_8021Q_ 0x8100
#define ETH_P_8021AD_ 0x88A8

enum sl_algo { ALGO_STATIC = 0, ALGO_MRF = 1 };

enum sl_reason {
	REASON_REDIRECTED = 0,
	REASON_NOT_IPV4 = 1,
	REASON_TRUNCATED = 2,
	REASON_FRAGMENT = 3,
	REASON_VLAN_DEPTH = 4,
	REASON_REDIRECT_FAILED = 5,
	REASONS = 8,
};

struct sl_rule {
	__u32 src_lo, src_span, dst_lo, dst_span;
	__u16 sport_lo, sport_span, dport_lo, dport_span;
	__u8 proto, proto_mask;
	__u8 action;  /* the rule's action code (dependencies compare these) */
	__u8 verdict; /* 0: pass; 1: drop (reject and queue drop, as the nftables chain does) */
};

struct sl_settings {
	__u32 k;         /* logical workers */
	__u32 reta_mask; /* indirection table size - 1 */
	__u32 algo;      /* enum sl_algo */
	__u32 same_cap;  /* same-action id slots per generation */
	__u32 dep_cap;   /* dependency id slots per generation */
};

struct sl_generation {
	__u32 n_rules;
	__u32 default_verdict;
};

/* A logical worker's order and an order label per rule: labels increase front to back, and a
 * move relabels only the moved rule (crates/classify mrf.rs), so a shift is a plain memmove. A
 * position per rule had to be rewritten for the whole shifted block: a scattered store for every
 * entry shifted, about as many as rules compared. */
struct sl_order {
	__u16 order[MAX_RULES];
	__u32 label[MAX_RULES];
};

struct sl_worker_stats {
	__u64 packets;
	__u64 compared;    /* rules compared: the scan plus the same-action checks */
	__u64 same_checks; /* of which same-action checks */
	__u64 moved; /* order entries the moves shifted */
	__u64 relabels; /* times a closed gap between order labels made the order relabelled */
	__u64 hist[HIST_BUCKETS]; /* match position: 0, 1, 2-3, 4-7, ... */
};

struct sl_cpu_stats {
	__u64 packets;
	__u64 compared;
};

struct sl_packet {
	__u32 src, dst;
	__u16 sport, dport;
	__u8 proto;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_settings);
	__uint(max_entries, 1);
} settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} generation SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_generation);
	__uint(max_entries, GENERATIONS);
} generations SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, HASH_SLOTS * 256);
} hash_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, MAX_WORKERS);
} worker_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
	__uint(max_entries, MAX_CPUS);
} cpu_map SEC(".maps");

/* One generation's rules in one value, so a scan looks the table up once per chunk, not per rule. */
struct sl_rule_table {
	struct sl_rule r[MAX_RULES];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_rule_table);
	__uint(max_entries, GENERATIONS);
} rules SEC(".maps");

/* Same-action overlap lists of every rule, compressed: rule u's list is
 * same_ids[gen * same_cap + same_start[gen * (MAX_RULES + 1) + u] ..  (u + 1)]. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, GENERATIONS * (MAX_RULES + 1));
} same_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u16);
	__uint(max_entries, 2); /* set at load: GENERATIONS * same_cap */
} same_ids SEC(".maps");

/* Dependency lists, compressed the same way (deps.rs: the rules each rule must stay behind). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, GENERATIONS * (MAX_RULES + 1));
} dep_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u16);
	__uint(max_entries, 2); /* set at load: GENERATIONS * dep_cap */
} dep_ids SEC(".maps");

/* One order per (generation, logical worker): key gen * k + w. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_order);
	__uint(max_entries, 2); /* set at load: GENERATIONS * k */
} orders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_worker_stats);
	__uint(max_entries, MAX_WORKERS);
} worker_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sl_cpu_stats);
	__uint(max_entries, 1);
} cpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, GENERATIONS * (MAX_RULES + 1));
} rule_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, REASONS);
} dispatch_stats SEC(".maps");

struct vlan_header {
	__be16 tci;
	__be16 proto;
};

static __always_inline void count_reason(__u32 reason)
{
	__u64 *c = bpf_map_lookup_elem(&dispatch_stats, &reason);
	if (c)
		*c += 1;
}

/* Returns -1 when the frame is an IPv4 packet with four transport bytes, else the reason. */
static __always_inline int parse(struct xdp_md *ctx, struct sl_packet *p)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return REASON_TRUNCATED;
	__u16 proto = eth->h_proto;
	void *cur = eth + 1;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		if (proto == bpf_htons(ETH_P_8021Q_) || proto == bpf_htons(ETH_P_8021AD_)) {
			struct vlan_header *v = cur;
			if ((void *)(v + 1) > end)
				return REASON_TRUNCATED;
			proto = v->proto;
			cur = v + 1;
		}
	}
	if (proto == bpf_htons(ETH_P_8021Q_) || proto == bpf_htons(ETH_P_8021AD_))
		return REASON_VLAN_DEPTH;
	if (proto != bpf_htons(ETH_P_IP))
		return REASON_NOT_IPV4;
	struct iphdr *ip = cur;
	if ((void *)(ip + 1) > end)
		return REASON_TRUNCATED;
	if (ip->version != 4 || ip->ihl < 5)
		return REASON_NOT_IPV4;
	/* A later fragment carries no transport header. */
	if (ip->frag_off & bpf_htons(0x1fff))
		return REASON_FRAGMENT;
	__u8 *l4 = (__u8 *)ip + (ip->ihl & 0xf) * 4;
	if ((void *)(l4 + 4) > end)
		return REASON_TRUNCATED;
	p->src = bpf_ntohl(ip->saddr);
	p->dst = bpf_ntohl(ip->daddr);
	p->proto = ip->protocol;
	/* TCP and UDP ports; for other protocols the same four bytes, where nftables' `th` reads. */
	p->sport = ((__u16)l4[0] << 8) | l4[1];
	p->dport = ((__u16)l4[2] << 8) | l4[3];
	return -1;
}

static __always_inline __u32 slot_hash(__u32 slot, __u32 byte)
{
	__u32 key = slot * 256 + (byte & 0xff);
	__u32 *t = bpf_map_lookup_elem(&hash_tables, &key);
	return t ? *t : 0;
}

/* Toeplitz over the selected fields: one table per packet byte slot (unselected: zeros). */
static __always_inline __u32 field_hash(const struct sl_packet *p)
{
	return slot_hash(0, p->src >> 24) ^ slot_hash(1, p->src >> 16) ^ slot_hash(2, p->src >> 8) ^
	       slot_hash(3, p->src) ^ slot_hash(4, p->dst >> 24) ^ slot_hash(5, p->dst >> 16) ^
	       slot_hash(6, p->dst >> 8) ^ slot_hash(7, p->dst) ^ slot_hash(8, p->sport >> 8) ^
	       slot_hash(9, p->sport) ^ slot_hash(10, p->dport >> 8) ^ slot_hash(11, p->dport) ^
	       slot_hash(12, p->proto);
}

static __always_inline __u32 logical_worker(const struct sl_settings *s, const struct sl_packet *p)
{
	__u32 k = s->k ? s->k : 1;
	return (field_hash(p) & s->reta_mask) % k;
}

SEC("xdp")
int sl_dispatch(struct xdp_md *ctx)
{
	struct sl_packet p = {};
	int reason = parse(ctx, &p);
	if (reason >= 0) {
		count_reason(reason);
		return XDP_PASS;
	}
	__u32 zero = 0;
	struct sl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	if (!s)
		return XDP_PASS;
	__u32 w = logical_worker(s, &p);
	__u32 *cpu = bpf_map_lookup_elem(&worker_cpu, &w);
	if (!cpu) {
		count_reason(REASON_REDIRECT_FAILED);
		return XDP_PASS;
	}
	long ret = bpf_redirect_map(&cpu_map, *cpu, XDP_PASS);
	count_reason(ret == XDP_REDIRECT ? REASON_REDIRECTED : REASON_REDIRECT_FAILED);
	return ret;
}

/* 1 when x - lo (wrapping, in the field's width) exceeds span: one subtraction and a shift,
 * no branch, so the verifier sees a single branch per rule instead of one per field. */
static __always_inline __u64 outside(__u64 x_minus_lo, __u64 span)
{
	__u64 d = span - x_minus_lo;
	/* Keeps clang from turning the shift back into a compare and branch. */
	asm volatile("" : "+r"(d));
	return d >> 63;
}

/* 1 when the packet misses the rule, 0 when it matches (a bit, to shift into a block's mask). */
static __always_inline __u64 rule_misses(const struct sl_rule *r, const struct sl_packet *p)
{
	return outside((__u32)(p->src - r->src_lo), r->src_span) | outside((__u32)(p->dst - r->dst_lo), r->dst_span) |
	       outside((__u16)(p->sport - r->sport_lo), r->sport_span) |
	       outside((__u16)(p->dport - r->dport_lo), r->dport_span) |
	       outside((p->proto ^ r->proto) & r->proto_mask, 0);
}

static __always_inline int rule_matches(const struct sl_rule *r, const struct sl_packet *p)
{
	return rule_misses(r, p) == 0;
}

/* Whether some packet matches both rules, branch-free like rule_matches: a field's ranges are
 * disjoint when one ends before the other starts (64-bit sums: no wrap). */
static __always_inline int rules_overlap(const struct sl_rule *a, const struct sl_rule *b)
{
	__u64 miss = outside(0, (__u64)b->src_lo + b->src_span - a->src_lo) |
		     outside(0, (__u64)a->src_lo + a->src_span - b->src_lo) |
		     outside(0, (__u64)b->dst_lo + b->dst_span - a->dst_lo) |
		     outside(0, (__u64)a->dst_lo + a->dst_span - b->dst_lo) |
		     outside(0, (__u64)b->sport_lo + b->sport_span - a->sport_lo) |
		     outside(0, (__u64)a->sport_lo + a->sport_span - b->sport_lo) |
		     outside(0, (__u64)b->dport_lo + b->dport_span - a->dport_lo) |
		     outside(0, (__u64)a->dport_lo + a->dport_span - b->dport_lo) |
		     outside((a->proto ^ b->proto) & a->proto_mask & b->proto_mask, 0);
	return miss == 0;
}

static __always_inline struct sl_rule_table *table_of(__u32 gen)
{
	return bpf_map_lookup_elem(&rules, &gen);
}

static __always_inline struct sl_rule *rule_at(__u32 gen, __u32 id)
{
	struct sl_rule_table *t = table_of(gen);
	return t ? &t->r[id & RULE_MASK] : NULL;
}

struct scan_state {
	struct sl_packet p;
	__u32 gen, order_key, n;
	__u32 stop; /* position where the scan stopped (n: no match) */
	__u32 found;
};

/* 1 when x > 0 (x < 2^63), without a branch. */
static __always_inline __u64 nonzero(__u64 x)
{
	return outside(x, 0);
}

/* The index of the lowest set bit of a non-zero mask, without a branch. */
static __always_inline __u32 lowest_bit(__u64 x)
{
	__u64 v = x & -x;
	/* nonzero() needs values below 2^63: the top bit is tested on v >> 1. */
	return 32 * nonzero((v >> 1) & 0x7fffffff80000000ULL) + 16 * nonzero((v >> 1) & 0x7fff80007fff8000ULL) +
	       8 * nonzero((v >> 1) & 0x7f807f807f807f80ULL) + 4 * nonzero((v >> 1) & 0x7878787878787878ULL) +
	       2 * nonzero((v >> 1) & 0x6666666666666666ULL) + nonzero((v >> 1) & 0x5555555555555555ULL);
}

/* One chunk of a scan, in two passes: a branch-free bit per rule whose addresses match (most
 * rules fail there, and this test is a third of the full one), then the full test of only those
 * rules, front first; the first full match stops the scan. Positions past n leave the block's
 * mask once, not a test per rule, and misses gather as bits, one OR per rule.
 * `ordered` is a compile-time constant: the rule at position i is ord->order[i], or i. */
static __always_inline long scan_block(__u32 base, const int size, struct scan_state *c,
				       struct sl_rule_table *t, struct sl_order *ord, const int ordered)
{
	__u64 left = c->n > base ? c->n - base : 0;
	__u64 valid = left >= size ? (size == 64 ? ~0ULL : (1ULL << size) - 1) : (1ULL << left) - 1;
	__u32 src = c->p.src, dst = c->p.dst;
	__u64 miss = 0;
	for (int j = 0; j < size; j++) {
		__u32 id = ordered ? ord->order[(base + j) & RULE_MASK] : base + j;
		struct sl_rule *r = &t->r[id & RULE_MASK];
		miss |= (outside((__u32)(src - r->src_lo), r->src_span) | outside((__u32)(dst - r->dst_lo), r->dst_span))
			<< j;
	}
	__u64 cand = ~miss & valid;
	/* The full test only where the addresses matched, front first. */
	for (int k = 0; k < size; k++) {
		if (!cand)
			break;
		__u32 i = base + lowest_bit(cand);
		__u32 id = ordered ? ord->order[i & RULE_MASK] : i;
		if (!rule_misses(&t->r[id & RULE_MASK], &c->p)) {
			c->stop = i;
			c->found = id;
			return 1;
		}
		cand &= cand - 1;
	}
	return base + size >= c->n;
}

/* The first PREFIX_RULES positions in growing blocks, without a bpf_loop step: a self-adjusting
 * list finds most packets' rule there, and a whole 64-rule block would cost them 64 tests. */
static __always_inline int scan_prefix(struct scan_state *c, const int ordered)
{
	struct sl_order *ord = NULL;
	if (ordered) {
		ord = bpf_map_lookup_elem(&orders, &c->order_key);
		if (!ord)
			return 1;
	}
	struct sl_rule_table *t = table_of(c->gen);
	if (!t)
		return 1;
	return scan_block(0, 4, c, t, ord, ordered) || scan_block(4, 12, c, t, ord, ordered) ||
	       scan_block(16, 48, c, t, ord, ordered);
}

/* The static list: rules in priority order. */
static long scan_static(__u32 chunk, void *data)
{
	struct scan_state *c = data;
	struct sl_rule_table *t = table_of(c->gen);
	if (!t)
		return 1;
	__u32 base = PREFIX_RULES + chunk * RULE_STEP;
	return scan_block(base, RULE_CHUNK, c, t, NULL, 0) || scan_block(base + RULE_CHUNK, RULE_CHUNK, c, t, NULL, 0);
}

/* A self-adjusting list: rules in the logical worker's current order. */
static long scan_order(__u32 chunk, void *data)
{
	struct scan_state *c = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &c->order_key);
	struct sl_rule_table *t = table_of(c->gen);
	if (!ord || !t)
		return 1;
	__u32 base = PREFIX_RULES + chunk * RULE_STEP;
	return scan_block(base, RULE_CHUNK, c, t, ord, 1) || scan_block(base + RULE_CHUNK, RULE_CHUNK, c, t, ord, 1);
}

struct same_state {
	struct sl_packet p;
	__u32 gen, order_key, base, count, stop_label, best;
	__u64 checks;
};

/* Same-action overlaps of the found rule behind it may be the exact first match (deps.rs):
 * SCAN_CHUNK list entries per call. */
static long same_chunk(__u32 chunk, void *data)
{
	struct same_state *c = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &c->order_key);
	struct sl_rule_table *t = table_of(c->gen);
	if (!ord || !t)
		return 1;
	for (int j = 0; j < SCAN_CHUNK; j++) {
		__u32 i = chunk * SCAN_CHUNK + j;
		if (i >= c->count)
			return 1;
		__u32 key = c->base + i;
		__u16 *v = bpf_map_lookup_elem(&same_ids, &key);
		if (!v)
			return 1;
		__u32 id = *v;
		if (ord->label[id & RULE_MASK] > c->stop_label && id < c->best) {
			c->checks += 1;
			if (rule_matches(&t->r[id & RULE_MASK], &c->p))
				c->best = id;
		}
	}
	return 0;
}

/* MRF with precomputed dependencies (paper Alg. 1; crates/classify mrf.rs): a rule moves to just
 * behind its nearest dependency ahead, which then moves the same way, up to the head. */
struct mrf_state {
	__u32 gen, order_key, dep_cap, n;
	__u32 y, p;             /* the rule moving and its position */
	__u32 base, count;      /* y's dependency list in dep_ids */
	__u32 best_label, best; /* dependency of the largest label so far (best_label 0: none) */
	__u32 back;             /* the backward exact scan: 1 + the dependency's position (0: none) */
	__u32 from;             /* where the search for the exact rule starts */
	__u64 levels, moved, relabels;
};

/* One level's shift (mrf_shift's own, kept small: it is on the stack of a deep call chain). */
struct shift_state {
	__u32 order_key, n, y, p;
	__u32 quads_max, hit_at, relabels;
	__u64 zz;        /* the sought rule in all four u16 lanes (NO_RULE: none) */
	__u64 hit_lanes; /* its lane's flag in the quad at hit_at (0: not met among the quads) */
};

static long dep_max_chunk(__u32 chunk, void *data)
{
	struct mrf_state *m = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	if (!ord)
		return 1;
	for (int j = 0; j < SCAN_CHUNK; j++) {
		__u32 i = chunk * SCAN_CHUNK + j;
		if (i >= m->count)
			return 1;
		__u32 key = m->base + i;
		__u16 *v = bpf_map_lookup_elem(&dep_ids, &key);
		if (!v)
			return 1;
		/* Branch-free maximum: one verifier path per entry, not two. */
		__u64 cand = ord->label[*v & RULE_MASK];
		__u64 take = -outside(cand, m->best_label); /* all ones when cand > best_label */
		m->best_label = (m->best_label & ~take) | (cand & take);
		m->best = (m->best & ~take) | (*v & take);
	}
	return 0;
}

/* More dependencies than rules ahead: scan back from p with the exact dependency test. */
static long dep_back_chunk(__u32 chunk, void *data)
{
	struct mrf_state *m = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	struct sl_rule_table *t = table_of(m->gen);
	if (!ord || !t)
		return 1;
	struct sl_rule *ry = &t->r[m->y & RULE_MASK];
	for (int j = 0; j < SCAN_CHUNK; j++) {
		__u32 off = chunk * SCAN_CHUNK + j + 1;
		if (off > m->p)
			return 1;
		__u32 at = m->p - off;
		__u32 v = ord->order[at & RULE_MASK];
		struct sl_rule *rv = &t->r[v & RULE_MASK];
		if (v < m->y && rv->action != ry->action && rules_overlap(ry, rv)) {
			m->back = at + 1;
			m->best = v;
			return 1;
		}
	}
	return 0;
}

/* order[floor..p) moves back by one, from the end, four entries per 64-bit load and store (x86
 * allows the unaligned access), until the quad that holds the sought rule (zz): the search for
 * the nearest dependency's place and the shift behind it are one pass. The entries left over,
 * fewer than four, are the caller's. */
static long shift_quads(__u32 chunk, void *data)
{
	struct shift_state *m = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	if (!ord)
		return 1;
	/* Nothing that depends on j is stored in m but on the way out: a value the verifier tracks
	 * exactly through the stack would make every iteration a state of its own. */
	for (int j = 0; j < QUAD_CHUNK; j++) {
		__u32 q = chunk * QUAD_CHUNK + j;
		if (q >= m->quads_max)
			return 1;
		/* b + 4 <= p < MAX_RULES; the mask only shows the verifier a bound (the value holds the
		 * labels behind the order, so even a masked b would stay inside it). */
		__u32 b = (m->p - 4 * q - 4) & RULE_MASK;
		__u16 *from = &ord->order[b];
		__u64 v;
		/* One 8-byte load (clang would split an unaligned access into four). */
		asm volatile("%[v] = *(u64 *)(%[from] + 0)" : [v] "=r"(v) : [from] "r"(from) : "memory");
		__u64 x = v ^ m->zz;
		/* A zero u16 lane: the sought rule. Lanes above it may be flagged too (the borrow), but
		 * the rule is in the order once, so the lowest flag is its lane. */
		__u64 lanes = (x - 0x0001000100010001ULL) & ~x & 0x8000800080008000ULL;
		if (lanes) {
			m->hit_at = b;
			m->hit_lanes = lanes;
			return 1;
		}
		asm volatile("*(u64 *)(%[from] + 2) = %[v]" : : [from] "r"(from), [v] "r"(v) : "memory");
	}
	return 0;
}

/* Shifts order[floor..p) back by one, or only the entries behind rule `seek` when it stands in
 * that stretch; returns where the moving rule goes: behind `seek`, else floor. */
static __always_inline __u32 shift_back(struct shift_state *m, __u32 floor, __u64 seek)
{
	m->hit_lanes = 0;
	m->zz = seek * 0x0001000100010001ULL;
	m->quads_max = m->p >= floor ? (m->p - floor) / 4 : 0;
	if (m->quads_max > 0)
		bpf_loop(m->quads_max / QUAD_CHUNK + 1, shift_quads, m, 0);
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	if (!ord)
		return m->p;
	if (m->hit_lanes) {
		/* The entries of that quad behind the sought rule, one by one, last first. */
		__u32 lane = lowest_bit(m->hit_lanes) / 16;
		for (int i = 3; i > 0; i--) {
			if (i <= lane)
				break;
			__u32 at = m->hit_at + i;
			ord->order[(at + 1) & RULE_MASK] = ord->order[at & RULE_MASK];
		}
		return m->hit_at + lane + 1;
	}
	/* Fewer than four entries above floor are left, last first. */
	__u32 top = m->p - 4 * m->quads_max;
	for (int i = 1; i <= 3; i++) {
		if (top < floor + i)
			break;
		__u32 at = top - i;
		__u16 r = ord->order[at & RULE_MASK];
		if (r == seek)
			return at + 1;
		ord->order[(at + 1) & RULE_MASK] = r;
	}
	return floor;
}

/* Spreads the labels evenly again, front to back (a gap between two neighbours has closed). */
static long relabel_chunk(__u32 chunk, void *data)
{
	struct shift_state *m = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	if (!ord)
		return 1;
	for (int j = 0; j < SHIFT_CHUNK; j++) {
		__u32 i = chunk * SHIFT_CHUNK + j;
		if (i >= m->n)
			return 1;
		ord->label[ord->order[i & RULE_MASK] & RULE_MASK] = LABEL_BASE + i * LABEL_GAP;
	}
	return 0;
}

/* Puts the moving rule at target (its old place p is free: the block is shifted) and gives it a
 * label between its new neighbours'. */
static __always_inline void place(struct shift_state *m, __u32 target)
{
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	if (!ord)
		return;
	__u32 behind = ord->label[ord->order[(target + 1) & RULE_MASK] & RULE_MASK];
	__u32 ahead = 0;
	if (target > 0)
		ahead = ord->label[ord->order[(target - 1) & RULE_MASK] & RULE_MASK];
	else if (behind >= 2 * LABEL_GAP)
		ahead = behind - 2 * LABEL_GAP;
	ord->order[target & RULE_MASK] = m->y;
	if (behind - ahead >= 2) {
		ord->label[m->y & RULE_MASK] = ahead + (behind - ahead) / 2;
	} else {
		bpf_loop(m->n / SHIFT_CHUNK + 1, relabel_chunk, m, 0);
		m->relabels += 1;
	}
}

/* The shift and the placing of one level, returns the target. A global function: the verifier
 * checks it once, not once for every way mrf_level reaches it (which made the program too
 * large to verify); bpf_loop needs its state on this frame's stack, hence the copy. */
__noinline __u32 mrf_shift(struct mrf_state *mp, __u32 floor, __u32 seek)
{
	if (!mp)
		return 0;
	struct shift_state m = {.order_key = mp->order_key, .n = mp->n, .y = mp->y, .p = mp->p};
	__u32 target = shift_back(&m, floor, seek);
	if (target < m.p) {
		place(&m, target);
		mp->moved += m.p - target;
		mp->relabels += m.relabels;
	}
	return target;
}

static long mrf_level(__u32 level, void *data)
{
	struct mrf_state *m = data;
	__u32 key = m->gen * (MAX_RULES + 1) + (m->y & RULE_MASK);
	__u32 *first = bpf_map_lookup_elem(&dep_start, &key);
	key += 1;
	__u32 *last = bpf_map_lookup_elem(&dep_start, &key);
	if (!first || !last)
		return 1;
	m->levels += 1;
	m->count = *last > *first ? *last - *first : 0;
	m->base = m->gen * m->dep_cap + *first;
	__u32 floor = 0;
	__u64 seek = NO_RULE;
	if (m->count > 0 && m->count <= m->p) {
		/* The dependency of the largest label is the nearest ahead (all stand ahead). */
		m->best_label = 0;
		bpf_loop((m->count + SCAN_CHUNK - 1) / SCAN_CHUNK, dep_max_chunk, m, 0);
		seek = m->best;
	} else if (m->count > 0) {
		m->back = 0;
		bpf_loop((m->p + SCAN_CHUNK - 1) / SCAN_CHUNK, dep_back_chunk, m, 0);
		floor = m->back;
		if (m->back == 0)
			m->count = 0;
	}
	__u32 target = mrf_shift(m, floor, seek);
	if (m->count == 0 || target == 0)
		return 1;
	m->y = m->best;
	m->p = target - 1;
	return 0;
}

/* Where rule `y` stands at or behind position `from` (the exact rule found behind the scan's
 * stop), into p. */
static long find_chunk(__u32 chunk, void *data)
{
	struct mrf_state *m = data;
	struct sl_order *ord = bpf_map_lookup_elem(&orders, &m->order_key);
	if (!ord)
		return 1;
	for (int j = 0; j < SCAN_CHUNK; j++) {
		__u32 i = m->from + chunk * SCAN_CHUNK + j;
		if (i >= m->n)
			return 1;
		if (ord->order[i & RULE_MASK] == m->y) {
			m->p = i;
			return 1;
		}
	}
	return 0;
}

static __always_inline __u32 bucket(__u32 pos)
{
	__u32 b = 0;
#pragma unroll
	for (int i = 0; i < HIST_BUCKETS - 1; i++)
		if (pos >> i)
			b = i + 1;
	return b;
}

/* Classifies one parsed packet for logical worker w and counts it; returns the verdict. A global
 * function: the verifier checks it once, whatever path the parser took to reach it (otherwise
 * every loop below is verified again for each of the parser's paths). */
__noinline int sl_classify(struct sl_packet *packet, __u32 w)
{
	if (!packet)
		return XDP_PASS;
	struct scan_state scan = {.p = *packet};
	__u32 zero = 0;
	struct sl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	__u32 *genp = bpf_map_lookup_elem(&generation, &zero);
	if (!s || !genp || w >= MAX_WORKERS)
		return XDP_PASS;
	__u32 gen = *genp & 1;
	struct sl_generation *g = bpf_map_lookup_elem(&generations, &gen);
	if (!g)
		return XDP_PASS;
	__u32 k = s->k ? s->k : 1;
	scan.gen = gen;
	scan.order_key = gen * k + w;
	scan.n = g->n_rules < MAX_RULES ? g->n_rules : MAX_RULES;
	scan.stop = scan.n;
	__u32 chunks = scan.n > PREFIX_RULES ? (scan.n - PREFIX_RULES + RULE_STEP - 1) / RULE_STEP : 0;
	if (s->algo == ALGO_MRF) {
		if (!scan_prefix(&scan, 1))
			bpf_loop(chunks, scan_order, &scan, 0);
	} else {
		if (!scan_prefix(&scan, 0))
			bpf_loop(chunks, scan_static, &scan, 0);
	}

	__u64 compared = scan.stop < scan.n ? scan.stop + 1 : scan.n;
	__u32 hit = DEFAULT_SLOT;
	__u32 verdict = g->default_verdict;
	__u64 same_checks = 0, moved = 0, relabels = 0;
	if (scan.stop < scan.n) {
		hit = scan.found;
		if (s->algo == ALGO_MRF) {
			__u32 skey = gen * (MAX_RULES + 1) + (scan.found & RULE_MASK);
			__u32 *first = bpf_map_lookup_elem(&same_start, &skey);
			skey += 1;
			__u32 *last = bpf_map_lookup_elem(&same_start, &skey);
			if (first && last && *last > *first) {
				struct sl_order *ord = bpf_map_lookup_elem(&orders, &scan.order_key);
				struct same_state same = {.p = scan.p, .gen = gen, .order_key = scan.order_key,
							  .base = gen * s->same_cap + *first, .count = *last - *first,
							  .stop_label = ord ? ord->label[scan.found & RULE_MASK] : 0,
							  .best = scan.found};
				bpf_loop((same.count + SCAN_CHUNK - 1) / SCAN_CHUNK, same_chunk, &same, 0);
				hit = same.best;
				same_checks = same.checks;
			}
			struct mrf_state m = {.gen = gen, .order_key = scan.order_key, .dep_cap = s->dep_cap,
					      .n = scan.n, .y = hit, .p = scan.stop, .from = scan.stop};
			if (hit != scan.found)
				bpf_loop((scan.n - scan.stop) / SCAN_CHUNK + 1, find_chunk, &m, 0);
			bpf_loop(MAX_RULES, mrf_level, &m, 0);
			moved = m.moved;
			relabels = m.relabels;
		}
		struct sl_rule *r = rule_at(gen, hit);
		if (r)
			verdict = r->verdict;
	}
	compared += same_checks;

	__u32 hkey = gen * (MAX_RULES + 1) + (hit > DEFAULT_SLOT ? DEFAULT_SLOT : hit);
	__u64 *h = bpf_map_lookup_elem(&rule_hits, &hkey);
	if (h)
		*h += 1;
	struct sl_cpu_stats *cs = bpf_map_lookup_elem(&cpu_stats, &zero);
	if (cs) {
		cs->packets += 1;
		cs->compared += compared;
	}
	struct sl_worker_stats *ws = bpf_map_lookup_elem(&worker_stats, &w);
	if (ws) {
		ws->packets += 1;
		ws->compared += compared;
		ws->same_checks += same_checks;
		ws->moved += moved;
		ws->relabels += relabels;
		__u32 b = bucket(scan.stop);
		if (b < HIST_BUCKETS)
			ws->hist[b] += 1;
	}
	return verdict == 0 ? XDP_PASS : XDP_DROP;
}

SEC("xdp/cpumap")
int sl_worker(struct xdp_md *ctx)
{
	struct sl_packet p = {};
	if (parse(ctx, &p) >= 0)
		return XDP_PASS;
	__u32 zero = 0;
	struct sl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	if (!s)
		return XDP_PASS;
	return sl_classify(&p, logical_worker(s, &p));
}

char _license[] SEC("license") = "Dual MIT/GPL";
