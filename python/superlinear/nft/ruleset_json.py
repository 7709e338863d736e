"""Reading ``nft -j -n list table`` back: the benchmark chain's rules as our rule rows (for the
round-trip check) and every counter (for the exact check).

A rule row is the tuple the bindings' ``NftWorkload.rule_rows`` gives, cut to the match and the
verdict: ``(src_lo, src_hi, dst_lo, dst_hi, sport_lo, sport_hi, dport_lo, dport_hi, proto_value,
proto_mask, action)``, addresses as 32-bit integers. Only what the benchmark writes is
understood (``ip saddr|daddr|protocol``, ``meta l4proto``, ``tcp|udp|th sport|dport``, ``counter``,
``accept``/``drop``); anything else is an error naming the rule, never silently dropped.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any

from superlinear.common.errors import SuperlinearError

RuleRow = tuple[int, int, int, int, int, int, int, int, int, int, str]
ANY_ADDR = (0, 0xFFFF_FFFF)
ANY_PORT = (0, 0xFFFF)
L4_PROTO = {"tcp": 6, "udp": 17}


@dataclass
class ChainListing:
    """One chain of a listed table."""

    policy: str
    rows: list[RuleRow] = field(default_factory=list)
    #: Packets counted by each rule with a verdict, in chain order.
    counters: list[int] = field(default_factory=list)
    #: Packets counted by the final rule-less ``counter`` (the default policy's packets).
    default_count: int = 0


@dataclass
class TableListing:
    """The benchmark table: the classify chain, and the guard's and sink's counters."""

    classify: ChainListing
    foreign: int = 0
    sink: int = 0


def _addr(v: Any) -> tuple[int, int]:
    if isinstance(v, str):
        a = int(ipaddress.IPv4Address(v))
        return a, a
    if isinstance(v, dict) and "prefix" in v:
        net = ipaddress.IPv4Network(f"{v['prefix']['addr']}/{v['prefix']['len']}", strict=False)
        return int(net.network_address), int(net.broadcast_address)
    if isinstance(v, dict) and "range" in v:
        lo, hi = v["range"]
        return int(ipaddress.IPv4Address(lo)), int(ipaddress.IPv4Address(hi))
    raise ValueError(f"address {v!r}")


def _port(v: Any) -> tuple[int, int]:
    if isinstance(v, int):
        return v, v
    if isinstance(v, dict) and "range" in v:
        lo, hi = v["range"]
        return int(lo), int(hi)
    raise ValueError(f"port {v!r}")


def _proto(v: Any) -> int:
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        if v.isdigit():
            return int(v)
        try:
            return socket.getprotobyname(v)
        except OSError:
            pass
    raise ValueError(f"protocol {v!r}")


def parse_rule(expr: list[dict[str, Any]]) -> tuple[RuleRow | None, int]:
    """One rule's match and verdict (``None`` for a rule without a verdict) and its counter."""
    src, dst, sport, dport = ANY_ADDR, ANY_ADDR, ANY_PORT, ANY_PORT
    proto: int | None = None
    verdict: str | None = None
    packets = 0

    def set_proto(p: int) -> None:
        nonlocal proto
        if proto is not None and proto != p:
            raise ValueError(f"conflicting protocols {proto} and {p}")
        proto = p

    for stmt in expr:
        if "match" in stmt:
            m = stmt["match"]
            if m.get("op") not in ("==", "in"):
                raise ValueError(f"operator {m.get('op')!r}")
            left, right = m["left"], m["right"]
            if "payload" in left:
                pl = left["payload"]
                what = (pl.get("protocol"), pl.get("field"))
                if what == ("ip", "saddr"):
                    src = _addr(right)
                elif what == ("ip", "daddr"):
                    dst = _addr(right)
                elif what == ("ip", "protocol"):
                    set_proto(_proto(right))
                elif what[0] in ("tcp", "udp", "th") and what[1] in ("sport", "dport"):
                    if what[0] in L4_PROTO:
                        set_proto(L4_PROTO[str(what[0])])
                    if what[1] == "sport":
                        sport = _port(right)
                    else:
                        dport = _port(right)
                else:
                    raise ValueError(f"payload match {what[0]} {what[1]}")
            elif left.get("meta", {}).get("key") == "l4proto":
                set_proto(_proto(right))
            else:
                raise ValueError(f"match on {left!r}")
        elif "counter" in stmt:
            packets = int((stmt["counter"] or {}).get("packets", 0))
        elif "accept" in stmt or "drop" in stmt:
            verdict = "accept" if "accept" in stmt else "drop"
        else:
            raise ValueError(f"statement {next(iter(stmt))!r}")
    if verdict is None:
        if (src, dst, sport, dport, proto) != (ANY_ADDR, ANY_ADDR, ANY_PORT, ANY_PORT, None):
            raise ValueError("a rule with matches but no verdict")
        return None, packets
    pv, pm = (proto, 0xFF) if proto is not None else (0, 0)
    return (*src, *dst, *sport, *dport, pv, pm, verdict), packets


