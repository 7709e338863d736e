//! Fuzz targets for every reader (proptest, run by `cargo test`): arbitrary bytes and mutated
//! valid files must give a rule set, a trace or one error line, never a panic.

use proptest::prelude::*;
use superlinear_classify::generate;
use superlinear_classify::rules::{self, nft_writer, ReadOptions, RuleFormat};
use superlinear_classify::trace::{self, binary, pcap, pcapng, TraceFormat};

const RULE_FORMATS: [RuleFormat; 4] = [RuleFormat::Auto, RuleFormat::ClassBench, RuleFormat::Native, RuleFormat::Nft];
const TRACE_FORMATS: [TraceFormat; 5] =
    [TraceFormat::Auto, TraceFormat::ClassBench, TraceFormat::Pcap, TraceFormat::PcapNg, TraceFormat::Binary];

fn valid_rule_texts() -> Vec<String> {
    let set = generate::rule_size_set(5);
    vec![
        rules::to_native(&set),
        rules::to_classbench(&set).unwrap(),
        nft_writer::to_nft(&set, &Default::default()).unwrap(),
    ]
}

fn valid_traces() -> Vec<Vec<u8>> {
    let ps = generate::SyntheticSpec::rule_size(4).trace(6, 1).unwrap();
    vec![binary::write(&ps), pcap::write(&ps), pcapng::write(&ps), trace::classbench::to_text(&ps, None).into_bytes()]
}

fn check_rules(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for f in RULE_FORMATS {
        let opts = ReadOptions { format: f, ..Default::default() };
        if let Err(e) = rules::parse_rules(&text, "fuzz", &opts) {
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz:") && !msg.contains('\n'), "{msg}");
        }
    }
}

fn check_trace(bytes: &[u8]) {
    for f in TRACE_FORMATS {
        if let Err(e) = trace::parse_trace(bytes, "fuzz", f) {
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz") && !msg.contains('\n'), "{msg}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn rule_readers_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check_rules(&bytes);
    }

    #[test]
    fn rule_readers_never_panic_on_mutated_files(which in 0usize..3, at in any::<prop::sample::Index>(),
                                                 cut in any::<prop::sample::Index>(), b in any::<u8>()) {
        let mut t = valid_rule_texts()[which].clone().into_bytes();
        let i = at.index(t.len());
        t[i] = b;
        let keep = cut.index(t.len() + 1);
        check_rules(&t[..keep]);
    }

    #[test]
    fn trace_readers_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check_trace(&bytes);
    }

    #[test]
    fn trace_readers_never_panic_on_mutated_files(which in 0usize..4, at in any::<prop::sample::Index>(),
                                                  cut in any::<prop::sample::Index>(), b in any::<u8>()) {
        let mut t = valid_traces()[which].clone();
        let i = at.index(t.len());
        t[i] = b;
        let keep = cut.index(t.len() + 1);
        check_trace(&t[..keep]);
    }
}

#[test]
fn valid_files_round_trip() {
    let set = generate::rule_size_set(5);
    for (text, f) in valid_rule_texts().iter().zip([RuleFormat::Native, RuleFormat::ClassBench, RuleFormat::Nft]) {
        assert_eq!(RuleFormat::detect(text), f);
        let opts = ReadOptions {
            actions: rules::ActionPolicy::AllAccept,
            default_action: set.default_action,
            ..Default::default()
        };
        let back = rules::parse_rules(text, "x", &opts).unwrap();
        assert_eq!(back.rules, set.rules);
    }
    let ps = generate::SyntheticSpec::rule_size(4).trace(6, 1).unwrap();
    for bytes in valid_traces() {
        assert_eq!(trace::parse_trace(&bytes, "x", TraceFormat::Auto).unwrap().packets, ps);
    }
}
