//! Phrases every game's `words.rs` shares: seats named for a viewer ("you", "Alice", "seat 2"),
//! lists ("a, b and c"). English; a second language would add its own module of the same
//! functions and each game's `words.rs` would pick one, the rules untouched.
//!
//! Seats are numbered from 1 for people ("Seat 1" is seat 0 on the wire). A seat bound to a
//! player is named by the player's display name: the caller gives the match's table of names
//! for the duration of one call (`with_names`), so no game's words need to know of players.

use std::cell::RefCell;

use crate::game::{Seat, Viewer};

thread_local! {
    static NAMES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with `names` (per seat, in seat order; "" for a seat without a name) naming the
/// seats in every phrase below; the table is restored afterwards, even if `f` panics.
pub fn with_names<T>(names: &[String], f: impl FnOnce() -> T) -> T {
    struct Restore(Vec<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = std::mem::take(&mut self.0);
            NAMES.with(|n| *n.borrow_mut() = before);
        }
    }
    let before = NAMES.with(|n| std::mem::replace(&mut *n.borrow_mut(), names.to_vec()));
    let _restore = Restore(before);
    f()
}

/// The seat's player's name, when the call gave one.
fn name(seat: Seat) -> Option<String> {
    NAMES.with(|n| {
        n.borrow()
            .get(seat as usize)
            .filter(|s| !s.is_empty())
            .cloned()
    })
}

/// "Seat 2" for seat 1: seats are numbered from 1 for people.
pub fn seat_number(seat: Seat) -> u64 {
    u64::from(seat) + 1
}

/// "Alice" or "seat 2", whoever is reading (a label or sentence about a seat that is never
/// the viewer's "you").
pub fn named(seat: Seat) -> String {
    name(seat).unwrap_or_else(|| format!("seat {}", seat_number(seat)))
}

/// "Alice" or "Seat 2", to start a sentence.
pub fn named_cap(seat: Seat) -> String {
    name(seat).unwrap_or_else(|| format!("Seat {}", seat_number(seat)))
}

/// "You", "Alice" or "Seat 2", to start a sentence.
pub fn who(seat: Seat, viewer: Viewer) -> String {
    if viewer.is_seat(seat) {
        "You".into()
    } else {
        name(seat).unwrap_or_else(|| format!("Seat {}", seat_number(seat)))
    }
}

/// "you", "Alice" or "seat 2", inside a sentence.
pub fn whom(seat: Seat, viewer: Viewer) -> String {
    if viewer.is_seat(seat) {
        "you".into()
    } else {
        name(seat).unwrap_or_else(|| format!("seat {}", seat_number(seat)))
    }
}

/// "your", "Alice's" or "seat 2's".
pub fn whose(seat: Seat, viewer: Viewer) -> String {
    if viewer.is_seat(seat) {
        "your".into()
    } else {
        name(seat).map_or_else(
            || format!("seat {}'s", seat_number(seat)),
            |n| format!("{n}'s"),
        )
    }
}

/// "Your", "Alice's" or "Seat 2's", to start a sentence.
pub fn whose_cap(seat: Seat, viewer: Viewer) -> String {
    if viewer.is_seat(seat) {
        "Your".into()
    } else {
        name(seat).map_or_else(
            || format!("Seat {}'s", seat_number(seat)),
            |n| format!("{n}'s"),
        )
    }
}

/// "a", "a and b", "a, b and c"; "nothing" when empty.
pub fn list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => "nothing".into(),
        [one] => one.as_ref().into(),
        [init @ .., last] => format!(
            "{} and {}",
            init.iter()
                .map(|s| s.as_ref())
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// The seats named for `viewer`, as a list ("you and seat 2").
pub fn seats(seats: &[Seat], viewer: Viewer) -> String {
    list(&seats.iter().map(|&s| whom(s, viewer)).collect::<Vec<_>>())
}

/// "1 card", "3 cards".
pub fn count(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first letter upper-cased.
pub fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// True when `text` reads as words for people: not empty, and free of what only a program
/// says (enum names, `UNSPECIFIED`, `Debug` braces, underscores). The conformance harness
/// asks it of every label and sentence.
pub fn plain(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("empty".into());
    }
    if let Some(c) = text.chars().find(|c| matches!(c, '{' | '}' | '_')) {
        return Err(format!("{c:?} in {text:?}"));
    }
    if text.to_ascii_lowercase().contains("unspecified") {
        return Err(format!("UNSPECIFIED in {text:?}"));
    }
    // An enum name: a word of three or more capitals (card codes like "AD" are two).
    if let Some(w) = text
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_uppercase()))
    {
        return Err(format!("{w:?} in {text:?}"));
    }
    // A Rust enum variant or struct name glued to its payload, e.g. "Seat(1)".
    if let Some(i) = text.find('(') {
        let before = &text[..i];
        if before.ends_with(|c: char| c.is_alphanumeric()) {
            return Err(format!("Debug form in {text:?}"));
        }
    }
    Ok(())
}

/// True when `sentence` names `word` as a whole phrase (not inside a longer number or word).
pub fn names(sentence: &str, word: &str) -> bool {
    sentence.match_indices(word).any(|(i, _)| {
        let before = sentence[..i].chars().next_back();
        let after = sentence[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '−' || c == '-')
            && !after.is_some_and(|c| c.is_alphanumeric())
    })
}

/// True when a refusal message names cards and tiles in words: no bare codes such as `AD`,
/// `7H`, `X1` (cards) or `RC` (tiles), no enum names, no `Debug` braces.
pub fn refusal_plain(message: &str) -> Result<(), String> {
    if let Some(code) = message
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| {
            w.len() == 2
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_uppercase())
        })
    {
        return Err(format!("card code {code:?} in {message:?}"));
    }
    if message.contains('{') || message.to_ascii_lowercase().contains("unspecified") {
        return Err(format!("not words: {message:?}"));
    }
    if let Some(w) = message
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .find(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    {
        return Err(format!("enum name {w:?} in {message:?}"));
    }
    Ok(())
}
