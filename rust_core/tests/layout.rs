//! Every registered game has what `docs/adding-a-game.md` asks of it, in one layout:
//!
//! * `every_game_folder_has_the_layout`: `src/games/<id>/` holds the files every game has, each
//!   in its role ([`LAYOUT`]), and `src/games/` holds nothing but registered games.
//! * `no_game_folder_has_an_import_cycle`: inside a game folder, the files' `super::<file>`
//!   references (`use super::state::State`, `super::{rules::decide, ..}`,
//!   `super::words::card_code(..)`) form no cycle. `mod.rs`, the glue every file may name the
//!   game through, and `tests/` are outside the graph.
//! * `every_game_has_its_proto_rules_and_test_data`: the proto package, the rules document the
//!   registry names, the golden recordings and the test data the harnesses play.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use tablier_core::registry::games;

/// The files every game folder has, and what each holds. A game may add helpers of its own
/// (`cards.rs`, `board.rs`, `invariants.rs`, ...).
const LAYOUT: &[(&str, &str)] = &[
    (
        "mod.rs",
        "the `Game` impl: constants and one-line delegations to the files below",
    ),
    (
        "state.rs",
        "options and configuration, the state, `initial` and `evolve`",
    ),
    (
        "rules.rs",
        "`start`, `decide`, the legal actions and the outcome",
    ),
    ("view.rs", "views, event redaction and the text rendering"),
    ("words.rs", "the summary, action labels and event sentences"),
    ("bots.rs", "the bots and the timeout policies"),
    ("analysis.rs", "the position and its evaluation"),
    (
        "wire.rs",
        "conversions between the state's types and the protobuf messages",
    ),
    (
        "testdata.rs",
        "what the shared harnesses play (`crate::testdata::TestData`)",
    ),
    (
        "tests/mod.rs",
        "the game's own tests, with `tests/golden/` recordings",
    ),
];

/// Import cycles not untangled yet, per game (each cycle's files, sorted). The test fails when
/// a game's cycles differ from these: a new cycle, or one fixed without removing it here.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn game_dir(id: &str) -> PathBuf {
    root().join("src/games").join(id)
}

