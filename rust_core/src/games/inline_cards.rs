//! Short card lists kept inline in the few hand-written protobuf messages that games emit many
//! times per match (a row per seat at every deal, the cards of every trick). Generated messages
//! hold each `repeated Card` in a heap vector, and allocating and freeing those was a large share
//! of a random match. A message using this type encodes byte for byte as the generated one
//! (packed, `int32` varints) and reads packed or unpacked input.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{int32, DecodeContext, WireType};
use prost::DecodeError;

/// At most `N` protobuf cards, used as a slice. A stored list longer than `N` reads as empty,
/// which no game accepts where a full list is due (`Corrupt` on replay).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineCards<const N: usize> {
    len: u8,
    overflow: bool,
    cards: [i32; N],
}

impl<const N: usize> Default for InlineCards<N> {
    fn default() -> Self {
        InlineCards { len: 0, overflow: false, cards: [0; N] }
    }
}

impl<const N: usize> InlineCards<N> {
    /// Field `tag` of the message, packed; nothing when empty.
    pub fn encode(&self, tag: u32, buf: &mut impl BufMut) {
        int32::encode_packed(tag, self, buf);
    }

    pub fn encoded_len(&self, tag: u32) -> usize {
        int32::encoded_len_packed(tag, self)
    }

    /// Reads one occurrence of the field (packed or not) and appends its cards.
    pub fn merge(&mut self, wire_type: WireType, buf: &mut impl Buf, ctx: DecodeContext) -> Result<(), DecodeError> {
        let mut more = Vec::new();
        int32::merge_repeated(wire_type, &mut more, buf, ctx)?;
        self.extend(more);
        Ok(())
    }
}

impl<const N: usize> Extend<i32> for InlineCards<N> {
    fn extend<I: IntoIterator<Item = i32>>(&mut self, cards: I) {
        for c in cards {
            if self.len as usize == N {
                self.overflow = true;
                return;
            }
            self.cards[self.len as usize] = c;
            self.len += 1;
        }
    }
}

impl<const N: usize> FromIterator<i32> for InlineCards<N> {
    fn from_iter<I: IntoIterator<Item = i32>>(cards: I) -> Self {
        let mut out = InlineCards::default();
        out.extend(cards);
        out
    }
}

impl<const N: usize> From<[i32; N]> for InlineCards<N> {
    fn from(cards: [i32; N]) -> Self {
        InlineCards { len: N as u8, overflow: false, cards }
    }
}

impl<const N: usize> std::ops::Deref for InlineCards<N> {
    type Target = [i32];
    fn deref(&self) -> &[i32] {
        &self.cards[..if self.overflow { 0 } else { self.len as usize }]
    }
}

impl<const N: usize> std::ops::DerefMut for InlineCards<N> {
    fn deref_mut(&mut self) -> &mut [i32] {
        &mut self.cards[..if self.overflow { 0 } else { self.len as usize }]
    }
}

impl<const N: usize> std::fmt::Debug for InlineCards<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