def _chain_rules(doc: dict[str, Any], table: str, chain: str) -> list[dict[str, Any]]:
    return [o["rule"] for o in doc.get("nftables", [])
            if "rule" in o and o["rule"].get("table") == table and o["rule"].get("chain") == chain]


def _chain_policy(doc: dict[str, Any], table: str, chain: str) -> str | None:
    for o in doc.get("nftables", []):
        c = o.get("chain")
        if c and c.get("table") == table and c.get("name") == chain:
            return str(c.get("policy", "accept"))
    return None


def parse_table(doc: dict[str, Any], table: str) -> TableListing:
    """The benchmark table of an ``nft -j list`` document."""
    policy = _chain_policy(doc, table, "classify")
    if policy is None:
        raise SuperlinearError(f"nft listing has no chain 'classify' in table '{table}'")
    listing = ChainListing(policy=policy)
    rules = _chain_rules(doc, table, "classify")
    for i, r in enumerate(rules):
        try:
            row, packets = parse_rule(r.get("expr", []))
        except (ValueError, KeyError, TypeError) as e:
            raise SuperlinearError(f"nft listing, chain classify, rule {i + 1} (handle {r.get('handle')}): "
                                   f"unexpected {e}") from None
        if row is None:
            if i != len(rules) - 1:
                raise SuperlinearError(f"nft listing: rule-less counter at position {i + 1}, not last")
            listing.default_count = packets
        else:
            listing.rows.append(row)
            listing.counters.append(packets)
    if not rules or parse_rule(rules[-1].get("expr", []))[0] is not None:
        raise SuperlinearError("nft listing: the classify chain does not end with the default counter")
    out = TableListing(classify=listing)
    for chain in ("guard", "sink"):
        total = 0
        for r in _chain_rules(doc, table, chain):
            for stmt in r.get("expr", []):
                if "counter" in stmt:
                    total += int((stmt["counter"] or {}).get("packets", 0))
        setattr(out, "foreign" if chain == "guard" else "sink", total)
    return out


def describe_row(row: RuleRow) -> str:
    """A rule row in the native rule syntax (for mismatch reports)."""
    def addr(lo: int, hi: int) -> str:
        if (lo, hi) == ANY_ADDR:
            return "any"
        nets = list(ipaddress.summarize_address_range(ipaddress.IPv4Address(lo), ipaddress.IPv4Address(hi)))
        return str(nets[0]) if len(nets) == 1 else f"{ipaddress.IPv4Address(lo)}-{ipaddress.IPv4Address(hi)}"

    def port(lo: int, hi: int) -> str:
        return "any" if (lo, hi) == ANY_PORT else (str(lo) if lo == hi else f"{lo}-{hi}")

    proto = "any" if row[9] == 0 else str(row[8])
    return (f"{row[10]} src {addr(row[0], row[1])} dst {addr(row[2], row[3])} sport {port(row[4], row[5])} "
            f"dport {port(row[6], row[7])} proto {proto}")


def compare_rows(want: list[RuleRow], got: list[RuleRow], limit: int = 20) -> list[str]:
    """Rule-by-rule differences between the input rules and the listed ones (at most ``limit``)."""
    diffs = []
    if len(want) != len(got):
        diffs.append(f"{len(want)} rules in, {len(got)} listed back")
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            diffs.append(f"rule {i + 1}: in {describe_row(w)!r}, listed {describe_row(g)!r}")
            if len(diffs) >= limit:
                break
    return diffs
