//! Compiles proto/tablier/v1/*.proto with the pure-Rust `protox` (no system protoc needed).
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../proto");
    let dir = root.join("tablier/v1");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("proto/tablier/v1 exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .filter(|p| !p.ends_with("service.proto"))
        .collect();
    files.sort();
    println!("cargo:rerun-if-changed={}", dir.display());
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, [&root]).expect("protos compile");
    prost_build::Config::new()
        .btree_map(["."])
        // Messages emitted many times per match keep their cards inline instead of in a heap
        // vector each (same wire format, see `games::inline_cards`). A row of four cards, one
        // per seat in every deal and reveal of Rat-a-Tat Cat:
        .extern_path(".tablier.v1.rat_a_tat_cat.SeatRow", "crate::games::rat_a_tat_cat::SeatRow")
        // The cards of every trick, as often: same, for the reveal.
        .extern_path(".tablier.v1.democratie.TrickRevealed", "crate::games::democratie::TrickRevealed")
        .compile_fds(fds)
        .expect("prost code generation");
}
