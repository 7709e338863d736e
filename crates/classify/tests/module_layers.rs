//! The crate's modules form layers, each using only the ones below it, so the module graph has
//! no cycle: packet → rules (and trace) → generate → compact table → dependencies → snapshot →
//! classifiers → dispatch → run → predict → the boundary (config, record).
//!
//! Reads every file under `src/`, strips comments and the contents of string and char
//! literals, and collects every `crate::…` and `super::…` path (in `use` lines and inline,
//! grouped `crate::{a::X, b::Y}` included, inside `#[cfg(test)] mod tests` too), maps the file
//! and the path to their top-level modules and checks two things: no module uses one of its
//! own layer or above, and the graph of top-level modules has no cycle. Failures name the
//! offending edge (file, line and the path as written).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the bottom up; a module may use only modules of a lower layer.
const LAYERS: &[&[&str]] = &[
    &["packet"],
    &["rules", "trace"],
    &["generate"],
    &["table"],
    &["deps"],
    &["snapshot"],
    &["classifier"],
    &["dispatch"],
    &["run"],
    &["predict", "footprint"],
    // The boundary: wire-form configs and result records of every layer below.
    &["config", "record"],
];

/// One use of a top-level module by another.
#[derive(Clone, Debug)]
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
    path: String,
}

/// Source code with comments removed and the contents of string and char literals blanked
/// (line breaks kept, so line numbers still hold).
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        out.push(blank(c[i]));
                        i += 1;
                    }
                }
            }
            'r' if (c.get(i + 1) == Some(&'"') || c.get(i + 1) == Some(&'#'))
                && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                out.push('"');
                j += 1;
                while j < c.len() {
                    if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    out.push(blank(c[j]));
                    j += 1;
                }
                out.push('"');
                i = j;
            }
            '"' => {
                out.push('"');
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        out.push(' ');
                        i += 1;
                    }
                    if i < c.len() {
                        out.push(blank(c[i]));
                        i += 1;
                    }
                }
                out.push('"');
                i += 1;
            }
            '\'' => {
                // A char literal ('x', '\n', '\u{..}'); otherwise a lifetime or label.
                let end = if c.get(i + 1) == Some(&'\\') {
                    (i + 2..c.len().min(i + 12)).find(|&j| c[j] == '\'')
                } else if c.get(i + 2) == Some(&'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(e) => {
                        out.push_str("' '");
                        i = e + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// The identifier starting at `i` (after spaces), and where it ends.
fn ident_at(c: &[char], mut i: usize) -> (String, usize) {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    let start = i;
    while i < c.len() && is_ident(c[i]) {
        i += 1;
    }
    (c[start..i].iter().collect(), i)
}

/// Whether `::` follows position `i` (after spaces); returns the position after it.
fn colons_at(c: &[char], mut i: usize) -> Option<usize> {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    (c.get(i) == Some(&':') && c.get(i + 1) == Some(&':')).then_some(i + 2)
}

/// The first segments named after `::` at `i`: one identifier, or each item of a `{…}` group.
fn first_segments(c: &[char], mut i: usize) -> Vec<String> {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    if c.get(i) != Some(&'{') {
        let (name, _) = ident_at(c, i);
        return vec![name];
    }
    let (mut depth, mut item_start, mut out) = (0, true, Vec::new());
    while i < c.len() {
        match c[i] {
            '{' => {
                depth += 1;
                item_start = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => item_start = true,
            ch if item_start && depth == 1 && is_ident(ch) => {
                let (name, end) = ident_at(c, i);
                out.push(name);
                item_start = false;
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Every `crate::`/`super::` path of one file: (line, module path it resolves to from the
/// crate root, up to and including its first segment after the root or module, as written).
/// `module` is the file's module path (`["dispatch", "rss"]` for `src/dispatch/rss.rs`).
fn paths_in(src: &str, module: &[String]) -> Vec<(usize, Vec<String>, String)> {
    let code = code_only(src);
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    // Inline modules (`mod tests { … }`) as (name, brace depth inside them).
    let mut inline: Vec<(String, i32)> = Vec::new();
    let (mut depth, mut line, mut i) = (0i32, 1usize, 0usize);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
        }
        if ch == '{' {
            depth += 1;
        }
        if ch == '}' {
            depth -= 1;
            while inline.last().is_some_and(|(_, d)| *d > depth) {
                inline.pop();
            }
        }
        if !is_ident(ch) || (i > 0 && (is_ident(c[i - 1]) || c[i - 1] == '$')) {
            i += 1;
            continue;
        }
        let (word, end) = ident_at(&c, i);
        match word.as_str() {
            "mod" => {
                let (name, after) = ident_at(&c, end);
                let mut j = after;
                while j < c.len() && c[j].is_whitespace() {
                    j += 1;
                }
                if c.get(j) == Some(&'{') {
                    inline.push((name, depth + 1));
                }
            }
            "crate" | "super" => {
                if let Some(mut j) = colons_at(&c, end) {
                    let mut at: Vec<String> = module.to_vec();
                    at.extend(inline.iter().map(|(n, _)| n.clone()));
                    let mut written = format!("{word}::");
                    if word == "crate" {
                        at.clear();
                    } else {
                        at.pop();
                        loop {
                            let (next, after) = ident_at(&c, j);
                            match (next.as_str(), colons_at(&c, after)) {
                                ("super", Some(k)) => {
                                    at.pop();
                                    written.push_str("super::");
                                    j = k;
                                }
                                _ => break,
                            }
                        }
                    }
                    for seg in first_segments(&c, j) {
                        let mut resolved = at.clone();
                        resolved.push(seg.clone());
                        out.push((line, resolved, format!("{written}{seg}")));
                    }
                    // Past the `super::super::` chain, so its later links are not read as paths.
                    line += c[end..j].iter().filter(|&&ch| ch == '\n').count();
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i = end;
    }
    out
}

/// Top-level module names declared in `lib.rs`, and the crate-root re-exports it makes
/// (name → module it comes from).
fn root_of(lib: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let code = code_only(lib);
    let mut modules = BTreeSet::new();
    let mut reexports = BTreeMap::new();
    for stmt in code.split(';') {
        let s = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(m) = s.strip_prefix("pub mod ") {
            modules.insert(m.trim().to_string());
        } else if let Some(rest) = s.strip_prefix("pub use ") {
            let module = rest.split("::").next().unwrap_or("").trim().to_string();
            let items = rest.rsplit("::").next().unwrap_or("");
            for name in items.split(|ch: char| !is_ident(ch)).filter(|n| !n.is_empty()) {
                reexports.insert(name.to_string(), module.clone());
            }
        }
    }
    (modules, reexports)
}

/// The module path of a file below `src/` (`dispatch/mod.rs` → `["dispatch"]`).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// Every edge between different top-level modules of the given files (relative path, text);
/// `lib.rs` among them gives the modules and the root re-exports. An error names a path that
/// resolves to nothing known.
fn edges(files: &[(PathBuf, String)]) -> Result<(BTreeSet<String>, Vec<Edge>), String> {
    let lib = files.iter().find(|(p, _)| p == Path::new("lib.rs")).ok_or("no lib.rs")?;
    let (modules, reexports) = root_of(&lib.1);
    let mut out = Vec::new();
    for (rel, text) in files {
        let module = module_path(rel);
        let Some(from) = module.first() else { continue };
        for (line, resolved, written) in paths_in(text, &module) {
            let Some(first) = resolved.first() else {
                return Err(format!("{}:{line}: `{written}` goes above the crate root", rel.display()));
            };
            let to = if modules.contains(first) {
                first.clone()
            } else if let Some(m) = reexports.get(first) {
                if !modules.contains(m) {
                    continue; // re-exported from another crate
                }
                m.clone()
            } else {
                return Err(format!("{}:{line}: cannot resolve `{written}`", rel.display()));
            };
            if &to != from {
                out.push(Edge { from: from.clone(), to, file: rel.display().to_string(), line, path: written });
            }
        }
    }
    Ok((modules, out))
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// A cycle in the module graph, as a path `a → b → … → a`.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|s| s == m).unwrap_or(0);
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The strongly connected components of more than one module (each holds a cycle).
fn cyclic_components(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![from.to_string()]);
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|n| (n, reach(n))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (n, r) in &reaches {
        let component: BTreeSet<String> = r.iter().filter(|m| reaches[m].contains(n.as_str())).cloned().collect();
        if component.len() > 1 && !out.contains(&component) {
            out.push(component);
        }
    }
    out
}

/// Every layering problem of the given files, one line each (empty: layered and acyclic), and
/// the module graph.
fn problems(files: &[(PathBuf, String)]) -> (Vec<String>, BTreeMap<String, BTreeSet<String>>) {
    let (modules, edges) = match edges(files) {
        Ok(x) => x,
        Err(e) => return (vec![e], BTreeMap::new()),
    };
    let mut out = Vec::new();
    for m in &modules {
        if layer_of(m).is_none() {
            out.push(format!("module `{m}` is in no layer: add it to LAYERS"));
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for e in &edges {
        graph.entry(e.from.clone()).or_default().insert(e.to.clone());
        if let (Some(a), Some(b)) = (layer_of(&e.from), layer_of(&e.to)) {
            if b >= a {
                out.push(format!(
                    "{} → {}: src/{}:{} uses `{}`, and `{}` is not in a lower layer than `{}`",
                    e.from, e.to, e.file, e.line, e.path, e.to, e.from
                ));
            }
        }
    }
    for component in cyclic_components(&graph) {
        let sub: BTreeMap<String, BTreeSet<String>> =
            component.iter().map(|m| (m.clone(), graph[m].intersection(&component).cloned().collect())).collect();
        let cycle = find_cycle(&sub).unwrap_or_default();
        let witness: Vec<String> = cycle
            .windows(2)
            .filter_map(|w| edges.iter().find(|e| e.from == w[0] && e.to == w[1]))
            .map(|e| format!("src/{}:{} `{}`", e.file, e.line, e.path))
            .collect();
        let members: Vec<String> = component.into_iter().collect();
        out.push(format!(
            "module cycle {} ({}); modules on a cycle: {}",
            cycle.join(" → "),
            witness.join(", "),
            members.join(", ")
        ));
    }
    (out, graph)
}

fn read_tree(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir.join(rel)).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let r = rel.join(p.file_name().unwrap());
        if p.is_dir() {
            read_tree(dir, &r, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push((r, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

#[test]
fn classify_modules_are_layered_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_tree(&src, Path::new(""), &mut files);
    assert!(files.len() > 20, "read {} files from {}", files.len(), src.display());
    let (problems, graph) = problems(&files);
    for (m, uses) in &graph {
        println!("{m} → {}", uses.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
    // The checker saw the layers' real uses (guards against a parser that finds nothing).
    assert!(graph["run"].contains("dispatch") && graph["dispatch"].contains("classifier"));
    assert!(graph["snapshot"].contains("deps") && graph["deps"].contains("table"));
}

fn fake(files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect()
}

#[test]
fn the_checker_finds_upward_uses_and_cycles() {
    let lib = "pub mod packet;\npub mod rules;\npub mod table;\npub mod deps;\n\
               pub use table::{CompactRule, Snapshot};\npub use superlinear_core::Error;";
    // Grouped paths, `super::super::` out of an inline test module, and comments/strings ignored.
    let clean = fake(&[
        ("lib.rs", lib),
        ("packet.rs", "// crate::deps::X in a comment\nconst S: &str = \"crate::table\";\n"),
        ("rules/mod.rs", "use crate::{packet::Packet, Error};\nmod x { fn f() { let c = '{'; } }"),
        ("table.rs", "use crate::rules::Rule;\n#[cfg(test)]\nmod tests {\n    use super::super::packet::P;\n}"),
        ("deps.rs", "use crate::table::CompactRule;"),
    ]);
    let (p, graph) = problems(&clean);
    assert!(p.is_empty(), "{p:?}");
    assert_eq!(graph["table"], BTreeSet::from(["packet".to_string(), "rules".to_string()]));
    assert_eq!(graph["rules"], BTreeSet::from(["packet".to_string()]));
    assert!(graph["packet"].is_empty());

    // A test module of `table` using `deps` through a root re-export-free path: upward and a cycle.
    let mut broken = clean.clone();
    broken[3].1.push_str("\nmod more { #[test] fn t() { let _ = crate::{deps::DependencyGraph::default}; } }");
    let (p, _) = problems(&broken);
    assert!(p.iter().any(|l| l.starts_with("table → deps: src/table.rs:")), "{p:?}");
    assert!(p.iter().any(|l| l.starts_with("module cycle deps → table → deps")), "{p:?}");

    // A root re-export resolves to its module.
    let mut via_root = clean.clone();
    via_root[2].1.push_str("\nfn g(_: crate::Snapshot) {}");
    let (p, _) = problems(&via_root);
    assert!(p.iter().any(|l| l.starts_with("rules → table:")), "{p:?}");

    // An unknown module is reported, not skipped.
    let mut unknown = clean;
    unknown.push((PathBuf::from("lib.rs"), format!("{lib}\npub mod extra;")));
    unknown.remove(0);
    let (p, _) = problems(&unknown);
    assert!(p.iter().any(|l| l.contains("`extra` is in no layer")), "{p:?}");
}
