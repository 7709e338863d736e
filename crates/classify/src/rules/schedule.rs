//! Rule update schedules: the rule changes a run applies while packets flow (paper §4.1), as
//! `classify --updates FILE` reads them. One change per line, at a packet index of the trace
//! (the change takes effect before that packet; lines in packet order):
//!
//! ```text
//! # AT_PACKET  CHANGE
//! 1000 insert 1 drop src 10.1.0.0/16      # the new rule becomes rule 1 (1-based)
//! 2000 delete 3                            # rule 3 of the set in force goes
//! 3000 replace other-rules.txt             # a whole rule file (any format; relative to this file)
//! ```
//!
//! `insert POS RULE` takes a rule in the native format (`ACTION [src P] [dst P] [sport R]
//! [dport R] [proto P]`) at position 1 to n + 1; `delete INDEX` takes 1 to n, of the rule set
//! in force at that line. Every mistake is reported as `FILE:LINE: problem`.

use super::{native, read_rules, ReadOptions, RuleSet};
use superlinear_core::Error;

/// One change of a rule set.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Insert a rule at a 0-based position.
    Insert { at: usize, rule: super::Rule },
    /// Delete the rule at a 0-based index.
    Delete { index: usize },
    /// Replace the whole rule set.
    Replace { rules: RuleSet, path: String },
}

/// One scheduled change, with the rule set it leaves in force.
#[derive(Clone, Debug)]
pub struct Update {
    /// The packet (0-based index into the trace) before which it takes effect.
    pub packet: usize,
    /// Line of the schedule file (1-based).
    pub line: usize,
    /// What changes.
    pub change: Change,
    /// The rule set in force from `packet` on.
    pub rules: RuleSet,
}

impl Change {
    /// A short description (`insert at 1`, `delete 3`, `replace FILE`), positions 1-based.
    pub fn describe(&self) -> String {
        match self {
            Change::Insert { at, .. } => format!("insert at {}", at + 1),
            Change::Delete { index } => format!("delete {}", index + 1),
            Change::Replace { path, .. } => format!("replace {path}"),
        }
    }
}

/// Why an update at packet `at` is refused in a run of `packets` packets, if it is: an update
/// takes effect before its packet, so one at `packets` or later would never be applied.
pub fn past_the_run(at: usize, packets: usize) -> Option<String> {
    (at >= packets).then(|| {
        format!(
            "an update at packet {at}, but the run's packets are 0 to {} (--packets N replays the trace to N; or \
             give an earlier packet)",
            packets.saturating_sub(1)
        )
    })
}

/// Reads a schedule file and applies its changes, in order, to `initial`: the rule set in force
/// after each. `opts` reads the files of `replace` lines (relative to the schedule's folder).
pub fn read_schedule(path: &str, initial: &RuleSet, opts: &ReadOptions) -> Result<Vec<Update>, Error> {
    let text = superlinear_core::input::read_text(path)?;
    let folder = std::path::Path::new(path).parent().map(|p| p.to_path_buf()).unwrap_or_default();
    parse_schedule(&text, path, initial, |file| {
        let full = folder.join(file);
        read_rules(&full.to_string_lossy(), opts)
    })
}

/// Parses schedule text (`source` names it in errors); `read` loads the rule file of a
/// `replace` line.
pub fn parse_schedule(
    text: &str,
    source: &str,
    initial: &RuleSet,
    mut read: impl FnMut(&str) -> Result<RuleSet, Error>,
) -> Result<Vec<Update>, Error> {
    let mut out: Vec<Update> = Vec::new();
    let mut current = initial.clone();
    let mut last_packet = 0usize;
    for (i, line) in text.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let err = |m: String| Error::input(source, Some(i + 1), m);
        let (at_text, after) = first_word(t);
        let packet: usize = at_text
            .parse()
            .map_err(|_| err(format!("'{at_text}' is not a packet index (a whole number ≥ 0 starts each line)")))?;
        if packet < last_packet {
            return Err(err(format!("packet {packet} comes before packet {last_packet} of an earlier line")));
        }
        last_packet = packet;
        let (verb, rest) = first_word(after);
        let n = current.len();
        let change = match verb {
            "insert" => {
                let (pos_text, rule_text) = first_word(rest);
                let pos = position(pos_text, n + 1).map_err(|m| err(format!("insert: {m}")))?;
                if rule_text.is_empty() {
                    return Err(err("insert POS RULE: the rule is missing".into()));
                }
                let rule = native::parse_line(rule_text).map_err(|m| err(format!("insert: {m}")))?;
                rule.validate().map_err(|m| err(format!("insert: {m}")))?;
                Change::Insert { at: pos, rule }
            }
            "delete" => {
                if n == 0 {
                    return Err(err("delete: the rule set in force has no rules".into()));
                }
                if rest.split_whitespace().count() != 1 {
                    return Err(err("delete INDEX: give one rule index".into()));
                }
                let index = position(rest, n).map_err(|m| err(format!("delete: {m}")))?;
                if n == 1 {
                    return Err(err("delete: it would leave no rules (replace the rule set instead)".into()));
                }
                Change::Delete { index }
            }
            "replace" => {
                if rest.is_empty() {
                    return Err(err("replace FILE: the rule file is missing".into()));
                }
                let rules = read(rest).map_err(|e| err(format!("replace {rest}: {e}")))?;
                if rules.is_empty() {
                    return Err(err(format!("replace {rest}: no rules")));
                }
                Change::Replace { rules, path: rest.to_string() }
            }
            "" => return Err(err("a change is missing after the packet index (insert, delete or replace)".into())),
            other => return Err(err(format!("unknown change '{other}' (insert, delete, replace)"))),
        };
        current = match &change {
            Change::Insert { at, rule } => {
                let mut next = current.clone();
                next.rules.insert(*at, *rule);
                next
            }
            Change::Delete { index } => {
                let mut next = current.clone();
                next.rules.remove(*index);
                next
            }
            Change::Replace { rules, .. } => rules.clone(),
        };
        out.push(Update { packet, line: i + 1, change, rules: current.clone() });
    }
    if out.is_empty() {
        return Err(Error::input(source, None, "no updates (every line is empty or a comment)"));
    }
    Ok(out)
}