#[test]
fn every_game_folder_has_the_layout() {
    let mut missing = Vec::new();
    for game in games() {
        for (file, role) in LAYOUT {
            if !game_dir(game.id()).join(file).is_file() {
                missing.push(format!("{}: no {file} ({role})", game.id()));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let registered: BTreeSet<&str> = games().iter().map(|g| g.id()).collect();
    for entry in std::fs::read_dir(root().join("src/games")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert!(
                registered.contains(name),
                "src/games/{name}/ is not a registered game (registry.rs)"
            );
        }
    }
}

/// The text without `//` comments (doc comments included).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The sibling files `text` names through `super::`: `super::x::..` and every
/// `x::..` of a `super::{..}` group.
fn super_references(text: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let text = without_comments(text);
    let mut out = BTreeSet::new();
    let mut note = |path: &str| {
        let name = ident(path.trim_start());
        if path.trim_start()[name.len()..].starts_with("::") && siblings.contains(name) {
            out.insert(name.to_string());
        }
    };
    let mut rest = text.as_str();
    while let Some(at) = rest.find("super::") {
        rest = &rest[at + "super::".len()..];
        if rest.starts_with("super::") {
            continue; // a nested module's way to a file: read from the next `super::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Split the group at its top-level commas.
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        note(&group[start..i]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        note(&group[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            note(rest);
        }
    }
    out
}

/// A game folder's files (without `mod.rs` and `tests/`) and the siblings each names.
fn module_graph(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files: BTreeMap<String, String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs") && !p.ends_with("mod.rs"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    let siblings: BTreeSet<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(name, text)| {
            let mut refs = super_references(text, &siblings);
            refs.remove(name);
            (name.clone(), refs)
        })
        .collect()
}

/// The strongly connected components of more than one file (Tarjan), each sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: BTreeSet<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    self.low.insert(v, self.low[v].min(self.low[w]));
                } else if self.stack.contains(&w) {
                    self.low.insert(v, self.low[v].min(self.index[w]));
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.insert(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: BTreeSet::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn the_reference_reader_sees_every_form() {
    let siblings: BTreeSet<String> = ["state", "rules", "words", "wire"].map(String::from).into();
    let text = "use super::state::{State, Phase};\n\
                use super::{rules::decide, Qwirkle, wire::{a, b}};\n\
                // super::wire::x in a comment\n\
                fn f() { super::words::card_code(1); super::super::x::y(); }\n";
    let refs = super_references(text, &siblings);
    assert_eq!(
        refs,
        ["rules", "state", "wire", "words"].map(String::from).into()
    );
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        cycles(&graph),
        [vec!["a".to_string(), "b".into(), "c".into()]].into()
    );
}

#[test]
fn no_game_folder_has_an_import_cycle() {
    let mut wrong = Vec::new();
    for game in games() {
        let found = cycles(&module_graph(&game_dir(game.id())));
        let known: BTreeSet<Vec<String>> = KNOWN_CYCLES
            .iter()
            .filter(|(id, _)| *id == game.id())
            .map(|(_, files)| files.iter().map(|f| f.to_string()).collect())
            .collect();
        if found != known {
            wrong.push(format!(
                "{}: import cycles {found:?}, listed {known:?}",
                game.id()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_game_has_its_proto_rules_and_test_data() {
    let repo = root().join("..");
    let rules = repo.join("docs").join("rules");
    // The index of the rules documents (README.md of the rules folder).
    let index = std::fs::read_to_string(rules.join("README.md")).unwrap();
    let games_mod = std::fs::read_to_string(root().join("src/games/mod.rs")).unwrap();
    for game in games() {
        let id = game.id();
        let info = game.info();
        assert!(
            games_mod.contains(&format!("pub mod {id};")),
            "{id}: games/mod.rs declares it"
        );
        let proto = format!("proto/tablier/{id}/v1/{id}.proto");
        assert!(repo.join(&proto).is_file(), "{id}: no {proto}");
        for t in [&info.action_type, &info.event_type, &info.view_type] {
            assert!(t.starts_with(&format!("tablier.{id}.v1.")), "{id}: {t}");
        }
        assert_eq!(
            repo.join(&info.rules_path),
            rules.join(format!("{id}.md")),
            "{id}: its rules document is named by its id"
        );
        assert!(repo.join(&info.rules_path).is_file(), "{id}: no rules");
        assert!(
            index.contains(&format!("({id}.md)")),
            "{id}: not in the index of the rules documents"
        );
        let data = game.test_data();
        assert!(!data.golden.is_empty(), "{id}: no golden match");
        for (seats, _) in data.golden {
            let path = game_dir(id).join(format!("tests/golden/{id}-{seats}.txt"));
            assert!(path.is_file(), "{id}: no {}", path.display());
        }
        assert!(
            data.pinned_matches > 0
                && data.pinned_digest.len() == 64
                && data.pinned_digest.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}: a pinned digest"
        );
        assert!(!data.silent.is_empty() && !data.forfeits.is_empty(), "{id}");
        let options = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let opens = |seats: u32, pairs: &[(&str, &str)]| {
            game.new_match(seats, &options(pairs))
                .unwrap_or_else(|e| panic!("{id}: {seats} seats, {pairs:?}: {e}"));
        };
        opens(info.min_players, data.short);
        for variant in data.variants {
            let seats = variant
                .iter()
                .find(|(k, _)| *k == "ages")
                .map_or(info.min_players, |(_, v)| v.split(',').count() as u32);
            opens(seats, variant);
        }
        for (seats, pairs) in data.golden {
            opens(*seats, pairs);
        }
    }
}

/// Copies `from` into `to` (directories whole), skipping build output.
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() != "target" {
                copy_tree(&entry.path(), &to.join(entry.file_name()));
            }
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// `text` with `old` replaced by `new` where it stands as a whole word.
fn replace_word(text: &str, old: &str, new: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(old) {
        let (before, after) = (
            rest[..at].chars().last(),
            rest[at + old.len()..].chars().next(),
        );
        out.push_str(&rest[..at]);
        out.push_str(if word(before) || word(after) {
            old
        } else {
            new
        });
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

/// What `docs/adding-a-game.md` promises: a new game is its own folders (the Rust folder, the
/// proto package, the rules document) and one line in each registry (`games/mod.rs`,
/// `with_games!`), with its row in the rules index; no harness holds a table of games. A copy of
/// the workspace gets a throw-away game (Carré's folder, proto and rules under another id), and
/// the harnesses that iterate the registry build and pass with it: this page's checks, the
/// conformance and timeout harnesses, and the evaluator's. Builds a copy of the crate (minutes).
#[test]
#[ignore = "builds a copy of the crate (minutes): cargo test --release --test layout -- --ignored"]
fn a_throwaway_game_joins_with_its_own_folders_and_one_registry_line() {
    let (from, id, ty) = ("carre", "throwaway", "Throwaway");
    let repo = root().join("..");
    let copy = std::env::temp_dir().join(format!("tablier-throwaway-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    for part in [
        "Cargo.toml",
        "Cargo.lock",
        "rust_core",
        "proto",
        "docs/rules",
    ] {
        copy_tree(&repo.join(part), &copy.join(part));
    }
    let core = copy.join("rust_core");
    let edit = |path: PathBuf, change: &dyn Fn(String) -> String| {
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, change(text)).unwrap();
    };
    let renamed = |text: String| {
        let text = replace_word(&text, from, id);
        replace_word(&text, "Carre", ty)
    };

    // Its own folders: the Rust folder, the proto package, the rules document.
    let dir = core.join("src/games").join(id);
    copy_tree(&game_dir(from), &dir);
    let mut files = Vec::new();
    files_under(&dir, &mut files);
    for path in files {
        if path.extension().is_some_and(|e| e == "rs" || e == "txt") {
            edit(path.clone(), &renamed);
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with(&format!("{from}-")) {
            std::fs::rename(&path, path.with_file_name(name.replacen(from, id, 1))).unwrap();
        }
    }
    let proto = copy.join("proto/tablier").join(id).join("v1");
    std::fs::create_dir_all(&proto).unwrap();
    let text = std::fs::read_to_string(repo.join(format!("proto/tablier/{from}/v1/{from}.proto")))
        .unwrap();
    std::fs::write(proto.join(format!("{id}.proto")), renamed(text)).unwrap();
    let rules = copy.join("docs/rules");
    std::fs::copy(
        rules.join(format!("{from}.md")),
        rules.join(format!("{id}.md")),
    )
    .unwrap();
    edit(rules.join("README.md"), &|text| {
        text.replacen(
            &format!("| `{from}` |"),
            &format!("| `{id}` | [{id}.md]({id}.md) | a throw-away copy | - |\n| `{from}` |"),
            1,
        )
    });

    // One line in each registry.
    edit(core.join("src/games/mod.rs"), &|text| {
        text.replacen(
            &format!("pub mod {from};"),
            &format!("pub mod {from};\npub mod {id};"),
            1,
        )
    });
    edit(core.join("src/registry.rs"), &|text| {
        text.replacen(
            &format!("{from}::Carre,"),
            &format!("{from}::Carre,\n            {id}::{ty},"),
            1,
        )
    });

    // The workspace's build directory: the dependencies are built already.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"));
    let cargo = |args: &[&str], golden: bool| {
        let mut command = std::process::Command::new(env!("CARGO"));
        command
            .args(["test", "--release"])
            .args(args)
            .current_dir(&copy);
        command.env("CARGO_TARGET_DIR", &target);
        if golden {
            command.env("UPDATE_GOLDEN", "1");
        }
        command.output().unwrap()
    };
    // As the guide says for a new game: its golden recording recorded from it and its digest
    // pinned from what it prints, rather than trusted from the folder it was copied from.
    let recorded = cargo(&["--test", "conformance", "golden"], true);
    assert!(
        recorded.status.success(),
        "{}",
        String::from_utf8_lossy(&recorded.stdout)
    );
    // The digest covers the match's bytes, not the game's id: a faithful copy may keep the
    // pinned digest it was copied with, and then the check passes without printing one.
    let digests = cargo(&["--test", "conformance", "pinned"], false);
    let printed = String::from_utf8_lossy(&digests.stdout).to_string()
        + &String::from_utf8_lossy(&digests.stderr);
    let pinned = printed
        .lines()
        .find_map(|l| l.split(&format!("{id}: pinned ")).nth(1))
        .and_then(|rest| rest.split("now ").nth(1))
        .map(|d| {
            d.chars()
                .filter(char::is_ascii_hexdigit)
                .take(64)
                .collect::<String>()
        })
        .filter(|_| !digests.status.success());
    assert!(
        pinned.is_some() || digests.status.success(),
        "no digest printed for {id}: {printed}"
    );
    if let Some(pinned) = pinned {
        edit(dir.join("testdata.rs"), &|text| {
            let at = text.find("pinned_digest: \"").unwrap() + "pinned_digest: \"".len();
            format!("{}{pinned}{}", &text[..at], &text[at + 64..])
        });
    }

    let run = cargo(
        &[
            "--test",
            "layout",
            "--test",
            "conformance",
            "--test",
            "timeouts",
            "--test",
            "evaluation",
        ],
        false,
    );
    let _ = std::fs::remove_dir_all(&copy);
    assert!(
        run.status.success(),
        "the harnesses with a throw-away game:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}
