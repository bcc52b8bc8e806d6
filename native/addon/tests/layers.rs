//! The addon's modules depend on each other in one direction only: no module reaches, through
//! any chain of `crate::`/`super::` paths, back to itself (checked per file and per top-level
//! module), and each top-level module uses only those below it in `LAYERS`, the order
//! `src/lib.rs` describes. Read from the sources, so it needs nothing built.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top-level modules from the bottom up: each may use only the ones before it.
const LAYERS: &[&[&str]] = &[
    // Below everything: libuv's functions, the engine's events for JavaScript, reused buffers.
    &["uv", "events", "spare"],
    // The socket and its bytes, plain or TLS.
    &["io"],
    // The engine's record of a request, and the queue of responses on a connection.
    &["request"],
    &["queue"],
    // The connection state machines, side by side over the socket layer.
    &["h1", "h2", "ws", "tunnel"],
    &["h3"],
    // Calls into JavaScript (conversions only), used by the engine to deliver its events.
    &["js"],
    // Servers, connections, the loop's callbacks: what drives the machines.
    &["engine"],
    // The functions JavaScript calls (conversions only, then the engine).
    &["exports"],
];

/// Every `.rs` file under `src`, by module path ("io::socket"; the crate root is "crate").
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            let name = if parts.is_empty() { "crate".to_string() } else { parts.join("::") };
            found.insert(name, fs::read_to_string(&path).unwrap());
        }
    }
    found
}

/// The source without comments and string literals, which may name paths that are not uses.
fn code_of(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            i = source[i..].find("*/").map_or(bytes.len(), |end| i + end + 2);
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = source[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The code without its `#[cfg(test)] mod tests { … }` blocks: a module's own tests may use anything.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]\nmod tests {") {
        out.push_str(&rest[..at]);
        let body = at + rest[at..].find('{').unwrap();
        let mut depth = 0;
        let mut end = rest.len();
        for (i, c) in rest[body..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = body + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a piece of code names from `crate::`, `super::` or `self::`, or from one of its own
/// submodules (`children`) in a `use`, groups (`{a, b::c}`) expanded, each as segments from the
/// crate's root.
fn paths_in(code: &str, module: &str, children: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let own: Vec<String> = if module == "crate" { Vec::new() } else { module.split("::").map(String::from).collect() };
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !is_ident(bytes[i - 1]);
        let child = children.iter().find(|c| at_word && code[i..].starts_with(&format!("{c}::")) && code[..i].trim_end().ends_with("use"));
        let root: Option<(usize, Vec<String>)> = if at_word && code[i..].starts_with("crate::") {
            Some((i + "crate::".len(), Vec::new()))
        } else if at_word && code[i..].starts_with("self::") {
            Some((i + "self::".len(), own.clone()))
        } else if child.is_some() {
            Some((i, own.clone()))
        } else if at_word && code[i..].starts_with("super::") {
            // `super` of a file module is its parent; repeated `super::` climb further.
            let mut base: Vec<String> = if module == "crate" { Vec::new() } else { module.split("::").map(String::from).collect() };
            let mut j = i;
            while code[j..].starts_with("super::") {
                base.pop();
                j += "super::".len();
            }
            Some((j, base))
        } else {
            None
        };
        match root {
            Some((start, base)) => {
                let end = expand(code, start, base, &mut paths);
                i = end.max(i + 1);
            }
            None => i += 1,
        }
    }
    paths
}

/// Reads the path (or group) at `at` after the prefix `base`; returns where it ends.
fn expand(code: &str, mut at: usize, base: Vec<String>, paths: &mut Vec<Vec<String>>) -> usize {
    let bytes = code.as_bytes();
    let mut path = base;
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < bytes.len() && bytes[at] == b'{' {
            // A group: each item is a path from here.
            at += 1;
            loop {
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return at + 1;
                }
                at = expand(code, at, path.clone(), paths);
            }
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at > start {
            path.push(code[start..at].to_string());
        }
        if code[at..].starts_with("::") {
            at += 2;
            continue;
        }
        paths.push(path);
        return at;
    }
}

/// The module a path lands in: its longest prefix that is a module.
fn module_of(path: &[String], known: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|name| known.contains_key(name))
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, node: &'a str) {
        let n = w.index.len();
        w.index.insert(node, n);
        w.low.insert(node, n);
        w.stack.push(node);
        w.on_stack.insert(node);
        for next in w.graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            if !w.index.contains_key(next) {
                visit(w, next);
                let low = w.low[node].min(w.low[next]);
                w.low.insert(node, low);
            } else if w.on_stack.contains(next) {
                let low = w.low[node].min(w.index[next]);
                w.low.insert(node, low);
            }
        }
        if w.low[node] == w.index[node] {
            let mut component = Vec::new();
            while let Some(top) = w.stack.pop() {
                w.on_stack.remove(top);
                component.push(top.to_string());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), found: Vec::new() };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