/// The first word of `text` and the rest, each without the white space around it: words may be
/// parted by any run of spaces and tabs (`100  delete 1` read an empty change).
fn first_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.find(char::is_whitespace) {
        Some(i) => (&text[..i], text[i..].trim_start()),
        None => (text, ""),
    }
}

/// A 1-based position of at most `max`, as a 0-based index.
fn position(text: &str, max: usize) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(p) if (1..=max).contains(&p) => Ok(p - 1),
        Ok(p) => Err(format!("position {p} is outside 1..{max} (the rule set in force there)")),
        Err(_) => Err(format!("'{text}' is not a rule position (1-based)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Action, Rule};

    fn set(n: usize) -> RuleSet {
        RuleSet::new((0..n).map(|_| Rule::any(Action::Accept)).collect(), Action::Drop)
    }

    fn no_files(_: &str) -> Result<RuleSet, Error> {
        Ok(set(2))
    }

    #[test]
    fn applies_changes_in_order() {
        let text = "# comment\n10 insert 1 drop proto tcp\n\n20 delete 3\n30 replace x.txt # whole set\n";
        let u = parse_schedule(text, "u.txt", &set(3), no_files).unwrap();
        assert_eq!(u.len(), 3);
        assert_eq!((u[0].packet, u[0].line, u[0].rules.len()), (10, 2, 4));
        assert_eq!(u[0].rules.rules[0].action, Action::Drop);
        assert_eq!((u[1].packet, u[1].rules.len()), (20, 3));
        assert_eq!(u[1].change.describe(), "delete 3");
        assert_eq!((u[2].packet, u[2].rules.len()), (30, 2));
        // Words parted by runs of spaces and tabs, as by one space.
        let spaced = parse_schedule("10  insert \t 1   drop proto tcp\n20\t\tdelete  3\n", "u.txt", &set(3), no_files);
        let spaced = spaced.unwrap();
        assert_eq!((spaced[0].rules.len(), spaced[1].change.describe()), (4, "delete 3".to_string()));
    }

    #[test]
    fn mistakes_name_the_line() {
        for (text, want) in [
            ("x insert 1 drop", "u.txt:1: 'x' is not a packet index"),
            ("5 delete 1\n3 delete 1", "u.txt:2: packet 3 comes before packet 5"),
            ("5 insert 9 drop", "u.txt:1: insert: position 9 is outside 1..4"),
            ("5 insert 1 drop src 300.0.0.0/8", "u.txt:1: insert:"),
            ("5 insert 1", "u.txt:1: insert POS RULE: the rule is missing"),
            ("5 delete 0", "u.txt:1: delete: position 0 is outside 1..3"),
            ("5 delete 1 2", "u.txt:1: delete INDEX: give one rule index"),
            ("5 frobnicate 1", "u.txt:1: unknown change 'frobnicate'"),
            ("5", "u.txt:1: a change is missing"),
            ("5 replace", "u.txt:1: replace FILE: the rule file is missing"),
        ] {
            let e = parse_schedule(text, "u.txt", &set(3), no_files).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        let one = set(1);
        let e = parse_schedule("1 delete 1", "u.txt", &one, no_files).unwrap_err().to_string();
        assert!(e.contains("leave no rules"), "{e}");
    }

    #[test]
    fn schedule_files_are_read_the_shared_way() {
        let p = superlinear_core::input::scratch_file("schedule", "u.txt", b"\xEF\xBB\xBF10 delete 1\n");
        let u = read_schedule(&p, &set(3), &ReadOptions::default()).unwrap();
        assert_eq!((u[0].packet, u[0].rules.len()), (10, 2));
        std::fs::write(&p, b"10 replace /dev/zero\n").unwrap();
        let e = read_schedule(&p, &set(3), &ReadOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{p}:1: replace /dev/zero: /dev/zero: not a regular file")), "{e}");
    }
}
