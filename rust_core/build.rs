//! Compiles proto/tablier/**/*.proto (the shared `tablier.v1` files and one
//! `tablier.<game>.v1` package per game) with the pure-Rust `protox` (no system protoc needed).
use std::path::{Path, PathBuf};

fn protos(dir: &Path, out: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    for entry in std::fs::read_dir(dir)
        .expect("proto directory readable")
        .filter_map(Result::ok)
    {
        let path = entry.path();
        if path.is_dir() {
            protos(&path, out);
        } else if path.extension().is_some_and(|x| x == "proto") && !path.ends_with("service.proto")
        {
            println!("cargo:rerun-if-changed={}", path.display());
            out.push(path);
        }
    }
}

fn main() {
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../proto");
    let mut files = Vec::new();
    protos(&root.join("tablier"), &mut files);
    files.sort();
    let fds = protox::compile(&files, [&root]).expect("protos compile");
    prost_build::Config::new()
        .btree_map(["."])
        // Messages emitted many times per match keep their cards inline instead of in a heap
        // vector each (same wire format, see `games::inline_cards`). A row of four cards, one
        // per seat in every deal and reveal of Rat-a-Tat Cat:
        .extern_path(
            ".tablier.rat_a_tat_cat.v1.SeatRow",
            "crate::games::rat_a_tat_cat::SeatRow",
        )
        // The cards of every trick, as often: same, for the reveal.
        .extern_path(
            ".tablier.democratie.v1.TrickRevealed",
            "crate::games::democratie::TrickRevealed",
        )
        .compile_fds(fds)
        .expect("prost code generation");
}