/// Each module's dependencies on other modules, per file ("io::socket") and per top-level module ("io").
fn graphs() -> (BTreeMap<String, BTreeSet<String>>, BTreeMap<String, BTreeSet<String>>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let top = |name: &str| name.split("::").next().unwrap().to_string();
    for (name, source) in &known {
        let code = code_of(source);
        let code = without_tests(&code);
        let prefix = if name == "crate" { String::new() } else { format!("{name}::") };
        let children: Vec<String> = known
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .filter(|rest| !rest.is_empty() && !rest.contains("::") && *rest != "crate")
            .map(String::from)
            .collect();
        files.entry(name.clone()).or_default();
        for path in paths_in(&code, name, &children) {
            let Some(target) = module_of(&path, &known) else { continue };
            if target == *name {
                continue;
            }
            files.get_mut(name).unwrap().insert(target.clone());
            if top(name) != top(&target) {
                tops.entry(top(name)).or_default().insert(top(&target));
            }
        }
    }
    (files, tops)
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let (files, tops) = graphs();
    let (file_cycles, top_cycles) = (cycles(&files), cycles(&tops));
    assert!(file_cycles.is_empty() && top_cycles.is_empty(), "cycles between files: {file_cycles:?}; between top-level modules: {top_cycles:?}");
}

#[test]
fn each_layer_uses_only_the_layers_below_it() {
    let (files, tops) = graphs();
    // The graph is the addon's (the check would pass on an empty one).
    assert!(tops["engine"].contains("h1") && tops["engine"].contains("ws") && tops["exports"].contains("engine"), "{tops:?}");
    assert!(files["h1::read"].contains("h1::conn") && files["io"].contains("io::transport"), "{files:?}");
    let rank = |name: &str| LAYERS.iter().position(|layer| layer.contains(&name));
    let mut wrong = Vec::new();
    for (module, uses) in &tops {
        let Some(own) = rank(module) else {
            wrong.push(format!("{module} is in no layer of LAYERS"));
            continue;
        };
        for used in uses {
            match rank(used) {
                Some(r) if r < own => {}
                _ => wrong.push(format!("{module} uses {used}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The checker itself: a cycle through a group import and `super::` is found.
#[test]
fn a_cycle_through_groups_and_super_is_found() {
    let known: BTreeMap<String, String> = ["a", "a::b", "c"].iter().map(|m| (m.to_string(), String::new())).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in [("a::b", "use super::super::c::{self, X};"), ("c", "fn f() { crate::a::b::g() }"), ("a", "pub use b::Y;")] {
        let children = if module == "a" { vec!["b".to_string()] } else { Vec::new() };
        let targets = paths_in(&code_of(code), module, &children).iter().filter_map(|p| module_of(p, &known)).filter(|t| t != module).collect();
        graph.insert(module.to_string(), targets);
    }
    assert_eq!(graph["a"], BTreeSet::from(["a::b".to_string()]), "a parent's use of its part counts");
    assert_eq!(cycles(&graph), vec![vec!["a::b".to_string(), "c".to_string()]]);
    assert_eq!(paths_in(&code_of("// crate::x\nlet s = \"crate::y\";"), "m", &[]), Vec::<Vec<String>>::new());
    assert_eq!(without_tests("a\n#[cfg(test)]\nmod tests { fn f() { crate::x() } }\nuse crate::y;"), "a\n\nuse crate::y;");
    assert_eq!(paths_in("let v = b::f();", "a", &["b".to_string()]), Vec::<Vec<String>>::new(), "only a `use` names a part by its bare name");
}
